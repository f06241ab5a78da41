//===- MakeDynamic.cpp - Turn static input dims into symbols --------------===//
//
// Before:  (float[1,3,640,640] input) => (float[1,16800,4] boxes) {
//            ...  T = Transpose(...)            # float[1,20,20,8]
//            R = Reshape(T, C)  <int64[3] C = {1, -1, 4}> ... }
// After --make-dynamic='shapes=input[N,3,H,W]':
//          (float[N,3,H,W] input) => (float[N,A,4] boxes) {
//            ...  R = Reshape(T, C_1)  <int64[3] C_1 = {0, -1, 4}> ... }
//
// Replaces the chosen dims of main graph inputs by symbols (`shapes=` gives
// a symbol where a dim becomes dynamic and the old number, or '?', where it
// stays), forgets every inferred shape inside the graph, infers again and
// runs the dim algebra, which expresses every dim over the new symbols. Then
// it repairs the constants that baked the old sizes in:
//  - a Reshape with a constant target: a literal at position i becomes 0
//    (copy) when the input's dim i is a new input symbol whose old value is
//    that literal; a literal becomes -1 when it is the only position whose
//    value, as the remaining product of the input dims, is a function of
//    the symbols equal to the literal at the old sizes. The result is
//    checked: the product of the input dims must divide exactly by the
//    copied and literal dims;
//  - a Resize whose `sizes` hold numbers where its input has symbolic dims,
//    when its result feeds an elementwise Add/Sub/Mul/Div whose other operand
//    had exactly those numbers at the old sizes: `sizes` becomes the Shape of
//    that operand (any other size would make the elementwise op fail);
//  - a Reshape target with several baked literals: a Concat of the input's
//    Shape entries and at most one -1, checked by the dim algebra;
//  - a Slice end equal to the old size of a now dynamic dim: INT64_MAX;
//  - an Expand shape entry equal to the old size of the data's dim: 1;
//  - zero initial states of LSTM/GRU/RNN frozen at the old batch: dropped;
//  - a Reshape target read as view() reads it, aligned with runs of the
//    input's dims at the old sizes (merges, splits into input symbols);
//  - a Resize whose sizes are the old input sizes: read from the input;
//  - a constant operand of an elementwise node sized for the old input
//    (grids, anchor grids, masks, positional tables): rebuilt at the new
//    sizes where its values have a form that says how (BakedConstants.cpp);
// The Reshape repairs are in ReshapeTargets.cpp, the baked tensors in
// BakedConstants.cpp; MakeDynamic.h holds the state they share.
// What it cannot repair is reported with the node, the constant and why,
// as are conflicts the dim algebra finds afterwards; the pass then fails
// unless allow-partial=true (the report becomes warnings). Finally dead
// nodes are removed and unify-dims names the derived dims (unify=false
// leaves inference's `unk__N` names).
//
//===----------------------------------------------------------------------===//
#include "BakedConstants.h"
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/ConstantPatterns.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/IR/ShapeVectorBuilder.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

using namespace onnxopt;

#include "MakeDynamic.h"

using namespace onnxopt::makedynamic;

std::string onnxopt::makedynamic::printInts(llvm::ArrayRef<int64_t> V) {
  std::string S = "[";
  for (size_t I = 0; I < V.size(); ++I)
    S += (I ? "," : "") + std::to_string(V[I]);
  return S + "]";
}

/// The dims as computed over the input symbols. A computed expression is
/// kept over the best one of its class: while baked constants remain, the
/// algebra may have merged a symbol with an old size (N with 1).
/// A dim whose recorded type is one of the new symbols is that symbol.
std::vector<DimExpr>
onnxopt::makedynamic::expressInInputs(const DimAnalysis &DA, const Value &V,
                                      llvm::ArrayRef<DimExpr> Dims,
                                      const OldValues &Old) {
  std::vector<DimExpr> Out;
  llvm::ArrayRef<Dim> Recorded = V.getType().getDims();
  for (size_t I = 0; I < Dims.size(); ++I) {
    const DimExpr &E = Dims[I];
    if (I < Recorded.size() && Recorded[I].isSymbol() &&
        Old.count(Recorded[I].getSymbol().str())) {
      Out.push_back(DimExpr::symbol(Recorded[I].getSymbol()));
      continue;
    }
    if (E.isConstant() || DA.isInputExpressible(E)) {
      Out.push_back(E);
      continue;
    }
    DimExpr B = DA.getBest(E);
    Out.push_back(DA.isInputExpressible(B) && !B.isConstant() ? B : E);
  }
  return Out;
}

namespace {

/// The parse-time check of one relations= entry: the parser set-dim-range
/// uses (the symbols are checked when the pass runs).
bool checkRelationEntry(llvm::StringRef Entry, std::string &Error) {
  DimRelation R;
  return parseDimRelation(Entry, R, Error);
}

class MakeDynamicPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "make-dynamic"; }
  llvm::StringRef getDescription() const override {
    return "turn static input dims into symbols and repair the constants "
           "that baked the old sizes in";
  }
  LogicalResult run(Model &M, PassContext &Ctx) override;

private:
  ListOption<ShapeSpec> Shapes{
      *this, "shapes",
      "new input shapes: a symbol makes a dim dynamic, e.g. input[N,3,H,W]; "
      "an output's name gives the dims it must come out with, e.g. "
      "logits[N,T,10] ('?' for any)",
      required()};
  Option<bool> AllowPartial{
      *this, "allow-partial",
      "keep the dims that the model pins (a baked constant, a fixed head) "
      "at their old sizes and make the rest dynamic",
      false};
  Option<bool> Unify{*this, "unify",
                     "name the derived dims with unify-dims at the end", true};
  ListOption<std::string> Relations{
      *this, "relations",
      "relations the new symbols keep, as set-dim-range takes them: A=B, "
      "A%k=0 (a multiple of k), A>=n or A+B<=n; assumed when proving the "
      "model runs, and stored with the dim ranges",
      checkedBy(checkRelationEntry)};
};

} // namespace

/// The least divisor k (up to 128) such that the symbols \p New all being
/// multiples of k, with the relations given, makes \p C hold, printed as
/// relations= takes it (`H%32=0,W%32=0`); empty if there is none. A model
/// that halves and doubles five times needs H%32=0: this says so.
std::string
DynamicRewrite::relationHint(const DimConstraint &C,
                             const std::set<std::string> &New) const {
  std::vector<std::string> Texts;
  for (const DimRelation &R : relationsFor(C, New))
    Texts.push_back(printDimRelation(R));
  return llvm::join(Texts, ",");
}

/// The relations of relationHint (none if there are none). They hold at
/// the old sizes: one that breaks them describes another model.
DimRelations
DynamicRewrite::relationsFor(const DimConstraint &C,
                             const std::set<std::string> &New) const {
  if (C.K != DimConstraint::Equal && C.K != DimConstraint::Broadcast &&
      C.K != DimConstraint::Divisible)
    return {};
  std::map<std::string, int64_t> At(Old.begin(), Old.end());
  for (int64_t K = 2; K <= 128; ++K) {
    DimRelations With = Relations, Added;
    for (const std::string &S : New) {
      DimRelation R;
      R.K = DimRelation::Multiple;
      R.Lhs = S;
      R.Divisor = K;
      With.push_back(R);
      Added.push_back(R);
    }
    if (llvm::all_of(Added,
                     [&](const DimRelation &R) { return R.holds(At); }) &&
        decide(C, SymbolDomain({}, With)) == Verdict::Holds)
      return Added;
  }
  return {};
}

/// Adds \p Added to Relations (a multiple of 8 stands for one of 2) and to
/// the domain the later decisions read.
LogicalResult DynamicRewrite::assumeRelations(Model &M,
                                              const DimRelations &Added,
                                              DiagnosticEngine &Diags) {
  for (const DimRelation &R : Added) {
    auto Implied = [&](const DimRelation &Q) {
      return Q.K == DimRelation::Multiple && R.K == DimRelation::Multiple &&
             Q.Lhs == R.Lhs && Q.Divisor % R.Divisor == 0;
    };
    if (llvm::any_of(Relations, Implied))
      continue;
    llvm::erase_if(Relations, [&](const DimRelation &Q) {
      return Q.K == DimRelation::Multiple && Q.Lhs == R.Lhs &&
             R.Divisor % Q.Divisor == 0;
    });
    Relations.push_back(R);
  }
  return rebuildDomain(M, Diags);
}

/// Domain from the ranges and relations the model stores and Relations.
LogicalResult DynamicRewrite::rebuildDomain(Model &M, DiagnosticEngine &Diags) {
  std::string Error;
  DimRangeMap Ranges;
  DimRelations All;
  if (!getDimRanges(M, Ranges, Error) || !getDimRelations(M, All, Error))
    return emitError(Diags) << Error;
  All.insert(All.end(), Relations.begin(), Relations.end());
  Domain = SymbolDomain(Ranges, All);
  return success();
}

/// The conditions the dynamic model needs that speak about new symbols: a
/// bound on one symbol is kept (the model runs inside it); anything else
/// (an equality, a broadcast against a number, a divisibility) means the
/// symbols it names cannot take every value.
void DynamicRewrite::examineConstraints(const DimAnalysis &DA) {
  for (const DimConstraint &C : DA.getConstraints()) {
    if (C.K == DimConstraint::DataDependent || !DA.isInputExpressible(C.Lhs) ||
        !DA.isInputExpressible(C.Rhs))
      continue;
    std::set<std::string> New;
    for (const std::string &S : C.symbols())
      if (Old.count(S))
        New.insert(S);
    if (New.empty() || alreadyReported(C.N, New))
      continue;
    // What the user's relations guarantee (H%32=0 makes five halvings and
    // doublings give H back) needs nothing more.
    if (Domain.hasRelations() && decide(C, Domain) == Verdict::Holds)
      continue;
    if (std::optional<SymbolBound> B = impliedBound(C, Domain)) {
      auto [It, Inserted] = Bounds.emplace(B->Symbol, *B);
      if (!Inserted) {
        It->second.Min = std::max(It->second.Min, B->Min);
        if (B->Max)
          It->second.Max =
              It->second.Max ? std::min(*It->second.Max, *B->Max) : *B->Max;
      }
      continue;
    }
    std::string Hint = relationHint(C, New);
    Problems.push_back(
        {C.N,
         "the model needs " + C.condition() + " (" + C.Why + "), so " +
             llvm::join(New, ", ") + " cannot" + " take every value" +
             (Domain.hasRelations() ? " allowed by relations=" : "") + "; " +
             (Hint.empty() ? ""
                           : "it holds where " + Hint + " (relations=" + Hint +
                                 " says so), or ") +
             "re-export with dynamic axes, or keep " +
             (New.size() > 1 ? "them" : "it") +
             " static with allow-partial=true",
         New});
  }
}

/// A Resize whose output dim is a literal equal to the old size of a new
/// symbol that its input's dim depends on: an interpolation to the input
/// size (`F.interpolate(x, size=img.shape[2:])`) baked at the old size. The
/// output would keep the old size at every new one.
void DynamicRewrite::examineResizes(Model &M, const DimAnalysis &DA) {
  M.getGraph().walk([&](Node &N) {
    if (!hasTrait(N, Resampling) || !N.getNumOperands() || !N.getOperand(0) ||
        !N.getNumResults() || !N.getResult(0))
      return;
    const std::vector<DimExpr> *In = DA.getDims(*N.getOperand(0));
    const std::vector<DimExpr> *Out = DA.getDims(*N.getResult(0));
    if (!In || !Out || In->size() != Out->size())
      return;
    for (size_t K = 0; K < In->size(); ++K) {
      DimExpr I = DA.getBest((*In)[K]), O = DA.getBest((*Out)[K]);
      if (!O.isConstant())
        continue;
      std::set<std::string> Same;
      I.forEachSymbol([&](llvm::StringRef S) {
        auto It = Old.find(S.str());
        if (It != Old.end() && It->second == O.getConstant())
          Same.insert(S.str());
      });
      if (Same.empty())
        continue;
      Problems.push_back(
          {&N,
           "output dim " + std::to_string(K) + " is the literal " +
               std::to_string(O.getConstant()) + ", the old size of " +
               *Same.begin() + ", while the input's dim is " + I.str() +
               ": a resize to the input size was baked in, and the output "
               "would keep the old size",
           Same});
    }
  });
}

/// The (before, after) split of TensorFlow's "same" padding of a dim of
/// size \p D for a window of extent \p Extent and stride \p Stride: it
/// depends on D modulo the stride only.
static std::pair<int64_t, int64_t> samePadding(int64_t D, int64_t Extent,
                                               int64_t Stride) {
  int64_t Total = std::max<int64_t>(
      (D + Stride - 1) / Stride * Stride - D + Extent - Stride, 0);
  return {Total / 2, Total - Total / 2};
}

/// Pad's constant amounts per axis of its data, as (before, after); empty
/// where they are not constants.
static std::vector<std::pair<int64_t, int64_t>>
constantPads(const Node &Pad, size_t Rank, const DimAnalysis &DA) {
  std::vector<int64_t> Flat;
  if (std::optional<std::vector<int64_t>> A = Pad.getAttrInts("pads")) {
    Flat = *A;
  } else if (Pad.getNumOperands() > 1 && Pad.getOperand(1)) {
    std::optional<std::vector<int64_t>> P =
        getConstantDims(DA.getData(*Pad.getOperand(1)));
    if (!P)
      return {};
    Flat = *P;
  }
  std::vector<int64_t> Axes;
  if (Pad.getNumOperands() > 3 && Pad.getOperand(3)) {
    std::optional<std::vector<int64_t>> A =
        getConstantDims(DA.getData(*Pad.getOperand(3)));
    if (!A)
      return {};
    for (int64_t K : *A)
      Axes.push_back(K < 0 ? K + int64_t(Rank) : K);
  } else {
    for (size_t K = 0; K < Rank; ++K)
      Axes.push_back(int64_t(K));
  }
  if (Flat.size() != 2 * Axes.size())
    return {};
  std::vector<std::pair<int64_t, int64_t>> Pads(Rank, {0, 0});
  for (size_t K = 0; K < Axes.size(); ++K) {
    if (Axes[K] < 0 || Axes[K] >= int64_t(Rank))
      return {};
    Pads[Axes[K]] = {Flat[K], Flat[K + Axes.size()]};
  }
  return Pads;
}

/// A constant Pad before a strided window (Conv, a pool) whose amounts
/// along a now-dynamic dim are TensorFlow's "same" padding at the old size
/// (timm's tf_* models, Keras ports: `pad_same` ahead of a stride-2 conv).
/// The constant reads two ways: fixed amounts (F.pad), or "same" padding
/// that an export at another size computes anew, and which changes with
/// the dim modulo the stride. The two agree where the dim keeps its old
/// remainder; elsewhere the model would compute other values than one of
/// the two dynamic exports, so the relation that keeps it (H%32=0) is
/// stored with the model, as a bound from a table is; where no relation
/// H%k=0 keeps it, the Pad is reported.
void DynamicRewrite::examinePads(Model &M, const DimAnalysis &DA,
                                 DiagnosticEngine &Diags) {
  auto IsWindow = [](const Node &W) { return hasTrait(W, StridedWindow); };
  auto OwnPads = [](const Node &W) {
    std::optional<std::vector<int64_t>> P = W.getAttrInts("pads");
    return P && llvm::any_of(*P, [](int64_t V) { return V != 0; });
  };
  M.getGraph().walk([&](Node &N) {
    if (!N.isOnnxDomain() || !N.getNumOperands() || !N.getOperand(0) ||
        !N.getNumResults() || !N.getResult(0))
      return;
    const std::vector<DimExpr> *In = DA.getDims(*N.getOperand(0));
    if (!In || In->size() < 3)
      return;
    // A converter's window that pads itself asymmetrically (tf2onnx writes
    // "same" at a known size as explicit pads): torch only pads evenly, so
    // an uneven pair is TensorFlow's.
    if (IsWindow(N) && OwnPads(N) &&
        N.getAttrString("auto_pad", "NOTSET") == "NOTSET") {
      std::vector<int64_t> P = *N.getAttrInts("pads");
      size_t Spatial = In->size() - 2;
      if (P.size() != 2 * Spatial)
        return;
      // (-1, -1): an even pair, read as torch's, not examined.
      std::vector<std::pair<int64_t, int64_t>> Pads(In->size(), {-1, -1});
      for (size_t A = 0; A < Spatial; ++A)
        if (P[A] != P[A + Spatial])
          Pads[A + 2] = {P[A], P[A + Spatial]};
      samePadConflict(M, Diags, N, N, *In, Pads, DA);
      return;
    }
    if (!hasTrait(N, PadsEdges) ||
        N.getAttrString("mode", "constant") != "constant")
      return;
    std::vector<std::pair<int64_t, int64_t>> Pads =
        constantPads(N, In->size(), DA);
    if (Pads.empty())
      return;
    for (const Use &U : N.getResult(0)->getUses()) {
      if (U.isGraphOutput() || U.Index != 0 || !IsWindow(*U.User) ||
          OwnPads(*U.User))
        continue;
      if (std::string Why =
              samePadConflict(M, Diags, N, *U.User, *In, Pads, DA);
          !Why.empty())
        return;
    }
  });
}

/// The check of examinePads for one window \p W after Pad \p N (or \p N
/// itself, its own uneven pads): assumes and stores the relation that
/// keeps the old remainder, with a remark, or records a problem and
/// returns it; empty when nothing is left to report.
std::string DynamicRewrite::samePadConflict(
    Model &M, DiagnosticEngine &Diags, const Node &N, const Node &W,
    llvm::ArrayRef<DimExpr> In,
    llvm::ArrayRef<std::pair<int64_t, int64_t>> Pads, const DimAnalysis &DA) {
  size_t Spatial = In.size() - 2;
  std::vector<int64_t> Kernel;
  if (std::optional<std::vector<int64_t>> K = W.getAttrInts("kernel_shape")) {
    Kernel = *K;
  } else if (W.getNumOperands() > 1 && W.getOperand(1)) {
    const std::vector<DimExpr> *WD = DA.getDims(*W.getOperand(1));
    if (!WD || WD->size() != In.size())
      return {};
    for (size_t K = 2; K < WD->size(); ++K) {
      DimExpr E = DA.getBest((*WD)[K]);
      if (!E.isConstant())
        return {};
      Kernel.push_back(E.getConstant());
    }
  }
  std::vector<int64_t> Strides =
      W.getAttrInts("strides").value_or(std::vector<int64_t>(Spatial, 1));
  std::vector<int64_t> Dilations =
      W.getAttrInts("dilations").value_or(std::vector<int64_t>(Spatial, 1));
  if (Kernel.size() != Spatial || Strides.size() != Spatial ||
      Dilations.size() != Spatial)
    return {};
  std::vector<std::string> Dims;
  std::set<std::string> New;
  std::optional<DimConstraint> First;
  for (size_t A = 0; A < Spatial; ++A) {
    DimExpr D = DA.getBest(In[A + 2]);
    std::optional<int64_t> OldD = oldValue(D);
    int64_t S = Strides[A];
    if (D.isConstant() || !OldD || S <= 1 || Pads[A + 2].first < 0)
      continue;
    int64_t Extent = (Kernel[A] - 1) * Dilations[A] + 1;
    if (samePadding(*OldD, Extent, S) != Pads[A + 2])
      continue; // fixed amounts only: no other reading
    bool EveryResidue = true;
    for (int64_t R = 0; R < S; ++R)
      EveryResidue &= samePadding(R, Extent, S) == Pads[A + 2];
    if (EveryResidue)
      continue; // "same" is these amounts at every size
    DimConstraint C;
    C.K = DimConstraint::Divisible;
    C.Lhs = D - DimExpr::constant(*OldD);
    C.Rhs = DimExpr::constant(S);
    C.N = &N;
    if (decide(C, Domain) == Verdict::Holds)
      continue;
    size_t Before = New.size();
    addNewSymbols(D, New);
    if (New.size() == Before)
      continue;
    if (!First)
      First = C;
    Dims.push_back("dim " + std::to_string(A + 2) + " (" + D.str() + ") by (" +
                   std::to_string(Pads[A + 2].first) + ", " +
                   std::to_string(Pads[A + 2].second) + "), 'same' at " +
                   std::to_string(*OldD) + " for stride " + std::to_string(S));
  }
  if (Dims.empty())
    return {};
  std::string Where = &N == &W ? "'"
                               : "' before the " + W.getOpType().str() +
                                     " producing '" +
                                     W.getResult(0)->getName().str() + "'";
  std::string Why =
      "pads " + llvm::join(Dims, "; ") + " of '" +
      N.getOperand(0)->getName().str() + Where +
      ": TensorFlow's 'same' padding at the old size, which an export at "
      "another size computes anew from the size modulo the stride, while "
      "this constant stays; the two agree only at sizes of the old "
      "remainder";
  DimRelations Added = relationsFor(*First, New);
  if (Added.empty() || failed(assumeRelations(M, Added, Diags))) {
    Problems.push_back(
        {&N, Why + ": keep " + llvm::join(New, ", ") + " static", New});
    return Why;
  }
  std::vector<std::string> Texts;
  for (const DimRelation &R : Added)
    Texts.push_back(printDimRelation(R));
  emitRemark(Diags, N) << Why << ": stored relations " << llvm::join(Texts, ",")
                       << " (the sizes they agree at)";
  return {};
}

void DynamicRewrite::addNewSymbols(const DimAnalysis &DA, const Value *V,
                                   std::set<std::string> &Out) const {
  const std::vector<DimExpr> *Dims = V ? DA.getDims(*V) : nullptr;
  if (!Dims)
    return;
  for (const DimExpr &D : *Dims)
    addNewSymbols(DA.getBest(D), Out);
}

/// A node whose op's conditions on dims onnx-opt does not model, reading a
/// value whose dims depend on a new symbol: nothing proves it runs at new
/// sizes (GridSample's grid must have the input's batch, ScatterND's
/// updates must match, Det needs a square matrix, a custom op may need
/// anything). Refused by name rather than assumed.
void DynamicRewrite::examineUncovered(Model &M, const DimAnalysis &DA) {
  M.getGraph().walk([&](Node &N) {
    if (dimRulesCover(N))
      return;
    std::set<std::string> New;
    for (unsigned I = 0; I < N.getNumOperands(); ++I)
      addNewSymbols(DA, N.getOperand(I), New);
    if (New.empty())
      return;
    std::string Names = llvm::join(New, ", ");
    Problems.push_back(
        {&N,
         "onnx-opt has no rule for the conditions " + N.getOpType().str() +
             " puts on its input dims, so it cannot prove the node runs when " +
             Names + (New.size() > 1 ? " change" : " changes") +
             "; re-export with dynamic axes, or keep " +
             (New.size() > 1 ? "them" : "it") +
             " static with allow-partial=true",
         New});
  });
}

/// True if \p V's contents depend on a graph input's contents: a path from
/// an input that passes no Shape or Size (which read only shapes).
static bool readsInputData(const Value *V,
                           llvm::DenseMap<const Value *, bool> &Memo) {
  if (!V || V->isConstant() || V->hasInitializer())
    return false;
  auto It = Memo.find(V);
  if (It != Memo.end())
    return It->second;
  Memo[V] = false; // cycles cannot happen; this stops a revisit
  bool Result = false;
  const Node *Def = V->getDefiningNode();
  if (!Def)
    Result = V->isGraphInput();
  else if (!hasTrait(*Def, ReadsTypeOnly))
    for (unsigned I = 0; I < Def->getNumOperands() && !Result; ++I)
      Result = readsInputData(Def->getOperand(I), Memo);
  return Memo[V] = Result;
}

