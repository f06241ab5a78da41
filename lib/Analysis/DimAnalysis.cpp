//===- DimAnalysis.cpp - Dims as expressions, and their equalities -------===//
//
// Walks the model in order and computes, for each node, the dims its op
// produces as expressions of its operands' dims (the op's DimRule, found in
// the op registry: lib/Ops/*Ops.cpp, section "Dim transfer");
// integer shape tensors carry their contents as expressions too. Where an op
// is not modeled, or a dim cannot be expressed, the type recorded in the IR
// is used: a symbol there stands for itself, an unknown dim for a fresh
// unknown.
//
// Equalities are kept in a union-find over canonical expression keys, each
// union with the node that implies it:
//  - a node's result dim equals both the expression the op computes and the
//    dim recorded in its type (that is how exporter-made names such as
//    `unk__7` or `dim1` get tied to expressions over the inputs);
//  - the non-axis dims of Concat's inputs, the contracted dims of MatMul and
//    Gemm, are equal.
// Since an equality found late (a MatMul) can improve dims computed earlier,
// the walk repeats until no new equality appears (a few sweeps). A sweep
// only repeats the previous one when none of its unions changed the best
// form of a class that it had already read (see Impl::observe): then the
// next sweep would compute the same dims and make no union, so it is not
// run.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/IR/AllocationOrder.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <algorithm>
#include <climits>
#include <set>
#include <unordered_map>

using namespace onnxopt;

namespace {

using Dims = DimList;
/// A computed shape; a missing dim falls back to the recorded type.
using PartialDims = PartialDimList;

constexpr unsigned kMaxSweeps = 4;
/// The most values one assumed bound may raise a symbol's least value by
/// (each is checked to fail the condition: Impl::assumeRequired).
constexpr int64_t kMaxAssumedStep = 1 << 12;
constexpr size_t kMaxDataLength = kMaxDimDataLength;
/// Expressions longer than this (in key characters) are dropped: a guard
/// against blow-ups such as products of long sums.
constexpr size_t kMaxExprSize = 2048;

/// Known numbers as dims or data.
Dims constantDims(llvm::ArrayRef<int64_t> Values) {
  Dims D;
  D.reserve(Values.size());
  for (int64_t X : Values)
    D.push_back(DimExpr::constant(X));
  return D;
}

DimConstraint::Kind getConstraintKind(DimCondition K) {
  switch (K) {
  case DimCondition::Equal:
    return DimConstraint::Equal;
  case DimCondition::Broadcast:
    return DimConstraint::Broadcast;
  case DimCondition::AtLeast:
    return DimConstraint::AtLeast;
  case DimCondition::AtMost:
    return DimConstraint::AtMost;
  case DimCondition::Divisible:
    return DimConstraint::Divisible;
  }
  llvm_unreachable("unknown dim condition");
}

/// Tables over the values, read and written in graph order.
template <typename V>
using ValueMap =
    llvm::DenseMap<const Value *, V, AllocationOrderInfo<const Value>>;

} // namespace

class DimAnalysis::Impl {
public:
  Impl(Model &M, const ShapeInfo *Types) : M(M), Types(Types) {}

  void run();

  Model &M;
  /// Where the types come from: inference's results, else the IR.
  const ShapeInfo *Types;
  const Type &typeOf(const Value &V) const {
    return Types ? Types->getType(V) : V.getType();
  }
  ValueMap<Dims> ValueDims;
  ValueMap<Dims> ValueData;
  /// Contents of constants, made when first read. Node-based: a transfer
  /// function holds pointers from data() while it reads another operand,
  /// and an insertion here must not move them (ValueData is only written
  /// after a node's transfer).
  std::unordered_map<const Value *, Dims> ConstantData;
  /// ValueDims after the first sweep, when asked for (setKeepForwardDims).
  bool KeepForward = false;
  /// Unite a computed dim with the recorded one (setUniteRecorded).
  bool UniteRecorded = true;
  /// One of those unions merged two classes or found a conflict.
  bool RecordedUnited = false;
  ValueMap<Dims> ForwardDims;
  ValueMap<Dims> ForwardData;
  std::vector<std::string> InputSymbols;
  llvm::StringSet<> InputSymbolSet;

  // Union-find over expressions.
  llvm::StringMap<unsigned> Index;
  std::vector<unsigned> Parent;
  std::vector<DimExpr> Exprs;
  /// Best member of each root.
  std::vector<DimExpr> Best;
  struct Edge {
    unsigned A, B;
    const Node *Because;
  };
  std::vector<Edge> Edges;
  size_t UnionsThisSweep = 0;
  /// Per id (valid at roots): the sweep read its class's best form.
  std::vector<uint8_t> Observed;
  /// Non-constant expressions the sweep read before they had an id.
  llvm::StringSet<> ObservedAbsent;
  /// A union of this sweep changed the best form of a class it had read.
  bool ObservedChanged = false;
  std::vector<std::string> Conflicts;
  /// Roots of classes involved in a conflict.
  std::set<unsigned> Conflicted;
  /// Root -> the node whose equality gave the class its number.
  llvm::DenseMap<unsigned, const Node *> NumberFrom;
  /// What the nodes need to run (this sweep), in graph order.
  std::vector<DimConstraint> Required;
  /// The symbols' least values that the main graph's requirements so far
  /// imply (this sweep): the domain in which the rules' holdsAlways decides.
  SymbolDomain Assumed;
  /// The greatest element of integer tensors made by Range (index tables).
  llvm::DenseMap<const Value *, DimExpr> ValueMax;
  /// Inside an If branch: the suffix of its recorded symbols
  /// (`@if0.then`, nested branches append theirs); empty in the main graph.
  std::string Scope;
  /// If nodes in walk order, for stable scope names across sweeps.
  llvm::DenseMap<const Node *, unsigned> IfIndex;

