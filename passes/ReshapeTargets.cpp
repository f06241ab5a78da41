//===- ReshapeTargets.cpp - make-dynamic's repairs of baked Reshape targets
//===//
//
// Before:  R = Reshape(X, S)   X: float[N,T,16] (old 1x8x16), S = {8, 16}
// After:   R = Reshape(X, S')  S' = {-1, 16}
//
// A Reshape target baked at the old sizes: literals that are old input
// sizes become copies (0), the -1, dims read from the data's Shape, or, as
// view() reads a target, products and splits of consecutive input dims.
// Every rewrite is accepted only when the dim algebra shows the element
// count is kept at every size.
//
//===----------------------------------------------------------------------===//
#include "MakeDynamic.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/IR/ShapeVectorBuilder.h"
#include "onnxopt/Ops/OpDef.h"
#include <numeric>

using namespace onnxopt;
using namespace onnxopt::makedynamic;
using JoinedEntry = DynamicRewrite::JoinedEntry;

/// True if a 0 in \p N's target is a zero dim rather than a copy. With
/// `allowzero = 1` (which the dynamo exporter writes on every Reshape) and
/// no 0 in the target, the attribute changes nothing: the target may gain
/// copies once the attribute is cleared (clearAllowZero).
static bool zeroIsLiteral(const Node &N, llvm::ArrayRef<int64_t> Target) {
  return N.getAttrInt("allowzero", 0) != 0 && llvm::is_contained(Target, 0);
}

/// Makes a 0 in \p N's target a copy: called when a repair writes copies
/// into a target that had no 0 (zeroIsLiteral was false).
static void clearAllowZero(Node &N, Rewriter &RW) {
  if (N.getAttrInt("allowzero", 0) == 0)
    return;
  N.setAttr(Attribute::getInt("allowzero", 0));
  RW.notifyModified(&N);
}

/// True if a consumer of \p V (rank \p Rank) multiplies its dim \p K
/// against a constant: the inner dim of a MatMul or Gemm whose other
/// operand is a weight, the channels of a Conv. That dim must keep its
/// size at every input size.
static bool contractedWithConstant(const Value &V, unsigned K, size_t Rank) {
  auto IsConstant = [](const Value *W) {
    if (!W)
      return false;
    const Node *Def = W->getDefiningNode();
    return W->isConstant() || (Def && hasTrait(*Def, ConstantProducer));
  };
  for (const Use &U : V.getUses()) {
    if (U.isGraphOutput() || U.User->getNumOperands() < 2)
      continue;
    const Node &C = *U.User;
    const Value *Other = C.getOperand(U.Index == 0 ? 1 : 0);
    if (U.Index > 1 || !IsConstant(Other))
      continue;
    if (hasTrait(C, BatchedMatrixProduct) && Rank >= 2 &&
        K == (U.Index == 0 ? Rank - 1 : Rank - 2))
      return true;
    // A Conv's channels meet its weight's.
    if (hasTrait(C, KernelOp) && U.Index == 0 && K == 1)
      return true;
    if (hasTrait(C, TransposableMatrixProduct) && Rank == 2) {
      bool Trans = C.getAttrInt(U.Index == 0 ? "transA" : "transB", 0) != 0;
      if (K == (U.Index == 0 ? (Trans ? 0u : 1u) : (Trans ? 1u : 0u)))
        return true;
    }
  }
  return false;
}

/// The dims the target \p New gives over the data dims \p In: a 0
/// copies, a -1 takes the rest. None where the rest is not exact.
static std::vector<DimExpr> plannedDims(llvm::ArrayRef<DimExpr> In,
                                        llvm::ArrayRef<int64_t> New) {
  std::vector<DimExpr> Out;
  DimExpr Count = DimExpr::constant(1), Others = DimExpr::constant(1);
  for (const DimExpr &E : In)
    Count = Count * E;
  int Minus = -1;
  for (unsigned K = 0; K < New.size(); ++K) {
    if (New[K] == 0 && K < In.size())
      Out.push_back(In[K]);
    else
      Out.push_back(DimExpr::constant(New[K]));
    if (New[K] == -1)
      Minus = K;
    else
      Others = Others * Out.back();
  }
  if (Minus >= 0) {
    std::optional<DimExpr> Rest = Count.divExact(Others);
    if (!Rest)
      return {};
    Out[Minus] = *Rest;
  }
  return Out;
}

/// The uses of \p V (rank \p Rank) by binary elementwise ops, found
/// through Transposes and ops that keep the shape (a residual Add after
/// `transpose(0, 1)`), eight at most, each with the dim of V at each dim
/// of the value the op reads.
static std::vector<std::pair<const Use *, std::vector<unsigned>>>
elementwiseMeets(const Value &V, size_t Rank) {
  std::vector<std::pair<const Use *, std::vector<unsigned>>> Meets;
  std::vector<unsigned> Identity(Rank);
  std::iota(Identity.begin(), Identity.end(), 0);
  std::vector<std::pair<const Value *, std::vector<unsigned>>> Work{
      {&V, Identity}};
  while (!Work.empty() && Meets.size() < 8) {
    auto [W, Of] = Work.back();
    Work.pop_back();
    for (const Use &U : W->getUses()) {
      if (U.isGraphOutput())
        continue;
      const Node &C = *U.User;
      if (C.getNumOperands() == 2 && hasTrait(C, ElementwiseBroadcasting)) {
        Meets.push_back({&U, Of});
        continue;
      }
      if (C.getNumResults() != 1 || Work.size() > 8 || U.Index != 0)
        continue;
      if (hasTrait(C, ShapePreserving) && C.getNumOperands() == 1) {
        Work.push_back({C.getResult(0), Of});
      } else if (hasTrait(C, PermutesDims)) {
        std::optional<std::vector<int64_t>> Perm = C.getAttrInts("perm");
        if (!Perm || Perm->size() != Of.size())
          continue;
        std::vector<unsigned> Moved;
        for (int64_t P : *Perm)
          if (P >= 0 && P < static_cast<int64_t>(Of.size()))
            Moved.push_back(Of[P]);
        if (Moved.size() == Of.size())
          Work.push_back({C.getResult(0), Moved});
      }
    }
  }
  return Meets;
}

/// Before:  R = Reshape(G, [14,1,64])  G: [S*B,64]     Add(X, R)  X: [S,B,64]
/// After:   R = Reshape(G, Concat([-1], Shape(ids)[0:1], [64]))
///
/// At batch 1 a view's entries do not say where the batch went: [14,1,64]
/// counts as [-1,1,64] as well, and the Add beside it would then meet
/// [S*B,1,64] with [S,B,64]. The other operand of an elementwise op the
/// result meets says what it must be: where its dims, over the input
/// symbols, have the target's old values and the data's element count,
/// the target is those dims, each symbol read off the graph input that has
/// it and the one other dynamic dim as the -1. Taken only where the
/// planned reading \p Planned would not match the partner (a dim of each,
/// neither 1, not equal) and merges a symbol of old size 1, or where no
/// rule reads the target (\p Planned empty: `view(S, B, E)` exported at
/// S == B, whose [3,3,64] the counts cannot tell apart).
bool DynamicRewrite::readPartnerTarget(Node &N, llvm::ArrayRef<DimExpr> In,
                                       llvm::ArrayRef<int64_t> Target,
                                       llvm::ArrayRef<DimExpr> Planned,
                                       DimAnalysis &DA, Rewriter &RW) {
  if ((!Planned.empty() && Planned.size() != Target.size()) ||
      zeroIsLiteral(N, Target))
    return false;
  DimExpr Count = DimExpr::constant(1);
  for (const DimExpr &E : In)
    Count = Count * E;
  // A dim that holds a new symbol of old size 1 times more (S*B): where
  // the planned reading has one and the partner's dims none, the partner
  // keeps the symbol apart as the dynamic model must have.
  auto MergesUnit = [&](const DimExpr &E) {
    bool Merges = false;
    E.forEachSymbol([&](llvm::StringRef S) {
      auto It = Old.find(S.str());
      Merges |= It != Old.end() && It->second == 1 && !E.isSymbol();
    });
    return Merges;
  };
  std::vector<std::pair<const Use *, std::vector<unsigned>>> Meets =
      elementwiseMeets(*N.getResult(0), Target.size());
  for (const auto &[UP, Of] : Meets) {
    const Use &U = *UP;
    const Value *P = U.User->getOperand(1 - U.Index);
    const std::vector<DimExpr> *PD = P ? DA.getDims(*P) : nullptr;
    if (!PD || PD->size() != Target.size() || Stale.count(P))
      continue;
    std::vector<DimExpr> Dims(Target.size());
    DimExpr PCount = DimExpr::constant(1);
    bool Fits = true, Differs = false;
    for (unsigned J = 0; J < PD->size() && Fits; ++J) {
      unsigned K = Of[J];
      DimExpr E = computedDim(DA, *P, *PD, J);
      std::optional<int64_t> V = readingValue(E);
      Fits = !E.hasUnknown() && DA.isInputExpressible(E) && V &&
             (Target[K] > 0    ? *V == Target[K]
              : Target[K] == 0 ? K < In.size() && readingValue(In[K]) == *V
                               : Target[K] == -1);
      auto IsOne = [](const DimExpr &X) {
        return X.isConstant() && X.getConstant() == 1;
      };
      Differs |= Planned.empty() ||
                 (Planned[K] != E && !IsOne(Planned[K]) && !IsOne(E));
      PCount = PCount * E;
      Dims[K] = E;
    }
    if (!Fits || !Differs || PCount != Count ||
        (!Planned.empty() && !llvm::any_of(Planned, MergesUnit)) ||
        llvm::any_of(Dims, MergesUnit))
      continue;
    // Symbols from the graph inputs; one other dynamic dim is the -1.
    int Minus = -1;
    std::vector<std::pair<Value *, unsigned>> From(Dims.size());
    for (unsigned K = 0; K < Dims.size() && Fits; ++K) {
      if (Dims[K].isConstant())
        continue;
      if (Dims[K].isSymbol())
        From[K] = inputDimOf(Dims[K].getSymbol());
      if (!From[K].first) {
        Fits = Minus < 0;
        Minus = K;
      }
    }
    if (!Fits)
      continue;
    // With every dynamic dim read from the inputs, one of them is the -1;
    // but not the only one: a target of literals and a -1 would be read
    // again as a baked one next round.
    if (Minus < 0 && llvm::count_if(Dims, [](const DimExpr &E) {
                       return !E.isConstant();
                     }) > 1)
      for (unsigned K = 0; K < Dims.size() && Minus < 0; ++K)
        if (!Dims[K].isConstant())
          Minus = K;
    std::string Was = shapeOperandName(N, 1);
    ShapeVectorBuilder B(RW, N, N.getOperand(1)->getName().str() + "_part",
                         "dims");
    for (unsigned K = 0; K < Dims.size(); ++K) {
      if (static_cast<int>(K) == Minus)
        B.literal(-1);
      else if (Dims[K].isConstant())
        B.literal(Dims[K].getConstant());
      else
        B.piece(B.dimOf(From[K].first, From[K].second));
    }
    setShapeOperand(N, 1, B.finish("target_dynamic"), RW);
    emitRemark(RW.getDiags(), N)
        << "target " << Was << " = " << printInts(Target)
        << " read as the dims of '" << P->getName()
        << "', which its result meets in the " << U.User->getOpType()
        << " giving '" << U.User->getResult(0)->getName() << "'";
    ++RepairCounts["partner-read Reshape target"];
    Repaired = true;
    return true;
  }
  return false;
}

/// The one entry of \p New that copies a data dim (a 0) and can take
/// what the other entries leave of \p In's element count instead: the
/// rest has the copied dim's size at the reading sizes (it differs by
/// symbols of old size 1) and is an integer at every size. None where no
/// single one can, or it is in \p Pinned.
std::optional<unsigned>
DynamicRewrite::copyTakingRest(llvm::ArrayRef<DimExpr> In,
                               llvm::ArrayRef<int64_t> New,
                               llvm::ArrayRef<unsigned> Pinned) const {
  DimExpr Count = DimExpr::constant(1);
  for (const DimExpr &E : In)
    Count = Count * E;
  std::optional<unsigned> Found;
  for (unsigned K = 0; K < New.size() && K < In.size(); ++K) {
    if (New[K] != 0 || llvm::is_contained(Pinned, K))
      continue;
    DimExpr Others = DimExpr::constant(1);
    for (unsigned J = 0; J < New.size(); ++J)
      if (J != K)
        Others =
            Others *
            (New[J] == 0 && J < In.size() ? In[J] : DimExpr::constant(New[J]));
    std::optional<DimExpr> R = Count.divExact(Others);
    if (!R || R->hasUnknown() || *R == In[K] || !isIntegralAtSamples(*R) ||
        !readingValue(*R) || readingValue(*R) != readingValue(In[K]))
      continue;
    if (Found)
      return std::nullopt;
    Found = K;
  }
  return Found;
}

/// \p Target at the old sizes over data of \p Total elements, its -1 (the
/// first) resolved, with the -1's position in \p Minus (-1 where it has
/// none); none where an entry is not positive, the other entries do not
/// divide \p Total, or, without a -1, their product is not \p Total.
static std::optional<std::vector<int64_t>>
resolvedTarget(llvm::ArrayRef<int64_t> Target, int64_t Total, int &Minus) {
  Minus = -1;
  int64_t Known = 1;
  for (size_t K = 0; K < Target.size(); ++K) {
    if (Target[K] == -1 && Minus < 0)
      Minus = int(K);
    else if (Target[K] < 1 || __builtin_mul_overflow(Known, Target[K], &Known))
      return std::nullopt;
  }
  if (Minus < 0 ? Known != Total : Total % Known != 0)
    return std::nullopt;
  std::vector<int64_t> Old(Target.begin(), Target.end());
  if (Minus >= 0)
    Old[Minus] = Total / Known;
  return Old;
}

/// True if \p Target holds a -1 that came to 1 at the old sizes over data
/// dims \p In (a 0 without allowzero copies the data's dim).
bool DynamicRewrite::minusOneStoodForOne(const Node &N,
                                         llvm::ArrayRef<DimExpr> In,
                                         llvm::ArrayRef<int64_t> Target) const {
  auto ValueOf = [&](const DimExpr &E) -> std::optional<int64_t> {
    return E.hasUnknown() ? std::nullopt : readingValue(E);
  };
  int64_t Total = 1;
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = ValueOf(E);
    if (!V || *V < 1 || __builtin_mul_overflow(Total, *V, &Total))
      return false;
  }
  // Copies (0 without allowzero) read as the data's dims.
  std::vector<int64_t> Entries(Target.begin(), Target.end());
  if (N.getAttrInt("allowzero", 0) == 0)
    for (size_t K = 0; K < Entries.size(); ++K)
      if (Entries[K] == 0) {
        std::optional<int64_t> V =
            K < In.size() ? ValueOf(In[K]) : std::nullopt;
        if (!V)
          return false;
        Entries[K] = *V;
      }
  int Minus;
  std::optional<std::vector<int64_t>> Old =
      resolvedTarget(Entries, Total, Minus);
  return Old && Minus >= 0 && (*Old)[Minus] == 1;
}

