//===- DimAnalysis.cpp - Dims as expressions, and their equalities -------===//
//
// Walks the model in order and computes, for each node, the dims its op
// produces as expressions of its operands' dims (transfer functions below);
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
#include "onnxopt/IR/IR.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <algorithm>
#include <climits>
#include <cmath>
#include <initializer_list>
#include <set>
#include <unordered_map>

using namespace onnxopt;

namespace {

using Dims = std::vector<DimExpr>;
/// A computed shape; a missing dim falls back to the recorded type.
using PartialDims = std::vector<std::optional<DimExpr>>;

constexpr unsigned kMaxSweeps = 4;
constexpr size_t kMaxDataLength = 64;
/// Expressions longer than this (in key characters) are dropped: a guard
/// against blow-ups such as products of long sums.
constexpr size_t kMaxExprSize = 2048;

/// numpy broadcasting of one aligned position; std::nullopt when the result
/// depends on which of two different expressions is 1.
std::optional<DimExpr> broadcastDim(llvm::ArrayRef<DimExpr> In) {
  std::optional<DimExpr> Number, Other;
  bool NumbersDiffer = false, OthersDiffer = false;
  for (const DimExpr &D : In) {
    if (D.isConstant() && D.getConstant() == 1)
      continue;
    if (D.isConstant()) {
      NumbersDiffer |= Number && *Number != D;
      Number = D;
    } else {
      OthersDiffer |= Other && *Other != D;
      Other = D;
    }
  }
  // A number other than 1 decides: every other dim is it or 1. Two
  // different numbers do not broadcast (legacy ops do not follow numpy).
  if (Number)
    return NumbersDiffer ? std::nullopt : Number;
  if (OthersDiffer)
    return std::nullopt;
  return Other ? *Other : DimExpr::constant(1);
}

PartialDims broadcast(llvm::ArrayRef<const Dims *> Inputs) {
  size_t Rank = 0;
  for (const Dims *D : Inputs)
    Rank = std::max(Rank, D->size());
  PartialDims Out(Rank);
  for (size_t I = 0; I < Rank; ++I) {
    std::vector<DimExpr> Column;
    for (const Dims *D : Inputs)
      if (I + D->size() >= Rank)
        Column.push_back((*D)[I + D->size() - Rank]);
    Out[I] = broadcastDim(Column);
  }
  return Out;
}

PartialDims full(const Dims &D) { return PartialDims(D.begin(), D.end()); }

DimExpr product(llvm::ArrayRef<DimExpr> D) {
  DimExpr P = DimExpr::constant(1);
  for (const DimExpr &E : D)
    P = P * E;
  return P;
}

/// Normalizes a possibly negative axis; std::nullopt when out of range.
std::optional<size_t> normAxis(int64_t Axis, size_t Rank) {
  if (std::optional<int64_t> A = resolveAxis(Axis, static_cast<int64_t>(Rank)))
    return static_cast<size_t>(*A);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> constants(const Dims *D) {
  if (!D)
    return std::nullopt;
  std::vector<int64_t> V;
  for (const DimExpr &E : *D) {
    if (!E.isConstant())
      return std::nullopt;
    V.push_back(E.getConstant());
  }
  return V;
}

/// True if \p E is at least 0 at every non-negative value of its symbols:
/// at least 0 where they are all 0, and never decreasing as they grow. Not
/// the symbol domain's default (dims >= 1): a dim may be 0 (an empty KV
/// cache), and `past - 1` is then -1.
bool nonNegativeEverywhere(const DimExpr &E) {
  auto Zero = [](llvm::StringRef) -> std::optional<int64_t> { return 0; };
  std::optional<int64_t> AtZero = E.evaluate(Zero);
  return AtZero && *AtZero >= 0 && E.isNondecreasing(Zero);
}

/// Equal on two elements of shape data: 1, 0, or undecided.
std::optional<int64_t> equalElements(const DimExpr &A, const DimExpr &B) {
  if (A == B)
    return 1;
  if (A.isConstant() && B.isConstant())
    return 0;
  // `s == -1` on a dim expression (torch's Expand target check) is false:
  // the expression is never negative.
  if (B.isConstant() && B.getConstant() < 0 && nonNegativeEverywhere(A))
    return 0;
  if (A.isConstant() && A.getConstant() < 0 && nonNegativeEverywhere(B))
    return 0;
  return std::nullopt;
}

/// The length numpy broadcasting gives 1-D data of lengths \p Lens, or 0
/// when they do not broadcast (or one is empty).
size_t broadcastLength(std::initializer_list<size_t> Lens) {
  size_t Len = 1;
  for (size_t L : Lens) {
    if (L == 0)
      return 0;
    if (L == 1 || L == Len)
      continue;
    if (Len != 1)
      return 0;
    Len = L;
  }
  return Len;
}

/// Known numbers as dims or data.
Dims constantDims(llvm::ArrayRef<int64_t> Values) {
  Dims D;
  D.reserve(Values.size());
  for (int64_t X : Values)
    D.push_back(DimExpr::constant(X));
  return D;
}

const DimExpr &elementAt(const Dims &D, size_t I) {
  return D[D.size() == 1 ? 0 : I];
}

} // namespace

class DimAnalysis::Impl {
public:
  explicit Impl(Model &M) : M(M) {}

  void run();
  /// True if ops of type \p Op (default domain) have a transfer function.
  static bool hasTransferRule(llvm::StringRef Op) {
    return getTransferTable().count(Op);
  }

  Model &M;
  llvm::DenseMap<const Value *, Dims> ValueDims;
  llvm::DenseMap<const Value *, Dims> ValueData;
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
  llvm::DenseMap<const Value *, Dims> ForwardDims;
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
  /// The greatest element of integer tensors made by Range (index tables).
  llvm::DenseMap<const Value *, DimExpr> ValueMax;

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
  const DimExpr &stableUnknown(const Value &V, unsigned I);
  const Dims *dims(const Node &N, unsigned I);
  const Dims *data(const Node &N, unsigned I);
  const Dims *constantData(const Value &V);
  std::optional<std::vector<double>> floatData(const Node &N, unsigned I);
  void setResult(Node &N, unsigned I, std::optional<PartialDims> Computed);