/// An operand whose values decide \p N's result shape (Resize's scales,
/// Slice's starts, Tile's repeats, Unsqueeze's axes) that the new symbols
/// size: its length is tied to the data's rank or to the other lists, and
/// its values are the model's, so nothing proves they fit a new length.
/// Records the problem; true if there was one.
bool DynamicRewrite::examineValueOperandDims(Node &N, const DimAnalysis &DA) {
  const OpDef *Def = lookupOp(N);
  if (!Def)
    return false;
  std::vector<std::pair<unsigned, std::string>> Lists;
  for (const ShapeOperand &S : Def->ShapeOperands)
    if (S.Index > 0)
      Lists.push_back({S.Index, S.Name});
  if (Def->Axes.K == AxesSource::Input && Def->Axes.Index > 0)
    Lists.push_back({Def->Axes.Index, Def->Axes.Name});
  for (const auto &[Index, Name] : Lists) {
    const Value *V = Index < N.getNumOperands() ? N.getOperand(Index) : nullptr;
    std::set<std::string> New;
    addNewSymbols(DA, V, New);
    if (New.empty())
      continue;
    Problems.push_back(
        {&N,
         "its " + Name + " input '" + V->getName().str() +
             "' holds values that decide the result's shape, and its dims "
             "now depend on " +
             llvm::join(New, ", ") +
             ": its length is tied to the data's rank or to the other lists, "
             "so nothing proves new values fit; keep " +
             (New.size() > 1 ? "them" : "it") + " static",
         New});
    return true;
  }
  return false;
}

/// A shape-deciding operand (Reshape's shape, Expand's shape, Resize's
/// sizes, Squeeze's axes, ...) that the model is given as data, where the
/// node's input depends on a new symbol: whether the data fits a new size
/// is up to whoever feeds it, which nothing here can prove.
void DynamicRewrite::examineDataOperands(Model &M, const DimAnalysis &DA) {
  llvm::DenseMap<const Value *, bool> Memo;
  M.getGraph().walk([&](Node &N) {
    if (!N.isOnnxDomain() || !N.getNumOperands())
      return;
    if (examineValueOperandDims(N, DA))
      return;
    std::set<std::string> New;
    addNewSymbols(DA, N.getOperand(0), New);
    if (New.empty())
      return;
    const OpDef *Def = lookupOp(N);
    for (const ShapeOperand &S :
         Def ? Def->ShapeOperands : llvm::ArrayRef<ShapeOperand>()) {
      if (S.Index == 0 || S.Index >= N.getNumOperands())
        continue;
      const Value *V = N.getOperand(S.Index);
      if (!readsInputData(V, Memo))
        continue;
      Problems.push_back(
          {&N,
           std::string("its ") + S.Name + " input '" + V->getName().str() +
               "' is data the model is given, not computed from shapes, so "
               "nothing proves it fits new values of " +
               llvm::join(New, ", ") + "; keep " +
               (New.size() > 1 ? "them" : "it") +
               " static with allow-partial=true",
           New});
      return;
    }
  });
}

/// Whether the literal entry \p K of the view \p N's result \p Out (in
/// input symbols) is, at the old sizes (stand-ins for the dims the export
/// kept dynamic, readingValue), somewhere other than where \p Sym
/// was: strictly inside the span of one operand dim that holds no symbol
/// (it splits that constant dim), or, where \p Sym is a whole dim of the
/// operand, at another offset than that dim's (the elements before it are
/// not those before \p Sym).
bool DynamicRewrite::notPlaceOf(const DimAnalysis &DA, const Node &N,
                                llvm::ArrayRef<DimExpr> Out, size_t K,
                                const DimExpr &Sym) const {
  const Value *X = N.getOperand(0);
  const std::vector<DimExpr> *XDims = X ? DA.getDims(*X) : nullptr;
  if (!XDims)
    return false;
  std::vector<DimExpr> In = expressInInputs(DA, *X, *XDims, Old);
  int64_t Before = 1;
  for (size_t I = 0; I < K; ++I) {
    std::optional<int64_t> V =
        Out[I].hasUnknown() ? std::nullopt : readingValue(Out[I]);
    if (!V || *V < 1 || __builtin_mul_overflow(Before, *V, &Before))
      return false;
  }
  int64_t Start = 1;
  std::optional<int64_t> SymStart;
  bool Inside = false;
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = E.hasUnknown() ? std::nullopt : readingValue(E);
    int64_t End;
    if (!V || *V < 1 || __builtin_mul_overflow(Start, *V, &End))
      return false;
    if (Start < Before && Before < End && E.isConstant())
      Inside = true;
    if (E == Sym && !SymStart)
      SymStart = Start;
    Start = End;
  }
  return Inside || (SymStart && *SymStart != Before);
}

/// A symbol merged away (issue 31): a view (Reshape, Flatten, ...) whose
/// result has a dim that is the literal old size of a new symbol S while S
/// survives only inside a product with other dims (10*N). At the old sizes
/// the literal was where a split put S back (x.view(b, 10) after a
/// flattening baked as [1,10]); in the dynamic model S stays merged into
/// the other dim and the literal keeps the old size, so an output a dynamic
/// export gives as [N,10] comes out [1,10*N]. The repairs tie a literal to
/// a symbol by its old size, so the tie is lost here: refused at the first
/// such node, naming it. Only for old sizes of 1 (the batch): a 1 next to
/// a merged batch cannot be told from the batch's place, while a larger
/// literal equal to an old size is mostly another dim of that size (the 4
/// box coordinates of a head made dynamic from H = 4). Nor is a 1 that is
/// plainly elsewhere (notPlaceOf): inside a constant operand dim (Swin's
/// [4*B,N,3,1,d] with one head splits the 3*d channels), or at another
/// offset than the operand's own batch dim (Swin's [B,4,1,N,N] viewed as
/// [4*B,1,N,N]: the 1 is the head).
void DynamicRewrite::examineMergedSymbols(Model &M, const DimAnalysis &DA) {
  std::set<std::string> Reported;
  M.getGraph().walk([&](Node &N) {
    if (!hasTrait(N, ViewLike) || !N.getNumResults() || !N.getResult(0))
      return;
    // Only a view to a target has literals: the 1 of Flatten's [B*S, 1]
    // or of an Unsqueeze is computed from the data, not baked.
    if (N.getNumOperands() < 2 || hasTrait(N, InsertsUnitDims) ||
        hasTrait(N, RemovesUnitDims))
      return;
    const std::vector<DimExpr> *Dims = DA.getDims(*N.getResult(0));
    if (!Dims)
      return;
    std::vector<DimExpr> Out = expressInInputs(DA, *N.getResult(0), *Dims, Old);
    for (const auto &[S, OldSize] : Old) {
      if (OldSize != 1 || Reported.count(S))
        continue;
      DimExpr Sym = DimExpr::symbol(S);
      std::optional<size_t> Literal, Merged;
      bool Whole = false;
      for (size_t K = 0; K < Out.size(); ++K) {
        const DimExpr &E = Out[K];
        if (E.isConstant() && E.getConstant() == OldSize && !Literal &&
            !notPlaceOf(DA, N, Out, K, Sym))
          Literal = K;
        bool Mentions = false;
        // A structured binding cannot be captured in C++17 (clang refuses).
        const std::string &Name = S;
        E.forEachSymbol([&](llvm::StringRef T) { Mentions |= T == Name; });
        if (E == Sym)
          Whole = true;
        else if (Mentions && !Merged)
          Merged = K;
      }
      if (!Literal || !Merged || Whole)
        continue;
      Reported.insert(S);
      Problems.push_back(
          {&N,
           "dim " + std::to_string(*Merged) + " of '" +
               N.getResult(0)->getName().str() + "' is " + Out[*Merged].str() +
               ", " + S + " merged into another dim, while dim " +
               std::to_string(*Literal) + " stays the literal " +
               std::to_string(OldSize) + ", the old size of " + S +
               ": at the old sizes that literal was " + S +
               "'s place, so the tie of the output to " + S +
               " is lost here; re-export with dynamic axes, or keep " + S +
               " static with allow-partial=true",
           {S}});
    }
  });
}