/// The readings tried, in turn, where the counts leave no single entry
/// for the -1; \p Why says why the grouped one refused, for the report.
bool DynamicRewrite::readByFallbacks(Node &N, llvm::ArrayRef<DimExpr> In,
                                     llvm::ArrayRef<int64_t> Target,
                                     DimAnalysis &DA, Rewriter &RW,
                                     std::string &Why) {
  // The export's own -1 that stood for 1 at the old sizes, where reading it
  // as what grows fails to divide: the -1 was written for what grows (the
  // chunk count of `view(b, -1, 4, c)` over a length padded to 4, baked
  // [3,-1,4,4] at T + 1 = 4, the pad baked too), and every other reading
  // gives the growth to an entry whose old value matches by chance,
  // keeping the -1 a 1. Reported instead.
  if (minusOneStoodForOne(N, In, Target)) {
    Why += "; the target's -1 stood for 1 at the old sizes, and no reading "
           "that keeps it 1 is taken";
    return false;
  }
  // A split of a dim an earlier view merged reads the merge's dims before
  // the counts do: tokens [B, H*W, C] viewed back as [1,8,8,C] at H = W = 8
  // have two symbols of old size 8 for each 8, and the merge says which.
  return alignReshape(N, In, Target, RW) ||
         splitMergedDims(N, In, Target, RW) != SplitResult::None ||
         groupReshape(N, In, Target, RW, &Why) ||
         tryShapeDerived(N, In, Target, RW) ||
         readPartnerTarget(N, In, Target, {}, DA, RW);
}

/// The groups a view reads: \p Dims and \p Entries cut where their running
/// products meet, smallest groups first, as a view keeps the order of
/// elements; each group as the end (past its last) in each, in order, until
/// either runs out. None where one runs out inside a group or a product
/// overflows.
static std::optional<std::vector<std::pair<size_t, size_t>>>
cutWhereProductsMeet(llvm::ArrayRef<int64_t> Dims,
                     llvm::ArrayRef<int64_t> Entries) {
  std::vector<std::pair<size_t, size_t>> Ends;
  size_t I = 0, K = 0;
  while (I < Dims.size() && K < Entries.size()) {
    int64_t Pd = Dims[I++], Pt = Entries[K++];
    while (Pd != Pt) {
      bool Grow = Pd < Pt;
      if ((Grow && I == Dims.size()) || (!Grow && K == Entries.size()))
        return std::nullopt;
      int64_t &P = Grow ? Pd : Pt;
      if (__builtin_mul_overflow(P, Grow ? Dims[I++] : Entries[K++], &P))
        return std::nullopt;
    }
    Ends.push_back({I, K});
  }
  return Ends;
}

/// Before:  R = Reshape(X, [2,4,2,16])  X: [B,T,16] (old B = 2, T = 8)
/// Returns: entry 3 is of a static group
///
/// The entries of a constant target (without -1) that, cut with the data's
/// dims where their running products meet at the old sizes, fall in a
/// group of dims that are all numbers: the 16 of `x.view(B, T // 2, 2, C)`
/// over [B,T,16]. A view keeps the order of elements, so such a group holds
/// the same elements at every size and its entries stay what they are; by
/// element count alone the 16 could take 2*T (T = 8 makes them equal), a
/// view that mixes T into the channels. Nothing is marked where an old
/// size is not known.
std::vector<bool>
DynamicRewrite::entriesOfStaticGroups(llvm::ArrayRef<DimExpr> In,
                                      llvm::ArrayRef<int64_t> Target) const {
  std::vector<bool> Static(Target.size(), false);
  std::vector<int64_t> Dims;
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = E.hasUnknown() ? std::nullopt : readingValue(E);
    if (!V || *V < 1)
      return Static;
    Dims.push_back(*V);
  }
  for (int64_t T : Target)
    if (T < 1)
      return Static;
  std::optional<std::vector<std::pair<size_t, size_t>>> Groups =
      cutWhereProductsMeet(Dims, Target);
  if (!Groups)
    return Static;
  size_t GI = 0, GK = 0;
  for (auto [I, K] : *Groups) {
    bool AllNumbers = true;
    for (size_t J = GI; J < I; ++J)
      AllNumbers &= In[J].isConstant();
    for (size_t L = GK; L < K; ++L)
      Static[L] = AllNumbers;
    GI = I, GK = K;
  }
  return Static;
}

/// \p A times \p B, or nullopt where it overflows.
static std::optional<int64_t> checkedMul(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}

/// True if entry \p I of the constant target \p Target starts at the same
/// element as dim \p I of the data dims \p In, at the old sizes: the
/// entries and the dims before it hold as many elements. Only then can the
/// entry be a copy of that dim. A channel shuffle's [1,2,4,8,8] over
/// [B,8,H,W] exported at H = W = 8 has W's old size at position 3, where the
/// data's element count before it is 64 but the target's 8: that 8 is H,
/// and copying W there would swap them.
bool DynamicRewrite::startsAlike(llvm::ArrayRef<DimExpr> In,
                                 llvm::ArrayRef<int64_t> Target,
                                 unsigned I) const {
  // Where a count is not known at the old sizes (a dim the export kept
  // dynamic, a -1 before the entry) nothing is checked.
  std::optional<int64_t> Before = 1, TargetBefore = 1;
  for (unsigned K = 0; K < I && K < In.size() && Before; ++K) {
    std::optional<int64_t> V = oldValue(In[K]);
    Before = V ? checkedMul(*Before, *V) : std::nullopt;
  }
  for (unsigned K = 0; K < I && K < Target.size() && TargetBefore; ++K) {
    std::optional<int64_t> V = Target[K];
    if (*V == 0)
      V = K < In.size() ? oldValue(In[K]) : std::nullopt;
    TargetBefore = V && *V > 0 ? checkedMul(*TargetBefore, *V) : std::nullopt;
  }
  return !Before || !TargetBefore || *Before == *TargetBefore;
}

/// The value a view produced \p Data from: walking back through ops that
/// keep their operand's dims (normalizations, activations, elementwise ops
/// whose result has the dims of their first operand), the first operand of
/// the view (Reshape, Flatten) that made it; null where there is none or
/// the view only inserts or removes dims of 1.
static Value *viewedFrom(Value *Data, const DimAnalysis &DA) {
  Value *V = Data;
  for (int Step = 0; V && Step < 8; ++Step) {
    Node *D = V->getDefiningNode();
    if (!D || !D->isOnnxDomain() || D->getNumOperands() == 0 ||
        !D->getOperand(0))
      return nullptr;
    // Squeeze and Unsqueeze only move a 1: a target that puts it back says
    // nothing of how the other dims split.
    if (hasTrait(*D, ViewLike))
      return hasTrait(*D, InsertsUnitDims) || hasTrait(*D, RemovesUnitDims)
                 ? nullptr
                 : D->getOperand(0);
    const std::vector<DimExpr> *Out = DA.getDims(*V);
    const std::vector<DimExpr> *Of = DA.getDims(*D->getOperand(0));
    if (!(hasTrait(*D, ShapePreserving) ||
          hasTrait(*D, ElementwiseBroadcasting)) ||
        !Out || !Of || *Out != *Of)
      return nullptr;
    V = D->getOperand(0);
  }
  return nullptr;
}

/// A view back to the shape of what an earlier view reshaped: GroupNorm's
/// `[B, G, -1]` around an InstanceNormalization, whose second target holds
/// the first view's input shape, baked. Where the target (its -1 read by
/// count) is that value's old shape, entry for entry, it is that shape at
/// every size: a constant with copies and one -1 where that reads it, else
/// the value's Shape. Read before the counts: at H = W = 2 the counts
/// of `[2,8,2,2]` over `[B,4,2*H*W]` let 8 take the rest (2*H*W) and keep
/// the 2s, while the round trip says the 2s are H and W.
bool DynamicRewrite::readAsRoundTrip(Node &N, llvm::ArrayRef<DimExpr> In,
                                     llvm::ArrayRef<int64_t> Target,
                                     DimAnalysis &DA, Rewriter &RW) {
  Value *X = viewedFrom(N.getOperand(0), DA);
  const std::vector<DimExpr> *XD = X ? DA.getDims(*X) : nullptr;
  if (!XD || XD->size() != Target.size() || zeroIsLiteral(N, Target))
    return false;
  std::vector<DimExpr> Dims;
  int64_t Total = 1;
  for (unsigned K = 0; K < XD->size(); ++K) {
    Dims.push_back(computedDim(DA, *X, *XD, K));
    std::optional<int64_t> V =
        Dims.back().hasUnknown() ? std::nullopt : readingValue(Dims.back());
    if (!V || *V < 1 || __builtin_mul_overflow(Total, *V, &Total))
      return false;
  }
  int Minus;
  std::optional<std::vector<int64_t>> Old =
      resolvedTarget(Target, Total, Minus);
  if (!Old)
    return false;
  // Each entry: its literal where the dim is constant, 0 where the data
  // holds the same dim at the same place (a copy), else read from X: one
  // such entry is the -1.
  std::vector<int64_t> New = *Old;
  std::vector<unsigned> Read;
  for (unsigned K = 0; K < Target.size(); ++K) {
    if (readingValue(Dims[K]) != New[K])
      return false;
    if (Dims[K].isConstant())
      continue;
    if (K < In.size() && In[K] == Dims[K])
      New[K] = 0;
    else
      Read.push_back(K);
  }
  if (Read.empty() && !llvm::is_contained(New, 0))
    return false; // nothing dynamic: the counts decide
  if (!Read.empty())
    New[Read.front()] = -1;
  if (Read.size() <= 1) {
    if (llvm::ArrayRef<int64_t>(New) == Target)
      return true; // already reads so
    Value *C = RW.createConstant(
        *N.getParentGraph(),
        Tensor::fromInt64s(N.getOperand(1)->getName().str() + "_dynamic",
                           {int64_t(New.size())}, New));
    setShapeOperand(N, 1, C, RW);
    if (llvm::is_contained(New, 0))
      clearAllowZero(N, RW); // the 0s are copies
  } else {
    // Several dims to read: X's whole shape, which the analysis reads as
    // X's dims (a -1 among them would leave it a quotient to divide).
    RW.setInsertionPointBefore(&N);
    setShapeOperand(
        N, 1, RW.createNode("Shape", {X}, 1, "", "dims")->getResult(0), RW);
  }
  ++RepairCounts["round-trip view"];
  Repaired = true;
  return true;
}

