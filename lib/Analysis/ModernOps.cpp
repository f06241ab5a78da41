//===- ModernOps.cpp - Inference of op versions newer than ONNX 1.12 ------===//
//
// Our own inference functions for the ops that changed semantics in ai.onnx
// opsets 18-23 and ai.onnx.ml opsets 4-5, and the table that maps each such
// op version to its inference and signature. Functions follow the ONNX
// specification of the version; where a rule needs a value that is not a
// constant (a pad amount computed in the graph), the dim is left unknown,
// never guessed. Errors are thrown with fail_shape_inference, as ONNX's own
// functions do: the engine turns them into diagnostics naming the node.
//
//===----------------------------------------------------------------------===//
#include "ModernOps.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/Analysis/OpTable.h"
#include "onnxopt/IR/IR.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <onnx/defs/tensor_proto_util.h>
#include <optional>

using namespace onnxopt;
using namespace onnxopt::detail;
using onnx::InferenceContext;
using onnx::TensorProto;
using onnx::TensorShapeProto;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool hasInput(InferenceContext &Ctx, size_t I) {
  return I < Ctx.getNumInputs() && Ctx.getInputType(I) != nullptr;
}

/// The integer contents of constant input \p I (int64 or int32), if known.
std::optional<std::vector<int64_t>> intInput(InferenceContext &Ctx, size_t I) {
  if (I >= Ctx.getNumInputs())
    return std::nullopt;
  const TensorProto *T = Ctx.getInputData(I);
  if (!T)
    return std::nullopt;
  if (T->data_type() == TensorProto::INT64)
    return onnx::ParseData<int64_t>(T);
  if (T->data_type() == TensorProto::INT32) {
    std::vector<int64_t> V;
    for (int32_t X : onnx::ParseData<int32_t>(T))
      V.push_back(X);
    return V;
  }
  return std::nullopt;
}

/// The float contents of constant input \p I, if known.
std::optional<std::vector<float>> floatInput(InferenceContext &Ctx, size_t I) {
  if (I >= Ctx.getNumInputs())
    return std::nullopt;
  const TensorProto *T = Ctx.getInputData(I);
  if (!T || T->data_type() != TensorProto::FLOAT)
    return std::nullopt;
  return onnx::ParseData<float>(T);
}

/// The contents of input \p I as dims: constant values or what data
/// propagation knows (symbols included).
std::optional<TensorShapeProto> shapeInput(InferenceContext &Ctx, size_t I) {
  if (!hasInput(Ctx, I))
    return std::nullopt;
  bool Found = false;
  TensorShapeProto S = onnx::getShapeInput(Ctx, I, Found);
  if (!Found)
    return std::nullopt;
  return S;
}

std::vector<int64_t> intsAttr(InferenceContext &Ctx, const char *Name) {
  std::vector<int64_t> V;
  if (const onnx::AttributeProto *A = Ctx.getAttribute(Name))
    V.assign(A->ints().begin(), A->ints().end());
  return V;
}

std::string stringAttr(InferenceContext &Ctx, const char *Name,
                       const std::string &Default) {
  const onnx::AttributeProto *A = Ctx.getAttribute(Name);
  return A ? A->s() : Default;
}

int64_t normalizeAxis(int64_t Axis, int64_t Rank, const char *What) {
  std::optional<int64_t> A = resolveAxis(Axis, Rank);
  if (!A)
    fail_shape_inference(What, " ", Axis, " is out of range for rank ", Rank);
  return *A;
}

void setElemType(InferenceContext &Ctx, size_t Out, int32_t ElemType) {
  if (Out < Ctx.getNumOutputs())
    Ctx.getOutputType(Out)->mutable_tensor_type()->set_elem_type(ElemType);
}

int32_t inputElemType(InferenceContext &Ctx, size_t I) {
  if (!hasInput(Ctx, I))
    return 0;
  const onnx::TypeProto *T = Ctx.getInputType(I);
  return T->has_tensor_type() ? T->tensor_type().elem_type() : 0;
}

