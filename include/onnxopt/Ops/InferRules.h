//===- InferRules.h - Op registry hooks: InferRule -------------*- C++ -*-===//
//
// The InferRule hook of an op definition (OpDef.h): type inference where ONNX 1.12 has none or where we refine it (the inference adapter in lib/Analysis/ShapeInference.cpp dispatches here).
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_INFERRULES_H
#define ONNXOPT_OPS_INFERRULES_H

#include "onnxopt/Ops/OpDef.h"

namespace onnxopt {

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder).
struct InferRule {
  const char *Domain;
  const char *OpType;
  int Since;
  // TODO(registry): the hook itself.
};

} // namespace onnxopt

#endif // ONNXOPT_OPS_INFERRULES_H