void DynamicRewrite::repairReshape(Node &N, DimAnalysis &DA, Rewriter &RW) {
  if (N.getNumOperands() < 2 || !N.getOperand(0) || !N.getOperand(1))
    return;
  // The readers of merged dims (spreadMergedDims, findFactorSource) use
  // this round's analysis, the joined-target repairs as well.
  CurrentDA = &DA;
  Tensor T = getConstantValue(*N.getOperand(1));
  std::optional<std::vector<int64_t>> Target = T ? T.toInt64s() : std::nullopt;
  if (!Target) {
    repairReshapePieces(N, DA, RW);
    return;
  }
  const std::vector<DimExpr> *InDims = DA.getDims(*N.getOperand(0));
  auto Report = [&](const std::string &Why) {
    Problems.push_back({&N, "constant target " + shapeOperandName(N, 1) +
                                " = " + printInts(*Target) + ": " + Why});
  };
  if (!InDims) {
    Report("the rank of the data input is unknown");
    return;
  }
  // Each dim as computed upstream: a baked target further on (the [.., 10]
  // of an attention's transposed keys) may have merged the sequence with
  // its old length, and reading the merged 10 here would keep it baked.
  std::vector<DimExpr> Best;
  for (unsigned K = 0; K < InDims->size(); ++K)
    Best.push_back(computedDim(DA, *N.getOperand(0), *InDims, K));
  const std::vector<DimExpr> *In = &Best;
  bool Dynamic = false;
  for (const DimExpr &E : *In) {
    // A symbol that inference made up (unk__4: the dim algebra did not
    // follow a conv stack) is as unknown as an unknown dim: no count
    // over it proves anything.
    if (E.hasUnknown() || !DA.isInputExpressible(E)) {
      Report("a dim of the data input (" + E.str() +
             ") is not a function of the input symbols");
      return;
    }
    Dynamic |= !E.isConstant();
  }
  if (!Dynamic || readAsRoundTrip(N, *In, *Target, DA, RW))
    return;
  bool AllowZero = zeroIsLiteral(N, *Target);
  std::vector<int64_t> New = *Target;
  DimExpr Product = DimExpr::constant(1);
  for (const DimExpr &E : *In)
    Product = Product * E;
  // Copies: literals that are the old value of the same input symbol.
  DimExpr Fixed = DimExpr::constant(1);
  int MinusOne = -1;
  std::vector<unsigned> Literals;
  for (unsigned I = 0; I < New.size(); ++I) {
    if (New[I] == -1) {
      MinusOne = I;
      continue;
    }
    if (New[I] == 0 && !AllowZero) {
      if (I >= In->size()) {
        Report("0 copies a dim the data input does not have");
        return;
      }
      Fixed = Fixed * (*In)[I];
      continue;
    }
    if (!AllowZero && I < In->size() && (*In)[I].isSymbol() &&
        Old.count((*In)[I].getSymbol().str()) && oldValue((*In)[I]) == New[I] &&
        startsAlike(*In, *Target, I)) {
      New[I] = 0;
      Fixed = Fixed * (*In)[I];
      continue;
    }
    Literals.push_back(I);
  }
  auto LiteralProduct = [&](int Skip) {
    DimExpr P = DimExpr::constant(1);
    for (unsigned I : Literals)
      if (static_cast<int>(I) != Skip)
        P = P * DimExpr::constant(New[I]);
    return P;
  };
  // An entry whose result dim a consumer multiplies against a constant
  // (a Linear's weight) keeps its literal: no other reading runs.
  std::vector<unsigned> Pinned;
  for (unsigned K = 0; K < New.size(); ++K)
    if (contractedWithConstant(*N.getResult(0), K, New.size()))
      Pinned.push_back(K);
  std::vector<bool> Static = entriesOfStaticGroups(*In, *Target);
  auto FindCandidates = [&] {
    std::vector<unsigned> Candidates, Rational;
    for (unsigned K : Literals) {
      std::optional<DimExpr> R = Product.divExact(Fixed * LiteralProduct(K));
      if (!R || R->isConstant() || R->hasUnknown() || oldValue(*R) != New[K] ||
          llvm::is_contained(Pinned, K))
        continue;
      (isIntegralAtSamples(*R) ? Candidates : Rational).push_back(K);
    }
    // The one entry that can take the rest lies in a group of numbers
    // while an entry of the dynamic dims' own group could take it under a
    // divisibility: read as view() does, that one splits the dynamic dim
    // (`view(B, T // 2, 2, C)` at T = 8: T/2, not 2*T in the channels).
    if (Candidates.size() == 1 && Static[Candidates.front()] &&
        llvm::any_of(Rational, [&](unsigned K) { return !Static[K]; }))
      Candidates.clear();
    return Candidates;
  };
  if (MinusOne < 0) {
    // Already consistent without -1: nothing else is baked.
    std::optional<DimExpr> Rest = Product.divExact(Fixed * LiteralProduct(-1));
    if (!Rest || *Rest != DimExpr::constant(1)) {
      std::vector<unsigned> Candidates = FindCandidates();
      // A copy reads an entry as the dim at its position, which a size-1
      // dim beside it leaves open: [S,4*B,16] viewed as [14,64] at batch 1
      // is [S,64*B] by the copy, but the 64 meets a weight, so the 14 is
      // S*B. Where the copies leave no entry free, the one copy that can
      // take the rest (its size at the reading sizes) becomes the -1.
      if (Candidates.empty() && !Pinned.empty() && !AllowZero)
        if (std::optional<unsigned> K = copyTakingRest(*In, New, Pinned))
          if (std::optional<DimExpr> F = Fixed.divExact((*In)[*K])) {
            New[*K] = -1;
            Fixed = *F;
            MinusOne = *K;
          }
      if (MinusOne < 0) {
        // Several entries could take the rest: [288,3,2,2] over [B,48,6,4]
        // (old B = 3) counts as well with 96*B first as with B second. Where
        // the running products cut the target into groups, the group that
        // holds B decides (groupReshape): 288 spans B, 48 and part of 6.
        if (Candidates.size() > 1 &&
            splitMergedDims(N, *In, *Target, RW) != SplitResult::None)
          return;
        if (Candidates.size() > 1 && groupReshape(N, *In, *Target, RW))
          return;
        // view(b, c*h, w) baked as [1,128,32]: both 128 (=4*w) and 32 (=w)
        // could be the remaining product; the one that is a dim of the input
        // as it is moves with the sizes, the other is structural.
        if (Candidates.size() > 1) {
          std::vector<unsigned> Whole;
          for (unsigned K : Candidates) {
            std::optional<DimExpr> R =
                Product.divExact(Fixed * LiteralProduct(K));
            if (llvm::is_contained(*In, *R))
              Whole.push_back(K);
          }
          if (Whole.size() == 1)
            Candidates = Whole;
        }
        if (Candidates.size() != 1) {
          std::string Why;
          if (readByFallbacks(N, *In, *Target, DA, RW, Why))
            return;
          Report((Candidates.empty()
                      ? "no single position can become -1 (more than one dim "
                        "depends on the input sizes)"
                      : "more than one position could become -1") +
                 Why);
          return;
        }
        MinusOne = Candidates.front();
        New[MinusOne] = -1;
        Literals.erase(llvm::find(Literals, static_cast<unsigned>(MinusOne)));
      }
    }
  }
  if (MinusOne >= 0) {
    std::optional<DimExpr> Rest = Product.divExact(Fixed * LiteralProduct(-1));
    if (!Rest || Rest->hasUnknown() || !isIntegralAtSamples(*Rest)) {
      std::string Why;
      if (readByFallbacks(N, *In, *Target, DA, RW, Why))
        return;
      Report("the literal dims do not divide the input's size for every "
             "input size" +
             Why);
      return;
    }
  }
  if (readPartnerTarget(N, *In, *Target, plannedDims(*In, New), DA, RW))
    return;
  if (New == *Target &&
      splitMergedDims(N, *In, *Target, RW) != SplitResult::None)
    return;
  if (alignReshape(N, *In, *Target, RW, &New))
    return;
  if (New == *Target)
    return;
  Graph &G = *N.getParentGraph();
  Value *C = RW.createConstant(
      G, Tensor::fromInt64s(N.getOperand(1)->getName().str() + "_dynamic",
                            {static_cast<int64_t>(New.size())}, New));
  setShapeOperand(N, 1, C, RW);
  if (llvm::is_contained(New, 0))
    clearAllowZero(N, RW);
  ++RepairCounts["Reshape target"];
  Repaired = true;
}

/// The entries of \p Joined (a Concat along axis 0 of 1-D pieces) as the
/// Reshape \p N reads them against its data dims \p In: a 0 copies the
/// data's dim where \p N's allowzero says so; a literal -1 is an entry -1.
/// None where a piece's length or a computed entry is unknown, or a
/// computed entry is -1.
static std::optional<std::vector<JoinedEntry>>
readJoinedTarget(const Node &N, const Node &Joined, DimAnalysis &DA,
                 llvm::ArrayRef<DimExpr> In) {
  bool AllowZero = N.getAttrInt("allowzero", 0) != 0;
  std::vector<JoinedEntry> Entries;
  for (const Value *P : Joined.getOperands()) {
    const std::vector<DimExpr> *PD = P ? DA.getDims(*P) : nullptr;
    if (!PD || PD->size() != 1 || !(*PD)[0].isConstant())
      return std::nullopt;
    Tensor PT = getConstantValue(*P);
    std::optional<std::vector<int64_t>> Literals =
        PT ? PT.toInt64s() : std::nullopt;
    const std::vector<DimExpr> *Computed = Literals ? nullptr : DA.getData(*P);
    size_t Length = (*PD)[0].getConstant();
    if (Literals ? Literals->size() != Length
                 : !Computed || Computed->size() != Length)
      return std::nullopt;
    for (size_t I = 0; I < Length; ++I) {
      DimExpr V = Literals ? DimExpr::constant((*Literals)[I]) : (*Computed)[I];
      if (V.hasUnknown() || !DA.isInputExpressible(V) ||
          (V == DimExpr::constant(-1) && !Literals))
        return std::nullopt;
      bool Copy = !AllowZero && V == DimExpr::constant(0);
      if (Copy && Entries.size() >= In.size())
        return std::nullopt;
      Entries.push_back({Copy ? In[Entries.size()] : V, Literals && !Copy});
    }
  }
  return Entries;
}

/// True if a computed piece of \p Joined holds a number that the first
/// sweep already computed (from baked values only), and no computed piece
/// holds one only because a baked constant downstream made the algebra
/// equate a new dim with its old size (the data of a repaired target's
/// Shape pieces, before the next round sees the repair's effect).
static bool computedFromBakedValues(const Node &Joined, const DimAnalysis &DA) {
  bool Any = false;
  for (const Value *P : Joined.getOperands()) {
    if (!P || getConstantValue(*P))
      continue;
    const std::vector<DimExpr> *Data = DA.getData(*P);
    const std::vector<DimExpr> *Forward = DA.getForwardData(*P);
    if (!Data)
      continue;
    for (size_t I = 0; I < Data->size(); ++I) {
      if (!(*Data)[I].isConstant())
        continue;
      if (!Forward || I >= Forward->size() || (*Forward)[I] != (*Data)[I])
        return false;
      Any = true;
    }
  }
  return Any;
}

/// Before:  R = Reshape(Y, Concat([1], H', W', [7], [7], [8]))  Y: [nW*B,49,8]
///          (Y's dims merged from [B,H',W'] and [7,7] by an earlier view)
/// Returns: 0, the entry that splits B back out
///
/// Swin's `x.view(B, pH // 7, pW // 7, 7, 7, C)` at batch 1 with the
/// window counts computed: by old values alone the 1, the 7s or the 8 could
/// take the batch. Read over the data's dims spread into the dims the
/// merging views joined (spreadMergedDims), entry for entry, the target
/// is that merge undone: each computed entry is its spread dim, each
/// literal the constant there or the old size of the one dynamic dim. The
/// entry at that dynamic dim, where there is exactly one; none otherwise.
std::optional<unsigned>
DynamicRewrite::literalAtMergedDim(Node &N, llvm::ArrayRef<JoinedEntry> Entries,
                                   llvm::ArrayRef<DimExpr> In,
                                   const DimAnalysis &DA) {
  std::optional<std::vector<SpreadDim>> Spread = spreadMergedDims(N, In);
  if (!Spread)
    return std::nullopt;
  auto Literal = [&](size_t K) -> std::optional<int64_t> {
    if (K >= Entries.size() || !Entries[K].Value.isConstant() ||
        Entries[K].Value.getConstant() < 1)
      return std::nullopt;
    return Entries[K].Value.getConstant();
  };
  std::optional<unsigned> Dynamic;
  size_t I = 0, K = 0;
  while (I < Spread->size() && K < Entries.size()) {
    const DimExpr &D = (*Spread)[I].E;
    if (D.isConstant()) {
      // A run of constant dims is a run of literal entries of the same
      // product (the [7,7] windows merged to 49 and split again).
      int64_t PD = D.getConstant(), PE = 1;
      std::optional<int64_t> L = Literal(K);
      if (!L || PD < 1)
        return std::nullopt;
      PE = *L;
      ++I, ++K;
      while (PD != PE) {
        bool Grow = PD < PE;
        if (Grow && (I == Spread->size() || !(*Spread)[I].E.isConstant()))
          return std::nullopt;
        std::optional<int64_t> Next =
            Grow ? std::optional<int64_t>((*Spread)[I].E.getConstant())
                 : Literal(K);
        if (!Next || *Next < 1 ||
            __builtin_mul_overflow(Grow ? PD : PE, *Next, Grow ? &PD : &PE))
          return std::nullopt;
        Grow ? ++I : ++K;
      }
      continue;
    }
    const JoinedEntry &E = Entries[K];
    if (!E.Literal) {
      // Computed entries in a row may split a dim that an earlier view
      // merged from them (the window counts H' and W' of H'*W').
      DimExpr P = E.Value;
      while (P != D && !DA.provenEqual(P, D) && K + 1 < Entries.size() &&
             !Entries[K + 1].Literal)
        P = P * Entries[++K].Value;
      if (P != D && !DA.provenEqual(P, D))
        return std::nullopt;
    } else {
      if (Dynamic || oldValue(D) != E.Value.getConstant())
        return std::nullopt;
      Dynamic = K;
    }
    ++I, ++K;
  }
  if (I != Spread->size() || K != Entries.size())
    return std::nullopt;
  return Dynamic;
}

/// Before:  R = Reshape(Y, Concat(Shape<0,1>(Y), [8], [12], [4]))  Y: [N,4,H,W]
/// After:   R = Reshape(Y, [0,8,12,4]), read as a constant target is
///
/// A joined target whose computed entries are each a copy of the data's
/// dim at its position means the same at every size as the constant with
/// 0 there (a copy under allowzero = 0), as fold-shapes would write it;
/// the rules for constant targets then read it (here as a split of a
/// merged dim). With \p BakedComputed, a computed entry that is a number
/// (computedFromBakedValues) is that literal. False, changing nothing,
/// where a computed entry is none of these or a baked entry is an explicit
/// 0 under allowzero = 1.
bool DynamicRewrite::readAsConstantTarget(Node &N,
                                          llvm::ArrayRef<JoinedEntry> Entries,
                                          llvm::ArrayRef<DimExpr> In,
                                          DimAnalysis &DA, Rewriter &RW,
                                          bool BakedComputed) {
  std::vector<int64_t> Folded;
  for (unsigned I = 0; I < Entries.size(); ++I) {
    const JoinedEntry &E = Entries[I];
    bool Number = E.Literal || (BakedComputed && E.Value.isConstant());
    if (Number && E.Value.getConstant() == 0)
      return false; // a zero dim under allowzero = 1
    if (Number)
      Folded.push_back(E.Value.getConstant());
    else if (I < In.size() && E.Value == In[I])
      Folded.push_back(0);
    else
      return false;
  }
  Value *C = RW.createConstant(
      *N.getParentGraph(),
      Tensor::fromInt64s(N.getOperand(1)->getName().str() + "_folded",
                         {static_cast<int64_t>(Folded.size())}, Folded));
  setShapeOperand(N, 1, C, RW);
  if (llvm::is_contained(Folded, 0))
    clearAllowZero(N, RW);
  bool Baked = BakedComputed && llvm::any_of(Entries, [](const JoinedEntry &E) {
                 return !E.Literal && E.Value.isConstant();
               });
  emitRemark(RW.getDiags(), N)
      << "target joined from computed dims and baked entries read as the "
         "constant "
      << printInts(Folded)
      << (llvm::is_contained(Folded, 0) ? " (0 copies the data's dim)" : "")
      << (Baked ? " (an entry computed from baked values only is that value "
                  "at every size)"
                : "");
  repairReshape(N, DA, RW);
  return true;
}

