//===- KeptCones.cpp - make-dynamic's reading of values a kept dim sizes --===//
//
// Before:  (int64[batch,10] ids) => ... {
//            B = Shape<0,1>(ids)
//            P = Expand(arange10, Concat(B, [1]))       # position ids
//            M = Where(Equal(GatherND(CumSum(f(P)), ..), ..), 0, -inf)
//            S = Add(scores, M)                           # M: [batch,1,10,10]
//          }
// After:   S = Add(scores, M_kept)   <float[1,1,10,10] M_kept = {...}>
//
// An export that kept one dim dynamic (the batch) and baked another (the
// length) computes some tensors from constants and the kept dim's size
// only: a decoder's mask built from position ids expanded to the batch.
// Exported static in every dim, the exporter folds them into constants,
// which the baked-constant rules read and rebuild at the new sizes; with
// the batch kept they stay a computation whose constants bake the length
// where no rule reads it.
//
// Such a value, where an elementwise op reads it beside values the inputs'
// data reach, is evaluated at several sizes of the kept dims. When it is
// the same along each axis those sizes change and otherwise the same at
// every size tried, that op reads instead the constant with those axes cut
// to 1: the op's other operands have the axes at the kept dim's size, so
// broadcasting gives it back, and the constant then meets the baked-
// constant rules as a static export's does. Only values whose constant has
// a dim of the old size of a symbol being made dynamic are read this way:
// the others bake nothing the pass changes. A value that follows a new
// symbol as the model computes it (through a Shape the model had, or, with
// the new symbols one larger, no longer holding the constant as its
// leading block) is never read: that would bake what the model computes.
//
// The other way round (the length kept, the batch baked): the value moves
// with the kept dim and stays a computation, but where it has the old size
// of a new symbol at an axis where the op's data has that symbol, and is
// the same along it, the op reads one row of it.
//
// Runs only after the rules leave a problem (MakeDynamicPass::run): where
// they can, they rebuild what the model computes instead.
//
//===----------------------------------------------------------------------===//
#include "MakeDynamic.h"
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/ConstantPatterns.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <set>

using namespace onnxopt;
using namespace onnxopt::makedynamic;

namespace {

/// The sizes the kept symbols take, in turn, to see whether a value
/// follows them. Three, so that a value the same along an axis is told from
/// one that happens to be at two; large enough that a dim strided down by
/// up to 32 still differs at each (2, 3, 5 times 32: a YOLO grid's rows
/// at sizes 2, 3, 5 are all one row, and would read as the same along
/// them); axesThatMove checks that every axis the kept symbols size moved.
constexpr int64_t KeptSizes[] = {64, 96, 160};

/// The values of one graph computed from constants and the sizes of
/// values only (Shape, Size), through default-domain ops that evaluate.
class KeptCone {
public:
  KeptCone(const Graph &G, const DimAnalysis &DA, const OldValues &Old,
           const std::set<std::string> &Kept,
           const llvm::DenseSet<const Node *> &Original, int64_t Opset)
      : DA(DA), Old(Old), Kept(Kept), Opset(Opset) {
    for (const Node &N : G.getNodes()) {
      if (!readsSizesOnly(N))
        continue;
      bool Follows = hasTrait(N, ReadsTypeOnly) && Original.count(&N) &&
                     readsNewSymbol(*N.getResult(0));
      for (const Value *O : N.getOperands())
        Follows |= O && FollowsNew.count(O);
      for (unsigned I = 0; I < N.getNumResults(); ++I)
        if (const Value *R = N.getResult(I)) {
          Members.insert(R);
          if (Follows)
            FollowsNew.insert(R);
        }
    }
  }

  bool contains(const Value *V) const { return Members.count(V); }
  /// True if \p V reads, through a Shape or Size the model had before the
  /// repairs, a dim that is now a new symbol: it follows that symbol as it
  /// is, and its value at the old size is no constant to read.
  bool followsNewSymbols(const Value *V) const { return FollowsNew.count(V); }

