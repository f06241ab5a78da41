//===- NNOps.cpp - Convolutions, pools, normalizations, resampling, recurrent layers
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

constexpr ShapeOperand MaxUnpoolOperands1[] = {{2, "output_shape"}};
constexpr ShapeOperand ResizeOperands1[] = {{1, "scales"}};
constexpr ShapeOperand ResizeOperands11[] = {{2, "scales"}, {3, "sizes"}};
constexpr ShapeOperand UpsampleOperands9[] = {{1, "scales"}};

constexpr TraitRow Traits[] = {
    {"", "AveragePool", 1, KernelOp, {}, {}, -1},
    {"", "BatchNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "Conv", 1, KernelOp, {}, {}, -1},
    {"", "ConvInteger", 1, KernelOp, {}, {}, -1},
    {"", "ConvTranspose", 1, KernelOp, {}, {}, -1},
    {"", "DeformConv", 1, KernelOp, {}, {}, -1},
    {"", "DequantizeLinear", 1, ShapePreserving, {}, {}, -1},
    {"", "Dropout", 1, ShapePreserving | Nondeterministic, {}, {}, -1},
    {"", "GRU", 1, Recurrent, {}, {}, -1},
    {"", "Hardmax", 1, ShapePreserving, {}, {}, -1},
    {"", "InstanceNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "LRN", 1, ShapePreserving, {}, {}, -1},
    {"", "LSTM", 1, Recurrent, {}, {}, -1},
    {"", "LayerNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "LogSoftmax", 1, ShapePreserving, {}, {}, -1},
    {"", "LpNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "LpPool", 1, KernelOp, {}, {}, -1},
    {"", "MaxPool", 1, KernelOp, {}, {}, -1},
    {"", "MaxUnpool", 1, KernelOp, MaxUnpoolOperands1, {}, -1},
    {"", "MeanVarianceNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "NonMaxSuppression", 1, ValueDependentShape, {}, {}, -1},
    {"", "QLinearConv", 1, KernelOp, {}, {}, -1},
    {"", "QuantizeLinear", 1, ShapePreserving, {}, {}, -1},
    {"", "RNN", 1, Recurrent, {}, {}, -1},
    {"", "Resize", 1, Resampling, ResizeOperands1, {}, -1},
    {"", "Resize", 11, Resampling, ResizeOperands11, {}, -1},
    {"", "Softmax", 1, ShapePreserving, {}, {}, -1},
    {"", "Upsample", 1, Resampling, {}, {}, -1},
    {"", "Upsample", 9, Resampling, UpsampleOperands9, {}, -1},
};

} // namespace

//===----------------------------------------------------------------------===//
// Run-time preconditions
//===----------------------------------------------------------------------===//

#include "PreconditionSupport.h"
#include "onnxopt/IR/IR.h"

namespace {

using precondition::knownRank;

/// Convolutions and pools: strides, dilations, kernel_shape and pads mean
/// one entry per spatial axis (pads: begins, then ends). Wrong lengths make
/// ONNX 1.12's functions index past their ends, a zero stride divides by
/// zero. MaxUnpool's input may have no spatial axes
/// (\p NeedsSpatialInput false).
LogicalResult checkWindowAttrs(const Node &N, DiagnosticEngine &Diags,
                               bool NeedsSpatialInput) {
  // Spatial rank: from the data input's rank, else from the first
  // per-axis attribute seen.
  int64_t DataRank = knownRank(N.getNumOperands() ? N.getOperand(0) : nullptr);
  int64_t Spatial = DataRank >= 2 ? DataRank - 2 : -1;
  if (DataRank >= 0 && DataRank < 3 && NeedsSpatialInput)
    return emitError(Diags, N)
           << "input 'X' of rank " << DataRank
           << " has no spatial axes (rank 3 or more expected)";
  const char *SpatialFrom = "the input's rank";
  struct Rule {
    const char *Name;
    int64_t Min;    // smallest allowed entry
    int64_t Factor; // entries per spatial axis
  };
  static const Rule Rules[] = {
      {"kernel_shape", 1, 1}, {"strides", 1, 1},        {"dilations", 1, 1},
      {"pads", 0, 2},         {"output_padding", 0, 1}, {"output_shape", 0, 1}};
  for (const Rule &R : Rules) {
    const Attribute *A = N.getAttr(R.Name);
    if (!A || A->Kind != AttrKind::Ints)
      continue;
    for (int64_t V : A->Ints)
      if (V < R.Min)
        return emitError(Diags, N)
               << "attribute '" << R.Name << "' has entry " << V
               << " (each must be " << (R.Min ? "positive" : "non-negative")
               << ")";
    int64_t Size = int64_t(A->Ints.size());
    if (Size % R.Factor)
      return emitError(Diags, N) << "attribute '" << R.Name << "' has " << Size
                                 << " entries (two per spatial axis expected)";
    if (Spatial < 0) {
      Spatial = Size / R.Factor;
      SpatialFrom = R.Name;
      continue;
    }
    if (Size != Spatial * R.Factor)
      return emitError(Diags, N)
             << "attribute '" << R.Name << "' has " << Size << " entries, but "
             << SpatialFrom << " implies " << Spatial * R.Factor;
  }
  if (const Attribute *G = N.getAttr("group"))
    if (G->Kind == AttrKind::Int && G->I < 1)
      return emitError(Diags, N)
             << "attribute 'group' is " << G->I << " (must be positive)";
  return success();
}

LogicalResult checkWindow(const Node &N, DiagnosticEngine &Diags) {
  return checkWindowAttrs(N, Diags, /*NeedsSpatialInput=*/true);
}

LogicalResult checkUnpoolWindow(const Node &N, DiagnosticEngine &Diags) {
  return checkWindowAttrs(N, Diags, /*NeedsSpatialInput=*/false);
}

constexpr PreconditionRule PreconditionRows[] = {
    {"", "AveragePool", 1, checkWindow},
    {"", "Conv", 1, checkWindow},
    {"", "ConvInteger", 1, checkWindow},
    {"", "ConvTranspose", 1, checkWindow},
    {"", "DeformConv", 1, checkWindow},
    {"", "LpPool", 1, checkWindow},
    {"", "MaxPool", 1, checkWindow},
    {"", "MaxUnpool", 1, checkUnpoolWindow},
    {"", "QLinearConv", 1, checkWindow},
    // sizes
    {"", "Resize", 1, nullptr, 3},
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
#include "onnxopt/Ops/OpFacts.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <onnx/defs/tensor_proto_util.h>

namespace {

using namespace onnxopt::infer;

constexpr const char *ResizeAttrs =
    "antialias:i axes:is coordinate_transformation_mode:s cubic_coeff_a:f "
    "exclude_outside:i extrapolation_value:f keep_aspect_ratio_policy:s "
    "mode:s nearest_mode:s";

/// Resize-18/19: sizes or scales on `axes`, with keep_aspect_ratio_policy.
void inferResize18(InferenceContext &Ctx) {
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
  std::string Policy = stringAttr(Ctx, "keep_aspect_ratio_policy", "stretch");
  if (Policy != "stretch" && Policy != "not_larger" && Policy != "not_smaller")
    fail_shape_inference("keep_aspect_ratio_policy '", Policy,
                         "' is not one of stretch, not_larger, not_smaller");
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  for (int64_t K = 0; K < Rank; ++K)
    addDim(Out, In.dim(K));
  auto ClearAxes = [&] {
    for (int64_t A : Axes)
      Out.mutable_dim(A)->Clear();
  };

  // An empty scales tensor (shape [0]) stands for an absent one.
  std::optional<std::vector<float>> Scales = floatInput(Ctx, 2);
  bool HasScales = hasInput(Ctx, 2) && !(Scales && Scales->empty());
  bool HasSizes = hasInput(Ctx, 3);
  if (HasScales && HasSizes)
    fail_shape_inference("scales and sizes cannot both be given");
  if (HasSizes) {
    std::optional<TensorShapeProto> Sizes = shapeInput(Ctx, 3);
    if (!Sizes)
      return ClearAxes();
    if (Sizes->dim_size() != int64_t(Axes.size()))
      fail_shape_inference("sizes has ", Sizes->dim_size(), " values for ",
                           Axes.size(), " axes");
    if (Policy == "stretch") {
      for (size_t I = 0; I < Axes.size(); ++I)
        *Out.mutable_dim(Axes[I]) = Sizes->dim(I);
      return;
    }
    // One scale for all axes: the smallest (not_larger) or largest
    // (not_smaller) of sizes[i] / in[axes[i]].
    std::optional<double> Scale;
    for (size_t I = 0; I < Axes.size(); ++I) {
      std::optional<int64_t> S = known(Sizes->dim(I)),
                             D = known(In.dim(Axes[I]));
      if (!S || !D || *D == 0)
        return ClearAxes();
      double R = double(*S) / double(*D);
      if (!Scale || (Policy == "not_larger" ? R < *Scale : R > *Scale))
        Scale = R;
    }
    for (int64_t A : Axes)
      Out.mutable_dim(A)->set_dim_value(static_cast<int64_t>(
          std::floor(*Scale * double(*known(In.dim(A))) + 0.5)));
    return;
  }
  if (!HasScales)
    fail_shape_inference("either scales or sizes must be given");
  if (!Scales || stringAttr(Ctx, "coordinate_transformation_mode",
                            "half_pixel") == "tf_crop_and_resize")
    return ClearAxes();
  if (Scales->size() != Axes.size())
    fail_shape_inference("scales has ", Scales->size(), " values for ",
                         Axes.size(), " axes");
  for (size_t I = 0; I < Axes.size(); ++I) {
    TensorShapeProto::Dimension &D = *Out.mutable_dim(Axes[I]);
    if ((*Scales)[I] <= 0)
      fail_shape_inference("scale ", (*Scales)[I], " is not positive");
    if (std::optional<int64_t> V = known(D))
      D.set_dim_value(
          static_cast<int64_t>(std::floor(double(*V) * double((*Scales)[I]))));
    else if ((*Scales)[I] != 1.0f)
      D.Clear();
  }
}

/// QuantizeLinear-19/21/23: the type of y_zero_point, else output_dtype,
/// else uint8.
void inferQuantizeLinear19(InferenceContext &Ctx) {
  int32_t ET = inputElemType(Ctx, 2);
  int64_t Dtype = onnx::getAttribute(Ctx, "output_dtype", 0);
  if (ET && Dtype && ET != Dtype)
    fail_type_inference("output_dtype ", Dtype,
                        " differs from the type of y_zero_point ", ET);
  if (!ET)
    ET = Dtype ? static_cast<int32_t>(Dtype) : TensorProto::UINT8;
  setElemType(Ctx, 0, ET);
  if (onnx::hasInputShape(Ctx, 0))
    *outputShape(Ctx, 0) = onnx::getInputShape(Ctx, 0);
}

/// DequantizeLinear-19/21/23: output_dtype, else the type of x_scale; the
/// shape of x.
void inferDequantizeLinear19(InferenceContext &Ctx) {
  int32_t ET = static_cast<int32_t>(onnx::getAttribute(Ctx, "output_dtype", 0));
  if (!ET)
    ET = inputElemType(Ctx, 1);
  setElemType(Ctx, 0, ET ? ET : int32_t(TensorProto::FLOAT));
  if (onnx::hasInputShape(Ctx, 0))
    *outputShape(Ctx, 0) = onnx::getInputShape(Ctx, 0);
}

/// GridSample-20: X [N, C, D1..Dr], grid [N, H1..Hr, r] -> [N, C, H1..Hr].
void inferGridSample20(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasNInputShapes(Ctx, 2))
    return;
  const TensorShapeProto &X = onnx::getInputShape(Ctx, 0);
  const TensorShapeProto &Grid = onnx::getInputShape(Ctx, 1);
  if (X.dim_size() < 3 || Grid.dim_size() != X.dim_size())
    fail_shape_inference("X and grid must have one rank >= 3, have ",
                         X.dim_size(), " and ", Grid.dim_size());
  std::optional<int64_t> Last = known(Grid.dim(Grid.dim_size() - 1));
  if (Last && *Last != X.dim_size() - 2)
    fail_shape_inference("the last dim of grid is ", *Last, ", expected ",
                         X.dim_size() - 2);
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  addDim(Out, known(X.dim(0)) ? X.dim(0) : Grid.dim(0));
  addDim(Out, X.dim(1));
  for (int64_t K = 1; K + 1 < Grid.dim_size(); ++K)
    addDim(Out, Grid.dim(K));
}

// Sorted by domain, op and version.
constexpr InferRule InferRows[] = {
    // AveragePool-11's inference ignores dilations; MaxPool-12's applies them.
    newVersionReusing("", "AveragePool", 19, "MaxPool", 12,
                      {false, 1, 1, 1, 1,
                       "auto_pad:s ceil_mode:i count_include_pad:i "
                       "dilations:is kernel_shape:is pads:is strides:is"}),
    // Conv-11's inference reads only X, W and the conv attributes.
    newVersionReusing("", "DeformConv", 19, "Conv", 11,
                      {false, 3, 5, 1, 1,
                       "dilations:is group:i kernel_shape:is offset_group:i "
                       "pads:is strides:is"}),
    newVersion("", "DequantizeLinear", 19, inferDequantizeLinear19,
               {false, 2, 3, 1, 1, "axis:i"}),
    newVersion("", "DequantizeLinear", 21, inferDequantizeLinear19,
               {false, 2, 3, 1, 1, "axis:i block_size:i"}),
    newVersion("", "DequantizeLinear", 23, inferDequantizeLinear19,
               {false, 2, 3, 1, 1, "axis:i block_size:i output_dtype:i"}),
    newVersion("", "GridSample", 20, inferGridSample20,
               {false, 2, 2, 1, 1, "align_corners:i mode:s padding_mode:s"}),
    newVersion("", "GroupNormalization", 18, inferSameAsFirstInput,
               {false, 3, 3, 1, 1, "epsilon:f num_groups:i"}),
    newVersion("", "GroupNormalization", 21, inferSameAsFirstInput,
               {false, 3, 3, 1, 1, "epsilon:f num_groups:i stash_type:i"}),
    // LpPool-11's inference ignores dilations; MaxPool-12's applies them,
    // and ceil_mode.
    newVersionReusing("", "LpPool", 18, "MaxPool", 12,
                      {false, 1, 1, 1, 1,
                       "auto_pad:s ceil_mode:i dilations:is kernel_shape:is "
                       "p:i pads:is strides:is"}),
    newVersion("", "QuantizeLinear", 19, inferQuantizeLinear19,
               {false, 2, 3, 1, 1, "axis:i saturate:i"}),
    newVersion(
        "", "QuantizeLinear", 21, inferQuantizeLinear19,
        {false, 2, 3, 1, 1, "axis:i block_size:i output_dtype:i saturate:i"}),
    newVersion("", "QuantizeLinear", 23, inferQuantizeLinear19,
               {false, 2, 3, 1, 1,
                "axis:i block_size:i output_dtype:i precision:i saturate:i"}),
    newVersion("", "Resize", 18, inferResize18,
               {false, 1, 4, 1, 1, ResizeAttrs}),
    newVersion("", "Resize", 19, inferResize18,
               {false, 1, 4, 1, 1, ResizeAttrs}),
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

void ops::registerNNOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