/// Before:  R = Reshape(Y, Concat([1], [-1], H', W'))  Y: [B,8,H'*W']
/// After:   R = Reshape(Y, Concat(Shape(Y)[0:1], [-1], H', W'))
///
/// `x.reshape(b, -1, h, w)` exported at batch 1 with h and w computed: the
/// -1 would take the batch into the channels. A literal 1 at the position
/// of a data dim that is a new symbol of old size 1 is that dim (a copy,
/// as for constant targets), read from the data's Shape; where the data's
/// dim there has one such symbol as a factor (`view(b, t, -1)` over
/// [B*T,...]), it is that symbol, read from the graph input. A literal
/// before the -1 that stands where the data's dims, spread into the dims
/// earlier views merged, have a dynamic dim of its old size is that dim
/// (the t of the same view, exported with the batch dynamic and t baked).
/// Taken where the -1 then takes a whole number at every size.
void DynamicRewrite::copyUnitEntries(Node &N, const Node &Joined,
                                     llvm::ArrayRef<JoinedEntry> Entries,
                                     llvm::ArrayRef<DimExpr> In,
                                     DimAnalysis &DA, Rewriter &RW) {
  // Where each literal that moves is read from: a value and its dim.
  using Source = std::optional<std::pair<Value *, unsigned>>;
  std::vector<Source> From(Entries.size());
  std::vector<DimExpr> Reads(Entries.size());
  // The new symbol of old size 1 that entry K's 1 stands for: the data's
  // dim at K, or the one such factor of it (the B of a [B*T,...] that
  // `view(b, t, -1)` splits).
  auto UnitSymbol = [&](unsigned K) -> std::optional<std::string> {
    const JoinedEntry &E = Entries[K];
    if (!E.Literal || E.Value != DimExpr::constant(1) || K >= In.size())
      return std::nullopt;
    std::optional<std::string> Found;
    bool Several = false;
    In[K].forEachSymbol([&](llvm::StringRef S) {
      auto It = Old.find(S.str());
      if (It == Old.end() || It->second != 1 ||
          !In[K].divExact(DimExpr::symbol(S)))
        return;
      Several |= Found && *Found != S.str();
      Found = S.str();
    });
    return Several ? std::nullopt : Found;
  };
  for (unsigned K = 0; K < Entries.size(); ++K) {
    std::optional<std::string> S = UnitSymbol(K);
    if (!S)
      continue;
    Reads[K] = DimExpr::symbol(*S);
    if (In[K].isSymbol())
      From[K] = std::make_pair(N.getOperand(0), K);
    else if (auto [Input, Dim] = inputDimOf(*S); Input)
      From[K] = std::make_pair(Input, Dim);
  }
  // Or, where the data's dims spread into the dims earlier views merged
  // (`view(b, t, -1)` over [B*T,...] with t baked), the entries before the
  // -1 read over them in order: a computed entry is the next dim, and a
  // literal of a dynamic dim's old size is that dim.
  if (std::optional<std::vector<SpreadDim>> Spread = spreadMergedDims(N, In)) {
    size_t J = 0;
    for (unsigned K = 0; K < Entries.size() && J < Spread->size(); ++K, ++J) {
      const JoinedEntry &E = Entries[K];
      const SpreadDim &D = (*Spread)[J];
      if (E.Value == DimExpr::constant(-1) || (!E.Literal && E.Value != D.E))
        break;
      if (!E.Literal || From[K])
        continue;
      if (D.E.isConstant() ? D.E != E.Value
                           : oldValue(D.E) != E.Value.getConstant())
        break;
      if (!D.E.isConstant() && D.V) {
        From[K] = std::make_pair(D.V, D.Dim);
        Reads[K] = D.E;
      }
    }
  }
  DimExpr Count = DimExpr::constant(1), Others = DimExpr::constant(1);
  for (const DimExpr &E : In)
    Count = Count * E;
  for (unsigned K = 0; K < Entries.size(); ++K)
    if (Entries[K].Value != DimExpr::constant(-1))
      Others = Others * (From[K] ? Reads[K] : Entries[K].Value);
  std::optional<DimExpr> Rest = Count.divExact(Others);
  if (llvm::none_of(From, [](const Source &S) { return S.has_value(); }) ||
      !Rest || Rest->hasUnknown() || !isIntegralAtSamples(*Rest))
    return;
  std::string Name = shapeOperandName(N, 1);
  ShapeVectorBuilder B(RW, N, N.getOperand(1)->getName().str() + "_part",
                       "dims");
  size_t At = 0;
  for (Value *P : Joined.getOperands()) {
    Tensor T = getConstantValue(*P);
    std::optional<std::vector<int64_t>> Was = T ? T.toInt64s() : std::nullopt;
    if (!Was) {
      B.piece(P);
      At += DA.getDims(*P)->front().getConstant();
      continue;
    }
    for (int64_t V : *Was) {
      if (From[At])
        B.piece(B.dimOf(From[At]->first, From[At]->second));
      else
        B.literal(V);
      ++At;
    }
  }
  setShapeOperand(N, 1, B.finish("target_dynamic"), RW);
  emitRemark(RW.getDiags(), N)
      << "target " << Name
      << " joins computed dims, baked entries and -1: a baked entry at the "
         "place of a data dim (or of a dim it merged) of that old size is "
         "that dim, so the -1 takes "
      << Rest->str();
  ++RepairCounts["joined Reshape target"];
  Repaired = true;
}

/// Before:  R = Reshape(Y, Concat(Shape<0,1>(Y), [4], [96]))  Y: [N,4,H,W]
/// After:   R = Reshape(Y, Concat(Shape<0,1>(Y), [4], [-1]))  (old H*W = 96)
///
/// An export that kept the batch dynamic computes it into the target and
/// bakes the rest. The one literal that must take what the others leave
/// (its old value is that rest's, and the rest is an integer at every
/// size) becomes -1; the computed pieces stay. The Concat is rebuilt for
/// this Reshape only: another reader may reshape other data with it.
void DynamicRewrite::repairReshapePieces(Node &N, DimAnalysis &DA,
                                         Rewriter &RW) {
  const Node *Joined = N.getOperand(1)->getDefiningNode();
  const std::vector<DimExpr> *InDims = DA.getDims(*N.getOperand(0));
  if (!Joined || !InDims || !hasTrait(*Joined, Concatenates) ||
      Joined->getAttrInt("axis", 0) != 0 || Joined->getNumResults() != 1)
    return;
  std::vector<DimExpr> In;
  for (unsigned K = 0; K < InDims->size(); ++K) {
    In.push_back(computedDim(DA, *N.getOperand(0), *InDims, K));
    if (In.back().hasUnknown() || !DA.isInputExpressible(In.back()))
      return;
  }
  std::optional<std::vector<JoinedEntry>> Entries =
      readJoinedTarget(N, *Joined, DA, In);
  if (!Entries)
    return;
  if (llvm::any_of(*Entries, [](const JoinedEntry &E) {
        return E.Value == DimExpr::constant(-1);
      })) {
    copyUnitEntries(N, *Joined, *Entries, In, DA, RW);
    return;
  }
  DimExpr Product = DimExpr::constant(1);
  for (const DimExpr &E : In)
    Product = Product * E;
  auto Others = [&](int Skip) {
    DimExpr P = DimExpr::constant(1);
    for (unsigned I = 0; I < Entries->size(); ++I)
      if (static_cast<int>(I) != Skip)
        P = P * (*Entries)[I].Value;
    return P;
  };
  // Where the algebra cannot divide the counts it proves nothing either
  // way: the Reshape's own check in inference says whether the count holds.
  std::optional<DimExpr> Rest = Product.divExact(Others(-1));
  if (!Rest || *Rest == DimExpr::constant(1))
    return;
  // A computed entry that is the same at every size was computed from
  // baked values (Swin's `B * num_windows` with B folded to 1): the target
  // is a constant one, and the rules for constant targets read it by the
  // order of the data's dims, where a literal's old value alone could
  // match a product with the batch (49 for 49*B at B = 1).
  if (computedFromBakedValues(*Joined, DA) &&
      readAsConstantTarget(N, *Entries, In, DA, RW, /*BakedComputed=*/true))
    return;
  // A literal that the rest fits (its old value, an integer at every
  // size), not one a weight meets; a 1 only where the rest is the data's
  // dim at its position, a new symbol of old size 1 (the batch of
  // `x.view(b, c, h, w)` exported at batch 1 with h and w computed).
  // Where several fit, the one that is the data's dim at its position.
  std::vector<unsigned> Candidates, Copies;
  for (unsigned K = 0; K < Entries->size(); ++K) {
    const JoinedEntry &E = (*Entries)[K];
    if (!E.Literal || E.Value.getConstant() < 1 ||
        contractedWithConstant(*N.getResult(0), K, Entries->size()))
      continue;
    std::optional<DimExpr> R = Product.divExact(Others(K));
    if (!R || R->isConstant() || R->hasUnknown() ||
        oldValue(*R) != E.Value.getConstant() || !isIntegralAtSamples(*R))
      continue;
    bool Copy = K < In.size() && *R == In[K];
    if (E.Value.getConstant() == 1 && !(Copy && R->isSymbol()))
      continue;
    Candidates.push_back(K);
    if (Copy)
      Copies.push_back(K);
  }
  if (Candidates.size() > 1 && Copies.size() == 1)
    Candidates = Copies;
  bool ByMerge = false;
  if (Candidates.size() != 1)
    if (std::optional<unsigned> K = literalAtMergedDim(N, *Entries, In, DA);
        K && Product.divExact(Others(*K))) {
      Candidates = {*K};
      ByMerge = true;
    }
  if (Candidates.size() != 1 && readAsConstantTarget(N, *Entries, In, DA, RW))
    return;
  if (Candidates.size() != 1) {
    std::string Baked;
    for (const JoinedEntry &E : *Entries)
      if (E.Literal)
        Baked += (Baked.empty() ? "" : ",") + E.Value.str();
    Problems.push_back(
        {&N,
         "target " + shapeOperandName(N, 1) +
             " joins computed dims and baked entries [" + Baked + "]: " +
             (Candidates.empty() ? "no single one can become -1 (more than one "
                                   "depends on the input sizes)"
                                 : "more than one could become -1")});
    return;
  }
  unsigned K = Candidates.front();
  DimExpr Taken = *Product.divExact(Others(K));
  Value *Target = rejoin(
      N, *Joined, DA, [&](size_t I, int64_t Was) { return I == K ? -1 : Was; },
      "reshape_target", RW);
  std::string Name = shapeOperandName(N, 1);
  setShapeOperand(N, 1, Target, RW);
  emitRemark(RW.getDiags(), N)
      << "target " << Name << " joins computed dims and baked entries: entry "
      << K << " (" << (*Entries)[K].Value.getConstant()
      << ") is the old value of " << Taken.str()
      << (ByMerge ? ", the dim an earlier view merged at its place"
                  : ", what the others leave of the element count")
      << ": -1 there";
  ++RepairCounts["joined Reshape target"];
  Repaired = true;
}

/// The span (running product before, after) of each input dim and each
/// target entry at the old sizes; left empty where an old size is unknown
/// or the counts differ.
void DynamicRewrite::spansAtOldSizes(
    llvm::ArrayRef<DimExpr> In, llvm::ArrayRef<int64_t> Target,
    std::optional<std::vector<std::pair<int64_t, int64_t>>> &InSpans,
    std::optional<std::vector<std::pair<int64_t, int64_t>>> &TSpans) const {
  std::vector<int64_t> OldIn, OldT;
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = readingValue(E);
    if (!V || *V < 1)
      return;
    OldIn.push_back(*V);
  }
  for (size_t I = 0; I < Target.size(); ++I) {
    if (Target[I] == 0 && I < OldIn.size())
      OldT.push_back(OldIn[I]);
    else if (Target[I] >= 1)
      OldT.push_back(Target[I]);
    else if (Target[I] == -1)
      OldT.push_back(1); // resolved below
    else
      return;
  }
  auto Spans = [](llvm::ArrayRef<int64_t> V)
      -> std::optional<std::vector<std::pair<int64_t, int64_t>>> {
    std::vector<std::pair<int64_t, int64_t>> Out;
    int64_t P = 1;
    for (int64_t X : V) {
      int64_t Next;
      if (__builtin_mul_overflow(P, X, &Next))
        return std::nullopt;
      Out.push_back({P, Next});
      P = Next;
    }
    return Out;
  };
  std::optional<std::vector<std::pair<int64_t, int64_t>>> A = Spans(OldIn),
                                                          B = Spans(OldT);
  if (!A || !B)
    return;
  int64_t TotalIn = A->empty() ? 1 : A->back().second;
  int64_t TotalT = B->empty() ? 1 : B->back().second;
  auto Minus = llvm::find(Target, -1);
  if (Minus != Target.end()) {
    if (TotalT == 0 || TotalIn % TotalT != 0)
      return;
    OldT[Minus - Target.begin()] = TotalIn / TotalT;
    B = Spans(OldT);
    if (!B)
      return;
    TotalT = B->empty() ? 1 : B->back().second;
  }
  if (TotalIn != TotalT)
    return;
  InSpans = std::move(A);
  TSpans = std::move(B);
}

/// The fallback for a Reshape target with several baked literals: each
/// literal that is the old value of a dynamic input dim (taken in order, as
/// reshapes keep the order of dims) becomes that dim, read from the input's
/// Shape; at most one other literal becomes -1. Accepted only when the
/// dim algebra shows the element count is preserved at every size.
bool DynamicRewrite::tryShapeDerived(Node &N, llvm::ArrayRef<DimExpr> In,
                                     llvm::ArrayRef<int64_t> Target,
                                     Rewriter &RW) {
  if (zeroIsLiteral(N, Target))
    return false;
  std::optional<std::vector<std::pair<int64_t, int64_t>>> InSpans, TSpans;
  spansAtOldSizes(In, Target, InSpans, TSpans);
  // A literal is read from an input dim only where their spans of the
  // running product overlap at the old sizes, as a view keeps the order of
  // elements: the nw = 3 of [12,2,3,2] over [B,2,H,W] is not B (old 3).
  auto MayRead = [&](unsigned I, size_t J) {
    if (!InSpans || !TSpans)
      return true;
    const auto &[A, B] = (*InSpans)[J];
    const auto &[C, D] = (*TSpans)[I];
    return A < D && C < B;
  };
  std::vector<int> Src(Target.size(), -1);
  int MinusOne = -1;
  size_t NextJ = 0;
  DimExpr Known = DimExpr::constant(1);
  std::vector<unsigned> Literals;
  for (unsigned I = 0; I < Target.size(); ++I) {
    if (Target[I] == -1) {
      MinusOne = I;
      continue;
    }
    if (Target[I] == 0) {
      if (I >= In.size())
        return false;
      Known = Known * In[I];
      continue;
    }
    for (size_t J = NextJ; J < In.size(); ++J) {
      if (!In[J].isConstant() && oldValue(In[J]) == Target[I] &&
          MayRead(I, J)) {
        Src[I] = J;
        NextJ = J + 1;
        break;
      }
    }
    if (Src[I] >= 0)
      Known = Known * In[Src[I]];
    else
      Literals.push_back(I);
  }
  DimExpr Product = DimExpr::constant(1);
  for (const DimExpr &E : In)
    Product = Product * E;
  auto Others = [&](int Skip) {
    DimExpr P = Known;
    for (unsigned I : Literals)
      if (static_cast<int>(I) != Skip)
        P = P * DimExpr::constant(Target[I]);
    return P;
  };
  auto Fits = [&](const std::optional<DimExpr> &R) {
    return R && !R->hasUnknown() && isIntegralAtSamples(*R);
  };
  std::vector<int64_t> Lits(Target.begin(), Target.end());
  if (MinusOne < 0) {
    std::optional<DimExpr> Rest = Product.divExact(Others(-1));
    if (!Rest || *Rest != DimExpr::constant(1)) {
      std::vector<unsigned> Candidates, Rational;
      for (unsigned K : Literals) {
        std::optional<DimExpr> R = Product.divExact(Others(K));
        if (!R || R->hasUnknown() || R->isConstant() ||
            oldValue(*R) != Target[K])
          continue;
        (isIntegralAtSamples(*R) ? Candidates : Rational).push_back(K);
      }
      // As for constant targets (repairReshape's FindCandidates).
      std::vector<bool> Static = entriesOfStaticGroups(In, Target);
      if (Candidates.size() == 1 && Static[Candidates.front()] &&
          llvm::any_of(Rational, [&](unsigned K) { return !Static[K]; }))
        return false;
      if (Candidates.size() != 1)
        return false;
      MinusOne = Candidates.front();
      Lits[MinusOne] = -1;
      Literals.erase(llvm::find(Literals, static_cast<unsigned>(MinusOne)));
    }
  }
  if (MinusOne >= 0 && !Fits(Product.divExact(Others(-1))))
    return false;

  // Concat(literal runs, Gather(Shape(data), [j]) ...).
  ShapeVectorBuilder B(RW, N, N.getOperand(1)->getName().str() + "_part",
                       "dims");
  for (unsigned I = 0; I < Target.size(); ++I) {
    if (Src[I] < 0)
      B.literal(Lits[I]);
    else
      B.piece(B.dimOf(N.getOperand(0), Src[I]));
  }
  setShapeOperand(N, 1, B.finish("target_dynamic"), RW);
  ++RepairCounts["computed Reshape target"];
  Repaired = true;
  return true;
}

