//===- NNOps.cpp - Convolutions, pools, normalizations, resampling, recurrent
// layers
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "DimSupport.h"
#include "InferSupport.h"
#include "PatternSupport.h"
#include "PreconditionSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/Ops/PatternRules.h"
#include "onnxopt/Ops/Preconditions.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <onnx/defs/tensor_proto_util.h>

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
    {"", "AveragePool", 1, KernelOp | StridedWindow, {}, {}, -1},
    {"", "BatchNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "Conv", 1, KernelOp | StridedWindow, {}, {}, -1},
    {"", "ConvInteger", 1, KernelOp | StridedWindow, {}, {}, -1},
    {"", "ConvTranspose", 1, KernelOp, {}, {}, -1},
    {"", "DeformConv", 1, KernelOp, {}, {}, -1},
    {"", "DequantizeLinear", 1, ShapePreserving, {}, {}, -1},
    {"", "Dropout", 1, ShapePreserving | Nondeterministic, {}, {}, -1},
    {"", "GRU", 1, Recurrent, {}, {}, -1},
    {"", "Hardmax", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "InstanceNormalization", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "LRN", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "LSTM", 1, Recurrent, {}, {}, -1},
    {"", "LayerNormalization", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "LogSoftmax", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "LpNormalization", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "LpPool", 1, KernelOp | StridedWindow, {}, {}, -1},
    {"", "MaxPool", 1, KernelOp | StridedWindow, {}, {}, -1},
    {"", "MaxUnpool", 1, KernelOp, MaxUnpoolOperands1, {}, -1},
    {"", "MeanVarianceNormalization", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "NonMaxSuppression", 1, ValueDependentShape, {}, {}, -1},
    {"", "QLinearConv", 1, KernelOp, {}, {}, -1},
    {"", "QuantizeLinear", 1, ShapePreserving, {}, {}, -1},
    {"", "RNN", 1, Recurrent, {}, {}, -1},
    {"", "Resize", 1, Resampling, ResizeOperands1, {}, -1},
    {"", "Resize", 11, Resampling, ResizeOperands11, {}, -1},
    {"", "Softmax", 1, ShapePreserving | MixesAlongDims, {}, {}, -1},
    {"", "Upsample", 1, Resampling, {}, {}, -1},
    {"", "Upsample", 9, Resampling, UpsampleOperands9, {}, -1},
};

} // namespace

//===----------------------------------------------------------------------===//
// Run-time preconditions
//===----------------------------------------------------------------------===//

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

/// Convolutions: the window attributes, and a weight of X's rank. Without
/// kernel_shape ONNX 1.12's inference takes the kernel from the weight's
/// dims and indexes X's by them: a rank-4 weight on a rank-3 input read
/// past X's dims and crashed it. \p WeightIndex: the weight's operand.
template <unsigned WeightIndex>
LogicalResult checkConvWindow(const Node &N, DiagnosticEngine &Diags) {
  if (failed(checkWindowAttrs(N, Diags, /*NeedsSpatialInput=*/true)))
    return failure();
  const Value *W =
      WeightIndex < N.getNumOperands() ? N.getOperand(WeightIndex) : nullptr;
  int64_t WRank = knownRank(W);
  if (WRank < 0)
    return success();
  if (WRank < 3)
    return emitError(Diags, N)
           << "weight '" << W->getName() << "' of rank " << WRank
           << " has no spatial axes (rank 3 or more expected)";
  int64_t XRank = knownRank(N.getNumOperands() ? N.getOperand(0) : nullptr);
  if (XRank >= 0 && XRank != WRank)
    return emitError(Diags, N)
           << "weight '" << W->getName() << "' has rank " << WRank
           << ", but input 'X' has rank " << XRank << " (they must be equal)";
  if (const Attribute *K = N.getAttr("kernel_shape");
      K && K->Kind == AttrKind::Ints && int64_t(K->Ints.size()) != WRank - 2)
    return emitError(Diags, N)
           << "attribute 'kernel_shape' has " << K->Ints.size()
           << " entries, but the weight's rank implies " << WRank - 2;
  return success();
}