  unsigned find(unsigned X) const {
    while (Parent[X] != X)
      X = Parent[X];
    return X;
  }
  std::optional<unsigned> lookup(const DimExpr &E) const {
    auto It = Index.find(E.key());
    if (It == Index.end())
      return std::nullopt;
    return It->second;
  }
  unsigned idOf(const DimExpr &E);
  /// Returns false when \p A and \p B were one class already.
  bool unite(const DimExpr &A, const DimExpr &B, const Node *Because);
  bool better(const DimExpr &A, const DimExpr &B) const;
  DimExpr best(const DimExpr &E) const {
    std::optional<unsigned> Id = lookup(E);
    return Id ? Best[find(*Id)] : E;
  }
  /// best() for the sweep: the answer goes into dims or data, so a later
  /// union that changes it means the next sweep computes something else.
  /// A constant is always its class's best form: nothing to remember.
  DimExpr observe(const DimExpr &E) {
    if (E.isConstant())
      return E;
    std::optional<unsigned> Id = lookup(E);
    if (!Id) {
      ObservedAbsent.insert(E.key());
      return E;
    }
    unsigned R = find(*Id);
    Observed[R] = 1;
    return Best[R];
  }
  bool isInputExpressible(const DimExpr &E) const {
    if (E.hasUnknown())
      return false;
    bool Ok = true;
    E.forEachSymbol(
        [&](llvm::StringRef S) { Ok &= InputSymbolSet.count(S) > 0; });
    return Ok;
  }

private:
  /// Unknown dims of recorded types, stable across sweeps.
  llvm::DenseMap<std::pair<const Value *, unsigned>, DimExpr> Unknowns;
  /// The expression of each symbol of a recorded type, made once: most
  /// recorded dims of a large model repeat a few symbols.
  llvm::StringMap<DimExpr> SymbolExprs;

  void collectInputSymbols();
  void sweepGraph(Graph &G);
  void visitNode(Node &N);
  DimExpr fromRecorded(const Value &V, unsigned I, bool Observe = true);
  void sweepSubgraphs(Node &N);
  void joinBranches(Node &If);
  bool isBranchLocal(unsigned Root) const;
  const DimExpr &stableUnknown(const Value &V, unsigned I);
  const Dims *dims(const Node &N, unsigned I);
  const Dims *data(const Node &N, unsigned I);
  const Dims *constantData(const Value &V);
  std::optional<std::vector<double>> floatData(const Node &N, unsigned I);
  void setResult(Node &N, unsigned I, std::optional<PartialDims> Computed);

  /// The analysis as the op's dim rule sees it, for one node.
  class NodeContext;
  void require(DimConstraint::Kind K, const DimExpr &L, const DimExpr &R,
               const Node &N, const char *Why);
  void assumeRequired(const DimConstraint &C);
  void requireRunnable(const Node &N, const OpDef &Def);
  void propagateMax(const Node &N, const OpDef &Def);
};

//===----------------------------------------------------------------------===//
// Constraints
//===----------------------------------------------------------------------===//

void DimAnalysis::Impl::require(DimConstraint::Kind K, const DimExpr &L,
                                const DimExpr &R, const Node &N,
                                const char *Why) {
  DimConstraint C;
  C.K = K;
  C.Lhs = L;
  C.Rhs = R;
  C.N = &N;
  // What holds whatever the symbols are is no condition (and keeps the
  // list short on large models).
  if (K != DimConstraint::DataDependent &&
      decide(C, SymbolDomain()) == Verdict::Holds)
    return;
  C.Why = Why;
  assumeRequired(C);
  Required.push_back(std::move(C));
}