/// The node that made dim \p K of \p V the number it is from a baked
/// entry: a Reshape's target or a Slice's bounds, reached up through the
/// ops that carry the dim along (Transposes, elementwise ops and those that
/// keep the shape, reductions over other axes, Slices along other axes,
/// views that keep it where it was). Null where a weight's dim or anything
/// else made it.
static const Node *bakedDimMaker(const Value *V, unsigned K,
                                 const DimAnalysis &DA) {
  for (int Step = 0; Step < 64 && V; ++Step) {
    const Node *D = V->getDefiningNode();
    const std::vector<DimExpr> *Dims = DA.getDims(*V);
    if (!D || !Dims || K >= Dims->size() || D->getNumOperands() == 0)
      return nullptr;
    const DimExpr &E = (*Dims)[K];
    const Value *X = D->getOperand(0);
    const std::vector<DimExpr> *XD = X ? DA.getDims(*X) : nullptr;
    if (hasTrait(*D, PermutesDims)) {
      std::optional<unsigned> From = permutedFrom(*D, K, Dims->size());
      if (!From)
        return nullptr;
      V = X, K = *From;
      continue;
    }
    if (hasTrait(*D, ShapePreserving) ||
        hasTrait(*D, ElementwiseBroadcasting)) {
      // The operand that holds the number at the same place (from the
      // right, as broadcasting aligns them).
      const Value *Next = nullptr;
      unsigned NextK = 0;
      for (const Value *Op : D->getOperands()) {
        const std::vector<DimExpr> *OD = Op ? DA.getDims(*Op) : nullptr;
        size_t FromRight = Dims->size() - K;
        if (OD && OD->size() >= FromRight &&
            (*OD)[OD->size() - FromRight] == E) {
          Next = Op, NextK = unsigned(OD->size() - FromRight);
          break;
        }
      }
      if (!Next)
        return nullptr;
      V = Next, K = NextK;
      continue;
    }
    if (hasTrait(*D, Reduction)) {
      std::optional<std::vector<int64_t>> Axes =
          readAxes(*D, lookupOp(*D), [&](unsigned I) {
            Tensor T = I < D->getNumOperands() && D->getOperand(I)
                           ? getConstantValue(*D->getOperand(I))
                           : Tensor();
            return T ? T.toInt64s() : std::nullopt;
          });
      if (!Axes || !XD || Axes->empty())
        return nullptr;
      std::set<unsigned> Reduced;
      for (int64_t A : *Axes)
        if (std::optional<int64_t> R = resolveAxis(A, XD->size()))
          Reduced.insert(static_cast<unsigned>(*R));
      if (D->getAttrInt("keepdims", 1)) {
        if (Reduced.count(K))
          return nullptr;
      } else {
        unsigned Kept = 0, At = 0;
        for (; At < XD->size(); ++At)
          if (!Reduced.count(At) && Kept++ == K)
            break;
        K = At;
      }
      V = X;
      continue;
    }
    if (hasTrait(*D, CutsAlongAxes)) {
      if (!XD || XD->size() != Dims->size())
        return nullptr;
      if (slicedAxes(*D, Dims->size()).count(K))
        return D;
      V = X;
      continue;
    }
    if (hasTrait(*D, ViewLike) && D->getNumOperands() >= 2 &&
        !hasTrait(*D, InsertsUnitDims) && !hasTrait(*D, RemovesUnitDims)) {
      // A view that keeps the dims up to this one where they were passes
      // the number on (a classifier's `view(b, 10)` of its [B,10] logits).
      bool Kept = XD && XD->size() > K;
      for (unsigned J = 0; Kept && J <= K; ++J)
        Kept = (*XD)[J] == (*Dims)[J];
      if (!Kept)
        return D;
      V = X;
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

/// A new symbol an output lost (issue 30): no dim of an output depends on
/// S any more, while one of its dims is a number equal to S's old size that
/// a Reshape's or a Slice's baked entry made. A static export bakes S into
/// tables it sliced at S rows (Transformer-XL's relative positions
/// `pe[:, :2*T-1]`, folded to a [1,19,d] constant at T = 10): nothing
/// downstream ties those rows to S, the views after them read the baked
/// numbers as numbers, and the output comes out running at every size but
/// with S's old size in place of S, whatever the other outputs keep (a
/// layer that returns its input's projection beside the shifted scores).
/// Refused at the node that made the number. An output that keeps S
/// somewhere (a head's [B, cells(H), 4] made dynamic from H = 4) or a
/// number a weight made (a classifier's 10 classes pooled over a length of
/// 10) is left alone.
void DynamicRewrite::examineVanishedSymbols(Model &M, const DimAnalysis &DA) {
  std::set<std::string> Reported;
  for (const Value *V : M.getGraph().getOutputs()) {
    const std::vector<DimExpr> *D = V ? DA.getDims(*V) : nullptr;
    if (!D)
      continue;
    std::vector<DimExpr> Out = expressInInputs(DA, *V, *D, Old);
    std::set<std::string> Kept;
    for (const DimExpr &E : Out)
      E.forEachSymbol([&](llvm::StringRef S) { Kept.insert(S.str()); });
    for (unsigned K = 0; K < Out.size(); ++K) {
      if (!Out[K].isConstant() || Out[K].getConstant() <= 1)
        continue;
      for (const auto &[S, OldSize] : Old)
        if (OldSize == Out[K].getConstant() && !Kept.count(S) &&
            !Reported.count(S) && reportVanished(V, K, S, OldSize, DA))
          Reported.insert(S);
    }
  }
}

/// Reports dim \p K of output \p V, the number \p OldSize, as \p S
/// baked by the node that made it (examineVanishedSymbols); false where no
/// Reshape or Slice entry made it or that node is already reported.
bool DynamicRewrite::reportVanished(const Value *V, unsigned K,
                                    const std::string &S, int64_t OldSize,
                                    const DimAnalysis &DA) {
  const Node *Maker = bakedDimMaker(V, K, DA);
  // A node already reported (a target no rule read) says enough.
  if (!Maker ||
      llvm::any_of(Problems, [&](const Problem &P) { return P.N == Maker; }))
    return false;
  Problems.push_back(
      {Maker,
       "dim " + std::to_string(K) + " of output '" + V->getName().str() +
           "' is " + std::to_string(OldSize) + ", the old size of " + S +
           ", made by this node's baked entry, and the output does not "
           "depend on " +
           S + " any more: the export may have baked " + S +
           " where it computed from it (a table sliced to its rows); "
           "re-export with dynamic axes, or keep " +
           S + " static with allow-partial=true",
       {S}});
  return true;
}

/// Refuses the new symbols dim \p E of an operand of \p N grows with,
/// saying \p Why and how to go on; false where \p E grows with none or they
/// are already reported at \p N.
bool DynamicRewrite::reportGrowingDim(const Node &N, const DimExpr &E,
                                      const std::string &Why) {
  std::set<std::string> Pins = newSymbols(E);
  if (Pins.empty() || alreadyReported(&N, Pins))
    return false;
  Problems.push_back({&N,
                      Why + "; re-export with dynamic axes, or keep " +
                          llvm::join(Pins, ", ") +
                          " static with allow-partial=true",
                      Pins});
  return true;
}

/// True if a Resize whose sizes are computed in the graph (read from a
/// Shape at run time) reads \p V through a few convs, elementwise ops and
/// activations.
static bool resizedToComputedSize(const Value &V) {
  std::vector<const Value *> Work{&V};
  std::set<const Value *> Seen;
  while (!Work.empty() && Seen.size() < 16) {
    const Value *X = Work.back();
    Work.pop_back();
    if (!Seen.insert(X).second)
      continue;
    for (const Use &U : X->getUses()) {
      if (U.isGraphOutput() || !U.User)
        continue;
      const Node &User = *U.User;
      if (hasTrait(User, Resampling)) {
        const Value *Sizes =
            User.getNumOperands() > 3 ? User.getOperand(3) : nullptr;
        if (U.Index == 0 && Sizes && !getConstantValue(*Sizes))
          return true;
        continue;
      }
      if ((hasTrait(User, ShapePreserving) ||
           hasTrait(User, ElementwiseBroadcasting) ||
           hasTrait(User, KernelOp)) &&
          User.getResult(0))
        Work.push_back(User.getResult(0));
    }
  }
  return false;
}

/// A pool whose window and stride are the same number k > 2 over a dim that
/// grows, with k windows or fewer at the old size n (k * m = n, m <= k):
/// torch exports an adaptive pool to m (PSPNet's bins, a pyramid pooling
/// module) at a fixed size this way, window n / m. At another size the
/// fixed window gives another number of windows, where the adaptive pool
/// keeps m and widens them, and a Resize back to a size read at run time
/// (the input's) hides the difference (exited 0 with a different result).
/// Nothing tells it from a plain pool of window k: the node is named where
/// such a Resize reads the pooled map. Elsewhere the count of windows
/// shows (a pool by 32 upsampled by 32, a Linear after it), and windows of
/// 2 and overlapping ones are left.
void DynamicRewrite::examineAdaptiveWindows(Model &M, const DimAnalysis &DA) {
  M.getGraph().walk([&](Node &N) {
    // A strided window without weights: a pool.
    if (!N.isOnnxDomain() || !hasTrait(N, StridedWindow) ||
        N.getNumOperands() != 1 || !N.getOperand(0) || !N.getResult(0) ||
        N.getAttrString("auto_pad", "NOTSET") != "NOTSET" ||
        !resizedToComputedSize(*N.getResult(0)))
      return;
    std::optional<std::vector<int64_t>> Kernel = N.getAttrInts("kernel_shape");
    std::optional<std::vector<int64_t>> Strides = N.getAttrInts("strides");
    std::optional<std::vector<int64_t>> Pads = N.getAttrInts("pads");
    const std::vector<DimExpr> *D = DA.getDims(*N.getOperand(0));
    if (!Kernel || !Strides || Strides->size() != Kernel->size() || !D ||
        D->size() != Kernel->size() + 2 ||
        (Pads && llvm::any_of(*Pads, [](int64_t P) { return P != 0; })))
      return;
    std::vector<DimExpr> In = expressInInputs(DA, *N.getOperand(0), *D, Old);
    for (size_t A = 0; A < Kernel->size(); ++A) {
      const DimExpr &E = In[A + 2];
      int64_t K = (*Kernel)[A];
      std::optional<int64_t> Size = oldValue(E);
      if (E.isConstant() || E.hasUnknown() || !Size || K <= 2 ||
          (*Strides)[A] != K || *Size % K != 0 || *Size / K > K)
        continue;
      if (reportGrowingDim(
              N, E,
              "window and stride " + std::to_string(K) + " over dim " +
                  std::to_string(A + 2) + " of '" +
                  N.getOperand(0)->getName().str() + "' (" + E.str() +
                  ", old size " + std::to_string(*Size) + ") give " +
                  std::to_string(*Size / K) +
                  " windows, as an adaptive pool to that many exported at "
                  "the old size does; at other sizes the window would stay " +
                  std::to_string(K) +
                  " where the adaptive pool widens it, and nothing tells "
                  "them apart"))
        break;
    }
  });
}

/// \p C as the model's constant reads (7 digits).
static std::string printNumber(double C) {
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.7g", C);
  return Buf;
}

/// The number a one-element floating-point constant \p V holds.
static std::optional<double> scalarFloat(const Value *V) {
  Tensor T = V ? getConstantValue(*V) : Tensor();
  if (!T || T.getNumElements() != 1)
    return std::nullopt;
  auto Type = static_cast<ElementType>(T.getElemType());
  if (Type != ElementType::Float && Type != ElementType::Double &&
      Type != ElementType::Float16 && Type != ElementType::BFloat16)
    return std::nullopt;
  std::optional<std::vector<double>> D = T.toDoubles();
  if (!D || D->size() != 1 || !std::isfinite(D->front()))
    return std::nullopt;
  return D->front();
}

/// The dims reduction \p R reduces, by position in its operand of rank
/// \p Rank (every dim where the axes are absent or empty); empty where the
/// axes are computed or the reduction is a no-op.
static std::vector<unsigned> reducedDims(const Node &R, size_t Rank) {
  std::optional<std::vector<int64_t>> Axes =
      readAxes(R, lookupOp(R), [&](unsigned I) {
        Tensor T = I < R.getNumOperands() && R.getOperand(I)
                       ? getConstantValue(*R.getOperand(I))
                       : Tensor();
        return T ? T.toInt64s() : std::nullopt;
      });
  bool AxesOperand = R.getNumOperands() > 1 && R.getOperand(1);
  if (!Axes && AxesOperand)
    return {};
  std::vector<unsigned> Dims;
  if (!Axes || Axes->empty()) {
    if (R.getAttrInt("noop_with_empty_axes", 0))
      return {};
    for (size_t K = 0; K < Rank; ++K)
      Dims.push_back(unsigned(K));
    return Dims;
  }
  for (int64_t A : *Axes)
    if (std::optional<int64_t> K = resolveAxis(A, int64_t(Rank)))
      Dims.push_back(unsigned(*K));
    else
      return {};
  return Dims;
}

/// True if \p C is a count \p N of reduced elements as a mean or an
/// unbiased variance scales by it: N, N - 1, their inverses, N / (N - 1)
/// or (N - 1) / N.
static bool isCountScale(double C, int64_t N) {
  if (N < 2 || C == 1.0)
    return false;
  double Count = double(N);
  for (double Form : {Count, Count - 1, 1 / Count, 1 / (Count - 1),
                      Count / (Count - 1), (Count - 1) / Count})
    if (std::fabs(C - Form) <= 1e-6 * std::fabs(Form))
      return true;
  return false;
}

/// A float scalar that scales a reduction over a dim that grows, equal to
/// the count of elements it reduced at the old sizes (or that count less
/// one, or either's inverse or ratio): a static export, or a model frozen
/// and folded, bakes `x.sum(-1) / x.shape[-1]` and torch's unbiased
/// variance (a mean times n / (n - 1)) so, and at another size the old
/// count stays where the new one belongs (exited 0 with a wrong result). A
/// fixed scale of a reduction over a growing dim equal to such a count by
/// chance is rare; nothing tells the two apart, so the node is named and
/// the symbols the reduced dims grow with are refused. Scales of
/// reductions over fixed dims (LayerNorm's hidden size) are left.
void DynamicRewrite::examineCountScales(Model &M, const DimAnalysis &DA) {
  M.getGraph().walk([&](Node &N) {
    if (!N.isOnnxDomain() || !hasTrait(N, Arithmetic) ||
        N.getNumOperands() != 2)
      return;
    for (unsigned I = 0; I < 2; ++I) {
      std::optional<double> C = scalarFloat(N.getOperand(I));
      if (C && reportCountScale(N, *C, N.getOperand(1 - I), DA))
        return;
    }
  });
}

/// Walks from \p X, which node \p N scales by \p C, back through other
/// scalings by float constants to the reductions that made it, and refuses
/// the growing dims reduced where \p C is a scale of their count.
bool DynamicRewrite::reportCountScale(const Node &N, double C, const Value *X,
                                      const DimAnalysis &DA) {
  int64_t Count = 1;
  DimExpr Reduced = DimExpr::constant(1);
  for (int Step = 0; X && Step < 6; ++Step) {
    const Node *P = X->getDefiningNode();
    if (!P || !P->isOnnxDomain())
      return false;
    if (hasTrait(*P, Arithmetic) && P->getNumOperands() == 2) {
      // Another scaling by a constant: (mean * n) / (n - 1).
      bool Left = scalarFloat(P->getOperand(1)).has_value();
      if (!Left && !scalarFloat(P->getOperand(0)))
        return false;
      X = P->getOperand(Left ? 0 : 1);
      continue;
    }
    if (!hasTrait(*P, Reduction) || !P->getOperand(0))
      return false;
    const std::vector<DimExpr> *D = DA.getDims(*P->getOperand(0));
    if (!D)
      return false;
    std::vector<DimExpr> In = expressInInputs(DA, *P->getOperand(0), *D, Old);
    std::vector<unsigned> Dims = reducedDims(*P, In.size());
    if (Dims.empty())
      return false;
    for (unsigned K : Dims) {
      std::optional<int64_t> Size = oldValue(In[K]);
      if (In[K].hasUnknown() || !Size ||
          __builtin_mul_overflow(Count, *Size, &Count))
        return false;
      Reduced = Reduced * In[K];
    }
    if (!newSymbols(Reduced).empty() && isCountScale(C, Count))
      return reportGrowingDim(
          N, Reduced,
          "the constant " + printNumber(C) + " scaling '" +
              P->getResult(0)->getName().str() + "' (" + P->getOpType().str() +
              " over " + Reduced.str() + ", " + std::to_string(Count) +
              " elements at the old sizes) is a count of the elements it "
              "reduced, as a mean or an unbiased variance folded at the old "
              "sizes holds it; at other sizes the count changes, and nothing "
              "tells a fixed scale from it");
    // A reduction of a reduction: the counts multiply.
    X = P->getOperand(0);
  }
  return false;
}

/// The constant bounds of Slice \p N, each with its axis resolved against
/// \p Rank: each axis's start, then its end (operands from opset 10,
/// attributes before).
/// Empty where any is not a constant or a step is not positive (a
/// backwards slice counts from the end).
static std::vector<std::pair<unsigned, int64_t>> constantBounds(const Node &N,
                                                                size_t Rank) {
  auto Ints = [&](unsigned I,
                  llvm::StringRef Attr) -> std::optional<std::vector<int64_t>> {
    if (getNodeOpset(N) < 10)
      return N.getAttrInts(Attr);
    if (N.getNumOperands() <= I || !N.getOperand(I))
      return std::nullopt;
    Tensor T = getConstantValue(*N.getOperand(I));
    return T ? T.toInt64s() : std::nullopt;
  };
  std::optional<std::vector<int64_t>> Starts = Ints(1, "starts"),
                                      Ends = Ints(2, "ends"),
                                      Axes = Ints(3, "axes"),
                                      Steps = Ints(4, "steps");
  if (!Starts || !Ends || Starts->size() != Ends->size() ||
      (Steps && (Steps->size() != Starts->size() ||
                 llvm::any_of(*Steps, [](int64_t S) { return S <= 0; }))))
    return {};
  std::vector<std::pair<unsigned, int64_t>> Bounds;
  for (size_t I = 0; I < Starts->size(); ++I) {
    std::optional<int64_t> Axis = resolveAxis(
        Axes && I < Axes->size() ? (*Axes)[I] : int64_t(I), int64_t(Rank));
    if (!Axis)
      return {};
    Bounds.push_back({unsigned(*Axis), (*Starts)[I]});
    Bounds.push_back({unsigned(*Axis), (*Ends)[I]});
  }
  return Bounds;
}

/// The components of ScatterND \p N's index tuples, computed from
/// constants, that hold the same position in every tuple, each with the
/// data dim it picks (data of rank \p Rank): `y[:, T - 1] = v` writes at
/// (row, 7) for each row at T = 8.
static std::vector<std::pair<unsigned, int64_t>>
fixedTupleComponents(const Node &N, size_t Rank) {
  llvm::DenseMap<const Value *, Tensor> Memo;
  Tensor T = N.getOperand(1)
                 ? evaluateBaked(*N.getOperand(1), getNodeOpset(N), Memo)
                 : Tensor();
  std::optional<std::vector<int64_t>> Tuples = T ? T.toInt64s() : std::nullopt;
  llvm::ArrayRef<int64_t> Shape =
      T ? T.getDimsRef() : llvm::ArrayRef<int64_t>();
  if (!Tuples || Tuples->empty() || Shape.empty() || Shape.back() < 1 ||
      size_t(Shape.back()) > Rank)
    return {};
  size_t K = Shape.back();
  std::vector<std::pair<unsigned, int64_t>> Fixed;
  for (size_t C = 0; C < K; ++C) {
    bool Same = true;
    for (size_t I = C + K; I < Tuples->size() && Same; I += K)
      Same = (*Tuples)[I] == (*Tuples)[C];
    if (Same)
      Fixed.push_back({unsigned(C), (*Tuples)[C]});
  }
  return Fixed;
}

/// A constant position along a dim that grows with new symbols, from the
/// middle of its old size n to its end (a Slice bound b, 2 < b < n and
/// 2*b >= n, a Gather's one index there, TopK's k, or a position every
/// tuple of a ScatterND writes at): a static export
/// writes `x[:, :T // 2]`, `x[:, T - 1]` and `x.topk(T // 2)` with T read
/// as a number and folded, and at another size those read the same
/// positions as before, giving a wrong result, while a fixed position that far
/// in is rare (class and register tokens, shifts and crops sit near the start,
/// or count from the end with negative numbers, which are left alone).
/// Positions up to 2 are read as fixed where the old size is above 4
/// (`x[:, 2:]`, two skipped frames); at 4 or less nothing tells a small
/// fixed position from a size, and every inner one from the middle on is
/// refused.
/// Nothing tells the two apart, so the node is named and the symbols the
/// dim grows with are refused.
void DynamicRewrite::examineBakedPositions(Model &M, const DimAnalysis &DA) {
  M.getGraph().walk([&](Node &N) {
    bool IsSlice = hasTrait(N, CutsAlongAxes);
    bool IsTopK = hasTrait(N, KeepsTopK);
    bool IsScatter = hasTrait(N, ScattersTuples);
    if ((!IsSlice && !IsTopK && !IsScatter && !hasTrait(N, GathersAlongAxis)) ||
        !N.isOnnxDomain() || N.getNumOperands() < (IsSlice ? 1u : 2u) ||
        !N.getOperand(0))
      return;
    const std::vector<DimExpr> *D = DA.getDims(*N.getOperand(0));
    if (!D)
      return;
    std::vector<DimExpr> Data = expressInInputs(DA, *N.getOperand(0), *D, Old);
    std::vector<std::pair<unsigned, int64_t>> Positions;
    if (IsSlice) {
      Positions = constantBounds(N, Data.size());
    } else if (IsScatter) {
      Positions = fixedTupleComponents(N, Data.size());
    } else if (N.getOperand(1)) {
      Tensor T = getConstantValue(*N.getOperand(1));
      std::optional<std::vector<int64_t>> V = T ? T.toInt64s() : std::nullopt;
      std::optional<int64_t> Axis = resolveAxis(
          N.getAttrInt("axis", IsTopK ? -1 : 0), int64_t(Data.size()));
      if (V && V->size() == 1 && Axis)
        Positions.push_back({unsigned(*Axis), V->front()});
    }
    for (size_t I = 0; I < Positions.size(); ++I) {
      const auto &[Axis, P] = Positions[I];
      const DimExpr &E = Data[Axis];
      std::optional<int64_t> Size = oldValue(E);
      if (E.isConstant() || E.hasUnknown() || !Size)
        continue;
      // A Slice that starts at the old size was empty there (`split(x, [2,
      // T - 2])` at T = 2): a fixed start and the size read the same.
      if (IsSlice && I % 2 == 0 && P == *Size && P > 0) {
        if (reportGrowingDim(
                N, E,
                "start " + std::to_string(P) + " along dim " +
                    std::to_string(Axis) + " of '" +
                    N.getOperand(0)->getName().str() + "' (" + E.str() +
                    ") is its old size: the slice was empty there, and "
                    "nothing tells a fixed start from the size"))
          break;
        continue;
      }
      // From the middle on (T // 2 of an odd T too); at an old size of 4
      // or less every inner position might be such a size.
      if (P <= 0 || P >= *Size || 2 * P + 1 < *Size || (P <= 2 && *Size > 4))
        continue;
      if (reportGrowingDim(
              N, E,
              std::string(IsSlice     ? "bound "
                          : IsTopK    ? "k = "
                          : IsScatter ? "written position "
                                      : "index ") +
                  std::to_string(P) + " along dim " + std::to_string(Axis) +
                  " of '" + N.getOperand(0)->getName().str() + "' (" + E.str() +
                  ", old size " + std::to_string(*Size) +
                  ") is a fixed position past the middle of the old size: a "
                  "size the export computed and folded (x[:, :T // 2], "
                  "x[:, T - 1]) reads the same, and nothing tells them "
                  "apart"))
        break;
    }
  });
}

/// True if \p E grows by exactly 1 with each of \p A and \p B around the
/// old sizes (`P+S`, `P+S+1`): the two are lengths laid end to end.
static bool sumsBoth(const DimExpr &E, const std::string &A,
                     const std::string &B, const OldValues &Old) {
  auto At = [&](int64_t DA, int64_t DB) {
    return E.evaluate([&](llvm::StringRef S) -> std::optional<int64_t> {
      auto It = Old.find(S.str());
      if (It == Old.end())
        return std::nullopt;
      return It->second + (S == A ? DA : 0) + (S == B ? DB : 0);
    });
  };
  std::optional<int64_t> Base = At(0, 0), NextA = At(1, 0), NextB = At(0, 1),
                         Both = At(3, 2);
  return Base && NextA && NextB && Both && *NextA - *Base == 1 &&
         *NextB - *Base == 1 && *Both - *Base == 5;
}

/// Calls \p F on every node result of the model whose dims the analysis
/// knows, with those dims in the new input symbols (expressInInputs).
void DynamicRewrite::forEachResultDims(
    Model &M, const DimAnalysis &DA,
    llvm::function_ref<void(Node &, const Value &, llvm::ArrayRef<DimExpr>)>
        F) {
  M.getGraph().walk([&](Node &N) {
    for (unsigned R = 0; R < N.getNumResults(); ++R) {
      const Value *V = N.getResult(R);
      if (const std::vector<DimExpr> *Dims = V ? DA.getDims(*V) : nullptr)
        F(N, *V, expressInInputs(DA, *V, *Dims, Old));
    }
  });
}

std::vector<RowOffset> DynamicRewrite::rowOffsets() const {
  std::vector<RowOffset> R;
  for (const auto &[S, OldSize] : Old)
    if (auto [Input, Dim] = inputDimOf(S); Input)
      R.push_back({S, OldSize, Input, Dim});
  return R;
}

/// A baked table kept and sliced along S (no rule recognised its rows), or
/// an affine one rebuilt from a base other than 0 (positions 2, 3, 4),
/// holds the rows of positions from the old offset on: a KV-cache decoder
/// reads its rotary rows at past..past+S-1, baked at the old past. The
/// rebuild follows S only; where another new symbol P is laid end to end
/// with S in some dim (P+S: the cache and the new tokens concatenated), P
/// may offset the rows, and only its old size keeps them right: P is
/// pinned. A table rebuilt from P's size at run time (OffsetBy) needs the
/// opposite: P laid end to end with S, or P is pinned.
void DynamicRewrite::examineSlicedTables(Model &M, const DimAnalysis &DA) {
  if (SlicedTables.empty())
    return;
  std::set<std::string> Seen;
  std::vector<DimExpr> Sums;
  forEachResultDims(M, DA,
                    [&](Node &, const Value &, llvm::ArrayRef<DimExpr> Dims) {
                      for (const DimExpr &E : Dims)
                        if (!E.isConstant() && Seen.insert(E.str()).second)
                          Sums.push_back(E);
                    });
  std::set<std::pair<std::string, std::string>> Reported;
  for (const RowsTable &T : SlicedTables)
    for (const auto &[Other, OldSize] : Old) {
      // A structured binding cannot be captured in C++17 (clang refuses).
      const std::string &S = T.Along, &P = Other;
      const std::string &Said = T.Said;
      if (P == S || Reported.count({S, P}) || (T.FromZero && OldSize != 0))
        continue;
      auto It = llvm::find_if(
          Sums, [&](const DimExpr &E) { return sumsBoth(E, S, P, Old); });
      if (P == T.OffsetBy) {
        // The rows follow P's size: right where P comes before S.
        if (It == Sums.end())
          Problems.push_back(
              {nullptr,
               Said + "; but nothing in the model lays " + P + " and " + S +
                   " end to end, so " + P +
                   "'s size need not be where the rows start: keep " + P +
                   " static with allow-partial=true, or re-export with "
                   "dynamic axes",
               {P}});
        continue;
      }
      if (It == Sums.end())
        continue;
      Reported.insert({S, P});
      Problems.push_back(
          {nullptr,
           Said + "; but the model lays " + P + " and " + S +
               " end to end (a dim " + It->str() +
               "), so the table's rows may be the positions " + P + ".." + P +
               "+" + S + "-1, baked at " + P + "=" + std::to_string(OldSize) +
               ", which a rebuild along " + S + " alone cannot follow: keep " +
               P +
               " static with allow-partial=true, or re-export with dynamic "
               "axes",
           {P}});
    }
}

/// A new symbol that is the first new dim of no input (a sequence, a
/// height, not a batch) and whose old size reads two ways:
/// - 1: a constant baked along it has one row, which broadcasts to any size
///   as well as it stood for row 0 of a table (a rotary row, a 1x1 causal
///   mask, a position index [[0]] that should be Range(S));
/// - the size of a static dim of an input (H exported at 2 beside 2
///   channels) that is also an entry of a constant view target: the entry
///   may be the symbol or the model's own constant (MobileViT's unfold
///   `reshape(B*C*nh, 2, nw, 2)` at H = W = 2 reads as [B*C, H, 1, W] just
///   as well). Where no target holds the size, no view reads it either
///   way (a fixed-height text line [B,1,32,W] exported at W = 32).
/// Nothing in the model tells the readings apart, so the symbol is refused.
/// A batch comes first among an input's new dims ([B,S], [B,3,H,W], an
/// LSTM's [5,B,2]) and what is baked along it (a position table [1,S,D], a
/// class token) is the same for every row, so there a 1 stays broadcast
/// and a size shared with the channels is read as the batch.
void DynamicRewrite::examineUnitSymbols() {
  std::set<std::string> Leads = leadingSymbols();
  std::map<std::string, std::string> Where;
  std::map<int64_t, std::string> StaticSizes;
  for (const auto &[In, Dims] : NewShapes)
    for (size_t K = 0; K < Dims.size(); ++K) {
      std::string At =
          "dim " + std::to_string(K) + " of '" + In->getName().str() + "'";
      if (Dims[K].isKnown() && Dims[K].getValue() > 1 &&
          !PinnedDims.count({In, K}))
        StaticSizes.try_emplace(Dims[K].getValue(), At);
      if (Dims[K].isSymbol() && Old.count(Dims[K].getSymbol().str()) &&
          !Leads.count(Dims[K].getSymbol().str()))
        Where.try_emplace(Dims[K].getSymbol().str(), At);
    }
  for (const auto &[S, At] : Where) {
    int64_t OldSize = Old[S];
    auto Static = StaticSizes.find(OldSize);
    if (OldSize == 1)
      Problems.push_back(
          {nullptr,
           S + " (" + At +
               ") was 1 in the static model: a constant baked "
               "along it has one row, which reads as broadcast to any size "
               "as well as the one row of a table (a rotary row, a 1x1 "
               "mask, the position [[0]]), and nothing tells them apart; "
               "export at a size above 1, or keep " +
               S + " static with allow-partial=true",
           {S}});
    else if (Static != StaticSizes.end() && TargetLiterals.count(OldSize))
      Problems.push_back(
          {nullptr,
           S + " (" + At + ") was " + std::to_string(OldSize) +
               " in the static model, the size of the static " +
               Static->second + ": a literal " + std::to_string(OldSize) +
               " baked in the model may be either, and nothing tells them "
               "apart; export at a size that differs from the static dims, "
               "or keep " +
               S + " static with allow-partial=true",
           {S}});
  }
}

void DynamicRewrite::collectTargetLiterals(Model &M) {
  M.getGraph().walk([&](Node &N) {
    if (!hasTrait(N, ViewLike) || N.getNumOperands() < 2 || !N.getOperand(1) ||
        hasTrait(N, InsertsUnitDims) || hasTrait(N, RemovesUnitDims))
      return;
    Tensor T = getConstantValue(*N.getOperand(1));
    if (std::optional<std::vector<int64_t>> Target =
            T ? T.toInt64s() : std::nullopt)
      TargetLiterals.insert(Target->begin(), Target->end());
  });
}

/// The first dynamic dim of an input is its batch only where it is new: a
/// length made dynamic beside a batch the export kept dynamic
/// ([batch, seq] over [batch, 1]) is no batch.
std::set<std::string> DynamicRewrite::leadingSymbols() const {
  std::set<std::string> Leads;
  for (const auto &[In, Dims] : NewShapes)
    for (const Dim &D : Dims)
      if (D.isSymbol()) {
        if (Old.count(D.getSymbol().str()))
          Leads.insert(D.getSymbol().str());
        break;
      }
  return Leads;
}

/// A derived dim that was 1 in the static model and grows with the new
/// symbols (a YOLO head's grid at 1x1 after three stride-2 Convs of a 5x6
/// image): what the model computes along it was baked with one row, and a
/// row that broadcasts reads the same as row 0 of a table; worse, the
/// grid's one row is all zeros, and `x + 0` folds away, leaving nothing to
/// repair. The same doubt as a new symbol exported at 1 (examineUnitSymbols),
/// so its symbols are refused, the batch excepted (a dim that is the batch
/// alone, or grows with batches only, keeps its 1 broadcast), where
/// - the symbols also size a graph output (the detections, a mask): what
///   was folded there cannot be seen, or
/// - a constant meets the dim with size 1 in an elementwise op (a position
///   table's one row added to a 1x1 map's one token).
/// A classifier whose last map is 1x1 (a ResNet at 32x32) pools the dim
/// away with nothing baked along it, and is kept.
void DynamicRewrite::examineUnitDims(Model &M, const DimAnalysis &DA) {
  std::set<std::string> Leads = leadingSymbols();
  // Each symbol at 3 times its old size plus 2, then at 1024 times plus
  // 1024: a dim that grows with them is no longer 1 at one of them (a
  // stride-8 map of an image of 2 is still 1 at 8).
  auto Grown = [&](const DimExpr &E, int64_t Times) {
    return E.evaluate([&](llvm::StringRef S) -> std::optional<int64_t> {
      auto It = Old.find(S.str());
      if (It == Old.end())
        return std::nullopt;
      return It->second * Times + (Times == 3 ? 2 : Times);
    });
  };
  auto IsUnitDim = [&](const DimExpr &E) {
    return !E.isConstant() && !E.isSymbol() && !E.hasUnknown() &&
           oldValue(E) == 1 && (Grown(E, 3) != 1 || Grown(E, 1024) != 1);
  };
  std::set<std::string> OutputSymbols;
  for (const Value *V : M.getGraph().getOutputs())
    if (const std::vector<DimExpr> *Dims = V ? DA.getDims(*V) : nullptr)
      for (const DimExpr &E : expressInInputs(DA, *V, *Dims, Old))
        E.forEachSymbol(
            [&](llvm::StringRef S) { OutputSymbols.insert(S.str()); });
  std::set<std::string> Seen, Reported;
  forEachResultDims(
      M, DA, [&](Node &N, const Value &V, llvm::ArrayRef<DimExpr> Out) {
        for (size_t K = 0; K < Out.size(); ++K) {
          const DimExpr &E = Out[K];
          if (!IsUnitDim(E) || Seen.count(E.key()))
            continue;
          std::set<std::string> Pins;
          bool Sized = false;
          E.forEachSymbol([&](llvm::StringRef S) {
            if (!Leads.count(S.str()))
              Pins.insert(S.str());
            Sized |= OutputSymbols.count(S.str()) > 0;
          });
          bool Met = hasTrait(N, ElementwiseBroadcasting) &&
                     llvm::any_of(N.getOperands(), [&](const Value *Op) {
                       Tensor C = Op ? getConstantValue(*Op) : Tensor();
                       size_t Rank = C ? C.getDimsRef().size() : 0;
                       return C && Rank + K >= Out.size() &&
                              C.getDimsRef()[Rank + K - Out.size()] == 1;
                     });
          if (Pins.empty() || (!Sized && !Met))
            continue;
          Seen.insert(E.key());
          // One report per set of symbols: a chain of 1x1 maps says it once.
          std::string Names = llvm::join(Pins, ", ");
          if (!Reported.insert(Names).second)
            continue;
          Problems.push_back(
              {&N,
               "dim " + E.str() + " of '" + V.getName().str() +
                   "' was 1 in the static model and grows with " + Names +
                   ": what the model computes along it has one row, which "
                   "reads as broadcast as well as row 0 of a table (a 1x1 "
                   "grid of zeros folds away), and nothing tells them apart; "
                   "export at sizes where it is above 1, or keep " +
                   Names + " static with allow-partial=true",
               Pins});
        }
      });
}

/// True if a dim of \p Dims mentions the symbol \p X.
static bool mentions(llvm::ArrayRef<DimExpr> Dims, llvm::StringRef X) {
  bool Found = false;
  for (const DimExpr &E : Dims)
    E.forEachSymbol([&](llvm::StringRef S) { Found |= S == X; });
  return Found;
}

/// A gather (Gather, GatherElements, GatherND) that picks along a dim of
/// its data that a unit symbol X sizes, with indices and a result that X
/// does not size, reads fixed rows along X: at X = 1 the indices may be
/// a baked arange(X) = [0] (a legacy export's mask read at b*S + j), and
/// every row would read row 0 (see examineBroadcastData).
void DynamicRewrite::examineFixedRows(
    Node &N, llvm::function_ref<std::vector<DimExpr>(const Value *)> DimsOf,
    llvm::function_ref<bool(const Value *, const std::string &)> ReadsSized,
    const std::set<std::string> &Units, std::set<std::string> &Reported) {
  bool AlongAxis = hasTrait(N, GathersAlongAxis);
  if ((!AlongAxis && !hasTrait(N, GathersTuples)) || N.getNumOperands() < 2)
    return;
  std::vector<DimExpr> Data = DimsOf(N.getOperand(0)),
                       Indices = DimsOf(N.getOperand(1)),
                       Result = DimsOf(N.getResult(0));
  int64_t First = 0, Count = 0;
  if (AlongAxis) {
    First = N.getAttrInt("axis", 0);
    First += First < 0 ? static_cast<int64_t>(Data.size()) : 0;
    Count = 1;
  } else if (!Indices.empty() && Indices.back().isConstant()) {
    First = N.getAttrInt("batch_dims", 0);
    Count = Indices.back().getConstant();
  }
  for (int64_t D = std::max<int64_t>(First, 0);
       D < First + Count && D < static_cast<int64_t>(Data.size()); ++D)
    for (const std::string &X : Units) {
      if (Reported.count(X) || !mentions(Data[D], X) ||
          !ReadsSized(N.getOperand(0), X))
        continue;
      if (!Data[D].isSymbol() && reportMergedRows(N, D, Data[D], X)) {
        Reported.insert(X);
        continue;
      }
      if (mentions(Indices, X) || mentions(Result, X))
        continue;
      Reported.insert(X);
      Problems.push_back(
          {&N,
           "picks along dim " + std::to_string(D) + " of '" +
               N.getOperand(0)->getName().str() + "' (" + Data[D].str() +
               "), which grows with " + X + ", with indices that " + X +
               " does not size: it reads fixed rows along " + X + ", and at " +
               X + " = 1 the indices may be a baked arange(" + X +
               ") = [0], giving every row row 0's values; export at " + X +
               " above 1, or keep " + X + " static with allow-partial=true",
           {X}});
    }
}

/// The values component \p D of the index tuples \p V holds, where the
/// graph joins the tuples along their last dim from pieces and the piece
/// that holds \p D, one component wide, repeats a constant (torch writes
/// `Unsqueeze(Expand(arange, shape), -1)` for each): that constant's
/// values. None otherwise.
std::optional<std::vector<int64_t>>
DynamicRewrite::componentValues(const Value &V, int64_t D,
                                const DimAnalysis &DA) {
  std::optional<std::vector<TuplePiece>> Pieces = joinedTuplePieces(V, DA);
  if (!Pieces)
    return std::nullopt;
  for (const TuplePiece &P : *Pieces) {
    if (D < P.Component || D >= P.Component + P.Width)
      continue;
    std::optional<RepeatedConstant> R =
        P.Width == 1
            ? repeatedConstant(*P.V, getNodeOpset(*V.getDefiningNode()),
                               BakedValues)
            : std::nullopt;
    return R ? R->T.toInt64s() : std::nullopt;
  }
  return std::nullopt;
}

/// A scatter of index tuples (ScatterND: `y[:, 0] = 0` writes at (b, 0) for
/// every row b) whose component along a dim that a new symbol X sizes is
/// not sized by X and counts every row of the old size writes fixed rows:
/// the tuples hold the rows of the old size ([0, 1, 2] at X = 3, a baked
/// arange(X) = [0] at 1), so a larger X leaves rows unwritten and a smaller
/// one writes past the data. Tuples computed in the graph are read where
/// each component is a constant repeated (componentValues).
void DynamicRewrite::examineFixedWrites(Model &M, const DimAnalysis &DA) {
  M.getGraph().walk([&](Node &N) {
    if (!hasTrait(N, ScattersTuples) || N.getNumOperands() < 2 ||
        !N.getOperand(0) || !N.getOperand(1))
      return;
    const std::vector<DimExpr> *DD = DA.getDims(*N.getOperand(0));
    const std::vector<DimExpr> *ID = DA.getDims(*N.getOperand(1));
    if (!DD || !ID || ID->empty() || !ID->back().isConstant())
      return;
    std::vector<DimExpr> Data = expressInInputs(DA, *N.getOperand(0), *DD, Old),
                         Indices =
                             expressInInputs(DA, *N.getOperand(1), *ID, Old);
    int64_t Count = Indices.back().getConstant();
    // The tuples as baked: a component that counts every row of its dim's
    // old size (0, 1, 2 at 3; the one 0 at 1) wrote each row; one that
    // holds a fixed position (`y[:, 0]`'s 0 along a length of 8) writes
    // the same position at every size. Tuples the graph joins from pieces,
    // some computed from sizes (a model frozen in its batch only), are read
    // component by component.
    if (Count < 1)
      return;
    Tensor T =
        evaluateBaked(*N.getOperand(1), M.getOpsetVersion(""), BakedValues);
    std::optional<std::vector<int64_t>> Tuples =
        T ? T.toInt64s() : std::nullopt;
    auto CountsRows = [&](int64_t D, int64_t Rows) {
      std::set<int64_t> Seen;
      if (Tuples) {
        for (size_t I = D; I < Tuples->size(); I += Count)
          Seen.insert((*Tuples)[I]);
      } else if (std::optional<std::vector<int64_t>> V =
                     componentValues(*N.getOperand(1), D, DA)) {
        Seen.insert(V->begin(), V->end());
      }
      return !Seen.empty() && int64_t(Seen.size()) == Rows &&
             *Seen.begin() == 0 && *Seen.rbegin() == Rows - 1;
    };
    for (int64_t D = 0; D < Count && D < int64_t(Data.size()); ++D) {
      std::optional<int64_t> Rows = oldValue(Data[D]);
      if (!Rows || !CountsRows(D, *Rows))
        continue;
      for (const auto &[X, OldSize] : Old) {
        // Tuples read piece by piece may be as many as X's rows (expanded
        // to the data's shape) and still hold the old rows' positions.
        if (!mentions(Data[D], X) || (Tuples && mentions(Indices, X)) ||
            alreadyReported(&N, {X}))
          continue;
        Problems.push_back(
            {&N,
             "writes along dim " + std::to_string(D) + " of '" +
                 N.getOperand(0)->getName().str() + "' (" + Data[D].str() +
                 "), which grows with " + X + ", at index tuples that " + X +
                 " does not size: it writes the rows of " + X +
                 "'s old size (a baked arange(" + X +
                 ")), leaving rows unwritten at a larger " + X +
                 " and writing past the data at a smaller one; re-export "
                 "with dynamic axes, or keep " +
                 X + " static with allow-partial=true",
             {X}});
      }
    }
  });
}

/// A gather along a dim that merges the unit symbol X with other dims
/// (a flattened [B*T, C]) reads row b's block only at indices that add
/// b*T: at X = 1 the export computed that offset from arange(X) = [0] and
/// folded it, so the indices it kept (CLIP's and GPT-2's pooling,
/// `x[arange(B), ids.argmax(-1)]` exported as `argmax + [0] * T`) read the
/// first block for every row, whatever dims they have. The in-order reads
/// that say which row each index is for were rewritten as views before
/// (repairComputedGatherInOrder); any gather still along such a dim is
/// refused. False where \p X is already reported at \p N.
bool DynamicRewrite::reportMergedRows(const Node &N, int64_t D,
                                      const DimExpr &Merged,
                                      const std::string &X) {
  if (alreadyReported(&N, {X}) ||
      (N.getResult(0) &&
       RowOffsetGathers.count(N.getResult(0)->getName().str())))
    return false;
  Problems.push_back(
      {&N,
       "picks along dim " + std::to_string(D) + " of '" +
           N.getOperand(0)->getName().str() + "' (" + Merged.str() +
           "), which merges " + X +
           " with other dims: each row's block starts at its row's offset, "
           "which the export computed at " +
           X + " = 1 and may have baked as arange(" + X +
           ") = [0], giving every row the first row's values; export at " + X +
           " above 1, or keep " + X + " static with allow-partial=true",
       {X}});
  return true;
}

/// A value read from the data of an input that a new symbol X of old size
/// 1 sizes (an attention mask [X,S]) whose dim is 1 where X stands in an
/// elementwise op's result broadcasts along X: the export may have baked
/// the indices that picked X's one row (arange(X) folded to [0]), so every
/// row would get row 0's values, and nothing tells that from a value that
/// truly is the same for every row. At other old sizes the baked rows
/// conflict with X and are refused as such; at 1 they broadcast, so X is
/// refused here, the batch too.
void DynamicRewrite::examineBroadcastData(Model &M, const DimAnalysis &DA) {
  std::set<std::string> Units;
  for (const auto &[S, OldSize] : Old)
    if (OldSize == 1)
      Units.insert(S);
  if (Units.empty())
    return;
  Graph &G = M.getGraph();
  // The inputs (a bit each) whose data a value reads, and those each unit
  // symbol sizes.
  llvm::DenseMap<const Value *, uint64_t> Reads;
  std::map<std::string, uint64_t> SizedBy;
  std::vector<const Value *> Inputs;
  for (const std::unique_ptr<Value> &In : G.getInputs()) {
    if (In->isConstant() || Inputs.size() == 64)
      continue;
    uint64_t Bit = uint64_t(1) << Inputs.size();
    Inputs.push_back(In.get());
    Reads[In.get()] = Bit;
    if (const std::vector<DimExpr> *Dims = DA.getDims(*In))
      for (const DimExpr &E : *Dims)
        E.forEachSymbol([&](llvm::StringRef S) {
          if (Units.count(S.str()))
            SizedBy[S.str()] |= Bit;
        });
  }
  std::set<std::string> Reported;
  auto DimsOf = [&](const Value *V) {
    const std::vector<DimExpr> *D = V ? DA.getDims(*V) : nullptr;
    return D ? expressInInputs(DA, *V, *D, Old) : std::vector<DimExpr>();
  };
  for (Node &N : G.getNodes()) {
    uint64_t R = 0;
    if (!hasTrait(N, ReadsTypeOnly))
      for (const Value *Op : N.getOperands())
        if (auto It = Op ? Reads.find(Op) : Reads.end(); It != Reads.end())
          R |= It->second;
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (N.getResult(I))
        Reads[N.getResult(I)] = R;
    if (!R || !N.getNumResults())
      continue;
    examineFixedRows(
        N, DimsOf,
        [&](const Value *V, const std::string &X) {
          auto It = V ? Reads.find(V) : Reads.end();
          return It != Reads.end() && (It->second & SizedBy[X]);
        },
        Units, Reported);
    if (!hasTrait(N, ElementwiseBroadcasting))
      continue;
    std::vector<DimExpr> Out = DimsOf(N.getResult(0));
    for (size_t K = 0; K < Out.size(); ++K) {
      if (!Out[K].isSymbol() || !Units.count(Out[K].getSymbol().str()) ||
          Reported.count(Out[K].getSymbol().str()))
        continue;
      std::string X = Out[K].getSymbol().str();
      for (const Value *Op : N.getOperands()) {
        auto It = Op ? Reads.find(Op) : Reads.end();
        if (It == Reads.end() || !(It->second & SizedBy[X]))
          continue;
        std::vector<DimExpr> OD = DimsOf(Op);
        if (OD.size() + K < Out.size() ||
            OD[OD.size() + K - Out.size()] != DimExpr::constant(1))
          continue;
        const Value *From = nullptr;
        for (size_t B = 0; B < Inputs.size() && !From; ++B)
          if (It->second & SizedBy[X] & (uint64_t(1) << B))
            From = Inputs[B];
        Reported.insert(X);
        Problems.push_back(
            {&N,
             "'" + Op->getName().str() + "' is read from the data of '" +
                 From->getName().str() + "', which " + X +
                 " sizes, but is 1 where " + X +
                 " stands in the result: it "
                 "broadcasts along " +
                 X + ", and at " + X +
                 " = 1 the export may have baked the indices that picked " + X +
                 "'s one row (arange(" + X +
                 ") folded to [0]), giving every row row 0's values; "
                 "export at " +
                 X + " above 1, or keep " + X +
                 " static with allow-partial=true",
             {X}});
        break;
      }
    }
  }
}

/// Bounds with both ends become dim ranges; a least value alone becomes a
/// relation (`H>=7`).
LogicalResult DynamicRewrite::storeBounds(Model &M, DiagnosticEngine &Diags) {
  if (Bounds.empty())
    return success();
  DimRangeMap Ranges;
  std::string Err;
  if (!getDimRanges(M, Ranges, Err))
    return emitError(Diags) << "cannot read the stored dim ranges: " << Err;
  bool Stored = false;
  for (const auto &[Sym, B] : Bounds) {
    if (!Old.count(Sym))
      continue;
    if (!B.Max) {
      // No range without a maximum: the least value becomes a relation,
      // which storeRelations writes beside the ranges.
      // H%2=0 alone keeps H >= 2. (A structured binding cannot be
      // captured in C++17: clang refuses.)
      const std::string &Name = Sym;
      int64_t Least = B.Min;
      bool Implied =
          Least <= 1 || llvm::any_of(Relations, [&](const DimRelation &Q) {
            return Q.K == DimRelation::Multiple && Q.Lhs == Name &&
                   Q.Divisor >= Least;
          });
      if (Implied)
        continue;
      DimRelation R = DimRelation::atLeast(Sym, B.Min);
      Relations.push_back(R);
      emitRemark(Diags) << "the model needs " << Sym << " >= " << B.Min
                        << ": stored as the relation " << printDimRelation(R);
      continue;
    }
    DimRange R;
    R.Min = B.Min;
    R.Max = *B.Max;
    Ranges[Sym] = R;
    Stored = true;
    emitRemark(Diags) << "the model needs " << Sym << " in [" << B.Min << ", "
                      << *B.Max << "]: stored as its dim range";
  }
  if (Stored && !setDimRanges(M, Ranges, Err))
    return emitError(Diags) << "cannot store the dim ranges: " << Err;
  return success();
}

LogicalResult DynamicRewrite::applyShape(Model &M, const ShapeSpec &Spec,
                                         DiagnosticEngine &Diags) {
  if (!InputsByName) {
    InputsByName.emplace();
    // With the inputs that have an initializer: the shape passes read
    // those as constants (OpFacts.h) unless the user names one here.
    for (const std::unique_ptr<Value> &V : M.getGraph().getInputs())
      InputsByName->try_emplace(V->getName(), V.get());
  }
  Value *In = InputsByName->lookup(Spec.Name);
  if (In && In->hasInitializer()) {
    // Its stored default has the old shape, which new dims contradict: the
    // caller feeds it from now on.
    emitRemark(Diags) << "input '" << Spec.Name
                      << "' has an initializer, which shape passes read "
                         "as a constant; named in shapes=, it becomes "
                         "an input the caller feeds (initializer "
                         "dropped)";
    In->setInitializer(Tensor());
  }
  if (!In) {
    std::string Names;
    for (const std::unique_ptr<Value> &V : M.getGraph().getInputs())
      if (!V->hasInitializer())
        Names += (Names.empty() ? "" : ", ") + V->getName().str();
    for (Value *Out : M.getGraph().getOutputs())
      if (Out && Out->getName() == Spec.Name)
        return addHint(M, Spec, Diags);
    std::vector<std::string> Outs;
    for (Value *Out : M.getGraph().getOutputs())
      if (Out)
        Outs.push_back(Out->getName().str());
    return emitError(Diags) << "unknown input or output '" << Spec.Name
                            << "'; the main graph's inputs are: " << Names
                            << "; its outputs: " << llvm::join(Outs, ", ");
  }
  const Type &T = In->getType();
  if (!T.isTensor() || !T.hasShape())
    return emitError(Diags, *In) << "the input is not a tensor of known rank";
  if (T.getRank() != Spec.Dims.size())
    return emitError(Diags, *In)
           << "the input has rank " << T.getRank() << ", shapes= gives "
           << Spec.Dims.size() << " dims";
  std::vector<Dim> Dims(T.getDims().begin(), T.getDims().end());
  for (unsigned I = 0; I < Dims.size(); ++I) {
    llvm::StringRef Text = Spec.Dims[I];
    int64_t Number;
    if (Text == "?")
      continue;
    if (!Text.getAsInteger(10, Number)) {
      if (!Dims[I].isKnown() || Dims[I].getValue() != Number)
        return emitError(Diags, *In)
               << "dim " << I << " of the input is "
               << (Dims[I].isKnown() ? std::to_string(Dims[I].getValue())
                                     : "not a number")
               << ", shapes= gives " << Number;
      continue;
    }
    // nameDynamicDims gave an already dynamic dim the name it has here.
    if (!Dims[I].isKnown()) {
      if (Dims[I].isSymbol() && Dims[I].getSymbol() == Text)
        continue;
      return emitError(Diags, *In)
             << "dim " << I << " of the input is already dynamic ("
             << (Dims[I].isSymbol() ? Dims[I].getSymbol().str() : "?")
             << ") and could not be renamed '" << Text << "'";
    }
    auto [It, Inserted] = Old.try_emplace(Text.str(), Dims[I].getValue());
    if (!Inserted && It->second != Dims[I].getValue())
      return emitError(Diags, *In)
             << "symbol '" << Text << "' stands for " << It->second << " and "
             << Dims[I].getValue() << "; use two symbols";
    Dim D = Dim::symbol(Text);
    D.setDenotation(Dims[I].getDenotation());
    Dims[I] = D;
  }
  NewShapes.emplace_back(In, std::move(Dims));
  return success();
}

/// An output hint: its rank must match; its symbols are checked against
/// the new input symbols once all inputs are read (checkHints).
LogicalResult DynamicRewrite::addHint(Model &M, const ShapeSpec &Spec,
                                      DiagnosticEngine &Diags) {
  Value *Out = nullptr;
  for (Value *V : M.getGraph().getOutputs())
    if (V && V->getName() == Spec.Name)
      Out = V;
  const Type &T = Out->getType();
  if (T.isTensor() && T.hasShape() && T.getRank() != Spec.Dims.size())
    return emitError(Diags, *Out)
           << "the output has rank " << T.getRank() << ", shapes= gives "
           << Spec.Dims.size() << " dims";
  Hints.emplace_back(Out, Spec);
  for (llvm::StringRef D : Spec.Dims) {
    int64_t Number;
    if (D != "?" && D.getAsInteger(10, Number) &&
        !llvm::is_contained(HintOrder, D.str()))
      HintOrder.push_back(D.str());
  }
  return success();
}

/// Each hinted output dim must be proven to be what the hint says; a hint
/// that is not met (a symbol pinned by allow-partial, a dim the repairs
/// left baked) is a problem naming the output.
void DynamicRewrite::checkHints(Model &M) {
  if (Hints.empty())
    return;
  DimAnalysis DA(M);
  DA.run();
  for (const auto &[Out, Spec] : Hints) {
    const std::vector<DimExpr> *Dims = DA.getDims(*Out);
    for (size_t K = 0; K < Spec.Dims.size(); ++K) {
      llvm::StringRef Want = Spec.Dims[K];
      if (Want == "?")
        continue;
      int64_t Number;
      DimExpr Expected = Want.getAsInteger(10, Number)
                             ? DimExpr::symbol(Want)
                             : DimExpr::constant(Number);
      DimExpr Got = Dims && K < Dims->size()
                        ? expressInInputs(DA, *Out, *Dims, Old)[K]
                        : DimExpr::unknown();
      if (Got == Expected || DA.provenEqual(Got, Expected))
        continue;
      std::string Why = !Expected.isConstant() && !Old.count(Want.str())
                            ? " (" + Want.str() + " is kept static)"
                            : "";
      Problems.push_back({Out->getDefiningNode(),
                          "output '" + Out->getName().str() + "' dim " +
                              std::to_string(K) + " is " +
                              (Got.hasUnknown() ? "not known" : Got.str()) +
                              ", shapes= says " + Want.str() + Why +
                              ": the hint cannot be met",
                          {}});
    }
  }
}

/// Forgets every dim inferred from the old sizes and infers again.
LogicalResult DynamicRewrite::reinfer(Model &M, DiagnosticEngine &Diags) {
  M.getGraph().walk([](Node &N) {
    for (unsigned I = 0; I < N.getNumResults(); ++I) {
      Value *R = N.getResult(I);
      if (!R || !R->getType().isTensor() || !R->getType().hasShape())
        continue;
      // The rank stays (no op here makes it depend on sizes); the dims go.
      Type T = R->getType();
      for (Dim &D : T.getMutableDims())
        D = Dim::unknown();
      R->setType(std::move(T));
    }
  });
  if (failed(inferShapes(M, Diags)))
    return emitError(Diags) << "shape inference failed on the dynamic model";
  return success();
}

/// True if some recorded dim of \p M is the symbol \p S.
static bool isModelSymbol(Model &M, llvm::StringRef S) {
  bool Found = false;
  forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
    Found |= D.isSymbol() && D.getSymbol() == S;
    return false;
  });
  return Found;
}

/// True if \p E evaluates to an integer at a spread of sizes: an exact
/// division the algebra only assumed (2*H*W/6) fails at most of them. Each
/// symbol gets its own value in every sample, never the value of another
/// symbol of the same sample, so a division that is exact only when two
/// symbols are equal (H*W/W' with H = W at the example shape) is refused,
/// whatever the symbols are called. The values are 1, primes (pairwise
/// coprime) and a few highly composite sizes.
bool onnxopt::makedynamic::isIntegralAtSamples(const DimExpr &E) {
  std::vector<std::string> Symbols;
  E.forEachSymbol([&](llvm::StringRef S) {
    if (!llvm::is_contained(Symbols, S.str()))
      Symbols.push_back(S.str());
  });
  llvm::sort(Symbols);
  static constexpr int64_t Values[] = {1,  2,  3,   5,  7,   11,  13,   17,
                                       19, 23, 29,  31, 37,  41,  43,   47,
                                       53, 97, 101, 64, 320, 481, 1000, 59};
  constexpr size_t NumValues = sizeof(Values) / sizeof(Values[0]);
  // Step 7 is coprime to 24: within one sample the symbols' indices differ,
  // so their values do.
  for (size_t Round = 0; Round < NumValues; ++Round) {
    std::optional<int64_t> V =
        E.evaluate([&](llvm::StringRef S) -> std::optional<int64_t> {
          size_t I = llvm::find(Symbols, S.str()) - Symbols.begin();
          return Values[(Round + 7 * I) % NumValues];
        });
    if (!V)
      return false;
  }
  return true;
}

bool DynamicRewrite::isIntegralAtSamples(const DimExpr &E) const {
  // normalize() writes a symbol the relations restrict through a fresh one
  // (H%32=0: H is 32 times `H%32`), whose samples then keep the relation.
  return makedynamic::isIntegralAtSamples(Domain.normalize(E));
}

LogicalResult DynamicRewrite::readRelations(Model &M,
                                            llvm::ArrayRef<std::string> Texts,
                                            DiagnosticEngine &Diags) {
  std::set<std::string> Symbols;
  forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
    if (D.isSymbol())
      Symbols.insert(D.getSymbol().str());
    return false;
  });
  for (const auto &[In, Dims] : NewShapes)
    for (const Dim &D : Dims)
      if (D.isSymbol())
        Symbols.insert(D.getSymbol().str());
  std::string Error;
  for (const std::string &Text : Texts) {
    DimRelation R;
    if (!parseDimRelation(Text, R, Error))
      return emitError(Diags) << "relation '" << Text << "': " << Error;
    for (const std::string &S : R.symbols())
      if (!Symbols.count(S))
        return emitError(Diags)
               << "relation '" << Text << "': unknown symbol '" << S
               << "'; the symbols are: " << llvm::join(Symbols, ", ");
    // The model was exported at the old sizes: a relation they break
    // describes another model.
    std::map<std::string, int64_t> At(Old.begin(), Old.end());
    if (R.isDecidedBy(At) && !R.holds(At))
      return emitError(Diags)
             << "relation '" << Text << "' does not hold at the old sizes: "
             << printDimRelationAt(R, At);
    Relations.push_back(R);
  }
  // The relations and ranges the model already stores hold as well.
  return rebuildDomain(M, Diags);
}