  /// \p V with every kept symbol at \p Size and every new one at its old
  /// size plus \p Shift; a null Tensor where a dim that V reads has another
  /// symbol (one inference made up), an op refuses or the cone is over budget.
  Tensor evaluate(const Value &V, int64_t Size, int64_t Shift = 0) {
    Memo.clear();
    Evaluated = 0;
    this->Size = Size;
    this->Shift = Shift;
    return eval(V);
  }

private:
  bool readsNewSymbol(const Value &R) const {
    const std::vector<DimExpr> *Data = DA.getData(R);
    if (!Data)
      return true;
    bool Reads = false;
    for (const DimExpr &E : *Data)
      E.forEachSymbol(
          [&](llvm::StringRef S) { Reads |= Old.count(S.str()) > 0; });
    return Reads;
  }

  bool readsSizesOnly(const Node &N) const {
    if (hasTrait(N, ReadsTypeOnly))
      return true;
    if (!N.isOnnxDomain() || !N.getSubgraphs().empty() ||
        hasTrait(N, Nondeterministic) || !isEvaluableOp(N.getOpType()))
      return false;
    for (const Value *O : N.getOperands())
      if (O && !O->isConstant() && !Members.count(O) && !getConstantValue(*O))
        return false;
    return true;
  }

  Tensor eval(const Value &V) {
    if (auto It = Memo.find(&V); It != Memo.end())
      return It->second;
    Tensor T = evalUncached(V);
    Memo[&V] = T;
    return T;
  }

  Tensor evalUncached(const Value &V) {
    if (Tensor C = getConstantValue(V))
      return C;
    const Node *N = V.getDefiningNode();
    if (!N || !Members.count(&V) || ++Evaluated > MaxNodes)
      return Tensor();
    if (hasTrait(*N, ReadsTypeOnly))
      return sizesOf(V);
    std::vector<Tensor> Operands;
    for (const Value *O : N->getOperands()) {
      Operands.push_back(O ? eval(*O) : Tensor());
      if (O && !Operands.back())
        return Tensor();
    }
    std::string Why;
    ConstantEvalOptions Opts;
    // A mask at a long baked length is large: up to 16 MB a result, which
    // keeps the cone's values to a few hundred MB at most.
    Opts.MaxResultBytes = uint64_t(16) << 20;
    std::optional<std::vector<Tensor>> Results =
        evaluateNode(*N, Operands, Opset, Opts, Why);
    if (!Results)
      return Tensor();
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (N->getResult(I) == &V)
        return (*Results)[I];
    return Tensor();
  }

  /// A Shape or Size result: the analysis holds its elements as dims.
  Tensor sizesOf(const Value &V) const {
    const std::vector<DimExpr> *Data = DA.getData(V);
    const std::vector<DimExpr> *Dims = DA.getDims(V);
    if (!Data || !Dims || Dims->size() > 1)
      return Tensor();
    std::vector<int64_t> Values;
    for (const DimExpr &E : *Data) {
      std::optional<int64_t> X =
          E.evaluate([&](llvm::StringRef S) -> std::optional<int64_t> {
            if (auto It = Old.find(S.str()); It != Old.end())
              return It->second + Shift;
            return Kept.count(S.str()) ? std::optional<int64_t>(Size)
                                       : std::nullopt;
          });
      if (!X)
        return Tensor();
      Values.push_back(*X);
    }
    std::vector<int64_t> Shape;
    if (!Dims->empty())
      Shape.push_back(static_cast<int64_t>(Values.size()));
    else if (Values.size() != 1)
      return Tensor();
    return Tensor::fromInt64s(V.getName(), Shape, Values);
  }

  /// Masks and position tables are small cones: a few dozen nodes.
  static constexpr unsigned MaxNodes = 512;
  const DimAnalysis &DA;
  /// The symbols being made dynamic, at their old sizes: the constant
  /// read is what a static export would bake.
  const OldValues &Old;
  /// The symbols of the graph inputs that stay dynamic.
  const std::set<std::string> &Kept;
  int64_t Opset;
  llvm::DenseSet<const Value *> Members, FollowsNew;
  llvm::DenseMap<const Value *, Tensor> Memo;
  unsigned Evaluated = 0;
  int64_t Size = 0, Shift = 0;
};

/// The axes along which \p Values (one per kept size) differ in length, or
/// std::nullopt where they differ in rank.
std::optional<std::vector<unsigned>>
axesThatMove(llvm::ArrayRef<Tensor> Values) {
  std::vector<int64_t> First = Values.front().getDims();
  std::vector<unsigned> Axes;
  for (const Tensor &T : Values)
    if (T.getDims().size() != First.size())
      return std::nullopt;
  for (unsigned A = 0; A < First.size(); ++A)
    if (llvm::any_of(Values, [&](const Tensor &T) {
          return T.getDims()[A] != First[A];
        }))
      Axes.push_back(A);
  return Axes;
}

} // namespace

