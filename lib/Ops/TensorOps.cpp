//===- TensorOps.cpp - Shape and data-movement ops: Shape, Reshape, Slice, Gather, Concat, Split, ...
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

constexpr ShapeOperand CenterCropPadOperands1[] = {{1, "shape"}};
constexpr ShapeOperand ExpandOperands1[] = {{1, "shape"}};
constexpr ShapeOperand OneHotOperands1[] = {{1, "depth"}};
constexpr ShapeOperand ReshapeOperands5[] = {{1, "shape"}};
constexpr ShapeOperand SliceOperands10[] = {{1, "starts"}, {2, "ends"}, {3, "axes"}, {4, "steps"}};
constexpr ShapeOperand SqueezeOperands13[] = {{1, "axes"}};
constexpr ShapeOperand TileOperands1[] = {{1, "tiles"}, {2, "axis"}};
constexpr ShapeOperand TileOperands6[] = {{1, "repeats"}};
constexpr ShapeOperand TopKOperands10[] = {{1, "k"}};
constexpr ShapeOperand UnsqueezeOperands13[] = {{1, "axes"}};

constexpr TraitRow Traits[] = {
    {"", "Cast", 1, ShapePreserving | MovesElements, {}, {}, -1},
    {"", "CastLike", 1, ShapePreserving, {}, {}, -1},
    {"", "CenterCropPad", 1, 0, CenterCropPadOperands1, {}, -1},
    {"", "Compress", 1, ValueDependentShape, {}, {}, -1},
    {"", "Constant", 1, ConstantProducer, {}, {}, -1},
    {"", "CumSum", 1, ShapePreserving, {}, {}, -1},
    {"", "Expand", 1, MovesElements, ExpandOperands1, {}, -1},
    {"", "Flatten", 1, MovesElements, {}, {}, -1},
    {"", "Identity", 1, ShapePreserving | MovesElements | IdentityOp, {}, {}, -1},
    {"", "NonZero", 1, ValueDependentShape, {}, {}, -1},
    {"", "OneHot", 1, 0, OneHotOperands1, {}, -1},
    {"", "Reshape", 1, MovesElements, {}, {}, -1},
    {"", "Reshape", 5, MovesElements, ReshapeOperands5, {}, -1},
    {"", "ReverseSequence", 1, ShapePreserving, {}, {}, -1},
    {"", "Shape", 1, ReadsTypeOnly, {}, {}, -1},
    {"", "Size", 1, ReadsTypeOnly, {}, {}, -1},
    {"", "Slice", 1, MovesElements, {}, {}, -1},
    {"", "Slice", 10, MovesElements, SliceOperands10, {}, -1},
    {"", "Squeeze", 1, MovesElements, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "Squeeze", 13, MovesElements, SqueezeOperands13, {AxesSource::Input, 1, "axes"}, -1},
    {"", "Tile", 1, MovesElements, TileOperands1, {}, -1},
    {"", "Tile", 6, MovesElements, TileOperands6, {}, -1},
    {"", "TopK", 1, 0, {}, {}, -1},
    {"", "TopK", 10, ValueDependentUnlessConstant, TopKOperands10, {}, 1},
    {"", "Transpose", 1, MovesElements, {}, {}, -1},
    {"", "Trilu", 1, ShapePreserving, {}, {}, -1},
    {"", "Unique", 1, ValueDependentShape, {}, {}, -1},
    {"", "Unsqueeze", 1, MovesElements, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "Unsqueeze", 13, MovesElements, UnsqueezeOperands13, {AxesSource::Input, 1, "axes"}, -1},
    {"", "Where", 1, ElementwiseBroadcasting, {}, {}, -1},
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
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/IndexRules.h"

namespace {
using namespace onnxopt::dims;

/// Identity and Cast: the shape, and the elements as they are.
void transferPassThrough(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (const DimList *D = C.data(0))
    C.setData(0, *D);
}

/// Where on shape data, element by element, when every element is decided:
/// with Equal (MathOps) it carries torch's Expand target check
/// `Where(Equal(s, -1 * ones), ones, s)` as `s`.
std::optional<DimList> whereData(DimContext &C) {
  if (C.getNode().getNumOperands() != 3)
    return std::nullopt;
  const DimList *Cond = C.data(0), *X = C.data(1), *Y = C.data(2);
  if (!Cond || !X || !Y)
    return std::nullopt;
  size_t Len = broadcastLength({Cond->size(), X->size(), Y->size()});
  if (!Len)
    return std::nullopt;
  DimList R;
  for (size_t I = 0; I < Len; ++I) {
    const DimExpr &CI = elementAt(*Cond, I);
    const DimExpr &XI = elementAt(*X, I), &YI = elementAt(*Y, I);
    if (CI.isConstant())
      R.push_back(CI.getConstant() != 0 ? XI : YI);
    else if (XI == YI)
      R.push_back(XI); // either way the same element
    else
      return std::nullopt;
  }
  return R;
}

void transferWhere(DimContext &C, const DimList *X) {
  if (!broadcastOperands(C))
    return;
  if (std::optional<DimList> D = whereData(C))
    C.setData(0, std::move(*D));
}

void transferConstant(DimContext &C, const DimList *X) {
  if (const Attribute *A = C.getNode().getAttr("value");
      A && A->Kind == AttrKind::Tensor && !A->Tensors.empty())
    C.setDims(0, full(constantDims(A->Tensors.front().getDimsRef())));
  // Straight into the result's data: kept with the other results', not
  // also as a constant read through an operand.
  if (std::optional<DimList> D = C.constantResultData(0))
    C.setData(0, std::move(*D));
}

void transferShape(DimContext &C, const DimList *X) {
  const Node &N = C.getNode();
  int64_t Rank = X->size();
  auto [Start, End] = resolveShapeRange(Rank, N.getAttrInt("start", 0),
                                        N.getAttrInt("end", Rank));
  C.setData(0, DimList(X->begin() + Start, X->begin() + End));
  C.setDims(0, PartialDimList{DimExpr::constant(End - Start)});
}

void transferSize(DimContext &C, const DimList *X) {
  C.setData(0, DimList{product(*X)});
  C.setDims(0, PartialDimList{});
}

void transferTranspose(DimContext &C, const DimList *X) {
  std::vector<int64_t> Perm;
  if (std::optional<std::vector<int64_t>> P = C.getNode().getAttrInts("perm"))
    Perm = *P;
  else
    for (int64_t I = X->size() - 1; I >= 0; --I)
      Perm.push_back(I);
  if (Perm.size() != X->size())
    return;
  PartialDimList R;
  for (int64_t P : Perm) {
    std::optional<size_t> A = normAxis(P, X->size());
    if (!A)
      return;
    R.push_back((*X)[*A]);
  }
  C.setDims(0, std::move(R));
}

std::optional<PartialDimList> reshape(DimContext &C, const DimList &X,
                                      const DimList &Target) {
  bool AllowZero = C.getNode().getAttrInt("allowzero", 0);
  PartialDimList R;
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
      C.require(DimCondition::Divisible, product(X), Others,
                "the element count must divide by the given dims");
  } else {
    DimExpr Count = DimExpr::constant(1);
    for (const std::optional<DimExpr> &D : R)
      Count = Count * *D;
    C.require(DimCondition::Equal, product(X), Count,
              "the element count must not change");
  }
  return R;
}

void transferReshape(DimContext &C, const DimList *X) {
  if (const DimList *Target = C.data(1))
    C.setDims(0, reshape(C, *X, *Target));
  if (const DimList *D = C.data(0))
    C.setData(0, *D);
}

void transferFlatten(DimContext &C, const DimList *X) {
  // The axis may be the rank itself: [-r, r].
  int64_t Rank = X->size(), A = C.getNode().getAttrInt("axis", 1);
  if (A < 0)
    A += Rank;
  if (A < 0 || A > Rank)
    return;
  llvm::ArrayRef<DimExpr> All(*X);
  C.setDims(0, PartialDimList{product(All.take_front(A)),
                              product(All.drop_front(A))});
}

/// The non-axis dims of the operands are equal; the axis dims add up.
void transferConcat(DimContext &C, const DimList *X) {
  const Node &N = C.getNode();
  std::vector<const DimList *> In;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const DimList *D = C.dims(I);
    if (!D || (!In.empty() && D->size() != In[0]->size()))
      return;
    In.push_back(D);
  }
  if (In.empty())
    return;
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 0), In[0]->size());
  if (!Axis)
    return;
  PartialDimList R = full(*In[0]);
  std::vector<DimExpr> Parts;
  Parts.reserve(In.size());
  for (const DimList *D : In) {
    Parts.push_back((*D)[*Axis]);
    for (size_t K = 0; K < D->size(); ++K)
      if (K != *Axis)
        C.unite((*In[0])[K], (*D)[K]);
  }
  R[*Axis] = DimExpr::sum(Parts);
  C.setDims(0, std::move(R));
  DimList Joined;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const DimList *D = C.data(I);
    if (!D)
      return;
    Joined.insert(Joined.end(), D->begin(), D->end());
  }
  C.setData(0, std::move(Joined));
}