LogicalResult DynamicRewrite::storeRelations(Model &M,
                                             DiagnosticEngine &Diags) {
  if (Relations.empty())
    return success();
  std::string Error;
  DimRelations Stored;
  if (!getDimRelations(M, Stored, Error))
    return emitError(Diags) << Error;
  DimRelations Result = Stored;
  for (const DimRelation &R : Relations) {
    // A symbol allow-partial kept static is a number now: the relation
    // held at its old size and says nothing more.
    bool Dropped = llvm::any_of(R.symbols(), [&](const std::string &S) {
      return !Old.count(S) && !Named.count(S) && !isModelSymbol(M, S);
    });
    if (Dropped) {
      emitWarning(Diags) << "relation '" << printDimRelation(R)
                         << "' not stored: a symbol it names is kept static";
      continue;
    }
    Result.push_back(R);
  }
  llvm::sort(Result);
  Result.erase(std::unique(Result.begin(), Result.end()), Result.end());
  if (Result != Stored && !setDimRelations(M, Result, Error))
    return emitError(Diags) << "cannot store the relations: " << Error;
  return success();
}

void DynamicRewrite::addNewSymbols(const DimExpr &E,
                                   std::set<std::string> &Out) const {
  E.forEachSymbol([&](llvm::StringRef S) {
    if (Old.count(S.str()))
      Out.insert(S.str());
  });
}

std::optional<int64_t> DynamicRewrite::oldValue(const DimExpr &E) const {
  return E.evaluate([this](llvm::StringRef S) -> std::optional<int64_t> {
    auto It = Old.find(S.str());
    if (It == Old.end())
      return std::nullopt;
    return It->second;
  });
}

std::optional<int64_t> DynamicRewrite::readingValue(const DimExpr &E) const {
  // Primes above any literal a target holds: a product of dims meets a
  // product of entries only where the same stand-ins are on both sides.
  static const int64_t StandIns[] = {1000003, 1000033, 1000037, 1000039};
  return E.evaluate([this](llvm::StringRef S) -> std::optional<int64_t> {
    auto It = Old.find(S.str());
    if (It != Old.end())
      return It->second;
    auto At = llvm::find(StandInOrder, S.str());
    if (At == StandInOrder.end()) {
      if (StandInOrder.size() == std::size(StandIns))
        return std::nullopt;
      StandInOrder.push_back(S.str());
      At = std::prev(StandInOrder.end());
    }
    return StandIns[At - StandInOrder.begin()];
  });
}

/// Expand to a constant shape whose entry is the old size of the data's
/// (now dynamic) dim there: broadcasting with 1 keeps that dim at every size
/// and gives the same result at the old one.
void DynamicRewrite::repairExpand(Node &N, DimAnalysis &DA, Rewriter &RW) {
  if (N.getNumOperands() < 2 || !N.getOperand(0) || !N.getOperand(1))
    return;
  Tensor T = getConstantValue(*N.getOperand(1));
  std::optional<std::vector<int64_t>> Shape = T ? T.toInt64s() : std::nullopt;
  if (!Shape) {
    repairExpandPieces(N, DA, RW);
    return;
  }
  std::vector<std::optional<int64_t>> Entries(Shape->begin(), Shape->end());
  if (!freeExpandEntries(N, DA, Entries))
    return;
  std::vector<int64_t> New;
  for (const std::optional<int64_t> &E : Entries)
    New.push_back(*E);
  Value *C = RW.createConstant(
      *N.getParentGraph(),
      Tensor::fromInt64s(N.getOperand(1)->getName().str() + "_dynamic",
                         {static_cast<int64_t>(New.size())}, New));
  setShapeOperand(N, 1, C, RW);
  ++RepairCounts["Expand shape"];
  Repaired = true;
}

