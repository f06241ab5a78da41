//===- ControlFlowOps.cpp - If, Loop and Scan
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "DimSupport.h"
#include "InferSupport.h"
#include "PatternSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/Ops/PatternRules.h"
#include "onnxopt/Ops/Preconditions.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
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

//===----------------------------------------------------------------------===//
// Local patterns (PatternRules.h): If with a constant condition
//===----------------------------------------------------------------------===//
//
// Before:  Y = If<then_branch = {T = Relu(X)  => T},
//                 else_branch = {...}>(C)      # C: the constant true
// After:   Y = Relu(X)                          # the taken branch, inlined
//
// The taken branch's constants become constants of the If's graph and its
// nodes are copied before the If in order, reading the same outer-scope
// values (the branch sees every value the If's graph sees), with names
// made unique in the model. Each If result is then replaced by the copy of
// the branch output, which keeps the If's declared type. Refused when a
// branch output's type contradicts the If's declared one (another element
// type or rank, or two known dims that differ: the model's declared types
// would change; dims named differently are the same claim about one value
// and do not refuse), when a branch node holds a subgraph (not copied
// here; an If nested in the taken branch is inlined first, where its own
// condition is constant), or when the graph interface forbids the
// replacement (an If result that is a graph output cannot become a graph
// input or a constant). An If inside a branch or a Loop body is inlined
// into that body the same way: the driver visits every graph, the copies
// land in the If's own graph and read the values they read before, from
// whichever scope defines them.

namespace {

/// The branch \p N takes, when its condition is a one-element constant.
const Graph *takenBranch(const Node &N) {
  Value *Cond = N.getNumOperands() == 1 ? N.getOperand(0) : nullptr;
  Tensor T = Cond ? getConstantValue(*Cond) : Tensor();
  std::optional<std::vector<int64_t>> V = T ? T.toInt64s() : std::nullopt;
  if (!V || V->size() != 1)
    return nullptr;
  const Attribute *A = N.getAttr(V->front() ? "then_branch" : "else_branch");
  if (!A || A->Kind != AttrKind::Graph || A->Graphs.empty())
    return nullptr;
  return A->Graphs.front().get();
}

/// True when a value of type \p Branch may stand where \p Declared is
/// declared: same kind and element type, and where both have shapes the
/// same rank and no two known dims differ. Named dims may differ, as they
/// may between an If's declared result and its branches (ifBranchesFit):
/// exporters name a branch output's dims afresh (torch 1.13's
/// `__Identity_..._dim_1` against the If's `batch`), and both names are
/// claims about the one value the If returns. The copy keeps the If's
/// declared type, so inlining adds no claim the model did not make.
bool typeFits(const Type &Declared, const Type &Branch) {
  if (Declared.isNone() || Branch.isNone())
    return true;
  if (Declared.getKind() != Branch.getKind())
    return false;
  if (!Declared.isTensor())
    return Declared == Branch;
  if (Declared.getElemType() && Branch.getElemType() &&
      Declared.getElemType() != Branch.getElemType())
    return false;
  if (!Declared.hasShape() || !Branch.hasShape())
    return true;
  if (Declared.getRank() != Branch.getRank())
    return false;
  for (size_t I = 0; I < Declared.getRank(); ++I) {
    const Dim &A = Declared.getDims()[I], &B = Branch.getDims()[I];
    if (A.isKnown() && B.isKnown() && A.getValue() != B.getValue())
      return false;
  }
  return true;
}

/// Why \p Branch cannot replace \p N, or null when it can.
const char *whyNotInlinable(const Node &N, const Graph &Branch) {
  if (Branch.getNumInputs() != 0 || Branch.getNumOutputs() != N.getNumResults())
    return "branch has inputs or another number of outputs";
  for (const Node &Inner : Branch.getNodes())
    if (!Inner.getSubgraphs().empty())
      return "branch holds a subgraph";
  llvm::DenseSet<const Value *> Seen;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    const Value *Res = N.getResult(I), *Out = Branch.getOutput(I);
    if (!Res)
      continue;
    if (!typeFits(Res->getType(), Out->getType()))
      return "branch output type differs from the declared one";
    bool Repeated = !Seen.insert(Out).second;
    bool FromNode = Out->getDefiningNode() &&
                    Out->getDefiningNode()->getParentGraph() == &Branch;
    // A copied node result can take over a graph output's name once; a
    // constant or an outer value only where the interface allows.
    if (Res->isGraphOutput() &&
        (Repeated || (!FromNode && (Out->getOwningGraph() == &Branch ||
                                    !canReplaceAllUsesWith(Res, Out)))))
      return "an output is a graph output the branch value cannot replace";
  }
  return nullptr;
}