  // Transfer functions: fill Out (one entry per result) and OutData.
  // Inline for the usual one result: two allocations less per node.
  using ResultDims = llvm::SmallVector<std::optional<PartialDims>, 1>;
  using ResultData = llvm::SmallVector<std::optional<Dims>, 1>;
  using TransferFn = void (Impl::*)(Node &N, const Dims *X, ResultDims &Out,
                                    ResultData &OutData);
  struct TransferRule {
    TransferFn Fn = nullptr;
    /// The rule reads the dims of operand 0 (X is never null in it).
    bool NeedsFirstOperandDims = false;
  };
  /// Op type (default domain) -> its transfer function.
  static const llvm::StringMap<TransferRule> &getTransferTable();
  void transfer(Node &N, ResultDims &Out, ResultData &OutData);
  void transferShapePreserving(Node &N, const Dims *X, ResultDims &Out,
                               ResultData &OutData);
  void transferBroadcast(Node &N, const Dims *X, ResultDims &Out,
                         ResultData &OutData);
  void transferConstant(Node &N, const Dims *X, ResultDims &Out,
                        ResultData &OutData);
  void transferShape(Node &N, const Dims *X, ResultDims &Out,
                     ResultData &OutData);
  void transferSize(Node &N, const Dims *X, ResultDims &Out,
                    ResultData &OutData);
  void transferTranspose(Node &N, const Dims *X, ResultDims &Out,
                         ResultData &OutData);
  void transferReshape(Node &N, const Dims *X, ResultDims &Out,
                       ResultData &OutData);
  void transferFlatten(Node &N, const Dims *X, ResultDims &Out,
                       ResultData &OutData);
  void transferConcat(Node &N, const Dims *X, ResultDims &Out,
                      ResultData &OutData);
  void transferConv(Node &N, const Dims *X, ResultDims &Out,
                    ResultData &OutData);
  void transferPool(Node &N, const Dims *X, ResultDims &Out,
                    ResultData &OutData);
  void requireCoversKernel(Node &N, const std::optional<PartialDims> &Y);
  void transferConvTranspose(Node &N, const Dims *X, ResultDims &Out,
                             ResultData &OutData);
  void transferGlobalPool(Node &N, const Dims *X, ResultDims &Out,
                          ResultData &OutData);
  void transferMatMul(Node &N, const Dims *X, ResultDims &Out,
                      ResultData &OutData);
  void transferGemm(Node &N, const Dims *X, ResultDims &Out,
                    ResultData &OutData);
  void transferGather(Node &N, const Dims *X, ResultDims &Out,
                      ResultData &OutData);
  void transferUnsqueeze(Node &N, const Dims *X, ResultDims &Out,
                         ResultData &OutData);
  void transferSqueeze(Node &N, const Dims *X, ResultDims &Out,
                       ResultData &OutData);
  void transferSlice(Node &N, const Dims *X, ResultDims &Out,
                     ResultData &OutData);
  void transferConstantOfShape(Node &N, const Dims *X, ResultDims &Out,
                               ResultData &OutData);
  void transferExpand(Node &N, const Dims *X, ResultDims &Out,
                      ResultData &OutData);
  void transferRange(Node &N, const Dims *X, ResultDims &Out,
                     ResultData &OutData);
  void transferTile(Node &N, const Dims *X, ResultDims &Out,
                    ResultData &OutData);
  void transferPad(Node &N, const Dims *X, ResultDims &Out,
                   ResultData &OutData);
  void transferSplit(Node &N, const Dims *X, ResultDims &Out,
                     ResultData &OutData);
  void transferResize(Node &N, const Dims *X, ResultDims &Out,
                      ResultData &OutData);
  void transferReduce(Node &N, const Dims *X, ResultDims &Out,
                      ResultData &OutData);
  void transferArgMinMax(Node &N, const Dims *X, ResultDims &Out,
                         ResultData &OutData);
  void transferRecurrent(Node &N, const Dims *X, ResultDims &Out,
                         ResultData &OutData);
  void transferTopK(Node &N, const Dims *X, ResultDims &Out,
                    ResultData &OutData);
  std::optional<PartialDims> convLike(Node &N, const Dims &X, bool IsPool);
  std::optional<PartialDims> convTranspose(Node &N, const Dims &X);
  std::optional<PartialDims> reshape(Node &N, const Dims &X,
                                     const Dims &Target);
  std::optional<PartialDims> matMul(Node &N, const Dims &A, const Dims &B);
  std::optional<PartialDims> resize(Node &N, const Dims &X);
  std::optional<PartialDims> slice(Node &N, const Dims &X);
  std::optional<Dims> sliceData(Node &N, const Dims &D);
  std::optional<Dims> arithmeticData(Node &N);
  std::optional<Dims> selectionData(Node &N);
  std::optional<std::vector<int64_t>> axesOf(Node &N, unsigned InputIndex);
  std::optional<PartialDims> reduce(Node &N, const Dims &X);
  std::optional<PartialDims> range(Node &N);
  void require(DimConstraint::Kind K, const DimExpr &L, const DimExpr &R,
               const Node &N, const char *Why);
  void requireBroadcast(llvm::ArrayRef<const Dims *> In, const Node &N);
  void requireIndices(Node &N, const DimExpr &Table);
  void requireRunnable(Node &N);
  void requireParameterShapes(Node &N, const Dims &X);
  void propagateMax(Node &N);
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
  Required.push_back(std::move(C));
}

/// Each aligned position: the dims are equal or 1. Against a number other
/// than 1 every other dim must be that number or 1; between expressions,
/// each must equal the first or one of them be 1.
void DimAnalysis::Impl::requireBroadcast(llvm::ArrayRef<const Dims *> In,
                                         const Node &N) {
  size_t Rank = 0;
  for (const Dims *D : In)
    Rank = std::max(Rank, D->size());
  for (size_t I = 0; I < Rank; ++I) {
    std::optional<DimExpr> Anchor;
    for (const Dims *D : In) {
      if (I + D->size() < Rank)
        continue;
      const DimExpr &E = (*D)[I + D->size() - Rank];
      if (E.isConstant() && E.getConstant() == 1)
        continue;
      if (!Anchor || (E.isConstant() && !Anchor->isConstant())) {
        // A number anchors the position: compare everything with it.
        if (Anchor && !Anchor->isConstant())
          require(DimConstraint::Broadcast, *Anchor, E, N,
                  "broadcast dims must match");
        Anchor = E;
        continue;
      }
      require(DimConstraint::Broadcast, E, *Anchor, N,
              "broadcast dims must match");
    }
  }
}

/// The indices of a Gather must lie inside the table's dim \p Table: known
/// constant indices, or a Range whose greatest element is known.
void DimAnalysis::Impl::requireIndices(Node &N, const DimExpr &Table) {
  if (N.getNumOperands() < 2 || !N.getOperand(1))
    return;
  if (std::optional<std::vector<int64_t>> Idx = constants(data(N, 1))) {
    for (int64_t K : *Idx)
      require(DimConstraint::AtLeast, Table,
              DimExpr::constant(K >= 0 ? K + 1 : -K), N,
              "indices inside the gathered dim");
    return;
  }
  auto It = ValueMax.find(N.getOperand(1));
  if (It != ValueMax.end())
    require(DimConstraint::AtMost, It->second + DimExpr::constant(1), Table, N,
            "indices inside the gathered dim");
}

/// The extra operands of shape-preserving ops: per-channel parameters of the
/// normalizations ([C] = X[1]), LayerNormalization's scale and bias
/// (broadcast to X[axis:]), PRelu's slope (broadcast to X), per-axis
/// quantization parameters ([X[axis]]).
void DimAnalysis::Impl::requireParameterShapes(Node &N, const Dims &X) {
  llvm::StringRef Op = N.getOpType();
  if ((Op == "BatchNormalization" || Op == "InstanceNormalization") &&
      X.size() >= 2) {
    for (unsigned I = 1; I < N.getNumOperands(); ++I)
      if (const Dims *P = dims(N, I); P && P->size() == 1)
        require(DimConstraint::Equal, (*P)[0], X[1], N,
                "per-channel parameters have the input's channels");
    return;
  }
  if (Op == "LayerNormalization") {
    std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", -1), X.size());
    if (!Axis)
      return;
    Dims Tail(X.begin() + *Axis, X.end());
    for (unsigned I = 1; I < N.getNumOperands(); ++I)
      if (const Dims *P = dims(N, I); P && P->size() <= Tail.size())
        requireBroadcast({&Tail, P}, N);
    return;
  }
  if (Op == "PRelu") {
    if (const Dims *Slope = dims(N, 1); Slope && Slope->size() <= X.size())
      requireBroadcast({&X, Slope}, N);
    return;
  }
  if (Op == "QuantizeLinear" || Op == "DequantizeLinear") {
    std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 1), X.size());
    for (unsigned I = 1; I < N.getNumOperands(); ++I)
      if (const Dims *P = dims(N, I); Axis && P && P->size() == 1)
        require(DimConstraint::Broadcast, (*P)[0], X[*Axis], N,
                "per-axis parameters have the axis' size");
  }
}

/// Conditions of ops whose results the transfer functions do not model
/// but whose running depends on dims, and the data-dependent ops.
void DimAnalysis::Impl::requireRunnable(Node &N) {
  llvm::StringRef Op = N.getOpType();
  if (Op == "If") {
    if (const Dims *C = dims(N, 0))
      require(DimConstraint::Equal, product(*C), DimExpr::constant(1), N,
              "the condition must have one element");
    return;
  }
  bool DataDependent =
      hasValueDependentShape(Op) || (Op == "TopK" && !constants(data(N, 1))) ||
      (Op == "Loop" &&
       (N.getNumOperands() == 0 || !N.getOperand(0) || !constants(data(N, 0))));
  if (DataDependent)
    require(DimConstraint::DataDependent, DimExpr(), DimExpr(), N,
            Op == "Loop" ? "the trip count is computed at run time"
                         : "output dims depend on tensor values");
}