/// Sets to 1 the known \p Entries of \p N's shape that only repeat a dim:
/// an old size of a data dim that is now dynamic (1 keeps it as it is),
/// and an entry that repeats a dim of 1 to an old size that the result
/// meets further on as a new symbol (the padding mask [B,1,1,S] expanded
/// to [1,1,10,10] before it is added to the scores [B,H,S,S]): 1 gives the
/// same values, and broadcasting there repeats it to the symbol's size.
/// True when an entry changed.
bool DynamicRewrite::freeExpandEntries(
    const Node &N, DimAnalysis &DA,
    std::vector<std::optional<int64_t>> &Entries) {
  const std::vector<DimExpr> *Data = DA.getDims(*N.getOperand(0));
  if (!Data || Entries.size() < Data->size())
    return false;
  std::vector<DimExpr> Best = expressInInputs(DA, *N.getOperand(0), *Data, Old);
  size_t Offset = Entries.size() - Best.size();
  bool Changed = false;
  for (size_t J = 0; J < Best.size(); ++J) {
    std::optional<int64_t> &E = Entries[J + Offset];
    if (E && !Best[J].isConstant() && *E > 1 && oldValue(Best[J]) == *E) {
      E = 1;
      Changed = true;
    }
  }
  for (size_t J = 0; J < Entries.size(); ++J) {
    std::optional<int64_t> &E = Entries[J];
    bool DataIsOne = J < Offset || (Best[J - Offset].isConstant() &&
                                    Best[J - Offset].getConstant() == 1);
    if (E && DataIsOne && *E > 1 &&
        downstreamAxis(N, J, Entries.size(), *E, DA)) {
      E = 1;
      Changed = true;
    }
  }
  return Changed;
}

/// Before:  Z = Expand(0, Concat(Shape<0,1>(ids), [10]))   # [B, 10]
///          ... Gather(token_types, Z) ... Add(embeddings[B,S,d], ...)
/// After:   Z = Expand(0, Concat(Shape<0,1>(ids), [1]))    # [B, 1]
///
/// The shape of an Expand in a static export whose batch stayed dynamic
/// is a Concat of the computed batch and baked entries. The constant
/// pieces' entries follow freeExpandEntries' rules, as a constant shape's
/// do; the computed pieces stay. The Concat is rebuilt for this Expand
/// only (another reader may need the old entries).
void DynamicRewrite::repairExpandPieces(Node &N, DimAnalysis &DA,
                                        Rewriter &RW) {
  const Node *Joined = N.getOperand(1)->getDefiningNode();
  if (!Joined || !hasTrait(*Joined, Concatenates) ||
      Joined->getAttrInt("axis", 0) != 0 || Joined->getNumResults() != 1)
    return;
  std::vector<std::optional<int64_t>> Entries;
  for (const Value *P : Joined->getOperands()) {
    const std::vector<DimExpr> *PD = P ? DA.getDims(*P) : nullptr;
    if (!PD || PD->size() != 1 || !(*PD)[0].isConstant())
      return;
    Tensor PT = getConstantValue(*P);
    std::optional<std::vector<int64_t>> Values =
        PT ? PT.toInt64s() : std::nullopt;
    if (Values && int64_t(Values->size()) != (*PD)[0].getConstant())
      return;
    for (int64_t I = 0; I < (*PD)[0].getConstant(); ++I)
      Entries.push_back(Values ? std::optional<int64_t>((*Values)[I])
                               : std::nullopt);
  }
  if (!freeExpandEntries(N, DA, Entries))
    return;
  Value *Shape = rejoin(
      N, *Joined, DA, [&](size_t K, int64_t) { return *Entries[K]; },
      "expand_shape", RW);
  setShapeOperand(N, 1, Shape, RW);
  emitRemark(RW.getDiags(), N)
      << "shape " << shapeOperandName(N, 1)
      << " joins computed dims and baked entries: the entries that only "
         "repeat a dim are 1";
  ++RepairCounts["Expand shape"];
  Repaired = true;
}

Value *
DynamicRewrite::rejoin(Node &N, const Node &Joined, DimAnalysis &DA,
                       llvm::function_ref<int64_t(size_t, int64_t)> NewEntry,
                       llvm::StringRef Hint, Rewriter &RW) {
  std::vector<Value *> Pieces;
  size_t At = 0;
  RW.setInsertionPointBefore(&N);
  for (Value *P : Joined.getOperands()) {
    size_t Length = DA.getDims(*P)->front().getConstant();
    Tensor T = getConstantValue(*P);
    if (std::optional<std::vector<int64_t>> Was =
            T ? T.toInt64s() : std::nullopt) {
      std::vector<int64_t> Values;
      for (size_t K = At; K < At + Length; ++K)
        Values.push_back(NewEntry(K, (*Was)[K - At]));
      if (Values != *Was)
        P = RW.createConstant(
            *N.getParentGraph(),
            Tensor::fromInt64s(P->getName().str() + "_dynamic",
                               {int64_t(Length)}, Values));
    }
    Pieces.push_back(P);
    At += Length;
  }
  Node *Joint = RW.createNode("Concat", Pieces, 1, "", Hint);
  Joint->setAttr(Attribute::getInt("axis", 0));
  Stale.insert(Joint->getResult(0));
  return Joint->getResult(0);
}

/// A Slice whose constant end is the old size of a now dynamic dim took
/// the whole dim at the old size: it ends at the end (INT64_MAX) at every
/// size. Ends below the old size are real crops and stay.
void DynamicRewrite::repairSliceEnds(Node &N, DimAnalysis &DA, Rewriter &RW) {
  if (N.getNumOperands() < 3 || !N.getOperand(0) || !N.getOperand(2))
    return;
  const std::vector<DimExpr> *Data = DA.getDims(*N.getOperand(0));
  Tensor EndsT = getConstantValue(*N.getOperand(2));
  std::optional<std::vector<int64_t>> Ends =
      EndsT ? EndsT.toInt64s() : std::nullopt;
  if (!Data || !Ends)
    return;
  std::vector<int64_t> Axes;
  if (N.getNumOperands() > 3 && N.getOperand(3)) {
    Tensor AxesT = getConstantValue(*N.getOperand(3));
    std::optional<std::vector<int64_t>> A =
        AxesT ? AxesT.toInt64s() : std::nullopt;
    if (!A || A->size() != Ends->size())
      return;
    Axes = *A;
  } else {
    for (size_t I = 0; I < Ends->size(); ++I)
      Axes.push_back(I);
  }
  // Negative steps run backwards: their ends are not sizes.
  if (N.getNumOperands() > 4 && N.getOperand(4)) {
    Tensor StepsT = getConstantValue(*N.getOperand(4));
    std::optional<std::vector<int64_t>> Steps =
        StepsT ? StepsT.toInt64s() : std::nullopt;
    if (!Steps || llvm::any_of(*Steps, [](int64_t S) { return S <= 0; }))
      return;
  }
  std::vector<DimExpr> Best = expressInInputs(DA, *N.getOperand(0), *Data, Old);
  std::vector<int64_t> New = *Ends;
  int64_t Rank = Best.size();
  for (size_t I = 0; I < Axes.size(); ++I) {
    int64_t Axis = Axes[I] < 0 ? Axes[I] + Rank : Axes[I];
    if (Axis < 0 || Axis >= Rank || Best[Axis].isConstant())
      continue;
    if (oldValue(Best[Axis]) == New[I])
      New[I] = std::numeric_limits<int64_t>::max();
  }
  if (New == *Ends)
    return;
  Value *C = RW.createConstant(
      *N.getParentGraph(),
      Tensor::fromInt64s(N.getOperand(2)->getName().str() + "_dynamic",
                         {static_cast<int64_t>(New.size())}, New));
  RW.setOperand(&N, 2, C);
  ++RepairCounts["Slice end"];
  Repaired = true;
}

void DynamicRewrite::repairRecurrentState(Node &N, DimAnalysis &DA,
                                          Rewriter &RW, unsigned NumStates) {
  if (N.getNumOperands() < 6 || !N.getOperand(0))
    return;
  const std::vector<DimExpr> *X = DA.getDims(*N.getOperand(0));
  if (!X || X->size() != 3)
    return;
  bool BatchFirst = N.getAttrInt("layout", 0) != 0;
  std::vector<DimExpr> Best = expressInInputs(DA, *N.getOperand(0), *X, Old);
  if (Best[BatchFirst ? 0 : 1].isConstant())
    return;
  // initial_h (and LSTM's initial_c) folded at the old batch: zeros are
  // what an omitted state means, anything else is reported.
  unsigned Last = 5 + NumStates - 1;
  for (unsigned I = 5; I <= Last && I < N.getNumOperands(); ++I) {
    Value *State = N.getOperand(I);
    Tensor T = State ? getConstantValue(*State) : Tensor();
    if (!T)
      continue;
    std::optional<std::vector<double>> Vals = T.toDoubles();
    if (Vals && llvm::all_of(*Vals, [](double V) { return V == 0; })) {
      RW.setOperand(&N, I, nullptr);
      ++RepairCounts["recurrent initial state"];
      Repaired = true;
      continue;
    }
    Problems.push_back({&N, "initial state '" + State->getName().str() +
                                "' is a constant of the old batch size and "
                                "not zero"});
  }
  unsigned Keep = N.getNumOperands();
  while (Keep > 0 && !N.getOperand(Keep - 1))
    --Keep;
  if (Keep != N.getNumOperands()) {
    N.truncateOperands(Keep);
    RW.notifyModified(&N);
  }
}

/// `N,16,8,12`: sizes as the remarks print them.
static std::string joinDims(llvm::ArrayRef<DimExpr> Dims) {
  std::vector<std::string> Printed;
  for (const DimExpr &E : Dims)
    Printed.push_back(E.str());
  return llvm::join(Printed, ",");
}

void DynamicRewrite::repairResize(
    Node &N, DimAnalysis &DA, Rewriter &RW,
    const llvm::DenseMap<const Node *, size_t> &Order) {
  if (N.getNumOperands() < 4 || !N.getOperand(0) || !N.getOperand(3))
    return;
  // Sizes read from a Shape (this repair's own) follow the new sizes,
  // whatever the dims of a round that has not seen a repair upstream say.
  // So do the sizes this pass rebuilt, whichever rule did it.
  const Node *SizesDef = N.getOperand(3)->getDefiningNode();
  if (SizesRebuilt.count(&N) ||
      (SizesDef && hasTrait(*SizesDef, ReadsTypeOnly)))
    return;
  const std::vector<DimExpr> *InDims = DA.getDims(*N.getOperand(0));
  const std::vector<DimExpr> *Sizes = DA.getData(*N.getOperand(3));
  if (!InDims || !Sizes || InDims->size() != Sizes->size())
    return;
  // Each dim as computed upstream, as for a Reshape (computedDim): the
  // Resize that folds MobileViT's last block back reads a batch that the
  // not yet repaired sizes still merge with its old value.
  std::vector<DimExpr> Best;
  for (unsigned K = 0; K < InDims->size(); ++K)
    Best.push_back(computedDim(DA, *N.getOperand(0), *InDims, K));
  const std::vector<DimExpr> *In = &Best;
  // Baked: the sizes of dynamic input dims. Wide adds a static dim resized
  // to another number (DeepLabV3's image pooling: [B,256,1,1] back to the
  // feature map's baked size), which may have to follow a partner further
  // on too; where none says so it is a fixed size.
  std::vector<int64_t> Baked(In->size(), -1), Wide(In->size(), -1);
  bool Any = false, AnyWide = false;
  for (size_t I = 0; I < In->size(); ++I) {
    if (!(*Sizes)[I].isConstant())
      continue;
    if (!(*In)[I].isConstant()) {
      Baked[I] = Wide[I] = (*Sizes)[I].getConstant();
      Any = true;
    } else if ((*Sizes)[I] != (*In)[I]) {
      Wide[I] = (*Sizes)[I].getConstant();
      AnyWide = true;
    }
  }
  if (!Any && !AnyWide)
    return;
  if (resizeToPartner(N, *Sizes, Wide, DA, RW, Order) ||
      (AnyWide && resizeToConcatPartner(N, *In, *Sizes, Wide, DA, RW, Order)))
    return;
  if (!Any || resizeToInputs(N, *In, *Sizes, Baked, RW) ||
      resizeToConcatPartner(N, *In, *Sizes, Baked, DA, RW, Order))
    return;
  Problems.push_back(
      {&N, "sizes '" + N.getOperand(3)->getName().str() +
               "' hold numbers where the input is dynamic, and no "
               "elementwise or Concat user says what they become"});
}

/// True if \p N, a window op (Conv, a pool), gives each spatial dim its
/// operand's size (`padding=k//2` at stride 1, a 1x1 kernel, auto_pad
/// SAME): the op's dim rule, which reads its kernel, strides, dilations and
/// pads, computes each spatial dim of the result as the operand's. A window
/// of stride above 1 cannot keep a size the symbols move (the result grows
/// by 1 for every stride's worth of input).
static bool keepsSpatialSize(const Node &N, const DimAnalysis &DA) {
  if (!hasTrait(N, StridedWindow) || N.getNumOperands() == 0 ||
      !N.getOperand(0) || N.getNumResults() == 0 || !N.getResult(0))
    return false;
  const std::vector<DimExpr> *In = DA.getDims(*N.getOperand(0));
  const std::vector<DimExpr> *Out = DA.getDims(*N.getResult(0));
  if (!In || !Out || In->size() < 3 || In->size() != Out->size())
    return false;
  for (size_t I = 2; I < In->size(); ++I)
    if ((*In)[I] != (*Out)[I] && !DA.provenEqual((*In)[I], (*Out)[I]))
      return false;
  return true;
}

