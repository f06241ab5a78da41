//===- TensorOps.cpp - Shape and data-movement ops: Shape, Reshape, Slice,
// Gather, Concat, Split, ...
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "DimSupport.h"
#include "EvalSupport.h"
#include "InferSupport.h"
#include "PatternSupport.h"
#include "SymbolicRefinement.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/Ops/PatternRules.h"
#include "onnxopt/Ops/Preconditions.h"
#include "onnxopt/Ops/Semantics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <cstring>
#include <numeric>
#include <onnx/defs/tensor_proto_util.h>
#include <tuple>

using namespace onnxopt;

namespace {

//===----------------------------------------------------------------------===//
// Traits, shape operands, axes
//===----------------------------------------------------------------------===//

constexpr ShapeOperand CenterCropPadOperands1[] = {{1, "shape"}};
constexpr ShapeOperand ConstantOfShapeOperands1[] = {{0, "shape"}};
constexpr ShapeOperand ExpandOperands1[] = {{1, "shape"}};
constexpr ShapeOperand OneHotOperands1[] = {{1, "depth"}};
constexpr ShapeOperand PadOperands11[] = {{1, "pads"}, {3, "axes"}};
constexpr ShapeOperand RangeOperands1[] = {
    {0, "start"}, {1, "limit"}, {2, "delta"}};
constexpr ShapeOperand ReshapeOperands5[] = {{1, "shape"}};
constexpr ShapeOperand SliceOperands10[] = {
    {1, "starts"}, {2, "ends"}, {3, "axes"}, {4, "steps"}};
constexpr ShapeOperand SplitOperands1[] = {{1, "split"}};
constexpr ShapeOperand SplitOperands13[] = {{1, "split"}};
constexpr ShapeOperand SqueezeOperands13[] = {{1, "axes"}};
constexpr ShapeOperand TileOperands1[] = {{1, "tiles"}, {2, "axis"}};
constexpr ShapeOperand TileOperands6[] = {{1, "repeats"}};
constexpr ShapeOperand TopKOperands10[] = {{1, "k"}};
constexpr ShapeOperand UnsqueezeOperands13[] = {{1, "axes"}};

constexpr TraitRow Traits[] = {
    {"",
     "Cast",
     1,
     ShapePreserving | MovesElements | ShapeArithmetic,
     {},
     {},
     -1},
    {"", "CastLike", 1, ShapePreserving, {}, {}, -1},
    {"", "CenterCropPad", 1, 0, CenterCropPadOperands1, {}, -1},
    {"", "Compress", 1, ValueDependentShape, {}, {}, -1},
    {"", "Concat", 1, ShapeArithmetic | Concatenates, {}, {}, -1},
    {"", "Constant", 1, ConstantProducer, {}, {}, -1},
    {"", "ConstantOfShape", 1, FillsShape, ConstantOfShapeOperands1, {}, -1},
    {"", "CumSum", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"",
     "Expand",
     1,
     MovesElements | BroadcastsToShape,
     ExpandOperands1,
     {},
     -1},
    {"", "Flatten", 1, MovesElements | ViewLike, {}, {}, -1},
    {"", "Gather", 1, ShapeArithmetic | GathersAlongAxis, {}, {}, -1},
    {"", "GatherElements", 11, GathersAlongAxis, {}, {}, -1},
    {"", "GatherND", 11, GathersTuples, {}, {}, -1},
    {"",
     "Identity",
     1,
     ShapePreserving | MovesElements | IdentityOp | ShapeArithmetic,
     {},
     {},
     -1},
    {"", "NonZero", 1, ValueDependentShape, {}, {}, -1},
    {"", "OneHot", 1, 0, OneHotOperands1, {}, -1},
    {"", "Pad", 1, PadsEdges, {}, {}, -1},
    {"", "Pad", 11, PadsEdges, PadOperands11, {}, -1},
    {"", "Range", 1, CountsUp, RangeOperands1, {}, -1},
    {"", "Reshape", 1, MovesElements | ViewLike, {}, {}, -1},
    {"", "Reshape", 5, MovesElements | ViewLike, ReshapeOperands5, {}, -1},
    {"", "ReverseSequence", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "ScatterND", 11, ScattersTuples, {}, {}, -1},
    {"", "Shape", 1, ReadsTypeOnly, {}, {}, -1},
    {"", "Size", 1, ReadsTypeOnly | ShapeArithmetic, {}, {}, -1},
    {"",
     "Slice",
     1,
     MovesElements | ShapeArithmetic | CutsAlongAxes,
     {},
     {},
     -1},
    {"",
     "Slice",
     10,
     MovesElements | ShapeArithmetic | CutsAlongAxes,
     SliceOperands10,
     {},
     -1},
    // Split-1 took `split` as an optional input; 2 to 12 as an attribute.
    {"", "Split", 1, MovesElements | SplitsAlongAxis, SplitOperands1, {}, -1},
    {"", "Split", 2, MovesElements | SplitsAlongAxis, {}, {}, -1},
    {"", "Split", 13, MovesElements | SplitsAlongAxis, SplitOperands13, {}, -1},
    {"",
     "Squeeze",
     1,
     MovesElements | ShapeArithmetic | ViewLike | RemovesUnitDims,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "Squeeze",
     13,
     MovesElements | ShapeArithmetic | ViewLike | RemovesUnitDims,
     SqueezeOperands13,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "Tile", 1, MovesElements, TileOperands1, {}, -1},
    {"", "Tile", 6, MovesElements, TileOperands6, {}, -1},
    {"", "TopK", 1, KeepsTopK, {}, {}, -1},
    {"",
     "TopK",
     10,
     ValueDependentUnlessConstant | KeepsTopK,
     TopKOperands10,
     {},
     1},
    {"", "Transpose", 1, MovesElements | PermutesDims, {}, {}, -1},
    {"", "Trilu", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "Unique", 1, ValueDependentShape, {}, {}, -1},
    {"",
     "Unsqueeze",
     1,
     MovesElements | ShapeArithmetic | ViewLike | InsertsUnitDims,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "Unsqueeze",
     13,
     MovesElements | ShapeArithmetic | ViewLike | InsertsUnitDims,
     UnsqueezeOperands13,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "Where", 1, ElementwiseBroadcasting, {}, {}, -1},
};

} // namespace

//===----------------------------------------------------------------------===//
// Run-time preconditions
//===----------------------------------------------------------------------===//

namespace {

constexpr PreconditionRule PreconditionRows[] = {
    // Experimental; the only default-domain op that takes any attributes.
    {"", "ATen", 1, nullptr, -1, /*AnyAttributes=*/true},
    {"", "ConstantOfShape", 1, nullptr, 0},
    {"", "Expand", 1, nullptr, 1},
    {"", "Reshape", 1, nullptr, 1},
};

llvm::ArrayRef<PreconditionRule> preconditionRules() {
  return PreconditionRows;
}

} // namespace

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

// Inference functions (onnx::InferenceContext) of the versions ONNX 1.12
// has no schema for, and refinements on top of its schemas (InferRules.h).