std::optional<unsigned>
onnxopt::makedynamic::permutedFrom(const Node &N, unsigned Dim, size_t Rank) {
  std::optional<std::vector<int64_t>> Perm = N.getAttrInts("perm");
  int64_t From = Perm ? (Dim < Perm->size() ? (*Perm)[Dim] : -1)
                      : static_cast<int64_t>(Rank) - 1 - Dim;
  if (From < 0)
    return std::nullopt;
  return static_cast<unsigned>(From);
}

/// The axes a Slice cuts (CutsAlongAxes), resolved against \p Rank: its
/// `axes` attribute (opset 1) or constant operand 3, or, without them, the
/// first as many axes as it has starts; every axis when not known.
std::set<unsigned> onnxopt::makedynamic::slicedAxes(const Node &N,
                                                    size_t Rank) {
  std::set<unsigned> All;
  for (unsigned A = 0; A < Rank; ++A)
    All.insert(A);
  std::optional<std::vector<int64_t>> Axes;
  if (getNodeOpset(N) < 10) {
    Axes = N.getAttrInts("axes");
  } else if (N.getNumOperands() > 3 && N.getOperand(3)) {
    Tensor T = getConstantValue(*N.getOperand(3));
    if (!T)
      return All;
    Axes = T.toInt64s();
  } else if (N.getNumOperands() > 1 && N.getOperand(1)) {
    Tensor T = getConstantValue(*N.getOperand(1));
    if (T && T.getDims().size() == 1) {
      Axes.emplace();
      for (int64_t A = 0; A < T.getDims()[0]; ++A)
        Axes->push_back(A);
    }
  }
  if (!Axes)
    return All;
  std::set<unsigned> Cut;
  for (int64_t A : *Axes) {
    std::optional<int64_t> R = resolveAxis(A, int64_t(Rank));
    if (!R)
      return All;
    Cut.insert(unsigned(*R));
  }
  return Cut;
}

/// True if \p A and \p B hold pieces of the same sizes, in order.
static bool samePieces(llvm::ArrayRef<std::pair<Value *, unsigned>> A,
                       llvm::ArrayRef<std::pair<Value *, unsigned>> B,
                       const DimAnalysis &DA) {
  auto Size = [&](const std::pair<Value *, unsigned> &P) {
    const std::vector<DimExpr> *D = DA.getDims(*P.first);
    return D && P.second < D->size() ? std::optional<DimExpr>((*D)[P.second])
                                     : std::nullopt;
  };
  if (A.size() != B.size())
    return false;
  for (size_t I = 0; I < A.size(); ++I) {
    std::optional<DimExpr> SA = Size(A[I]), SB = Size(B[I]);
    if (!SA || !SB || *SA != *SB)
      return false;
  }
  return true;
}

/// Where dim \p D of \p V came from when an earlier view merged several
/// dims into it (the `[-1,24,32]` that folded MobileViT's [B,4,24,32]
/// patches): that view's run of operand dims, each as (operand, dim);
/// empty when no merge is found.
std::vector<std::pair<Value *, unsigned>>
DynamicRewrite::mergedFrom(Value *V, unsigned D, const DimAnalysis &DA) {
  return traceDim(V, D, DA, /*ToConcat=*/false);
}

/// Where dim \p D of \p V was joined from pieces: the operands of a Concat
/// along it (YOLOv8's levels, `cat([f.view(b, no, -1) ...], 2)`), each as
/// (operand, dim), in order; empty when there is none.
std::vector<std::pair<Value *, unsigned>>
DynamicRewrite::concatenatedFrom(Value *V, unsigned D, const DimAnalysis &DA) {
  return traceDim(V, D, DA, /*ToConcat=*/true);
}

/// The dim of a Gather's data that dim \p Dim of its result is, where the
/// gather keeps it whole: a dim before the gathered axis, or one after the
/// dims the indices put in its place (Swin's `qkv[0]` picks q from
/// [3, B*nW, heads, N, d] and keeps the windows dim). None for the indices'
/// dims, and where the ranks do not read as Gather's data[:axis] +
/// indices + data[axis+1:] (GatherElements' result has its indices' shape).
static std::optional<unsigned> gatheredFrom(const Node &Def, unsigned Dim,
                                            const DimAnalysis &DA) {
  if (!hasTrait(Def, GathersAlongAxis) || Def.getNumOperands() != 2 ||
      !Def.getOperand(1) || !Def.getResult(0))
    return std::nullopt;
  const std::vector<DimExpr> *Data = DA.getDims(*Def.getOperand(0));
  const std::vector<DimExpr> *Indices = DA.getDims(*Def.getOperand(1));
  const std::vector<DimExpr> *Out = DA.getDims(*Def.getResult(0));
  if (!Data || !Indices || !Out || Data->empty() ||
      Out->size() + 1 != Data->size() + Indices->size())
    return std::nullopt;
  std::optional<int64_t> Axis =
      resolveAxis(Def.getAttrInt("axis", 0), Data->size());
  if (!Axis)
    return std::nullopt;
  unsigned A = static_cast<unsigned>(*Axis), R = Indices->size();
  if (Dim < A)
    return Dim;
  if (Dim >= A + R)
    return Dim - R + 1;
  return std::nullopt;
}

/// Walks dim \p D of \p V up, breadth first and 64 steps at most, through
/// the nodes that keep each position of it where it was: Transposes (which
/// move the dim), Splits and Slices along other axes, elementwise ops, the
/// batch dims of MatMul, a Conv's or a pool's batch and the spatial dims it
/// keeps at their size, and views that keep the dim whole. Stops at a view
/// whose running products place the dim over a run of its operand's dims
/// (a merge; returned unless \p ToConcat), or, with \p ToConcat, at a Concat
/// along the dim (its operands returned).
std::vector<std::pair<Value *, unsigned>>
DynamicRewrite::traceDim(Value *V, unsigned D, const DimAnalysis &DA,
                         bool ToConcat) {
  const Node *Start = V->getDefiningNode();
  if (!Start)
    return {};
  const Graph *G = Start->getParentGraph();
  llvm::SmallVector<std::pair<Value *, unsigned>, 64> Work{{V, D}};
  std::set<std::pair<const Value *, unsigned>> Seen;
  std::optional<std::vector<std::pair<Value *, unsigned>>> Joined;
  for (size_t Next = 0; Next < Work.size() && Next < 64; ++Next) {
    auto [Cur, Dim] = Work[Next];
    if (!Seen.insert({Cur, Dim}).second)
      continue;
    const std::vector<DimExpr> *Dims = DA.getDims(*Cur);
    const Node *Def = Cur->getDefiningNode();
    if (!Dims || Dim >= Dims->size() || !Def || Def->getParentGraph() != G ||
        Def->getNumOperands() == 0 || !Def->getOperand(0))
      continue;
    DimExpr E = computedDim(DA, *Cur, *Dims, Dim);
    if (hasTrait(*Def, PermutesDims)) {
      if (std::optional<unsigned> From = permutedFrom(*Def, Dim, Dims->size()))
        Work.push_back({Def->getOperand(0), *From});
      continue;
    }
    if (hasTrait(*Def, ViewLike)) {
      Value *X = Def->getOperand(0);
      const std::vector<DimExpr> *XDims = DA.getDims(*X);
      if (!XDims)
        continue;
      std::vector<DimExpr> XD;
      for (unsigned K = 0; K < XDims->size(); ++K)
        XD.push_back(computedDim(DA, *X, *XDims, K));
      // The operand's dims before the run hold as many elements as the
      // result's dims before this one, and the run holds this one's.
      DimExpr Before = DimExpr::constant(1);
      for (unsigned K = 0; K < Dim; ++K)
        Before = Before * computedDim(DA, *Cur, *Dims, K);
      unsigned A = 0;
      DimExpr P = DimExpr::constant(1);
      while (A < XD.size() && P != Before)
        P = P * XD[A++];
      while (A < XD.size() && XD[A] == DimExpr::constant(1))
        ++A;
      if (P != Before)
        continue;
      std::vector<std::pair<Value *, unsigned>> Run;
      DimExpr Q = DimExpr::constant(1);
      for (unsigned B = A; B < XD.size() && Q != E; ++B) {
        Q = Q * XD[B];
        if (XD[B] != DimExpr::constant(1))
          Run.push_back({X, B});
      }
      if (Q != E || Run.empty())
        continue;
      if (Run.size() > 1) {
        if (ToConcat)
          continue;
        return Run;
      }
      Work.push_back(Run.front()); // kept whole: look further up
      continue;
    }
    // Swin's q, k and v split from one [3, B*nW, heads, N, d] tensor keep
    // the windows dim whole.
    if (hasTrait(*Def, SplitsAlongAxis)) {
      std::optional<int64_t> Axis =
          resolveAxis(Def->getAttrInt("axis", 0), Dims->size());
      if (Axis && *Axis != static_cast<int64_t>(Dim))
        Work.push_back({Def->getOperand(0), Dim});
      continue;
    }
    // A Concat along another axis keeps the dim in each operand; one along
    // it is where its pieces were joined.
    if (hasTrait(*Def, Concatenates)) {
      std::optional<int64_t> Axis =
          resolveAxis(Def->getAttrInt("axis", 0), Dims->size());
      std::vector<std::pair<Value *, unsigned>> Pieces;
      for (Value *Op : Def->getOperands())
        if (Op)
          Pieces.push_back({Op, Dim});
      if (Axis && *Axis == static_cast<int64_t>(Dim)) {
        // Two Concats that join the dim from pieces of other sizes leave
        // the pieces not known.
        if (ToConcat && !Joined)
          Joined = std::move(Pieces);
        else if (ToConcat && !samePieces(*Joined, Pieces, DA))
          return {};
      } else if (Axis) {
        Work.append(Pieces.begin(), Pieces.end());
      }
      continue;
    }
    // A matrix product's rows are its first operand's, its columns its
    // second's (the keys of attention scores, position for position).
    if (hasTrait(*Def, BatchedMatrixProduct) && Def->getNumOperands() == 2 &&
        Dim + 2 >= Dims->size() && Dims->size() >= 2) {
      bool Rows = Dim + 2 == Dims->size();
      Value *Op = Def->getOperand(Rows ? 0 : 1);
      const std::vector<DimExpr> *OD = Op ? DA.getDims(*Op) : nullptr;
      if (OD && OD->size() >= 2)
        Work.push_back({Op, unsigned(OD->size() - (Rows ? 2 : 1))});
      continue;
    }
    if (hasTrait(*Def, CutsAlongAxes)) {
      if (slicedAxes(*Def, Dims->size()).count(Dim) == 0)
        Work.push_back({Def->getOperand(0), Dim});
      continue;
    }
    if (std::optional<unsigned> From = gatheredFrom(*Def, Dim, DA)) {
      Work.push_back({Def->getOperand(0), *From});
      continue;
    }
    // A Conv or a pool keeps the batch, and a spatial dim it leaves at its
    // size (a 1x1 kernel, or one padded to the same size) maps each
    // position to the same position.
    bool Keeps =
        hasTrait(*Def, ShapePreserving) ||
        hasTrait(*Def, ElementwiseBroadcasting) ||
        (hasTrait(*Def, BatchedMatrixProduct) && Dim + 2 < Dims->size()) ||
        (hasTrait(*Def, KernelOp) &&
         (Dim == 0 || (Dim >= 2 && hasTrait(*Def, StridedWindow))));
    if (!Keeps)
      continue;
    // The operands that hold the same dim at the same place.
    for (Value *Op : Def->getOperands()) {
      const std::vector<DimExpr> *OD = Op ? DA.getDims(*Op) : nullptr;
      if (OD && OD->size() == Dims->size() &&
          computedDim(DA, *Op, *OD, Dim) == E)
        Work.push_back({Op, Dim});
    }
  }
  if (Joined)
    return *Joined;
  return {};
}

/// The data input's dims with each dim an earlier view merged spread out
/// into the dims it merged (mergedFrom), each with the value and dim that
/// hold it; none when no dim of \p In is such a merge.
std::optional<std::vector<DynamicRewrite::SpreadDim>>
DynamicRewrite::spreadMergedDims(Node &N, llvm::ArrayRef<DimExpr> In) {
  if (!CurrentDA)
    return std::nullopt;
  std::vector<SpreadDim> Dims;
  bool Merged = false;
  for (unsigned I = 0; I < In.size(); ++I) {
    if (!In[I].isConstant() && !In[I].isSymbol()) {
      std::vector<std::pair<Value *, unsigned>> Run =
          mergedFrom(N.getOperand(0), I, *CurrentDA);
      if (!Run.empty()) {
        for (const auto &[V, K] : Run)
          Dims.push_back(
              {computedDim(*CurrentDA, *V, *CurrentDA->getDims(*V), K), V, K});
        Merged = true;
        continue;
      }
    }
    Dims.push_back({In[I], N.getOperand(0), I});
  }
  if (!Merged)
    return std::nullopt;
  return Dims;
}

/// readOverSpread's mark of a -1 that stands for a group of dims.
constexpr int MinusOverGroup = -2;

