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
constexpr ShapeOperand ConstantOfShapeOperands1[] = {{0, "shape"}};
constexpr ShapeOperand ExpandOperands1[] = {{1, "shape"}};
constexpr ShapeOperand OneHotOperands1[] = {{1, "depth"}};
constexpr ShapeOperand PadOperands11[] = {{1, "pads"}, {3, "axes"}};
constexpr ShapeOperand RangeOperands1[] = {
    {0, "start"}, {1, "limit"}, {2, "delta"}};
constexpr ShapeOperand ReshapeOperands5[] = {{1, "shape"}};
constexpr ShapeOperand SliceOperands10[] = {{1, "starts"}, {2, "ends"}, {3, "axes"}, {4, "steps"}};
constexpr ShapeOperand SplitOperands1[] = {{1, "split"}};
constexpr ShapeOperand SplitOperands13[] = {{1, "split"}};
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
    {"", "ConstantOfShape", 1, 0, ConstantOfShapeOperands1, {}, -1},
    {"", "CumSum", 1, ShapePreserving, {}, {}, -1},
    {"", "Expand", 1, MovesElements, ExpandOperands1, {}, -1},
    {"", "Flatten", 1, MovesElements, {}, {}, -1},
    {"",
     "Identity",
     1,
     ShapePreserving | MovesElements | IdentityOp,
     {},
     {},
     -1},
    {"", "NonZero", 1, ValueDependentShape, {}, {}, -1},
    {"", "OneHot", 1, 0, OneHotOperands1, {}, -1},
    {"", "Pad", 11, 0, PadOperands11, {}, -1},
    {"", "Range", 1, 0, RangeOperands1, {}, -1},
    {"", "Reshape", 1, MovesElements, {}, {}, -1},
    {"", "Reshape", 5, MovesElements, ReshapeOperands5, {}, -1},
    {"", "ReverseSequence", 1, ShapePreserving, {}, {}, -1},
    {"", "Shape", 1, ReadsTypeOnly, {}, {}, -1},
    {"", "Size", 1, ReadsTypeOnly, {}, {}, -1},
    {"", "Slice", 1, MovesElements, {}, {}, -1},
    {"", "Slice", 10, MovesElements, SliceOperands10, {}, -1},
    // Split-1 took `split` as an optional input; 2 to 12 as an attribute.
    {"", "Split", 1, 0, SplitOperands1, {}, -1},
    {"", "Split", 2, 0, {}, {}, -1},
    {"", "Split", 13, 0, SplitOperands13, {}, -1},
    {"",
     "Squeeze",
     1,
     MovesElements,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "Squeeze",
     13,
     MovesElements,
     SqueezeOperands13,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "Tile", 1, MovesElements, TileOperands1, {}, -1},
    {"", "Tile", 6, MovesElements, TileOperands6, {}, -1},
    {"", "TopK", 1, 0, {}, {}, -1},
    {"", "TopK", 10, ValueDependentUnlessConstant, TopKOperands10, {}, 1},
    {"", "Transpose", 1, MovesElements, {}, {}, -1},
    {"", "Trilu", 1, ShapePreserving, {}, {}, -1},
    {"", "Unique", 1, ValueDependentShape, {}, {}, -1},
    {"",
     "Unsqueeze",
     1,
     MovesElements,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "Unsqueeze",
     13,
     MovesElements,
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
#include "InferSupport.h"
#include "SymbolicRefinement.h"
#include "onnxopt/Ops/OpFacts.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <onnx/defs/tensor_proto_util.h>

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
    // Cast-13's data propagation carries shape values through the cast.
    newVersionReusing("", "Cast", 19, "Cast", 13,
                      {true, 0, 0, 0, 0, "saturate:i"}, inferCast19),
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
llvm::ArrayRef<DimRule> dimRules() { return {}; }
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
