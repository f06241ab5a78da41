//===- DimRules.h - Op registry hooks: DimRule -------------*- C++ -*-===//
//
// The DimRule hook of an op definition (OpDef.h): dim transfer for the dim analysis (lib/Analysis/DimAnalysis.cpp): each rule computes an op's result dims and the shape data it carries, and states what its operands' dims must satisfy, through a DimContext the analysis implements.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_DIMRULES_H
#define ONNXOPT_OPS_DIMRULES_H

#include "onnxopt/Ops/OpDef.h"

namespace onnxopt {

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder).
struct DimRule {
  const char *Domain;
  const char *OpType;
  int Since;
  // TODO(registry): the hook itself.
};

} // namespace onnxopt

#endif // ONNXOPT_OPS_DIMRULES_H
