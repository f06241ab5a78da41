//===- ControlFlowOps.cpp - If, Loop and Scan
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/Preconditions.h"

using namespace onnxopt;

namespace {

//===----------------------------------------------------------------------===//
// Traits, shape operands, axes
//===----------------------------------------------------------------------===//



constexpr TraitRow Traits[] = {
    {"", "If", 1, Conditional, {}, {}, -1},
    {"", "Loop", 1, ValueDependentUnlessConstant | Looping, {}, {}, 0},
    {"", "Scan", 1, Looping, {}, {}, -1},
};

} // namespace

//===----------------------------------------------------------------------===//
// Run-time preconditions
//===----------------------------------------------------------------------===//

namespace {
llvm::ArrayRef<PreconditionRule> preconditionRules() { return {}; }
} // namespace

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

namespace {
llvm::ArrayRef<InferRule> inferRules() { return {}; }
} // namespace

//===----------------------------------------------------------------------===//
// Dim transfer
//===----------------------------------------------------------------------===//

#include "DimSupport.h"

namespace {

/// If: its results are not modelled (the branches' types stand), but it
/// runs only on a condition of one element.
void transferIf(DimContext &C, const DimList *Cond) {
  if (Cond)
    C.require(DimCondition::Equal, dims::product(*Cond), DimExpr::constant(1),
              "the condition must have one element");
}

constexpr DimRule DimRules[] = {
    {"", "If", 1, transferIf},
    // Its trip count blocks (a data-dependent result, by its traits) unless
    // constant; no other condition on dims.
    {"", "Loop", 1, nullptr},
};

llvm::ArrayRef<DimRule> dimRules() { return DimRules; }
} // namespace

//===----------------------------------------------------------------------===//
// Constant evaluation
//===----------------------------------------------------------------------===//

namespace {
llvm::ArrayRef<EvalRule> evalRules() { return {}; }
} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void ops::registerControlFlowOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