namespace {

using namespace onnxopt::infer;

/// Reshape-5 to 13: a 0 in the target copies the input's dim.
void refineReshape5(InferenceContext &Ctx) {
  detail::refineReshape(Ctx, /*AllowZero=*/false);
}

/// Reshape-14: `allowzero` makes a 0 in the target a 0.
void refineReshape14(InferenceContext &Ctx) {
  const onnx::AttributeProto *A = Ctx.getAttribute("allowzero");
  detail::refineReshape(Ctx, A && A->type() == onnx::AttributeProto::INT &&
                                 A->i() != 0);
}

/// Split-18: sizes from the `split` input, or `num_outputs` chunks of
/// ceil(dim / num_outputs) with a smaller last chunk.
void inferSplit18(InferenceContext &Ctx) {
  size_t NumOuts = Ctx.getNumOutputs();
  for (size_t I = 0; I < NumOuts; ++I)
    onnx::propagateElemTypeFromInputToOutput(Ctx, 0, I);
  const onnx::AttributeProto *NumAttr = Ctx.getAttribute("num_outputs");
  bool HasSplit = hasInput(Ctx, 1);
  if (HasSplit && NumAttr)
    fail_shape_inference("split and num_outputs cannot both be given");
  if (!HasSplit && !NumAttr)
    fail_shape_inference("either split or num_outputs must be given");
  if (NumAttr && NumAttr->i() != int64_t(NumOuts))
    fail_shape_inference("num_outputs is ", NumAttr->i(), " but the node has ",
                         NumOuts, " outputs");
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t Rank = In.dim_size();
  int64_t Axis =
      normalizeAxis(onnx::getAttribute(Ctx, "axis", 0), Rank, "axis");
  std::optional<int64_t> Dim = known(In.dim(Axis));
  std::vector<std::optional<int64_t>> Sizes(NumOuts);
  if (HasSplit) {
    if (std::optional<std::vector<int64_t>> Split = intInput(Ctx, 1)) {
      if (Split->size() != NumOuts)
        fail_shape_inference("split has ", Split->size(), " parts for ",
                             NumOuts, " outputs");
      int64_t Sum = 0;
      for (size_t I = 0; I < NumOuts; ++I) {
        if ((*Split)[I] < 0)
          fail_shape_inference("split has a negative part");
        Sum += (*Split)[I];
        Sizes[I] = (*Split)[I];
      }
      if (Dim && Sum != *Dim)
        fail_shape_inference("split sums to ", Sum, " but dim ", Axis, " is ",
                             *Dim);
    }
  } else if (Dim) {
    int64_t N = static_cast<int64_t>(NumOuts);
    int64_t Chunk = (*Dim + N - 1) / N;
    if (N > 1 && Chunk * (N - 1) >= *Dim && *Dim % N != 0)
      fail_shape_inference("dim ", Axis, " (", *Dim, ") cannot be split into ",
                           N, " outputs");
    for (int64_t I = 0; I < N; ++I)
      Sizes[I] = I + 1 < N ? Chunk : *Dim - Chunk * (N - 1);
  }
  for (size_t I = 0; I < NumOuts; ++I) {
    TensorShapeProto &S = *outputShape(Ctx, I);
    for (int64_t K = 0; K < Rank; ++K) {
      if (K != Axis)
        addDim(S, In.dim(K));
      else if (Sizes[I])
        addDim(S, *Sizes[I]);
      else
        addUnknownDim(S);
    }
  }
}

/// Pad-18/19/21/23: pads (and optional axes) as inputs.
void inferPad18(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t Rank = In.dim_size();
  std::vector<int64_t> Axes;
  bool AxesKnown = true;
  if (hasInput(Ctx, 3)) {
    std::optional<std::vector<int64_t>> A = intInput(Ctx, 3);
    if (A) {
      for (int64_t X : *A)
        Axes.push_back(normalizeAxis(X, Rank, "axis"));
    } else {
      AxesKnown = false;
    }
  } else {
    for (int64_t K = 0; K < Rank; ++K)
      Axes.push_back(K);
  }
  std::optional<std::vector<int64_t>> Pads = intInput(Ctx, 1);
  if (Pads && AxesKnown && Pads->size() != 2 * Axes.size())
    fail_shape_inference("pads has ", Pads->size(), " values for ", Axes.size(),
                         " axes");
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  for (int64_t K = 0; K < Rank; ++K) {
    if (!AxesKnown) {
      addUnknownDim(Out);
      continue;
    }
    auto It = llvm::find(Axes, K);
    if (It == Axes.end()) {
      addDim(Out, In.dim(K));
      continue;
    }
    size_t I = It - Axes.begin();
    std::optional<int64_t> D = known(In.dim(K));
    if (Pads && D) {
      int64_t V = *D + (*Pads)[I] + (*Pads)[I + Axes.size()];
      if (V < 0)
        fail_shape_inference("padding makes dim ", K, " negative (", V, ")");
      addDim(Out, V);
    } else if (Pads && (*Pads)[I] == 0 && (*Pads)[I + Axes.size()] == 0) {
      addDim(Out, In.dim(K));
    } else {
      addUnknownDim(Out);
    }
  }
}

/// Cast-19/21/23: the element type of `to`, the shape of the input.
void inferCast19(InferenceContext &Ctx) {
  const onnx::AttributeProto *To = Ctx.getAttribute("to");
  if (!To || To->type() != onnx::AttributeProto::INT)
    fail_type_inference("attribute to must be an int");
  setElemType(Ctx, 0, static_cast<int32_t>(To->i()));
  if (onnx::hasInputShape(Ctx, 0))
    *outputShape(Ctx, 0) = onnx::getInputShape(Ctx, 0);
}

/// CastLike-19/21/23: the element type of the second input.
void inferCastLike19(InferenceContext &Ctx) {
  if (int32_t ET = inputElemType(Ctx, 1))
    setElemType(Ctx, 0, ET);
  if (onnx::hasInputShape(Ctx, 0))
    *outputShape(Ctx, 0) = onnx::getInputShape(Ctx, 0);
}

/// CenterCropPad-18: dims on `axes` become the values of `shape`.
void inferCenterCropPad(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t Rank = In.dim_size();
  std::vector<int64_t> Axes;
  for (int64_t A : intsAttr(Ctx, "axes"))
    Axes.push_back(normalizeAxis(A, Rank, "axis"));
  if (Axes.empty())
    for (int64_t K = 0; K < Rank; ++K)
      Axes.push_back(K);
  std::optional<TensorShapeProto> Shape = shapeInput(Ctx, 1);
  if (Shape && Shape->dim_size() != int64_t(Axes.size()))
    fail_shape_inference("shape has ", Shape->dim_size(), " values for ",
                         Axes.size(), " axes");
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  for (int64_t K = 0; K < Rank; ++K) {
    auto It = llvm::find(Axes, K);
    if (It == Axes.end())
      addDim(Out, In.dim(K));
    else if (Shape)
      addDim(Out, Shape->dim(It - Axes.begin()));
    else
      addUnknownDim(Out);
  }
}

// Sorted by domain, op and version.
constexpr InferRule InferRows[] = {
    // ONNX's Cast propagation copies the values to any type (a float16
    // rounds 4001 to 4000): ours keeps them where the type holds them.
    onSchema("Cast", 1, nullptr, detail::propagateCast),
    withPropagation(newVersionReusing("", "Cast", 19, "Cast", 13,
                                      {true, 0, 0, 0, 0, "saturate:i"},
                                      inferCast19),
                    detail::propagateCast),
    newVersionReusing("", "CastLike", 19, "CastLike", 15,
                      {true, 0, 0, 0, 0, "saturate:i"}, inferCastLike19),
    newVersion("", "CenterCropPad", 18, inferCenterCropPad,
               {false, 2, 2, 1, 1, "axes:is"}),
    onSchema("ConstantOfShape", 1, nullptr, detail::propagateConstantOfShape),
    onSchema("Expand", 1, detail::refineExpand),
    newVersion("", "Pad", 18, inferPad18, {false, 2, 4, 1, 1, "mode:s"}),
    newVersion("", "Pad", 19, inferPad18, {false, 2, 4, 1, 1, "mode:s"}),
    onSchema("Range", 1, detail::refineRange),
    // Before opset 5 the target is an attribute, always constant: ONNX's
    // function knows everything there.
    onSchema("Reshape", 1, nullptr, detail::propagateReshape),
    onSchema("Reshape", 5, refineReshape5, detail::propagateReshape),
    onSchema("Reshape", 14, refineReshape14, detail::propagateReshape),
    // The output has the shape of data; reduction values are not shape rules.
    newVersionReusing("", "ScatterElements", 18, "ScatterElements", 16,
                      {true, 0, 0, 0, 0, ""}),
    newVersionReusing("", "ScatterND", 18, "ScatterND", 16,
                      {true, 0, 0, 0, 0, ""}),
    // Before opset 10 the bounds are attributes, always constant.
    onSchema("Slice", 10, detail::refineSlice),
    newVersion("", "Split", 18, inferSplit18,
               {false, 1, 2, 1, ManyOperands, "axis:i num_outputs:i"}),
    onSchema("Where", 1, nullptr, detail::propagateWhere),
};

llvm::ArrayRef<InferRule> inferRules() { return InferRows; }

} // namespace

//===----------------------------------------------------------------------===//
// Dim transfer
//===----------------------------------------------------------------------===//