/// Index tables keep their greatest element through ops that move or pick
/// elements without changing them.
void DimAnalysis::Impl::propagateMax(Node &N) {
  llvm::StringRef Op = N.getOpType();
  static const llvm::StringSet<> Moving = {
      "Unsqueeze", "Squeeze", "Reshape",   "Expand", "Cast",
      "Identity",  "Flatten", "Transpose", "Slice",  "Tile"};
  if (!Moving.count(Op) || N.getNumOperands() == 0 || !N.getOperand(0) ||
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

/// Range(start, limit, delta) with a positive step: its length, when
/// limit >= start is proven, and its greatest element. A start that is an
/// expression (`arange(past, past + seq)`, the positions after a KV cache)
/// needs limit - start >= 0 at every value of the symbols, 0 included.
std::optional<PartialDims> DimAnalysis::Impl::range(Node &N) {
  const Dims *S = data(N, 0), *L = data(N, 1), *D = data(N, 2);
  if (!S || !L || !D || S->size() != 1 || L->size() != 1 || D->size() != 1)
    return std::nullopt;
  const DimExpr &Start = (*S)[0], &Limit = (*L)[0], &Delta = (*D)[0];
  if (!Delta.isConstant() || Delta.getConstant() <= 0)
    return std::nullopt;
  if (Start.isConstant()) {
    DimConstraint NonEmpty;
    NonEmpty.K = DimConstraint::AtLeast;
    NonEmpty.Lhs = Limit;
    NonEmpty.Rhs = Start;
    if (decide(NonEmpty, SymbolDomain()) != Verdict::Holds)
      return std::nullopt;
  } else if (Start.hasUnknown() || !nonNegativeEverywhere(Limit - Start)) {
    return std::nullopt;
  }
  DimExpr Count = (Limit - Start).ceilDiv(Delta.getConstant());
  if (N.getNumResults() && N.getResult(0))
    ValueMax[N.getResult(0)] = Start + Delta * (Count - DimExpr::constant(1));
  return PartialDims{Count};
}

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
    for (const Dim &D : V->getType().getDims())
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
    if (Sweep == 0 && KeepForward)
      ForwardDims = ValueDims;
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
  const Dim &D = V.getType().getDims()[I];
  if (D.isKnown())
    return DimExpr::constant(D.getValue());
  if (D.isSymbol()) {
    auto [It, New] = SymbolExprs.try_emplace(D.getSymbol());
    if (New)
      It->second = DimExpr::symbol(D.getSymbol());
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
    if (V.getType().isTensor() && V.getType().hasShape()) {
      Dims D;
      D.reserve(V.getType().getRank());
      for (unsigned I = 0; I < V.getType().getRank(); ++I)
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
    for (Graph *Sub : N.getSubgraphs())
      sweepGraph(*Sub);
  }
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
  const Type &T = V->getType();
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
  ResultDims Out(N.getNumResults());
  ResultData OutData(N.getNumResults());
  if (N.isOnnxDomain()) {
    transfer(N, Out, OutData);
    requireRunnable(N);
    propagateMax(N);
  }
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
// Transfer functions
//===----------------------------------------------------------------------===//

std::optional<std::vector<int64_t>>
DimAnalysis::Impl::axesOf(Node &N, unsigned InputIndex) {
  if (std::optional<std::vector<int64_t>> A = N.getAttrInts("axes"))
    return A;
  return constants(data(N, InputIndex));
}

const llvm::StringMap<DimAnalysis::Impl::TransferRule> &
DimAnalysis::Impl::getTransferTable() {
  // Built on first use (no static constructor); read-only afterwards.
  static const llvm::StringMap<TransferRule> Table = [] {
    llvm::StringMap<TransferRule> T;
    for (llvm::StringRef Op : getShapePreservingOps())
      T[Op] = {&Impl::transferShapePreserving, false};
    for (llvm::StringRef Op : getElementwiseBroadcastingOps())
      T[Op] = {&Impl::transferBroadcast, false};
    for (llvm::StringRef Op : getReductionOps())
      T[Op] = {&Impl::transferReduce, true};
    T["Constant"] = {&Impl::transferConstant, false};
    T["Shape"] = {&Impl::transferShape, true};
    T["Size"] = {&Impl::transferSize, true};
    T["Transpose"] = {&Impl::transferTranspose, true};
    T["Reshape"] = {&Impl::transferReshape, true};
    T["Flatten"] = {&Impl::transferFlatten, true};
    T["Concat"] = {&Impl::transferConcat, false};
    T["Conv"] = {&Impl::transferConv, true};
    T["MaxPool"] = {&Impl::transferPool, true};
    T["AveragePool"] = {&Impl::transferPool, true};
    T["LpPool"] = {&Impl::transferPool, true};
    T["ConvTranspose"] = {&Impl::transferConvTranspose, true};
    T["GlobalAveragePool"] = {&Impl::transferGlobalPool, true};
    T["GlobalMaxPool"] = {&Impl::transferGlobalPool, true};
    T["GlobalLpPool"] = {&Impl::transferGlobalPool, true};
    T["MatMul"] = {&Impl::transferMatMul, true};
    T["Gemm"] = {&Impl::transferGemm, true};
    T["Gather"] = {&Impl::transferGather, true};
    T["Unsqueeze"] = {&Impl::transferUnsqueeze, true};
    T["Squeeze"] = {&Impl::transferSqueeze, true};
    T["Slice"] = {&Impl::transferSlice, true};
    T["ConstantOfShape"] = {&Impl::transferConstantOfShape, false};
    T["Expand"] = {&Impl::transferExpand, true};
    T["Range"] = {&Impl::transferRange, false};
    T["Tile"] = {&Impl::transferTile, true};
    T["Pad"] = {&Impl::transferPad, true};
    T["Split"] = {&Impl::transferSplit, true};
    T["Resize"] = {&Impl::transferResize, true};
    T["Upsample"] = {&Impl::transferResize, true};
    T["ArgMax"] = {&Impl::transferArgMinMax, true};
    T["ArgMin"] = {&Impl::transferArgMinMax, true};
    T["LSTM"] = {&Impl::transferRecurrent, true};
    T["GRU"] = {&Impl::transferRecurrent, true};
    T["RNN"] = {&Impl::transferRecurrent, true};
    T["TopK"] = {&Impl::transferTopK, true};
    return T;
  }();
  return Table;
}

void DimAnalysis::Impl::transfer(Node &N, ResultDims &Out,
                                 ResultData &OutData) {
  if (Out.empty())
    return;
  const llvm::StringMap<TransferRule> &Table = getTransferTable();
  auto It = Table.find(N.getOpType());
  if (It == Table.end())
    return; // not modelled: the recorded types stand
  const Dims *X = dims(N, 0);
  if (It->second.NeedsFirstOperandDims && !X)
    return;
  (this->*It->second.Fn)(N, X, Out, OutData);
}

/// The first result has the first operand's shape (OpFacts.h says which ops).
void DimAnalysis::Impl::transferShapePreserving(Node &N, const Dims *X,
                                                ResultDims &Out,
                                                ResultData &OutData) {
  llvm::StringRef Op = N.getOpType();
  // Only the first output: BatchNormalization and LayerNormalization have
  // statistics outputs of other shapes; Dropout's mask is like its output.
  if (X) {
    Out[0] = full(*X);
    requireParameterShapes(N, *X);
  }
  if (X && Op == "Dropout" && Out.size() > 1)
    Out[1] = full(*X);
  if ((Op == "Identity" || Op == "Cast") && data(N, 0))
    OutData[0] = *data(N, 0);
}

/// numpy broadcasting of every operand; shape arithmetic on the data.
void DimAnalysis::Impl::transferBroadcast(Node &N, const Dims *X,
                                          ResultDims &Out,
                                          ResultData &OutData) {
  std::vector<const Dims *> In;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Dims *D = dims(N, I);
    if (!D)
      return;
    In.push_back(D);
  }
  if (!In.empty()) {
    Out[0] = broadcast(In);
    requireBroadcast(In, N);
  }
  if (std::optional<Dims> D = arithmeticData(N))
    OutData[0] = std::move(*D);
  else if (std::optional<Dims> D = selectionData(N))
    OutData[0] = std::move(*D);
}

void DimAnalysis::Impl::transferConstant(Node &N, const Dims *X,
                                         ResultDims &Out, ResultData &OutData) {
  if (const Attribute *A = N.getAttr("value");
      A && A->Kind == AttrKind::Tensor && !A->Tensors.empty()) {
    Out[0] = full(constantDims(A->Tensors.front().getDimsRef()));
  }
  // Straight into the result's data: kept with the other results', not
  // also as a constant read through an operand.
  if (N.getResult(0))
    if (std::optional<ConstantInts> C =
            getConstantInts(*N.getResult(0), kMaxDataLength))
      OutData[0] = constantDims(C->Values);
}

void DimAnalysis::Impl::transferShape(Node &N, const Dims *X, ResultDims &Out,
                                      ResultData &OutData) {
  int64_t Rank = X->size();
  auto [Start, End] = resolveShapeRange(Rank, N.getAttrInt("start", 0),
                                        N.getAttrInt("end", Rank));
  OutData[0] = Dims(X->begin() + Start, X->begin() + End);
  Out[0] = PartialDims{DimExpr::constant(End - Start)};
}

void DimAnalysis::Impl::transferSize(Node &N, const Dims *X, ResultDims &Out,
                                     ResultData &OutData) {
  OutData[0] = Dims{product(*X)};
  Out[0] = PartialDims{};
}

void DimAnalysis::Impl::transferTranspose(Node &N, const Dims *X,
                                          ResultDims &Out,
                                          ResultData &OutData) {
  std::vector<int64_t> Perm;
  if (std::optional<std::vector<int64_t>> P = N.getAttrInts("perm"))
    Perm = *P;
  else
    for (int64_t I = X->size() - 1; I >= 0; --I)
      Perm.push_back(I);
  if (Perm.size() != X->size())
    return;
  PartialDims R;
  for (int64_t P : Perm) {
    std::optional<size_t> A = normAxis(P, X->size());
    if (!A)
      return;
    R.push_back((*X)[*A]);
  }
  Out[0] = R;
}

void DimAnalysis::Impl::transferReshape(Node &N, const Dims *X, ResultDims &Out,
                                        ResultData &OutData) {
  if (const Dims *Target = data(N, 1))
    Out[0] = reshape(N, *X, *Target);
  if (const Dims *D = data(N, 0))
    OutData[0] = *D;
}

void DimAnalysis::Impl::transferFlatten(Node &N, const Dims *X, ResultDims &Out,
                                        ResultData &OutData) {
  // The axis may be the rank itself: [-r, r].
  int64_t Rank = X->size(), A = N.getAttrInt("axis", 1);
  std::optional<size_t> Axis;
  if (A < 0)
    A += Rank;
  if (A >= 0 && A <= Rank)
    Axis = A;
  if (!Axis)
    return;
  llvm::ArrayRef<DimExpr> All(*X);
  Out[0] = PartialDims{product(All.take_front(*Axis)),
                       product(All.drop_front(*Axis))};
}

/// The non-axis dims of the operands are equal; the axis dims add up.
void DimAnalysis::Impl::transferConcat(Node &N, const Dims *X, ResultDims &Out,
                                       ResultData &OutData) {
  std::vector<const Dims *> In;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Dims *D = dims(N, I);
    if (!D || (!In.empty() && D->size() != In[0]->size()))
      return;
    In.push_back(D);
  }
  if (In.empty())
    return;
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 0), In[0]->size());
  if (!Axis)
    return;
  PartialDims R = full(*In[0]);
  std::vector<DimExpr> Parts;
  Parts.reserve(In.size());
  for (const Dims *D : In) {
    Parts.push_back((*D)[*Axis]);
    for (size_t K = 0; K < D->size(); ++K)
      if (K != *Axis)
        unite((*In[0])[K], (*D)[K], &N);
  }
  R[*Axis] = DimExpr::sum(Parts);
  Out[0] = R;
  Dims Joined;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Dims *D = data(N, I);
    if (!D)
      return;
    Joined.insert(Joined.end(), D->begin(), D->end());
  }
  OutData[0] = std::move(Joined);
}