/// A rule may take for granted what the model needs to run at all: where a
/// requirement fails the model fails, whatever its other dims would be
/// there. So a bound on one input symbol that a main-graph node requires (a
/// Conv needs `floor(L/5)-1 >= 3`, so L >= 20) narrows the domain in which
/// later rules choose a result's form (holdsWhereRuns): a Slice that drops
/// the last frame of floor(L/10) frames then has floor(L/10)-1 of them,
/// not a dim of its own. Sound because every such requirement stays in
/// Required, which the passes check over the input symbols: at any size
/// where they all hold, each rule's assumption held. Only main-graph
/// nodes: a branch, a loop body may never run.
void DimAnalysis::Impl::assumeRequired(const DimConstraint &C) {
  if ((C.K != DimConstraint::AtLeast && C.K != DimConstraint::AtMost) || !C.N ||
      C.N->getParentGraph()->getParentNode() || !isInputExpressible(C.Lhs) ||
      !isInputExpressible(C.Rhs))
    return;
  std::optional<SymbolBound> B = impliedBound(C, Assumed);
  if (!B)
    return;
  int64_t From = Assumed.min(B->Symbol);
  if (B->Min <= From || B->Min - From > kMaxAssumedStep)
    return;
  // Only a bound below which the condition fails at every value: an exact
  // division that does not divide has no value there (impliedBound's
  // search reads it as failing), and proves nothing.
  DimExpr E = C.K == DimConstraint::AtLeast ? C.Lhs - C.Rhs : C.Rhs - C.Lhs;
  for (int64_t X = From; X < B->Min; ++X) {
    std::optional<int64_t> V = E.evaluate(
        [X](llvm::StringRef) -> std::optional<int64_t> { return X; });
    if (!V || *V >= 0)
      return;
  }
  Assumed.assumeAtLeast(B->Symbol, B->Min);
}

/// Conditions of ops whose results their rules do not model but whose
/// running depends on dims: the data-dependent ops (by their traits).
void DimAnalysis::Impl::requireRunnable(const Node &N, const OpDef &Def) {
  bool DataDependent =
      Def.has(ValueDependentShape) ||
      (Def.has(ValueDependentUnlessConstant) &&
       (Def.DataOperand < 0 ||
        !getConstantDims(data(N, static_cast<unsigned>(Def.DataOperand)))));
  if (DataDependent)
    require(DimConstraint::DataDependent, DimExpr(), DimExpr(), N,
            Def.has(Looping) ? "the trip count is computed at run time"
                             : "output dims depend on tensor values");
}

/// Index tables keep their greatest element through ops that move or pick
/// elements without changing them.
void DimAnalysis::Impl::propagateMax(const Node &N, const OpDef &Def) {
  if (!Def.has(MovesElements) || N.getNumOperands() == 0 || !N.getOperand(0) ||
      N.getNumResults() == 0 || !N.getResult(0))
    return;
  auto It = ValueMax.find(N.getOperand(0));
  if (It == ValueMax.end())
    return;
  // A copy first: inserting the result may grow the map and free what It
  // points at.
  DimExpr Max = It->second;
  ValueMax[N.getResult(0)] = std::move(Max);
}

//===----------------------------------------------------------------------===//
// The rules' view of the analysis
//===----------------------------------------------------------------------===//

class DimAnalysis::Impl::NodeContext final : public DimContext {
public:
  NodeContext(Impl &A, const Node &N, const OpDef *Def)
      : DimContext(N, Def), A(A) {}

  const Dims *dims(unsigned I) override { return A.dims(N, I); }
  const Dims *flatData(unsigned I) override { return A.data(N, I); }
  std::optional<std::vector<double>> floatData(unsigned I) override {
    return A.floatData(N, I);
  }
  const Type *operandType(unsigned I) override {
    const Value *V = I < N.getNumOperands() ? N.getOperand(I) : nullptr;
    return V ? &A.typeOf(*V) : nullptr;
  }
  std::optional<Dims> constantResultData(unsigned I) override {
    if (I >= N.getNumResults() || !N.getResult(I))
      return std::nullopt;
    std::optional<ConstantInts> C =
        getConstantInts(*N.getResult(I), kMaxDataLength);
    if (!C)
      return std::nullopt;
    return constantDims(C->Values);
  }
  const DimExpr *getMaxElement(unsigned I) override {
    if (I >= N.getNumOperands() || !N.getOperand(I))
      return nullptr;
    auto It = A.ValueMax.find(N.getOperand(I));
    return It == A.ValueMax.end() ? nullptr : &It->second;
  }
  bool holdsAlways(DimCondition K, const DimExpr &Lhs,
                   const DimExpr &Rhs) override {
    DimConstraint C;
    C.K = getConstraintKind(K);
    C.Lhs = Lhs;
    C.Rhs = Rhs;
    return decide(C, SymbolDomain()) == Verdict::Holds;
  }
  bool holdsWhereRuns(DimCondition K, const DimExpr &Lhs,
                      const DimExpr &Rhs) override {
    DimConstraint C;
    C.K = getConstraintKind(K);
    C.Lhs = Lhs;
    C.Rhs = Rhs;
    return decide(C, A.Assumed) == Verdict::Holds;
  }
  void unite(const DimExpr &X, const DimExpr &Y) override { A.unite(X, Y, &N); }
  void require(DimCondition K, const DimExpr &Lhs, const DimExpr &Rhs,
               const char *Why) override {
    A.require(getConstraintKind(K), Lhs, Rhs, N, Why);
  }
  void setMaxElement(unsigned I, DimExpr Max) override {
    if (I < N.getNumResults() && N.getResult(I))
      A.ValueMax[N.getResult(I)] = std::move(Max);
  }

  /// The rule's results, one entry per result of the node.
  ResultDims &getResultDims() { return Out; }
  ResultData &getResultData() { return OutData; }

private:
  Impl &A;
};

//===----------------------------------------------------------------------===//
// Union-find
//===----------------------------------------------------------------------===//

