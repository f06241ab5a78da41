//===- CheckStatic.cpp - Certify that a model is fully static -------------===//
//
// Before:  (float[N,3] X) => (float[N,6] Y) {
//            S = Shape(X)
//            Y = Reshape(Z, S)
//          }
// After:   unchanged; fails with one diagnostic per blocker:
//   error: value 'X' in graph 'main': type float[N,3] is not static
//   error: node producing 'S' (Shape) in graph 'main': computes a shape at
//          run time
//   error: node producing 'Y' (Reshape) in graph 'main': its shape input
//          'S' is computed at run time
//   error: model is not static: 3 blocker(s)
//
// The certificate an accelerator toolchain that accepts only static graphs
// wants. Infers types first (ONNX's inference through the op schemas) so
// that values without value_info are judged by what they are; the model is
// left as it was. A model passes when
//  - every value (graph inputs and node results, in every graph) is a tensor
//    whose dims are all known;
//  - no node computes a shape at run time: no Shape or Size, no shape-like
//    operand (Reshape's shape, Expand's shape, Tile's repeats, Slice's
//    starts/ends/axes/steps, Resize's scales/sizes, ConstantOfShape, Range,
//    Pad's pads, TopK's k, OneHot's depth, Squeeze/Unsqueeze/ReduceSum axes,
//    Split's split, ...) that is not a constant;
//  - no node has a data-dependent output size (NonZero, NonMaxSuppression,
//    Unique, Compress), picks a branch at run time (If on a condition that
//    is not constant), or loops a run-time number of times (Loop without a
//    constant trip count, or with scan outputs and a way to exit early).
// The symbols left are listed by what fixes them: those of the inputs take
// a value from freeze-dims (proposed); those whose size comes from tensor
// values (a data-dependent op by its traits, or an expression of such a
// dim) are listed with their node, and no value is proposed for them.
// With report-only=true the blockers are warnings and the pass succeeds.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/Diagnostics.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include <map>
#include <memory>
#include <set>
#include <vector>

using namespace onnxopt;

namespace {

bool isConstantValue(const Value *V) { return V && isConstant(*V); }

/// True if \p V is a constant holding the single value true.
bool isConstantTrue(const Value *V) {
  if (!V)
    return false;
  std::optional<std::vector<int64_t>> B = getConstantValue(*V).toInt64s();
  return B && B->size() == 1 && B->front() != 0;
}

/// Why a Loop's result shapes are known only at run time, or empty.
std::string checkLoop(const Node &N) {
  if (N.getNumOperands() == 0 || !isConstantValue(N.getOperand(0)))
    return "its trip count is not a constant";
  unsigned Carried = N.getNumOperands() > 2 ? N.getNumOperands() - 2 : 0;
  if (N.getNumResults() <= Carried)
    return "";
  // Scan outputs grow per iteration: the loop must not be able to exit
  // before its trip count.
  std::vector<Graph *> Bodies = N.getSubgraphs();
  if (Bodies.size() != 1 || Bodies[0]->getNumOutputs() == 0)
    return "its body is malformed";
  Graph &Body = *Bodies[0];
  const Value *CondOut = Body.getOutput(0);
  while (CondOut && CondOut->getDefiningNode() &&
         hasTrait(*CondOut->getDefiningNode(), IdentityOp))
    CondOut = CondOut->getDefiningNode()->getOperand(0);
  if (isConstantTrue(CondOut))
    return "";
  bool OuterCondTrue = N.getNumOperands() < 2 || !N.getOperand(1) ||
                       isConstantTrue(N.getOperand(1));
  if (Body.getNumInputs() >= 2 && CondOut == Body.getInput(1) && OuterCondTrue)
    return "";
  return "it may exit early: the length of its scan outputs is known only at "
         "run time";
}

class CheckStaticPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "check-static"; }
  llvm::StringRef getDescription() const override {
    return "succeed only if every value has a static shape, no node "
           "computes a shape at run time and every condition the nodes "
           "need holds; list the blockers";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override;

private:
  Option<bool> ReportOnly{*this, "report-only",
                          "list the blockers as warnings and succeed", false};
  Option<int64_t> MaxShown{*this, "max-shown",
                           "blockers listed one by one (the rest are counted)",
                           10, atLeast(0)};
};

