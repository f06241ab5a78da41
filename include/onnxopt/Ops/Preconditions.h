//===- Preconditions.h - Op registry hooks: PreconditionRule -------------*- C++ -*-===//
//
// The PreconditionRule hook of an op definition (OpDef.h): run-time preconditions: what an op's inputs must satisfy for it to run, checked by node validation before any ONNX call (lib/Analysis/NodeValidation.cpp).
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_PRECONDITIONS_H
#define ONNXOPT_OPS_PRECONDITIONS_H

#include "onnxopt/Ops/OpDef.h"

namespace onnxopt {

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder).
struct PreconditionRule {
  const char *Domain;
  const char *OpType;
  int Since;
  // TODO(registry): the hook itself.
};

} // namespace onnxopt

#endif // ONNXOPT_OPS_PRECONDITIONS_H