/// True if \p Big's elements at the indices of \p Small (each dim of Big
/// at least Small's) are Small's, byte for byte.
static bool isLeadingBlock(const Tensor &Small, const Tensor &Big) {
  std::vector<int64_t> SD = Small.getDims(), BD = Big.getDims();
  if (Small.getElemType() != Big.getElemType() || SD.size() != BD.size())
    return false;
  for (size_t A = 0; A < SD.size(); ++A)
    if (SD[A] > BD[A])
      return false;
  std::string SS, BS;
  std::optional<llvm::StringRef> SB = Small.getRawBytes(SS),
                                 BB = Big.getRawBytes(BS);
  int64_t Count = Small.getNumElements();
  if (!SB || !BB || Count <= 0)
    return SB && BB;
  size_t Elem = SB->size() / Count;
  std::vector<int64_t> Index(SD.size(), 0);
  for (int64_t Flat = 0; Flat < Count; ++Flat) {
    int64_t At = 0;
    for (size_t A = 0; A < SD.size(); ++A)
      At = At * BD[A] + Index[A];
    if (SB->substr(Flat * Elem, Elem) != BB->substr(At * Elem, Elem))
      return false;
    for (size_t A = SD.size(); A-- > 0;) {
      if (++Index[A] < SD[A])
        break;
      Index[A] = 0;
    }
  }
  return true;
}

/// The one constant that \p Values are, each cut to 1 along \p Axes, when
/// each is the same along them; a null Tensor otherwise.
static Tensor cutAlike(llvm::ArrayRef<Tensor> Values,
                       llvm::ArrayRef<unsigned> Axes, llvm::StringRef Name) {
  Tensor Cut;
  for (const Tensor &T : Values) {
    for (unsigned A : Axes)
      if (!isConstantAlong(T, A))
        return Tensor();
    Tensor C = Axes.empty() ? T.withName(Name) : sliceAtZero(T, Axes, Name);
    if (!C || (Cut && !Cut.contentEquals(C)))
      return Tensor();
    if (!Cut)
      Cut = C;
  }
  return Cut;
}

/// True if an operand of \p User other than \p V (of rank \p Rank) has a
/// dim at V's axis \p A, aligned from the right as broadcasting aligns
/// them, for which \p Holds is true.
static bool anotherOperandHas(const Node &User, const Value &V, size_t Rank,
                              unsigned A, const DimAnalysis &DA,
                              llvm::function_ref<bool(const DimExpr &)> Holds) {
  for (const Value *O : User.getOperands()) {
    const std::vector<DimExpr> *D = O && O != &V ? DA.getDims(*O) : nullptr;
    if (D && D->size() + A >= Rank && Holds((*D)[D->size() - Rank + A]))
      return true;
  }
  return false;
}

/// True if \p E is a new symbol whose old size is \p Size.
static bool isNewSymbolOfSize(const DimExpr &E, int64_t Size,
                              const OldValues &Old) {
  auto It = E.isSymbol() ? Old.find(E.getSymbol().str()) : Old.end();
  return It != Old.end() && It->second == Size;
}

/// True if \p User, an elementwise op that broadcasts, gets each axis of
/// \p Moving of its operand \p V (aligned from the right) from another
/// operand that has it at the same size: cut to 1 in V, the result keeps
/// it.
static bool othersSize(const Node &User, const Value &V,
                       llvm::ArrayRef<unsigned> Moving, const DimAnalysis &DA) {
  const std::vector<DimExpr> *Own = DA.getDims(V);
  return Own && llvm::all_of(Moving, [&](unsigned A) {
           return anotherOperandHas(
               User, V, Own->size(), A, DA,
               [&](const DimExpr &E) { return E == (*Own)[A]; });
         });
}