/// The indices of a Gather must lie inside the table's dim \p Table: known
/// constant indices, or a Range whose greatest element is known.
void requireIndices(DimContext &C, const DimExpr &Table) {
  const Node &N = C.getNode();
  if (N.getNumOperands() < 2 || !N.getOperand(1))
    return;
  if (std::optional<std::vector<int64_t>> Idx = constants(C.data(1))) {
    for (int64_t K : *Idx)
      C.require(DimCondition::AtLeast, Table,
                DimExpr::constant(K >= 0 ? K + 1 : -K),
                "indices inside the gathered dim");
    return;
  }
  if (const DimExpr *Max = C.getMaxElement(1))
    C.require(DimCondition::AtMost, *Max + DimExpr::constant(1), Table,
              "indices inside the gathered dim");
}

void transferGather(DimContext &C, const DimList *X) {
  const DimList *I = C.dims(1);
  std::optional<size_t> Axis =
      normAxis(C.getNode().getAttrInt("axis", 0), X->size());
  if (!Axis)
    return;
  requireIndices(C, (*X)[*Axis]);
  if (!I)
    return;
  PartialDimList R(X->begin(), X->begin() + *Axis);
  R.insert(R.end(), I->begin(), I->end());
  R.insert(R.end(), X->begin() + *Axis + 1, X->end());
  C.setDims(0, std::move(R));
  const DimList *D = C.data(0);
  std::optional<std::vector<int64_t>> Idx = constants(C.data(1));
  if (!D || !Idx || *Axis != 0)
    return;
  DimList Picked;
  for (int64_t K : *Idx) {
    std::optional<size_t> P = normAxis(K, D->size());
    if (!P)
      return;
    Picked.push_back((*D)[*P]);
  }
  C.setData(0, std::move(Picked));
}