unsigned DimAnalysis::Impl::idOf(const DimExpr &E) {
  auto [It, Inserted] = Index.try_emplace(E.key(), Exprs.size());
  if (Inserted) {
    Parent.push_back(Exprs.size());
    Exprs.push_back(E);
    Best.push_back(E);
    Observed.push_back(!ObservedAbsent.empty() &&
                       ObservedAbsent.count(E.key()));
  }
  return It->second;
}

/// Rank: constants, then expressions over input symbols, then over other
/// symbols, then with unknowns; shorter first; then by key.
bool DimAnalysis::Impl::better(const DimExpr &A, const DimExpr &B) const {
  auto Rank = [&](const DimExpr &E) {
    if (E.isConstant())
      return 0;
    if (isInputExpressible(E))
      return 1;
    return E.hasUnknown() ? 3 : 2;
  };
  int RA = Rank(A), RB = Rank(B);
  if (RA != RB)
    return RA < RB;
  size_t CA = A.complexity(), CB = B.complexity();
  if (CA != CB)
    return CA < CB;
  return A.key() < B.key();
}

bool DimAnalysis::Impl::unite(const DimExpr &A, const DimExpr &B,
                              const Node *Because) {
  if (A == B)
    return false;
  unsigned RA = find(idOf(A)), RB = find(idOf(B));
  if (RA == RB)
    return false;
  // In an If branch, an equality between two classes the rest of the model
  // reads holds only when the branch runs: it is the node's condition
  // (filtered by the branch taken in getConstraints), not a union.
  if (!Scope.empty() && Because && !isBranchLocal(RA) && !isBranchLocal(RB)) {
    require(DimConstraint::Equal, A, B, *Because,
            "the node needs these dims equal");
    return false;
  }
  // Two different numbers: the model (a declared type) or an op model here
  // is wrong; never merge them.
  const DimExpr &CA = Best[RA], &CB = Best[RB];
  if (CA.isConstant() && CB.isConstant()) {
    std::string Msg = (Because ? describe(*Because) : "the model") +
                      " implies " + CA.str() + " = " + CB.str();
    for (unsigned R : {RA, RB})
      if (const Node *From = NumberFrom.lookup(R))
        Msg += "; " + Best[R].str() + " comes from " + describe(*From);
    if (std::find(Conflicts.begin(), Conflicts.end(), Msg) == Conflicts.end())
      Conflicts.push_back(std::move(Msg));
    Conflicted.insert(RA);
    Conflicted.insert(RB);
    return true;
  }
  // Keep the smaller id as root so that the result does not depend on
  // the order of unions more than necessary.
  if (RB < RA)
    std::swap(RA, RB);
  Parent[RB] = RA;
  if (Conflicted.count(RB))
    Conflicted.insert(RA);
  // Remember which node tied a class to a number, to explain conflicts.
  if (CB.isConstant() || CA.isConstant()) {
    const Node *From = NumberFrom.lookup(CA.isConstant() ? RA : RB);
    NumberFrom[RA] = From ? From : Because;
  }
  // The side whose best form is replaced: if this sweep read it, what it
  // computed from it is stale.
  bool TakeRB = better(Best[RB], Best[RA]);
  ObservedChanged |= TakeRB ? Observed[RA] : Observed[RB];
  Observed[RA] |= Observed[RB];
  if (TakeRB)
    Best[RA] = Best[RB];
  Edges.push_back(Edge{idOf(A), idOf(B), Because});
  ++UnionsThisSweep;
  return true;
}

//===----------------------------------------------------------------------===//
// Walking the model
//===----------------------------------------------------------------------===//

void DimAnalysis::Impl::collectInputSymbols() {
  for (const std::unique_ptr<Value> &V : M.getGraph().getInputs())
    for (const Dim &D : typeOf(*V).getDims())
      if (D.isSymbol() && InputSymbolSet.insert(D.getSymbol()).second)
        InputSymbols.push_back(D.getSymbol().str());
}

/// Values of \p G and its subgraphs that can have dims.
static size_t countValues(const Graph &G) {
  size_t N = G.getInputs().size() + G.getConstants().size();
  for (const Node &Op : G.getNodes()) {
    N += Op.getNumResults();
    for (const Graph *Sub : Op.getSubgraphs())
      N += countValues(*Sub);
  }
  return N;
}