void DimAnalysis::Impl::requireCoversKernel(
    Node &N, const std::optional<PartialDims> &Y) {
  if (!Y)
    return;
  for (size_t K = 2; K < Y->size(); ++K)
    if ((*Y)[K])
      require(DimConstraint::AtLeast, *(*Y)[K], DimExpr::constant(1), N,
              "the input must cover the kernel (output size >= 1)");
}

void DimAnalysis::Impl::transferConv(Node &N, const Dims *X, ResultDims &Out,
                                     ResultData &OutData) {
  Out[0] = convLike(N, *X, /*IsPool=*/false);
  requireCoversKernel(N, Out[0]);
  if (X->size() < 2)
    return;
  if (const Dims *W = dims(N, 1); W && W->size() >= 2) {
    require(DimConstraint::Equal, (*X)[1],
            (*W)[1] * DimExpr::constant(N.getAttrInt("group", 1)), N,
            "input channels = weight channels * group");
    if (const Dims *B = dims(N, 2); B && B->size() == 1)
      require(DimConstraint::Equal, (*B)[0], (*W)[0], N,
              "one bias per output channel");
  }
}

void DimAnalysis::Impl::transferPool(Node &N, const Dims *X, ResultDims &Out,
                                     ResultData &OutData) {
  Out[0] = convLike(N, *X, /*IsPool=*/true);
  requireCoversKernel(N, Out[0]);
  // MaxPool's indices have the pooled shape.
  if (N.getOpType() == "MaxPool" && Out.size() > 1)
    Out[1] = Out[0];
}

void DimAnalysis::Impl::transferConvTranspose(Node &N, const Dims *X,
                                              ResultDims &Out,
                                              ResultData &OutData) {
  Out[0] = convTranspose(N, *X);
  if (Out[0])
    for (size_t K = 2; K < Out[0]->size(); ++K)
      if ((*Out[0])[K])
        require(DimConstraint::AtLeast, *(*Out[0])[K], DimExpr::constant(1), N,
                "output size >= 1");
}

void DimAnalysis::Impl::transferGlobalPool(Node &N, const Dims *X,
                                           ResultDims &Out,
                                           ResultData &OutData) {
  if (X->size() < 2)
    return;
  PartialDims R{(*X)[0], (*X)[1]};
  R.resize(X->size(), DimExpr::constant(1));
  Out[0] = R;
}

void DimAnalysis::Impl::transferMatMul(Node &N, const Dims *X, ResultDims &Out,
                                       ResultData &OutData) {
  if (!dims(N, 1))
    return;
  Out[0] = matMul(N, *X, *dims(N, 1));
}

void DimAnalysis::Impl::transferGemm(Node &N, const Dims *X, ResultDims &Out,
                                     ResultData &OutData) {
  if (X->size() != 2 || !dims(N, 1) || dims(N, 1)->size() != 2)
    return;
  const Dims &B = *dims(N, 1);
  bool TA = N.getAttrInt("transA", 0), TB = N.getAttrInt("transB", 0);
  unite((*X)[TA ? 0 : 1], B[TB ? 1 : 0], &N);
  Out[0] = PartialDims{(*X)[TA ? 1 : 0], B[TB ? 0 : 1]};
  // C broadcasts to [M, N] (one way: C's dims are the output's or 1).
  if (const Dims *C = dims(N, 2)) {
    Dims Y{(*X)[TA ? 1 : 0], B[TB ? 0 : 1]};
    requireBroadcast({&Y, C}, N);
  }
}