/// A value whose Shape gives \p Partner's dims and can be read before
/// \p N: the partner, or where it comes later (another branch), the value
/// it was computed from through nodes that keep those dims (LRASPP's
/// low_classifier, a 1x1 Conv of a backbone feature; \p Holds is false at
/// the channels a Conv changed). Null when there is none.
static Value *shapeHolder(const Node &N, Value *Partner, const DimAnalysis &DA,
                          const llvm::DenseMap<const Node *, size_t> &Order,
                          std::vector<bool> &Holds) {
  const std::vector<DimExpr> *P = DA.getDims(*Partner);
  Holds.assign(P ? P->size() : 0, true);
  Value *Holder = Partner;
  for (unsigned Steps = 0; Holder && Steps < 16; ++Steps) {
    const Node *Def = Holder->getDefiningNode();
    if (!Def || (Def->getParentGraph() == N.getParentGraph() &&
                 Order.lookup(Def) < Order.lookup(&N)))
      return Holder;
    if (Def->getParentGraph() != N.getParentGraph() ||
        Def->getNumOperands() == 0)
      return nullptr;
    if (hasTrait(*Def, ShapePreserving)) {
      Holder = Def->getOperand(0);
    } else if (keepsSpatialSize(*Def, DA) && Holds.size() > 1) {
      Holds[1] = false;
      Holder = Def->getOperand(0);
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

/// A Resize whose result meets a partner in an elementwise op, directly or
/// after nodes that keep its dims (activations; a Conv or a pool that keeps
/// the spatial dims at their size, which changes the channels: LRASPP's
/// `high_classifier(interpolate(x, size=low.shape[-2:])) +
/// low_classifier(low)`): the baked sizes are the partner's dims. Each baked
/// position must be a dynamic dim of the partner with that old size, each other
/// position the chain keeps the sizes' own; the partner must come before the
/// Resize.
bool DynamicRewrite::resizeToPartner(
    Node &N, llvm::ArrayRef<DimExpr> Sizes, llvm::ArrayRef<int64_t> Baked,
    DimAnalysis &DA, Rewriter &RW,
    const llvm::DenseMap<const Node *, size_t> &Order) {
  size_t Rank = Sizes.size();
  // Values that hold the Resize's result dims, with the dims they keep.
  std::vector<std::pair<Value *, std::vector<bool>>> Work{
      {N.getResult(0), std::vector<bool>(Rank, true)}};
  for (size_t Next = 0; Next < Work.size() && Next < 16; ++Next) {
    auto [Cur, Kept] = Work[Next];
    for (const Use &U : Cur->getUses()) {
      if (U.isGraphOutput())
        continue;
      Node &User = *U.User;
      if (hasTrait(User, ShapePreserving) && U.Index == 0) {
        Work.push_back({User.getResult(0), Kept});
        continue;
      }
      if (U.Index == 0 && keepsSpatialSize(User, DA)) {
        std::vector<bool> K = Kept;
        if (Rank > 1)
          K[1] = false; // the channels
        Work.push_back({User.getResult(0), K});
        continue;
      }
      if (User.getNumOperands() != 2 || !hasTrait(User, Arithmetic))
        continue;
      Value *Partner = User.getOperand(1 - U.Index);
      const std::vector<DimExpr> *P = Partner ? DA.getDims(*Partner) : nullptr;
      if (!P || P->size() != Rank)
        continue;
      std::vector<DimExpr> PBest = expressInInputs(DA, *Partner, *P, Old);
      bool Matches = true;
      for (size_t I = 0; I < Rank && Matches; ++I) {
        // A size of a static input dim may also meet a partner of that
        // fixed size.
        bool Dynamic = !PBest[I].isConstant() && !PBest[I].hasUnknown();
        if (Baked[I] >= 0)
          Matches = (Dynamic && oldValue(PBest[I]) == Baked[I]) ||
                    (Kept[I] && DA.provenEqual(PBest[I], Sizes[I]));
        else if (Kept[I])
          Matches = DA.provenEqual(PBest[I], Sizes[I]);
      }
      if (!Matches)
        continue;
      std::vector<bool> Holds;
      Value *Holder = shapeHolder(N, Partner, DA, Order, Holds);
      if (!Holder)
        continue;
      std::string OldName = N.getOperand(3)->getName().str();
      RW.setInsertionPointBefore(&N);
      Value *Sized;
      if (Holder == Partner && llvm::all_of(Kept, [](bool K) { return K; })) {
        Sized = RW.createNode("Shape", {Partner}, 1, "", "sizes_dynamic")
                    ->getResult(0);
      } else {
        ShapeVectorBuilder B(RW, N, "size", "sizes_dynamic");
        for (size_t K = 0; K < Rank; ++K) {
          if (Baked[K] < 0 && Sizes[K].isConstant())
            B.literal(Sizes[K].getConstant());
          else if ((Baked[K] >= 0 || Kept[K]) && Holds[K])
            B.piece(B.dimOf(Holder, unsigned(K)));
          else
            return false;
        }
        Sized = B.finish("sizes_dynamic");
      }
      RW.setOperand(&N, 3, Sized);
      if (Cur != N.getResult(0) || Holder != Partner)
        emitRemark(RW.getDiags(), N)
            << "sizes '" << OldName << "' = [" << joinDims(Sizes)
            << "] held the old sizes of '" << Partner->getName()
            << "', which the result meets"
            << (Cur != N.getResult(0) ? " after nodes that keep those dims"
                                      : "")
            << ": now read from the Shape of '" << Holder->getName() << "'"
            << (Holder != Partner ? ", which it is computed from" : "");
      SizesRebuilt.insert(&N);
      ++RepairCounts["Resize size input"];
      Repaired = true;
      return true;
    }
  }
  return false;
}

/// A Resize whose result is concatenated with a value whose dims, off the
/// Concat's axis, had the baked sizes at the old input sizes: a decoder's
/// `F.interpolate(x, size=skip.shape[2:])` then `torch.cat([x, skip], 1)`
/// (U-Net, FPN and Segformer heads). The Concat needs those dims equal at
/// every size, so the baked sizes are the partner's dims: read from its
/// Shape, the others kept. The partner must come before the Resize (its
/// Shape is computed there) and each of its dims must be dynamic with the
/// baked value as its old size.
bool DynamicRewrite::resizeToConcatPartner(
    Node &N, llvm::ArrayRef<DimExpr> In, llvm::ArrayRef<DimExpr> Sizes,
    llvm::ArrayRef<int64_t> Baked, DimAnalysis &DA, Rewriter &RW,
    const llvm::DenseMap<const Node *, size_t> &Order) {
  Value *Out = N.getResult(0);
  int64_t Rank = static_cast<int64_t>(In.size());
  for (const Use &U : Out->getUses()) {
    if (U.isGraphOutput() || !hasTrait(*U.User, Concatenates))
      continue;
    Node &Cat = *U.User;
    int64_t Axis = Cat.getAttrInt("axis", 0);
    if (Axis < 0)
      Axis += Rank;
    if (Axis < 0 || Axis >= Rank || Baked[Axis] >= 0)
      continue;
    for (unsigned I = 0; I < Cat.getNumOperands(); ++I) {
      Value *Partner = Cat.getOperand(I);
      if (!Partner || Partner == Out)
        continue;
      const std::vector<DimExpr> *P = DA.getDims(*Partner);
      if (!P || P->size() != In.size())
        continue;
      // As computed upstream: the baked sizes have made the Concat merge
      // the partner's dims with their old values.
      std::vector<DimExpr> PBest;
      for (unsigned K = 0; K < P->size(); ++K)
        PBest.push_back(computedDim(DA, *Partner, *P, K));
      bool Matches = true;
      for (int64_t K = 0; K < Rank && Matches; ++K)
        if (Baked[K] >= 0)
          Matches = !PBest[K].isConstant() && !PBest[K].hasUnknown() &&
                    oldValue(PBest[K]) == Baked[K];
      std::vector<bool> Holds;
      Value *Holder =
          Matches ? shapeHolder(N, Partner, DA, Order, Holds) : nullptr;
      bool Held = Holder != nullptr;
      for (int64_t K = 0; K < Rank && Held; ++K)
        Held = Baked[K] < 0 || Holds[K];
      if (!Held)
        continue;
      std::string OldName = N.getOperand(3)->getName().str();
      ShapeVectorBuilder B(RW, N, "size", "sizes_dynamic");
      for (int64_t K = 0; K < Rank; ++K) {
        if (Baked[K] >= 0) {
          B.piece(B.dimOf(Holder, unsigned(K)));
        } else if (Sizes[K].isConstant()) {
          B.literal(Sizes[K].getConstant());
        } else {
          B.piece(B.element(N.getOperand(3), unsigned(K)));
          B.markComputed();
        }
      }
      RW.setOperand(&N, 3, B.finish("sizes_dynamic"));
      emitRemark(RW.getDiags(), N)
          << "sizes '" << OldName << "' = [" << joinDims(Sizes)
          << "] held the old sizes of '" << Partner->getName()
          << "', which the result is concatenated with: now read from "
          << (Holder == Partner ? std::string("its Shape")
                                : "the Shape of '" + Holder->getName().str() +
                                      "', which it is computed from");
      SizesRebuilt.insert(&N);
      ++RepairCounts["Resize to a concatenated value's size"];
      Repaired = true;
      return true;
    }
  }
  return false;
}

/// A Resize to constant sizes whose literals are the old sizes of new input
/// dims: an interpolation to the input's size (`F.interpolate(y,
/// size=x.shape[2:])`) baked in. A literal equal to the old size of the
/// Resize input's own dim keeps that dim (the batch, the channels); any
/// other baked literal is the old size of the one new symbol, among those
/// the input's dim is computed from, that had it, and becomes that input
/// dim, read from the Shape of the graph input that has it. The symbol
/// behind the dim decides, not the first equal number, so H = W at the
/// example size is not ambiguous.
bool DynamicRewrite::resizeToInputs(Node &N, llvm::ArrayRef<DimExpr> In,
                                    llvm::ArrayRef<DimExpr> Sizes,
                                    llvm::ArrayRef<int64_t> Baked,
                                    Rewriter &RW) {
  if (Sizes.size() != In.size())
    return false;
  // For each position: the value and dim it reads, or none (the literal).
  std::vector<std::pair<Value *, unsigned>> Source(In.size(), {nullptr, 0});
  std::vector<std::string> Said, Kept;
  // The sizes are the exporter's (repairResize skips those this pass
  // rebuilt): baked, constant or computed in the graph (torch 1.13 writes
  // Concat(Shape(x)[0:2], [16,24])).
  for (size_t K = 0; K < In.size(); ++K) {
    if (Baked[K] < 0)
      continue;
    if (oldValue(In[K]) == Baked[K]) {
      Source[K] = {N.getOperand(0), unsigned(K)};
      Kept.push_back(std::to_string(K));
      continue;
    }
    std::set<std::string> Same;
    In[K].forEachSymbol([&](llvm::StringRef S) {
      auto It = Old.find(S.str());
      if (It != Old.end() && It->second == Baked[K])
        Same.insert(S.str());
    });
    if (Same.size() != 1)
      return false;
    for (auto &[Input, Dims] : NewShapes)
      for (unsigned D = 0; D < Dims.size() && !Source[K].first; ++D)
        if (Dims[D].isSymbol() && Dims[D].getSymbol() == *Same.begin())
          Source[K] = {Input, D};
    if (!Source[K].first)
      return false;
    Said.push_back(*Same.begin());
  }
  // Only the input's own dims (the batch of an upsampling to a fixed size,
  // `F.interpolate(y, size=(2, 4))`): they keep following the input.
  if (Said.empty() && Kept.empty())
    return false;
  std::string OldName = N.getOperand(3)->getName().str();
  ShapeVectorBuilder B(RW, N, "size", "sizes_dynamic");
  for (size_t K = 0; K < In.size(); ++K) {
    auto [V, D] = Source[K];
    if (!V && Sizes[K].isConstant()) {
      B.literal(Sizes[K].getConstant());
      continue;
    }
    // A size computed in the graph (the batch and channels of
    // `Shape(y)[:2]`) stays as computed.
    if (!V) {
      B.piece(B.element(N.getOperand(3), K));
      B.markComputed();
      continue;
    }
    B.piece(B.dimOf(V, D));
  }
  RW.setOperand(&N, 3, B.finish("sizes_dynamic"));
  SizesRebuilt.insert(&N);
  if (Said.empty())
    emitRemark(RW.getDiags(), N)
        << "sizes '" << OldName << "' = [" << joinDims(Sizes)
        << "] held the old sizes of the input's own dims "
        << llvm::join(Kept, ", ") << ": now read from its Shape";
  else
    emitRemark(RW.getDiags(), N)
        << "sizes '" << OldName << "' = [" << joinDims(Sizes)
        << "] held the old sizes of " << llvm::join(Said, ", ")
        << ": an interpolation to the input size, now read from its Shape";
  ++RepairCounts["Resize to the input size"];
  Repaired = true;
  return true;
}

/// A Gather whose constant indices are 0, 1, ..., n-1 in order, n the old
/// size of the gathered dim, reads its data as it is: the TorchScript
/// exporter writes `mask[:, None, None, :]` as the flattened mask gathered
/// at b*S + s, baked as [3,1,1,10] of 0..29 over [B*S, 1]. Where that dim
/// became dynamic, the Gather becomes a Reshape to the data's dims before
/// the axis, the indices' dims and the data's dims after it, at the old
/// sizes: the Reshape repair then reads that target like any other (here
/// through the Flatten that merged [B,S]).
void DynamicRewrite::repairGatherInOrder(Node &N, DimAnalysis &DA,
                                         Rewriter &RW) {
  if (N.getNumOperands() < 2 || !N.getOperand(0) || !N.getOperand(1) ||
      !N.getResult(0))
    return;
  Value *Data = N.getOperand(0);
  const std::vector<DimExpr> *DD = DA.getDims(*Data);
  Tensor Idx = evaluateBaked(*N.getOperand(1),
                             RW.getModel().getOpsetVersion(""), BakedValues);
  if (!DD || RW.getModel().getOpsetVersion("") < 5)
    return;
  if (!Idx) {
    // The in-order reading first: where it makes the gather a view, the
    // indices say which row each one is for.
    bool Before = Repaired;
    Repaired = false;
    if (std::optional<int64_t> Axis =
            resolveAxis(N.getAttrInt("axis", 0), DD->size()))
      repairIndexSizes(N, *Axis, 1, DA, RW);
    repairComputedGatherInOrder(N, DA, RW);
    if (!Repaired)
      repairRowOffsets(N, DA, RW);
    Repaired |= Before;
    return;
  }
  std::optional<std::vector<int64_t>> Values = Idx.toInt64s();
  int64_t Rank = DD->size();
  std::optional<int64_t> AxisOf = resolveAxis(N.getAttrInt("axis", 0), Rank);
  if (!Values || !AxisOf)
    return;
  int64_t Axis = *AxisOf;
  DimExpr Gathered = computedDim(DA, *Data, *DD, Axis);
  if (Gathered.isConstant() || Gathered.hasUnknown() ||
      oldValue(Gathered) != int64_t(Values->size()) || Values->empty())
    return;
  for (size_t I = 0; I < Values->size(); ++I)
    if ((*Values)[I] != int64_t(I))
      return;
  // A scalar index drops the dim it picks along: `x[0]` selects the first
  // row, which at an old size of 1 is all of them; read as a view it would
  // merge every row into the next dim (examineFixedRows refuses it).
  if (Idx.getDims().empty() && Values->size() == 1)
    return;
  std::string Said = "constant indices '" + N.getOperand(1)->getName().str() +
                     "' " + printInts(Idx.getDims()) + " are 0.." +
                     std::to_string(Values->size() - 1) +
                     " in order over dim " + std::to_string(Axis) + " of '" +
                     Data->getName().str() + "' (" + Gathered.str() +
                     "): the gather is a view of it, ";
  auto Done = [&](const std::string &How) {
    emitRemark(RW.getDiags(), N) << Said << How;
    ++RepairCounts["in-order position gather"];
    Repaired = true;
  };
  if (gatherAsMergedView(N, DA, Idx.getDims(), Axis, RW))
    return Done("its dims those the dim merged, in order");
  std::vector<int64_t> Target;
  for (int64_t K = 0; K < Rank; ++K) {
    if (K == Axis) {
      for (int64_t D : Idx.getDims())
        Target.push_back(D);
      continue;
    }
    std::optional<int64_t> Old = oldValue(computedDim(DA, *Data, *DD, K));
    if (!Old)
      return;
    Target.push_back(*Old);
  }
  if (gatherAsView(N, Target, RW))
    Done("a Reshape to " + printInts(Target) + " at the old sizes");
}

/// Before:  G = Gather<axis=0>(Flatten<axis=2>(mask), <[3,1,1,3] 0..8>)
///          mask: [B,S], baked at B = S = 3
/// After:   G = Reshape(Flatten<axis=2>(mask), Concat([-1,1,1], S, [1]))
///
/// The in-order gather's view at the old sizes, [3,1,1,3,1], reads two
/// ways where two dims the gathered dim merged have one old size (batch
/// == length). The merge says which is which: the indices' dims that are
/// not 1 are the merged dims in order, where their old sizes agree one by
/// one; the first becomes -1 and the others are read from where the merge
/// took them. The data's other dims are copied from its Shape. False,
/// changing nothing, where the merged dims' old sizes all differ (the
/// view at the old sizes reads one way) or do not match.
bool DynamicRewrite::gatherAsMergedView(Node &N, DimAnalysis &DA,
                                        llvm::ArrayRef<int64_t> IdxDims,
                                        int64_t Axis, Rewriter &RW) {
  Value *Data = N.getOperand(0);
  const std::vector<DimExpr> *DD = DA.getDims(*Data);
  std::vector<std::pair<Value *, unsigned>> From =
      mergedFrom(Data, unsigned(Axis), DA);
  std::vector<int64_t> Sizes;
  for (const auto &[V, D] : From) {
    const std::vector<DimExpr> *VD = DA.getDims(*V);
    std::optional<int64_t> Size =
        VD ? oldValue(computedDim(DA, *V, *VD, D)) : std::nullopt;
    if (!Size)
      return false;
    Sizes.push_back(*Size);
  }
  std::vector<int64_t> Wide;
  for (int64_t D : IdxDims)
    if (D != 1)
      Wide.push_back(D);
  std::set<int64_t> Distinct(Sizes.begin(), Sizes.end());
  if (Wide != Sizes || Distinct.size() == Sizes.size())
    return false;
  ShapeVectorBuilder B(RW, N, N.getOperand(1)->getName().str() + "_part",
                       "dims");
  size_t Next = 0;
  for (int64_t K = 0; K < int64_t(DD->size()); ++K) {
    if (K != Axis) {
      B.piece(B.dimOf(Data, unsigned(K)));
      continue;
    }
    for (int64_t D : IdxDims) {
      if (D == 1)
        B.literal(1);
      else if (Next++ == 0)
        B.literal(-1);
      else
        B.piece(B.dimOf(From[Next - 1].first, From[Next - 1].second));
    }
  }
  return gatherAsView(N, B.finish("gathered_shape"), RW);
}

/// The view of \p N's data for indices \p IdxIn that count in order but
/// for a batch of old size 1 (countsUnitRows): the indices' first unit dim
/// is -1 (the batch), a dim already dynamic is read off the indices, a
/// new symbol's dim is its old size (the Reshape repairs read it then).
bool DynamicRewrite::gatherAsRowsView(Node &N, DimAnalysis &DA,
                                      llvm::ArrayRef<DimExpr> IdxIn,
                                      int64_t Axis, Rewriter &RW) {
  Value *Data = N.getOperand(0), *IdxV = N.getOperand(1);
  const std::vector<DimExpr> &DD = *DA.getDims(*Data);
  auto Fixed = [&](const DimExpr &D) -> std::optional<int64_t> {
    return D.isConstant() ? std::optional<int64_t>(D.getConstant())
                          : oldValue(D);
  };
  for (int64_t K = 0; K < int64_t(DD.size()); ++K)
    if (K != Axis && !Fixed(computedDim(DA, *Data, DD, K)))
      return false;
  ShapeVectorBuilder B(RW, N, IdxV->getName().str() + "_rows", "dims");
  bool Rows = false;
  for (int64_t K = 0; K < int64_t(DD.size()); ++K) {
    if (K != Axis) {
      B.literal(*Fixed(computedDim(DA, *Data, DD, K)));
      continue;
    }
    for (unsigned A = 0; A < IdxIn.size(); ++A) {
      const DimExpr &D = IdxIn[A];
      if (!Rows && D.isConstant() && D.getConstant() == 1) {
        B.literal(-1);
        Rows = true;
      } else if (std::optional<int64_t> V = Fixed(D)) {
        B.literal(*V);
      } else {
        B.piece(B.dimOf(IdxV, A));
      }
    }
  }
  return gatherAsView(N, B.finish("gathered_shape"), RW);
}

/// Replaces the Gather \p N by a Reshape of its data to \p Target (what
/// the gather reads, at the old sizes); false where its result cannot take
/// the Gather's place.
bool DynamicRewrite::gatherAsView(Node &N, llvm::ArrayRef<int64_t> Target,
                                  Rewriter &RW) {
  std::string Name = N.getOperand(1)->getName().str() + "_view";
  return gatherAsView(
      N,
      RW.createConstant(
          *N.getParentGraph(),
          Tensor::fromInt64s(Name, {int64_t(Target.size())}, Target)),
      RW);
}

/// The same with a target \p Shape already in the graph.
bool DynamicRewrite::gatherAsView(Node &N, Value *Shape, Rewriter &RW) {
  RW.setInsertionPointBefore(&N);
  Node *View =
      RW.createNode("Reshape", {N.getOperand(0), Shape}, 1, "", "gathered");
  Stale.insert(View->getResult(0));
  return succeeded(RW.replaceAllUsesWith(N.getResult(0), View->getResult(0)));
}

/// True if \p Gathered is \p Count times a product of new symbols of old
/// size 1 only, and \p IdxIn has a dim of 1 to stand for them.
bool DynamicRewrite::countsUnitRows(const DimExpr &Gathered,
                                    const DimExpr &Count,
                                    llvm::ArrayRef<DimExpr> IdxIn) const {
  std::optional<DimExpr> Rest = Gathered.divExact(Count);
  if (!Rest || Rest->isConstant() || Rest->hasUnknown())
    return false;
  bool OnlyUnits = true;
  Rest->forEachSymbol([&](llvm::StringRef S) {
    auto It = Old.find(S.str());
    OnlyUnits &= It != Old.end() && It->second == 1;
  });
  return OnlyUnits && oldValue(*Rest) == 1 &&
         llvm::any_of(IdxIn, [](const DimExpr &D) {
           return D.isConstant() && D.getConstant() == 1;
         });
}

/// Before:  I = Add(<int64[1,1,1,10] 0..9>, Mul(Range(0, B) to [B,1,1,1], 10))
///          G = Gather<axis=0>(Flatten<axis=2>(mask), I)   # mask: [B, S]
/// After:   G = Reshape(Flatten<axis=2>(mask), [-1, 1, 1, 10, 1])
///
/// The same in an export that kept its batch dynamic: the TorchScript
/// exporter's `b*S + j` is computed from the batch's Range. Indices that
/// count 0, 1, ... in row-major order over their own dims
/// (IndexFormReader: the last dim that is not 1 steps by 1, each one
/// before by the product of the dims after it), as many as the gathered
/// dim has, read the data as it is: the Gather becomes a Reshape to the
/// data's dims around the axis and the indices' dims, one dim that was
/// already dynamic as -1, whose target the Reshape repairs then read.
void DynamicRewrite::repairComputedGatherInOrder(Node &N, DimAnalysis &DA,
                                                 Rewriter &RW) {
  Value *Data = N.getOperand(0), *IdxV = N.getOperand(1);
  const std::vector<DimExpr> *DD = DA.getDims(*Data);
  const std::vector<DimExpr> *ID = DA.getDims(*IdxV);
  int64_t Rank = DD->size();
  std::optional<int64_t> AxisOf = resolveAxis(N.getAttrInt("axis", 0), Rank);
  if (!ID || ID->empty() || !AxisOf)
    return;
  int64_t Axis = *AxisOf;
  IndexFormReader Reader(DA, RW.getModel().getOpsetVersion(""), BakedValues);
  std::optional<IndexForm> F = Reader.read(*IdxV);
  if (!F || F->Coef.size() != ID->size() || !F->Offset.isConstant() ||
      F->Offset.getConstant() != 0)
    return;
  std::vector<DimExpr> IdxIn = expressInInputs(DA, *IdxV, *ID, Old);
  // Strides and dims are compared as the Reshape repairs read them: at the
  // old sizes, the dims already dynamic at stand-in sizes.
  DimExpr Stride = DimExpr::constant(1);
  for (int A = int(IdxIn.size()) - 1; A >= 0; --A) {
    const DimExpr &D = IdxIn[A];
    if (D.isConstant() && D.getConstant() == 1)
      continue;
    std::optional<int64_t> Want = readingValue(Stride);
    if (D.hasUnknown() || !Want ||
        readingValue(DA.getBest(F->Coef[A])) != Want)
      return;
    Stride = Stride * D;
  }
  const DimExpr &Count = Stride;
  DimExpr Gathered = computedDim(DA, *Data, *DD, Axis);
  std::optional<int64_t> Size = readingValue(Gathered);
  if (Gathered.hasUnknown() || Gathered == Count || !Size ||
      readingValue(Count) != Size)
    return;
  // A new symbol of old size 1 leaves no dim of its own in the count: a
  // batch of 1 whose rows b*S the export folded to 0 (arange(1) is [0]).
  // As for GatherND's tuples of zeros (repairComputedGatherND), the same
  // model exported at batch 3 counts b*S + j, so the indices' first unit
  // dim is read as that batch: each row reads its own. Only where the
  // count misses exactly such symbols and the indices have a unit dim
  // for them; otherwise examineFixedRows refuses the fixed rows.
  bool UnitSymbol = false;
  Gathered.forEachSymbol([&](llvm::StringRef S) {
    auto It = Old.find(S.str());
    UnitSymbol |= It != Old.end() && It->second == 1;
  });
  if (UnitSymbol) {
    if (countsUnitRows(Gathered, Count, IdxIn) &&
        gatherAsRowsView(N, DA, IdxIn, Axis, RW)) {
      emitRemark(RW.getDiags(), N)
          << "indices '" << IdxV->getName() << "' computed in the graph "
          << "count 0, 1, ... in order over dim " << Axis << " of '"
          << Data->getName() << "' (" << Gathered.str() << ") but for "
          << "its symbols of old size 1, whose rows the export folded to "
          << "0: read as each row's own, the gather is a view of it";
      ++RepairCounts["in-order position gather"];
      Repaired = true;
    }
    return;
  }
  std::vector<int64_t> Target;
  bool Free = false;
  auto Push = [&](const DimExpr &D) {
    std::optional<int64_t> V =
        D.isConstant() ? std::optional<int64_t>(D.getConstant()) : oldValue(D);
    if (V) {
      Target.push_back(*V);
      return true;
    }
    if (Free)
      return false;
    Free = true;
    Target.push_back(-1);
    return true;
  };
  for (int64_t K = 0; K < Rank; ++K) {
    if (K == Axis) {
      for (const DimExpr &D : IdxIn)
        if (!Push(D))
          return;
      continue;
    }
    if (!Push(computedDim(DA, *Data, *DD, K)))
      return;
  }
  if (!gatherAsView(N, Target, RW))
    return;
  emitRemark(RW.getDiags(), N)
      << "indices '" << IdxV->getName() << "' computed in the graph count "
      << "0, 1, ... in order over dim " << Axis << " of '" << Data->getName()
      << "' (" << Gathered.str() << "): the gather is a view of it, a "
      << "Reshape to " << printInts(Target);
  ++RepairCounts["in-order position gather"];
  Repaired = true;
}

/// Before:  L = Mod(Sub(ArgMax(Equal(ids, pad)), 1), <int64 9>)   # ids: [B, 9]
///          G = Gather<axis=0>(Flatten<axis=2>(logits), Add(L, offsets))
/// After:   the 9 is T, read with Shape(ids)[1]
///
/// Indices computed from the data (GPT-2's last token,
/// `argmax(...) % ids.shape[-1]`) with a size the export read and folded:
/// a one-element constant in their arithmetic that equals the old size of
/// a new symbol S the gathered dims grow with was that size (a literal of
/// the same number would be a coincidence), and kept it would wrap or clamp
/// the positions at S's old size. Each is rebuilt from S's input dim. A
/// number that is also another new symbol's old size (batch and length both
/// 3), or an old size of 2 (`// 2` reads the same), could be either or a
/// number: refused there, naming the constant. Old sizes of 1 are left
/// (every `- 1` would match).
void DynamicRewrite::repairIndexSizes(Node &N, unsigned FirstDim,
                                      unsigned NumDims, DimAnalysis &DA,
                                      Rewriter &RW) {
  Value *Data = N.getOperand(0);
  const std::vector<DimExpr> *DD = DA.getDims(*Data);
  if (!DD)
    return;
  // The old sizes of the symbols the gathered dims grow with, each with
  // one symbol of that size (a size two symbols share is refused below).
  std::map<int64_t, std::string> BySize;
  for (unsigned D = FirstDim; D < FirstDim + NumDims && D < DD->size(); ++D)
    computedDim(DA, *Data, *DD, D).forEachSymbol([&](llvm::StringRef S) {
      auto It = Old.find(S.str());
      if (It != Old.end() && It->second >= 2)
        BySize.emplace(It->second, S.str());
    });
  if (BySize.empty())
    return;
  std::set<int64_t> Shared; // old sizes of more than one new symbol
  std::set<int64_t> Seen;
  for (const auto &[S, Size] : Old)
    if (!Seen.insert(Size).second)
      Shared.insert(Size);
  int Opset = RW.getModel().getOpsetVersion("");
  // The arithmetic between the indices and the ops that read data: casts,
  // views, elementwise ops, the tuples' Concat; a bounded walk.
  std::vector<Node *> Work{N.getOperand(1)->getDefiningNode()};
  std::set<Node *> Visited;
  while (!Work.empty() && Visited.size() < 64) {
    Node *M = Work.back();
    Work.pop_back();
    // A comparison's operands are values, not positions (a pad id that
    // happens to be the old length).
    if (!M || !Visited.insert(M).second || hasTrait(*M, Comparison) ||
        !(hasTrait(*M, ElementwiseBroadcasting) ||
          hasTrait(*M, ShapePreserving) || hasTrait(*M, ViewLike) ||
          hasTrait(*M, Concatenates)))
      continue;
    unsigned Operands = hasTrait(*M, ViewLike) ? 1 : M->getNumOperands();
    for (unsigned I = 0; I < Operands; ++I) {
      Value *Op = M->getOperand(I);
      Tensor C = Op ? evaluateBaked(*Op, Opset, BakedValues) : Tensor();
      std::optional<std::vector<int64_t>> V = C ? C.toInt64s() : std::nullopt;
      if (!C) {
        if (Op)
          Work.push_back(Op->getDefiningNode());
        continue;
      }
      if (!V || V->size() != 1 || !BySize.count((*V)[0]))
        continue;
      if ((*V)[0] <= 2 || Shared.count((*V)[0])) {
        std::set<std::string> Pins;
        for (const auto &[Sym, Size] : Old)
          if (Size == (*V)[0])
            Pins.insert(Sym);
        if (!alreadyReported(M, Pins))
          Problems.push_back(
              {M,
               "constant '" + Op->getName().str() +
                   "' = " + std::to_string((*V)[0]) +
                   " in the arithmetic of the "
                   "indices of '" +
                   N.getResult(0)->getName().str() +
                   "' may be the old size of " + llvm::join(Pins, " or ") +
                   " that the export folded, or a number, and nothing tells "
                   "them apart; export at sizes that differ from each "
                   "other and from 2, or keep " +
                   llvm::join(Pins, ", ") + " static with allow-partial=true",
               Pins});
        continue;
      }
      const std::string &S = BySize[(*V)[0]];
      auto [Input, Dim] = inputDimOf(S);
      if (!Input)
        continue;
      RW.setOperand(M, I, buildInputDim(*M, Input, Dim, C, RW.getModel(), RW));
      emitRemark(RW.getDiags(), *M)
          << "constant '" << Op->getName() << "' = " << (*V)[0]
          << " in the arithmetic of the indices of '"
          << N.getResult(0)->getName() << "', which pick along dims that " << S
          << " sizes, is the old size of " << S
          << ": the export read it and folded it; read at run time";
      ++RepairCounts["index size"];
      Repaired = true;
    }
  }
}

/// Before:  I = Add(ArgMax(ids), Mul(<int64[1] 0>, T))   # ids: [B, T]
///          G = Gather<axis=0>(Flatten<axis=2>(x), I)      # x: [B, T, C]
/// After:   I = Add(ArgMax(ids), Mul(Range(0, B), T))
///
/// TorchScript's `x[arange(B), idx]` (CLIP's and GPT-2's pooling at the
/// last token) flattens the two dims it indexes and adds each row's offset
/// b*T to idx; a static export at B = 1 folds arange(B) to [0]. Where the
/// gathered dim is X*R, X a new symbol of old size 1, and the indices add
/// to a term that X sizes a product of a one-element 0 and a value equal
/// to R (the row stride), that 0 is read as each row's own position along
/// X, as positionInTuples reads GatherND's tuples, and rebuilt with Range;
/// the indices then reach row b's block. Anything else along such a dim is
/// refused after the repairs (reportMergedRows).
void DynamicRewrite::repairRowOffsets(Node &N, DimAnalysis &DA, Rewriter &RW) {
  Value *Data = N.getOperand(0), *IdxV = N.getOperand(1);
  const std::vector<DimExpr> *DD = DA.getDims(*Data);
  const std::vector<DimExpr> *ID = DA.getDims(*IdxV);
  Node *Sum = IdxV->getDefiningNode();
  std::optional<int64_t> Axis =
      DD ? resolveAxis(N.getAttrInt("axis", 0), DD->size()) : std::nullopt;
  if (!ID || !Axis || !Sum || !hasTrait(*Sum, Sums) ||
      Sum->getNumOperands() != 2)
    return;
  DimExpr Gathered = computedDim(DA, *Data, *DD, *Axis);
  std::vector<DimExpr> IdxIn = expressInInputs(DA, *IdxV, *ID, Old);
  int Opset = RW.getModel().getOpsetVersion("");
  for (const auto &[X, OldSize] : Old) {
    if (OldSize != 1)
      continue;
    std::optional<DimExpr> Stride = Gathered.divExact(DimExpr::symbol(X));
    auto At = llvm::find(IdxIn, DimExpr::symbol(X));
    auto [Input, InputDim] = inputDimOf(X);
    if (!Stride || Stride->hasUnknown() || At == IdxIn.end() || !Input)
      continue;
    unsigned K = At - IdxIn.begin();
    for (unsigned T = 0; T < 2; ++T) {
      Value *Term = Sum->getOperand(T), *Other = Sum->getOperand(1 - T);
      Node *Mul = Term ? Term->getDefiningNode() : nullptr;
      const std::vector<DimExpr> *OD = Other ? DA.getDims(*Other) : nullptr;
      if (!Mul || !hasTrait(*Mul, Multiplies) || Mul->getNumOperands() != 2 ||
          !OD || OD->size() != IdxIn.size() ||
          expressInInputs(DA, *Other, *OD, Old)[K] != DimExpr::symbol(X))
        continue;
      for (unsigned Z = 0; Z < 2; ++Z) {
        Value *ZV = Mul->getOperand(Z), *SV = Mul->getOperand(1 - Z);
        Tensor C = ZV ? evaluateBaked(*ZV, Opset, BakedValues) : Tensor();
        std::optional<std::vector<int64_t>> Values =
            C ? C.toInt64s() : std::nullopt;
        const std::vector<DimExpr> *SD = SV ? DA.getData(*SV) : nullptr;
        size_t Rank = C ? C.getDimsRef().size() : 0;
        if (!Values || Values->size() != 1 || (*Values)[0] != 0 || !SD ||
            SD->size() != 1 || DA.getBest((*SD)[0]) != DA.getBest(*Stride) ||
            IdxIn.size() - K > Rank)
          continue;
        BakedConstant B;
        B.User = Mul;
        B.Operand = Z;
        B.T = C;
        BakedAxis A;
        A.Axis = Rank - (IdxIn.size() - K);
        A.Partner = Input;
        A.PartnerAxis = InputDim;
        A.IsInputSymbol = true;
        A.DimText = X;
        A.Expr = DimExpr::symbol(X);
        B.Axes.push_back(A);
        RW.setOperand(Mul, Z, buildPositions(B, A.Axis, RW.getModel(), RW));
        RowOffsetGathers.insert(N.getResult(0)->getName().str());
        emitRemark(RW.getDiags(), N)
            << "indices '" << IdxV->getName() << "' add "
            << "'" << ZV->getName() << "' " << printInts(C.getDims())
            << " = 0 times " << Stride->str() << " to a term " << X
            << " sizes, picking along "
            << "dim " << *Axis << " of '" << Data->getName() << "' ("
            << Gathered.str() << "): the 0 is each row's offset along " << X
            << " (arange(" << X << ") at " << X << " = 1), rebuilt with Range";
        ++RepairCounts["row-offset gather"];
        Repaired = true;
        return;
      }
    }
  }
}

/// GatherElements reads its data along `axis`; along its other dims the
/// indices may not be longer than the data. A data table computed from
/// constants at the old size of an index dim, and the same along it
/// (RoBERTa's token types, `buffer.expand(B, -1)` gathered at the position
/// ids), would bound the new symbol by that size: it is cut to 1 there and
/// expanded to the indices' dim at run time. A table that varies along such
/// a dim is left to the bound the dim analysis states.
void DynamicRewrite::repairGatherElements(Node &N, DimAnalysis &DA,
                                          Rewriter &RW) {
  if (N.getNumOperands() < 2 || !N.getOperand(0) || !N.getOperand(1))
    return;
  Value *Indices = N.getOperand(1);
  Tensor T = evaluateBaked(*N.getOperand(0), RW.getModel().getOpsetVersion(""),
                           BakedValues);
  const std::vector<DimExpr> *ID = DA.getDims(*Indices);
  if (!T || !ID || ID->size() != T.getDims().size())
    return;
  std::vector<int64_t> Dims = T.getDims();
  std::optional<int64_t> Axis =
      resolveAxis(N.getAttrInt("axis", 0), int64_t(Dims.size()));
  if (!Axis)
    return;
  std::vector<unsigned> Cut;
  std::vector<std::string> Said;
  for (unsigned A = 0; A < Dims.size(); ++A) {
    if (int64_t(A) == *Axis)
      continue;
    DimExpr E = computedDim(DA, *Indices, *ID, A);
    if (E.isConstant() || E.hasUnknown() || oldValue(E) != Dims[A] ||
        !isConstantAlong(T, A))
      continue;
    Cut.push_back(A);
    Said.push_back(E.str() + " (dim " + std::to_string(A) + " of '" +
                   Indices->getName().str() + "')");
  }
  if (Cut.empty())
    return;
  std::string Name = N.getOperand(0)->getName().str();
  Tensor Collapsed = sliceAtZero(T, Cut, Name + "_collapsed");
  if (!Collapsed)
    return;
  Graph &G = *N.getParentGraph();
  ShapeVectorBuilder B(RW, N, Name + "_sizes", "gather_table");
  for (unsigned A = 0; A < Dims.size(); ++A) {
    if (llvm::is_contained(Cut, A))
      B.piece(B.dimOf(Indices, A));
    else
      B.literal(Dims[A]);
  }
  Value *Shape = B.finish("gather_table");
  Node *Expand = RW.createNode(
      "Expand", {RW.createConstant(G, std::move(Collapsed)), Shape}, 1, "",
      "gather_table");
  RW.setOperand(&N, 0, Expand->getResult(0));
  emitRemark(RW.getDiags(), N)
      << "table '" << Name << "' " << printInts(Dims) << " is the same along "
      << llvm::join(Said, ", ")
      << ", index dims of its old size: cut to 1 there and expanded to "
         "them";
  ++RepairCounts["expanded gather table"];
  Repaired = true;
}

/// The pieces a Concat joined dim \p D of \p V from, each with the dims
/// it flattens (mergedFrom; itself when no view merged it) and their old
/// sizes; empty when there is no such Concat or an old size is not known.
std::vector<BakedAxis::Piece>
DynamicRewrite::concatPieces(Value *V, unsigned D, const DimAnalysis &DA) {
  std::vector<BakedAxis::Piece> Pieces;
  for (auto [PV, PD] : concatenatedFrom(V, D, DA)) {
    BakedAxis::Piece P;
    P.V = PV;
    P.Dim = PD;
    if (const std::vector<DimExpr> *Dims = DA.getDims(*PV);
        Dims && PD < Dims->size())
      P.Size = computedDim(DA, *PV, *Dims, PD);
    std::vector<std::pair<Value *, unsigned>> Run = mergedFrom(PV, PD, DA);
    if (Run.empty())
      Run.push_back({PV, PD});
    for (auto [FV, FD] : Run) {
      const std::vector<DimExpr> *Dims = DA.getDims(*FV);
      if (!Dims || FD >= Dims->size())
        return {};
      DimExpr E = computedDim(DA, *FV, *Dims, FD);
      std::optional<int64_t> Old = E.isConstant()
                                       ? std::optional<int64_t>(E.getConstant())
                                   : E.hasUnknown() ? std::nullopt
                                                    : oldValue(E);
      if (!Old)
        return {};
      P.Factors.push_back({FV, FD, *Old, !E.isConstant()});
    }
    Pieces.push_back(std::move(P));
  }
  return Pieces;
}

/// A constant operand of an elementwise node whose dims are the old sizes
/// of dims that are dynamic in another operand: broadcasting would pin
/// them. BakedConstants.cpp rebuilds it (grids, anchor grids, masks,
/// tables) or says why it cannot; the latter is a problem naming the
/// constant, and the symbols it pins.
void DynamicRewrite::repairBakedConstants(Node &N, DimAnalysis &DA,
                                          Rewriter &RW, bool IsConcat,
                                          bool ExpandData, bool BatchDimsOnly) {
  // Concat does not broadcast: its other dims must be equal, so a dim of 1
  // (a class token [1,1,d] next to [N,T,d]) is baked too, and the rebuilt
  // constant is expanded to the partner's dims.
  int64_t ConcatAxis = N.getAttrInt("axis", 0);
  // An Expand's shape operand is no partner: its dims are not the data's.
  // Where the shape is constant too, the whole result is a baked constant
  // that its own users rebuild.
  if (ExpandData &&
      (N.getNumOperands() < 2 || !N.getOperand(1) ||
       evaluateBaked(*N.getOperand(1), RW.getModel().getOpsetVersion(""),
                     BakedValues)))
    return;
  unsigned Operands = ExpandData ? 1 : N.getNumOperands();
  for (unsigned I = 0; I < Operands; ++I) {
    Value *C = N.getOperand(I);
    Tensor T =
        C ? evaluateBaked(*C, RW.getModel().getOpsetVersion(""), BakedValues)
          : Tensor();
    if (!T)
      continue;
    std::vector<int64_t> Dims = T.getDims();
    if (BatchDimsOnly && Dims.size() < 3)
      continue;
    // A MatMul's matrix dims meet their partner's as a product does.
    auto MatrixDim = [&](size_t A) {
      return BatchDimsOnly && A + 2 >= Dims.size();
    };
    BakedConstant B;
    B.User = &N;
    B.Operand = I;
    B.T = T;
    std::set<std::string> New;
    int64_t Axis =
        ConcatAxis < 0 ? ConcatAxis + int64_t(Dims.size()) : ConcatAxis;
    for (unsigned A = 0; A < Dims.size(); ++A) {
      if (IsConcat ? (Dims[A] < 1 || int64_t(A) == Axis)
                   : (Dims[A] <= 1 || MatrixDim(A)))
        continue;
      for (unsigned J = 0; J < Operands; ++J) {
        Value *P = N.getOperand(J);
        const std::vector<DimExpr> *PD = P ? DA.getDims(*P) : nullptr;
        if (J == I || !PD ||
            evaluateBaked(*P, RW.getModel().getOpsetVersion(""), BakedValues))
          continue;
        int64_t PA = int64_t(A) + int64_t(PD->size()) - int64_t(Dims.size());
        if (PA < 0)
          continue;
        DimExpr E = computedDim(DA, *P, *PD, PA);
        if (E.isConstant() || E.hasUnknown() || oldValue(E) != Dims[A])
          continue;
        BakedAxis BA;
        BA.Axis = A;
        BA.Partner = P;
        BA.PartnerAxis = PA;
        BA.IsInputSymbol = E.isSymbol() && Old.count(E.getSymbol().str());
        BA.DimText = E.str();
        BA.Expr = E;
        B.Axes.push_back(BA);
        addNewSymbols(E, New);
        break;
      }
      if (!IsConcat && Dims[A] > 1 &&
          (B.Axes.empty() || B.Axes.back().Axis != A))
        if (std::optional<BakedAxis> BA =
                downstreamAxis(N, A, Dims.size(), Dims[A], DA)) {
          B.Axes.push_back(*BA);
          const std::vector<DimExpr> *PD = DA.getDims(*BA->Partner);
          if (BA->IsInputSymbol || !PD)
            New.insert(BA->DimText);
          else
            addNewSymbols(computedDim(DA, *BA->Partner, *PD, BA->PartnerAxis),
                          New);
        }
    }
    if (B.Axes.empty())
      continue;
    // An axis of an old size of a new symbol that nothing sizes yet may
    // meet its partner behind a Reshape that is still baked (a causal
    // mask's rows): the rebuild waits until no other repair is left.
    if (!IsConcat && !Settled &&
        llvm::any_of(llvm::enumerate(Dims), [&](const auto &D) {
          return D.value() > 1 && !MatrixDim(D.index()) &&
                 llvm::any_of(
                     Old,
                     [&](const auto &O) { return O.second == D.value(); }) &&
                 llvm::none_of(B.Axes, [&](const BakedAxis &A) {
                   return A.Axis == D.index();
                 });
        })) {
      HeldBack = true;
      continue;
    }
    for (BakedAxis &BA : B.Axes)
      if (!BA.IsInputSymbol)
        BA.Pieces = concatPieces(BA.Partner, BA.PartnerAxis, DA);
    bool Exact =
        llvm::any_of(B.Axes, [](const BakedAxis &A) { return A.Exact; });
    if (IsConcat) {
      if (std::string Why = indicesPastData(N, B, DA); !Why.empty()) {
        Problems.push_back({&N,
                            Why + "; re-export with dynamic axes, or keep " +
                                llvm::join(New, ", ") +
                                " static with allow-partial=true",
                            New});
        continue;
      }
      std::string Said;
      if (std::optional<unsigned> Row = positionInTuples(N, B, DA, Said)) {
        if (Problem P = expandBakedOperand(
                B, RW, "the dims of the other inputs it is concatenated with",
                "tuple position", Row, Said);
            !P.Message.empty())
          Problems.push_back({&N,
                              P.Message +
                                  "; re-export with dynamic axes, or "
                                  "keep " +
                                  llvm::join(New, ", ") +
                                  " static with allow-partial=true",
                              New});
        continue;
      }
    }
    if (IsConcat || Exact) {
      if (Problem P = expandBakedOperand(
              B, RW,
              IsConcat ? "the dims of the other inputs it is concatenated with"
                       : "the dims its result must have further on",
              IsConcat ? "expanded Concat operand" : "expanded constant");
          !P.Message.empty())
        Problems.push_back(
            {&N,
             P.Message + "; re-export with dynamic axes, or keep " +
                 llvm::join(New, ", ") + " static with allow-partial=true",
             New});
      continue;
    }
    RebuildResult R = rebuildBakedConstant(B, RW.getModel(), RW, rowOffsets());
    if (!R.Rule.empty()) {
      if (R.Bounds)
        SlicedTables.push_back({R.Along, describe(N) + ": " + R.Message});
      if (!R.OffsetAlong.empty())
        SlicedTables.push_back({R.OffsetAlong, describe(N) + ": " + R.Message,
                                R.RowsFromZero, R.OffsetBy});
      emitRemark(RW.getDiags(), N) << R.Message;
      ++RepairCounts[R.Rule];
      Repaired = true;
      continue;
    }
    std::string Names = llvm::join(New, ", ");
    Problems.push_back({&N,
                        R.Message + "; re-export with dynamic axes, or keep " +
                            Names + " static with allow-partial=true",
                        New});
  }
}

/// A one-element constant 0 that a Concat along the last axis makes
/// component c of GatherND's index tuples, where component c picks along
/// the very dim the constant's axis of old size 1 stands for: CLIP's
/// `hidden[arange(B), eos]` baked at batch 1 as the tuple part [[0]]. At
/// the old size the 0 is both "row 0 for every row" and "each row's own
/// position". The export of the same model at batch 3 bakes [0,1,2] there
/// (rebuilt with Range, as an affine constant) and "row 0" would bake
/// [0,0,0]; the tuple's rows are the data's rows, so the 0 is read as the
/// position, which every other batch agrees with. Expanding it would read
/// row 0 for every row. Returns the constant's axis of the rows (with
/// \p Said saying why), or nullopt where the constant is no such part.
std::optional<unsigned> DynamicRewrite::positionInTuples(Node &N,
                                                         const BakedConstant &B,
                                                         DimAnalysis &DA,
                                                         std::string &Said) {
  std::vector<int64_t> Dims = B.T.getDims();
  std::optional<std::vector<int64_t>> Values = B.T.toInt64s();
  if (!Values || Values->size() != 1 || (*Values)[0] != 0)
    return std::nullopt;
  for (const TuplePick &P : tuplePicks(N, B, DA)) {
    if (P.Dim.isConstant())
      continue;
    for (const BakedAxis &A : B.Axes) {
      const std::vector<DimExpr> *PD = DA.getDims(*A.Partner);
      if (Dims[A.Axis] != 1 || !PD ||
          computedDim(DA, *A.Partner, *PD, A.PartnerAxis) != P.Dim)
        continue;
      Said = "constant '" + N.getOperand(B.Operand)->getName().str() + "' " +
             printInts(Dims) + " is component " + std::to_string(P.Component) +
             " of the index tuples of '" +
             P.User->getResult(0)->getName().str() + "', which picks along " +
             A.DimText +
             ": its 0 is each row's own position (an export at another "
             "batch bakes 0, 1, 2, ... there), rebuilt with Range; ";
      return A.Axis;
    }
  }
  return std::nullopt;
}

/// The components of GatherND index tuples that Concat \p N's constant
/// operand holds (a Concat along the last axis; the widths of the operands
/// before it give the first), with the data dim each picks along.
std::vector<DynamicRewrite::TuplePick>
DynamicRewrite::tuplePicks(Node &N, const BakedConstant &B, DimAnalysis &DA) {
  std::vector<int64_t> Dims = B.T.getDims();
  int64_t Axis = N.getAttrInt("axis", 0);
  if (Dims.empty() || (Axis != -1 && Axis != int64_t(Dims.size()) - 1))
    return {};
  int64_t First = 0;
  for (unsigned J = 0; J < B.Operand; ++J) {
    const std::vector<DimExpr> *D =
        N.getOperand(J) ? DA.getDims(*N.getOperand(J)) : nullptr;
    if (!D || D->size() != Dims.size() || !D->back().isConstant())
      return {};
    First += D->back().getConstant();
  }
  std::vector<TuplePick> Picks;
  for (const Use &U : N.getResult(0)->getUses()) {
    if (U.isGraphOutput() || U.Index != 1 ||
        !hasTrait(*U.User, GathersTuples) || !U.User->getOperand(0))
      continue;
    Value *Data = U.User->getOperand(0);
    const std::vector<DimExpr> *DD = DA.getDims(*Data);
    int64_t Batch = U.User->getAttrInt("batch_dims", 0);
    for (int64_t C = First; C < First + Dims.back(); ++C)
      if (DD && Batch + C < int64_t(DD->size()))
        Picks.push_back({U.User, C - First, C, Batch + C,
                         computedDim(DA, *Data, *DD, Batch + C)});
  }
  return Picks;
}

/// True if component \p C (along the last axis) of the int64 values \p V
/// of dims \p Dims differs anywhere along \p Axis.
static bool componentVaries(llvm::ArrayRef<int64_t> V,
                            llvm::ArrayRef<int64_t> Dims, unsigned Axis,
                            int64_t C) {
  int64_t Stride = 1;
  for (size_t K = Axis + 1; K < Dims.size(); ++K)
    Stride *= Dims[K];
  for (size_t I = 0; I < V.size(); ++I) {
    int64_t Along = (int64_t(I) / Stride) % Dims[Axis];
    if (int64_t(I) % Dims.back() == C && Along > 0 &&
        V[I] != V[I - size_t(Along * Stride)])
      return true;
  }
  return false;
}

/// A constant operand of a Concat that makes GatherND's index tuples, with
/// a component that grows along a baked axis (the batch positions [0,1,2]
/// beside an ArgMax): rebuilt at the partner's size, its indices reach
/// that size less one, so the data dim the component picks along must be
/// the partner's dim itself. A data dim that stays a number (or is another
/// symbol) would be read past at larger sizes. Returns why, or empty.
std::string DynamicRewrite::indicesPastData(Node &N, const BakedConstant &B,
                                            DimAnalysis &DA) {
  std::optional<std::vector<int64_t>> Values = B.T.toInt64s();
  if (!Values)
    return {};
  std::vector<int64_t> Dims = B.T.getDims();
  for (const TuplePick &P : tuplePicks(N, B, DA))
    for (const BakedAxis &A : B.Axes) {
      if (!componentVaries(*Values, Dims, A.Axis, P.OwnComponent))
        continue;
      const std::vector<DimExpr> *PD = DA.getDims(*A.Partner);
      if (PD && computedDim(DA, *A.Partner, *PD, A.PartnerAxis) == P.Dim)
        continue;
      return "constant '" + N.getOperand(B.Operand)->getName().str() + "' " +
             printInts(Dims) + " holds component " +
             std::to_string(P.Component) + " of the index tuples of '" +
             P.User->getResult(0)->getName().str() + "', which grows along " +
             A.DimText + " (dim " + std::to_string(A.PartnerAxis) + " of '" +
             A.Partner->getName().str() + "') but picks along dim " +
             std::to_string(P.DataDim) + " of '" +
             P.User->getOperand(0)->getName().str() + "', which is " +
             P.Dim.str() + ": rebuilt, the indices would pass it";
    }
  return {};
}

/// Dim \p K of \p V as computed from the input symbols. The baked
/// constant under repair has itself made the algebra merge that dim with
/// its old size (an Add with a [1,3,8,8,2] grid, then a Concat, prove
/// ceil(H/8) = 8 downstream), so a number is looked up in the dims of the
/// first, forward sweep, which only upstream equalities have touched.
DimExpr DynamicRewrite::computedDim(const DimAnalysis &DA, const Value &V,
                                    llvm::ArrayRef<DimExpr> Dims, unsigned K) {
  DimExpr E = expressInInputs(DA, V, Dims, Old)[K];
  const std::vector<DimExpr> *Forward = DA.getForwardDims(V);
  if (!Forward || K >= Forward->size())
    return E;
  const DimExpr &F = (*Forward)[K];
  if (F.isConstant() || F == E || !DA.isInputExpressible(F))
    return E;
  if (E.isConstant())
    return oldValue(F) == E.getConstant() ? F : E;
  // The same merge beside a dim the export kept dynamic: 5*batch where
  // batch*seq is computed (seq of old size 5), equal at the reading sizes;
  // or beside a new symbol of old size 1: seq where seq*batch is computed
  // (a baked [14,1,64] downstream merged them at batch 1).
  std::optional<int64_t> At = readingValue(F);
  std::set<std::string> InF = newSymbols(F), InE = newSymbols(E);
  if (At && readingValue(E) == At && InF.size() > InE.size() &&
      std::includes(InF.begin(), InF.end(), InE.begin(), InE.end()))
    return F;
  return E;
}

/// A constant sized for the old input where no broadcast may stand in for
/// the new size (a Concat operand, an Attention's mask): the axes of more
/// than one element are rebuilt as for elementwise ops (the same along
/// them, affine, ...), then the operand is expanded to the partner's dims
/// on every baked axis (Expand keeps a dim where its shape says 1).
Problem DynamicRewrite::expandBakedOperand(const BakedConstant &B, Rewriter &RW,
                                           llvm::StringRef Why,
                                           llvm::StringRef Rule,
                                           std::optional<unsigned> Positions,
                                           llvm::StringRef Said) {
  Node &N = *B.User;
  std::string Name = N.getOperand(B.Operand)->getName().str();
  BakedConstant Wide = B;
  Wide.Axes.clear();
  for (const BakedAxis &A : B.Axes)
    if (B.T.getDims()[A.Axis] > 1)
      Wide.Axes.push_back(A);
  std::string Done = Said.str();
  if (Positions) {
    RW.setOperand(&N, B.Operand,
                  buildPositions(B, *Positions, RW.getModel(), RW));
    // Range gives the rows their size already; the other baked axes (none
    // in CLIP's [[0]]) still need the Expand.
    if (B.Axes.size() == 1) {
      emitRemark(RW.getDiags(), N) << Done.substr(0, Done.size() - 2);
      ++RepairCounts[Rule.str()];
      Repaired = true;
      return {};
    }
  } else if (!Wide.Axes.empty()) {
    RebuildResult R = rebuildBakedConstant(Wide, RW.getModel(), RW);
    if (R.Rule.empty())
      return {&N, R.Message, {}};
    ++RepairCounts[R.Rule];
    Done = R.Message + "; ";
  }
  ShapeVectorBuilder Shape(RW, N, Name + "_sizes", "baked_expand");
  std::vector<std::string> Dims;
  for (unsigned D = 0; D < B.T.getDims().size(); ++D) {
    auto It =
        llvm::find_if(B.Axes, [&](const BakedAxis &A) { return A.Axis == D; });
    if (It == B.Axes.end()) {
      Shape.literal(1);
      continue;
    }
    Shape.piece(Shape.dimOf(It->Partner, It->PartnerAxis));
    Dims.push_back(It->DimText + " (dim " + std::to_string(It->PartnerAxis) +
                   " of '" + It->Partner->getName().str() + "')");
  }
  Value *Sizes = Shape.finish("baked_expand");
  Node *Expand = RW.createNode("Expand", {N.getOperand(B.Operand), Sizes}, 1,
                               "", "baked_expand");
  RW.setOperand(&N, B.Operand, Expand->getResult(0));
  emitRemark(RW.getDiags(), N)
      << Done << "constant '" << Name << "' " << printInts(B.T.getDims())
      << " is expanded to " << llvm::join(Dims, ", ") << ", " << Why;
  ++RepairCounts[Rule.str()];
  Repaired = true;
  return {};
}

namespace {
/// What a repair reads besides its node.
struct RepairScope {
  DimAnalysis &DA;
  Rewriter &RW;
  const llvm::DenseMap<const Node *, size_t> &Order;
};
using RepairFn = void (*)(DynamicRewrite &, Node &, const RepairScope &);
} // namespace

void DynamicRewrite::repair(Node &N, DimAnalysis &DA, Rewriter &RW,
                            const llvm::DenseMap<const Node *, size_t> &Order) {
  // The repairs rooted at one op, as a pattern is anchored on its op. Built
  // on first use: no static constructor.
  static const llvm::StringMap<RepairFn> ByRootOp = [] {
    struct Rooted {
      const char *RootOp;
      RepairFn Repair;
    };
    const Rooted Repairs[] = {
        {"Reshape",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairReshape(N, S.DA, S.RW);
         }},
        // The shape first; a baked data operand (position ids expanded to
        // the batch) once the shape needs nothing.
        {"Expand",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           bool Before = D.Repaired;
           D.Repaired = false;
           D.repairExpand(N, S.DA, S.RW);
           if (!D.Repaired)
             D.repairBakedConstants(N, S.DA, S.RW, /*IsConcat=*/false,
                                    /*ExpandData=*/true);
           D.Repaired |= Before;
         }},
        {"GatherND",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairGatherND(N, S.DA, S.RW);
         }},
        {"Gather",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairGatherInOrder(N, S.DA, S.RW);
         }},
        {"GatherElements",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairGatherElements(N, S.DA, S.RW);
         }},
        {"Slice",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairSliceEnds(N, S.DA, S.RW);
         }},
        {"ScatterND",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairSliceWrite(N, S.DA, S.RW);
         }},
        // initial_h and initial_c.
        {"LSTM",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairRecurrentState(N, S.DA, S.RW, /*NumStates=*/2);
         }},
        {"GRU",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairRecurrentState(N, S.DA, S.RW, /*NumStates=*/1);
         }},
        {"RNN",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairRecurrentState(N, S.DA, S.RW, /*NumStates=*/1);
         }},
        {"Resize",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairResize(N, S.DA, S.RW, S.Order);
         }},
        {"Concat",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairBakedConstants(N, S.DA, S.RW, /*IsConcat=*/true);
         }},
        {"Attention",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairExactOperands(N, S.DA, S.RW);
         }},
        {"RotaryEmbedding",
         [](DynamicRewrite &D, Node &N, const RepairScope &S) {
           D.repairExactOperands(N, S.DA, S.RW);
         }},
    };
    llvm::StringMap<RepairFn> Map;
    for (const Rooted &R : Repairs)
      Map[R.RootOp] = R.Repair;
    return Map;
  }();
  // The dims after a repair are known only once the model is inferred
  // again: a node downstream of this round's repairs waits for the next
  // round (a chain of baked targets, one link per round), as one that read
  // the stale dims would keep a size that the repair upstream freed.
  auto MarkStale = [&] {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      Stale.insert(N.getResult(I));
  };
  if (llvm::any_of(N.getOperands(),
                   [&](const Value *V) { return V && Stale.count(V); }))
    return MarkStale();
  if (!N.isOnnxDomain())
    return;
  int Before = 0, After = 0;
  for (const auto &KV : RepairCounts)
    Before += KV.second;
  if (RepairFn Repair = ByRootOp.lookup(N.getOpType()))
    Repair(*this, N, RepairScope{DA, RW, Order});
  else if (hasTrait(N, ElementwiseBroadcasting))
    repairBakedConstants(N, DA, RW, /*IsConcat=*/false);
  else if (hasTrait(N, BatchedMatrixProduct))
    repairBakedConstants(N, DA, RW, /*IsConcat=*/false, /*ExpandData=*/false,
                         /*BatchDimsOnly=*/true);
  for (const auto &KV : RepairCounts)
    After += KV.second;
  if (After != Before) {
    MarkStale();
    ++TimesRepaired[&N];
  }
}