void DimAnalysis::Impl::run() {
  collectInputSymbols();
  // Sized once: growing the map rehashes every value's dims.
  ValueDims.reserve(countValues(M.getGraph()));
  for (unsigned Sweep = 0; Sweep < kMaxSweeps; ++Sweep) {
    UnionsThisSweep = 0;
    Conflicts.clear();
    Required.clear();
    Assumed = SymbolDomain();
    ValueMax.clear();
    ValueDims.clear();
    ValueData.clear();
    ConstantData.clear();
    std::fill(Observed.begin(), Observed.end(), 0);
    ObservedAbsent.clear();
    ObservedChanged = false;
    size_t StableUnknowns = Unknowns.size();
    uint64_t UnknownsBefore = DimExpr::getNumUnknownsMade();
    sweepGraph(M.getGraph());
    if (Sweep == 0 && KeepForward) {
      ForwardDims = ValueDims;
      ForwardData = ValueData;
    }
    if (!UnionsThisSweep)
      break;
    // The next sweep reads the union-find as this one left it. If no union
    // changed an answer this sweep had read, it would compute the same
    // dims, data and requirements and make no union: this sweep's results
    // are the fixed point. Not so with conflicts (their messages read the
    // classes' state) or fresh unknowns other than the stable ones (an
    // overflowing product is a new unknown each time).
    bool FreshUnknowns = DimExpr::getNumUnknownsMade() - UnknownsBefore !=
                         Unknowns.size() - StableUnknowns;
    if (!ObservedChanged && Conflicts.empty() && !FreshUnknowns)
      break;
  }
}

/// \p Observe is false where the answer only goes into a union (the next
/// sweep would unite the same classes, whatever their best forms).
DimExpr DimAnalysis::Impl::fromRecorded(const Value &V, unsigned I,
                                        bool Observe) {
  const Dim &D = typeOf(V).getDims()[I];
  if (D.isKnown())
    return DimExpr::constant(D.getValue());
  if (D.isSymbol()) {
    // A name recorded in a branch is that branch's claim only: exporters
    // give both branches' results one name (torch 1.13), and the dims the
    // branches compute for it may differ.
    std::string Name = D.getSymbol().str() + Scope;
    auto [It, New] = SymbolExprs.try_emplace(Name);
    if (New)
      It->second = DimExpr::symbol(Name);
    return Observe ? observe(It->second) : best(It->second);
  }
  const DimExpr &E = stableUnknown(V, I);
  return Observe ? observe(E) : best(E);
}

const DimExpr &DimAnalysis::Impl::stableUnknown(const Value &V, unsigned I) {
  // The reference lives until the next insertion: callers copy it first.
  auto [It, New] = Unknowns.try_emplace(std::make_pair(&V, I));
  if (New)
    It->second = DimExpr::unknown();
  return It->second;
}

void DimAnalysis::Impl::sweepGraph(Graph &G) {
  auto Seed = [&](Value &V) {
    const Type &T = typeOf(V);
    if (T.isTensor() && T.hasShape()) {
      Dims D;
      D.reserve(T.getRank());
      for (unsigned I = 0; I < T.getRank(); ++I)
        D.push_back(fromRecorded(V, I));
      ValueDims[&V] = std::move(D);
    } else if (V.hasInitializer()) {
      ValueDims[&V] = constantDims(V.getInitializer().getDimsRef());
    }
  };
  for (const std::unique_ptr<Value> &V : G.getInputs())
    Seed(*V);
  for (const std::unique_ptr<Value> &V : G.getConstants())
    Seed(*V);
  for (Node &N : G.getNodes()) {
    visitNode(N);
    sweepSubgraphs(N);
  }
}

/// The graph of \p N's attribute \p Name (an If's branch), or null.
static const Graph *getBranch(const Node &N, llvm::StringRef Name) {
  const Attribute *A = N.getAttr(Name);
  return A && A->isGraph() && !A->Graphs.empty() ? A->Graphs[0].get() : nullptr;
}

/// Whether \p N holds branches of which one runs (If), by the registry's
/// Conditional trait.
static bool isIf(const Node &N) {
  const OpDef *Def = lookupOp(N);
  return Def && Def->has(Conditional);
}

void DimAnalysis::Impl::sweepSubgraphs(Node &N) {
  std::string Outer = Scope;
  for (Graph *Sub : N.getSubgraphs()) {
    if (isIf(N)) {
      unsigned I = IfIndex.try_emplace(&N, IfIndex.size()).first->second;
      Scope = Outer + "@if" + std::to_string(I) +
              (Sub == getBranch(N, "then_branch") ? ".then" : ".else");
    }
    sweepGraph(*Sub);
    Scope = Outer;
  }
  if (isIf(N))
    joinBranches(N);
}

/// The value of an If's condition where known: a constant, or a comparison
/// of dims decided at the model's sizes.
static std::optional<bool> getConstantCondition(const Dims *D, const Node &If) {
  if (D && D->size() == 1 && (*D)[0].isConstant())
    return (*D)[0].getConstant() != 0;
  if (If.getNumOperands() == 0 || !If.getOperand(0))
    return std::nullopt;
  Tensor T = getConstantValue(*If.getOperand(0));
  if (T.isNull() || T.getNumElements() != 1)
    return std::nullopt;
  std::optional<std::vector<double>> V = T.toDoubles();
  if (!V || V->size() != 1)
    return std::nullopt;
  return (*V)[0] != 0;
}

