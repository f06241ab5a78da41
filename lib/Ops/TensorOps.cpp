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

namespace {
llvm::ArrayRef<DimRule> dimRules() { return {}; }
} // namespace

//===----------------------------------------------------------------------===//
// Constant evaluation
//===----------------------------------------------------------------------===//

// Each rule computes its op's results from constant operands (EvalRules.h);
// the helpers they share are in EvalSupport.h. Data movement works on raw
// bytes through index maps, so any fixed-size element type moves unchanged.

#include "EvalSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/Semantics.h"
#include <cmath>
#include <cstring>
#include <tuple>

namespace {
using namespace onnxopt::eval;

/// A Constant's value attribute, in any of its forms.
EvalResults evalConstant(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  Tensor T = getConstantNodeValue(N);
  if (T.isNull())
    return Ctx.fail("only tensor, int and float values are supported");
  return Ctx.one(T);
}

/// Shape; \p StartEnd: Shape-15's `start` and `end` attributes.
template <bool StartEnd> EvalResults evalShape(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  if (!Ctx.hasOperand(0))
    return Ctx.fail("operand 0 is missing");
  const Type &Ty = N.getOperand(0)->getType();
  if (!Ty.isTensor() || !Ty.hasShape())
    return Ctx.fail("the rank of the input is unknown");
  int64_t Rank = Ty.getRank();
  int64_t Start = 0, End = Rank;
  if (StartEnd) {
    Start = N.getAttrInt("start", 0);
    End = N.getAttrInt("end", Rank);
  }
  std::tie(Start, End) = resolveShapeRange(Rank, Start, End);
  std::vector<int64_t> Dims;
  for (int64_t I = Start; I < End; ++I) {
    const Dim &D = Ty.getDims()[I];
    if (!D.isKnown())
      return Ctx.fail("dim " + llvm::Twine(I) + " of the input is not known");
    Dims.push_back(D.getValue());
  }
  return Ctx.one(
      Tensor::fromInt64s(Ctx.resultName(0), {int64_t(Dims.size())}, Dims));
}

EvalResults evalSize(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  if (!Ctx.hasOperand(0))
    return Ctx.fail("operand 0 is missing");
  const Type &Ty = N.getOperand(0)->getType();
  if (!Ty.isTensor() || !Ty.isStatic())
    return Ctx.fail("the shape of the input is not static");
  std::vector<int64_t> Dims;
  for (const Dim &D : Ty.getDims())
    Dims.push_back(D.getValue());
  std::optional<int64_t> Num = numElements(Dims);
  if (!Num)
    return Ctx.fail("the size of the input overflows");
  return Ctx.one(Tensor::fromInt64s(Ctx.resultName(0), {}, {*Num}));
}

EvalResults evalGather(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  const Tensor *Data = Ctx.constOperand(0);
  std::optional<std::vector<int64_t>> Indices = Ctx.intOperand(1);
  if (!Data || !Indices)
    return std::nullopt;
  std::vector<int64_t> DDims = Data->getDims();
  int64_t Rank = DDims.size();
  if (Rank == 0)
    return Ctx.fail("cannot gather from a scalar");
  int64_t Axis = N.getAttrInt("axis", 0);
  if (!Ctx.normalizeAxis(Axis, Rank, "axis"))
    return std::nullopt;
  int64_t Extent = DDims[Axis];
  for (int64_t &I : *Indices) {
    if (I < -Extent || I >= Extent)
      return Ctx.fail("index " + llvm::Twine(I) + " is out of range for dim " +
                      llvm::Twine(Extent));
    if (I < 0)
      I += Extent;
  }
  std::vector<int64_t> IDims = Ctx.constOperand(1)->getDims();
  std::vector<int64_t> OutDims(DDims.begin(), DDims.begin() + Axis);
  OutDims.insert(OutDims.end(), IDims.begin(), IDims.end());
  OutDims.insert(OutDims.end(), DDims.begin() + Axis + 1, DDims.end());
  int64_t Outer = *numElements(llvm::makeArrayRef(DDims).take_front(Axis));
  int64_t Inner = *numElements(llvm::makeArrayRef(DDims).drop_front(Axis + 1));
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num || !Ctx.fitsBudget(Data->getElemType(), *Num))
    return Num ? std::nullopt : Ctx.fail("result too large");
  std::vector<int64_t> Src;
  Src.reserve(*Num);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I : *Indices)
      for (int64_t K = 0; K < Inner; ++K)
        Src.push_back((O * Extent + I) * Inner + K);
  std::optional<Tensor> T = Ctx.take(*Data, OutDims, Src);
  return T ? Ctx.one(std::move(*T)) : std::nullopt;
}