void transferUnsqueeze(DimContext &C, const DimList *X) {
  std::optional<std::vector<int64_t>> Axes = C.axes();
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
  PartialDimList R;
  size_t Next = 0;
  for (size_t K = 0; K < Rank; ++K)
    R.push_back(IsNew[K] ? DimExpr::constant(1) : (*X)[Next++]);
  C.setDims(0, std::move(R));
  if (const DimList *D = C.data(0))
    C.setData(0, *D);
}

void transferSqueeze(DimContext &C, const DimList *X) {
  // The elements stay as they are, whatever the axes.
  if (const DimList *D = C.data(0))
    C.setData(0, *D);
  std::optional<std::vector<int64_t>> Axes = C.axes();
  if (!Axes && !C.givesAxes()) {
    // No axes: every dim that is 1 goes; a symbolic dim might be 1.
    PartialDimList R;
    for (const DimExpr &E : *X) {
      if (!E.isConstant())
        return;
      if (E.getConstant() != 1)
        R.push_back(E);
    }
    C.setDims(0, std::move(R));
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
    C.require(DimCondition::Equal, (*X)[*P], DimExpr::constant(1),
              "a squeezed dim must be 1");
  }
  PartialDimList R;
  for (size_t K = 0; K < X->size(); ++K)
    if (!Drop[K])
      R.push_back((*X)[K]);
  C.setDims(0, std::move(R));
}