/// The If's result dims from its branches, now that they are known: those
/// of the taken branch when the condition is known, else a dim both
/// branches compute alike. Branch names are the branch's own (fromRecorded),
/// so without this the result would only be its recorded name.
void DimAnalysis::Impl::joinBranches(Node &If) {
  const Graph *Then = getBranch(If, "then_branch");
  const Graph *Else = getBranch(If, "else_branch");
  if (!Then || !Else)
    return;
  std::optional<bool> Cond = getConstantCondition(data(If, 0), If);
  auto BranchDims = [&](const Graph *G, unsigned I) -> const Dims * {
    if (I >= G->getOutputs().size() || !G->getOutput(I))
      return nullptr;
    auto It = ValueDims.find(G->getOutput(I));
    return It == ValueDims.end() ? nullptr : &It->second;
  };
  for (unsigned I = 0; I < If.getNumResults(); ++I) {
    Value *V = If.getResult(I);
    auto Res = V ? ValueDims.find(V) : ValueDims.end();
    if (Res == ValueDims.end())
      continue;
    const Dims *T = BranchDims(Then, I), *E = BranchDims(Else, I);
    if (Cond)
      T = E = *Cond ? T : E;
    if (!T || !E || T->size() != Res->second.size() ||
        E->size() != Res->second.size())
      continue;
    for (unsigned K = 0; K < T->size(); ++K) {
      // Only what holds whichever branch runs (or the one that runs), and
      // only in terms the rest of the model can read: a branch's own name
      // means nothing outside it.
      DimExpr A = best((*T)[K]), B = best((*E)[K]);
      if (A != B || !(A.isConstant() || isInputExpressible(A)))
        continue;
      if (typeOf(*V).isTensor() && typeOf(*V).hasShape())
        unite(A, fromRecorded(*V, K, /*Observe=*/false), &If);
      Res->second[K] = observe(A);
    }
  }
}

/// A class only the current branch reads: its best form is a symbol
/// recorded in the branch (no number, no input symbol: those rank better),
/// or an unknown.
bool DimAnalysis::Impl::isBranchLocal(unsigned Root) const {
  const DimExpr &E = Best[Root];
  if (E.isConstant() || isInputExpressible(E))
    return false;
  if (E.hasUnknown())
    return true;
  bool Local = false;
  E.forEachSymbol([&](llvm::StringRef S) { Local |= S.endswith(Scope); });
  return Local;
}

const Dims *DimAnalysis::Impl::dims(const Node &N, unsigned I) {
  if (I >= N.getNumOperands() || !N.getOperand(I))
    return nullptr;
  auto It = ValueDims.find(N.getOperand(I));
  return It == ValueDims.end() ? nullptr : &It->second;
}

const Dims *DimAnalysis::Impl::constantData(const Value &V) {
  std::optional<ConstantInts> C = getConstantInts(V, kMaxDataLength);
  if (!C)
    return nullptr;
  return &(ConstantData[&V] = constantDims(C->Values));
}

const Dims *DimAnalysis::Impl::data(const Node &N, unsigned I) {
  if (I >= N.getNumOperands() || !N.getOperand(I))
    return nullptr;
  const Value *V = N.getOperand(I);
  auto It = ValueData.find(V);
  if (It != ValueData.end())
    return &It->second;
  auto C = ConstantData.find(V);
  if (C != ConstantData.end())
    return &C->second;
  return constantData(*V);
}

std::optional<std::vector<double>> DimAnalysis::Impl::floatData(const Node &N,
                                                                unsigned I) {
  if (I >= N.getNumOperands() || !N.getOperand(I))
    return std::nullopt;
  Tensor T = getConstantValue(*N.getOperand(I));
  if (T.isNull() || T.getNumElements() > static_cast<int64_t>(kMaxDataLength))
    return std::nullopt;
  return T.toDoubles();
}

void DimAnalysis::Impl::setResult(Node &N, unsigned I,
                                  std::optional<PartialDims> Computed) {
  Value *V = N.getResult(I);
  if (!V)
    return;
  const Type &T = typeOf(*V);
  bool Recorded = T.isTensor() && T.hasShape();
  if (Computed && Recorded && Computed->size() != T.getRank())
    Computed.reset(); // inconsistent with inference: trust the IR
  if (!Computed && !Recorded)
    return;
  size_t Rank = Computed ? Computed->size() : T.getRank();
  Dims Result;
  Result.reserve(Rank);
  for (unsigned K = 0; K < Rank; ++K) {
    std::optional<DimExpr> C = Computed ? (*Computed)[K] : std::nullopt;
    if (C && C->key().size() > kMaxExprSize)
      C.reset();
    if (!Recorded) {
      Result.push_back(C ? std::move(*C) : stableUnknown(*V, K));
      continue;
    }
    if (!C) {
      Result.push_back(fromRecorded(*V, K));
      continue;
    }
    if (UniteRecorded && unite(*C, fromRecorded(*V, K, /*Observe=*/false), &N))
      RecordedUnited = true;
    Result.push_back(observe(*C));
  }
  ValueDims[V] = std::move(Result);
}