/// Slice: bounds from attributes (Slice-1) or from operands (Slice-10).
template <From Bounds> EvalResults evalSlice(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  const Tensor *Data = Ctx.constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  std::optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
  if (Bounds == From::Attribute) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
    Axes = N.getAttrInts("axes");
    if (!Starts || !Ends)
      return Ctx.fail("attributes starts and ends are required");
  } else {
    Starts = Ctx.intOperand(1);
    Ends = Ctx.intOperand(2);
    if (!Starts || !Ends)
      return std::nullopt;
    if (Ctx.hasOperand(3) && !(Axes = Ctx.intOperand(3)))
      return std::nullopt;
    if (Ctx.hasOperand(4) && !(Steps = Ctx.intOperand(4)))
      return std::nullopt;
  }
  size_t Count = Starts->size();
  if (Ends->size() != Count || (Axes && Axes->size() != Count) ||
      (Steps && Steps->size() != Count))
    return Ctx.fail("starts, ends, axes and steps differ in length");
  if (!Axes) {
    Axes.emplace();
    for (size_t I = 0; I < Count; ++I)
      Axes->push_back(I);
  }
  if (!Ctx.normalizeAxes(*Axes, Rank))
    return std::nullopt;
  std::vector<int64_t> Begin(Rank, 0), Step(Rank, 1), OutDims = Dims;
  for (size_t I = 0; I < Count; ++I) {
    int64_t A = (*Axes)[I], D = Dims[A];
    int64_t S = Steps ? (*Steps)[I] : 1;
    if (S == 0)
      return Ctx.fail("slice step is 0");
    std::optional<SliceAxis> Taken =
        resolveSliceAxis(D, (*Starts)[I], (*Ends)[I], S);
    if (!Taken)
      return Ctx.fail("the sliced dim is negative");
    // Nothing taken: any in-range begin does (it is never read).
    Begin[A] = Taken->Count ? Taken->Start : 0;
    Step[A] = S;
    OutDims[A] = Taken->Count;
  }
  std::vector<int64_t> InStrides = stridesOf(Dims);
  std::vector<int64_t> Strides(Rank);
  int64_t Offset = 0;
  for (int64_t A = 0; A < Rank; ++A) {
    Strides[A] = InStrides[A] * Step[A];
    Offset += Begin[A] * InStrides[A];
  }
  if (!Ctx.fitsBudget(Data->getElemType(), *numElements(OutDims)))
    return std::nullopt;
  std::vector<int64_t> Src = stridedIndices(OutDims, Strides, Offset);
  std::optional<Tensor> T = Ctx.take(*Data, OutDims, Src);
  return T ? Ctx.one(std::move(*T)) : std::nullopt;
}