constexpr PreconditionRule PreconditionRows[] = {
    {"", "AveragePool", 1, checkWindow},
    {"", "Conv", 1, checkConvWindow<1>},
    {"", "ConvInteger", 1, checkConvWindow<1>},
    {"", "ConvTranspose", 1, checkConvWindow<1>},
    {"", "DeformConv", 1, checkConvWindow<1>},
    {"", "LpPool", 1, checkWindow},
    {"", "MaxPool", 1, checkWindow},
    {"", "MaxUnpool", 1, checkUnpoolWindow},
    {"", "QLinearConv", 1, checkConvWindow<3>},
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
using namespace onnxopt::dims;

/// BatchNormalization, InstanceNormalization: X's shape; the per-channel
/// parameters are [C] = [X[1]]. The statistics results have other shapes.
void transferChannelNormalization(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (!X || X->size() < 2)
    return;
  for (unsigned I = 1; I < C.getNode().getNumOperands(); ++I)
    if (const DimList *P = C.dims(I); P && P->size() == 1)
      C.require(DimCondition::Equal, (*P)[0], (*X)[1],
                "per-channel parameters have the input's channels");
}

/// QuantizeLinear, DequantizeLinear: X's shape; per-axis parameters are
/// [X[axis]].
void transferQuantization(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (!X)
    return;
  const Node &N = C.getNode();
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 1), X->size());
  for (unsigned I = 1; I < N.getNumOperands(); ++I)
    if (const DimList *P = C.dims(I); Axis && P && P->size() == 1)
      C.require(DimCondition::Broadcast, (*P)[0], (*X)[*Axis],
                "per-axis parameters have the axis' size");
}

/// Dropout: X's shape, and its mask's.
void transferDropout(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (X && C.getNumResults() > 1)
    C.setDims(1, full(*X));
}

/// A pooled dim in ceil mode: ceil((In + pads - Extent) / S) + 1, ONNX's
/// formula, where ONNX Runtime gives the same. It drops a last window that
/// would start inside the end padding, which cannot happen when \p PadEnd
/// + S <= Extent: the last start, (out - 1) * S, is at most In + PadBegin +
/// PadEnd - Extent + S - 1 < In + PadBegin. Elsewhere the recorded type
/// stands (std::nullopt). The run-time precondition, an output of at least
/// 1 (the first window starts inside the padded input; it may hang past
/// its end), is then requireCoversKernel's on this dim; where the dim is
/// not computed it always holds (In + PadBegin + PadEnd + S - Extent >= In
/// + 1).
std::optional<DimExpr> ceilModePooledDim(const DimExpr &In, int64_t PadBegin,
                                         int64_t PadEnd, int64_t S,
                                         int64_t Extent) {
  if (PadEnd + S > Extent)
    return std::nullopt;
  return (In + DimExpr::constant(PadBegin + PadEnd - Extent)).ceilDiv(S) +
         DimExpr::constant(1);
}

std::optional<PartialDimList> convLike(DimContext &C, const DimList &X,
                                       bool IsPool) {
  const Node &N = C.getNode();
  if (X.size() < 3)
    return std::nullopt;
  size_t Spatial = X.size() - 2;
  std::vector<int64_t> Kernel;
  std::optional<DimExpr> Channels;
  if (std::optional<std::vector<int64_t>> K = N.getAttrInts("kernel_shape"))
    Kernel = *K;
  bool CeilMode = false;
  if (IsPool) {
    Channels = X[1];
    CeilMode = N.getAttrInt("ceil_mode", 0);
  } else {
    const DimList *W = C.dims(1);
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
  PartialDimList R{X[0], Channels};
  for (size_t I = 0; I < Spatial; ++I) {
    const DimExpr &In = X[2 + I];
    int64_t S = Strides[I], Extent = (Kernel[I] - 1) * Dilations[I] + 1;
    if (S <= 0)
      return std::nullopt;
    if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER") {
      R.push_back(In.ceilDiv(S));
    } else if (CeilMode) {
      bool Valid = AutoPad == "VALID";
      int64_t Begin = Valid ? 0 : Pads[I], End = Valid ? 0 : Pads[I + Spatial];
      R.push_back(ceilModePooledDim(In, Begin, End, S, Extent));
    } else if (AutoPad == "VALID")
      R.push_back((In - DimExpr::constant(Extent)).floorDiv(S) +
                  DimExpr::constant(1));
    else
      R.push_back((In + DimExpr::constant(Pads[I] + Pads[I + Spatial] - Extent))
                      .floorDiv(S) +
                  DimExpr::constant(1));
  }
  return R;
}