/// True when operand \p I is given (an optional operand may be absent).
bool hasOperand(const Node &N, unsigned I) {
  return N.getNumOperands() > I && N.getOperand(I);
}

std::optional<PartialDimList> slice(DimContext &C, const DimList &X) {
  const Node &N = C.getNode();
  // Only dims that are known or taken whole: a symbolic dim cut at a
  // constant could be shorter than the cut.
  std::optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
  // Ends computed from shapes (`table[:, :seq_len]`).
  const DimList *EndExprs = nullptr;
  if (N.hasAttr("starts")) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
    Axes = N.getAttrInts("axes");
  } else {
    Starts = constants(C.data(1));
    Ends = constants(C.data(2));
    EndExprs = C.data(2);
    if (!Ends && EndExprs && Starts && EndExprs->size() == Starts->size()) {
      // Placeholders: positions with a symbolic end are handled below.
      Ends.emplace();
      for (const DimExpr &E : *EndExprs)
        Ends->push_back(E.isConstant() ? E.getConstant() : 0);
    } else {
      EndExprs = nullptr;
    }
    if (hasOperand(N, 3))
      Axes = constants(C.data(3));
    if (hasOperand(N, 4))
      Steps = constants(C.data(4));
    if ((hasOperand(N, 3) && !Axes) || (hasOperand(N, 4) && !Steps))
      return std::nullopt;
  }
  if (!Starts || !Ends || Starts->size() != Ends->size())
    return std::nullopt;
  PartialDimList R = full(X);
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
        C.require(DimCondition::AtMost, End, D,
                  "the slice end must lie inside the dim (it is not clamped)");
        C.require(DimCondition::AtLeast, End, DimExpr::constant(0),
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

std::optional<DimList> sliceData(DimContext &C, const DimList &D) {
  const Node &N = C.getNode();
  std::optional<std::vector<int64_t>> Starts, Ends, Steps;
  if (N.hasAttr("starts")) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
  } else {
    Starts = constants(C.data(1));
    Ends = constants(C.data(2));
    // Steps computed at run time: no step to take the elements by.
    if (hasOperand(N, 4) && !(Steps = constants(C.data(4))))
      return std::nullopt;
  }
  if (!Starts || !Ends || Starts->size() != 1 || Ends->size() != 1)
    return std::nullopt;
  int64_t Step = Steps && !Steps->empty() ? (*Steps)[0] : 1;
  std::optional<SliceAxis> Taken = resolveSliceAxis(
      static_cast<int64_t>(D.size()), (*Starts)[0], (*Ends)[0], Step);
  if (!Taken)
    return std::nullopt;
  DimList R;
  for (int64_t I = 0; I < Taken->Count; ++I)
    R.push_back(D[Taken->at(I)]);
  return R;
}

void transferSlice(DimContext &C, const DimList *X) {
  C.setDims(0, slice(C, *X));
  if (const DimList *D = C.data(0))
    if (std::optional<DimList> R = sliceData(C, *D))
      C.setData(0, std::move(*R));
}