/// Concat; \p AxisRequired from Concat-4 on (before, it defaults to 1).
template <bool AxisRequired> EvalResults evalConcat(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  if (N.getNumOperands() == 0)
    return Ctx.fail("no operands");
  std::vector<const Tensor *> Ins;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Tensor *T = Ctx.constOperand(I);
    if (!T)
      return std::nullopt;
    Ins.push_back(T);
  }
  std::vector<int64_t> OutDims = Ins[0]->getDims();
  int64_t Rank = OutDims.size();
  int32_t ET = Ins[0]->getElemType();
  if (AxisRequired && !N.hasAttr("axis"))
    return Ctx.fail("attribute axis is required");
  int64_t Axis = N.getAttrInt("axis", 1);
  if (!Ctx.normalizeAxis(Axis, Rank, "axis"))
    return std::nullopt;
  OutDims[Axis] = 0;
  for (const Tensor *T : Ins) {
    std::vector<int64_t> D = T->getDims();
    if (T->getElemType() != ET || static_cast<int64_t>(D.size()) != Rank)
      return Ctx.fail("operands differ in element type or rank");
    for (int64_t I = 0; I < Rank; ++I)
      if (I != Axis && D[I] != OutDims[I])
        return Ctx.fail("operands differ in dim " + llvm::Twine(I));
    OutDims[Axis] += D[Axis];
  }
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num || !Ctx.fitsBudget(ET, *Num))
    return Num ? std::nullopt : Ctx.fail("result too large");
  size_t Size = getElemTypeSize(ET);
  int64_t Outer = *numElements(llvm::makeArrayRef(OutDims).take_front(Axis));
  int64_t Inner =
      *numElements(llvm::makeArrayRef(OutDims).drop_front(Axis + 1));
  std::vector<std::string> Storage(Ins.size());
  std::vector<llvm::StringRef> Bytes(Ins.size());
  for (size_t K = 0; K < Ins.size(); ++K)
    if (!Ctx.rawBytes(*Ins[K], Storage[K], Bytes[K]))
      return std::nullopt;
  std::string Out;
  Out.reserve(*Num * Size);
  for (int64_t O = 0; O < Outer; ++O)
    for (size_t K = 0; K < Ins.size(); ++K) {
      size_t Block = Ins[K]->getDims()[Axis] * Inner * Size;
      Out.append(Bytes[K].data() + O * Block, Block);
    }
  return Ctx.one(Tensor::fromRaw(Ctx.resultName(0), ET, OutDims, Out));
}

/// Squeeze and Unsqueeze, their axes where the definition reads them.
template <bool Unsqueeze> EvalResults evalSqueeze(EvalContext &Ctx) {
  const Tensor *Data = Ctx.constOperand(0);
  if (!Data)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Axes;
  if (!Ctx.getAxes(Axes))
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  if (Unsqueeze) {
    if (!Axes)
      return Ctx.fail("axes are required");
    int64_t OutRank = Rank + Axes->size();
    if (!Ctx.normalizeAxes(*Axes, OutRank))
      return std::nullopt;
    std::vector<int64_t> Out;
    std::vector<bool> IsNew(OutRank, false);
    for (int64_t A : *Axes)
      IsNew[A] = true;
    size_t Next = 0;
    for (int64_t I = 0; I < OutRank; ++I)
      Out.push_back(IsNew[I] ? 1 : Dims[Next++]);
    return Ctx.reshaped(*Data, Out);
  }
  std::vector<bool> Drop(Rank, false);
  if (Axes) {
    if (!Ctx.normalizeAxes(*Axes, Rank))
      return std::nullopt;
    for (int64_t A : *Axes) {
      if (Dims[A] != 1)
        return Ctx.fail("cannot squeeze dim " + llvm::Twine(A) + " of size " +
                        llvm::Twine(Dims[A]));
      Drop[A] = true;
    }
  } else {
    for (int64_t I = 0; I < Rank; ++I)
      Drop[I] = Dims[I] == 1;
  }
  std::vector<int64_t> Out;
  for (int64_t I = 0; I < Rank; ++I)
    if (!Drop[I])
      Out.push_back(Dims[I]);
  return Ctx.reshaped(*Data, Out);
}