void DimAnalysis::Impl::visitNode(Node &N) {
  // One lookup per visit: the rule and the traits come with the definition.
  const OpDef *Def = lookupOp(N);
  NodeContext C(*this, N, Def);
  if (Def) {
    const DimRule *Rule = getDimRule(Def);
    // No rule, or none that models results: the recorded types stand.
    if (Rule && Rule->Transfer && N.getNumResults()) {
      const Dims *X = dims(N, 0);
      if (X || !Rule->NeedsFirstOperandDims)
        Rule->Transfer(C, X);
    }
    requireRunnable(N, *Def);
    propagateMax(N, *Def);
  }
  DimContext::ResultDims &Out = C.getResultDims();
  DimContext::ResultData &OutData = C.getResultData();
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    setResult(N, I, std::move(Out[I]));
    if (OutData[I] && N.getResult(I) && OutData[I]->size() <= kMaxDataLength &&
        llvm::all_of(*OutData[I], [](const DimExpr &E) {
          return E.key().size() <= kMaxExprSize;
        })) {
      Dims D;
      D.reserve(OutData[I]->size());
      for (const DimExpr &E : *OutData[I])
        D.push_back(observe(E));
      ValueData[N.getResult(I)] = std::move(D);
    }
  }
}

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

DimAnalysis::DimAnalysis(Model &M, const ShapeInfo *Types)
    : P(std::make_unique<Impl>(M, Types)) {}
DimAnalysis::~DimAnalysis() = default;

void DimAnalysis::run() {
  // Once: a cached analysis (AnalysisManager) is asked to run by each pass
  // that reads it.
  if (Ran)
    return;
  Ran = true;
  P->run();
}

const std::vector<DimExpr> *DimAnalysis::getDims(const Value &V) const {
  auto It = P->ValueDims.find(&V);
  return It == P->ValueDims.end() ? nullptr : &It->second;
}

void DimAnalysis::setKeepForwardDims(bool Keep) { P->KeepForward = Keep; }

void DimAnalysis::setUniteRecorded(bool Unite) { P->UniteRecorded = Unite; }

bool DimAnalysis::unitedRecordedDims() const { return P->RecordedUnited; }

const std::vector<DimExpr> *DimAnalysis::getForwardDims(const Value &V) const {
  auto It = P->ForwardDims.find(&V);
  return It == P->ForwardDims.end() ? nullptr : &It->second;
}

const std::vector<DimExpr> *DimAnalysis::getForwardData(const Value &V) const {
  auto It = P->ForwardData.find(&V);
  return It == P->ForwardData.end() ? nullptr : &It->second;
}

const std::vector<DimExpr> *DimAnalysis::getData(const Value &V) const {
  auto It = P->ValueData.find(&V);
  if (It != P->ValueData.end())
    return &It->second;
  auto C = P->ConstantData.find(&V);
  return C == P->ConstantData.end() ? nullptr : &C->second;
}

DimExpr DimAnalysis::getBest(const DimExpr &E) const { return P->best(E); }

bool DimAnalysis::provenEqual(const DimExpr &A, const DimExpr &B) const {
  if (A == B)
    return true;
  std::optional<unsigned> IA = P->lookup(A), IB = P->lookup(B);
  return IA && IB && P->find(*IA) == P->find(*IB);
}

std::optional<unsigned> DimAnalysis::getClassId(const DimExpr &E) const {
  std::optional<unsigned> Id = P->lookup(E);
  if (!Id)
    return std::nullopt;
  return P->find(*Id);
}

llvm::ArrayRef<std::string> DimAnalysis::getConflicts() const {
  return P->Conflicts;
}

bool DimAnalysis::isConflicted(const DimExpr &E) const {
  std::optional<unsigned> Id = P->lookup(E);
  return Id && P->Conflicted.count(P->find(*Id));
}

const std::vector<std::string> &DimAnalysis::getInputSymbols() const {
  return P->InputSymbols;
}

bool DimAnalysis::isInputExpressible(const DimExpr &E) const {
  return P->isInputExpressible(E);
}

std::vector<DimAnalysis::Class> DimAnalysis::getClasses() const {
  std::map<unsigned, Class> ByRoot;
  for (unsigned I = 0; I < P->Exprs.size(); ++I) {
    unsigned R = P->find(I);
    Class &C = ByRoot[R];
    C.Best = P->Best[R];
    C.Members.push_back(P->Exprs[I]);
  }
  // Each reason once per class, in the order found (a set per class: a
  // search of the list made one large class quadratic).
  std::map<unsigned, llvm::StringSet<>> Given;
  for (const Impl::Edge &E : P->Edges) {
    unsigned R = P->find(E.A);
    Class &C = ByRoot[R];
    std::string Why = P->Exprs[E.A].str() + " = " + P->Exprs[E.B].str();
    if (E.Because)
      Why += " (" + describe(*E.Because) + ")";
    if (Given[R].insert(Why).second)
      C.Reasons.push_back(std::move(Why));
  }
  std::vector<Class> Result;
  for (auto &Entry : ByRoot) {
    Class &C = Entry.second;
    if (C.Members.size() < 2)
      continue;
    std::sort(
        C.Members.begin(), C.Members.end(),
        [](const DimExpr &A, const DimExpr &B) { return A.str() < B.str(); });
    Result.push_back(std::move(C));
  }
  std::sort(Result.begin(), Result.end(), [](const Class &A, const Class &B) {
    return A.Best.str() < B.Best.str();
  });
  return Result;
}