/// A copy of input \p I's type (element type and shape) for output \p Out.
void sameAsInput(InferenceContext &Ctx, size_t I, size_t Out) {
  if (!hasInput(Ctx, I) || Out >= Ctx.getNumOutputs())
    return;
  const onnx::TypeProto *T = Ctx.getInputType(I);
  if (!T->has_tensor_type())
    return;
  *Ctx.getOutputType(Out) = *T;
}

TensorShapeProto *outputShape(InferenceContext &Ctx, size_t Out) {
  return Ctx.getOutputType(Out)->mutable_tensor_type()->mutable_shape();
}

void addDim(TensorShapeProto &S, const TensorShapeProto::Dimension &D) {
  *S.add_dim() = D;
}
void addDim(TensorShapeProto &S, int64_t V) { S.add_dim()->set_dim_value(V); }
void addUnknownDim(TensorShapeProto &S) { S.add_dim(); }

std::optional<int64_t> known(const TensorShapeProto::Dimension &D) {
  if (D.has_dim_value())
    return D.dim_value();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Inference functions
//===----------------------------------------------------------------------===//

/// Mish, Gelu, BitwiseNot, GroupNormalization, RMSNormalization,
/// RotaryEmbedding: the output has the type and shape of the first input.
void inferSameAsFirstInput(InferenceContext &Ctx) { sameAsInput(Ctx, 0, 0); }

/// BitwiseAnd/Or/Xor-18: numpy broadcasting.
void inferBroadcast(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (onnx::hasNInputShapes(Ctx, 2))
    onnx::bidirectionalBroadcastShapeInference(
        Ctx.getInputType(0)->tensor_type().shape(),
        Ctx.getInputType(1)->tensor_type().shape(), *outputShape(Ctx, 0));
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

/// OptionalGetElement-18: an optional's element, or the input itself.
void inferOptionalGetElement18(InferenceContext &Ctx) {
  if (!hasInput(Ctx, 0))
    fail_type_inference("input 0 has no type");
  const onnx::TypeProto *T = Ctx.getInputType(0);
  *Ctx.getOutputType(0) =
      T->has_optional_type() ? T->optional_type().elem_type() : *T;
}

/// OptionalHasElement-18: a bool scalar.
void inferOptionalHasElement18(InferenceContext &Ctx) {
  setElemType(Ctx, 0, TensorProto::BOOL);
  outputShape(Ctx, 0);
}

/// Col2Im-18: [N, C * prod(block_shape), L] -> [N, C, image_shape...].
void inferCol2Im(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  std::optional<std::vector<int64_t>> Image = intInput(Ctx, 1);
  std::optional<std::vector<int64_t>> Block = intInput(Ctx, 2);
  if (Image && Block && Image->size() != Block->size())
    fail_shape_inference("image_shape and block_shape differ in size");
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  if (In.dim_size() != 3)
    fail_shape_inference("input must have rank 3, has ", In.dim_size());
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  addDim(Out, In.dim(0));
  std::optional<int64_t> CB = known(In.dim(1));
  if (CB && Block) {
    int64_t Prod = 1;
    for (int64_t B : *Block)
      Prod *= B;
    if (Prod <= 0 || *CB % Prod != 0)
      fail_shape_inference("dim 1 (", *CB,
                           ") is not a multiple of the block size ", Prod);
    addDim(Out, *CB / Prod);
  } else {
    addUnknownDim(Out);
  }
  if (Image) {
    for (int64_t D : *Image)
      addDim(Out, D);
  } else if (hasInput(Ctx, 1) && onnx::hasInputShape(Ctx, 1) &&
             onnx::getInputShape(Ctx, 1).dim_size() == 1 &&
             known(onnx::getInputShape(Ctx, 1).dim(0))) {
    for (int64_t K = 0, E = *known(onnx::getInputShape(Ctx, 1).dim(0)); K < E;
         ++K)
      addUnknownDim(Out);
  } else {
    Ctx.getOutputType(0)->mutable_tensor_type()->clear_shape();
  }
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

/// AffineGrid-20: theta [N, 2, 3] and size (N, C, H, W) -> [N, H, W, 2];
/// theta [N, 3, 4] and size (N, C, D, H, W) -> [N, D, H, W, 3].
void inferAffineGrid(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  std::optional<TensorShapeProto> Size = shapeInput(Ctx, 1);
  if (!Size)
    return;
  int64_t N = Size->dim_size();
  if (N != 4 && N != 5)
    fail_shape_inference("size must have 4 or 5 values, has ", N);
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  addDim(Out, Size->dim(0));
  for (int64_t K = 2; K < N; ++K)
    addDim(Out, Size->dim(K));
  addDim(Out, N - 2);
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

/// DFT-20: axis (input 2, default -2) and dft_length (input 1) as inputs;
/// the last dim of the output is 2 (real, imaginary).
void inferDFT20(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t Rank = In.dim_size();
  if (Rank < 2)
    fail_shape_inference("input must have rank >= 2");
  int64_t Axis = -2;
  if (hasInput(Ctx, 2)) {
    std::optional<std::vector<int64_t>> A = intInput(Ctx, 2);
    if (!A || A->size() != 1) {
      TensorShapeProto &Out = *outputShape(Ctx, 0);
      for (int64_t K = 0; K + 1 < Rank; ++K)
        addUnknownDim(Out);
      addDim(Out, 2);
      return;
    }
    Axis = A->front();
  }
  // Negative axes count from the back of the whole input; the last dim
  // (real, imaginary) cannot be transformed.
  Axis = normalizeAxis(Axis, Rank, "axis");
  if (Axis == Rank - 1)
    fail_shape_inference("axis ", Axis, " is the last (complex) dim");
  bool Onesided = onnx::getAttribute(Ctx, "onesided", 0) != 0;
  bool Inverse = onnx::getAttribute(Ctx, "inverse", 0) != 0;
  if (Onesided && Inverse)
    fail_shape_inference("onesided and inverse cannot both be set");
  std::optional<int64_t> Length = known(In.dim(Axis));
  bool LengthKnown = true;
  if (hasInput(Ctx, 1)) {
    std::optional<std::vector<int64_t>> L = intInput(Ctx, 1);
    LengthKnown = L && L->size() == 1;
    Length = LengthKnown ? std::optional<int64_t>(L->front()) : std::nullopt;
  }
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  for (int64_t K = 0; K + 1 < Rank; ++K) {
    if (K != Axis)
      addDim(Out, In.dim(K));
    else if (Length)
      addDim(Out, Onesided ? *Length / 2 + 1 : *Length);
    else if (!Onesided && LengthKnown)
      addDim(Out, In.dim(K));
    else
      addUnknownDim(Out);
  }
  addDim(Out, 2);
}

/// Attention-23: Q, K, V of rank 4 ([B, heads, seq, head size]) or rank 3
/// ([B, seq, heads * head size]); past key/value extend the kv sequence.
void inferAttention23(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  for (size_t Out = 1; Out < 3 && Out < Ctx.getNumOutputs(); ++Out)
    onnx::propagateElemTypeFromInputToOutput(Ctx, Out, Out);
  if (Ctx.getNumOutputs() > 3)
    onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 3);
  if (!onnx::hasNInputShapes(Ctx, 3))
    return;
  const TensorShapeProto &Q = onnx::getInputShape(Ctx, 0);
  const TensorShapeProto &K = onnx::getInputShape(Ctx, 1);
  const TensorShapeProto &V = onnx::getInputShape(Ctx, 2);
  int64_t Rank = Q.dim_size();
  if ((Rank != 3 && Rank != 4) || K.dim_size() != Rank || V.dim_size() != Rank)
    fail_shape_inference("Q, K and V must all have rank 3 or all rank 4");
  int64_t QHeads = onnx::getAttribute(Ctx, "q_num_heads", 0);
  int64_t KVHeads = onnx::getAttribute(Ctx, "kv_num_heads", 0);
  if (Rank == 3 && (QHeads <= 0 || KVHeads <= 0))
    fail_shape_inference(
        "q_num_heads and kv_num_heads are required for rank-3 inputs");
  using Dim = TensorShapeProto::Dimension;
  auto Unknown = Dim();
  auto Div = [&](const Dim &D, int64_t By) {
    Dim R;
    if (D.has_dim_value()) {
      if (D.dim_value() % By != 0)
        fail_shape_inference("hidden size ", D.dim_value(),
                             " is not a multiple of ", By, " heads");
      R.set_dim_value(D.dim_value() / By);
    }
    return R;
  };
  // Per-head views: batch, heads, sequence, head size.
  Dim B = Q.dim(0), KVSeq = Rank == 4 ? K.dim(2) : K.dim(1);
  Dim QSeq = Rank == 4 ? Q.dim(2) : Q.dim(1);
  Dim QH = Rank == 4 ? Q.dim(1) : Dim();
  if (Rank == 3)
    QH.set_dim_value(QHeads);
  Dim KVH = Rank == 4 ? K.dim(1) : Dim();
  if (Rank == 3)
    KVH.set_dim_value(KVHeads);
  Dim KHead = Rank == 4 ? K.dim(3) : Div(K.dim(2), KVHeads);
  Dim VHead = Rank == 4 ? V.dim(3) : Div(V.dim(2), KVHeads);
  // The total kv length: past + current, when both are known.
  Dim Total = KVSeq;
  if (hasInput(Ctx, 4)) {
    Total = Unknown;
    if (onnx::hasInputShape(Ctx, 4) &&
        onnx::getInputShape(Ctx, 4).dim_size() == 4) {
      const Dim &Past = onnx::getInputShape(Ctx, 4).dim(2);
      if (Past.has_dim_value() && KVSeq.has_dim_value())
        Total.set_dim_value(Past.dim_value() + KVSeq.dim_value());
    }
  }
  TensorShapeProto &Y = *outputShape(Ctx, 0);
  if (Rank == 4) {
    for (const Dim &D : {B, QH, QSeq, VHead})
      addDim(Y, D);
  } else {
    addDim(Y, B);
    addDim(Y, QSeq);
    Dim Hidden;
    if (VHead.has_dim_value())
      Hidden.set_dim_value(QHeads * VHead.dim_value());
    addDim(Y, Hidden);
  }
  if (Ctx.getNumOutputs() > 1)
    for (const Dim &D : {B, KVH, Total, KHead})
      addDim(*outputShape(Ctx, 1), D);
  if (Ctx.getNumOutputs() > 2)
    for (const Dim &D : {B, KVH, Total, VHead})
      addDim(*outputShape(Ctx, 2), D);
  if (Ctx.getNumOutputs() > 3)
    for (const Dim &D : {B, QH, QSeq, Total})
      addDim(*outputShape(Ctx, 3), D);
}

/// RegexFullMatch-20: a bool per string.
void inferRegexFullMatch(InferenceContext &Ctx) {
  setElemType(Ctx, 0, TensorProto::BOOL);
  if (onnx::hasInputShape(Ctx, 0))
    *outputShape(Ctx, 0) = onnx::getInputShape(Ctx, 0);
}

/// StringSplit-20: Y is X's shape plus one unknown dim; Z has X's shape.
void inferStringSplit(InferenceContext &Ctx) {
  setElemType(Ctx, 0, TensorProto::STRING);
  setElemType(Ctx, 1, TensorProto::INT64);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  TensorShapeProto &Y = *outputShape(Ctx, 0);
  Y = onnx::getInputShape(Ctx, 0);
  addUnknownDim(Y);
  if (Ctx.getNumOutputs() > 1)
    *outputShape(Ctx, 1) = onnx::getInputShape(Ctx, 0);
}

/// ImageDecoder-20: uint8 [H, W, C].
void inferImageDecoder(InferenceContext &Ctx) {
  setElemType(Ctx, 0, TensorProto::UINT8);
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  for (int K = 0; K < 3; ++K)
    addUnknownDim(Out);
}

/// ai.onnx.ml LabelEncoder-4: the shape of the input, the type of the values.
void inferLabelEncoder4(InferenceContext &Ctx) {
  int32_t ET = 0;
  if (const onnx::AttributeProto *A = Ctx.getAttribute("values_tensor"))
    ET = A->t().data_type();
  else if (Ctx.getAttribute("values_strings"))
    ET = TensorProto::STRING;
  else if (Ctx.getAttribute("values_int64s"))
    ET = TensorProto::INT64;
  else if (Ctx.getAttribute("values_floats"))
    ET = TensorProto::FLOAT;
  if (!ET)
    fail_type_inference("no values_* attribute");
  setElemType(Ctx, 0, ET);
  if (onnx::hasInputShape(Ctx, 0))
    *outputShape(Ctx, 0) = onnx::getInputShape(Ctx, 0);
}

/// ai.onnx.ml TreeEnsemble-5: [N, F] -> [N, n_targets].
void inferTreeEnsemble5(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  if (onnx::hasInputShape(Ctx, 0) &&
      onnx::getInputShape(Ctx, 0).dim_size() >= 1)
    addDim(Out, onnx::getInputShape(Ctx, 0).dim(0));
  else
    addUnknownDim(Out);
  if (const onnx::AttributeProto *N = Ctx.getAttribute("n_targets"))
    addDim(Out, N->i());
  else
    addUnknownDim(Out);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

constexpr int Many = -1;
constexpr const char *ML = "ai.onnx.ml";
constexpr const char *ReduceAttrs = "keepdims:i noop_with_empty_axes:i";
constexpr const char *ResizeAttrs =
    "antialias:i axes:is coordinate_transformation_mode:s cubic_coeff_a:f "
    "exclude_outside:i extrapolation_value:f keep_aspect_ratio_policy:s "
    "mode:s nearest_mode:s";

// Columns: domain, op, since, own inference, reused schema (op, opset),
// signature from the reused schema (plus Attrs) or exactly: min/max inputs,
// min/max outputs, attributes.
const ModernOp ModernOps[] = {
    {"", "AffineGrid", 20, inferAffineGrid, nullptr, 0, false, 2, 2, 1, 1,
     "align_corners:i"},
    {"", "Attention", 23, inferAttention23, nullptr, 0, false, 3, 6, 1, 4,
     "is_causal:i kv_num_heads:i q_num_heads:i qk_matmul_output_mode:i "
     "scale:f softcap:f softmax_precision:i"},
    // AveragePool-11's inference ignores dilations; MaxPool-12's applies them.
    {"", "AveragePool", 19, nullptr, "MaxPool", 12, false, 1, 1, 1, 1,
     "auto_pad:s ceil_mode:i count_include_pad:i dilations:is "
     "kernel_shape:is pads:is strides:is"},
    {"", "BitwiseAnd", 18, inferBroadcast, nullptr, 0, false, 2, 2, 1, 1, ""},
    {"", "BitwiseNot", 18, inferSameAsFirstInput, nullptr, 0, false, 1, 1, 1, 1,
     ""},
    {"", "BitwiseOr", 18, inferBroadcast, nullptr, 0, false, 2, 2, 1, 1, ""},
    {"", "BitwiseXor", 18, inferBroadcast, nullptr, 0, false, 2, 2, 1, 1, ""},
    // Cast-13's data propagation carries shape values through the cast.
    {"", "Cast", 19, inferCast19, "Cast", 13, true, 0, 0, 0, 0, "saturate:i"},
    {"", "CastLike", 19, inferCastLike19, "CastLike", 15, true, 0, 0, 0, 0,
     "saturate:i"},
    {"", "CenterCropPad", 18, inferCenterCropPad, nullptr, 0, false, 2, 2, 1, 1,
     "axes:is"},
    {"", "Col2Im", 18, inferCol2Im, nullptr, 0, false, 3, 3, 1, 1,
     "dilations:is pads:is strides:is"},
    {"", "DFT", 20, inferDFT20, nullptr, 0, false, 1, 3, 1, 1,
     "inverse:i onesided:i"},
    // Conv-11's inference reads only X, W and the conv attributes.
    {"", "DeformConv", 19, nullptr, "Conv", 11, false, 3, 5, 1, 1,
     "dilations:is group:i kernel_shape:is offset_group:i pads:is "
     "strides:is"},
    {"", "DequantizeLinear", 19, inferDequantizeLinear19, nullptr, 0, false, 2,
     3, 1, 1, "axis:i"},
    {"", "DequantizeLinear", 21, inferDequantizeLinear19, nullptr, 0, false, 2,
     3, 1, 1, "axis:i block_size:i"},
    {"", "DequantizeLinear", 23, inferDequantizeLinear19, nullptr, 0, false, 2,
     3, 1, 1, "axis:i block_size:i output_dtype:i"},
    {"", "Gelu", 20, inferSameAsFirstInput, nullptr, 0, false, 1, 1, 1, 1,
     "approximate:s"},
    {"", "GridSample", 20, inferGridSample20, nullptr, 0, false, 2, 2, 1, 1,
     "align_corners:i mode:s padding_mode:s"},
    {"", "GroupNormalization", 18, inferSameAsFirstInput, nullptr, 0, false, 3,
     3, 1, 1, "epsilon:f num_groups:i"},
    {"", "GroupNormalization", 21, inferSameAsFirstInput, nullptr, 0, false, 3,
     3, 1, 1, "epsilon:f num_groups:i stash_type:i"},
    {"", "ImageDecoder", 20, inferImageDecoder, nullptr, 0, false, 1, 1, 1, 1,
     "pixel_format:s"},
    // LpPool-11's inference ignores dilations; MaxPool-12's applies them,
    // and ceil_mode.
    {"", "LpPool", 18, nullptr, "MaxPool", 12, false, 1, 1, 1, 1,
     "auto_pad:s ceil_mode:i dilations:is kernel_shape:is p:i pads:is "
     "strides:is"},
    {"", "Mish", 18, inferSameAsFirstInput, nullptr, 0, false, 1, 1, 1, 1, ""},
    {"", "OptionalGetElement", 18, inferOptionalGetElement18, nullptr, 0, false,
     1, 1, 1, 1, ""},
    {"", "OptionalHasElement", 18, inferOptionalHasElement18, nullptr, 0, false,
     0, 1, 1, 1, ""},
    {"", "Pad", 18, inferPad18, nullptr, 0, false, 2, 4, 1, 1, "mode:s"},
    {"", "Pad", 19, inferPad18, nullptr, 0, false, 2, 4, 1, 1, "mode:s"},
    {"", "QuantizeLinear", 19, inferQuantizeLinear19, nullptr, 0, false, 2, 3,
     1, 1, "axis:i saturate:i"},
    {"", "QuantizeLinear", 21, inferQuantizeLinear19, nullptr, 0, false, 2, 3,
     1, 1, "axis:i block_size:i output_dtype:i saturate:i"},
    {"", "QuantizeLinear", 23, inferQuantizeLinear19, nullptr, 0, false, 2, 3,
     1, 1, "axis:i block_size:i output_dtype:i precision:i saturate:i"},
    {"", "RMSNormalization", 23, inferSameAsFirstInput, nullptr, 0, false, 2, 2,
     1, 1, "axis:i epsilon:f stash_type:i"},
    // Reduce*-18 take axes as an input with ReduceSum-13's rules.
    {"", "ReduceL1", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceL2", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceLogSum", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceLogSumExp", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceMax", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceMean", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceMin", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceProd", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "ReduceSumSquare", 18, nullptr, "ReduceSum", 13, false, 1, 2, 1, 1,
     ReduceAttrs},
    {"", "RegexFullMatch", 20, inferRegexFullMatch, nullptr, 0, false, 1, 1, 1,
     1, "pattern:s"},
    {"", "Resize", 18, inferResize18, nullptr, 0, false, 1, 4, 1, 1,
     ResizeAttrs},
    {"", "Resize", 19, inferResize18, nullptr, 0, false, 1, 4, 1, 1,
     ResizeAttrs},
    {"", "RotaryEmbedding", 23, inferSameAsFirstInput, nullptr, 0, false, 3, 4,
     1, 1, "interleaved:i num_heads:i rotary_embedding_dim:i"},
    // The output has the shape of data; reduction values are not shape rules.
    {"", "ScatterElements", 18, nullptr, "ScatterElements", 16, true, 0, 0, 0,
     0, ""},
    {"", "ScatterND", 18, nullptr, "ScatterND", 16, true, 0, 0, 0, 0, ""},
    {"", "Split", 18, inferSplit18, nullptr, 0, false, 1, 2, 1, Many,
     "axis:i num_outputs:i"},
    {"", "StringConcat", 20, inferBroadcast, nullptr, 0, false, 2, 2, 1, 1, ""},
    {"", "StringSplit", 20, inferStringSplit, nullptr, 0, false, 1, 1, 2, 2,
     "delimiter:s maxsplit:i"},
    {ML, "LabelEncoder", 4, inferLabelEncoder4, nullptr, 0, false, 1, 1, 1, 1,
     "default_float:f default_int64:i default_string:s default_tensor:t "
     "keys_floats:fs keys_int64s:is keys_strings:ss keys_tensor:t "
     "values_floats:fs values_int64s:is values_strings:ss values_tensor:t"},
    {ML, "TreeEnsemble", 5, inferTreeEnsemble5, nullptr, 0, false, 1, 1, 1, 1,
     "aggregate_function:i leaf_targetids:is leaf_weights:t "
     "membership_values:t n_targets:i nodes_falseleafs:is "
     "nodes_falsenodeids:is nodes_featureids:is nodes_hitrates:t "
     "nodes_missing_value_tracks_true:is nodes_modes:t nodes_splits:t "
     "nodes_trueleafs:is nodes_truenodeids:is post_transform:i tree_roots:is"},
};

} // namespace

const char *onnxopt::detail::attrKindCode(AttrKind K) {
  switch (K) {
  case AttrKind::Float:
    return "f";
  case AttrKind::Int:
    return "i";
  case AttrKind::String:
    return "s";
  case AttrKind::Tensor:
    return "t";
  case AttrKind::Graph:
    return "g";
  case AttrKind::Floats:
    return "fs";
  case AttrKind::Ints:
    return "is";
  case AttrKind::Strings:
    return "ss";
  case AttrKind::Tensors:
    return "ts";
  case AttrKind::Graphs:
    return "gs";
  case AttrKind::SparseTensor:
    return "sparse_tensor";
  case AttrKind::SparseTensors:
    return "sparse_tensors";
  case AttrKind::TypeProto:
    return "type_proto";
  default:
    return "undefined";
  }
}

const ModernOp *onnxopt::detail::findModernOp(llvm::StringRef Domain,
                                              llvm::StringRef OpType,
                                              int Since) {
  llvm::StringRef D = Domain == "ai.onnx" ? "" : Domain;
  for (const ModernOp &Op : ModernOps)
    if (Op.Since == Since && OpType == Op.OpType && D == Op.Domain)
      return &Op;
  return nullptr;
}

const onnx::OpSchema *onnxopt::detail::getReusedSchema(const ModernOp &Op) {
  if (!Op.ReuseOp)
    return nullptr;
  return onnx::OpSchemaRegistry::Schema(Op.ReuseOp, Op.ReuseOpset, Op.Domain);
}

bool onnxopt::detail::checkModernSignature(const Node &N, const ModernOp &Op,
                                           std::string &Why) {
  int MinIn = Op.MinInputs, MaxIn = Op.MaxInputs, MinOut = Op.MinOutputs,
      MaxOut = Op.MaxOutputs;
  // name -> kind code
  std::vector<std::pair<std::string, std::string>> Allowed;
  if (Op.SigFromReuse) {
    const onnx::OpSchema *S = getReusedSchema(Op);
    if (!S) {
      Why = "no schema " + std::string(Op.ReuseOp) + "-" +
            std::to_string(Op.ReuseOpset) + " to check against";
      return false;
    }
    MinIn = S->min_input();
    MaxIn = S->max_input() == std::numeric_limits<int>::max() ? Many
                                                              : S->max_input();
    MinOut = S->min_output();
    MaxOut = S->max_output() == std::numeric_limits<int>::max()
                 ? Many
                 : S->max_output();
    static const char *const Codes[] = {"?",  "f",  "i",  "s",  "t", "g",
                                        "fs", "is", "ss", "ts", "gs"};
    for (const auto &[Name, A] : S->attributes()) {
      int K = static_cast<int>(A.type);
      Allowed.emplace_back(Name, K >= 0 && K <= 10 ? Codes[K] : "?");
    }
  }
  llvm::SmallVector<llvm::StringRef, 16> Words;
  llvm::StringRef(Op.Attrs).split(Words, ' ', -1, false);
  for (llvm::StringRef W : Words) {
    auto [Name, Kind] = W.split(':');
    Allowed.emplace_back(Name.str(), Kind.str());
  }
  // Trailing omitted operands do not count, as in ONNX.
  int NumIn = static_cast<int>(N.getNumOperands());
  int NumOut = static_cast<int>(N.getNumResults());
  std::string Name = std::string(Op.OpType) + "-" + std::to_string(Op.Since);
  auto Range = [](int Min, int Max) {
    if (Max == Many)
      return "at least " + std::to_string(Min);
    if (Min == Max)
      return std::to_string(Min);
    return std::to_string(Min) + " to " + std::to_string(Max);
  };
  if (NumIn < MinIn || (MaxIn != Many && NumIn > MaxIn)) {
    Why = Name + " takes " + Range(MinIn, MaxIn) + " inputs, the node has " +
          std::to_string(NumIn);
    return false;
  }
  if (NumOut < MinOut || (MaxOut != Many && NumOut > MaxOut)) {
    Why = Name + " has " + Range(MinOut, MaxOut) + " outputs, the node has " +
          std::to_string(NumOut);
    return false;
  }
  for (const Attribute &A : N.getAttrs()) {
    auto It = llvm::find_if(Allowed,
                            [&](const auto &E) { return E.first == A.Name; });
    if (It == Allowed.end()) {
      Why = Name + " has no attribute '" + A.Name + "'";
      return false;
    }
    if (It->second != attrKindCode(A.Kind)) {
      Why = "attribute '" + A.Name + "' of " + Name + " must be of kind " +
            It->second + ", is " + attrKindCode(A.Kind);
      return false;
    }
  }
  return true;
}

std::string onnxopt::renderOpTableMarkdown() {
  std::string S;
  S += "| domain | op | version | change | what changed | onnx-opt infers it "
       "with |\n";
  S += "| --- | --- | --- | --- | --- | --- |\n";
  for (const OpVersionEntry &E : getOpVersionEntries()) {
    std::string How;
    llvm::StringRef Domain = *E.Domain ? E.Domain : "ai.onnx";
    OpResolution R = resolveOpVersion(E.Domain, E.OpType, E.Since);
    switch (R.K) {
    case OpResolution::Kind::Removed:
      How = "pass-through (deprecated)";
      break;
    case OpResolution::Kind::TooNew:
      How = "pass-through";
      break;
    case OpResolution::Kind::Onnx112Schema:
      How = "type-only: ONNX 1.12 schema " + std::string(E.OpType) + "-" +
            std::to_string(R.SchemaOpset);
      if (const onnx::OpSchema *Sch =
              onnx::OpSchemaRegistry::Schema(E.OpType, R.SchemaOpset, E.Domain))
        How = "type-only: ONNX 1.12's " + std::string(E.OpType) + "-" +
              std::to_string(Sch->SinceVersion());
      break;
    case OpResolution::Kind::Modern: {
      const ModernOp *Op = findModernOp(E.Domain, E.OpType, R.SemanticSince);
      if (!Op) {
        How = "pass-through (no inference)";
        break;
      }
      std::string Since = R.SemanticSince == E.Since
                              ? ""
                              : " (semantics of version " +
                                    std::to_string(R.SemanticSince) + ")";
      if (Op->Infer)
        How = "our own inference" + Since;
      else
        How = "ONNX 1.12's " + std::string(Op->ReuseOp) + "-" +
              std::to_string(getReusedSchema(*Op)
                                 ? getReusedSchema(*Op)->SinceVersion()
                                 : Op->ReuseOpset) +
              Since;
      if (Op->Infer && Op->ReuseOp)
        How += ", data propagation of " + std::string(Op->ReuseOp) + "-" +
               std::to_string(Op->ReuseOpset);
      break;
    }
    }
    std::string What = E.What;
    if (E.AddedTypes && E.Change == OpChange::TypesOnly)
      What = "types: " + describeTypeMask(E.AddedTypes);
    S += "| " + Domain.str() + " | " + E.OpType + " | " +
         std::to_string(E.Since) + " | " + getOpChangeName(E.Change).str() +
         " | " + What + " | " + How + " |\n";
  }
  return S;
}