/// Reshape: the shape from an attribute (Reshape-1) or an operand (from
/// Reshape-5); \p AllowZero: Reshape-14's `allowzero` attribute.
template <From Shape, bool AllowZero>
EvalResults evalReshape(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  const Tensor *Data = Ctx.constOperand(0);
  if (!Data)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Target;
  if (Shape == From::Attribute) {
    Target = N.getAttrInts("shape");
    if (!Target)
      return Ctx.fail("attribute shape is required");
  } else if (!(Target = Ctx.intOperand(1))) {
    return std::nullopt;
  }
  bool KeepZero = AllowZero && N.getAttrInt("allowzero", 0) != 0;
  std::vector<int64_t> In = Data->getDims();
  std::vector<int64_t> Out = *Target;
  int64_t Infer = -1, Known = 1;
  for (size_t I = 0; I < Out.size(); ++I) {
    if (Out[I] == 0 && !KeepZero) {
      if (I >= In.size())
        return Ctx.fail("shape copies dim " + llvm::Twine(I) +
                        " that the input does not have");
      Out[I] = In[I];
    }
    if (Out[I] == -1) {
      if (Infer >= 0)
        return Ctx.fail("shape has more than one -1");
      Infer = I;
      continue;
    }
    if (Out[I] < 0)
      return Ctx.fail("shape has a negative dim");
    Known *= Out[I];
  }
  if (Infer >= 0) {
    if (Known == 0 || Data->getNumElements() % Known != 0)
      return Ctx.fail("cannot infer the -1 dim of " + formatDims(*Target));
    Out[Infer] = Data->getNumElements() / Known;
  }
  return Ctx.reshaped(*Data, Out);
}

EvalResults evalFlatten(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  const Tensor *Data = Ctx.constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  int64_t Axis = N.getAttrInt("axis", 1);
  if (Axis < 0)
    Axis += Rank;
  if (Axis < 0 || Axis > Rank)
    return Ctx.fail("axis is out of range");
  int64_t Outer = *numElements(llvm::makeArrayRef(Dims).take_front(Axis));
  int64_t Inner = *numElements(llvm::makeArrayRef(Dims).drop_front(Axis));
  return Ctx.reshaped(*Data, {Outer, Inner});
}

EvalResults evalTranspose(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  const Tensor *Data = Ctx.constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  std::vector<int64_t> Perm;
  if (std::optional<std::vector<int64_t>> P = N.getAttrInts("perm")) {
    Perm = *P;
  } else {
    for (int64_t I = Rank; I-- > 0;)
      Perm.push_back(I);
  }
  if (static_cast<int64_t>(Perm.size()) != Rank)
    return Ctx.fail("perm does not match the rank");
  std::vector<int64_t> Check = Perm;
  if (!Ctx.normalizeAxes(Check, Rank))
    return std::nullopt;
  std::vector<int64_t> InStrides = stridesOf(Dims), OutDims, Strides;
  for (int64_t P : Check) {
    OutDims.push_back(Dims[P]);
    Strides.push_back(InStrides[P]);
  }
  if (!Ctx.fitsBudget(Data->getElemType(), *numElements(OutDims)))
    return std::nullopt;
  std::optional<Tensor> T =
      Ctx.take(*Data, OutDims, stridedIndices(OutDims, Strides));
  return T ? Ctx.one(std::move(*T)) : std::nullopt;
}

EvalResults evalExpand(EvalContext &Ctx) {
  const Tensor *Data = Ctx.constOperand(0);
  std::optional<std::vector<int64_t>> Shape = Ctx.intOperand(1);
  if (!Data || !Shape)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims(), OutDims;
  if (!broadcastDims({Dims, *Shape}, OutDims))
    return Ctx.fail("cannot expand " + formatDims(Dims) + " to " +
                    formatDims(*Shape));
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return Ctx.fail("result too large");
  if (!Ctx.fitsBudget(Data->getElemType(), *Num))
    return std::nullopt;
  std::optional<Tensor> T =
      Ctx.take(*Data, OutDims, broadcastIndices(Dims, OutDims));
  return T ? Ctx.one(std::move(*T)) : std::nullopt;
}