void transferConstantOfShape(DimContext &C, const DimList *X) {
  const DimList *D = C.data(0);
  if (!D)
    return;
  C.setDims(0, full(*D));
  // An integer fill of a short 1-D (or scalar) result is shape data:
  // torch's Expand target check multiplies `ones(len(s))` by -1.
  std::optional<std::vector<int64_t>> Len = constants(D);
  if (!Len || Len->size() > 1)
    return;
  int64_t Count = Len->empty() ? 1 : Len->front();
  const Attribute *A = C.getNode().getAttr("value");
  if (Count < 0 || Count > static_cast<int64_t>(kMaxDimDataLength) || !A ||
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
  C.setData(0, DimList(Count, DimExpr::constant(V->front())));
}

void transferExpand(DimContext &C, const DimList *X) {
  if (const DimList *D = C.data(1)) {
    C.setDims(0, broadcast({X, D}));
    requireBroadcast(C, {X, D});
  }
}

/// Range(start, limit, delta) with a positive step: its length, when
/// limit >= start is proven, and its greatest element. A start that is an
/// expression (`arange(past, past + seq)`, the positions after a KV cache)
/// needs limit - start >= 0 at every value of the symbols, 0 included.
void transferRange(DimContext &C, const DimList *X) {
  const DimList *S = C.data(0), *L = C.data(1), *D = C.data(2);
  if (!S || !L || !D || S->size() != 1 || L->size() != 1 || D->size() != 1)
    return;
  const DimExpr &Start = (*S)[0], &Limit = (*L)[0], &Delta = (*D)[0];
  if (!Delta.isConstant() || Delta.getConstant() <= 0)
    return;
  if (Start.isConstant()) {
    if (!C.holdsAlways(DimCondition::AtLeast, Limit, Start))
      return;
  } else if (Start.hasUnknown() || !nonNegativeEverywhere(Limit - Start)) {
    return;
  }
  DimExpr Count = (Limit - Start).ceilDiv(Delta.getConstant());
  C.setMaxElement(0, Start + Delta * (Count - DimExpr::constant(1)));
  C.setDims(0, PartialDimList{Count});
}

void transferTile(DimContext &C, const DimList *X) {
  const DimList *R = C.data(1);
  if (!R || R->size() != X->size())
    return;
  PartialDimList Res;
  for (size_t K = 0; K < X->size(); ++K)
    Res.push_back((*X)[K] * (*R)[K]);
  C.setDims(0, std::move(Res));
}

void transferPad(DimContext &C, const DimList *X) {
  const Node &N = C.getNode();
  std::optional<std::vector<int64_t>> Pads = N.getAttrInts("pads");
  const DimList *PadData = Pads ? nullptr : C.data(1);
  size_t Rank = X->size();
  // Pad-18 pads only the dims listed in its axes input, in that order.
  std::vector<size_t> Axes;
  if (hasOperand(N, 3)) {
    std::optional<std::vector<int64_t>> A = constants(C.data(3));
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
  PartialDimList R = full(*X);
  for (size_t I = 0; I < NumAxes; ++I) {
    DimExpr Begin = Pads ? DimExpr::constant((*Pads)[I]) : (*PadData)[I];
    DimExpr End = Pads ? DimExpr::constant((*Pads)[I + NumAxes])
                       : (*PadData)[I + NumAxes];
    R[Axes[I]] = (*X)[Axes[I]] + Begin + End;
    C.require(DimCondition::AtLeast, *R[Axes[I]], DimExpr::constant(0),
              "negative pads must leave a dim >= 0");
  }
  C.setDims(0, std::move(R));
}

void transferSplit(DimContext &C, const DimList *X) {
  const Node &N = C.getNode();
  unsigned NumResults = C.getNumResults();
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 0), X->size());
  if (!Axis)
    return;
  std::optional<std::vector<int64_t>> Sizes = N.getAttrInts("split");
  const DimList *SizeData = Sizes ? nullptr : C.data(1);
  if (!Sizes && !SizeData && hasOperand(N, 1))
    return; // sizes computed at run time
  // Split-18 num_outputs: chunks of ceil(dim / n), the last one smaller;
  // the dim need not divide evenly.
  if (!Sizes && !SizeData && N.hasAttr("num_outputs")) {
    const DimExpr &D = (*X)[*Axis];
    int64_t Num = static_cast<int64_t>(NumResults);
    for (unsigned I = 0; I < NumResults; ++I) {
      PartialDimList R = full(*X);
      if (D.isConstant() && Num > 0) {
        int64_t Chunk = (D.getConstant() + Num - 1) / Num;
        R[*Axis] = DimExpr::constant(
            I + 1 < NumResults ? Chunk : D.getConstant() - Chunk * (Num - 1));
      } else {
        R[*Axis] = std::nullopt;
      }
      C.setDims(I, std::move(R));
    }
    return;
  }
  // The sizes must add up to the dim; equal parts must divide it.
  if (Sizes || SizeData) {
    std::vector<DimExpr> Parts;
    size_t Count = Sizes ? Sizes->size() : SizeData->size();
    for (size_t I = 0; I < Count; ++I)
      Parts.push_back(Sizes ? DimExpr::constant((*Sizes)[I]) : (*SizeData)[I]);
    C.require(DimCondition::Equal, DimExpr::sum(Parts), (*X)[*Axis],
              "the split sizes must add up to the dim");
  } else if (NumResults > 1) {
    C.require(DimCondition::Divisible, (*X)[*Axis],
              DimExpr::constant(static_cast<int64_t>(NumResults)),
              "equal parts must divide the dim");
  }
  for (unsigned I = 0; I < NumResults; ++I) {
    PartialDimList R = full(*X);
    if (Sizes && I < Sizes->size())
      R[*Axis] = DimExpr::constant((*Sizes)[I]);
    else if (SizeData && I < SizeData->size())
      R[*Axis] = (*SizeData)[I];
    else if (!Sizes && !SizeData)
      R[*Axis] = (*X)[*Axis].divExact(
          DimExpr::constant(static_cast<int64_t>(NumResults)));
    else
      R[*Axis] = std::nullopt;
    C.setDims(I, std::move(R));
  }
}