void DimAnalysis::Impl::transferGather(Node &N, const Dims *X, ResultDims &Out,
                                       ResultData &OutData) {
  const Dims *I = dims(N, 1);
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 0), X->size());
  if (!Axis)
    return;
  requireIndices(N, (*X)[*Axis]);
  if (!I)
    return;
  PartialDims R(X->begin(), X->begin() + *Axis);
  R.insert(R.end(), I->begin(), I->end());
  R.insert(R.end(), X->begin() + *Axis + 1, X->end());
  Out[0] = R;
  const Dims *D = data(N, 0);
  std::optional<std::vector<int64_t>> Idx = constants(data(N, 1));
  if (!D || !Idx || *Axis != 0)
    return;
  Dims Picked;
  for (int64_t K : *Idx) {
    std::optional<size_t> P = normAxis(K, D->size());
    if (!P)
      return;
    Picked.push_back((*D)[*P]);
  }
  OutData[0] = std::move(Picked);
}

void DimAnalysis::Impl::transferUnsqueeze(Node &N, const Dims *X,
                                          ResultDims &Out,
                                          ResultData &OutData) {
  std::optional<std::vector<int64_t>> Axes = axesOf(N, 1);
  if (!Axes)
    return;
  size_t Rank = X->size() + Axes->size();
  std::vector<bool> IsNew(Rank, false);
  for (int64_t A : *Axes) {
    std::optional<size_t> P = normAxis(A, Rank);
    if (!P)
      return;
    IsNew[*P] = true;
  }
  PartialDims R;
  size_t Next = 0;
  for (size_t K = 0; K < Rank; ++K)
    R.push_back(IsNew[K] ? DimExpr::constant(1) : (*X)[Next++]);
  Out[0] = R;
  if (const Dims *D = data(N, 0))
    OutData[0] = *D;
}

void DimAnalysis::Impl::transferSqueeze(Node &N, const Dims *X, ResultDims &Out,
                                        ResultData &OutData) {
  // The elements stay as they are, whatever the axes.
  if (const Dims *D = data(N, 0))
    OutData[0] = *D;
  std::optional<std::vector<int64_t>> Axes = axesOf(N, 1);
  if (!Axes && (N.getNumOperands() < 2 || !N.getOperand(1)) &&
      !N.hasAttr("axes")) {
    // No axes: every dim that is 1 goes; a symbolic dim might be 1.
    PartialDims R;
    for (const DimExpr &E : *X) {
      if (!E.isConstant())
        return;
      if (E.getConstant() != 1)
        R.push_back(E);
    }
    Out[0] = R;
    return;
  }
  if (!Axes)
    return;
  std::vector<bool> Drop(X->size(), false);
  for (int64_t A : *Axes) {
    std::optional<size_t> P = normAxis(A, X->size());
    if (!P)
      return;
    Drop[*P] = true;
    require(DimConstraint::Equal, (*X)[*P], DimExpr::constant(1), N,
            "a squeezed dim must be 1");
  }
  PartialDims R;
  for (size_t K = 0; K < X->size(); ++K)
    if (!Drop[K])
      R.push_back((*X)[K]);
  Out[0] = R;
}

void DimAnalysis::Impl::transferSlice(Node &N, const Dims *X, ResultDims &Out,
                                      ResultData &OutData) {
  Out[0] = slice(N, *X);
  if (const Dims *D = data(N, 0))
    OutData[0] = sliceData(N, *D);
}

void DimAnalysis::Impl::transferConstantOfShape(Node &N, const Dims *X,
                                                ResultDims &Out,
                                                ResultData &OutData) {
  const Dims *D = data(N, 0);
  if (!D)
    return;
  Out[0] = full(*D);
  // An integer fill of a short 1-D (or scalar) result is shape data:
  // torch's Expand target check multiplies `ones(len(s))` by -1.
  std::optional<std::vector<int64_t>> Len = constants(D);
  if (!Len || Len->size() > 1)
    return;
  int64_t Count = Len->empty() ? 1 : Len->front();
  const Attribute *A = N.getAttr("value");
  if (Count < 0 || Count > static_cast<int64_t>(kMaxDataLength) || !A ||
      A->Kind != AttrKind::Tensor || A->Tensors.empty())
    return;
  const Tensor &Fill = A->Tensors.front();
  int32_t Elem = Fill.getElemType();
  if (Elem != static_cast<int32_t>(ElementType::Int64) &&
      Elem != static_cast<int32_t>(ElementType::Int32))
    return;
  std::optional<std::vector<int64_t>> V = Fill.toInt64s();
  if (!V || V->size() != 1)
    return;
  OutData[0] = Dims(Count, DimExpr::constant(V->front()));
}

void DimAnalysis::Impl::transferExpand(Node &N, const Dims *X, ResultDims &Out,
                                       ResultData &OutData) {
  if (const Dims *D = data(N, 1)) {
    Out[0] = broadcast({X, D});
    requireBroadcast({X, D}, N);
  }
}

void DimAnalysis::Impl::transferRange(Node &N, const Dims *X, ResultDims &Out,
                                      ResultData &OutData) {
  Out[0] = range(N);
}

void DimAnalysis::Impl::transferTile(Node &N, const Dims *X, ResultDims &Out,
                                     ResultData &OutData) {
  const Dims *R = data(N, 1);
  if (!R || R->size() != X->size())
    return;
  PartialDims Res;
  for (size_t K = 0; K < X->size(); ++K)
    Res.push_back((*X)[K] * (*R)[K]);
  Out[0] = Res;
}

void DimAnalysis::Impl::transferPad(Node &N, const Dims *X, ResultDims &Out,
                                    ResultData &OutData) {
  std::optional<std::vector<int64_t>> Pads = N.getAttrInts("pads");
  const Dims *PadData = Pads ? nullptr : data(N, 1);
  size_t Rank = X->size();
  // Pad-18 pads only the dims listed in its axes input, in that order.
  std::vector<size_t> Axes;
  if (N.getNumOperands() > 3 && N.getOperand(3)) {
    std::optional<std::vector<int64_t>> A = constants(data(N, 3));
    if (!A)
      return;
    for (int64_t V : *A) {
      std::optional<size_t> P = normAxis(V, Rank);
      if (!P)
        return;
      Axes.push_back(*P);
    }
  } else {
    for (size_t K = 0; K < Rank; ++K)
      Axes.push_back(K);
  }
  size_t NumAxes = Axes.size();
  if ((Pads && Pads->size() != 2 * NumAxes) ||
      (!Pads && (!PadData || PadData->size() != 2 * NumAxes)))
    return;
  PartialDims R = full(*X);
  for (size_t I = 0; I < NumAxes; ++I) {
    DimExpr Begin = Pads ? DimExpr::constant((*Pads)[I]) : (*PadData)[I];
    DimExpr End = Pads ? DimExpr::constant((*Pads)[I + NumAxes])
                       : (*PadData)[I + NumAxes];
    R[Axes[I]] = (*X)[Axes[I]] + Begin + End;
    require(DimConstraint::AtLeast, *R[Axes[I]], DimExpr::constant(0), N,
            "negative pads must leave a dim >= 0");
  }
  Out[0] = R;
}