/// Reads \p Target over the spread dims as a view does: both are cut where
/// their running products meet at the old sizes, smallest groups first (a
/// dim of old size 1 is a group of its own with an entry 1). A group with a
/// dynamic dim must hold one entry per dim, each of the dim's old size or
/// the -1, or be the -1 alone (MinusOverGroup). Returns, per entry, the
/// index of the dim it is there, or -1 for a literal of a constant group,
/// with the old target (the -1 resolved) in \p OldTarget; none where the
/// target cannot be read so.
static std::optional<std::vector<int>>
readOverSpread(llvm::ArrayRef<DynamicRewrite::SpreadDim> Dims,
               llvm::ArrayRef<int64_t> Target, const DynamicRewrite &R,
               std::vector<int64_t> &OldTarget) {
  std::vector<int64_t> OldDims;
  int64_t Total = 1;
  for (const DynamicRewrite::SpreadDim &S : Dims) {
    std::optional<int64_t> V =
        S.E.hasUnknown() ? std::nullopt : R.readingValue(S.E);
    if (!V || *V < 1 || __builtin_mul_overflow(Total, *V, &Total))
      return std::nullopt;
    OldDims.push_back(*V);
  }
  int Minus;
  std::optional<std::vector<int64_t>> Resolved =
      resolvedTarget(Target, Total, Minus);
  if (!Resolved)
    return std::nullopt;
  OldTarget = std::move(*Resolved);
  std::vector<int> Assign(Target.size(), -1);
  std::optional<std::vector<std::pair<size_t, size_t>>> Groups =
      cutWhereProductsMeet(OldDims, OldTarget);
  if (!Groups)
    return std::nullopt;
  size_t I = 0, K = 0;
  for (auto [End, EndK] : *Groups) {
    size_t GI = I, GK = K;
    I = End, K = EndK;
    bool Dynamic = false;
    for (size_t J = GI; J < I; ++J)
      Dynamic |= !Dims[J].E.isConstant();
    if (!Dynamic) {
      for (size_t L = GK; L < K; ++L)
        if (Target[L] == -1)
          return std::nullopt; // a -1 the new sizes would not resolve
      continue;
    }
    // The -1 alone over dims the export kept dynamic (Swin's window count
    // H'*W' beside a batch baked as 1) takes their product at every size.
    if (K - GK == 1 && Target[GK] == -1 && I - GI > 1) {
      Assign[GK] = MinusOverGroup;
      continue;
    }
    if (I - GI != K - GK)
      return std::nullopt;
    for (size_t J = GI, L = GK; J < I; ++J, ++L) {
      if (Target[L] == -1 ? Dims[J].E.isConstant() : OldDims[J] != Target[L])
        return std::nullopt;
      Assign[L] = static_cast<int>(J);
    }
  }
  // Trailing dims or entries of old size 1 (constant) are their own groups.
  for (; I < OldDims.size(); ++I)
    if (OldDims[I] != 1 || !Dims[I].E.isConstant())
      return std::nullopt;
  for (; K < OldTarget.size(); ++K)
    if (Target[K] != 1)
      return std::nullopt;
  return Assign;
}

/// A baked target that splits a dim an earlier view merged: attention's
/// `view(b, heads, d, t)` of keys that were folded to [b*heads, t, d] and
/// transposed, baked at batch 1 as [1,4,12,11] over [4*B,12,11]. The
/// counts cannot tell whether the 1 or the 4 holds B; the merge can: its
/// dims [B,4], in order, have the entries' old sizes, so the entries are
/// those dims (readOverSpread). The first dynamic entry becomes the -1 and
/// the others are read from the values that hold them. Kept: the target
/// already reads so (its -1 the one dynamic entry).
DynamicRewrite::SplitResult
DynamicRewrite::splitMergedDims(Node &N, llvm::ArrayRef<DimExpr> In,
                                llvm::ArrayRef<int64_t> Target, Rewriter &RW) {
  if (zeroIsLiteral(N, Target))
    return SplitResult::None;
  std::optional<std::vector<SpreadDim>> Dims = spreadMergedDims(N, In);
  if (!Dims)
    return SplitResult::None;
  std::vector<int64_t> OldTarget;
  std::optional<std::vector<int>> Assign =
      readOverSpread(*Dims, Target, *this, OldTarget);
  if (!Assign)
    return SplitResult::None;
  std::vector<size_t> DynamicEntries;
  for (size_t K = 0; K < Assign->size(); ++K)
    if ((*Assign)[K] >= 0 && !(*Dims)[(*Assign)[K]].E.isConstant())
      DynamicEntries.push_back(K);
  bool GroupMinus = llvm::is_contained(*Assign, MinusOverGroup);
  if (GroupMinus
          ? DynamicEntries.empty()
          : DynamicEntries.size() == 1 && Target[DynamicEntries.front()] == -1)
    return SplitResult::Kept;
  // One dynamic entry: the -1 among literals, one constant target (named
  // as the other repairs name theirs); more: dims read at run time.
  bool OneConstant = DynamicEntries.size() == 1 && !GroupMinus;
  ShapeVectorBuilder B(RW, N,
                       N.getOperand(1)->getName().str() +
                           (OneConstant ? "_dynamic" : "_part"),
                       "dims");
  for (size_t K = 0; K < Target.size(); ++K) {
    int J = (*Assign)[K];
    if (J == MinusOverGroup)
      B.literal(-1);
    else if (J < 0 || (*Dims)[J].E.isConstant())
      B.literal(OldTarget[K]);
    else if (!GroupMinus && K == DynamicEntries.front())
      B.literal(-1);
    else
      B.piece(B.dimOf((*Dims)[J].V, (*Dims)[J].Dim));
  }
  setShapeOperand(N, 1, B.finish("target_dynamic"), RW);
  ++RepairCounts["merged-dim split"];
  Repaired = true;
  return SplitResult::Rewritten;
}

std::pair<Value *, unsigned>
DynamicRewrite::inputDimOf(llvm::StringRef S) const {
  for (const auto &[Input, Dims] : NewShapes)
    for (unsigned D = 0; D < Dims.size(); ++D)
      if (Dims[D].isSymbol() && Dims[D].getSymbol() == S)
        return {Input, D};
  return {nullptr, 0};
}

/// A non-constant dim of a value computed before \p N (found by walking
/// up from its data operand, a few dozen nodes at most) with the old size
/// \p OldSize, that divides \p Dim into a whole number at every size. Two
/// that differ and that no proof says are equal (a square example: H/4 and
/// W/4 both 16) are told apart by order only where one value has both as
/// its dims: a view keeps the order of dims (Segformer's tokens [B,C,H*W]
/// back to [B,C,H,W], the patch Conv's [B,C,H,W] before them), so the
/// entries take them from the left, the earlier dim first. None otherwise,
/// or when there is none.
std::optional<DynamicRewrite::FactorSource>
DynamicRewrite::findFactorSource(const Node &N, const DimExpr &Dim,
                                 int64_t OldSize) {
  if (!CurrentDA || Dim.isConstant() || Dim.hasUnknown())
    return std::nullopt;
  // What is left of Dim when E is the factor, if E can be it.
  auto RestOf = [&](const DimExpr &E) -> std::optional<DimExpr> {
    if (E.isConstant() || E.hasUnknown() || oldValue(E) != OldSize)
      return std::nullopt;
    std::optional<DimExpr> Q = Dim.divExact(E);
    if (!Q || Q->hasUnknown() || !isIntegralAtSamples(*Q))
      return std::nullopt;
    return Q;
  };
  constexpr unsigned MaxNodes = 64;
  // Every candidate dim of the values walked, nearest first, and the
  // distinct candidates (none proven equal to another).
  std::vector<FactorSource> Seen;
  std::vector<DimExpr> Distinct;
  std::vector<std::pair<Value *, std::vector<DimExpr>>> Visited;
  // Breadth first: the nearest values first.
  llvm::SmallVector<Value *, 64> Work;
  llvm::SmallPtrSet<const Value *, 32> Walked;
  if (Value *D = N.getOperand(0))
    Work.push_back(D);
  for (size_t Next = 0; Next < Work.size() && Walked.size() < MaxNodes;
       ++Next) {
    Value *V = Work[Next];
    if (!Walked.insert(V).second)
      continue;
    if (const std::vector<DimExpr> *Dims = CurrentDA->getDims(*V)) {
      std::vector<DimExpr> Computed;
      for (unsigned K = 0; K < Dims->size(); ++K)
        Computed.push_back(computedDim(*CurrentDA, *V, *Dims, K));
      for (unsigned K = 0; K < Computed.size(); ++K) {
        std::optional<DimExpr> Q = RestOf(Computed[K]);
        if (!Q)
          continue;
        Seen.push_back(FactorSource{V, K, Computed[K], *Q});
        if (llvm::none_of(Distinct, [&](const DimExpr &E) {
              return E == Computed[K] ||
                     CurrentDA->provenEqual(E, Computed[K]);
            }))
          Distinct.push_back(Computed[K]);
      }
      Visited.emplace_back(V, std::move(Computed));
    }
    const Node *Def = V->getDefiningNode();
    if (!Def || Def->getParentGraph() != N.getParentGraph())
      continue;
    for (Value *Op : Def->getOperands())
      if (Op && Op->getDefiningNode())
        Work.push_back(Op);
  }
  if (Distinct.size() <= 1)
    return Seen.empty() ? std::nullopt
                        : std::optional<FactorSource>(Seen.front());
  // Several: the first candidate dim of the nearest value that has every
  // distinct one as a dim of its own.
  for (const auto &[V, Dims] : Visited) {
    const std::vector<DimExpr> &Of = Dims;
    auto Holds = [&](const DimExpr &E) { return llvm::is_contained(Of, E); };
    if (!llvm::all_of(Distinct, Holds))
      continue;
    for (unsigned K = 0; K < Of.size(); ++K)
      if (std::optional<DimExpr> Q = RestOf(Of[K]))
        return FactorSource{V, K, Of[K], *Q};
  }
  return std::nullopt;
}

namespace {
/// What one entry of a rebuilt Reshape target is.
struct TargetPiece {
  enum Kind { Literal, DataDims, InputDim } K = Literal;
  int64_t Number = 0;           ///< Literal
  unsigned First = 0, Last = 0; ///< DataDims: the product of dims [First, Last]
  Value *Input = nullptr;       ///< InputDim: dim Dim of value Input
  unsigned Dim = 0;
  DimExpr Expr; ///< what the entry is, over the input symbols
};
} // namespace

