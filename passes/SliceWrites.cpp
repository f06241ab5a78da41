//===- SliceWrites.cpp - make-dynamic's repair of slice assignments ------===//
//
// Before:  Y = ScatterND(X, I, U)   X: float[N,2,H,W,7] (old 1x2x8x8x7),
//                                   U: float[N,2,H,W,2], I: baked tuples
//                                   (a,b,c,d,e) -> (a,b,c,d,e+0)
// After:   Y = Concat<axis=4>(U, Slice(X, [2], [7], [4]))
//
// torch exports an in-place slice assignment (`y[..., 0:2] = v`, YOLOv5's
// Detect) as a ScatterND whose index tuples it builds from aranges of the
// sizes it traced: at other sizes they would write the old positions only.
// Where the tuples hold, at each position of the updates, that position
// moved along one axis of fixed size, the write is that slice of every row:
// the data's other slices around the updates, which holds no size.
//
//===----------------------------------------------------------------------===//
#include "BakedConstants.h"
#include "MakeDynamic.h"
#include "onnxopt/Ops/OpDef.h"
#include <limits>

using namespace onnxopt;
using namespace onnxopt::makedynamic;

namespace {

/// A write of a slice along one axis: positions [Offset, Offset + Length)
/// of Axis, every position of the other dims.
struct SliceWrite {
  unsigned Axis;
  int64_t Offset, Length;
};

} // namespace

/// The slice that index tuples \p Tuples (shape [u_0, .., u_{k-1}, k],
/// k at most the data's rank) write into data of old dims \p DataDims:
/// every tuple is its own position in the grid of tuples, moved by a fixed
/// offset along one axis and nowhere else, and the grid spans every other
/// of the data's first k dims (the dims after them are written whole).
/// None otherwise (a write of some rows, positions that skip or repeat, a
/// full overwrite).
static std::optional<SliceWrite>
readSliceWrite(llvm::ArrayRef<int64_t> Tuples, llvm::ArrayRef<int64_t> Shape,
               llvm::ArrayRef<int64_t> DataDims) {
  if (Shape.size() < 2 || Shape.back() != int64_t(Shape.size() - 1) ||
      Shape.size() - 1 > DataDims.size() || Tuples.empty() ||
      Tuples.size() % (Shape.size() - 1) != 0)
    return std::nullopt;
  size_t K = Shape.size() - 1;
  // The axis: the one dim the grid does not span; its offset, the first
  // tuple's component there.
  std::optional<unsigned> Axis;
  for (unsigned D = 0; D < K; ++D)
    if (Shape[D] != DataDims[D]) {
      if (Axis)
        return std::nullopt;
      Axis = D;
    }
  if (!Axis)
    return std::nullopt;
  SliceWrite W{*Axis, Tuples[*Axis], Shape[*Axis]};
  if (W.Offset < 0 || W.Length < 1 || W.Offset + W.Length > DataDims[*Axis])
    return std::nullopt;
  // Walk the grid in row-major order, the position counted as in an
  // odometer, and compare each tuple with it.
  std::vector<int64_t> Position(K, 0);
  for (size_t T = 0; T * K < Tuples.size(); ++T) {
    for (unsigned D = 0; D < K; ++D)
      if (Tuples[T * K + D] != Position[D] + (D == *Axis ? W.Offset : 0))
        return std::nullopt;
    for (int D = int(K) - 1; D >= 0; --D) {
      if (++Position[D] < Shape[D])
        break;
      Position[D] = 0;
    }
  }
  return W;
}

/// A ScatterND whose index tuples the model computes from constants and
/// that write one slice along a dim of fixed size (or at the start of one
/// that grows), every position of the data's other dims, some of which
/// grow (readSliceWrite): rewritten as the Concat of the data before the
/// slice, the updates, and the data after.
/// A ScatterND that reduces, or writes anything else, is left to the
/// checks (examineFixedWrites) and the dims' constraints.
void DynamicRewrite::repairSliceWrite(Node &N, DimAnalysis &DA, Rewriter &RW) {
  if (N.getNumOperands() != 3 || !N.getOperand(0) || !N.getOperand(1) ||
      !N.getOperand(2) || N.getAttrString("reduction", "none") != "none")
    return;
  Value *Data = N.getOperand(0);
  const std::vector<DimExpr> *D = DA.getDims(*Data);
  if (!D)
    return;
  std::vector<DimExpr> In = expressInInputs(DA, *Data, *D, Old);
  if (llvm::all_of(In, [&](const DimExpr &E) { return newSymbols(E).empty(); }))
    return;
  Tensor T = evaluateBaked(*N.getOperand(1), RW.getModel().getOpsetVersion(""),
                           BakedValues);
  std::optional<std::vector<int64_t>> Tuples = T ? T.toInt64s() : std::nullopt;
  if (!Tuples)
    return repairTupleRows(N, DA, RW);
  std::vector<int64_t> OldDims;
  for (const DimExpr &E : In) {
    std::optional<int64_t> V = E.hasUnknown() ? std::nullopt : oldValue(E);
    if (!V)
      return;
    OldDims.push_back(*V);
  }
  // Tuples that index only dims of fixed size (the dynamo exporter's
  // slice_scatter indexes the sliced dim alone) write the same at every
  // size: nothing to rewrite.
  llvm::ArrayRef<int64_t> TupleDims = T.getDimsRef();
  if (TupleDims.empty() || TupleDims.back() < 1 ||
      llvm::all_of(llvm::ArrayRef<DimExpr>(In).take_front(
                       std::min<size_t>(size_t(TupleDims.back()), In.size())),
                   [&](const DimExpr &E) { return newSymbols(E).empty(); }))
    return;
  std::optional<SliceWrite> W = readSliceWrite(*Tuples, TupleDims, OldDims);
  // Along a dim that grows the slice is a fixed position only near the
  // start (`y[:, 0] = 0`, as examineBakedPositions reads positions): one
  // further in may be a size the export folded, and is left to that check.
  bool Growing = W && !In[W->Axis].isConstant();
  if (!W || (Growing && (W->Offset + W->Length > 2 || OldDims[W->Axis] <= 4)))
    return;
  RW.setInsertionPointBefore(&N);
  Graph &G = *N.getParentGraph();
  auto Ints = [&](int64_t V) {
    return RW.createConstant(G, Tensor::fromInt64s("slice_write", {1}, {V}));
  };
  auto Cut = [&](int64_t Start, int64_t End) {
    return RW
        .createNode("Slice", {Data, Ints(Start), Ints(End), Ints(W->Axis)}, 1,
                    "", "kept")
        ->getResult(0);
  };
  std::vector<Value *> Pieces;
  if (W->Offset > 0)
    Pieces.push_back(Cut(0, W->Offset));
  Pieces.push_back(N.getOperand(2));
  if (Growing || W->Offset + W->Length < OldDims[W->Axis])
    Pieces.push_back(
        Cut(W->Offset + W->Length,
            Growing ? std::numeric_limits<int64_t>::max() : OldDims[W->Axis]));
  Node *Concat = RW.createNode("Concat", Pieces, 1, "", "written");
  Concat->setAttr(Attribute::getInt("axis", int64_t(W->Axis)));
  if (failed(RW.replaceAllUsesWith(N.getResult(0), Concat->getResult(0))))
    return;
  // The readers now read the Concat, whose dims this round's analysis does
  // not have (the ScatterND's came from the baked tuples): they wait a
  // round, as readers of a repaired node's results do.
  Stale.insert(Concat->getResult(0));
  ++RepairCounts["slice write"];
  Repaired = true;
}