void requireCoversKernel(DimContext &C,
                         const std::optional<PartialDimList> &Y) {
  if (!Y)
    return;
  for (size_t K = 2; K < Y->size(); ++K)
    if ((*Y)[K])
      C.require(DimCondition::AtLeast, *(*Y)[K], DimExpr::constant(1),
                "the input must cover the kernel (output size >= 1)");
}

void transferConv(DimContext &C, const DimList *X) {
  C.setDims(0, convLike(C, *X, /*IsPool=*/false));
  requireCoversKernel(C, C.getDims(0));
  if (X->size() < 2)
    return;
  if (const DimList *W = C.dims(1); W && W->size() >= 2) {
    C.require(DimCondition::Equal, (*X)[1],
              (*W)[1] * DimExpr::constant(C.getNode().getAttrInt("group", 1)),
              "input channels = weight channels * group");
    // A kernel_shape attribute must be the weight's spatial dims.
    if (std::optional<std::vector<int64_t>> K =
            C.getNode().getAttrInts("kernel_shape");
        K && K->size() + 2 == W->size())
      for (size_t I = 0; I < K->size(); ++I)
        C.require(DimCondition::Equal, (*W)[I + 2], DimExpr::constant((*K)[I]),
                  "kernel_shape = the weight's spatial dims");
    if (const DimList *B = C.dims(2); B && B->size() == 1)
      C.require(DimCondition::Equal, (*B)[0], (*W)[0],
                "one bias per output channel");
  }
}

void transferPool(DimContext &C, const DimList *X) {
  C.setDims(0, convLike(C, *X, /*IsPool=*/true));
  requireCoversKernel(C, C.getDims(0));
}

/// MaxPool: its indices have the pooled shape.
void transferMaxPool(DimContext &C, const DimList *X) {
  transferPool(C, X);
  if (C.getNumResults() > 1)
    C.setDims(1, C.getDims(0));
}

