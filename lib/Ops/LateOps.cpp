//===- LateOps.cpp - Ops that ONNX 1.12 does not know (opset 18 and later)
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "DimSupport.h"
#include "InferSupport.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
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

llvm::ArrayRef<TraitRow> traitRows() { return {}; }

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

// Inference functions (onnx::InferenceContext) of the versions ONNX 1.12
// has no schema for, and refinements on top of its schemas (InferRules.h).

namespace {

using namespace onnxopt::infer;

constexpr const char *ML = "ai.onnx.ml";

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

// Sorted by domain, op and version.
constexpr InferRule InferRows[] = {
    newVersion("", "AffineGrid", 20, inferAffineGrid,
               {false, 2, 2, 1, 1, "align_corners:i"}),
    newVersion("", "Attention", 23, inferAttention23,
               {false, 3, 6, 1, 4,
                "is_causal:i kv_num_heads:i q_num_heads:i "
                "qk_matmul_output_mode:i scale:f softcap:f "
                "softmax_precision:i"}),
    newVersion("", "Col2Im", 18, inferCol2Im,
               {false, 3, 3, 1, 1, "dilations:is pads:is strides:is"}),
    newVersion("", "ImageDecoder", 20, inferImageDecoder,
               {false, 1, 1, 1, 1, "pixel_format:s"}),
    newVersion("", "RMSNormalization", 23, inferSameAsFirstInput,
               {false, 2, 2, 1, 1, "axis:i epsilon:f stash_type:i"}),
    newVersion("", "RegexFullMatch", 20, inferRegexFullMatch,
               {false, 1, 1, 1, 1, "pattern:s"}),
    newVersion("", "RotaryEmbedding", 23, inferSameAsFirstInput,
               {false, 3, 4, 1, 1,
                "interleaved:i num_heads:i rotary_embedding_dim:i"}),
    newVersion("", "StringConcat", 20, inferBroadcast, {false, 2, 2, 1, 1, ""}),
    newVersion("", "StringSplit", 20, inferStringSplit,
               {false, 1, 1, 2, 2, "delimiter:s maxsplit:i"}),
    newVersion(ML, "LabelEncoder", 4, inferLabelEncoder4,
               {false, 1, 1, 1, 1,
                "default_float:f default_int64:i default_string:s "
                "default_tensor:t keys_floats:fs keys_int64s:is "
                "keys_strings:ss keys_tensor:t values_floats:fs "
                "values_int64s:is values_strings:ss values_tensor:t"}),
    newVersion(ML, "TreeEnsemble", 5, inferTreeEnsemble5,
               {false, 1, 1, 1, 1,
                "aggregate_function:i leaf_targetids:is leaf_weights:t "
                "membership_values:t n_targets:i nodes_falseleafs:is "
                "nodes_falsenodeids:is nodes_featureids:is nodes_hitrates:t "
                "nodes_missing_value_tracks_true:is nodes_modes:t "
                "nodes_splits:t nodes_trueleafs:is nodes_truenodeids:is "
                "post_transform:i tree_roots:is"}),
};

llvm::ArrayRef<InferRule> inferRules() { return InferRows; }

} // namespace

//===----------------------------------------------------------------------===//
// Dim transfer
//===----------------------------------------------------------------------===//

namespace {

/// RotaryEmbedding-23: X's shape. Its caches must match X's sequence and
/// head size (or be indexed by position_ids within their length): those
/// conditions are not stated, so make-dynamic does not rely on this rule.
constexpr DimRule DimRules[] = {
    // As LayerNormalization: X's shape, the scale broadcast to X[axis:].
    {"", "RMSNormalization", 23, dims::transferNormalizedTail},
    {"", "RotaryEmbedding", 23, dims::transferShapePreserving,
     /*NeedsFirstOperandDims=*/false, /*StatesAllConditions=*/false},
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

void ops::registerLateOps(OpRegistryBuilder &B) {
  B.addTraits(traitRows());
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
