//===- ControlFlowOps.cpp - If, Loop and Scan
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "DimSupport.h"
#include "InferSupport.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/Ops/Preconditions.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <onnx/defs/tensor_proto_util.h>

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

// Inference functions (onnx::InferenceContext) of the versions ONNX 1.12
// has no schema for, and refinements on top of its schemas (InferRules.h).

namespace {

using namespace onnxopt::infer;

/// OptionalGetElement-18: an optional's element, or the input itself.
void inferOptionalGetElement18(InferenceContext &Ctx) {
  if (!hasInput(Ctx, 0))
    fail_type_inference("input 0 has no type");
  const onnx::TypeProto *T = Ctx.getInputType(0);
  *Ctx.getOutputType(0) =
      T->has_optional_type() ? T->optional_type().elem_type() : *T;
}

/// OptionalHasElement-18: a bool scalar.
void inferOptionalHasElement18(InferenceContext &Ctx) {
  setElemType(Ctx, 0, TensorProto::BOOL);
  outputShape(Ctx, 0);
}

// Sorted by domain, op and version.
constexpr InferRule InferRows[] = {
    newVersion("", "OptionalGetElement", 18, inferOptionalGetElement18,
               {false, 1, 1, 1, 1, ""}),
    newVersion("", "OptionalHasElement", 18, inferOptionalHasElement18,
               {false, 0, 1, 1, 1, ""}),
};

llvm::ArrayRef<InferRule> inferRules() { return InferRows; }

} // namespace

//===----------------------------------------------------------------------===//
// Dim transfer
//===----------------------------------------------------------------------===//

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