std::optional<PartialDimList> convTranspose(DimContext &C, const DimList &X) {
  const Node &N = C.getNode();
  const DimList *W = C.dims(1);
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
  PartialDimList R{X[0], (*W)[1] * DimExpr::constant(N.getAttrInt("group", 1))};
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

void transferConvTranspose(DimContext &C, const DimList *X) {
  C.setDims(0, convTranspose(C, *X));
  const std::optional<PartialDimList> &Y = C.getDims(0);
  if (Y)
    for (size_t K = 2; K < Y->size(); ++K)
      if ((*Y)[K])
        C.require(DimCondition::AtLeast, *(*Y)[K], DimExpr::constant(1),
                  "output size >= 1");
  // The weight is [C, M/group, k...]: its first dim is the input's channels.
  if (const DimList *W = C.dims(1); W && W->size() >= 2 && X->size() >= 2) {
    C.require(DimCondition::Equal, (*X)[1], (*W)[0],
              "input channels = the weight's first dim");
    if (const DimList *B = C.dims(2); B && B->size() == 1)
      C.require(DimCondition::Equal, (*B)[0],
                (*W)[1] *
                    DimExpr::constant(C.getNode().getAttrInt("group", 1)),
                "one bias per output channel");
  }
}

void transferGlobalPool(DimContext &C, const DimList *X) {
  if (X->size() < 2)
    return;
  PartialDimList R{(*X)[0], (*X)[1]};
  R.resize(X->size(), DimExpr::constant(1));
  C.setDims(0, std::move(R));
}

/// Output dims from sizes or scales. Resize-11+ takes (X, roi, scales,
/// sizes); Resize-10 and Upsample take (X, scales).
std::optional<PartialDimList> resize(DimContext &C, const DimList &X,
                                     bool HasRoi) {
  const Node &N = C.getNode();
  unsigned ScalesIndex = HasRoi ? 2 : 1;
  // Resize-18 with axes or a keep_aspect_ratio_policy other than stretch
  // does not take sizes as the output shape.
  if (N.hasAttr("axes") ||
      N.getAttrString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return std::nullopt;
  if (HasRoi && N.getNumOperands() >= 4)
    if (const DimList *Sizes = C.data(3); Sizes && Sizes->size() == X.size())
      return full(*Sizes);
  std::optional<std::vector<double>> Scales = C.floatData(ScalesIndex);
  if (!Scales) {
    if (const Attribute *A = N.getAttr("scales");
        A && A->Kind == AttrKind::Floats)
      Scales = std::vector<double>(A->Floats.begin(), A->Floats.end());
  }
  if (!Scales || Scales->size() != X.size())
    return std::nullopt;
  PartialDimList R;
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

/// Resize's and Upsample's run-time precondition: no resized dim becomes
/// empty. ONNX Runtime turns sizes into scales (size / dim) and refuses a
/// scale of 0, and a scale s gives floor(dim * s) (in float), which is 0
/// below the least dim precondition::leastDimForScale gives. Resize-18's
/// axes say which dims the scales or sizes are for.
void requireResizeNonEmpty(DimContext &C, const DimList &X, bool HasRoi) {
  const Node &N = C.getNode();
  std::vector<size_t> Dims;
  if (std::optional<std::vector<int64_t>> Axes = N.getAttrInts("axes")) {
    for (int64_t A : *Axes) {
      std::optional<size_t> D = normAxis(A, X.size());
      if (!D)
        return;
      Dims.push_back(*D);
    }
  } else {
    for (size_t I = 0; I < X.size(); ++I)
      Dims.push_back(I);
  }
  if (HasRoi && N.getNumOperands() >= 4)
    if (const DimList *Sizes = C.data(3);
        Sizes && Sizes->size() == Dims.size()) {
      for (const DimExpr &S : *Sizes)
        if (!C.holdsAlways(DimCondition::AtLeast, S, DimExpr::constant(1)))
          C.require(DimCondition::AtLeast, S, DimExpr::constant(1),
                    "a Resize to size 0 cannot run (its scale would be 0)");
      return;
    }
  std::optional<std::vector<double>> Scales = C.floatData(HasRoi ? 2 : 1);
  if (!Scales)
    if (const Attribute *A = N.getAttr("scales");
        A && A->Kind == AttrKind::Floats)
      Scales = std::vector<double>(A->Floats.begin(), A->Floats.end());
  if (!Scales || Scales->size() != Dims.size())
    return;
  for (size_t I = 0; I < Dims.size(); ++I) {
    int64_t Least = precondition::leastDimForScale((*Scales)[I]);
    if (Least > 1)
      C.require(DimCondition::AtLeast, X[Dims[I]], DimExpr::constant(Least),
                "a scale below 1 must not empty the dim: floor(dim * scale) "
                ">= 1");
  }
}

/// Resize's roi is read only by tf_crop_and_resize, and there ONNX Runtime
/// requires [starts, ends] for every resized axis: 2 * rank entries, or
/// 2 * len(axes) with Resize-18's axes.
void requireResizeRoi(DimContext &C, const DimList &X) {
  const Node &N = C.getNode();
  if (N.getAttrString("coordinate_transformation_mode", "half_pixel") !=
      "tf_crop_and_resize")
    return;
  const DimList *Roi = C.dims(1);
  if (!Roi || Roi->size() != 1)
    return;
  size_t Axes = X.size();
  if (std::optional<std::vector<int64_t>> A = N.getAttrInts("axes"))
    Axes = A->size();
  DimExpr Want = DimExpr::constant(2 * static_cast<int64_t>(Axes));
  if (!C.holdsAlways(DimCondition::Equal, (*Roi)[0], Want))
    C.require(DimCondition::Equal, (*Roi)[0], Want,
              "tf_crop_and_resize reads a start and an end per resized axis "
              "from roi");
}

void transferResize(DimContext &C, const DimList *X) {
  bool HasRoi = C.getNode().getNumOperands() >= 3;
  C.setDims(0, resize(C, *X, HasRoi));
  requireResizeNonEmpty(C, *X, HasRoi);
  if (HasRoi)
    requireResizeRoi(C, *X);
}

void transferUpsample(DimContext &C, const DimList *X) {
  C.setDims(0, resize(C, *X, /*HasRoi=*/false));
  requireResizeNonEmpty(C, *X, /*HasRoi=*/false);
}

/// LSTM's, GRU's and RNN's run-time preconditions on their parameters'
/// dims beyond the input's feature dim and batch (transferRecurrent): W is
/// [dirs, gates*hidden, input], R [dirs, gates*hidden, hidden], B [dirs,
/// 2*gates*hidden], the initial states [dirs, batch, hidden] ([batch, dirs,
/// hidden] with layout 1) and LSTM's peepholes P [dirs, 3*hidden]. A dim
/// already proven equal states nothing.
void requireRecurrentParameters(DimContext &C, int64_t Hidden,
                                const DimExpr &Dirs, bool BatchFirst) {
  const Node &N = C.getNode();
  llvm::StringRef Op = N.getOpType();
  int64_t Gates = Op == "LSTM" ? 4 : Op == "GRU" ? 3 : 1;
  DimExpr H = DimExpr::constant(Hidden);
  DimExpr GatesH = DimExpr::constant(Gates * Hidden);
  auto Need = [&](unsigned Operand, size_t Rank, size_t Dim,
                  const DimExpr &Want, const char *Why) {
    const DimList *D = C.dims(Operand);
    if (!D || D->size() != Rank ||
        C.holdsAlways(DimCondition::Equal, (*D)[Dim], Want))
      return;
    C.require(DimCondition::Equal, (*D)[Dim], Want, Why);
  };
  const char *WhyDirs = "one set of parameters per direction";
  for (unsigned I : {1u, 2u}) {
    Need(I, 3, 0, Dirs, WhyDirs);
    Need(I, 3, 1, GatesH, "the weights have gates * hidden_size rows");
  }
  Need(2, 3, 2, H, "the recurrence weights' columns are hidden_size");
  Need(3, 2, 0, Dirs, WhyDirs);
  Need(3, 2, 1, DimExpr::constant(2 * Gates * Hidden),
       "the bias has 2 * gates * hidden_size entries per direction");
  unsigned LastState = Op == "LSTM" ? 6 : 5;
  for (unsigned I = 5; I <= LastState; ++I) {
    Need(I, 3, BatchFirst ? 1 : 0, Dirs, WhyDirs);
    Need(I, 3, 2, H, "initial states have hidden_size entries");
  }
  if (Op == "LSTM") {
    Need(7, 2, 0, Dirs, WhyDirs);
    Need(7, 2, 1, DimExpr::constant(3 * Hidden),
         "the peepholes have 3 * hidden_size entries per direction");
  }
}

/// LSTM, GRU, RNN: Y is [seq, dirs, batch, hidden] ([batch, seq, dirs,
/// hidden] with layout 1), the states [dirs, batch, hidden].
void transferRecurrent(DimContext &C, const DimList *X) {
  if (X->size() != 3)
    return;
  const Node &N = C.getNode();
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
  if (const DimList *W = C.dims(1); W && W->size() == 3)
    C.require(DimCondition::Equal, (*W)[2], (*X)[2],
              "the weights' input size must be the input's feature dim");
  if (const DimList *L = C.dims(4); L && L->size() == 1)
    C.require(DimCondition::Equal, (*L)[0], Batch,
              "sequence_lens has one entry per batch row");
  for (unsigned I = 5; I < N.getNumOperands(); ++I)
    if (const DimList *S = C.dims(I); S && S->size() == 3)
      C.require(DimCondition::Equal, (*S)[BatchFirst ? 0 : 1], Batch,
                "initial states have the input's batch");
  requireRecurrentParameters(C, Hidden, Dirs, BatchFirst);
  C.setDims(0, BatchFirst ? PartialDimList{Batch, Seq, Dirs, H}
                          : PartialDimList{Seq, Dirs, Batch, H});
  for (unsigned I = 1; I < C.getNumResults(); ++I)
    C.setDims(I, BatchFirst ? PartialDimList{Batch, Dirs, H}
                            : PartialDimList{Dirs, Batch, H});
}

constexpr bool NeedsX = true;

/// GridSample: X [N, C, D1..Dk] sampled at grid [N, O1..Ok, k] gives
/// [N, C, O1..Ok]; the grid has X's batch and one coordinate per spatial
/// dim (rank 4 before opset 20, any rank from it).
void transferGridSample(DimContext &C, const DimList *X) {
  const DimList *Grid = C.dims(1);
  if (!Grid || Grid->size() != X->size() || X->size() < 3)
    return;
  C.unite((*Grid)[0], (*X)[0]);
  C.unite(Grid->back(), DimExpr::constant(int64_t(X->size()) - 2));
  PartialDimList Out{(*X)[0], (*X)[1]};
  for (size_t K = 1; K + 1 < Grid->size(); ++K)
    Out.push_back((*Grid)[K]);
  C.setDims(0, std::move(Out));
}

/// RoiAlign: X [N, C, H, W], rois [R, 4] and batch_indices [R] give
/// [R, C, output_height, output_width]. Which image each roi reads is
/// data (the indices' values), as Gather's indices are.
void transferRoiAlign(DimContext &C, const DimList *X) {
  const DimList *Rois = C.dims(1), *Idx = C.dims(2);
  if (X->size() != 4 || !Rois || Rois->size() != 2)
    return;
  C.unite((*Rois)[1], DimExpr::constant(4));
  if (Idx && Idx->size() == 1)
    C.unite((*Idx)[0], (*Rois)[0]);
  const Node &N = C.getNode();
  C.setDims(0, PartialDimList{(*Rois)[0], (*X)[1],
                              DimExpr::constant(N.getAttrInt("output_height", 1)),
                              DimExpr::constant(N.getAttrInt("output_width", 1))});
}

constexpr DimRule DimRules[] = {
    {"", "AveragePool", 1, transferPool, NeedsX},
    {"", "BatchNormalization", 1, transferChannelNormalization},
    {"", "Conv", 1, transferConv, NeedsX},
    {"", "ConvTranspose", 1, transferConvTranspose, NeedsX},
    {"", "DequantizeLinear", 1, transferQuantization},
    {"", "Dropout", 1, transferDropout},
    {"", "GRU", 1, transferRecurrent, NeedsX},
    {"", "GlobalAveragePool", 1, transferGlobalPool, NeedsX},
    {"", "GlobalLpPool", 1, transferGlobalPool, NeedsX},
    {"", "GlobalMaxPool", 1, transferGlobalPool, NeedsX},
    {"", "GridSample", 16, transferGridSample, NeedsX},
    {"", "InstanceNormalization", 1, transferChannelNormalization},
    {"", "LSTM", 1, transferRecurrent, NeedsX},
    {"", "LayerNormalization", 1, transferNormalizedTail},
    {"", "LpPool", 1, transferPool, NeedsX},
    {"", "MaxPool", 1, transferMaxPool, NeedsX},
    {"", "QuantizeLinear", 1, transferQuantization},
    {"", "RNN", 1, transferRecurrent, NeedsX},
    {"", "Resize", 1, transferResize, NeedsX},
    {"", "RoiAlign", 10, transferRoiAlign, NeedsX},
    {"", "Upsample", 1, transferUpsample, NeedsX},
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

//===----------------------------------------------------------------------===//
// Local patterns (PatternRules.h): per-channel affine maps folded into Conv
//===----------------------------------------------------------------------===//
//
// Before:  C = Conv<group=g>(X, W, B)          # W, B constants
//          Y = BatchNormalization(C, s, b, mean, var)
// After:   Y = Conv<group=g>(X, W', B')
//
// Before:  C = Conv(X, W, B)    Y = Mul(C, K)  # K: float[M,1,1] or [1]
// After:   Y = Conv(X, W', B')                 # and Add(C, K) likewise
//
// Each maps output channel m of the Conv affinely: y = a[m] * c + d[m]
// (BatchNormalization in inference mode: a = s / sqrt(var + eps), d = b -
// mean * a; Mul: a = K, d = 0; Add: a = 1, d = K). Folded, W' scales the
// weights of channel m by a[m] and B' = B * a + d. Conv's weights are
// [M, C/g, k...] (channel m is the first index); ConvTranspose's are
// [C, M/g, k...] with M = g * (M/g): input channel c of group c / (C/g)
// feeds output channel (c / (C/g)) * (M/g) + j at second index j. The
// Conv's result must have the rewritten node as its only user (otherwise
// the unfused Conv stays and the model grows), and everything must be
// float constants; Mul and Add fold only a constant that is 1 on every axis
// of the Conv's result but the channel axis (so it cannot broadcast the
// result to a bigger shape). Computed in double, rounded to float once.

namespace {

constexpr int64_t MaxFusedWeights = int64_t(1) << 26;

/// The Conv or ConvTranspose producing \p V, when \p V is its first result
/// and \p User is its only reader; its weights constant floats.
Node *convFeedingOnly(Value *V, const Node &User) {
  Node *Conv = V ? V->getDefiningNode() : nullptr;
  if (!Conv || !Conv->isOnnxDomain() ||
      !(Conv->is("Conv") || Conv->is("ConvTranspose")) ||
      V != Conv->getResult(0) || V->getNumUses() != 1 ||
      V->getUses()[0].User != &User || V->isGraphOutput())
    return nullptr;
  for (unsigned I = 1; I < Conv->getNumOperands(); ++I) {
    Value *Op = Conv->getOperand(I);
    if (!Op)
      continue;
    Tensor T = getConstantValue(*Op);
    if (!T || T.getElemType() != TensorProto::FLOAT)
      return nullptr;
  }
  Value *W = pattern::operandOrNull(*Conv, 1);
  return W && getConstantValue(*W).getDims().size() >= 3 ? Conv : nullptr;
}

/// The number of output channels of \p Conv (weights known constant).
int64_t outputChannels(const Node &Conv, llvm::ArrayRef<int64_t> WDims) {
  if (Conv.is("Conv"))
    return WDims[0];
  return WDims[1] * Conv.getAttrInt("group", 1);
}

/// Replaces \p Root, which computes A[m] * Conv(..)[m] + D[m] per output
/// channel m of \p Conv, by one Conv with scaled weights and bias.
LogicalResult foldAffineIntoConv(Node &Root, Node &Conv,
                                 llvm::ArrayRef<double> A,
                                 llvm::ArrayRef<double> D, Rewriter &R) {
  Value *WV = Conv.getOperand(1);
  Tensor WT = getConstantValue(*WV);
  std::vector<int64_t> WDims = WT.getDims();
  int64_t M = outputChannels(Conv, WDims), Group = Conv.getAttrInt("group", 1);
  if (WT.getNumElements() > MaxFusedWeights || M <= 0 || Group <= 0 ||
      int64_t(A.size()) != M || int64_t(D.size()) != M || WDims[0] % Group != 0)
    return R.notifyMatchFailure(Root, "weights too large or channels differ");
  std::optional<std::vector<double>> W = WT.toDoubles();
  std::vector<double> B(M, 0.0);
  if (Value *BV = pattern::operandOrNull(Conv, 2)) {
    std::optional<std::vector<double>> Read = pattern::readConstant(BV, M);
    if (!Read || int64_t(Read->size()) != M)
      return R.notifyMatchFailure(Root, "bias is not M constants");
    B = std::move(*Read);
  }
  if (!W || int64_t(W->size()) != WT.getNumElements())
    return R.notifyMatchFailure(Root, "weights are unreadable");
  std::vector<float> NewW(W->size());
  int64_t Inner = int64_t(W->size()) / WDims[0];
  if (Conv.is("Conv")) {
    for (size_t I = 0; I < W->size(); ++I)
      NewW[I] = float((*W)[I] * A[I / Inner]);
  } else {
    // [C, M/g, k...]: the kernel of (c, j) is Inner / (M/g) elements.
    int64_t PerGroupOut = WDims[1], PerGroupIn = WDims[0] / Group;
    int64_t Kernel = Inner / PerGroupOut;
    for (size_t I = 0; I < W->size(); ++I) {
      int64_t C = I / Inner, J = (I % Inner) / Kernel;
      NewW[I] = float((*W)[I] * A[(C / PerGroupIn) * PerGroupOut + J]);
    }
  }
  std::vector<float> NewB(M);
  for (int64_t Ch = 0; Ch < M; ++Ch)
    NewB[Ch] = float(B[Ch] * A[Ch] + D[Ch]);
  Graph &G = *Root.getParentGraph();
  // Named after the weights; a second fold does not stack suffixes.
  std::string Base = WV->getName().str();
  if (!llvm::StringRef(Base).endswith("_fused"))
    Base += "_fused";
  Value *W2 = R.createConstant(G, Tensor::fromFloats(Base, WDims, NewW));
  Value *B2 =
      R.createConstant(G, Tensor::fromFloats(Base + "_bias", {M}, NewB));
  Node *Fused = pattern::cloneNode(Conv, {Conv.getOperand(0), W2, B2}, R);
  if (!Fused)
    return failure(); // Unreachable: a Conv holds no graph.
  Fused->getResult(0)->setType(Root.getResult(0)->getType());
  // A new node result can always take over a graph output's name.
  if (failed(R.replaceAllUsesWith(Root.getResult(0), Fused->getResult(0))))
    return failure();
  R.eraseDeadChain(Root);
  return success();
}

LogicalResult fuseConvBatchNorm(Node &N, Rewriter &R) {
  if (N.getAttrInt("training_mode", 0) != 0 || N.getAttrInt("spatial", 1) != 1)
    return R.notifyMatchFailure(N, "not per-channel inference mode");
  for (unsigned I = 1; I < N.getNumResults(); ++I)
    if (N.getResult(I) && !N.getResult(I)->use_empty())
      return R.notifyMatchFailure(N, "running statistics are used");
  if (N.getNumOperands() != 5)
    return R.notifyMatchFailure(N, "expected five operands");
  Node *Conv = convFeedingOnly(N.getOperand(0), N);
  if (!Conv)
    return R.notifyMatchFailure(
        N, "input is not a constant-weight Conv read by this node alone");
  std::vector<std::vector<double>> P;
  for (unsigned I = 1; I < 5; ++I) {
    std::optional<std::vector<double>> Read =
        pattern::readConstant(N.getOperand(I), 1 << 20);
    if (!Read || getConstantValue(*N.getOperand(I)).getDims().size() != 1)
      return R.notifyMatchFailure(N, "parameters are not constant vectors");
    P.push_back(std::move(*Read));
  }
  double Eps = N.getAttrFloat("epsilon", 1e-5f);
  size_t M = P[0].size();
  std::vector<double> A(M), D(M);
  for (size_t Ch = 0; Ch < M; ++Ch) {
    if (P[1].size() != M || P[2].size() != M || P[3].size() != M)
      return R.notifyMatchFailure(N, "parameters differ in length");
    A[Ch] = P[0][Ch] / std::sqrt(P[3][Ch] + Eps);
    D[Ch] = P[1][Ch] - P[2][Ch] * A[Ch];
  }
  return foldAffineIntoConv(N, *Conv, A, D, R);
}

/// Per output channel, the values of the constant \p K broadcast against a
/// Conv result of rank \p Rank with \p M channels: K must be 1 on every
/// axis but the channel axis (1), where it is 1 or M.
std::optional<std::vector<double>> channelValues(const Value *K, size_t Rank,
                                                 int64_t M) {
  Tensor T = getConstantValue(*K);
  if (!T || T.getElemType() != TensorProto::FLOAT)
    return std::nullopt;
  std::vector<int64_t> Dims = T.getDims();
  if (Dims.size() > Rank)
    return std::nullopt;
  size_t Offset = Rank - Dims.size();
  int64_t Channels = 1;
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (Dims[I] == 1)
      continue;
    if (I + Offset != 1 || Dims[I] != M)
      return std::nullopt;
    Channels = M;
  }
  std::optional<std::vector<double>> Values = T.toDoubles();
  if (!Values || int64_t(Values->size()) != Channels)
    return std::nullopt;
  if (Channels == 1)
    Values->assign(M, (*Values)[0]);
  return Values;
}

/// Folds Mul (\p IsMul) or Add of a per-channel constant into the Conv
/// producing either operand of \p N.
LogicalResult fuseConvChannelOp(Node &N, Rewriter &R, bool IsMul) {
  if (N.getNumOperands() != 2 || !N.getOperand(0) || !N.getOperand(1))
    return R.notifyMatchFailure(N, "expected two operands");
  for (unsigned ConvSide = 0; ConvSide < 2; ++ConvSide) {
    Node *Conv = convFeedingOnly(N.getOperand(ConvSide), N);
    if (!Conv)
      continue;
    std::vector<int64_t> WDims =
        getConstantValue(*Conv->getOperand(1)).getDims();
    int64_t M = outputChannels(*Conv, WDims);
    std::optional<std::vector<double>> K =
        channelValues(N.getOperand(1 - ConvSide), WDims.size(), M);
    if (!K)
      continue;
    std::vector<double> Ones(M, 1.0), Zeros(M, 0.0);
    return IsMul ? foldAffineIntoConv(N, *Conv, *K, Zeros, R)
                 : foldAffineIntoConv(N, *Conv, Ones, *K, R);
  }
  return R.notifyMatchFailure(
      N, "no operand is a Conv read by this node alone times a per-channel "
         "constant");
}

const LocalPattern BatchNormPatterns[] = {
    {"fuse-conv-batchnorm", fuseConvBatchNorm}};

// From opset 7: before it, is_test decided between training and inference.
const PatternRule PatternRows[] = {
    {"", "BatchNormalization", 7, BatchNormPatterns},
};

} // namespace

LogicalResult pattern::fuseConvMul(Node &N, Rewriter &R) {
  return fuseConvChannelOp(N, R, /*IsMul=*/true);
}
LogicalResult pattern::fuseConvAdd(Node &N, Rewriter &R) {
  return fuseConvChannelOp(N, R, /*IsMul=*/false);
}

void ops::registerNNOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
  B.addPatterns(PatternRows);
}