/// The last fallback for a baked Reshape target: read it as torch's view()
/// does, aligning target entries with runs of consecutive input dims at
/// the old sizes. An entry equal to one input dim is that dim; an entry
/// equal to the product of several consecutive input dims (`view(b*t, c,
/// h, w)` baked as [8,16,16,16]) is their product; consecutive entries
/// whose product is one input dim split it (`view(b, t, -1)` over the
/// [b*t, ...] of a frame-folded net), each entry becoming the new input
/// symbol with that old size that divides the dim, when exactly one does;
/// an entry 1 may also be a new axis. A -1 keeps the dims between the
/// entries aligned from the left and from the right. Accepted only when
/// the dim algebra shows the element count is kept at every size.
bool DynamicRewrite::alignReshape(Node &N, llvm::ArrayRef<DimExpr> In,
                                  llvm::ArrayRef<int64_t> Target, Rewriter &RW,
                                  const std::vector<int64_t> *Planned) {
  std::vector<int64_t> Resolved;
  if (!resolveCopies(N, In, Target, Resolved))
    return false;
  Target = Resolved;
  if (llvm::any_of(Target, [](int64_t T) { return T == 0 || T < -1; }))
    return false;
  std::vector<int64_t> OldIn;
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = readingValue(E);
    if (!V || *V < 1)
      return false;
    OldIn.push_back(*V);
  }
  size_t M = Target.size(), Minus = M;
  for (size_t I = 0; I < M; ++I)
    if (Target[I] == -1)
      Minus = I;
  std::vector<std::optional<TargetPiece>> Pieces(M);
  auto DataDims = [&](unsigned First, unsigned Last) {
    TargetPiece P;
    P.K = TargetPiece::DataDims;
    P.First = First;
    P.Last = Last;
    P.Expr = DimExpr::constant(1);
    for (unsigned J = First; J <= Last; ++J)
      P.Expr = P.Expr * In[J];
    if (P.Expr.isConstant()) {
      P.K = TargetPiece::Literal;
      P.Number = P.Expr.getConstant();
    }
    return P;
  };
  // Splits input dim J over entries [From, To]: each entry becomes the one
  // new symbol with its old size that divides the dim, or stays a literal.
  auto Split = [&](unsigned J, size_t From, size_t To) {
    DimExpr Rest = In[J];
    for (size_t I = From; I <= To; ++I) {
      std::optional<std::string> Found;
      bool Ambiguous = false;
      for (const auto &[Sym, OldV] : Old) {
        if (OldV != Target[I] || !Rest.divExact(DimExpr::symbol(Sym)))
          continue;
        std::optional<DimExpr> Q = Rest.divExact(DimExpr::symbol(Sym));
        if (!Q || Q->hasUnknown() || !isIntegralAtSamples(*Q))
          continue;
        Ambiguous |= Found.has_value();
        Found = Sym;
      }
      // Two new symbols had this old size: the output hints' order of
      // symbols (views keep the order of dims) decides, checked at the end
      // by checkHints; without hints the split is refused.
      if (Ambiguous) {
        Found.reset();
        for (const std::string &H : HintOrder) {
          auto It = Old.find(H);
          std::optional<DimExpr> Q = It != Old.end() && It->second == Target[I]
                                         ? Rest.divExact(DimExpr::symbol(H))
                                         : std::nullopt;
          if (Q && !Q->hasUnknown() && isIntegralAtSamples(*Q)) {
            Found = H;
            break;
          }
        }
        if (!Found)
          return false;
      }
      TargetPiece P;
      std::optional<DimExpr> Literal =
          Found ? std::nullopt : Rest.divExact(DimExpr::constant(Target[I]));
      if (!Found && Literal && !Literal->hasUnknown() &&
          isIntegralAtSamples(*Literal)) {
        // A literal part of the split (the heads of `view(b, heads, t, d)`
        // over [b*heads, t, d]) takes its share of the dim as well.
        Rest = *Literal;
        P.Number = Target[I];
        P.Expr = DimExpr::constant(Target[I]);
      } else if (!Found) {
        // A factor of the dim that an earlier value has as a dim of its
        // own: Segformer's `reshape(B, C, H, W)` of its [B, C, H*W]
        // tokens, baked [1,8,16,24], reads H and W off the patch Conv.
        std::optional<FactorSource> F = findFactorSource(N, Rest, Target[I]);
        if (!F)
          return false;
        P.K = TargetPiece::InputDim;
        P.Input = F->V;
        P.Dim = F->Dim;
        P.Expr = F->Expr;
        Rest = F->Rest;
      } else {
        std::tie(P.Input, P.Dim) = inputDimOf(*Found);
        if (!P.Input)
          return false;
        P.K = TargetPiece::InputDim;
        P.Expr = DimExpr::symbol(*Found);
        Rest = *Rest.divExact(P.Expr);
      }
      Pieces[I] = P;
    }
    return Rest.isConstant() && Rest.getConstant() == 1;
  };
  // Aligns entries [From, To) with dims [J, End) in direction Step (+1
  // from the left, -1 from the right); returns the dims left over.
  auto Align = [&](int64_t I, int64_t IEnd, int64_t J, int64_t JEnd,
                   int Step) -> std::optional<std::pair<int64_t, int64_t>> {
    while (I != IEnd) {
      int64_t T = Target[I];
      if (J != JEnd && OldIn[J] == T) {
        Pieces[I] = DataDims(J, J);
        I += Step;
        J += Step;
        continue;
      }
      if (J != JEnd && OldIn[J] % T == 0 && OldIn[J] > T) {
        int64_t P = T, K = I;
        while (P < OldIn[J] && K + Step != IEnd) {
          K += Step;
          P *= Target[K];
        }
        if (P == OldIn[J] && Split(J, std::min(I, K), std::max(I, K))) {
          I = K + Step;
          J += Step;
          continue;
        }
      }
      if (J != JEnd && T % OldIn[J] == 0 && T > OldIn[J]) {
        int64_t P = OldIn[J], L = J;
        while (P < T && L + Step != JEnd) {
          L += Step;
          P *= OldIn[L];
        }
        if (P == T) {
          Pieces[I] = DataDims(std::min(J, L), std::max(J, L));
          I += Step;
          J = L + Step;
          continue;
        }
      }
      // Next to the -1, a literal that divides the dim splits it with the
      // -1: it stays, and the -1 takes the rest of the dim.
      if (J != JEnd && I + Step == IEnd && OldIn[J] % T == 0) {
        TargetPiece P;
        P.Number = T;
        P.Expr = DimExpr::constant(T);
        Pieces[I] = P;
        I += Step;
        continue;
      }
      if (T != 1)
        return std::nullopt;
      TargetPiece One;
      One.Number = 1;
      One.Expr = DimExpr::constant(1);
      Pieces[I] = One;
      I += Step;
    }
    return std::make_pair(J, JEnd);
  };
  int64_t NIn = In.size();
  std::optional<std::pair<int64_t, int64_t>> Left = Align(0, Minus, 0, NIn, +1);
  if (!Left)
    return false;
  int64_t JLeft = Left->first;
  if (Minus < M) {
    std::optional<std::pair<int64_t, int64_t>> Right =
        Align(M - 1, Minus, NIn - 1, JLeft - 1, -1);
    if (!Right)
      return false;
  } else {
    for (int64_t J = JLeft; J < NIn; ++J)
      if (OldIn[J] != 1 || !In[J].isConstant())
        return false;
  }
  // The element count at every size. An entry that copies input dims
  // cancels them on both sides before dividing: the algebra divides only
  // by a single term, and a copied dim is often a sum (the patches plus a
  // class token, floor(H/16)*floor(W/16)+2).
  std::vector<bool> Copied(In.size(), false);
  for (size_t I = 0; I < M; ++I)
    if (I != Minus && Pieces[I]->K == TargetPiece::DataDims)
      for (unsigned J = Pieces[I]->First; J <= Pieces[I]->Last; ++J)
        Copied[J] = true;
  DimExpr Product = DimExpr::constant(1), Known = DimExpr::constant(1);
  for (size_t J = 0; J < In.size(); ++J)
    if (!Copied[J])
      Product = Product * In[J];
  bool Dynamic = false;
  for (size_t I = 0; I < M; ++I) {
    if (I == Minus)
      continue;
    if (Pieces[I]->K != TargetPiece::DataDims)
      Known = Known * Pieces[I]->Expr;
    Dynamic |= Pieces[I]->K != TargetPiece::Literal;
  }
  std::optional<DimExpr> Rest = Product.divExact(Known);
  if (!Dynamic || !Rest || Rest->hasUnknown() || !isIntegralAtSamples(*Rest) ||
      (Minus == M && *Rest != DimExpr::constant(1)))
    return false;
  // A literal entry a consumer multiplies against a weight keeps its
  // size: read as data dims, it would take a dim the weight cannot (the
  // target's own -1 there takes what the model makes it, as before).
  for (size_t I = 0; I < M; ++I)
    if (I != Minus && Pieces[I]->K != TargetPiece::Literal &&
        contractedWithConstant(*N.getResult(0), I, M))
      return false;
  // Next to the other repairs' target (\p Planned), the alignment is used
  // only where it makes an entry follow the sizes that the other kept as a
  // literal: `view(b, t, -1)` over [b*t, ...] counts fine with [1,8,-1]
  // (the -1 grows with b*t), but the frames then end up in the last dim.
  if (Planned) {
    bool Better = false;
    for (size_t I = 0; I < M && I < Planned->size(); ++I)
      Better |= I != Minus && (*Planned)[I] > 0 &&
                Pieces[I]->K != TargetPiece::Literal;
    if (!Better)
      return false;
  }

  // Without a -1, a product of several dims becomes the -1 (the count is
  // kept, checked above): one node instead of a Mul of Gathers.
  for (size_t I = 0; I < M && Minus == M; ++I)
    if (Pieces[I]->K == TargetPiece::DataDims &&
        Pieces[I]->First < Pieces[I]->Last)
      Minus = I;
  ShapeVectorBuilder B(RW, N, N.getOperand(1)->getName().str() + "_part",
                       "dims");
  for (size_t I = 0; I < M; ++I) {
    if (I == Minus) {
      B.literal(-1);
      continue;
    }
    const TargetPiece &P = *Pieces[I];
    if (P.K == TargetPiece::Literal) {
      B.literal(P.Number);
      continue;
    }
    if (P.K == TargetPiece::InputDim) {
      B.piece(B.dimOf(P.Input, P.Dim));
      continue;
    }
    Value *V = B.dimOf(N.getOperand(0), P.First);
    for (unsigned J = P.First + 1; J <= P.Last; ++J)
      V = B.mul(V, B.dimOf(N.getOperand(0), J));
    B.piece(V);
  }
  setShapeOperand(N, 1, B.finish("target_dynamic"), RW);
  ++RepairCounts["aligned Reshape target"];
  Repaired = true;
  return true;
}

namespace {
/// What one entry of a target rebuilt by groupReshape is.
struct GroupedEntry {
  enum Kind {
    Literal,  ///< Number
    Scaled,   ///< Number times the product of data dims Dims
    InputDim, ///< dim Dim of graph input Input (a new symbol)
    Remainder ///< what its group's data dims leave over the other entries
  } K = Literal;
  int64_t Number = 0;
  std::vector<unsigned> Dims;
  Value *Input = nullptr;
  unsigned Dim = 0;
  unsigned Group = 0;
  DimExpr Expr; ///< what the entry is, over the input symbols
};

/// Input dims [FirstDim, EndDim) and target entries [FirstEntry, EndEntry)
/// whose products are equal at the old sizes.
struct ReshapeGroup {
  unsigned FirstDim = 0, EndDim = 0, FirstEntry = 0, EndEntry = 0;
};
} // namespace

/// Running products 1, V[0], V[0]*V[1], ...; std::nullopt on overflow.
static std::optional<std::vector<int64_t>>
runningProducts(llvm::ArrayRef<int64_t> V) {
  std::vector<int64_t> P{1};
  for (int64_t X : V) {
    int64_t Next;
    if (__builtin_mul_overflow(P.back(), X, &Next))
      return std::nullopt;
    P.push_back(Next);
  }
  return P;
}

/// \p Target with each copy (a 0 without allowzero) replaced by the
/// reading value of the input dim it copies (readingValue: a batch the
/// export kept dynamic copied by `[0,8,25,19]`), for the readers that
/// align entries with dims; false where a 0 is literal or copies nothing.
bool DynamicRewrite::resolveCopies(const Node &N, llvm::ArrayRef<DimExpr> In,
                                   llvm::ArrayRef<int64_t> Target,
                                   std::vector<int64_t> &Resolved) const {
  Resolved.assign(Target.begin(), Target.end());
  if (!llvm::is_contained(Target, 0))
    return true;
  if (zeroIsLiteral(N, Target))
    return false;
  std::vector<size_t> Copies;
  for (size_t I = 0; I < Resolved.size(); ++I) {
    if (Resolved[I] != 0)
      continue;
    std::optional<int64_t> V = I < In.size() && !In[I].hasUnknown()
                                   ? readingValue(In[I])
                                   : std::nullopt;
    if (!V || *V < 1)
      return false;
    Resolved[I] = *V;
    Copies.push_back(I);
  }
  // A copy must stay the dim it copies: at the old sizes the entries
  // before it hold what the dims before that dim hold, so no reader can
  // take it for another dim of the same size.
  std::vector<int64_t> OldIn, OldT(Resolved);
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = E.hasUnknown() ? std::nullopt : readingValue(E);
    if (!V || *V < 1)
      return false;
    OldIn.push_back(*V);
  }
  std::optional<std::vector<int64_t>> PIn = runningProducts(OldIn);
  auto Minus = llvm::find(OldT, -1);
  if (PIn && Minus != OldT.end()) {
    *Minus = 1;
    std::optional<std::vector<int64_t>> P = runningProducts(OldT);
    if (!P || P->back() < 1 || PIn->back() % P->back() != 0)
      return false;
    *Minus = PIn->back() / P->back();
  }
  std::optional<std::vector<int64_t>> PT = runningProducts(OldT);
  return PIn && PT && llvm::all_of(Copies, [&](size_t I) {
           return (*PIn)[I] == (*PT)[I];
         });
}

/// True if input dim \p J and target entry \p J (same position) span the
/// same run of elements at the old sizes, alone between two cuts, and the
/// dim is above size 1: the entry reads as a copy of the dim (or, for a
/// static dim, repeats it).
static bool isCopyGroup(llvm::ArrayRef<DimExpr> In,
                        llvm::ArrayRef<int64_t> OldIn,
                        llvm::ArrayRef<int64_t> PIn, llvm::ArrayRef<int64_t> PT,
                        llvm::ArrayRef<int64_t> Cuts, unsigned J) {
  // A static dim that its entry repeats at the same place (the 17 tokens
  // of a ViT at a fixed image size, `view(17, B*heads, d)`) is a group of
  // its own as a copy is.
  if (J + 1 >= PT.size() || OldIn[J] < 2)
    return false;
  bool StartsAtCut =
      J == 0 || std::binary_search(Cuts.begin(), Cuts.end(), PIn[J]);
  return StartsAtCut && PT[J] == PIn[J] && PT[J + 1] == PIn[J + 1];
}