/// Tile; \p TilesAndAxis: Tile-1's scalar (tiles, axis) operands, not
/// Tile-6's repeats.
template <bool TilesAndAxis> EvalResults evalTile(EvalContext &Ctx) {
  const Tensor *Data = Ctx.constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  std::vector<int64_t> Repeats(Rank, 1);
  if (TilesAndAxis) {
    std::optional<int64_t> Tiles = Ctx.scalarIntOperand(1);
    std::optional<int64_t> Axis = Ctx.scalarIntOperand(2);
    if (!Tiles || !Axis)
      return std::nullopt;
    int64_t A = *Axis;
    if (!Ctx.normalizeAxis(A, Rank, "axis"))
      return std::nullopt;
    Repeats[A] = *Tiles;
  } else {
    std::optional<std::vector<int64_t>> R = Ctx.intOperand(1);
    if (!R)
      return std::nullopt;
    if (static_cast<int64_t>(R->size()) != Rank)
      return Ctx.fail("repeats do not match the rank");
    Repeats = *R;
  }
  std::vector<int64_t> OutDims;
  for (int64_t I = 0; I < Rank; ++I) {
    if (Repeats[I] < 0)
      return Ctx.fail("negative repeat");
    OutDims.push_back(Dims[I] * Repeats[I]);
  }
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return Ctx.fail("result too large");
  if (!Ctx.fitsBudget(Data->getElemType(), *Num))
    return std::nullopt;
  std::vector<int64_t> InStrides = stridesOf(Dims), Src;
  Src.reserve(*Num);
  std::vector<int64_t> Idx(Rank, 0);
  for (int64_t K = 0; K < *Num; ++K) {
    int64_t S = 0;
    for (int64_t D = 0; D < Rank; ++D)
      S += (Idx[D] % Dims[D]) * InStrides[D];
    Src.push_back(S);
    for (int64_t D = Rank; D-- > 0;) {
      if (++Idx[D] < OutDims[D])
        break;
      Idx[D] = 0;
    }
  }
  std::optional<Tensor> T = Ctx.take(*Data, OutDims, Src);
  return T ? Ctx.one(std::move(*T)) : std::nullopt;
}

/// Where a Split version reads its `split` sizes from.
enum class SplitFrom {
  /// Split-1: the second operand when there is one, else the attribute.
  InputOrAttribute,
  /// Split-2 to Split-11: the attribute.
  Attribute,
  /// From Split-13: the second operand (optional).
  Input,
};

/// Split; \p NumOutputs: Split-18's `num_outputs` attribute.
template <SplitFrom Sizes, bool NumOutputs>
EvalResults evalSplit(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  const Tensor *Data = Ctx.constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  int64_t Axis = N.getAttrInt("axis", 0);
  if (!Ctx.normalizeAxis(Axis, Rank, "axis"))
    return std::nullopt;
  unsigned Outs = N.getNumResults();
  std::optional<std::vector<int64_t>> Split;
  if (Sizes == SplitFrom::Input ||
      (Sizes == SplitFrom::InputOrAttribute && Ctx.hasOperand(1))) {
    if (Ctx.hasOperand(1) && !(Split = Ctx.intOperand(1)))
      return std::nullopt;
  } else {
    Split = N.getAttrInts("split");
  }
  if (NumOutputs && !Split && N.hasAttr("num_outputs")) {
    // Split-18: num_outputs chunks of ceil(dim / n), the last one smaller.
    int64_t Num = N.getAttrInt("num_outputs", 0);
    if (Num != int64_t(Outs))
      return Ctx.fail("num_outputs is " + llvm::Twine(Num) +
                      " but the node has " + llvm::Twine(Outs) + " results");
    int64_t Chunk = (Dims[Axis] + Num - 1) / Num;
    if (Num > 1 && Chunk * (Num - 1) >= Dims[Axis] && Dims[Axis] % Num != 0)
      return Ctx.fail("dim " + llvm::Twine(Dims[Axis]) +
                      " cannot be split into " + llvm::Twine(Num) + " parts");
    Split = std::vector<int64_t>(Outs, Chunk);
    Split->back() = Dims[Axis] - Chunk * (Num - 1);
  }
  if (!Split) {
    if (Outs == 0 || Dims[Axis] % Outs != 0)
      return Ctx.fail("dim " + llvm::Twine(Dims[Axis]) +
                      " does not split evenly into " + llvm::Twine(Outs));
    Split = std::vector<int64_t>(Outs, Dims[Axis] / Outs);
  }
  if (Split->size() != Outs)
    return Ctx.fail("split has " + llvm::Twine(Split->size()) + " parts for " +
                    llvm::Twine(Outs) + " results");
  int64_t Sum = 0;
  for (int64_t S : *Split) {
    if (S < 0)
      return Ctx.fail("negative split");
    Sum += S;
  }
  if (Sum != Dims[Axis])
    return Ctx.fail("split sums to " + llvm::Twine(Sum) + ", dim is " +
                    llvm::Twine(Dims[Axis]));
  std::vector<int64_t> InStrides = stridesOf(Dims);
  std::vector<Tensor> Out;
  int64_t Begin = 0;
  for (unsigned K = 0; K < Outs; ++K) {
    std::vector<int64_t> OutDims = Dims;
    OutDims[Axis] = (*Split)[K];
    if (!N.getResult(K)) {
      Out.emplace_back();
    } else {
      std::vector<int64_t> Src =
          stridedIndices(OutDims, InStrides, Begin * InStrides[Axis]);
      std::optional<Tensor> T = Ctx.take(*Data, OutDims, Src, K);
      if (!T)
        return std::nullopt;
      Out.push_back(std::move(*T));
    }
    Begin += (*Split)[K];
  }
  return Out;
}