/// One reason the model is not certified.
struct Blocker {
  enum Kind { BrokenCondition, SymbolicValue, ShapeOp, ShapeOperandOp, Other };
  Kind K;
  const Node *N = nullptr;
  const Value *V = nullptr;
  std::string Why;
  /// fold-shapes would remove it: a Shape/Size, or a shape operand that a
  /// node computes (rather than a graph input).
  bool Foldable = false;
};

/// The state of one run: the pass object itself holds only options.
struct Checker {
  Model *TheModel = nullptr;
  /// The inferred types the values are judged by (the IR keeps its own).
  const ShapeInfo *Types = nullptr;
  std::vector<Blocker> Blockers;
  /// Symbols left in recorded dims, sorted.
  std::set<std::string> Symbols;
  /// The symbols whose size comes from tensor values, each with the
  /// data-dependent node it comes from: no freeze-dims value fixes them.
  std::map<std::string, const Node *> DataDependent;
  /// Values whose type is not static, by whether their graph inputs are.
  unsigned NumValues = 0, NumNodes = 0;

  void checkGraph(Graph &G);
  void checkValue(const Value &V);
  void checkNode(const Node &N);
  void checkConditions(Model &M);
  void findDataDependentDims(const DimAnalysis &DA);
  void block(Blocker::Kind K, const Node &N, const llvm::Twine &Why) {
    Blockers.push_back({K, &N, nullptr, Why.str()});
  }
};

void Checker::checkValue(const Value &V) {
  ++NumValues;
  const Type &T = Types->getType(V);
  if (T.isStatic())
    return;
  if (T.isTensor() && T.hasShape())
    for (const Dim &D : T.getDims())
      if (D.isSymbol())
        Symbols.insert(D.getSymbol().str());
  std::string Why = T.isNone()      ? std::string("type is unknown")
                    : !T.isTensor() ? "type " + T.str() + " is not a tensor"
                    : !T.hasShape() ? "type " + T.str() + " has an unknown rank"
                                    : "type " + T.str() + " is not static";
  if (const Node *Def = V.getDefiningNode())
    Blockers.push_back({Blocker::SymbolicValue, Def, nullptr,
                        "result '" + V.getName().str() + "': " + Why});
  else
    Blockers.push_back({Blocker::SymbolicValue, nullptr, &V, Why});
}

void Checker::checkNode(const Node &N) {
  ++NumNodes;
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (const Value *V = N.getResult(I))
      checkValue(*V);
  if (!N.isOnnxDomain())
    return;
  const OpDef *D = lookupOp(N);
  OpTraits Traits = D ? D->Traits : 0;
  if (Traits & ReadsTypeOnly) {
    block(Blocker::ShapeOp, N, "computes a shape at run time");
    Blockers.back().Foldable = true;
    return;
  }
  if (Traits & ValueDependentShape) {
    block(Blocker::Other, N, "the size of its output depends on the data");
    return;
  }
  if ((Traits & Conditional) &&
      !isConstantValue(N.getNumOperands() ? N.getOperand(0) : nullptr)) {
    block(Blocker::Other, N, "its branch is chosen at run time");
    return;
  }
  // A loop whose trip count is an operand (Loop; Scan runs once per slice
  // of a scan input, which static types fix).
  if ((Traits & Looping) && (Traits & ValueDependentUnlessConstant)) {
    std::string Why = checkLoop(N);
    if (!Why.empty())
      block(Blocker::Other, N, Why);
    return;
  }
  const OpDef *Def = lookupOp(N);
  for (const ShapeOperand &S :
       Def ? Def->ShapeOperands : llvm::ArrayRef<ShapeOperand>()) {
    if (S.Index >= N.getNumOperands() || !N.getOperand(S.Index))
      continue;
    const Value *V = N.getOperand(S.Index);
    if (!isConstantValue(V)) {
      block(Blocker::ShapeOperandOp, N,
            llvm::Twine("its ") + S.Name + " input '" + V->getName() +
                "' is computed at run time");
      Blockers.back().Foldable = V->getDefiningNode() != nullptr;
    }
  }
}