namespace {
using namespace onnxopt::dims;

/// Identity: the shape, and the elements as they are.
void transferPassThrough(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (const DimList *D = C.flatData(0))
    C.setData(0, *D);
}

/// Cast: the shape, and the elements as castValues (SymbolicRefinement.h)
/// says the target type keeps them.
void transferCast(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  const DimList *D = C.flatData(0);
  if (!D)
    return;
  switch (detail::castValues(C.getNode().getAttrInt("to", 0))) {
  case detail::CastValues::Kept:
    C.setData(0, *D);
    return;
  case detail::CastValues::KeptIfNotNegative:
    if (llvm::all_of(*D, [](const DimExpr &E) {
          return E.isConstant() ? E.getConstant() >= 0
                                : nonNegativeEverywhere(E);
        }))
      C.setData(0, *D);
    return;
  case detail::CastValues::AsBool: {
    if (!llvm::all_of(*D, [](const DimExpr &E) { return E.isConstant(); }))
      return;
    DimList B;
    for (const DimExpr &E : *D)
      B.push_back(DimExpr::constant(E.getConstant() != 0));
    C.setData(0, std::move(B));
    return;
  }
  case detail::CastValues::Lost:
    return;
  }
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

/// The constant dims of shape data \p D whose tensor has dims \p X: a
/// tensor of rank 1 has as many elements as D; one of a higher rank needs
/// every dim known, and as many elements as D holds.
std::optional<std::vector<int64_t>> dataShape(const DimList *D,
                                              const DimList &X) {
  if (!D || X.empty())
    return std::nullopt;
  if (X.size() == 1)
    return std::vector<int64_t>{static_cast<int64_t>(D->size())};
  std::optional<std::vector<int64_t>> Shape = constants(&X);
  if (!Shape)
    return std::nullopt;
  // Every dim at most the data's length: the count cannot overflow before
  // it passes that length (a zero dim gives no data either way).
  int64_t Count = 1, Len = static_cast<int64_t>(D->size());
  for (int64_t V : *Shape) {
    if (V <= 0 || V > Len || (Count *= V) > Len)
      return std::nullopt;
  }
  if (Count != Len)
    return std::nullopt;
  return Shape;
}

/// Every index of every axis of \p Shape.
std::vector<std::vector<int64_t>> wholeAxes(llvm::ArrayRef<int64_t> Shape) {
  std::vector<std::vector<int64_t>> Take(Shape.size());
  for (size_t A = 0; A < Shape.size(); ++A)
    for (int64_t K = 0; K < Shape[A]; ++K)
      Take[A].push_back(K);
  return Take;
}

/// The elements of row-major data \p D of dims \p Shape that a result
/// takes: its axis K runs over the indices Take[Order[K]] of the data's
/// axis Order[K] (a Slice keeps the order and takes some indices, a
/// Transpose permutes the order and takes them all).
DimList pickElements(const DimList &D, llvm::ArrayRef<int64_t> Shape,
                     llvm::ArrayRef<size_t> Order,
                     llvm::ArrayRef<std::vector<int64_t>> Take) {
  size_t Rank = Shape.size();
  std::vector<int64_t> Stride(Rank, 1);
  for (size_t A = Rank; A-- > 1;)
    Stride[A - 1] = Stride[A] * Shape[A];
  DimList R;
  for (size_t A = 0; A < Rank; ++A)
    if (Take[A].empty())
      return R;
  // An odometer over the result's axes, the last one fastest.
  std::vector<size_t> At(Rank, 0);
  while (true) {
    int64_t Flat = 0;
    for (size_t K = 0; K < Rank; ++K)
      Flat += Take[Order[K]][At[K]] * Stride[Order[K]];
    R.push_back(D[Flat]);
    size_t K = Rank;
    while (K > 0 && ++At[K - 1] == Take[Order[K - 1]].size())
      At[--K] = 0;
    if (K == 0)
      return R;
  }
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
  std::vector<size_t> Order;
  for (int64_t P : Perm) {
    std::optional<size_t> A = normAxis(P, X->size());
    if (!A)
      return;
    R.push_back((*X)[*A]);
    Order.push_back(*A);
  }
  C.setDims(0, std::move(R));
  // Shape data moves with its positions (torch's F.pad turns a [4, 2]
  // table of pads into ONNX's order through a Transpose).
  const DimList *D = C.flatData(0);
  if (std::optional<std::vector<int64_t>> Shape = dataShape(D, *X))
    C.setData(0, pickElements(*D, *Shape, Order, wholeAxes(*Shape)));
}

/// Reshape's -1 run-time precondition: the element count \p Count divides
/// by \p Others, the product of the other target dims. Stated where Others
/// is a constant, or c * M for a product of dims M that divides the count
/// as expressions (a copied N beside a 4: [0, -1, 4]); then Count / M must
/// be a multiple of c. Other forms (a dim the input does not have) state
/// nothing.
void requireReshapeDivides(DimContext &C, const DimExpr &Count,
                           const DimExpr &Others) {
  const char *Why = "the element count must divide by the given dims";
  if (Others.isConstant()) {
    if (Others.getConstant() > 1)
      C.require(DimCondition::Divisible, Count, Others, Why);
    return;
  }
  auto [Factor, Constant] = Others.coefficientGcd();
  if (Constant != 0 || Factor <= 1)
    return;
  std::optional<DimExpr> M = Others.divExact(DimExpr::constant(Factor));
  if (!M || *M * DimExpr::constant(Factor) != Others)
    return;
  std::optional<DimExpr> Rest = Count.divExact(*M);
  if (!Rest || *Rest * *M != Count)
    return; // M does not divide the count as expressions
  C.require(DimCondition::Divisible, *Rest, DimExpr::constant(Factor), Why);
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
    // A target dim that is one of the input's dims cancels before the
    // division: [B,4,S,12] to [-1,S,12] is B*4 even where S is a sum
    // (HuBERT's floor(L/10)-1 frames), which divExact cannot divide by.
    DimList Count(X.begin(), X.end());
    DimExpr Others = DimExpr::constant(1);
    for (size_t I = 0; I < R.size(); ++I) {
      if (I == *Infer)
        continue;
      auto Same = R[I]->isConstant()
                      ? Count.end()
                      : std::find(Count.begin(), Count.end(), *R[I]);
      if (Same != Count.end())
        Count.erase(Same);
      else
        Others = Others * *R[I];
    }
    R[*Infer] = product(Count).divExact(Others);
    requireReshapeDivides(C, product(Count), Others);
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
  if (const DimList *D = C.flatData(0))
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

/// Index values in [\p Lo, \p Hi] lie inside \p Dim (a negative one
/// counts from its end).
void requireInside(DimContext &C, const DimExpr &Dim, int64_t Lo, int64_t Hi) {
  if (Hi >= 0)
    C.require(DimCondition::AtLeast, Dim, DimExpr::constant(Hi + 1),
              "indices inside the gathered dim");
  if (Lo < 0)
    C.require(DimCondition::AtLeast, Dim, DimExpr::constant(-Lo),
              "indices inside the gathered dim");
}

/// The indices of a Gather must lie inside the table's dim \p Table: known
/// constant indices (short ones one by one, longer or higher-rank tables
/// by their bounds), or a Range whose greatest element is known.
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
  if (auto B = C.constantBounds(1)) {
    requireInside(C, Table, B->front().first, B->front().second);
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

/// Each index along the gathered dims of GatherND / ScatterND lies inside
/// its dim: tuple component J of constant indices inside \p X's dim
/// \p First + J; a known greatest element inside every one of them.
/// Indices read from the data (token ids, an ArgMax) are the data's
/// business, as for Gather.
void requireTupleIndices(DimContext &C, const DimList &X, size_t First,
                         size_t M) {
  if (auto B = C.constantBounds(1, M)) {
    for (size_t J = 0; J < M; ++J)
      requireInside(C, X[First + J], (*B)[J].first, (*B)[J].second);
    return;
  }
  if (const DimExpr *Max = C.getMaxElement(1))
    for (size_t J = 0; J < M; ++J)
      C.require(DimCondition::AtMost, *Max + DimExpr::constant(1),
                X[First + J], "indices inside the gathered dim");
}

/// The tuple length M of GatherND / ScatterND indices (their last dim,
/// which must be a number in [1, rank(data) - batch_dims]), with the
/// batch dims of data and indices united; std::nullopt when it is not a
/// number, after requiring what bounds it.
std::optional<size_t> tupleLength(DimContext &C, const DimList &X,
                                  const DimList &I, size_t Batch) {
  const DimExpr &Last = I.back();
  if (!Last.isConstant()) {
    C.require(DimCondition::AtLeast, Last, DimExpr::constant(1),
              "index tuples of at least one element");
    C.require(DimCondition::AtMost, Last,
              DimExpr::constant(int64_t(X.size()) - int64_t(Batch)),
              "index tuples no longer than the data's rank");
    return std::nullopt;
  }
  int64_t M = Last.getConstant();
  if (M < 1 || Batch + size_t(M) > X.size() || Batch >= I.size())
    return std::nullopt;
  for (size_t K = 0; K < Batch; ++K)
    C.unite(X[K], I[K]);
  return size_t(M);
}

/// GatherND: indices [..., M] pick M-tuples from the data's dims after its
/// batch dims; the result has the indices' dims but the last, then the
/// data's dims after the batch dims and the M indexed ones.
void transferGatherND(DimContext &C, const DimList *X) {
  const DimList *I = C.dims(1);
  int64_t Batch = C.getNode().getAttrInt("batch_dims", 0);
  if (!I || I->empty() || Batch < 0)
    return;
  std::optional<size_t> M = tupleLength(C, *X, *I, size_t(Batch));
  if (!M)
    return;
  requireTupleIndices(C, *X, size_t(Batch), *M);
  PartialDimList R(I->begin(), I->end() - 1);
  R.insert(R.end(), X->begin() + Batch + *M, X->end());
  C.setDims(0, std::move(R));
}

/// ScatterND: the result is the data; updates have the indices' dims but
/// the last, then the data's dims after the M indexed ones.
void transferScatterND(DimContext &C, const DimList *X) {
  C.setDims(0, full(*X));
  const DimList *I = C.dims(1);
  if (!I || I->empty())
    return;
  std::optional<size_t> M = tupleLength(C, *X, *I, 0);
  if (!M)
    return;
  requireTupleIndices(C, *X, 0, *M);
  const DimList *U = C.dims(2);
  if (!U || U->size() != I->size() - 1 + X->size() - *M)
    return;
  for (size_t K = 0; K + 1 < I->size(); ++K)
    C.unite((*U)[K], (*I)[K]);
  for (size_t K = *M; K < X->size(); ++K)
    C.unite((*U)[I->size() - 1 + K - *M], (*X)[K]);
}

/// GatherElements and ScatterElements: indices of the data's rank, no
/// longer than the data along every dim but the axis (ONNX Runtime checks
/// it), each index inside the axis' dim.
std::optional<size_t> requireElementIndices(DimContext &C, const DimList &X) {
  const DimList *I = C.dims(1);
  std::optional<size_t> Axis =
      normAxis(C.getNode().getAttrInt("axis", 0), X.size());
  if (!I || I->size() != X.size() || !Axis)
    return std::nullopt;
  for (size_t K = 0; K < X.size(); ++K)
    if (K != *Axis)
      C.require(DimCondition::AtMost, (*I)[K], X[K],
                "indices no longer than the data off the axis");
  if (auto B = C.constantBounds(1)) {
    requireInside(C, X[*Axis], B->front().first, B->front().second);
  } else if (const DimExpr *Max = C.getMaxElement(1)) {
    C.require(DimCondition::AtMost, *Max + DimExpr::constant(1), X[*Axis],
              "indices inside the gathered dim");
  }
  return Axis;
}

void transferGatherElements(DimContext &C, const DimList *X) {
  if (!requireElementIndices(C, *X))
    return;
  C.setDims(0, full(*C.dims(1)));
}

/// ScatterElements: the result is the data; updates have the indices'
/// dims.
void transferScatterElements(DimContext &C, const DimList *X) {
  C.setDims(0, full(*X));
  if (!requireElementIndices(C, *X))
    return;
  const DimList *I = C.dims(1), *U = C.dims(2);
  if (!U || U->size() != I->size())
    return;
  for (size_t K = 0; K < I->size(); ++K)
    C.unite((*U)[K], (*I)[K]);
}

void transferUnsqueeze(DimContext &C, const DimList *X) {
  std::optional<std::vector<int64_t>> Axes = C.axes();
  if (!Axes)
    return;
  size_t Rank = X->size() + Axes->size();
  std::vector<bool> IsNew(Rank, false);
  for (int64_t A : *Axes) {
    std::optional<size_t> P = normAxis(A, Rank);
    // A repeated axis is invalid (the runtime refuses it); read on, it
    // would take more of X's dims than X has.
    if (!P || IsNew[*P])
      return;
    IsNew[*P] = true;
  }
  PartialDimList R;
  size_t Next = 0;
  for (size_t K = 0; K < Rank; ++K)
    R.push_back(IsNew[K] ? DimExpr::constant(1) : (*X)[Next++]);
  C.setDims(0, std::move(R));
  if (const DimList *D = C.flatData(0))
    C.setData(0, *D);
}

void transferSqueeze(DimContext &C, const DimList *X) {
  // The elements stay as they are, whatever the axes.
  if (const DimList *D = C.flatData(0))
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

/// Where a constant Slice index lands on a dim \p D (an expression) after
/// ONNX's clamping: negative indices count from the back (D is added), then
/// the index is clamped to [0, D] for a positive step, to [0, D-1] (start)
/// or [-1, D-1] (end) for a negative one. std::nullopt unless one case of
/// the clamp holds at every value of the symbols where the model runs
/// (holdsWhereRuns: HuBERT's `[:, :, :-1]` over floor(L/10) frames, which
/// its Conv stack makes at least 2): the length must be one expression
/// there, or the dims after the Slice would be unrelated to D and a
/// condition on them (a baked grid added later) would be lost.
std::optional<DimExpr> clampSymbolicSliceIndex(DimContext &C,
                                               const DimExpr &D, int64_t Index,
                                               bool Forward, bool IsEnd) {
  DimExpr Lo = DimExpr::constant(Forward || !IsEnd ? 0 : -1);
  DimExpr Hi = Forward ? D : D - DimExpr::constant(1);
  // Past any dim a tensor can have (torch writes INT64_MAX for `x[a:]`,
  // INT64_MIN for the end of `x[::-1]`): the clamp's bound on that side.
  if (isSliceEndPastAnyDim(Index))
    return Hi;
  DimExpr At = Index <= -int64_t(INT32_MAX) ? Lo - DimExpr::constant(1)
               : Index < 0                  ? D + DimExpr::constant(Index)
                                            : DimExpr::constant(Index);
  if (C.holdsWhereRuns(DimCondition::AtLeast, At, Lo) &&
      C.holdsWhereRuns(DimCondition::AtMost, At, Hi))
    return At;
  // ONNX clamps to Lo first, then to Hi: Hi wins on an empty dim.
  if (C.holdsWhereRuns(DimCondition::AtLeast, At, Hi))
    return Hi;
  if (C.holdsWhereRuns(DimCondition::AtMost, At, Lo) &&
      C.holdsWhereRuns(DimCondition::AtMost, Lo, Hi))
    return Lo;
  return std::nullopt;
}

/// Slice's length along a symbolic dim \p D, from constant \p Start to
/// constant \p End by \p Step: ceil((end - start) / step) over the clamped
/// indices (ceil((start - end) / -step) for a negative step), 0 when they
/// cross. `x[..., ::2]` is ceil(D/2), `x[..., 1::2]` ceil((D-1)/2) =
/// floor(D/2), `x[::-1]` is D. std::nullopt where a clamp or the sign of
/// the distance depends on the symbols' values (where the model runs).
std::optional<DimExpr> symbolicSliceLength(DimContext &C, const DimExpr &D,
                                           int64_t Start, int64_t End,
                                           int64_t Step) {
  // |INT64_MIN| does not fit; a step that long takes one element at most,
  // which is no expression either unless the dim is known.
  if (Step == 0 || Step == INT64_MIN || D.hasUnknown())
    return std::nullopt;
  bool Forward = Step > 0;
  std::optional<DimExpr> S =
      clampSymbolicSliceIndex(C, D, Start, Forward, /*IsEnd=*/false);
  std::optional<DimExpr> E =
      clampSymbolicSliceIndex(C, D, End, Forward, /*IsEnd=*/true);
  if (!S || !E)
    return std::nullopt;
  DimExpr Distance = Forward ? *E - *S : *S - *E;
  if (C.holdsWhereRuns(DimCondition::AtMost, Distance, DimExpr::constant(0)))
    return DimExpr::constant(0);
  if (!C.holdsWhereRuns(DimCondition::AtLeast, Distance, DimExpr::constant(0)))
    return std::nullopt;
  return Distance.ceilDiv(Forward ? Step : -Step);
}

/// A Slice's bounds: attributes before opset 10, constant inputs from it.
struct SliceBounds {
  std::optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
  /// The ends as expressions (inputs only): computed from shapes,
  /// `table[:, :seq_len]`.
  const DimList *EndExprs = nullptr;

  /// Entry \p I's axis (of rank \p Rank) and step; std::nullopt for an
  /// axis out of range or a zero step.
  std::optional<std::pair<size_t, int64_t>> axisAndStep(size_t I,
                                                        size_t Rank) const {
    int64_t AxisValue =
        Axes ? (I < Axes->size() ? (*Axes)[I] : -1) : static_cast<int64_t>(I);
    std::optional<size_t> Axis = normAxis(AxisValue, Rank);
    int64_t Step = Steps && I < Steps->size() ? (*Steps)[I] : 1;
    if (!Axis || Step == 0)
      return std::nullopt;
    return std::make_pair(*Axis, Step);
  }
};

/// \p C's node's bounds; std::nullopt where axes or steps are inputs that
/// are not constant (nothing to cut by).
std::optional<SliceBounds> sliceBounds(DimContext &C) {
  const Node &N = C.getNode();
  SliceBounds B;
  if (N.hasAttr("starts")) {
    B.Starts = N.getAttrInts("starts");
    B.Ends = N.getAttrInts("ends");
    B.Axes = N.getAttrInts("axes");
    return B;
  }
  B.Starts = constants(C.data(1));
  B.Ends = constants(C.data(2));
  B.EndExprs = C.data(2);
  if (hasOperand(N, 3) && !(B.Axes = constants(C.data(3))))
    return std::nullopt;
  if (hasOperand(N, 4) && !(B.Steps = constants(C.data(4))))
    return std::nullopt;
  return B;
}

std::optional<PartialDimList> slice(DimContext &C, const DimList &X) {
  // Only dims that are known or taken whole: a symbolic dim cut at a
  // constant could be shorter than the cut.
  std::optional<SliceBounds> B = sliceBounds(C);
  if (!B)
    return std::nullopt;
  auto &[Starts, Ends, Axes, Steps, EndExprs] = *B;
  if (!Ends && EndExprs && Starts && EndExprs->size() == Starts->size()) {
    // Placeholders: positions with a symbolic end are handled below.
    Ends.emplace();
    for (const DimExpr &E : *EndExprs)
      Ends->push_back(E.isConstant() ? E.getConstant() : 0);
  } else {
    EndExprs = nullptr;
  }
  if (!Starts || !Ends || Starts->size() != Ends->size())
    return std::nullopt;
  PartialDimList R = full(X);
  for (size_t I = 0; I < Starts->size(); ++I) {
    std::optional<std::pair<size_t, int64_t>> AS = B->axisAndStep(I, X.size());
    if (!AS)
      return std::nullopt;
    auto [Axis, Step] = *AS;
    int64_t S = (*Starts)[I], E = (*Ends)[I];
    const DimExpr &D = X[Axis];
    if (EndExprs && !(*EndExprs)[I].isConstant()) {
      const DimExpr &End = (*EndExprs)[I];
      // From the start, step 1, to a computed end: that many elements if
      // the end lies inside the dim (Slice would clamp it otherwise, and
      // a negative end would count from the back).
      if (S != 0 || Step != 1 || End.hasUnknown()) {
        R[Axis] = std::nullopt;
        continue;
      }
      R[Axis] = End;
      if (End != D) {
        C.require(DimCondition::AtMost, End, D,
                  "the slice end must lie inside the dim (it is not clamped)");
        C.require(DimCondition::AtLeast, End, DimExpr::constant(0),
                  "the slice end must not be negative");
      }
      continue;
    }
    if (!D.isConstant()) {
      R[Axis] = symbolicSliceLength(C, D, S, E, Step);
      continue;
    }
    std::optional<SliceAxis> Taken =
        resolveSliceAxis(D.getConstant(), S, E, Step);
    if (!Taken)
      return std::nullopt;
    R[Axis] = DimExpr::constant(Taken->Count);
  }
  return R;
}

std::optional<DimList> sliceData(DimContext &C, const DimList &X) {
  std::optional<SliceBounds> B = sliceBounds(C);
  if (!B || !B->Starts || !B->Ends || B->Starts->size() != B->Ends->size())
    return std::nullopt;
  const DimList *D = C.flatData(0);
  std::optional<std::vector<int64_t>> Shape = dataShape(D, X);
  if (!Shape)
    return std::nullopt;
  std::vector<std::vector<int64_t>> Take = wholeAxes(*Shape);
  for (size_t I = 0; I < B->Starts->size(); ++I) {
    std::optional<std::pair<size_t, int64_t>> AS =
        B->axisAndStep(I, Shape->size());
    if (!AS)
      return std::nullopt;
    auto [Axis, Step] = *AS;
    std::optional<SliceAxis> Taken =
        resolveSliceAxis((*Shape)[Axis], (*B->Starts)[I], (*B->Ends)[I], Step);
    if (!Taken)
      return std::nullopt;
    Take[Axis].clear();
    for (int64_t K = 0; K < Taken->Count; ++K)
      Take[Axis].push_back(Taken->at(K));
  }
  std::vector<size_t> Order(Shape->size());
  std::iota(Order.begin(), Order.end(), 0);
  return pickElements(*D, *Shape, Order, Take);
}

void transferSlice(DimContext &C, const DimList *X) {
  C.setDims(0, slice(C, *X));
  if (std::optional<DimList> R = sliceData(C, *X))
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
/// limit >= start is proven where the model runs (`arange(floor(L/10)-1)`
/// after a Conv stack that needs L >= 20), and its greatest element. A
/// start that is an expression (`arange(past, past + seq)`, the positions
/// after a KV cache) needs limit - start >= 0 at every value of the
/// symbols, 0 included.
void transferRange(DimContext &C, const DimList *X) {
  const DimList *S = C.data(0), *L = C.data(1), *D = C.data(2);
  if (!S || !L || !D || S->size() != 1 || L->size() != 1 || D->size() != 1)
    return;
  const DimExpr &Start = (*S)[0], &Limit = (*L)[0], &Delta = (*D)[0];
  if (!Delta.isConstant() || Delta.getConstant() <= 0)
    return;
  if (Start.isConstant()) {
    if (!C.holdsWhereRuns(DimCondition::AtLeast, Limit, Start))
      return;
  } else if (Start.hasUnknown() || !nonNegativeEverywhere(Limit - Start)) {
    return;
  }
  DimExpr Count = (Limit - Start).ceilDiv(Delta.getConstant());
  C.setMaxElement(0, Start + Delta * (Count - DimExpr::constant(1)));
  C.setDims(0, PartialDimList{Count});
}

/// Tile's run-time precondition: repeats computed from dims (a Shape
/// minus a constant) must not be negative.
void requireTileRepeats(DimContext &C, const DimList &Repeats) {
  for (const DimExpr &K : Repeats)
    if (!C.holdsAlways(DimCondition::AtLeast, K, DimExpr::constant(0)))
      C.require(DimCondition::AtLeast, K, DimExpr::constant(0),
                "Tile's repeats must not be negative");
}

/// DepthToSpace: [N, C, H, W] to [N, C/b^2, H*b, W*b] for blocksize b;
/// the channels must hold whole blocks.
void transferDepthToSpace(DimContext &C, const DimList *X) {
  int64_t B = C.getNode().getAttrInt("blocksize", 0);
  if (X->size() != 4 || B <= 0)
    return;
  DimExpr Block = DimExpr::constant(B), Area = DimExpr::constant(B * B);
  C.require(DimCondition::Divisible, (*X)[1], Area,
            "the channels hold whole blocks");
  std::optional<DimExpr> Channels = (*X)[1].divExact(Area);
  C.setDims(0, PartialDimList{(*X)[0], Channels, (*X)[2] * Block,
                              (*X)[3] * Block});
}

/// SpaceToDepth: [N, C, H, W] to [N, C*b^2, H/b, W/b] for blocksize b;
/// H and W must hold whole blocks.
void transferSpaceToDepth(DimContext &C, const DimList *X) {
  int64_t B = C.getNode().getAttrInt("blocksize", 0);
  if (X->size() != 4 || B <= 0)
    return;
  DimExpr Block = DimExpr::constant(B);
  C.require(DimCondition::Divisible, (*X)[2], Block,
            "the height holds whole blocks");
  C.require(DimCondition::Divisible, (*X)[3], Block,
            "the width holds whole blocks");
  C.setDims(0, PartialDimList{(*X)[0], (*X)[1] * DimExpr::constant(B * B),
                              (*X)[2].floorDiv(B), (*X)[3].floorDiv(B)});
}

void transferTile(DimContext &C, const DimList *X) {
  const DimList *R = C.data(1);
  if (!R || R->size() != X->size())
    return;
  requireTileRepeats(C, *R);
  PartialDimList Res;
  for (size_t K = 0; K < X->size(); ++K)
    Res.push_back((*X)[K] * (*R)[K]);
  C.setDims(0, std::move(Res));
}

/// Pad's run-time preconditions in reflect, edge and wrap modes (ONNX
/// Runtime's, checked here at dims 0, 1, 3 and 4): what negative pads leave
/// of dim \p In must be larger than each positive pad in reflect mode (it
/// mirrors without repeating the border) and non-empty in edge and wrap
/// modes. A pad of unknown sign may crop or not: "In + min(P, 0) >= X" is
/// "In >= X and In + P >= X", so each such pad doubles the forms required.
void requirePadRunnable(DimContext &C, const DimExpr &In, const DimExpr &Begin,
                        const DimExpr &End) {
  llvm::StringRef Mode = C.getNode().getAttrString("mode", "constant");
  bool Reflect = Mode == "reflect";
  if (!Reflect && Mode != "edge" && Mode != "wrap")
    return;
  const DimExpr Zero = DimExpr::constant(0), One = DimExpr::constant(1);
  std::vector<DimExpr> Kept{In};
  for (const DimExpr *P : {&Begin, &End}) {
    if (C.holdsAlways(DimCondition::AtLeast, *P, Zero))
      continue;
    bool Crops = C.holdsAlways(DimCondition::AtMost, *P, Zero);
    std::vector<DimExpr> Next;
    for (const DimExpr &K : Kept) {
      if (!Crops)
        Next.push_back(K);
      Next.push_back(K + *P);
    }
    Kept = std::move(Next);
  }
  for (const DimExpr *P : {&Begin, &End}) {
    if (C.holdsAlways(DimCondition::AtMost, *P, Zero))
      continue; // crops or pads nothing
    for (const DimExpr &K : Kept) {
      if (Reflect)
        C.require(DimCondition::AtLeast, K, *P + One,
                  "a reflect pad must be smaller than the dim it mirrors");
      else
        C.require(DimCondition::AtLeast, K, One,
                  "edge and wrap pads need a non-empty dim");
    }
  }
}

/// OneHot's run-time precondition: values is [off, on], exactly two
/// entries (ONNX Runtime refuses any other length). Its depth is an
/// operand's contents, so no result dim is modelled.
void transferOneHot(DimContext &C, const DimList *) {
  const DimList *Values = C.dims(2);
  if (!Values || Values->size() != 1 ||
      C.holdsAlways(DimCondition::Equal, (*Values)[0], DimExpr::constant(2)))
    return;
  C.require(DimCondition::Equal, (*Values)[0], DimExpr::constant(2),
            "values holds exactly [off_value, on_value]");
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
    requirePadRunnable(C, (*X)[Axes[I]], Begin, End);
  }
  C.setDims(0, std::move(R));
}

/// Split-18's num_outputs run-time precondition: ONNX Runtime makes chunks
/// of ceil(dim / n) and a last one of what is left, and runs only where
/// they add up to the dim with that last chunk non-empty (it refuses n >
/// dim, and 9 split in 4 as [3, 3, 3, 0]). With \p Last = dim - (n - 1) *
/// ceil(dim / n) that is exactly Last >= 1, where ONNX's formula and ONNX
/// Runtime's sizes agree.
void requireSplitChunks(DimContext &C, const DimExpr &Last) {
  C.require(DimCondition::AtLeast, Last, DimExpr::constant(1),
            "num_outputs chunks of ceil(dim / num_outputs) must leave a "
            "non-empty last chunk");
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
    if (NumResults == 0)
      return;
    const DimExpr &D = (*X)[*Axis];
    int64_t Num = static_cast<int64_t>(NumResults);
    DimExpr Chunk = D.ceilDiv(Num);
    DimExpr Last = D - Chunk * DimExpr::constant(Num - 1);
    requireSplitChunks(C, Last);
    for (unsigned I = 0; I < NumResults; ++I) {
      PartialDimList R = full(*X);
      R[*Axis] = I + 1 < NumResults ? Chunk : Last;
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
    {"", "Cast", 1, transferCast},
    {"", "Concat", 1, transferConcat},
    {"", "Constant", 1, transferConstant},
    {"", "ConstantOfShape", 1, transferConstantOfShape},
    // No result dims modelled; no condition on dims beyond its recorded
    // type (a shape that is the input's).
    {"", "DepthToSpace", 1, transferDepthToSpace, NeedsX},
    {"", "EyeLike", 1, nullptr},
    {"", "Expand", 1, transferExpand, NeedsX},
    {"", "Flatten", 1, transferFlatten, NeedsX},
    {"", "Gather", 1, transferGather, NeedsX},
    {"", "GatherElements", 11, transferGatherElements, NeedsX},
    {"", "GatherND", 11, transferGatherND, NeedsX},
    {"", "Identity", 1, transferPassThrough},
    // Data-dependent (its traits say so): nothing more to require.
    {"", "NonZero", 1, nullptr},
    {"", "OneHot", 1, transferOneHot},
    {"", "Pad", 1, transferPad, NeedsX},
    {"", "Range", 1, transferRange},
    {"", "Reshape", 1, transferReshape, NeedsX},
    // Opset 16's reduction attribute changes how duplicates combine, not
    // the shapes.
    {"", "ScatterElements", 11, transferScatterElements, NeedsX},
    {"", "ScatterND", 11, transferScatterND, NeedsX},
    // Keeps its input's shape, but its sequence_lens must have the batch's
    // length, which nothing here requires.
    {"", "ReverseSequence", 1, transferShapePreserving, false,
     /*StatesAllConditions=*/false},
    {"", "Shape", 1, transferShape, NeedsX},
    {"", "Size", 1, transferSize, NeedsX},
    {"", "Slice", 1, transferSlice, NeedsX},
    {"", "SpaceToDepth", 1, transferSpaceToDepth, NeedsX},
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

// Each rule computes its op's results from constant operands (EvalRules.h);
// the helpers they share are in EvalSupport.h. Data movement works on raw
// bytes through index maps, so any fixed-size element type moves unchanged.

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

/// Index \p I of a dim of \p Extent, a negative one counted from the
/// back; false (with the reason) when it is outside the dim.
bool indexInDim(EvalContext &Ctx, int64_t &I, int64_t Extent) {
  if (I < -Extent || I >= Extent)
    return Ctx.error("index " + llvm::Twine(I) + " is out of range for dim " +
                     llvm::Twine(Extent));
  if (I < 0)
    I += Extent;
  return true;
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
  for (int64_t &I : *Indices)
    if (!indexInDim(Ctx, I, Extent))
      return std::nullopt;
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

/// GatherND: each tuple along the last dim of the indices picks a slice of
/// the data after the `batch_dims` leading dims both share (torch writes
/// it for `mask[:, None, None, :]` with baked position tuples).
EvalResults evalGatherND(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  const Tensor *Data = Ctx.constOperand(0);
  std::optional<std::vector<int64_t>> Idx = Ctx.intOperand(1);
  if (!Data || !Idx)
    return std::nullopt;
  std::vector<int64_t> DDims = Data->getDims();
  std::vector<int64_t> IDims = Ctx.constOperand(1)->getDims();
  int64_t B = N.getAttrInt("batch_dims", 0);
  int64_t R = DDims.size(), Q = IDims.size();
  if (Q == 0 || R == 0)
    return Ctx.fail("GatherND of a scalar");
  int64_t K = IDims.back();
  if (B < 0 || B >= std::min(R, Q) || K < 1 || B + K > R)
    return Ctx.fail("GatherND's indices do not fit its data");
  for (int64_t I = 0; I < B; ++I)
    if (DDims[I] != IDims[I])
      return Ctx.fail("GatherND's batch dims differ");
  std::vector<int64_t> OutDims(IDims.begin(), IDims.end() - 1);
  OutDims.insert(OutDims.end(), DDims.begin() + B + K, DDims.end());
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num || !Ctx.fitsBudget(Data->getElemType(), *Num))
    return Num ? std::nullopt : Ctx.fail("result too large");
  int64_t Batches = *numElements(llvm::makeArrayRef(DDims).take_front(B));
  int64_t Slice = *numElements(llvm::makeArrayRef(DDims).drop_front(B + K));
  int64_t BatchSize = *numElements(llvm::makeArrayRef(DDims).drop_front(B));
  int64_t Tuples =
      *numElements(llvm::makeArrayRef(IDims).drop_front(B).drop_back(1));
  std::vector<int64_t> Src;
  Src.reserve(*Num);
  for (int64_t Bi = 0; Bi < Batches; ++Bi)
    for (int64_t T = 0; T < Tuples; ++T) {
      const int64_t *Tuple = Idx->data() + (Bi * Tuples + T) * K;
      int64_t Off = 0;
      for (int64_t J = 0; J < K; ++J) {
        int64_t I = Tuple[J];
        if (!indexInDim(Ctx, I, DDims[B + J]))
          return std::nullopt;
        Off = Off * DDims[B + J] + I;
      }
      for (int64_t E = 0; E < Slice; ++E)
        Src.push_back(Bi * BatchSize + Off * Slice + E);
    }
  std::optional<Tensor> T = Ctx.take(*Data, OutDims, Src);
  return T ? Ctx.one(std::move(*T)) : std::nullopt;
}

/// CumSum along a scalar axis (`exclusive`, `reverse`). Integers wrap as
/// runtimes do and are exact; floating sums are read only (the runtime's
/// rounding of each partial sum is its own), for make-dynamic.
EvalResults evalCumSum(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  std::optional<Literal> X = literalOperand(Ctx, 0);
  std::optional<std::vector<int64_t>> Axis = Ctx.intOperand(1);
  if (!X || !Axis)
    return std::nullopt;
  if (Axis->size() != 1)
    return Ctx.fail("CumSum's axis is not a scalar");
  if (X->isReal() && !Ctx.allowsInexact())
    return Ctx.fail("a floating CumSum rounds each partial sum as the "
                    "runtime does: not folded");
  if (!isNumericType(X->ET) || X->ET == TP::UINT64)
    return Ctx.fail("CumSum of " + typeName(X->ET) + " is not evaluated");
  int64_t Rank = X->Dims.size(), A = Axis->front();
  if (!Ctx.normalizeAxis(A, Rank, "axis"))
    return std::nullopt;
  if (!Ctx.fitsBudget(X->ET, static_cast<int64_t>(X->size())))
    return std::nullopt;
  bool Exclusive = N.getAttrInt("exclusive", 0), Reverse = N.getAttrInt("reverse", 0);
  int64_t Outer = *numElements(llvm::makeArrayRef(X->Dims).take_front(A));
  int64_t Len = X->Dims[A];
  int64_t Inner = *numElements(llvm::makeArrayRef(X->Dims).drop_front(A + 1));
  Literal Out = Literal::make(X->ET, X->Dims);
  if (X->isReal())
    Out.Reals.assign(X->size(), 0.0);
  else
    Out.Ints.assign(X->size(), 0);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t K = 0; K < Inner; ++K) {
      double RAcc = 0;
      uint64_t IAcc = 0;
      for (int64_t Step = 0; Step < Len; ++Step) {
        int64_t I = Reverse ? Len - 1 - Step : Step;
        size_t At = (O * Len + I) * Inner + K;
        if (X->isReal()) {
          if (!Exclusive)
            RAcc += X->Reals[At];
          Out.Reals[At] = RAcc;
          if (Exclusive)
            RAcc += X->Reals[At];
        } else {
          if (!Exclusive)
            IAcc += static_cast<uint64_t>(X->Ints[At]);
          Out.Ints[At] = wrapInt(X->ET, IAcc);
          if (Exclusive)
            IAcc += static_cast<uint64_t>(X->Ints[At]);
        }
      }
    }
  return oneLiteral(Ctx, Out);
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
    if (__builtin_mul_overflow(Known, Out[I], &Known))
      return Ctx.fail("the element count of " + formatDims(*Target) +
                      " overflows");
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
    {"", "CumSum", 11, evalCumSum},
    {"", "Expand", 1, evalExpand},
    {"", "Flatten", 1, evalFlatten},
    {"", "Gather", 1, evalGather},
    {"", "GatherND", 11, evalGatherND},
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

//===----------------------------------------------------------------------===//
// Local patterns (PatternRules.h): data movement that moves nothing
//===----------------------------------------------------------------------===//
//
// Before:  Y = Pad(X, ZEROS)               # every pad 0
//          Y = Slice(X, [0], [INT64_MAX])  # everything, step 1
//          Y = Split(X)                    # one result
//          Y = Concat(X)                   # one operand
//          Y = Expand(X, [1, C])           # X: float[N, C]
//          Y = Tile(X, [1, 1])
// After:   users of Y read X
//
// Before:  A = Slice(X, [0], [8], [1])     B = Slice(A, [2], [4], [2])
// After:   B = Slice(X, [0, 2], [8, 4], [1, 2])     # disjoint axes
// Before:  A = Slice(X, [2], [10], [1])    B = Slice(A, [1], [5], [1])
// After:   B = Slice(X, [3], [7], [1])              # one axis, steps 1
//
// Before:  A = Unsqueeze(X, [1])           B = Squeeze(A, [1])
// After:   users of B read X               # and Squeeze then Unsqueeze
//
// Before:  T = Transpose<perm=[0,1,2]>(X)
// After:   users of T read X
// Before:  A = Transpose<perm=[1,0,2]>(X)  B = Transpose<perm=[0,2,1]>(A)
// After:   B = Transpose<perm=[1,2,0]>(X)  # X itself when that is [0,1,2]
//
// A Slice is the identity only where each sliced axis starts at 0, steps 1
// and ends at or past its dim (a known dim, or INT32_MAX and above, which
// exporters write for "to the end"). Two Slices on one axis merge only with
// steps 1 and non-negative bounds: B's elements [s2, e2) of A are X's
// [s1 + s2, min(e1, s1 + e2)), clamped to X's dim as both were. Unsqueeze
// then Squeeze of the same axes is X; Squeeze then Unsqueeze of the same
// axes is X too, since Squeeze fails unless those dims are 1. Reshape to
// the same shape and Reshape chains are fold-shapes' (eraseNoOpReshape),
// which proves them with the dim analysis.

namespace {

/// The integer contents of operand \p I of \p N (a small constant).
std::optional<std::vector<int64_t>> constantIntsOperand(const Node &N,
                                                        unsigned I) {
  Value *V = pattern::operandOrNull(N, I);
  if (!V)
    return std::nullopt;
  std::optional<ConstantInts> C = getConstantInts(*V, 1024);
  if (!C)
    return std::nullopt;
  return std::move(C->Values);
}

bool allEqual(llvm::ArrayRef<int64_t> Values, int64_t X) {
  return llvm::all_of(Values, [X](int64_t V) { return V == X; });
}

LogicalResult eraseZeroPad(Node &N, Rewriter &R) {
  // Pads are an attribute before opset 11 (`paddings` at opset 1), an
  // operand from it.
  std::optional<std::vector<int64_t>> Pads =
      getNodeOpset(N) < 11
          ? N.getAttrInts(getNodeOpset(N) < 2 ? "paddings" : "pads")
          : constantIntsOperand(N, 1);
  if (!Pads)
    return R.notifyMatchFailure(N, "pads are not constant");
  if (!allEqual(*Pads, 0))
    return R.notifyMatchFailure(N, "pads are not all zero");
  return pattern::forwardOperand(N, pattern::operandOrNull(N, 0), R);
}

/// A Slice's constant parameters, one entry per sliced axis, the axes
/// resolved against \p Rank (-1: unknown, then negative axes are refused).
struct SliceParams {
  std::vector<int64_t> Starts, Ends, Axes, Steps;
};

std::optional<SliceParams> readSlice(const Node &N, int64_t Rank) {
  SliceParams P;
  std::optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
  if (getNodeOpset(N) < 10) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
    Axes = N.getAttrInts("axes");
  } else {
    Starts = constantIntsOperand(N, 1);
    Ends = constantIntsOperand(N, 2);
    if (pattern::operandOrNull(N, 3) && !(Axes = constantIntsOperand(N, 3)))
      return std::nullopt;
    if (pattern::operandOrNull(N, 4) && !(Steps = constantIntsOperand(N, 4)))
      return std::nullopt;
  }
  if (!Starts || !Ends || Starts->size() != Ends->size())
    return std::nullopt;
  size_t Count = Starts->size();
  P.Starts = std::move(*Starts);
  P.Ends = std::move(*Ends);
  if (Axes) {
    if (Axes->size() != Count)
      return std::nullopt;
    for (int64_t &A : *Axes) {
      if (A < 0 && Rank < 0)
        return std::nullopt;
      std::optional<int64_t> Resolved =
          Rank < 0 ? std::optional<int64_t>(A) : resolveAxis(A, Rank);
      if (!Resolved)
        return std::nullopt;
      A = *Resolved;
    }
    P.Axes = std::move(*Axes);
  } else {
    for (size_t I = 0; I < Count; ++I)
      P.Axes.push_back(I);
  }
  P.Steps = Steps ? std::move(*Steps) : std::vector<int64_t>(Count, 1);
  if (P.Steps.size() != Count)
    return std::nullopt;
  std::vector<int64_t> Sorted = P.Axes;
  llvm::sort(Sorted);
  if (std::adjacent_find(Sorted.begin(), Sorted.end()) != Sorted.end())
    return std::nullopt;
  return P;
}

int64_t knownRank(const Value *V) {
  const Type &T = V->getType();
  return T.isTensor() && T.hasShape() ? int64_t(T.getRank()) : -1;
}

LogicalResult eraseFullSlice(Node &N, Rewriter &R) {
  Value *X = pattern::operandOrNull(N, 0);
  if (!X)
    return R.notifyMatchFailure(N, "data omitted");
  std::optional<SliceParams> P = readSlice(N, knownRank(X));
  if (!P)
    return R.notifyMatchFailure(N, "slice parameters are not constant");
  const Type &XT = X->getType();
  for (size_t I = 0; I < P->Axes.size(); ++I) {
    if (P->Steps[I] != 1 || P->Starts[I] != 0)
      return R.notifyMatchFailure(N, "a slice does not start at 0 by 1");
    // INT32_MAX and above: past any dim a tensor can have here.
    if (P->Ends[I] >= std::numeric_limits<int32_t>::max())
      continue;
    int64_t Axis = P->Axes[I];
    bool PastDim = XT.isTensor() && XT.hasShape() &&
                   Axis < int64_t(XT.getRank()) &&
                   XT.getDims()[Axis].isKnown() &&
                   P->Ends[I] >= XT.getDims()[Axis].getValue();
    if (!PastDim)
      return R.notifyMatchFailure(N, "a slice may end before its dim");
  }
  return pattern::forwardOperand(N, X, R);
}

/// Adds the entries of \p Outer to \p Merged (a copy of the inner Slice's):
/// an axis only the outer slices is appended, one both slice is composed.
bool composeSlices(SliceParams &Merged, const SliceParams &Outer) {
  for (size_t I = 0; I < Outer.Axes.size(); ++I) {
    auto It = llvm::find(Merged.Axes, Outer.Axes[I]);
    if (It == Merged.Axes.end()) {
      Merged.Axes.push_back(Outer.Axes[I]);
      Merged.Starts.push_back(Outer.Starts[I]);
      Merged.Ends.push_back(Outer.Ends[I]);
      Merged.Steps.push_back(Outer.Steps[I]);
      continue;
    }
    size_t J = It - Merged.Axes.begin();
    int64_t S1 = Merged.Starts[J], E1 = Merged.Ends[J];
    int64_t S2 = Outer.Starts[I], E2 = Outer.Ends[I];
    if (Merged.Steps[J] != 1 || Outer.Steps[I] != 1 || S1 < 0 || E1 < 0 ||
        S2 < 0 || E2 < 0)
      return false;
    Merged.Starts[J] = pattern::saturatingAdd(S1, S2);
    Merged.Ends[J] = std::min(E1, pattern::saturatingAdd(S1, E2));
  }
  return true;
}

LogicalResult mergeSlices(Node &N, Rewriter &R) {
  Value *A = pattern::operandOrNull(N, 0);
  Node *Inner = A ? A->getDefiningNode() : nullptr;
  if (!Inner || !Inner->is("Slice") || !Inner->isOnnxDomain() ||
      getNodeOpset(N) < 10)
    return R.notifyMatchFailure(N, "input is not a Slice (opset 10 on)");
  Value *X = pattern::operandOrNull(*Inner, 0);
  if (!X)
    return R.notifyMatchFailure(N, "data omitted");
  int64_t Rank = knownRank(X);
  std::optional<SliceParams> Merged = readSlice(*Inner, Rank);
  std::optional<SliceParams> Outer = readSlice(N, Rank);
  if (!Merged || !Outer)
    return R.notifyMatchFailure(N, "slice parameters are not constant");
  if (!composeSlices(*Merged, *Outer))
    return R.notifyMatchFailure(
        N, "both slice one axis with a step or a negative bound");
  Graph &G = *N.getParentGraph();
  auto Ints = [&](const char *Name, llvm::ArrayRef<int64_t> Values) {
    return R.createConstant(
        G, Tensor::fromInt64s(Name, {int64_t(Values.size())}, Values));
  };
  Node *Fused = R.createNode("Slice",
                             {X, Ints("slice_starts", Merged->Starts),
                              Ints("slice_ends", Merged->Ends),
                              Ints("slice_axes", Merged->Axes),
                              Ints("slice_steps", Merged->Steps)},
                             1, "", N.getName());
  Fused->getResult(0)->setType(N.getResult(0)->getType());
  // A new node result can always take over a graph output's name.
  if (failed(R.replaceAllUsesWith(N.getResult(0), Fused->getResult(0))))
    return failure();
  // The inner Slice goes with N's dead chain unless it has other users.
  R.eraseDeadChain(N);
  return success();
}

LogicalResult eraseSingleSplit(Node &N, Rewriter &R) {
  if (N.getNumResults() != 1)
    return R.notifyMatchFailure(N, "splits into several results");
  return pattern::forwardOperand(N, pattern::operandOrNull(N, 0), R);
}

LogicalResult eraseSingleConcat(Node &N, Rewriter &R) {
  if (N.getNumOperands() != 1)
    return R.notifyMatchFailure(N, "concatenates several operands");
  return pattern::forwardOperand(N, pattern::operandOrNull(N, 0), R);
}

LogicalResult eraseSameShapeExpand(Node &N, Rewriter &R) {
  Value *X = pattern::operandOrNull(N, 0);
  std::optional<std::vector<int64_t>> Shape = constantIntsOperand(N, 1);
  if (!X || !Shape)
    return R.notifyMatchFailure(N, "shape is not constant");
  if (!pattern::broadcastKeepsShape(X->getType(), *Shape))
    return R.notifyMatchFailure(N, "may expand to a bigger shape");
  return pattern::forwardOperand(N, X, R);
}

LogicalResult eraseUnitTile(Node &N, Rewriter &R) {
  std::optional<std::vector<int64_t>> Repeats = constantIntsOperand(N, 1);
  if (!Repeats || !allEqual(*Repeats, 1))
    return R.notifyMatchFailure(N, "repeats are not constant ones");
  return pattern::forwardOperand(N, pattern::operandOrNull(N, 0), R);
}

/// \p N's axes resolved against \p Rank and sorted, or nothing.
std::optional<std::vector<int64_t>> resolvedAxes(const Node &N, int64_t Rank) {
  std::optional<std::vector<int64_t>> Axes = readAxes(
      N, lookupOp(N), [&N](unsigned I) { return constantIntsOperand(N, I); });
  if (!Axes || Axes->empty() || Rank < 0)
    return std::nullopt;
  for (int64_t &A : *Axes) {
    std::optional<int64_t> Resolved = resolveAxis(A, Rank);
    if (!Resolved)
      return std::nullopt;
    A = *Resolved;
  }
  llvm::sort(*Axes);
  return Axes;
}

/// Forwards X when \p N undoes the \p InnerOp that made its operand from X
/// at the same axes. Both ops' axes index the same dims: the Rank + k dims
/// between them for Squeeze(Unsqueeze(X)) (k axes inserted), X's Rank dims
/// for Unsqueeze(Squeeze(X)).
LogicalResult cancelAxesPair(Node &N, Rewriter &R, llvm::StringRef InnerOp) {
  Value *A = pattern::operandOrNull(N, 0);
  Node *Inner = A ? A->getDefiningNode() : nullptr;
  if (!Inner || !Inner->is(InnerOp) || !Inner->isOnnxDomain())
    return R.notifyMatchFailure(N, "input is not the inverse op");
  Value *X = pattern::operandOrNull(*Inner, 0);
  int64_t Rank = X ? knownRank(X) : -1;
  if (Rank < 0)
    return R.notifyMatchFailure(N, "rank of the pair's input is unknown");
  std::optional<std::vector<int64_t>> Raw =
      readAxes(*Inner, lookupOp(*Inner),
               [Inner](unsigned I) { return constantIntsOperand(*Inner, I); });
  if (!Raw)
    return R.notifyMatchFailure(N, "axes are not constant");
  int64_t Between = Inner->is("Unsqueeze") ? Rank + int64_t(Raw->size()) : Rank;
  std::optional<std::vector<int64_t>> InnerAxes = resolvedAxes(*Inner, Between);
  std::optional<std::vector<int64_t>> OuterAxes = resolvedAxes(N, Between);
  if (!InnerAxes || !OuterAxes)
    return R.notifyMatchFailure(N, "axes are not constant or out of range");
  if (*InnerAxes != *OuterAxes)
    return R.notifyMatchFailure(N, "the pair works on different axes");
  // The Inner op goes with N's dead chain unless it has other users.
  return pattern::forwardOperand(N, X, R);
}

LogicalResult cancelSqueezeOfUnsqueeze(Node &N, Rewriter &R) {
  return cancelAxesPair(N, R, "Unsqueeze");
}
LogicalResult cancelUnsqueezeOfSqueeze(Node &N, Rewriter &R) {
  return cancelAxesPair(N, R, "Squeeze");
}

/// The permutation \p N applies, or nothing when it is unknown (no perm
/// and an input of unknown rank) or not a permutation. \p KnownRank is the
/// input's rank when the caller knows it better than the recorded type (the
/// result of another Transpose). A Transpose without perm reverses the dims.
std::optional<std::vector<int64_t>>
transposePerm(const Node &N, std::optional<size_t> KnownRank = std::nullopt) {
  if (N.getNumOperands() != 1 || !N.getOperand(0) || N.getNumResults() != 1 ||
      !N.getResult(0))
    return std::nullopt;
  std::optional<std::vector<int64_t>> Perm = N.getAttrInts("perm");
  if (!Perm) {
    int64_t Rank = knownRank(N.getOperand(0));
    if (!KnownRank && Rank >= 0)
      KnownRank = size_t(Rank);
    if (!KnownRank)
      return std::nullopt;
    Perm.emplace(*KnownRank);
    std::iota(Perm->rbegin(), Perm->rend(), 0);
  }
  std::vector<bool> Seen(Perm->size(), false);
  for (int64_t P : *Perm) {
    if (P < 0 || P >= int64_t(Perm->size()) || Seen[P])
      return std::nullopt;
    Seen[P] = true;
  }
  return Perm;
}

bool isIdentityPerm(llvm::ArrayRef<int64_t> Perm) {
  for (size_t I = 0; I < Perm.size(); ++I)
    if (Perm[I] != int64_t(I))
      return false;
  return true;
}

LogicalResult eraseIdentityTranspose(Node &N, Rewriter &R) {
  std::optional<std::vector<int64_t>> Perm = transposePerm(N);
  if (!Perm)
    return R.notifyMatchFailure(N, "perm unknown or invalid");
  if (!isIdentityPerm(*Perm))
    return R.notifyMatchFailure(N, "perm moves dims");
  return pattern::forwardOperand(N, N.getOperand(0), R);
}

/// B(A(X)) takes dim i of its result from dim pA[pB[i]] of X: one
/// Transpose of X, or X itself when that is the identity.
LogicalResult mergeTransposes(Node &N, Rewriter &R) {
  Value *A = pattern::operandOrNull(N, 0);
  Node *Inner = A ? A->getDefiningNode() : nullptr;
  if (!Inner || !Inner->is("Transpose") || !Inner->isOnnxDomain())
    return R.notifyMatchFailure(N, "input is not a Transpose");
  std::optional<std::vector<int64_t>> First = transposePerm(*Inner);
  if (!First)
    return R.notifyMatchFailure(N, "perm of the input Transpose unknown");
  std::optional<std::vector<int64_t>> Outer = transposePerm(N, First->size());
  if (!Outer || Outer->size() != First->size())
    return R.notifyMatchFailure(N, "perms unknown or of different ranks");
  std::vector<int64_t> Composed(Outer->size());
  for (size_t I = 0; I < Composed.size(); ++I)
    Composed[I] = (*First)[(*Outer)[I]];
  Value *X = Inner->getOperand(0);
  // The inner Transpose goes with N's dead chain unless it has other users.
  if (isIdentityPerm(Composed))
    return pattern::forwardOperand(N, X, R);
  Node *Fused = R.createNode("Transpose", {X}, 1, "", N.getName());
  Fused->setAttr(Attribute::getInts("perm", Composed));
  Fused->getResult(0)->setType(N.getResult(0)->getType());
  // A new node result can always take over a graph output's name.
  if (failed(R.replaceAllUsesWith(N.getResult(0), Fused->getResult(0))))
    return failure();
  R.eraseDeadChain(N);
  return success();
}

const LocalPattern PadPatterns[] = {{"erase-zero-pad", eraseZeroPad}};
const LocalPattern SlicePatterns[] = {{"erase-full-slice", eraseFullSlice},
                                      {"merge-slices", mergeSlices}};
const LocalPattern SplitPatterns[] = {{"erase-single-split", eraseSingleSplit}};
const LocalPattern ConcatPatterns[] = {
    {"erase-single-concat", eraseSingleConcat}};
const LocalPattern ExpandPatterns[] = {
    {"erase-same-shape-expand", eraseSameShapeExpand}};
const LocalPattern TilePatterns[] = {{"erase-unit-tile", eraseUnitTile}};
const LocalPattern SqueezePatterns[] = {
    {"cancel-squeeze-of-unsqueeze", cancelSqueezeOfUnsqueeze}};
const LocalPattern UnsqueezePatterns[] = {
    {"cancel-unsqueeze-of-squeeze", cancelUnsqueezeOfSqueeze}};

const LocalPattern TransposePatterns[] = {
    {"erase-identity-transpose", eraseIdentityTranspose},
    {"merge-transposes", mergeTransposes}};

const PatternRule PatternRows[] = {
    {"", "Pad", 1, PadPatterns},
    {"", "Slice", 1, SlicePatterns},
    {"", "Split", 1, SplitPatterns},
    {"", "Concat", 1, ConcatPatterns},
    {"", "Expand", 8, ExpandPatterns},
    // Tile-1 had `tiles` and `axis` operands.
    {"", "Tile", 6, TilePatterns},
    {"", "Squeeze", 1, SqueezePatterns},
    {"", "Unsqueeze", 1, UnsqueezePatterns},
    {"", "Transpose", 1, TransposePatterns},
};

} // namespace

void ops::registerTensorOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
  B.addPatterns(PatternRows);
}