EvalResults evalConstantOfShape(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  std::optional<std::vector<int64_t>> Shape = Ctx.intOperand(0);
  if (!Shape)
    return std::nullopt;
  Tensor Fill;
  if (const Attribute *A = N.getAttr("value")) {
    if (A->Kind != AttrKind::Tensor || A->Tensors.empty())
      return Ctx.fail("attribute value must be a tensor");
    Fill = A->Tensors.front();
    if (Fill.getNumElements() != 1)
      return Ctx.fail("attribute value must hold one element");
  } else {
    Fill = Tensor::fromFloats("", {1}, {0.0f});
  }
  std::optional<int64_t> Num = numElements(*Shape);
  if (!Num)
    return Ctx.fail("shape " + formatDims(*Shape) + " is invalid");
  if (!Ctx.fitsBudget(Fill.getElemType(), *Num))
    return std::nullopt;
  std::optional<Tensor> T =
      Ctx.take(Fill, *Shape, std::vector<int64_t>(*Num, 0));
  return T ? Ctx.one(std::move(*T)) : std::nullopt;
}

/// Cast to the `to` attribute's type (a name in Cast-1), or, \p Like, to
/// the element type of the second operand (CastLike).
template <bool Like> EvalResults evalCast(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  std::optional<Literal> In = literalOperand(Ctx, 0);
  if (!In)
    return std::nullopt;
  int32_t To;
  if (Like) {
    To = 0;
    if (Ctx.hasOperand(1)) {
      const Type &Ty = N.getOperand(1)->getType();
      To = Ty.isTensor() ? Ty.getElemType() : 0;
    }
    if (To == 0)
      return Ctx.fail("element type of the target is unknown");
  } else if (const Attribute *A = N.getAttr("to");
             A && A->Kind == AttrKind::String) {
    To = castTargetFromName(A->S.str());
  } else {
    To = N.getAttrInt("to", 0);
  }
  if (!isNumericType(To) && To != TP::BOOL)
    return Ctx.fail("cast to " + typeName(To) + " is not supported");
  if (!Ctx.fitsBudget(To, static_cast<int64_t>(In->size())))
    return std::nullopt;
  Literal Out = Literal::make(To, In->Dims);
  for (size_t I = 0; I < In->size(); ++I) {
    if (In->isReal()) {
      if (Out.isReal()) {
        Out.Reals.push_back(In->Reals[I]);
        continue;
      }
      int64_t V;
      if (!realToInt(In->Reals[I], To, V))
        return Ctx.fail("value " + std::to_string(In->Reals[I]) +
                        " does not fit in " + typeName(To));
      Out.Ints.push_back(V);
    } else if (Out.isReal()) {
      Out.Reals.push_back(intToReal(In->Ints[I], In->ET, To));
    } else {
      Out.Ints.push_back(wrapInt(To, static_cast<uint64_t>(In->Ints[I])));
    }
  }
  return oneLiteral(Ctx, Out);
}