void Checker::checkGraph(Graph &G) {
  for (const std::unique_ptr<Value> &V : G.getInputs())
    checkValue(*V);
  for (Node &N : G.getNodes())
    checkNode(N);
}

/// The symbols a data-dependent node (by its op's traits: NonZero, NMS,
/// TopK with a computed k, ...) gives its results, unless the dim algebra
/// expresses them in input symbols (a k read from a Shape), and the
/// symbols equal to an expression of those (a Concat of two NMS counts).
void Checker::findDataDependentDims(const DimAnalysis &DA) {
  for (const DimConstraint &C : DA.getConstraints()) {
    if (C.K != DimConstraint::DataDependent || !C.N)
      continue;
    for (unsigned I = 0; I < C.N->getNumResults(); ++I) {
      const Value *V = C.N->getResult(I);
      if (!V || !Types->getType(*V).isTensor() ||
          !Types->getType(*V).hasShape())
        continue;
      for (const Dim &D : Types->getType(*V).getDims())
        if (D.isSymbol() &&
            !DA.isInputExpressible(DA.getBest(DimExpr::symbol(D.getSymbol()))))
          DataDependent.emplace(D.getSymbol().str(), C.N);
    }
  }
  // Dims proven equal to an expression of those (a Concat of two NMS
  // counts is 2*count): a class of equal dims with such a member. Chains
  // of classes take a few rounds.
  std::vector<DimAnalysis::Class> Classes = DA.getClasses();
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const DimAnalysis::Class &Cl : Classes) {
      if (DA.isInputExpressible(Cl.Best))
        continue;
      const Node *Source = nullptr;
      for (const DimExpr &E : Cl.Members)
        E.forEachSymbol([&](llvm::StringRef T) {
          auto It = DataDependent.find(T.str());
          if (!Source && It != DataDependent.end())
            Source = It->second;
        });
      if (!Source)
        continue;
      for (const DimExpr &E : Cl.Members)
        if (E.isSymbol())
          Changed |= DataDependent.emplace(E.getSymbol().str(), Source).second;
    }
  }
}

/// Calls \p F on each value of \p G and of its subgraphs: inputs,
/// initializers, then node results, a node's subgraphs after its results.
void forEachValue(const Graph &G, llvm::function_ref<void(const Value &)> F) {
  for (const std::unique_ptr<Value> &V : G.getInputs())
    F(*V);
  for (const std::unique_ptr<Value> &V : G.getConstants())
    F(*V);
  for (const Node &N : G.getNodes()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (const Value *V = N.getResult(I))
        F(*V);
    for (const Graph *Sub : N.getSubgraphs())
      forEachValue(*Sub, F);
  }
}

/// Static types are not enough: at these sizes every node must be able to
/// run (a Gemm's inner dims equal, a Gather's indices inside the table, a
/// convolution's output at least 1, no dim below 0).
void Checker::checkConditions(Model &M) {
  forEachValue(M.getGraph(), [&](const Value &V) {
    Type T = Types->getType(V);
    forEachDimOf(T, [&](Dim &D, unsigned Index) {
      if (!D.isKnown() || D.getValue() >= 0)
        return;
      std::string Why = "'" + V.getName().str() + "' has dim " +
                        std::to_string(Index) + " = " +
                        std::to_string(D.getValue());
      Blockers.push_back({Blocker::BrokenCondition, V.getDefiningNode(),
                          V.getDefiningNode() ? nullptr : &V, Why});
    });
  });
  DimAnalysis DA(M, Types);
  DA.run();
  findDataDependentDims(DA);
  for (const std::string &C : DA.getConflicts())
    Blockers.push_back(
        {Blocker::BrokenCondition, nullptr, nullptr, "contradiction: " + C});
  for (const DimConstraint &C : DA.getConstraints())
    if (decide(C, SymbolDomain()) == Verdict::Fails)
      Blockers.push_back(
          {Blocker::BrokenCondition, C.N, nullptr,
           "cannot run: it needs " + C.condition() + " (" + C.Why + ")"});
}