void DynamicRewrite::setShapeOperand(Node &N, unsigned I, Value *New,
                                     Rewriter &RW) {
  if (const Value *Old = N.getOperand(I)) {
    auto It = ShapeOrigin.find(Old->getName().str());
    ShapeOrigin[New->getName().str()] =
        It != ShapeOrigin.end() ? It->second : Old->getName().str();
  }
  RW.setOperand(&N, I, New);
}

std::string DynamicRewrite::shapeOperandName(const Node &N, unsigned I) const {
  llvm::StringRef Name = N.getOperand(I)->getName();
  auto It = ShapeOrigin.find(Name.str());
  if (It == ShapeOrigin.end() || It->second == Name)
    return "'" + Name.str() + "'";
  return "'" + It->second + "' (as make-dynamic rebuilt it: '" + Name.str() +
         "')";
}

bool DynamicRewrite::alreadyReported(const Node *N,
                                     const std::set<std::string> &New) const {
  for (const Problem &P : Problems)
    if (P.N == N &&
        std::includes(P.Pins.begin(), P.Pins.end(), New.begin(), New.end()))
      return true;
  return false;
}

/// Runs \p Pipeline on \p M as a nested pipeline sharing \p Ctx's
/// analyses; its diagnostics read "make-dynamic: dce: ...".
LogicalResult runInnerPipeline(llvm::StringRef Pipeline, Model &M,
                               PassContext &Ctx) {
  PassManagerOptions Opts;
  // The outer pass manager verifies make-dynamic's result as a whole.
  Opts.VerifyEach = false;
  PassManager Inner(Opts);
  std::string Err;
  if (failed(Inner.addPipeline(Pipeline, Err)))
    return emitError(Ctx.getDiags()) << "inner pipeline: " << Err;
  // make-dynamic has changed the model since any analysis was cached.
  Ctx.getAnalysisManager().clear();
  return Inner.run(M, Ctx.getDiags(), Ctx.getAnalysisManager());
}