void DimAnalysis::Impl::transferSplit(Node &N, const Dims *X, ResultDims &Out,
                                      ResultData &OutData) {
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 0), X->size());
  if (!Axis)
    return;
  std::optional<std::vector<int64_t>> Sizes = N.getAttrInts("split");
  const Dims *SizeData = Sizes ? nullptr : data(N, 1);
  if (!Sizes && !SizeData && N.getNumOperands() > 1 && N.getOperand(1))
    return; // sizes computed at run time
  // Split-18 num_outputs: chunks of ceil(dim / n), the last one smaller;
  // the dim need not divide evenly.
  if (!Sizes && !SizeData && N.hasAttr("num_outputs")) {
    const DimExpr &D = (*X)[*Axis];
    int64_t Num = static_cast<int64_t>(Out.size());
    for (unsigned I = 0; I < Out.size(); ++I) {
      PartialDims R = full(*X);
      if (D.isConstant() && Num > 0) {
        int64_t Chunk = (D.getConstant() + Num - 1) / Num;
        R[*Axis] = DimExpr::constant(
            I + 1 < Out.size() ? Chunk : D.getConstant() - Chunk * (Num - 1));
      } else {
        R[*Axis] = std::nullopt;
      }
      Out[I] = R;
    }
    return;
  }
  // The sizes must add up to the dim; equal parts must divide it.
  if (Sizes || SizeData) {
    std::vector<DimExpr> Parts;
    size_t Count = Sizes ? Sizes->size() : SizeData->size();
    for (size_t I = 0; I < Count; ++I)
      Parts.push_back(Sizes ? DimExpr::constant((*Sizes)[I]) : (*SizeData)[I]);
    require(DimConstraint::Equal, DimExpr::sum(Parts), (*X)[*Axis], N,
            "the split sizes must add up to the dim");
  } else if (Out.size() > 1) {
    require(DimConstraint::Divisible, (*X)[*Axis],
            DimExpr::constant(static_cast<int64_t>(Out.size())), N,
            "equal parts must divide the dim");
  }
  for (unsigned I = 0; I < Out.size(); ++I) {
    PartialDims R = full(*X);
    if (Sizes && I < Sizes->size())
      R[*Axis] = DimExpr::constant((*Sizes)[I]);
    else if (SizeData && I < SizeData->size())
      R[*Axis] = (*SizeData)[I];
    else if (!Sizes && !SizeData)
      R[*Axis] = (*X)[*Axis].divExact(
          DimExpr::constant(static_cast<int64_t>(Out.size())));
    else
      R[*Axis] = std::nullopt;
    Out[I] = R;
  }
}

void DimAnalysis::Impl::transferResize(Node &N, const Dims *X, ResultDims &Out,
                                       ResultData &OutData) {
  Out[0] = resize(N, *X);
}

void DimAnalysis::Impl::transferReduce(Node &N, const Dims *X, ResultDims &Out,
                                       ResultData &OutData) {
  Out[0] = reduce(N, *X);
}

void DimAnalysis::Impl::transferArgMinMax(Node &N, const Dims *X,
                                          ResultDims &Out,
                                          ResultData &OutData) {
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 0), X->size());
  if (!Axis)
    return;
  PartialDims R = full(*X);
  if (N.getAttrInt("keepdims", 1))
    R[*Axis] = DimExpr::constant(1);
  else
    R.erase(R.begin() + *Axis);
  Out[0] = R;
}

void DimAnalysis::Impl::transferRecurrent(Node &N, const Dims *X,
                                          ResultDims &Out,
                                          ResultData &OutData) {
  if (X->size() != 3)
    return;
  int64_t Hidden = N.getAttrInt("hidden_size", 0);
  if (Hidden <= 0)
    return;
  DimExpr H = DimExpr::constant(Hidden);
  DimExpr Dirs = DimExpr::constant(
      N.getAttrString("direction", "forward") == "bidirectional" ? 2 : 1);
  bool BatchFirst = N.getAttrInt("layout", 0);
  const DimExpr &Seq = (*X)[BatchFirst ? 1 : 0];
  const DimExpr &Batch = (*X)[BatchFirst ? 0 : 1];
  // W is [dirs, gates*hidden, input_size]; sequence_lens is [batch];
  // initial states are [dirs, batch, hidden] (batch first with layout 1).
  if (const Dims *W = dims(N, 1); W && W->size() == 3)
    require(DimConstraint::Equal, (*W)[2], (*X)[2], N,
            "the weights' input size must be the input's feature dim");
  if (const Dims *L = dims(N, 4); L && L->size() == 1)
    require(DimConstraint::Equal, (*L)[0], Batch, N,
            "sequence_lens has one entry per batch row");
  for (unsigned I = 5; I < N.getNumOperands(); ++I)
    if (const Dims *S = dims(N, I); S && S->size() == 3)
      require(DimConstraint::Equal, (*S)[BatchFirst ? 0 : 1], Batch, N,
              "initial states have the input's batch");
  Out[0] = BatchFirst ? PartialDims{Batch, Seq, Dirs, H}
                      : PartialDims{Seq, Dirs, Batch, H};
  for (unsigned I = 1; I < Out.size(); ++I)
    Out[I] =
        BatchFirst ? PartialDims{Batch, Dirs, H} : PartialDims{Dirs, Batch, H};
}

void DimAnalysis::Impl::transferTopK(Node &N, const Dims *X, ResultDims &Out,
                                     ResultData &OutData) {
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", -1), X->size());
  const Dims *K = data(N, 1);
  if (!Axis || !K || K->size() != 1)
    return;
  PartialDims R = full(*X);
  R[*Axis] = (*K)[0];
  require(DimConstraint::AtMost, (*K)[0], (*X)[*Axis], N,
          "k must not exceed the dim");
  for (auto &O : Out)
    O = R;
}

std::optional<Dims> DimAnalysis::Impl::arithmeticData(Node &N) {
  llvm::StringRef Op = N.getOpType();
  if (N.getNumOperands() != 2 ||
      (Op != "Add" && Op != "Sub" && Op != "Mul" && Op != "Div"))
    return std::nullopt;
  const Dims *A = data(N, 0), *B = data(N, 1);
  if (!A || !B || A->empty() || B->empty())
    return std::nullopt;
  if (A->size() != B->size() && A->size() != 1 && B->size() != 1)
    return std::nullopt;
  // Integer division truncates; a float Div of dims cast to float (torch's
  // `x.size(1) / 2` before a Range) does not: 5 / 2 is 2.5, and a Range to
  // it has 3 elements, not floor(5/2) = 2.
  bool IntegerDiv = false;
  if (Op == "Div" && N.getOperand(0)) {
    auto E = static_cast<ElementType>(N.getOperand(0)->getType().getElemType());
    IntegerDiv = E == ElementType::Int64 || E == ElementType::Int32 ||
                 E == ElementType::Int16 || E == ElementType::Int8 ||
                 E == ElementType::UInt64 || E == ElementType::UInt32 ||
                 E == ElementType::UInt16 || E == ElementType::UInt8;
  }
  size_t Len = std::max(A->size(), B->size());
  Dims R;
  for (size_t I = 0; I < Len; ++I) {
    const DimExpr &L = (*A)[A->size() == 1 ? 0 : I];
    const DimExpr &Rt = (*B)[B->size() == 1 ? 0 : I];
    if (Op == "Add")
      R.push_back(L + Rt);
    else if (Op == "Sub")
      R.push_back(L - Rt);
    else if (Op == "Mul")
      R.push_back(L * Rt);
    else if (IntegerDiv && Rt.isConstant() && Rt.getConstant() > 0 &&
             (!L.isConstant() || L.getConstant() >= 0))
      // Truncation is floor here: shape values are not negative.
      R.push_back(L.floorDiv(Rt.getConstant()));
    else
      return std::nullopt;
  }
  return R;
}

/// Equal and Where on shape data, element by element, when every element
/// is decided: with the ones and the -1 above they carry torch's Expand
/// target check `Where(Equal(s, -1 * ones), ones, s)` as `s`.
std::optional<Dims> DimAnalysis::Impl::selectionData(Node &N) {
  llvm::StringRef Op = N.getOpType();
  if (Op == "Equal" && N.getNumOperands() == 2) {
    const Dims *A = data(N, 0), *B = data(N, 1);
    if (!A || !B)
      return std::nullopt;
    size_t Len = broadcastLength({A->size(), B->size()});
    if (!Len)
      return std::nullopt;
    Dims R;
    for (size_t I = 0; I < Len; ++I) {
      std::optional<int64_t> E =
          equalElements(elementAt(*A, I), elementAt(*B, I));
      if (!E)
        return std::nullopt;
      R.push_back(DimExpr::constant(*E));
    }
    return R;
  }
  if (Op == "Where" && N.getNumOperands() == 3) {
    const Dims *C = data(N, 0), *X = data(N, 1), *Y = data(N, 2);
    if (!C || !X || !Y)
      return std::nullopt;
    size_t Len = broadcastLength({C->size(), X->size(), Y->size()});
    if (!Len)
      return std::nullopt;
    Dims R;
    for (size_t I = 0; I < Len; ++I) {
      const DimExpr &Cond = elementAt(*C, I);
      const DimExpr &XI = elementAt(*X, I), &YI = elementAt(*Y, I);
      if (Cond.isConstant())
        R.push_back(Cond.getConstant() != 0 ? XI : YI);
      else if (XI == YI)
        R.push_back(XI); // either way the same element
      else
        return std::nullopt;
    }
    return R;
  }
  return std::nullopt;
}