EvalResults evalRange(EvalContext &Ctx) {
  std::optional<Literal> Start = literalOperand(Ctx, 0),
                         Limit = literalOperand(Ctx, 1),
                         Delta = literalOperand(Ctx, 2);
  if (!Start || !Limit || !Delta)
    return std::nullopt;
  int32_t ET = Start->ET;
  if (Limit->ET != ET || Delta->ET != ET || !isNumericType(ET))
    return Ctx.fail("operands must have one numeric element type");
  if (Start->size() != 1 || Limit->size() != 1 || Delta->size() != 1)
    return Ctx.fail("operands must be scalars");
  Literal Out;
  if (Start->isReal()) {
    // As runtimes do: the count from the difference in the element type,
    // then repeated addition in the element type.
    double D = Delta->Reals[0];
    if (D == 0)
      return Ctx.fail("delta is 0");
    bool IsFloat = ET != TP::DOUBLE;
    double Diff = Limit->Reals[0] - Start->Reals[0];
    if (IsFloat)
      Diff = static_cast<float>(Diff);
    double Count = std::max(std::ceil(Diff / D), 0.0);
    if (!(Count < double(int64_t(1) << 62)))
      return Ctx.fail("range is too long");
    Out = Literal::make(ET, {static_cast<int64_t>(Count)});
    if (!Ctx.fitsBudget(ET, static_cast<int64_t>(Count)))
      return std::nullopt;
    double V = Start->Reals[0];
    for (int64_t I = 0; I < static_cast<int64_t>(Count); ++I) {
      Out.Reals.push_back(V);
      V += D;
      if (IsFloat)
        V = static_cast<float>(V);
    }
  } else {
    if (ET == TP::UINT64)
      return Ctx.fail("uint64 ranges are not supported");
    int64_t S = Start->Ints[0], L = Limit->Ints[0], D = Delta->Ints[0];
    if (D == 0)
      return Ctx.fail("delta is 0");
    // Exact ceil((L - S) / D) in 128 bits: L - S can overflow int64.
    __int128 Diff = static_cast<__int128>(L) - S;
    __int128 Count = D > 0 ? (Diff + D - 1) / D : (Diff + D + 1) / D;
    if (Diff == 0 || (Diff > 0) != (D > 0))
      Count = 0;
    if (Count > (static_cast<__int128>(1) << 62))
      return Ctx.fail("range is too long");
    if (!Ctx.fitsBudget(ET, static_cast<int64_t>(Count)))
      return std::nullopt;
    Out = Literal::make(ET, {static_cast<int64_t>(Count)});
    for (int64_t I = 0; I < static_cast<int64_t>(Count); ++I)
      Out.Ints.push_back(S + I * D);
  }
  return oneLiteral(Ctx, Out);
}

EvalResults evalWhere(EvalContext &Ctx) {
  std::optional<Literal> C = literalOperand(Ctx, 0), X = literalOperand(Ctx, 1),
                         Y = literalOperand(Ctx, 2);
  if (!C || !X || !Y)
    return std::nullopt;
  if (C->ET != TP::BOOL)
    return Ctx.fail("condition must be bool");
  if (X->ET != Y->ET)
    return Ctx.fail("operands differ in element type");
  std::vector<int64_t> OutDims;
  if (!broadcastDims({C->Dims, X->Dims, Y->Dims}, OutDims))
    return Ctx.fail("operand shapes do not broadcast");
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return Ctx.fail("result too large");
  if (!Ctx.fitsBudget(X->ET, *Num))
    return std::nullopt;
  std::vector<int64_t> IC = broadcastIndices(C->Dims, OutDims);
  std::vector<int64_t> IX = broadcastIndices(X->Dims, OutDims);
  std::vector<int64_t> IY = broadcastIndices(Y->Dims, OutDims);
  Literal Out = Literal::make(X->ET, OutDims);
  for (int64_t K = 0; K < *Num; ++K) {
    const Literal &Src = C->Ints[IC[K]] ? *X : *Y;
    size_t I = C->Ints[IC[K]] ? IX[K] : IY[K];
    if (Out.isReal())
      Out.Reals.push_back(Src.Reals[I]);
    else
      Out.Ints.push_back(Src.Ints[I]);
  }
  return oneLiteral(Ctx, Out);
}