/// The symbols left, split by what fixes them: a symbol of the inputs (or
/// computed from them) takes a value from freeze-dims; a symbol whose size
/// comes from tensor values takes none, so none is proposed for it.
void reportSymbols(const Checker &C, DiagnosticEngine &Diags, Severity Level) {
  std::vector<std::string> Fixable;
  // Grouped by the node they come from, in the order of their symbols.
  std::vector<std::pair<const Node *, std::vector<std::string>>> FromData;
  for (const std::string &S : C.Symbols) {
    auto It = C.DataDependent.find(S);
    if (It == C.DataDependent.end()) {
      Fixable.push_back(S);
      continue;
    }
    auto Group = llvm::find_if(
        FromData, [&](const auto &G) { return G.first == It->second; });
    if (Group == FromData.end())
      FromData.push_back({It->second, {S}});
    else
      Group->second.push_back(S);
  }
  if (!Fixable.empty())
    emitAt(Diags, Level, "")
        << "dims left symbolic: " << llvm::join(Fixable, ", ")
        << " - freeze them (freeze-dims{dims=" << Fixable.front()
        << ":<value>,...})";
  if (FromData.empty())
    return;
  std::vector<std::string> Groups;
  for (const auto &[N, Syms] : FromData)
    Groups.push_back(llvm::join(Syms, ", ") + " from " + describe(*N));
  emitAt(Diags, Level, "") << "dims that depend on the data: "
                           << llvm::join(Groups, "; ")
                           << " - no freeze-dims value fixes them";
}

LogicalResult CheckStaticPass::run(Model &M, PassContext &Ctx) {
  Checker C;
  C.TheModel = &M;
  DiagnosticEngine &Diags = Ctx.getDiags();
  Severity Level = ReportOnly ? Severity::Warning : Severity::Error;

  // Judge values by their inferred types; the analysis keeps them beside
  // the model, which keeps its own. A model-level pass: the inference spans
  // every graph.
  ShapeInfo Types(M, Diags);
  C.Types = &Types;
  LogicalResult Inferred = Types.getResult();
  // Every graph, the main graph before its bodies (the framework's walk).
  for (Graph *G : collectGraphs(M, GraphPass::Order::ParentFirst))
    C.checkGraph(*G);
  if (succeeded(Inferred))
    C.checkConditions(M);
  if (failed(Inferred))
    return emitError(Diags) << "shape inference failed";

  std::vector<Blocker> &Bs = C.Blockers;
  if (Bs.empty()) {
    emitRemark(Diags) << "the model is static (" << C.NumValues << " values, "
                      << C.NumNodes << " nodes)";
    return success();
  }
  // The root cause first: symbols left anywhere make everything after them
  // symbolic; then broken conditions, then the rest in graph order.
  reportSymbols(C, Diags, Level);
  std::stable_sort(Bs.begin(), Bs.end(),
                   [](const Blocker &A, const Blocker &B) {
                     return (A.K == Blocker::BrokenCondition) >
                            (B.K == Blocker::BrokenCondition);
                   });
  size_t Shown = std::min<size_t>(Bs.size(), MaxShown.getValue());
  for (size_t I = 0; I < Shown; ++I) {
    const Blocker &B = Bs[I];
    std::string Where = B.N ? describe(*B.N) : B.V ? describe(*B.V) : "";
    emitAt(Diags, Level, Where) << B.Why;
  }
  if (Shown < Bs.size())
    emitAt(Diags, Level, "")
        << "and " << Bs.size() - Shown << " more blocker(s)";
  // Shape computations left on static types are what fold-shapes removes.
  bool OnlyShapeOps =
      C.Symbols.empty() &&
      llvm::all_of(Bs, [](const Blocker &B) { return B.Foldable; }) &&
      llvm::any_of(Bs,
                   [](const Blocker &B) { return B.K == Blocker::ShapeOp; });
  if (OnlyShapeOps)
    emitRemark(Diags) << "only shape computations block: run fold-shapes "
                         "first (--fold-shapes --dce --check-static)";
  if (ReportOnly) {
    emitRemark(Diags) << Bs.size() << " blocker(s)";
    return success();
  }
  return emitError(Diags) << "model is not static: " << Bs.size()
                          << " blocker(s)";
}

} // namespace

std::unique_ptr<Pass> onnxopt::createCheckStaticPass() {
  return std::make_unique<CheckStaticPass>();
}