std::optional<PartialDims> DimAnalysis::Impl::convLike(Node &N, const Dims &X,
                                                       bool IsPool) {
  if (X.size() < 3)
    return std::nullopt;
  size_t Spatial = X.size() - 2;
  std::vector<int64_t> Kernel;
  std::optional<DimExpr> Channels;
  if (std::optional<std::vector<int64_t>> K = N.getAttrInts("kernel_shape"))
    Kernel = *K;
  if (IsPool) {
    Channels = X[1];
    if (N.getAttrInt("ceil_mode", 0))
      return std::nullopt;
  } else {
    const Dims *W = dims(N, 1);
    if (!W || W->size() != X.size())
      return std::nullopt;
    Channels = (*W)[0];
    if (Kernel.empty()) {
      std::optional<std::vector<int64_t>> K =
          constants(W->size() > 2 ? &*W : nullptr);
      if (!K)
        return std::nullopt;
      Kernel.assign(K->begin() + 2, K->end());
    }
  }
  if (Kernel.size() != Spatial)
    return std::nullopt;
  std::vector<int64_t> Strides =
      N.getAttrInts("strides").value_or(std::vector<int64_t>(Spatial, 1));
  std::vector<int64_t> Dilations =
      N.getAttrInts("dilations").value_or(std::vector<int64_t>(Spatial, 1));
  std::vector<int64_t> Pads =
      N.getAttrInts("pads").value_or(std::vector<int64_t>(2 * Spatial, 0));
  llvm::StringRef AutoPad = N.getAttrString("auto_pad", "NOTSET");
  if (Strides.size() != Spatial || Dilations.size() != Spatial ||
      Pads.size() != 2 * Spatial)
    return std::nullopt;
  PartialDims R{X[0], Channels};
  for (size_t I = 0; I < Spatial; ++I) {
    const DimExpr &In = X[2 + I];
    int64_t S = Strides[I], Extent = (Kernel[I] - 1) * Dilations[I] + 1;
    if (S <= 0)
      return std::nullopt;
    if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER")
      R.push_back(In.ceilDiv(S));
    else if (AutoPad == "VALID")
      R.push_back((In - DimExpr::constant(Extent)).floorDiv(S) +
                  DimExpr::constant(1));
    else
      R.push_back((In + DimExpr::constant(Pads[I] + Pads[I + Spatial] - Extent))
                      .floorDiv(S) +
                  DimExpr::constant(1));
  }
  return R;
}

std::optional<PartialDims> DimAnalysis::Impl::convTranspose(Node &N,
                                                            const Dims &X) {
  const Dims *W = dims(N, 1);
  if (X.size() < 3 || !W || W->size() != X.size())
    return std::nullopt;
  size_t Spatial = X.size() - 2;
  if (N.hasAttr("output_shape"))
    return std::nullopt; // inference already knows it
  std::vector<int64_t> Kernel;
  if (std::optional<std::vector<int64_t>> K = N.getAttrInts("kernel_shape"))
    Kernel = *K;
  else if (std::optional<std::vector<int64_t>> K = constants(W))
    Kernel.assign(K->begin() + 2, K->end());
  std::vector<int64_t> Strides =
      N.getAttrInts("strides").value_or(std::vector<int64_t>(Spatial, 1));
  std::vector<int64_t> Dilations =
      N.getAttrInts("dilations").value_or(std::vector<int64_t>(Spatial, 1));
  std::vector<int64_t> Pads =
      N.getAttrInts("pads").value_or(std::vector<int64_t>(2 * Spatial, 0));
  std::vector<int64_t> OutPad = N.getAttrInts("output_padding")
                                    .value_or(std::vector<int64_t>(Spatial, 0));
  llvm::StringRef AutoPad = N.getAttrString("auto_pad", "NOTSET");
  if (Kernel.size() != Spatial || Strides.size() != Spatial ||
      Dilations.size() != Spatial || Pads.size() != 2 * Spatial ||
      OutPad.size() != Spatial)
    return std::nullopt;
  PartialDims R{X[0], (*W)[1] * DimExpr::constant(N.getAttrInt("group", 1))};
  for (size_t I = 0; I < Spatial; ++I) {
    const DimExpr &In = X[2 + I];
    DimExpr S = DimExpr::constant(Strides[I]);
    if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER") {
      R.push_back(In * S);
      continue;
    }
    int64_t Extent = (Kernel[I] - 1) * Dilations[I] + 1;
    R.push_back(
        S * (In - DimExpr::constant(1)) +
        DimExpr::constant(OutPad[I] + Extent - Pads[I] - Pads[I + Spatial]));
  }
  return R;
}

std::optional<PartialDims> DimAnalysis::Impl::reshape(Node &N, const Dims &X,
                                                      const Dims &Target) {
  bool AllowZero = N.getAttrInt("allowzero", 0);
  PartialDims R;
  std::optional<size_t> Infer;
  for (size_t I = 0; I < Target.size(); ++I) {
    const DimExpr &T = Target[I];
    if (T.isConstant() && T.getConstant() == -1) {
      if (Infer)
        return std::nullopt;
      Infer = I;
      R.push_back(std::nullopt);
    } else if (T.isConstant() && T.getConstant() == 0 && !AllowZero) {
      if (I >= X.size())
        return std::nullopt;
      R.push_back(X[I]);
    } else {
      R.push_back(T);
    }
  }
  if (Infer) {
    DimExpr Others = DimExpr::constant(1);
    for (size_t I = 0; I < R.size(); ++I)
      if (I != *Infer)
        Others = Others * *R[I];
    R[*Infer] = product(X).divExact(Others);
    if (Others.isConstant() && Others.getConstant() > 1)
      require(DimConstraint::Divisible, product(X), Others, N,
              "the element count must divide by the given dims");
  } else {
    DimExpr Count = DimExpr::constant(1);
    for (const std::optional<DimExpr> &D : R)
      Count = Count * *D;
    require(DimConstraint::Equal, product(X), Count, N,
            "the element count must not change");
  }
  return R;
}

std::optional<PartialDims> DimAnalysis::Impl::matMul(Node &N, const Dims &A,
                                                     const Dims &B) {
  if (A.empty() || B.empty())
    return std::nullopt;
  if (A.size() == 1 && B.size() == 1) {
    unite(A[0], B[0], &N);
    return PartialDims{};
  }
  if (A.size() == 1) {
    unite(A[0], B[B.size() - 2], &N);
    PartialDims R(B.begin(), B.end() - 2);
    R.push_back(B.back());
    return R;
  }
  if (B.size() == 1) {
    unite(A.back(), B[0], &N);
    return PartialDims(A.begin(), A.end() - 1);
  }
  unite(A.back(), B[B.size() - 2], &N);
  Dims BatchA(A.begin(), A.end() - 2), BatchB(B.begin(), B.end() - 2);
  PartialDims R = broadcast({&BatchA, &BatchB});
  requireBroadcast({&BatchA, &BatchB}, N);
  R.push_back(A[A.size() - 2]);
  R.push_back(B.back());
  return R;
}