/// Trilu keeps the elements on and above (upper=1) or on and below the
/// k-th diagonal of the last two axes and zeroes the rest. Static exports
/// compute causal masks this way from a constant of the old length.
EvalResults evalTrilu(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  std::optional<Literal> A = literalOperand(Ctx, 0);
  if (!A)
    return std::nullopt;
  if (A->Dims.size() < 2)
    return Ctx.fail("Trilu needs rank >= 2");
  int64_t K = 0;
  if (Ctx.hasOperand(1)) {
    std::optional<int64_t> V = Ctx.scalarIntOperand(1);
    if (!V)
      return std::nullopt;
    K = *V;
  }
  bool Upper = N.getAttrInt("upper", 1) != 0;
  int64_t Rows = A->Dims[A->Dims.size() - 2], Cols = A->Dims.back();
  Literal Out = *A;
  for (size_t I = 0; I < Out.size(); ++I) {
    int64_t Row = (int64_t(I) / Cols) % Rows, Col = int64_t(I) % Cols;
    bool Keep = Upper ? Col - Row >= K : Col - Row <= K;
    if (Keep)
      continue;
    if (Out.isReal())
      Out.Reals[I] = 0;
    else
      Out.Ints[I] = 0;
  }
  return oneLiteral(Ctx, Out);
}

EvalResults evalIdentity(EvalContext &Ctx) {
  const Tensor *T = Ctx.constOperand(0);
  return T ? Ctx.one(*T) : std::nullopt;
}

constexpr EvalRule EvalRows[] = {
    {"", "Cast", 1, evalCast<false>},
    {"", "CastLike", 1, evalCast<true>},
    {"", "Concat", 1, evalConcat<false>},
    {"", "Concat", 4, evalConcat<true>},
    {"", "Constant", 1, evalConstant},
    {"", "ConstantOfShape", 1, evalConstantOfShape},
    {"", "Expand", 1, evalExpand},
    {"", "Flatten", 1, evalFlatten},
    {"", "Gather", 1, evalGather},
    {"", "Identity", 1, evalIdentity},
    {"", "Range", 1, evalRange},
    {"", "Reshape", 1, evalReshape<From::Attribute, false>},
    {"", "Reshape", 5, evalReshape<From::Input, false>},
    {"", "Reshape", 14, evalReshape<From::Input, true>},
    {"", "Shape", 1, evalShape<false>},
    {"", "Shape", 15, evalShape<true>},
    {"", "Size", 1, evalSize},
    {"", "Slice", 1, evalSlice<From::Attribute>},
    {"", "Slice", 10, evalSlice<From::Input>},
    {"", "Split", 1, evalSplit<SplitFrom::InputOrAttribute, false>},
    {"", "Split", 2, evalSplit<SplitFrom::Attribute, false>},
    {"", "Split", 13, evalSplit<SplitFrom::Input, false>},
    {"", "Split", 18, evalSplit<SplitFrom::Input, true>},
    {"", "Squeeze", 1, evalSqueeze<false>},
    {"", "Tile", 1, evalTile<true>},
    {"", "Tile", 6, evalTile<false>},
    {"", "Transpose", 1, evalTranspose},
    {"", "Trilu", 1, evalTrilu},
    {"", "Unsqueeze", 1, evalSqueeze<true>},
    {"", "Where", 1, evalWhere},
};

llvm::ArrayRef<EvalRule> evalRules() { return EvalRows; }
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