LogicalResult DynamicRewrite::attempt(Model &M, PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  Problems.clear();
  Bounds.clear();
  SlicedTables.clear();
  for (auto &[In, Dims] : NewShapes)
    In->getMutableType().setShape(Dims);
  if (failed(reinfer(M, Diags)))
    return failure();

  // A repair can make the dims after it dynamic and so reveal the next
  // baked constant (RetinaFace's second FPN Resize reads the first one's
  // result): repeat until nothing changes. A node downstream of a repair
  // waits a round (repair), so a deep model takes a round per link of its
  // longest chain of baked constants: a static 80-layer decoder repairs
  // its layers in turn. Each round is one inference of the model, so the
  // rounds are bounded only by progress: a node repaired over and over
  // (two repairs undoing each other) ends them.
  TimesRepaired.clear();
  for (int Round = 0; Round < MaxRepairRounds; ++Round) {
    Problems.clear();
    BakedValues.clear();
    EarlierDimsOf.clear();
    Stale.clear();
    Repaired = false;
    {
      DimAnalysis DA(M);
      DA.setKeepForwardDims(true);
      DA.run();
      Rewriter RW(M, Diags);
      llvm::DenseMap<const Node *, size_t> Order;
      std::vector<Node *> Nodes;
      // Every graph: a subgraph's Reshape bakes sizes as well. Within a
      // graph, walk order is topological order.
      M.getGraph().walk([&](Node &N) {
        Order[&N] = Nodes.size();
        Nodes.push_back(&N);
      });
      for (Node *N : Nodes)
        repair(*N, DA, RW, Order);
      // A baked constant with an axis nothing sizes yet waited for the
      // other repairs (downstreamAxis); once none is left, it is repaired
      // with the axes it has, or reported.
      if (!Repaired && HeldBack) {
        Settled = true;
        Problems.clear();
        for (Node *N : Nodes)
          repair(*N, DA, RW, Order);
        Settled = false;
      }
      HeldBack = false;
      // The round's analysis ends here: nothing may read it later.
      CurrentDA = nullptr;
    }
    if (!Repaired)
      break;
    if (failed(runInnerPipeline("dce", M, Ctx)) || failed(reinfer(M, Diags)))
      return failure();
    if (llvm::any_of(TimesRepaired, [](const auto &KV) {
          return KV.second > MaxRepairsOfNode;
        }))
      break;
  }
  DimAnalysis DA(M);
  DA.run();
  for (const std::string &C : DA.getConflicts())
    Problems.push_back({nullptr,
                        "the dynamic model contradicts itself (a constant "
                        "still holds an old size?): " +
                            C,
                        {}});
  // The repairs' own reports name what they could not rewrite; the
  // constraints say which symbols that pins.
  examineConstraints(DA);
  examineResizes(M, DA);
  examinePads(M, DA, Diags);
  examineUncovered(M, DA);
  examineDataOperands(M, DA);
  examineMergedSymbols(M, DA);
  examineVanishedSymbols(M, DA);
  examineBakedPositions(M, DA);
  examineFixedWrites(M, DA);
  examineAdaptiveWindows(M, DA);
  examineCountScales(M, DA);
  examineSlicedTables(M, DA);
  examineUnitSymbols();
  examineUnitDims(M, DA);
  examineBroadcastData(M, DA);
  checkHints(M);
  return success();
}

void DynamicRewrite::pin(const std::set<std::string> &Symbols) {
  for (auto &[In, Dims] : NewShapes)
    for (size_t K = 0; K < Dims.size(); ++K)
      if (Dim &D = Dims[K];
          D.isSymbol() && Symbols.count(D.getSymbol().str())) {
        PinnedDims.insert({In, K});
        Dim Known = Dim::known(Old[D.getSymbol().str()]);
        Known.setDenotation(D.getDenotation());
        D = Known;
      }
  for (const std::string &S : Symbols)
    Old.erase(S);
}

/// Before IR 4 every initializer must be listed as a graph input, and an
/// initializer the repairs added is not: each becomes a `Constant` node at
/// the top of its graph instead (as constant-fold writes them there), which
/// takes integers from opset 9 only.
static LogicalResult constantsToNodes(Model &M, DiagnosticEngine &Diags) {
  if (M.getIrVersion() >= 4)
    return success();
  std::vector<Graph *> Graphs{&M.getGraph()};
  M.getGraph().walk([&](Node &N) {
    for (const Attribute &A : N.getAttrs())
      for (const std::unique_ptr<Graph> &G : A.Graphs)
        Graphs.push_back(G.get());
  });
  Rewriter RW(M, Diags);
  for (Graph *G : Graphs) {
    std::vector<Value *> Added;
    for (const std::unique_ptr<Value> &C : G->getConstants())
      Added.push_back(C.get());
    for (Value *C : Added) {
      int32_t Elem = C->getInitializer().getElemType();
      bool Float = Elem == static_cast<int32_t>(ElementType::Float) ||
                   Elem == static_cast<int32_t>(ElementType::Float16) ||
                   Elem == static_cast<int32_t>(ElementType::Double);
      if (M.getOpsetVersion("") < 9 && !Float)
        return emitError(Diags, *C)
               << "a model of IR version " << M.getIrVersion()
               << " lists every initializer as an input, and a Constant node "
                  "holds integers from opset 9 only: cannot store the "
                  "repaired constant";
      RW.setInsertionPoint(*G, G->getNodes().empty() ? nullptr
                                                     : &G->getNodes().front());
      Node *CN = RW.createNode("Constant", {}, 1, "", C->getName());
      Value *R = CN->getResult(0);
      R->setType(C->getType());
      CN->setAttr(
          Attribute::getTensor("value", C->getInitializer().withName("")));
      bool IsOutput = C->isGraphOutput();
      if (failed(RW.replaceAllUsesWith(C, R)))
        return emitError(Diags, *C) << "cannot replace the initializer by a "
                                       "Constant node";
      if (!IsOutput) {
        std::string Name = C->getName().str();
        C->setName(R->getName());
        R->setName(Name);
      }
      G->eraseConstant(C);
    }
  }
  return success();
}

/// True if \p S can be written in rename-dims' map= without changing
/// meaning: the list splits at ',' and an entry at its first ':'.
static bool fitsRenameMap(llvm::StringRef S) {
  return !S.empty() && S.find_first_of(",:[]") == llvm::StringRef::npos;
}

/// `"old:new"`, quoted for the pipeline text.
static std::string renameEntry(llvm::StringRef From, llvm::StringRef To) {
  std::string Out = "\"";
  for (char C : (From + ":" + To).str()) {
    if (C == '"' || C == '\\')
      Out += '\\';
    Out += C;
  }
  return Out + "\"";
}

LogicalResult DynamicRewrite::nameDynamicDims(Model &M,
                                              llvm::ArrayRef<ShapeSpec> Specs,
                                              PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  // Each symbol of the model, with where it first appears (for messages).
  std::map<std::string, std::string> Where;
  forEachRecordedDim(M, [&](Dim &D, const Value *V, unsigned I) {
    if (D.isSymbol())
      Where.emplace(D.getSymbol().str(), V ? "dim " + std::to_string(I) +
                                                 " of '" + V->getName().str() +
                                                 "'"
                                           : std::string("a value_info"));
    return false;
  });
  llvm::StringMap<Value *> Inputs;
  for (const std::unique_ptr<Value> &V : M.getGraph().getInputs())
    Inputs.try_emplace(V->getName(), V.get());

  // Model symbol -> the name shapes= gives it (itself when kept), and the
  // first dim that says so.
  std::map<std::string, std::string> Renames, RenamedAt;
  // Given name -> the dims it names, by whether they were static.
  std::map<std::string, std::vector<std::string>> StaticUses, DynamicUses;
  struct UnknownDim {
    Value *In;
    unsigned Index;
    std::string Name;
  };
  std::vector<UnknownDim> Unknowns;
  for (const ShapeSpec &Spec : Specs) {
    Value *In = Inputs.lookup(Spec.Name);
    const Type *T = In ? &In->getType() : nullptr;
    // Outputs, unknown names and wrong ranks are applyShape's to report.
    if (!T || !T->isTensor() || !T->hasShape() ||
        T->getRank() != Spec.Dims.size())
      continue;
    llvm::ArrayRef<Dim> Dims = T->getDims();
    for (unsigned I = 0; I < Dims.size(); ++I) {
      llvm::StringRef Text = Spec.Dims[I];
      int64_t Number;
      if (Text == "?" || !Text.getAsInteger(10, Number))
        continue;
      std::string At = "dim " + std::to_string(I) + " of '" + Spec.Name + "'";
      if (Dims[I].isKnown()) {
        StaticUses[Text.str()].push_back(At);
        continue;
      }
      DynamicUses[Text.str()].push_back(At);
      if (Dims[I].isUnknown()) {
        Unknowns.push_back({In, I, Text.str()});
        continue;
      }
      std::string S = Dims[I].getSymbol().str();
      RenamedAt.emplace(S, At);
      auto [It, Inserted] = Renames.emplace(S, Text.str());
      if (!Inserted && It->second != Text)
        return emitError(Diags, *In)
               << "symbol '" << S << "' is named '" << It->second << "' and '"
               << Text << "' in shapes=; give it one name";
    }
  }
  // A name for a dynamic dim and a static one would tie the static dim to
  // a symbol that has no old size: nothing could be repaired for it.
  for (const auto &[Name, Uses] : DynamicUses)
    if (auto It = StaticUses.find(Name); It != StaticUses.end())
      return emitError(Diags)
             << "symbol '" << Name << "' names " << Uses.front()
             << ", which is already dynamic, and " << It->second.front()
             << ", which is static: the model's '" << Name
             << "' cannot be renamed away; use two symbols";
  // An unknown dim has no identity: naming it after another dim would
  // claim the two are equal, which nothing here proves.
  for (const UnknownDim &U : Unknowns) {
    const std::vector<std::string> &Uses = DynamicUses[U.Name];
    bool Kept = llvm::any_of(Renames,
                             [&](const auto &R) { return R.second == U.Name; });
    if (Uses.size() > 1 || Kept)
      return emitError(Diags, *U.In)
             << "dim " << U.Index << " is unknown; naming it '" << U.Name
             << "', which shapes= also gives another dynamic dim, would "
                "claim the two are equal, which nothing proves; use another "
                "symbol";
  }

  // The names taken once this is done, so that a fresh name is fresh.
  std::set<std::string> Taken;
  for (const auto &[S, At] : Where)
    Taken.insert(S);
  for (const auto *Uses : {&StaticUses, &DynamicUses})
    for (const auto &[Name, At] : *Uses)
      Taken.insert(Name);
  auto Fresh = [&](const std::string &Base) {
    for (unsigned K = 1;; ++K) {
      std::string Name = Base + "_" + std::to_string(K);
      if (Taken.insert(Name).second)
        return Name;
    }
  };

  std::map<std::string, std::string> Map;
  for (const auto &[From, To] : Renames)
    if (From != To)
      Map[From] = To;
  // A model symbol that a given name takes, and that is neither renamed
  // itself nor proven to be the dim renamed to it, is something else (an
  // NMS count called N): it gets a fresh name.
  std::unique_ptr<DimAnalysis> DA;
  auto ProvenSame = [&](const std::string &A, const std::string &B) {
    if (!DA) {
      DA = std::make_unique<DimAnalysis>(M);
      DA->run();
    }
    return DA->provenEqual(DimExpr::symbol(A), DimExpr::symbol(B));
  };
  std::vector<std::string> Said;
  for (const auto &[Name, At] : Where) {
    if (Renames.count(Name))
      continue;
    bool Given = StaticUses.count(Name) || DynamicUses.count(Name);
    if (!Given)
      continue;
    auto Source = llvm::find_if(
        Map, [&Wanted = Name](const auto &R) { return R.second == Wanted; });
    if (Source != Map.end() && ProvenSame(Source->first, Name))
      continue; // rename-dims merges the two: they are one dim
    std::string New = Fresh(Name);
    Map[Name] = New;
    emitRemark(Diags) << "symbol '" << Name << "' was already used by the "
                      << "model (" << At << ") for another dim: renamed it "
                      << "to '" << New << "'";
  }
  for (const auto &[From, To] : Renames)
    if (From != To)
      emitRemark(Diags) << RenamedAt[From] << " is already dynamic as '" << From
                        << "': renamed '" << From << "' to '" << To
                        << "' everywhere";
  if (!Map.empty()) {
    std::string Entries;
    for (const auto &[From, To] : Map) {
      if (!fitsRenameMap(From) || !fitsRenameMap(To))
        return emitError(Diags)
               << "symbol '" << From << "' would be renamed to '" << To
               << "', and rename-dims cannot carry a name with ',', ':', "
                  "'[' or ']'; use other symbols";
      Entries += (Entries.empty() ? "" : ",") + renameEntry(From, To);
    }
    if (failed(runInnerPipeline("rename-dims{map=" + Entries + "}", M, Ctx)))
      return failure();
  }
  for (const UnknownDim &U : Unknowns) {
    Dim &D = U.In->getMutableType().getMutableDims()[U.Index];
    Dim NamedDim = Dim::symbol(U.Name);
    NamedDim.setDenotation(D.getDenotation());
    D = NamedDim;
    emitRemark(Diags) << "dim " << U.Index << " of '" << U.In->getName()
                      << "' was unknown: named '" << U.Name << "'";
  }
  for (const auto &[Name, Uses] : DynamicUses)
    Named.insert(Name);
  return success();
}

/// Tries of readKeptCones after the rules leave a problem.
constexpr unsigned MaxKeptReads = 4;

LogicalResult MakeDynamicPass::run(Model &M, PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  DynamicRewrite Run;
  auto &Old = Run.Old;
  auto &Problems = Run.Problems;
  auto &RepairCounts = Run.RepairCounts;
  if (Shapes.empty())
    return emitError(Diags) << "give shapes=input[N,3,H,W]";
  if (failed(Run.nameDynamicDims(M, Shapes.getValue(), Ctx)))
    return failure();
  std::set<std::string> Existing;
  forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
    if (D.isSymbol())
      Existing.insert(D.getSymbol().str());
    return false;
  });
  std::set<std::string> Given;
  for (const ShapeSpec &Spec : Shapes) {
    if (!Given.insert(Spec.Name).second)
      return emitError(Diags) << "'" << Spec.Name << "' is given twice";
    if (failed(Run.applyShape(M, Spec, Diags)))
      return failure();
  }
  for (const auto &[Sym, Value] : Old)
    if (Existing.count(Sym))
      return emitError(Diags)
             << "symbol '" << Sym << "' is already used by the model";
  if (Old.empty() && Run.Named.empty())
    return emitError(Diags) << "shapes= makes no dim dynamic (give symbols)";
  for (const std::string &S : Run.HintOrder)
    if (!Old.count(S) && !Run.Named.count(S))
      return emitError(Diags)
             << "output hint symbol '" << S
             << "' is none of the new input symbols ("
             << llvm::join(llvm::make_first_range(Old), ", ") << ")";
  if (failed(Run.readRelations(M, Relations.getValue(), Diags)))
    return failure();

  Run.collectTargetLiterals(M);
  for (Node &N : M.getGraph().getNodes())
    if (hasTrait(N, ReadsTypeOnly))
      Run.OriginalTypeReaders.insert(&N);
  Ctx.Changed = true;
  // With allow-partial, the symbols the model pins go back to their old
  // sizes and the rest is tried again (each attempt pins at least one more
  // symbol, so this ends). Only the problems that name the fewest symbols
  // pin at once: a problem over H, W and N is often what H and W's own
  // problems leave downstream (a ViT's token count times the batch), and
  // it goes away with them, so N stays dynamic.
  unsigned KeptReads = 0;
  for (;;) {
    if (failed(Run.attempt(M, Ctx)))
      return failure();
    // Values computed from the dims the model keeps dynamic and constants
    // are read as constants only where the rules left a problem: where
    // they can, the rules rebuild what the model computes instead. A read
    // can clear a conflict that hid the dims of the next reader (a mask
    // every layer reads): a few more tries while they read something.
    if (!Problems.empty() && KeptReads < MaxKeptReads &&
        Run.readKeptCones(M, Diags)) {
      ++KeptReads;
      continue;
    }
    size_t Fewest = SIZE_MAX;
    for (const Problem &P : Problems)
      if (!P.Pins.empty())
        Fewest = std::min(Fewest, P.Pins.size());
    std::set<std::string> Pinned;
    for (const Problem &P : Problems)
      if (P.Pins.size() == Fewest)
        Pinned.insert(P.Pins.begin(), P.Pins.end());
    if (!AllowPartial || Pinned.empty())
      break;
    for (const Problem &P : Problems)
      if (P.Pins.size() != Fewest)
        continue;
      else if (P.N)
        emitWarning(Diags, *P.N) << P.Message;
      else
        emitWarning(Diags) << P.Message;
    std::string Names;
    for (const std::string &S : Pinned)
      Names += (Names.empty() ? "" : ", ") + S + "=" + std::to_string(Old[S]);
    emitWarning(Diags) << "keeping " << Names << " static";
    Run.pin(Pinned);
    if (Old.empty())
      return emitError(Diags) << "every new symbol is pinned by the model: "
                                 "no dim can become dynamic";
  }
  std::string Summary;
  for (const auto &[Kind, Count] : RepairCounts)
    Summary += (Summary.empty() ? "" : ", ") + std::to_string(Count) + " " +
               Kind + (Count > 1 ? "s" : "");
  emitRemark(Diags) << "repaired " << (Summary.empty() ? "nothing" : Summary);
  // What is left cannot be fixed by keeping dims static: it is an error
  // even with allow-partial (the result would fail at some new size).
  for (const Problem &P : Problems)
    if (P.N)
      emitError(Diags, *P.N) << P.Message;
    else
      emitError(Diags) << P.Message;
  if (!Problems.empty())
    return emitError(Diags) << Problems.size()
                            << " problem(s) left; the model would not run at "
                               "every size"
                            << (AllowPartial ? ""
                                             : " (allow-partial=true keeps "
                                               "the pinned dims static)");
  if (failed(Run.storeBounds(M, Diags)) || failed(Run.storeRelations(M, Diags)))
    return failure();
  if (Unify &&
      failed(runInnerPipeline("unify-dims{derived=expr-name}", M, Ctx)))
    return failure();
  return constantsToNodes(M, Diags);
}

std::unique_ptr<Pass> onnxopt::createMakeDynamicPass() {
  return std::make_unique<MakeDynamicPass>();
}