std::optional<PartialDims> DimAnalysis::Impl::resize(Node &N, const Dims &X) {
  // Resize-11+: (X, roi, scales, sizes); Resize-10 and Upsample: (X, scales).
  bool HasRoi = N.is("Resize") && N.getNumOperands() >= 3;
  unsigned ScalesIndex = HasRoi ? 2 : 1;
  // Resize-18 with axes or a keep_aspect_ratio_policy other than stretch
  // does not take sizes as the output shape.
  if (N.hasAttr("axes") ||
      N.getAttrString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return std::nullopt;
  if (HasRoi && N.getNumOperands() >= 4)
    if (const Dims *Sizes = data(N, 3); Sizes && Sizes->size() == X.size())
      return full(*Sizes);
  std::optional<std::vector<double>> Scales = floatData(N, ScalesIndex);
  if (!Scales) {
    if (const Attribute *A = N.getAttr("scales");
        A && A->Kind == AttrKind::Floats)
      Scales = std::vector<double>(A->Floats.begin(), A->Floats.end());
  }
  if (!Scales || Scales->size() != X.size())
    return std::nullopt;
  PartialDims R;
  for (size_t I = 0; I < X.size(); ++I) {
    double S = (*Scales)[I];
    if (S >= 1 && std::floor(S) == S)
      R.push_back(X[I] * DimExpr::constant(static_cast<int64_t>(S)));
    else if (S > 0 && S < 1 && std::floor(1 / S) == 1 / S)
      R.push_back(X[I].floorDiv(static_cast<int64_t>(1 / S)));
    else
      R.push_back(std::nullopt);
  }
  return R;
}

std::optional<PartialDims> DimAnalysis::Impl::slice(Node &N, const Dims &X) {
  // Only dims that are known or taken whole: a symbolic dim cut at a
  // constant could be shorter than the cut.
  std::optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
  // Ends computed from shapes (`table[:, :seq_len]`).
  const Dims *EndExprs = nullptr;
  if (N.hasAttr("starts")) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
    Axes = N.getAttrInts("axes");
  } else {
    Starts = constants(data(N, 1));
    Ends = constants(data(N, 2));
    EndExprs = data(N, 2);
    if (!Ends && EndExprs && Starts && EndExprs->size() == Starts->size()) {
      // Placeholders: positions with a symbolic end are handled below.
      Ends.emplace();
      for (const DimExpr &E : *EndExprs)
        Ends->push_back(E.isConstant() ? E.getConstant() : 0);
    } else {
      EndExprs = nullptr;
    }
    if (N.getNumOperands() > 3 && N.getOperand(3))
      Axes = constants(data(N, 3));
    if (N.getNumOperands() > 4 && N.getOperand(4))
      Steps = constants(data(N, 4));
    if ((N.getNumOperands() > 3 && N.getOperand(3) && !Axes) ||
        (N.getNumOperands() > 4 && N.getOperand(4) && !Steps))
      return std::nullopt;
  }
  if (!Starts || !Ends || Starts->size() != Ends->size())
    return std::nullopt;
  PartialDims R = full(X);
  for (size_t I = 0; I < Starts->size(); ++I) {
    int64_t AxisValue =
        Axes ? (I < Axes->size() ? (*Axes)[I] : -1) : static_cast<int64_t>(I);
    std::optional<size_t> Axis = normAxis(AxisValue, X.size());
    int64_t Step = Steps && I < Steps->size() ? (*Steps)[I] : 1;
    if (!Axis || Step == 0)
      return std::nullopt;
    int64_t S = (*Starts)[I], E = (*Ends)[I];
    const DimExpr &D = X[*Axis];
    if (EndExprs && !(*EndExprs)[I].isConstant()) {
      const DimExpr &End = (*EndExprs)[I];
      // From the start, step 1, to a computed end: that many elements if
      // the end lies inside the dim (Slice would clamp it otherwise, and
      // a negative end would count from the back).
      if (S != 0 || Step != 1 || End.hasUnknown()) {
        R[*Axis] = std::nullopt;
        continue;
      }
      R[*Axis] = End;
      if (End != D) {
        require(DimConstraint::AtMost, End, D, N,
                "the slice end must lie inside the dim (it is not clamped)");
        require(DimConstraint::AtLeast, End, DimExpr::constant(0), N,
                "the slice end must not be negative");
      }
      continue;
    }
    if (!D.isConstant()) {
      if (Step == 1 && S == 0 && isSliceEndPastAnyDim(E))
        continue;
      R[*Axis] = std::nullopt;
      continue;
    }
    std::optional<SliceAxis> Taken =
        resolveSliceAxis(D.getConstant(), S, E, Step);
    if (!Taken)
      return std::nullopt;
    R[*Axis] = DimExpr::constant(Taken->Count);
  }
  return R;
}

std::optional<Dims> DimAnalysis::Impl::sliceData(Node &N, const Dims &D) {
  std::optional<std::vector<int64_t>> Starts, Ends, Steps;
  if (N.hasAttr("starts")) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
  } else {
    Starts = constants(data(N, 1));
    Ends = constants(data(N, 2));
    // Steps computed at run time: no step to take the elements by.
    if (N.getNumOperands() > 4 && N.getOperand(4) &&
        !(Steps = constants(data(N, 4))))
      return std::nullopt;
  }
  if (!Starts || !Ends || Starts->size() != 1 || Ends->size() != 1)
    return std::nullopt;
  int64_t Step = Steps && !Steps->empty() ? (*Steps)[0] : 1;
  std::optional<SliceAxis> Taken = resolveSliceAxis(
      static_cast<int64_t>(D.size()), (*Starts)[0], (*Ends)[0], Step);
  if (!Taken)
    return std::nullopt;
  Dims R;
  for (int64_t I = 0; I < Taken->Count; ++I)
    R.push_back(D[Taken->at(I)]);
  return R;
}

std::optional<PartialDims> DimAnalysis::Impl::reduce(Node &N, const Dims &X) {
  std::optional<std::vector<int64_t>> Axes = N.getAttrInts("axes");
  if (!Axes && N.getNumOperands() > 1 && N.getOperand(1))
    Axes = constants(data(N, 1));
  if (!Axes && N.getNumOperands() > 1 && N.getOperand(1))
    return std::nullopt;
  bool Keep = N.getAttrInt("keepdims", 1);
  std::vector<bool> Reduced(X.size(), !Axes || Axes->empty());
  if (Axes && Axes->empty() && N.getAttrInt("noop_with_empty_axes", 0))
    return full(X);
  if (Axes)
    for (int64_t A : *Axes) {
      std::optional<size_t> P = normAxis(A, X.size());
      if (!P)
        return std::nullopt;
      Reduced[*P] = true;
    }
  PartialDims R;
  for (size_t K = 0; K < X.size(); ++K) {
    if (!Reduced[K])
      R.push_back(X[K]);
    else if (Keep)
      R.push_back(DimExpr::constant(1));
  }
  return R;
}

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

DimAnalysis::DimAnalysis(Model &M) : P(std::make_unique<Impl>(M)) {}
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

bool onnxopt::dimRulesCover(const Node &N) {
  if (!N.isOnnxDomain())
    return false;
  llvm::StringRef Op = N.getOpType();
  // ReverseSequence keeps its input's shape, but its sequence_lens must
  // have the batch's length, which nothing here requires.
  if (Op == "ReverseSequence")
    return false;
  // The ops with a transfer function require every condition on dims they
  // have (shape-preserving ones their extra operands' too); the ones below
  // have no condition beyond what requireRunnable or their recorded types
  // say (a condition of one element, a data-dependent blocker, a shape
  // that is the input's or an operand's contents).
  static const llvm::StringSet<> WithoutConditions = {"If",
                                                      "Loop",
                                                      "NonZero",
                                                      "OneHot",
                                                      "EyeLike",
                                                      "RandomNormalLike",
                                                      "RandomUniformLike",
                                                      "Bernoulli",
                                                      "Multinomial"};
  return DimAnalysis::Impl::hasTransferRule(Op) || WithoutConditions.count(Op);
}

std::vector<DimConstraint> DimAnalysis::getConstraints() const {
  std::vector<DimConstraint> Result;
  std::set<std::string> Seen;
  auto Add = [&](DimConstraint C) {
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
  std::map<unsigned, const Node *> FirstNode;
  for (const Impl::Edge &E : P->Edges)
    if (E.Because)
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