/// The fallback for a baked target that none of the other repairs reads:
/// `reshape(B*C*nh, ph, nw, pw)` over [B,C,H,W] (MobileViT's unfold,
/// baked as [384,2,6,2] over [3,32,8,12]) has two entries that could take
/// the batch. The input dims and the entries are cut where their running
/// products meet at the old sizes (768 and 9216 here: [3,32,8] with
/// [384,2], [12] with [6,2]), as a view keeps the order of elements; each
/// group is then read on its own:
/// - without a dynamic dim, its entries stay literals;
/// - where each dynamic dim lies inside one entry's span of the running
///   product (B inside 384), that entry is the dim times the constant
///   rest (128*B) and the entries without one stay literals;
/// - otherwise the one entry that every dynamic dim reaches and whose
///   share of the group's product is an integer at every allowed size is
///   that share, the others staying literals;
/// - failing that, entries equal to the old size of a new symbol that
///   divides the group's product become that symbol (views keep the order
///   of dims: [3,32,24] over [128*B,6] is [B,32,24]), and one entry of the
///   rest takes what is left.
/// Accepted only when the dim algebra shows each group keeps its element
/// count at every size the symbols allow.
bool DynamicRewrite::groupReshape(Node &N, llvm::ArrayRef<DimExpr> In,
                                  llvm::ArrayRef<int64_t> Target, Rewriter &RW,
                                  std::string *Why) {
  std::vector<int64_t> Resolved;
  if (!resolveCopies(N, In, Target, Resolved))
    return false;
  Target = Resolved;
  if (llvm::any_of(Target, [](int64_t T) { return T == 0 || T < -1; }))
    return false;
  std::vector<int64_t> OldIn;
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = readingValue(E);
    if (!V || *V < 1)
      return false;
    OldIn.push_back(*V);
  }
  std::optional<std::vector<int64_t>> PIn = runningProducts(OldIn);
  if (!PIn)
    return false;
  // The old target, with the -1 at its old value.
  std::vector<int64_t> OldTarget(Target.begin(), Target.end());
  auto MinusIt = llvm::find(OldTarget, -1);
  if (MinusIt != OldTarget.end()) {
    *MinusIt = 1;
    std::optional<std::vector<int64_t>> P = runningProducts(OldTarget);
    if (!P || P->back() == 0 || PIn->back() % P->back() != 0)
      return false;
    *MinusIt = PIn->back() / P->back();
  }
  std::optional<std::vector<int64_t>> PT = runningProducts(OldTarget);
  if (!PT || PT->back() != PIn->back())
    return false;

  // The cut points, and the group of each dim and entry.
  std::vector<int64_t> Cuts;
  std::set_intersection(PIn->begin() + 1, PIn->end(), PT->begin() + 1,
                        PT->end(), std::back_inserter(Cuts));
  Cuts.erase(std::unique(Cuts.begin(), Cuts.end()), Cuts.end());
  // A dynamic dim of old size 1 leaves the running products as they are.
  // First (a batch of 1 before [128,2,6,2]), last, or inside a group, it
  // belongs to that group; at a cut between two groups nothing says which.
  // Except after a copy: where the dim before it is a group of its own,
  // one dynamic dim read by the entry at its own position (the sequence
  // of [S,B,64] over [14,4,16], attention's `view(S, B*heads, d)` baked at
  // batch 1), that entry is the dim, as the copy rule reads it, and holds
  // nothing else: the dim of size 1 goes with the group after the cut.
  auto GroupOf = [&](int64_t End) {
    return static_cast<unsigned>(llvm::lower_bound(Cuts, End) - Cuts.begin());
  };
  std::vector<unsigned> DimGroup;
  for (unsigned I = 0; I < In.size(); ++I)
    DimGroup.push_back(GroupOf((*PIn)[I + 1]));
  for (unsigned I = 1; I < In.size(); ++I)
    if (OldIn[I] == 1 && !In[I].isConstant() && (*PIn)[I] != PIn->back() &&
        std::binary_search(Cuts.begin(), Cuts.end(), (*PIn)[I])) {
      if (!isCopyGroup(In, OldIn, *PIn, *PT, Cuts, I - 1))
        return false;
      ++DimGroup[I];
    }
  std::vector<ReshapeGroup> Groups(Cuts.size());
  for (unsigned I = In.size(); I-- > 0;)
    Groups[DimGroup[I]].FirstDim = I;
  for (unsigned I = 0; I < In.size(); ++I)
    Groups[DimGroup[I]].EndDim = I + 1;
  for (unsigned K = OldTarget.size(); K-- > 0;)
    Groups[GroupOf((*PT)[K + 1])].FirstEntry = K;
  for (unsigned K = 0; K < OldTarget.size(); ++K)
    Groups[GroupOf((*PT)[K + 1])].EndEntry = K + 1;

  std::vector<GroupedEntry> Entries(OldTarget.size());
  for (unsigned K = 0; K < OldTarget.size(); ++K) {
    Entries[K].Number = OldTarget[K];
    Entries[K].Expr = DimExpr::constant(OldTarget[K]);
  }
  auto Fits = [&](const std::optional<DimExpr> &R, int64_t OldValue) {
    return R && !R->hasUnknown() && !R->isConstant() &&
           readingValue(*R) == OldValue && isIntegralAtSamples(*R);
  };
  for (unsigned GI = 0; GI < Groups.size(); ++GI) {
    const ReshapeGroup &G = Groups[GI];
    if (G.FirstEntry >= G.EndEntry)
      continue; // only dims of size 1 (checked constant above)
    DimExpr P = DimExpr::constant(1);
    std::vector<unsigned> Dyn;
    for (unsigned I = G.FirstDim; I < G.EndDim; ++I) {
      P = P * In[I];
      if (!In[I].isConstant())
        Dyn.push_back(I);
    }
    if (Dyn.empty())
      continue;
    auto Overlaps = [&](unsigned I, unsigned K) {
      return (*PIn)[I] < (*PT)[K + 1] && (*PT)[K] < (*PIn)[I + 1];
    };
    // An entry of old size 1 spans nothing; it may hold a symbol of old
    // size 1 of the dim that starts at or runs over its place (the batch
    // 1 of [1,32,24] over [128*B,6]).
    auto Meets = [&](unsigned I, unsigned K) {
      if (OldTarget[K] == 1)
        return (*PIn)[I] <= (*PT)[K] && (*PT)[K] < (*PIn)[I + 1];
      return Overlaps(I, K);
    };
    auto Inside = [&](unsigned I, unsigned K) {
      return (*PT)[K] <= (*PIn)[I] && (*PIn)[I + 1] <= (*PT)[K + 1];
    };
    // Each dynamic dim inside one entry: that entry scales with it.
    bool AllInside = llvm::all_of(Dyn, [&](unsigned I) {
      for (unsigned K = G.FirstEntry; K < G.EndEntry; ++K)
        if (Inside(I, K))
          return true;
      return false;
    });
    if (AllInside) {
      for (unsigned K = G.FirstEntry; K < G.EndEntry; ++K) {
        GroupedEntry &E = Entries[K];
        int64_t OldDyn = 1;
        DimExpr Dims = DimExpr::constant(1);
        for (unsigned I : Dyn)
          if (Inside(I, K)) {
            E.Dims.push_back(I);
            OldDyn *= OldIn[I];
            Dims = Dims * In[I];
          }
        if (E.Dims.empty())
          continue;
        if (OldTarget[K] % OldDyn != 0)
          return false;
        E.K = GroupedEntry::Scaled;
        E.Number = OldTarget[K] / OldDyn;
        E.Expr = DimExpr::constant(E.Number) * Dims;
      }
      continue;
    }
    // The one entry every dynamic dim reaches that can take the rest.
    auto Share = [&](const DimExpr &Rest, unsigned K, unsigned From) {
      DimExpr Others = DimExpr::constant(1);
      for (unsigned L = From; L < G.EndEntry; ++L)
        if (L != K && Entries[L].K == GroupedEntry::Literal)
          Others = Others * DimExpr::constant(OldTarget[L]);
      return Rest.divExact(Others);
    };
    // A share whose old size fits but that is not an integer at every size
    // the symbols may take (W/2 without W%2=0): named if the group fails.
    std::optional<DimExpr> Fractional;
    auto Takes = [&](const DimExpr &Rest, unsigned K) {
      std::optional<DimExpr> R = Share(Rest, K, G.FirstEntry);
      if (Fits(R, OldTarget[K]))
        return true;
      if (R && !R->hasUnknown() && !R->isConstant() &&
          readingValue(*R) == OldTarget[K] && !Fractional)
        Fractional = *R;
      return false;
    };
    auto Refuse = [&](const std::string &Reason) {
      if (Why && Why->empty()) {
        std::string Dims;
        for (unsigned I = G.FirstDim; I < G.EndDim; ++I)
          Dims += (Dims.empty() ? "" : ",") + In[I].str();
        std::vector<int64_t> Part(OldTarget.begin() + G.FirstEntry,
                                  OldTarget.begin() + G.EndEntry);
        *Why = "; the entries " + printInts(Part) + " (over the input's [" +
               Dims + "]) " + Reason;
      }
      return false;
    };
    auto RefuseNoShare = [&]() {
      // A dim of several symbols that entries share (MobileViT's fold of
      // nh*nw patches, (H*W)/4, over [B*C*nh, nw]): its sizes do not say
      // how it splits, and no relation changes that.
      for (unsigned I : Dyn) {
        std::set<std::string> Symbols;
        In[I].forEachSymbol(
            [&](llvm::StringRef S) { Symbols.insert(S.str()); });
        unsigned Reached = 0;
        for (unsigned K = G.FirstEntry; K < G.EndEntry; ++K)
          Reached += Overlaps(I, K);
        if (Symbols.size() > 1 && Reached > 1)
          return Refuse("share the dim " + In[I].str() +
                        ", and nothing says how it splits between them");
      }
      if (Fractional)
        return Refuse("could be read with one of them " + Fractional->str() +
                      ", which is not an integer at every size the symbols "
                      "may take (relations= can say so, e.g. a divisibility "
                      "like W%2=0)");
      return Refuse("have no one entry that can take their dynamic size");
    };
    std::vector<unsigned> Candidates;
    for (unsigned K = G.FirstEntry; K < G.EndEntry; ++K)
      if (llvm::all_of(Dyn, [&](unsigned I) { return Overlaps(I, K); }) &&
          Takes(P, K))
        Candidates.push_back(K);
    DimExpr Rest = P;
    if (Candidates.size() != 1) {
      // Entries that are a new symbol, in order; then one takes the rest. A
      // symbol becomes an entry only where a dim that holds it overlaps the
      // entry's span: the 3 of [12,3] over [B,2,(H*W)/4] is not B.
      Candidates.clear();
      auto Holds = [&](unsigned I, llvm::StringRef Sym) {
        std::optional<DimExpr> Q = In[I].divExact(DimExpr::symbol(Sym));
        return Q && !Q->hasUnknown();
      };
      std::vector<std::string> Assigned;
      for (unsigned K = G.FirstEntry; K < G.EndEntry; ++K) {
        std::optional<std::string> Found;
        for (const auto &[Sym, OldV] : Old) {
          if (OldV != OldTarget[K] ||
              llvm::none_of(Dyn, [&, &Sym = Sym](unsigned I) {
                return Meets(I, K) && Holds(I, Sym);
              }))
            continue;
          std::optional<DimExpr> Q = Rest.divExact(DimExpr::symbol(Sym));
          if (!Q || Q->hasUnknown() || !isIntegralAtSamples(*Q))
            continue;
          if (Found)
            return Refuse("have two new symbols of old size " +
                          std::to_string(OldV) + " for one entry");
          Found = Sym;
        }
        if (!Found) {
          // No symbol of the entry's old size, but a dim computed from the
          // inputs before this node that has it and divides what is left
          // (Segformer exported with a dynamic height: its tokens
          // ceil(H/4)*ceil(W/4) split back as [-1, 9], the 9 the patch
          // Conv's ceil(W/4)).
          auto Merged = [&](unsigned I) {
            return Meets(I, K) && !In[I].isSymbol();
          };
          if (llvm::none_of(Dyn, Merged))
            continue;
          std::optional<FactorSource> From =
              findFactorSource(N, Rest, OldTarget[K]);
          if (!From || llvm::none_of(Dyn, [&](unsigned I) {
                return Merged(I) && In[I].divExact(From->Expr);
              }))
            continue;
          GroupedEntry &E = Entries[K];
          E.K = GroupedEntry::InputDim;
          E.Input = From->V;
          E.Dim = From->Dim;
          E.Expr = From->Expr;
          Rest = From->Rest;
          continue;
        }
        GroupedEntry &E = Entries[K];
        std::tie(E.Input, E.Dim) = inputDimOf(*Found);
        if (!E.Input)
          return false;
        E.K = GroupedEntry::InputDim;
        E.Expr = DimExpr::symbol(*Found);
        Rest = *Rest.divExact(E.Expr);
        Assigned.push_back(*Found);
      }
      // The rest goes to an entry that every dim holding more than an
      // assigned symbol reaches.
      auto Reaches = [&](unsigned K) {
        return llvm::all_of(Dyn, [&](unsigned I) {
          return Overlaps(I, K) ||
                 llvm::any_of(Assigned, [&](const std::string &S) {
                   return In[I] == DimExpr::symbol(S);
                 });
        });
      };
      if (!Rest.isConstant())
        for (unsigned K = G.FirstEntry; K < G.EndEntry; ++K)
          if (Entries[K].K == GroupedEntry::Literal && Reaches(K) &&
              Takes(Rest, K))
            Candidates.push_back(K);
      if (!Rest.isConstant() && Candidates.size() != 1)
        return Candidates.empty()
                   ? RefuseNoShare()
                   : Refuse("have more than one entry that could take their "
                            "dynamic size");
    }
    if (Candidates.size() == 1) {
      GroupedEntry &E = Entries[Candidates.front()];
      E.K = GroupedEntry::Remainder;
      E.Group = GI;
      E.Expr = *Share(Rest, Candidates.front(), G.FirstEntry);
    }
  }

  // Each group keeps its element count at every size: the product of its
  // entries is the product of its dims.
  bool Dynamic = false;
  for (const ReshapeGroup &G : Groups) {
    DimExpr P = DimExpr::constant(1), Q = DimExpr::constant(1);
    for (unsigned I = G.FirstDim; I < G.EndDim; ++I)
      P = P * In[I];
    for (unsigned K = G.FirstEntry; K < G.EndEntry; ++K) {
      Q = Q * Entries[K].Expr;
      Dynamic |= Entries[K].K != GroupedEntry::Literal;
    }
    // Under the relations: (W/2)*2 is W where W%2=0.
    if (P != Q && Domain.normalize(P) != Domain.normalize(Q))
      return false;
  }
  if (!Dynamic)
    return false;

  // The first entry that needs arithmetic becomes the -1, else the first
  // that reads a dim: [1,8,-1] rather than a Concat for [1,8,W]. Only where
  // the dim algebra computes the -1 back to the entry: beside a W/2 it
  // would not divide 2*B*H*W by 4*(W/2), and the dims after it would be
  // unknown.
  DimExpr Total = DimExpr::constant(1);
  for (const DimExpr &E : In)
    Total = Total * E;
  auto Computable = [&](size_t K) {
    DimExpr Others = DimExpr::constant(1);
    for (size_t L = 0; L < Entries.size(); ++L)
      if (L != K)
        Others = Others * Entries[L].Expr;
    std::optional<DimExpr> R = Total.divExact(Others);
    return R && !R->hasUnknown() &&
           (*R == Entries[K].Expr ||
            Domain.normalize(*R) == Domain.normalize(Entries[K].Expr));
  };
  size_t Minus = Entries.size();
  for (size_t K = 0; K < Entries.size() && Minus == Entries.size(); ++K) {
    const GroupedEntry &E = Entries[K];
    if ((E.K == GroupedEntry::Remainder ||
         (E.K == GroupedEntry::Scaled &&
          (E.Dims.size() > 1 || E.Number != 1))) &&
        Computable(K))
      Minus = K;
  }
  for (size_t K = 0; K < Entries.size() && Minus == Entries.size(); ++K)
    if (Entries[K].K != GroupedEntry::Literal && Computable(K))
      Minus = K;
  ++RepairCounts["grouped Reshape target"];
  Repaired = true;
  // Only literals and the -1: a constant, as the other repairs write it.
  bool AllLiteral = true;
  for (size_t K = 0; K < Entries.size(); ++K)
    AllLiteral &= K == Minus || Entries[K].K == GroupedEntry::Literal;
  if (AllLiteral) {
    std::vector<int64_t> New;
    for (size_t K = 0; K < Entries.size(); ++K)
      New.push_back(K == Minus ? -1 : Entries[K].Number);
    RW.setOperand(
        &N, 1,
        RW.createConstant(
            *N.getParentGraph(),
            Tensor::fromInt64s(N.getOperand(1)->getName().str() + "_dynamic",
                               {static_cast<int64_t>(New.size())}, New)));
    return true;
  }
  Value *Data = N.getOperand(0);
  ShapeVectorBuilder B(RW, N, N.getOperand(1)->getName().str() + "_part",
                       "dims");
  auto Product = [&](llvm::ArrayRef<unsigned> Dims, int64_t Factor) {
    Value *V = nullptr;
    for (unsigned I : Dims)
      V = V ? B.mul(V, B.dimOf(Data, I)) : B.dimOf(Data, I);
    return Factor == 1 ? V : B.mul(V, B.constant(Factor));
  };
  for (size_t K = 0; K < Entries.size(); ++K) {
    const GroupedEntry &E = Entries[K];
    if (K == Minus) {
      B.literal(-1);
      continue;
    }
    switch (E.K) {
    case GroupedEntry::Literal:
      B.literal(E.Number);
      break;
    case GroupedEntry::Scaled:
      B.piece(Product(E.Dims, E.Number));
      break;
    case GroupedEntry::InputDim:
      B.piece(B.dimOf(E.Input, E.Dim));
      break;
    case GroupedEntry::Remainder: {
      // The group's dynamic dims times its constant ones, over the other
      // entries: literals and input dims.
      const ReshapeGroup &G = Groups[E.Group];
      std::vector<unsigned> Dyn;
      int64_t Constant = 1, Literals = 1;
      for (unsigned I = G.FirstDim; I < G.EndDim; ++I) {
        if (In[I].isConstant())
          Constant *= OldIn[I];
        else
          Dyn.push_back(I);
      }
      Value *Den = nullptr;
      for (unsigned L = G.FirstEntry; L < G.EndEntry; ++L) {
        const GroupedEntry &O = Entries[L];
        if (L == K)
          continue;
        if (O.K == GroupedEntry::Literal)
          Literals *= O.Number;
        else if (O.K == GroupedEntry::InputDim)
          Den = Den ? B.mul(Den, B.dimOf(O.Input, O.Dim))
                    : B.dimOf(O.Input, O.Dim);
      }
      // 2*B*H / 2 is B*H: the common factor of the constants goes first.
      int64_t Common = std::gcd(Constant, Literals);
      Constant /= Common;
      Literals /= Common;
      Value *Num = Product(Dyn, Constant);
      if (Literals != 1)
        Den = Den ? B.mul(Den, B.constant(Literals)) : B.constant(Literals);
      B.piece(Den ? B.div(Num, Den) : Num);
      break;
    }
    }
  }
  setShapeOperand(N, 1, B.finish("target_dynamic"), RW);
  return true;
}
