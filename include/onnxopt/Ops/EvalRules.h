//===- EvalRules.h - Op registry hooks: EvalRule -------------*- C++ -*-===//
//
// The EvalRule hook of an op definition (OpDef.h): constant evaluation (lib/Analysis/ConstantEval.cpp dispatches here): each rule computes an op's results from constant operands through an EvalContext the evaluator implements.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_EVALRULES_H
#define ONNXOPT_OPS_EVALRULES_H

#include "onnxopt/Ops/OpDef.h"

namespace onnxopt {

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder).
struct EvalRule {
  const char *Domain;
  const char *OpType;
  int Since;
  // TODO(registry): the hook itself.
};

} // namespace onnxopt

#endif // ONNXOPT_OPS_EVALRULES_H