/// The axes of \p V's value \p T (not among \p Moving) that hold the old
/// size of a new symbol which another operand of \p User has there
/// (aligned from the right), along which T is the same: a baked batch
/// that the op's data has as the symbol.
static std::vector<unsigned> bakedAxes(const Node &User, const Value &V,
                                       const Tensor &T,
                                       llvm::ArrayRef<unsigned> Moving,
                                       const DimAnalysis &DA,
                                       const OldValues &Old) {
  std::vector<unsigned> Axes;
  std::vector<int64_t> Dims = T.getDims();
  for (unsigned A = 0; A < Dims.size(); ++A)
    if (Dims[A] >= 2 && !llvm::is_contained(Moving, A) &&
        anotherOperandHas(User, V, Dims.size(), A, DA, [&](const DimExpr &E) {
          return isNewSymbolOfSize(E, Dims[A], Old);
        }))
      Axes.push_back(A);
  return Axes;
}

/// True if another operand of \p User has, at each of \p V's \p Axes
/// (aligned from the right), a new symbol whose old size is V's dim there:
/// one row of V broadcasts to it.
static bool rowBroadcasts(const Node &User, const Value &V,
                          llvm::ArrayRef<unsigned> Axes, const DimAnalysis &DA,
                          const OldValues &Old) {
  const std::vector<DimExpr> *Own = DA.getDims(V);
  return Own && llvm::all_of(Axes, [&](unsigned A) {
           return A < Own->size() && (*Own)[A].isConstant() &&
                  anotherOperandHas(User, V, Own->size(), A, DA,
                                    [&](const DimExpr &E) {
                                      return isNewSymbolOfSize(
                                          E, (*Own)[A].getConstant(), Old);
                                    });
         });
}

/// Slice(V, 0, 1) along \p Axes, before \p User.
static Value *sliceToOne(Value &V, llvm::ArrayRef<unsigned> Axes, Node &User,
                         Rewriter &RW) {
  Graph &G = *User.getParentGraph();
  std::vector<int64_t> Zeros(Axes.size(), 0), Ones(Axes.size(), 1),
      AxesI(Axes.begin(), Axes.end());
  int64_t N = static_cast<int64_t>(Axes.size());
  std::string Name = V.getName().str();
  Value *Starts =
      RW.createConstant(G, Tensor::fromInt64s(Name + "_starts", {N}, Zeros));
  Value *Ends =
      RW.createConstant(G, Tensor::fromInt64s(Name + "_ends", {N}, Ones));
  Value *On =
      RW.createConstant(G, Tensor::fromInt64s(Name + "_axes", {N}, AxesI));
  RW.setInsertionPointBefore(&User);
  Node *S =
      RW.createNode("Slice", {&V, Starts, Ends, On}, 1, "", Name + "_row");
  return S->getResult(0);
}

/// True if the axes of \p V that moved with the kept sizes, \p Moving,
/// are exactly those whose dim the analysis writes with a kept symbol: an
/// axis sized by one that did not move (a dim strided down to the same
/// size at every size tried) would be read as the same along it.
static bool movesAsSized(const Value &V, llvm::ArrayRef<unsigned> Moving,
                         const DimAnalysis &DA,
                         const std::set<std::string> &Kept) {
  const std::vector<DimExpr> *Dims = DA.getDims(V);
  if (!Dims)
    return false;
  for (unsigned A = 0; A < Dims->size(); ++A) {
    bool Sized = false;
    (*Dims)[A].forEachSymbol(
        [&](llvm::StringRef S) { Sized |= Kept.count(S.str()) > 0; });
    if (Sized != llvm::is_contained(Moving, A))
      return false;
  }
  return true;
}

/// Once a repair has rebuilt part of a cone at the new sizes, the cone may
/// read a new symbol: reading it at the old size as a constant would bake
/// what the model computes (a position divided by the length). Where the
/// cone evaluates with the new symbols one larger, the value there must
/// hold \p AtOld as its leading block (a mask or a table that only grows);
/// where it does not evaluate (a part still baked at the old size), the
/// constant is what a static export bakes.
static bool stableInNewSymbols(KeptCone &Cone, const Value &V,
                               const Tensor &AtOld) {
  Tensor Grown = Cone.evaluate(V, KeptSizes[0], /*Shift=*/1);
  return !Grown || isLeadingBlock(AtOld, Grown);
}