LogicalResult inlineConstantIf(Node &N, Rewriter &R) {
  const Graph *Branch = takenBranch(N);
  if (!Branch)
    return R.notifyMatchFailure(N, "condition is not a constant");
  if (const char *Why = whyNotInlinable(N, *Branch))
    return R.notifyMatchFailure(N, Why);
  Graph &G = *N.getParentGraph();
  llvm::DenseMap<const Value *, Value *> Map;
  auto Lookup = [&Map](Value *V) -> Value * {
    auto It = V ? Map.find(V) : Map.end();
    return It == Map.end() ? V : It->second;
  };
  for (const auto &C : Branch->getConstants())
    if (!C->use_empty())
      Map[C.get()] = R.createConstant(G, C->getInitializer());
  for (const Node &Inner : Branch->getNodes()) {
    std::vector<Value *> Operands;
    for (Value *Op : Inner.getOperands())
      Operands.push_back(Lookup(Op));
    Node *Copy = pattern::cloneNode(Inner, Operands, R);
    for (unsigned I = 0; I < Inner.getNumResults(); ++I)
      if (Value *Old = Inner.getResult(I)) {
        // Named after the branch's value, unique in the model; nothing
        // reads the fresh name yet.
        Copy->getResult(I)->setName(
            R.getModel().makeUniqueName(Old->getName()));
        Map[Old] = Copy->getResult(I);
      }
  }
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *Res = N.getResult(I);
    if (!Res)
      continue;
    Value *New = Lookup(Branch->getOutput(I));
    // A copied result keeps the If's declared type where it has one.
    if (New->getDefiningNode() && New->getOwningGraph() == &G &&
        Res->getType().isTensor() && Res->getType().hasShape() &&
        Res->getType().getElemType())
      R.setType(New, Res->getType());
    if (failed(R.replaceAllUsesWith(Res, New)))
      return failure(); // Unreachable: whyNotInlinable checked.
  }
  R.eraseDeadChain(N);
  return success();
}

const LocalPattern IfPatterns[] = {{"inline-constant-if", inlineConstantIf}};

const PatternRule PatternRows[] = {
    {"", "If", 1, IfPatterns},
};

} // namespace

//===----------------------------------------------------------------------===//
// Branch types against the If's declared types (OpFacts.h)
//===----------------------------------------------------------------------===//

namespace {

/// True when \p Branch, a tensor type of known element type and rank, is a
/// type \p Declared allows: what merging an inferred type into a declared
/// one accepts (named dims may differ: they become facts, not
/// contradictions).
bool declaredAllows(const Type &Declared, const Type &Branch) {
  if (!Branch.isTensor() || !Branch.getElemType() || !Branch.hasShape())
    return false;
  if (Declared.getKind() != Branch.getKind())
    return false;
  if (Declared.getElemType() && Declared.getElemType() != Branch.getElemType())
    return false;
  if (!Declared.hasShape())
    return true;
  if (Declared.getRank() != Branch.getRank())
    return false;
  for (size_t I = 0; I < Declared.getRank(); ++I) {
    const Dim &A = Declared.getDims()[I], &B = Branch.getDims()[I];
    if (A.isKnown() && B.isKnown() && A.getValue() != B.getValue())
      return false;
  }
  return true;
}

} // namespace

bool onnxopt::ifBranchesFit(const Node &N, unsigned Result,
                            const Type &Declared) {
  if (!N.isOnnxDomain() || !hasTrait(N, Conditional) || Declared.isNone() ||
      Result >= N.getNumResults())
    return false;
  for (const char *Name : {"then_branch", "else_branch"}) {
    const Attribute *A = N.getAttr(Name);
    if (!A || A->Kind != AttrKind::Graph || A->Graphs.empty())
      return false;
    const Graph &Branch = *A->Graphs.front();
    // A branch output of unknown type proves nothing about what it gives.
    if (Branch.getNumOutputs() != N.getNumResults() ||
        !declaredAllows(Declared, Branch.getOutput(Result)->getType()))
      return false;
  }
  return true;
}

void ops::registerControlFlowOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
  B.addPatterns(PatternRows);
}