void transferTopK(DimContext &C, const DimList *X) {
  std::optional<size_t> Axis =
      normAxis(C.getNode().getAttrInt("axis", -1), X->size());
  const DimList *K = C.data(1);
  if (!Axis || !K || K->size() != 1)
    return;
  PartialDimList R = full(*X);
  R[*Axis] = (*K)[0];
  C.require(DimCondition::AtMost, (*K)[0], (*X)[*Axis],
            "k must not exceed the dim");
  for (unsigned I = 0; I < C.getNumResults(); ++I)
    C.setDims(I, R);
}

constexpr bool NeedsX = true;

constexpr DimRule DimRules[] = {
    {"", "Cast", 1, transferPassThrough},
    {"", "Concat", 1, transferConcat},
    {"", "Constant", 1, transferConstant},
    {"", "ConstantOfShape", 1, transferConstantOfShape},
    // No result dims modelled; no condition on dims beyond its recorded
    // type (a shape that is the input's).
    {"", "EyeLike", 1, nullptr},
    {"", "Expand", 1, transferExpand, NeedsX},
    {"", "Flatten", 1, transferFlatten, NeedsX},
    {"", "Gather", 1, transferGather, NeedsX},
    {"", "Identity", 1, transferPassThrough},
    // Data-dependent (its traits say so): nothing more to require.
    {"", "NonZero", 1, nullptr},
    // Its depth is an operand's contents: no condition on dims.
    {"", "OneHot", 1, nullptr},
    {"", "Pad", 1, transferPad, NeedsX},
    {"", "Range", 1, transferRange},
    {"", "Reshape", 1, transferReshape, NeedsX},
    // Keeps its input's shape, but its sequence_lens must have the batch's
    // length, which nothing here requires.
    {"", "ReverseSequence", 1, transferShapePreserving, false,
     /*StatesAllConditions=*/false},
    {"", "Shape", 1, transferShape, NeedsX},
    {"", "Size", 1, transferSize, NeedsX},
    {"", "Slice", 1, transferSlice, NeedsX},
    {"", "Split", 1, transferSplit, NeedsX},
    {"", "Squeeze", 1, transferSqueeze, NeedsX},
    {"", "Tile", 1, transferTile, NeedsX},
    {"", "TopK", 1, transferTopK, NeedsX},
    {"", "Transpose", 1, transferTranspose, NeedsX},
    {"", "Unsqueeze", 1, transferUnsqueeze, NeedsX},
    {"", "Where", 1, transferWhere},
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

void ops::registerTensorOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