/// The ops whose rule requires every condition on dims they have (rows
/// without a transfer function have no condition beyond their traits': a
/// condition of one element, a data-dependent blocker, a shape that is the
/// input's or an operand's contents).
bool onnxopt::dimRulesCover(const Node &N) {
  const DimRule *Rule = getDimRule(lookupOp(N));
  return Rule && Rule->StatesAllConditions &&
         (!Rule->StatesAllConditionsFor || Rule->StatesAllConditionsFor(N));
}

/// Whether a condition needed by \p N binds the model: a node inside an If
/// branch runs only when the branch is taken. A branch the condition rules
/// out never runs, so its conditions are dropped. A branch whose condition
/// the analysis does not know (it depends on the symbols' values) may or
/// may not run: its conditions are dropped too, since a pass that checks
/// them would refuse shapes at which the other branch runs (the 8 kHz
/// encoder of a VAD checked at 16 kHz sizes). This loses no top-level
/// condition: nodes outside branches, and the If's own, always count.
/// Where the shape is fixed (freeze-dims' check after freezing, check-static)
/// the condition is decided and the taken branch's conditions are checked.
static bool bindsModel(const DimAnalysis &DA, const Node *N) {
  for (; N; N = N->getParentGraph()->getParentNode()) {
    const Node *Owner = N->getParentGraph()->getParentNode();
    if (!Owner || !isIf(*Owner))
      continue;
    const Value *C = Owner->getNumOperands() ? Owner->getOperand(0) : nullptr;
    std::optional<bool> Cond =
        getConstantCondition(C ? DA.getData(*C) : nullptr, *Owner);
    if (!Cond)
      return false;
    if (getBranch(*Owner, *Cond ? "then_branch" : "else_branch") !=
        N->getParentGraph())
      return false;
  }
  return true;
}

std::vector<DimConstraint> DimAnalysis::getConstraints() const {
  std::vector<DimConstraint> Result;
  std::set<std::string> Seen;
  auto Add = [&](DimConstraint C) {
    if (C.N && !bindsModel(*this, C.N))
      return;
    if (C.K != DimConstraint::DataDependent &&
        decide(C, SymbolDomain()) == Verdict::Holds)
      return;
    // Symmetric conditions between two expressions in one order, so that
    // each is listed once.
    if ((C.K == DimConstraint::Equal || C.K == DimConstraint::Broadcast) &&
        !C.Lhs.isConstant() && !C.Rhs.isConstant() && C.Rhs < C.Lhs)
      std::swap(C.Lhs, C.Rhs);
    // One entry per condition; a data-dependent node is its own entry.
    std::string Key =
        std::to_string(C.K) + "|" + C.Lhs.key() + "|" + C.Rhs.key() + "|";
    if (C.K == DimConstraint::DataDependent)
      Key += std::to_string(reinterpret_cast<uintptr_t>(C.N));
    if (Seen.insert(Key).second)
      Result.push_back(std::move(C));
  };
  // Equal dims expressed two ways in input symbols: the nodes that made
  // them one class require the two forms to be equal.
  // An edge between two input expressions (Concat tying ceil(H/2) to
  // floor(H/2)) names the node better than one to a recorded unknown (the
  // Slice whose result it is): those edges are taken first.
  std::map<unsigned, const Node *> FirstNode;
  for (bool Expressible : {true, false})
    for (const Impl::Edge &E : P->Edges)
      if (E.Because &&
          (!Expressible || (P->isInputExpressible(P->Exprs[E.A]) &&
                            P->isInputExpressible(P->Exprs[E.B]))))
        for (unsigned Id : {E.A, E.B})
          FirstNode.emplace(Id, E.Because);
  for (unsigned I = 0; I < P->Exprs.size(); ++I) {
    const DimExpr &Best = P->Best[P->find(I)];
    const DimExpr &Member = P->Exprs[I];
    if (Member == Best || !P->isInputExpressible(Member) ||
        !P->isInputExpressible(Best))
      continue;
    // Against a number, the node that tied the class to it says most.
    auto It = FirstNode.find(I);
    const Node *From =
        Best.isConstant() ? P->NumberFrom.lookup(P->find(I)) : nullptr;
    DimConstraint C;
    C.K = DimConstraint::Equal;
    C.Lhs = Member;
    C.Rhs = Best;
    C.N = From ? From : It == FirstNode.end() ? nullptr : It->second;
    C.Why = "the node needs these dims equal";
    Add(std::move(C));
  }
  for (const DimConstraint &R : P->Required) {
    DimConstraint C = R;
    C.Lhs = P->best(C.Lhs);
    C.Rhs = P->best(C.Rhs);
    Add(std::move(C));
  }
  return Result;
}

void DimAnalysis::explain(llvm::raw_ostream &OS) const {
  for (const Class &C : getClasses()) {
    bool Interesting = false;
    for (const DimExpr &E : C.Members)
      Interesting |= !E.hasUnknown() && !E.isConstant();
    if (!Interesting)
      continue;
    OS << C.Best.str() << ":";
    for (const DimExpr &E : C.Members)
      if (!E.hasUnknown() && E != C.Best)
        OS << " " << E.str();
    OS << "\n";
    for (const std::string &Why : C.Reasons)
      OS << "  " << Why << "\n";
  }
}
