//===- PreconditionSupport.cpp - Helpers of the run-time preconditions ----===//
#include "PreconditionSupport.h"
#include "onnxopt/IR/IR.h"

using namespace onnxopt;

int64_t precondition::knownRank(const Value *V) {
  if (!V || !V->getType().isTensor() || !V->getType().hasShape())
    return -1;
  return int64_t(V->getType().getRank());
}