bool DynamicRewrite::readKeptCones(Model &M, DiagnosticEngine &Diags) {
  Graph &G = M.getGraph();
  std::set<std::string> Kept;
  for (const auto &In : G.getInputs())
    if (const auto &Shape = In->getType().getShape())
      for (const Dim &D : *Shape)
        if (D.isSymbol() && !Old.count(D.getSymbol().str()))
          Kept.insert(D.getSymbol().str());
  if (Kept.empty())
    return false;
  DimAnalysis DA(M);
  DA.run();
  KeptCone Cone(G, DA, Old, Kept, OriginalTypeReaders, M.getOpsetVersion(""));
  Rewriter RW(M, Diags);
  std::set<int64_t> OldSizes;
  for (const auto &[Sym, Size] : Old)
    OldSizes.insert(Size);
  std::vector<Node *> Users;
  for (Node &N : G.getNodes())
    Users.push_back(&N);
  // One constant per value, whatever reads it (the mask of every layer).
  struct Reading {
    Value *As;
    std::vector<unsigned> Axes;
    /// One row of a value that keeps computing (the data has the symbol
    /// at Axes), not a constant whose cut axes the data has as V has them.
    bool Row;
  };
  llvm::DenseMap<const Value *, Reading> ReadAs;
  for (Node *User : Users) {
    if (!hasTrait(*User, ElementwiseBroadcasting) ||
        Cone.contains(User->getResult(0)))
      continue;
    for (unsigned I = 0; I < User->getNumOperands(); ++I) {
      Value *V = User->getOperand(I);
      if (!V || !Cone.contains(V) || V->isGraphOutput() ||
          Cone.followsNewSymbols(V) ||
          hasTrait(*V->getDefiningNode(), ReadsTypeOnly))
        continue;
      if (auto It = ReadAs.find(V); It != ReadAs.end()) {
        const Reading &R = It->second;
        if (R.Row ? rowBroadcasts(*User, *V, R.Axes, DA, Old)
                  : othersSize(*User, *V, R.Axes, DA))
          RW.setOperand(User, I, R.As);
        continue;
      }
      std::vector<Tensor> Values;
      for (int64_t Size : KeptSizes)
        if (Tensor T = Cone.evaluate(*V, Size))
          Values.push_back(T);
      if (Values.size() != std::size(KeptSizes) ||
          !stableInNewSymbols(Cone, *V, Values.front()))
        continue;
      std::optional<std::vector<unsigned>> Moving = axesThatMove(Values);
      if (!Moving || !movesAsSized(*V, *Moving, DA, Kept))
        continue;
      Tensor C = othersSize(*User, *V, *Moving, DA)
                     ? cutAlike(Values, *Moving, V->getName().str() + "_kept")
                     : Tensor();
      if (C && llvm::any_of(C.getDims(),
                            [&](int64_t D) { return OldSizes.count(D); })) {
        Value *Read = RW.createConstant(G, C);
        ReadAs[V] = {Read, *Moving, false};
        RW.setOperand(User, I, Read);
        emitRemark(Diags, *User)
            << "'" << V->getName()
            << "' is computed from constants and the sizes of the kept "
               "dims only, and is the same along the axes they size at "
               "64, 96 and 160: read as that constant, those axes cut to 1";
        continue;
      }
      // It follows the kept dims, but a new symbol's old size (the batch)
      // stands where the data has the symbol: where it is the same along
      // those axes at every kept size tried, one row of it broadcasts.
      std::vector<unsigned> Baked =
          bakedAxes(*User, *V, Values.front(), *Moving, DA, Old);
      if (Baked.empty() || !llvm::all_of(Values, [&](const Tensor &T) {
            return llvm::all_of(
                Baked, [&](unsigned A) { return isConstantAlong(T, A); });
          }))
        continue;
      Value *Row = sliceToOne(*V, Baked, *User, RW);
      ReadAs[V] = {Row, Baked, true};
      RW.setOperand(User, I, Row);
      emitRemark(Diags, *User)
          << "'" << V->getName()
          << "' is computed from constants and the sizes of the kept dims "
             "only, and is the same along the axes where it has the old "
             "size of a new symbol that the data has there, at kept sizes "
             "64, 96 and 160: one row of it is read, which broadcasts";
    }
  }
  if (!ReadAs.empty())
    RepairCounts["kept-dim value"] += ReadAs.size();
  return !ReadAs.empty();
}
