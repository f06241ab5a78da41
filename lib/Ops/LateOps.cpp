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

constexpr TraitRow Traits[] = {
    // x * sigmoid(alpha * x), elementwise.
    {"", "Swish", 24, ShapePreserving, {}, {}, -1},
};

llvm::ArrayRef<TraitRow> traitRows() { return Traits; }

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
    for (int64_t B : *Block) {
      if (B <= 0)
        fail_shape_inference("block_shape has ", B, ", not a positive size");
      if (__builtin_mul_overflow(Prod, B, &Prod))
        fail_shape_inference("the product of block_shape overflows");
    }
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

//===--- Opset 23 and 24: attention, rotary embedding, normalization ----===//

using Dim = TensorShapeProto::Dimension;

/// A dim nothing is known about.
Dim unknownDim() { return Dim(); }

/// Fails when two dims the op needs equal are numbers that differ. Symbols
/// are not compared: two names may take the same value at run time.
void requireSameDim(const Dim &A, const Dim &B, const char *What) {
  std::optional<int64_t> X = known(A), Y = known(B);
  if (X && Y && *X != *Y)
    fail_shape_inference(What, " differ (", *X, " and ", *Y, ")");
}

/// Q, K or V of Attention seen per head: the 4-D form is
/// [batch, heads, sequence, head size]; the 3-D form is
/// [batch, sequence, heads * head size] with the heads from an attribute.
struct HeadView {
  Dim Batch, Heads, Seq, HeadSize;
};

HeadView viewPerHead(const TensorShapeProto &S, int64_t Heads,
                     const char *What) {
  HeadView V;
  V.Batch = S.dim(0);
  if (S.dim_size() == 4) {
    V.Heads = S.dim(1);
    V.Seq = S.dim(2);
    V.HeadSize = S.dim(3);
    return V;
  }
  V.Heads.set_dim_value(Heads);
  V.Seq = S.dim(1);
  if (std::optional<int64_t> Hidden = known(S.dim(2))) {
    if (*Hidden % Heads != 0)
      fail_shape_inference(What, "'s hidden size ", *Hidden,
                           " is not a multiple of ", Heads, " heads");
    V.HeadSize.set_dim_value(*Hidden / Heads);
  }
  return V;
}

/// The kv sequence after past_key (or past_value) is prepended: a number
/// when both parts are; the dim analysis carries the symbolic sum.
Dim totalSequence(const Dim &Past, const Dim &Current) {
  Dim Total;
  if (known(Past) && known(Current))
    Total.set_dim_value(*known(Past) + *known(Current));
  return Total;
}

void setShape(InferenceContext &Ctx, size_t Out,
              std::initializer_list<Dim> Dims) {
  if (Out >= Ctx.getNumOutputs())
    return;
  TensorShapeProto &S = *outputShape(Ctx, Out);
  S.clear_dim();
  for (const Dim &D : Dims)
    addDim(S, D);
}

/// Checks a cache input of Attention (past_key, past_value: rank 4,
/// [batch, kv heads, past sequence, head size]) against the current K or V.
void checkPast(InferenceContext &Ctx, size_t I, const HeadView &KV,
               const char *What) {
  if (!hasInput(Ctx, I) || !onnx::hasInputShape(Ctx, I))
    return;
  const TensorShapeProto &P = onnx::getInputShape(Ctx, I);
  if (P.dim_size() != 4)
    fail_shape_inference(What, " must have rank 4, has ", P.dim_size());
  requireSameDim(P.dim(0), KV.Batch, "the batch sizes of the past cache");
  requireSameDim(P.dim(1), KV.Heads, "the kv heads of the past cache");
  requireSameDim(P.dim(3), KV.HeadSize, "the head sizes of the past cache");
}

/// Attention-23 and -24: Q, K and V all of rank 4 ([B, heads, seq, head
/// size]) or all of rank 3 ([B, seq, heads * head size], q_num_heads and
/// kv_num_heads required). Y has Q's form with V's head size; present_key
/// and present_value are the 4-D caches with the kv sequence extended by
/// the past; qk_matmul_output is [B, q heads, q seq, total kv seq].
void inferAttention(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (Ctx.getNumOutputs() > 1)
    onnx::propagateElemTypeFromInputToOutput(Ctx, 1, 1);
  if (Ctx.getNumOutputs() > 2)
    onnx::propagateElemTypeFromInputToOutput(Ctx, 2, 2);
  if (Ctx.getNumOutputs() > 3)
    onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 3);
  if (!onnx::hasNInputShapes(Ctx, 3))
    return;
  const TensorShapeProto &Q = onnx::getInputShape(Ctx, 0);
  const TensorShapeProto &K = onnx::getInputShape(Ctx, 1);
  const TensorShapeProto &V = onnx::getInputShape(Ctx, 2);
  int64_t Rank = Q.dim_size();
  if ((Rank != 3 && Rank != 4) || K.dim_size() != Rank || V.dim_size() != Rank)
    fail_shape_inference("Q, K and V must all have rank 3 or all rank 4 "
                         "(have ",
                         Q.dim_size(), ", ", K.dim_size(), ", ", V.dim_size(),
                         ")");
  int64_t QHeads = onnx::getAttribute(Ctx, "q_num_heads", 0);
  int64_t KVHeads = onnx::getAttribute(Ctx, "kv_num_heads", 0);
  if (Rank == 3 && (QHeads <= 0 || KVHeads <= 0))
    fail_shape_inference(
        "q_num_heads and kv_num_heads are required for rank-3 inputs");
  HeadView QV = viewPerHead(Q, QHeads, "Q");
  HeadView KV = viewPerHead(K, KVHeads, "K");
  HeadView VV = viewPerHead(V, KVHeads, "V");
  requireSameDim(QV.Batch, KV.Batch, "the batch sizes of Q and K");
  requireSameDim(KV.Batch, VV.Batch, "the batch sizes of K and V");
  requireSameDim(QV.HeadSize, KV.HeadSize, "the head sizes of Q and K");
  requireSameDim(KV.Seq, VV.Seq, "the sequence lengths of K and V");
  requireSameDim(KV.Heads, VV.Heads, "the heads of K and V");
  // Grouped-query attention repeats each kv head over a group of q heads.
  if (known(QV.Heads) && known(KV.Heads) &&
      (*known(KV.Heads) <= 0 || *known(QV.Heads) % *known(KV.Heads) != 0))
    fail_shape_inference("q heads (", *known(QV.Heads),
                         ") are not a multiple of kv heads (", *known(KV.Heads),
                         ")");
  checkPast(Ctx, 4, KV, "past_key");
  checkPast(Ctx, 5, VV, "past_value");
  if (hasInput(Ctx, 3) && onnx::hasInputShape(Ctx, 3) &&
      onnx::getInputShape(Ctx, 3).dim_size() > 4)
    fail_shape_inference("attn_mask has rank ",
                         onnx::getInputShape(Ctx, 3).dim_size(),
                         ", more than 4");
  // Attention-24's nonpad_kv_seqlen: one length per batch entry.
  if (hasInput(Ctx, 6) && onnx::hasInputShape(Ctx, 6)) {
    const TensorShapeProto &L = onnx::getInputShape(Ctx, 6);
    if (L.dim_size() != 1)
      fail_shape_inference("nonpad_kv_seqlen must have rank 1, has ",
                           L.dim_size());
    requireSameDim(L.dim(0), QV.Batch, "nonpad_kv_seqlen and the batch size");
  }

  Dim KeyTotal = KV.Seq, ValueTotal = VV.Seq;
  if (hasInput(Ctx, 4))
    KeyTotal = onnx::hasInputShape(Ctx, 4)
                   ? totalSequence(onnx::getInputShape(Ctx, 4).dim(2), KV.Seq)
                   : unknownDim();
  if (hasInput(Ctx, 5))
    ValueTotal = onnx::hasInputShape(Ctx, 5)
                     ? totalSequence(onnx::getInputShape(Ctx, 5).dim(2), VV.Seq)
                     : unknownDim();

  if (Rank == 4) {
    setShape(Ctx, 0, {QV.Batch, QV.Heads, QV.Seq, VV.HeadSize});
  } else {
    Dim Hidden;
    if (known(VV.HeadSize))
      Hidden.set_dim_value(QHeads * *known(VV.HeadSize));
    setShape(Ctx, 0, {QV.Batch, QV.Seq, Hidden});
  }
  setShape(Ctx, 1, {KV.Batch, KV.Heads, KeyTotal, KV.HeadSize});
  setShape(Ctx, 2, {VV.Batch, VV.Heads, ValueTotal, VV.HeadSize});
  setShape(Ctx, 3, {QV.Batch, QV.Heads, QV.Seq, KeyTotal});
}

/// RotaryEmbedding-23: Y has X's type and shape. X is [B, heads, seq, head
/// size] or [B, seq, hidden] with num_heads required; the rotated part of
/// each head (rotary_embedding_dim, else all of it) is an even number of
/// values; the caches are [B, seq, rotary / 2], or [max position + 1,
/// rotary / 2] indexed by position_ids [B, seq].
void inferRotaryEmbedding(InferenceContext &Ctx) {
  sameAsInput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &X = onnx::getInputShape(Ctx, 0);
  int64_t Rank = X.dim_size();
  if (Rank != 3 && Rank != 4)
    fail_shape_inference("input must have rank 3 or 4, has ", Rank);
  int64_t Heads = onnx::getAttribute(Ctx, "num_heads", 0);
  if (Rank == 3 && Heads <= 0)
    fail_shape_inference("num_heads is required for a rank-3 input");
  std::optional<int64_t> HeadSize = known(X.dim(Rank - 1));
  if (HeadSize && Rank == 3) {
    if (*HeadSize % Heads != 0)
      fail_shape_inference("hidden size ", *HeadSize, " is not a multiple of ",
                           Heads, " heads");
    *HeadSize /= Heads;
  }
  int64_t Rotary = onnx::getAttribute(Ctx, "rotary_embedding_dim", 0);
  if (Rotary < 0 || Rotary % 2 != 0)
    fail_shape_inference("rotary_embedding_dim ", Rotary,
                         " is not a non-negative even number");
  if (Rotary && HeadSize && Rotary > *HeadSize)
    fail_shape_inference("rotary_embedding_dim ", Rotary,
                         " exceeds the head size ", *HeadSize);
  if (!Rotary && HeadSize && *HeadSize % 2 != 0)
    fail_shape_inference("the head size ", *HeadSize,
                         " is odd: its halves cannot be rotated");
  bool HasPositions = hasInput(Ctx, 3);
  int64_t CacheRank = HasPositions ? 2 : 3;
  for (size_t I : {size_t(1), size_t(2)}) {
    if (!onnx::hasInputShape(Ctx, I))
      continue;
    const TensorShapeProto &Cache = onnx::getInputShape(Ctx, I);
    if (Cache.dim_size() != CacheRank)
      fail_shape_inference(
          I == 1 ? "cos_cache" : "sin_cache", " must have rank ", CacheRank,
          HasPositions ? " with position_ids" : " without position_ids",
          ", has ", Cache.dim_size());
    std::optional<int64_t> Half = known(Cache.dim(CacheRank - 1));
    std::optional<int64_t> Rotated = Rotary ? Rotary : HeadSize;
    if (Half && Rotated && *Half * 2 < *Rotated)
      fail_shape_inference(I == 1 ? "cos_cache" : "sin_cache", " has ", *Half,
                           " values per position, fewer than half of ",
                           *Rotated);
  }
  if (HasPositions && onnx::hasInputShape(Ctx, 3) &&
      onnx::getInputShape(Ctx, 3).dim_size() != 2)
    fail_shape_inference("position_ids must have rank 2, has ",
                         onnx::getInputShape(Ctx, 3).dim_size());
}

/// RMSNormalization-23: Y has X's type and shape; axis is within X's rank
/// and the scale broadcasts to X[axis:]; stash_type is a float type.
void inferRMSNormalization(InferenceContext &Ctx) {
  sameAsInput(Ctx, 0, 0);
  int64_t Stash = onnx::getAttribute(Ctx, "stash_type", TensorProto::FLOAT);
  if (Stash != TensorProto::FLOAT && Stash != TensorProto::FLOAT16 &&
      Stash != TensorProto::BFLOAT16 && Stash != TensorProto::DOUBLE)
    fail_type_inference("stash_type ", Stash, " is not a float type");
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  int64_t Rank = onnx::getInputShape(Ctx, 0).dim_size();
  int64_t Axis =
      normalizeAxis(onnx::getAttribute(Ctx, "axis", -1), Rank, "axis");
  if (onnx::hasInputShape(Ctx, 1) &&
      onnx::getInputShape(Ctx, 1).dim_size() > Rank - Axis)
    fail_shape_inference("scale has rank ",
                         onnx::getInputShape(Ctx, 1).dim_size(),
                         ", more than the ", Rank - Axis, " normalized axes");
}

/// TensorScatter-24: present_cache has past_cache's type and shape; update
/// differs from it only on the sequence axis (not the batch axis 0);
/// write_indices holds one index per batch entry.
void inferTensorScatter(InferenceContext &Ctx) {
  sameAsInput(Ctx, 0, 0);
  std::string Mode = stringAttr(Ctx, "mode", "linear");
  if (Mode != "linear" && Mode != "circular")
    fail_shape_inference("mode '", Mode, "' is neither linear nor circular");
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &Past = onnx::getInputShape(Ctx, 0);
  int64_t Rank = Past.dim_size();
  int64_t Axis =
      normalizeAxis(onnx::getAttribute(Ctx, "axis", -2), Rank, "axis");
  if (Axis == 0)
    fail_shape_inference("axis is the batch axis 0");
  if (onnx::hasInputShape(Ctx, 1)) {
    const TensorShapeProto &Update = onnx::getInputShape(Ctx, 1);
    if (Update.dim_size() != Rank)
      fail_shape_inference("update has rank ", Update.dim_size(),
                           ", past_cache ", Rank);
    for (int64_t K = 0; K < Rank; ++K)
      if (K != Axis)
        requireSameDim(Past.dim(K), Update.dim(K),
                       "dims of past_cache and update off the axis");
    std::optional<int64_t> Max = known(Past.dim(Axis));
    std::optional<int64_t> Len = known(Update.dim(Axis));
    if (Max && Len && *Len > *Max)
      fail_shape_inference("update's sequence (", *Len,
                           ") is longer than the cache (", *Max, ")");
  }
  if (hasInput(Ctx, 2) && onnx::hasInputShape(Ctx, 2)) {
    const TensorShapeProto &W = onnx::getInputShape(Ctx, 2);
    if (W.dim_size() != 1)
      fail_shape_inference("write_indices must have rank 1, has ",
                           W.dim_size());
    requireSameDim(W.dim(0), Past.dim(0), "write_indices and the batch size");
  }
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
    newVersion("", "Attention", 23, inferAttention,
               {false, 3, 6, 1, 4,
                "is_causal:i kv_num_heads:i q_num_heads:i "
                "qk_matmul_output_mode:i scale:f softcap:f "
                "softmax_precision:i"}),
    // Attention-24 adds the input nonpad_kv_seqlen.
    newVersion("", "Attention", 24, inferAttention,
               {false, 3, 7, 1, 4,
                "is_causal:i kv_num_heads:i q_num_heads:i "
                "qk_matmul_output_mode:i scale:f softcap:f "
                "softmax_precision:i"}),
    newVersion("", "Col2Im", 18, inferCol2Im,
               {false, 3, 3, 1, 1, "dilations:is pads:is strides:is"}),
    newVersion("", "ImageDecoder", 20, inferImageDecoder,
               {false, 1, 1, 1, 1, "pixel_format:s"}),
    newVersion("", "RMSNormalization", 23, inferRMSNormalization,
               {false, 2, 2, 1, 1, "axis:i epsilon:f stash_type:i"}),
    newVersion("", "RegexFullMatch", 20, inferRegexFullMatch,
               {false, 1, 1, 1, 1, "pattern:s"}),
    newVersion("", "RotaryEmbedding", 23, inferRotaryEmbedding,
               {false, 3, 4, 1, 1,
                "interleaved:i num_heads:i rotary_embedding_dim:i"}),
    newVersion("", "StringConcat", 20, inferBroadcast, {false, 2, 2, 1, 1, ""}),
    newVersion("", "StringSplit", 20, inferStringSplit,
               {false, 1, 1, 2, 2, "delimiter:s maxsplit:i"}),
    newVersion("", "Swish", 24, inferSameAsFirstInput,
               {false, 1, 1, 1, 1, "alpha:f"}),
    newVersion("", "TensorScatter", 24, inferTensorScatter,
               {false, 2, 3, 1, 1, "axis:i mode:s"}),
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

using namespace onnxopt::dims;

/// Attention's Q, K or V per head, as dims: [batch, heads, sequence, head
/// size]; for the 3-D form the hidden size split over \p Heads (it must
/// divide).
struct HeadDims {
  DimExpr Batch, Heads, Seq, HeadSize;
};

std::optional<HeadDims> headDims(DimContext &C, unsigned I, int64_t Heads) {
  const DimList *D = C.dims(I);
  if (!D)
    return std::nullopt;
  if (D->size() == 4)
    return HeadDims{(*D)[0], (*D)[1], (*D)[2], (*D)[3]};
  if (D->size() != 3 || Heads <= 0)
    return std::nullopt;
  DimExpr H = DimExpr::constant(Heads);
  C.require(DimCondition::Divisible, (*D)[2], H,
            "the hidden size splits into heads");
  std::optional<DimExpr> HeadSize = (*D)[2].divExact(H);
  if (!HeadSize)
    return std::nullopt;
  return HeadDims{(*D)[0], H, (*D)[1], *HeadSize};
}

bool hasOperand(const Node &N, unsigned I) {
  return I < N.getNumOperands() && N.getOperand(I);
}

/// The kv sequence after a past cache (operand \p PastIndex, 4-D) is
/// prepended to \p Current's; std::nullopt when the cache's dims are
/// unknown. The cache's other dims are the current K's or V's.
std::optional<DimExpr> extendByPast(DimContext &C, unsigned PastIndex,
                                    const HeadDims &Current) {
  if (!hasOperand(C.getNode(), PastIndex))
    return Current.Seq;
  const DimList *P = C.dims(PastIndex);
  if (!P || P->size() != 4)
    return std::nullopt;
  C.unite((*P)[0], Current.Batch);
  C.unite((*P)[1], Current.Heads);
  C.unite((*P)[3], Current.HeadSize);
  return (*P)[2] + Current.Seq;
}

void setResultDims(DimContext &C, unsigned I,
                   std::initializer_list<std::optional<DimExpr>> Dims) {
  if (I < C.getNumResults() && C.getNode().getResult(I))
    C.setDims(I, PartialDimList(Dims));
}

/// attn_mask is added to the scores [B, q heads, q seq, total kv seq].
/// ONNX lets it broadcast; ONNX Runtime requires its last two dims to be
/// the q sequence and the total kv sequence exactly (Attention-24's
/// padding of a shorter mask included), and broadcasts only the leading
/// ones. The rule states ONNX Runtime's, the stricter: a model that meets
/// them runs under either.
void requireMaskFits(DimContext &C, const DimList &Scores) {
  const DimList *M = C.dims(3);
  if (!M || M->empty() || M->size() > Scores.size())
    return;
  size_t Offset = Scores.size() - M->size();
  for (size_t K = 0; K < M->size(); ++K) {
    if (Offset + K + 2 >= Scores.size())
      C.unite((*M)[K], Scores[Offset + K]);
    else
      C.require(DimCondition::Broadcast, (*M)[K], Scores[Offset + K],
                "attn_mask broadcasts to the scores");
  }
}

/// Attention's head counts: a 4-D form's attributes, when given, must be
/// its dims; q heads are whole groups of kv heads. With kv heads not a
/// number the rule asks for equal heads, which suffices.
void requireHeads(DimContext &C, const HeadDims &Q, const HeadDims &K,
                  bool FourD) {
  const Node &N = C.getNode();
  int64_t QHeads = N.getAttrInt("q_num_heads", 0);
  int64_t KVHeads = N.getAttrInt("kv_num_heads", 0);
  if (FourD && QHeads > 0)
    C.unite(Q.Heads, DimExpr::constant(QHeads));
  if (FourD && KVHeads > 0)
    C.unite(K.Heads, DimExpr::constant(KVHeads));
  if (K.Heads.isConstant() && K.Heads.getConstant() > 0)
    C.require(DimCondition::Divisible, Q.Heads, K.Heads,
              "q heads are groups of kv heads");
  else
    C.require(DimCondition::Equal, Q.Heads, K.Heads,
              "q heads are groups of kv heads (stated as equal heads)");
}

/// Attention-23/24: Y, present_key, present_value and qk_matmul_output
/// (see inferAttention), with the sequence extended by the past as an
/// expression. Q, K and V share the batch; Q and K the head size; K and V
/// the sequence and heads; the caches the current K's and V's other dims;
/// the heads as requireHeads says; attn_mask fits the scores. These are
/// all the conditions ONNX Runtime checks on dims, so the rule states all.
void transferAttention(DimContext &C, const DimList *) {
  const Node &N = C.getNode();
  int64_t QHeads = N.getAttrInt("q_num_heads", 0);
  int64_t KVHeads = N.getAttrInt("kv_num_heads", 0);
  std::optional<HeadDims> Q = headDims(C, 0, QHeads);
  std::optional<HeadDims> K = headDims(C, 1, KVHeads);
  std::optional<HeadDims> V = headDims(C, 2, KVHeads);
  if (!Q || !K || !V)
    return;
  C.unite(Q->Batch, K->Batch);
  C.unite(K->Batch, V->Batch);
  C.unite(Q->HeadSize, K->HeadSize);
  C.unite(K->Seq, V->Seq);
  C.unite(K->Heads, V->Heads);
  // Attention-24's nonpad_kv_seqlen: one length per batch entry.
  if (const DimList *L = C.dims(6); L && L->size() == 1)
    C.unite((*L)[0], Q->Batch);
  requireHeads(C, *Q, *K, C.dims(0)->size() == 4);
  std::optional<DimExpr> KeyTotal = extendByPast(C, 4, *K);
  std::optional<DimExpr> ValueTotal = extendByPast(C, 5, *V);
  // Scores of every key reach every value: both caches are as long.
  if (KeyTotal && ValueTotal)
    C.unite(*KeyTotal, *ValueTotal);
  if (C.dims(0)->size() == 4)
    setResultDims(C, 0, {Q->Batch, Q->Heads, Q->Seq, V->HeadSize});
  else
    setResultDims(C, 0, {Q->Batch, Q->Seq, Q->Heads * V->HeadSize});
  setResultDims(C, 1, {K->Batch, K->Heads, KeyTotal, K->HeadSize});
  setResultDims(C, 2, {V->Batch, V->Heads, ValueTotal, V->HeadSize});
  setResultDims(C, 3, {Q->Batch, Q->Heads, Q->Seq, KeyTotal});
  if (KeyTotal)
    requireMaskFits(C, {Q->Batch, Q->Heads, Q->Seq, *KeyTotal});
}

/// RotaryEmbedding-23: X's shape. X is [B, heads, seq, head size], or
/// [B, seq, hidden] split into num_heads heads. The rotated part of a head
/// (rotary_embedding_dim, else all of it, then of an even size) is at most
/// the head, and the caches hold half of it per row. The caches share one
/// shape: [B, seq, half] without position_ids; with them [rows, half],
/// and position_ids are [B, seq]. These are ONNX Runtime's checks (it
/// broadcasts nothing). Which rows position_ids read is data, so only the
/// form without them states all conditions (rotaryStatesAll).
void transferRotaryEmbedding(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (!X || (X->size() != 3 && X->size() != 4))
    return;
  const Node &N = C.getNode();
  bool Split = X->size() == 3;
  int64_t Heads = Split ? N.getAttrInt("num_heads", 0) : 1;
  if (Heads <= 0)
    return; // inference refuses a 3-D X without num_heads
  if (Heads > 1)
    C.require(DimCondition::Divisible, X->back(), DimExpr::constant(Heads),
              "the hidden size splits into heads");
  std::optional<DimExpr> HeadSize =
      Heads > 1 ? X->back().divExact(DimExpr::constant(Heads)) : X->back();
  DimExpr Batch = (*X)[0], Seq = Split ? (*X)[1] : (*X)[2];
  const DimList *Cos = C.dims(1), *Sin = C.dims(2);
  if (Cos && Sin && Cos->size() == Sin->size())
    for (size_t K = 0; K < Cos->size(); ++K)
      C.unite((*Cos)[K], (*Sin)[K]);
  bool ByPosition = hasOperand(N, 3);
  if (const DimList *P = ByPosition ? C.dims(3) : nullptr; P && P->size() == 2) {
    C.unite((*P)[0], Batch);
    C.unite((*P)[1], Seq);
  }
  size_t Width = ByPosition ? 1 : 2;
  if (!Cos || Cos->size() != Width + 1)
    return;
  if (!ByPosition) {
    C.unite((*Cos)[0], Batch);
    C.unite((*Cos)[1], Seq);
  }
  if (!HeadSize)
    return;
  int64_t Rotary = N.getAttrInt("rotary_embedding_dim", 0);
  if (Rotary > 0) {
    C.require(DimCondition::AtLeast, *HeadSize, DimExpr::constant(Rotary),
              "the rotated part fits in a head");
    C.unite((*Cos)[Width], DimExpr::constant(Rotary / 2));
    return;
  }
  C.require(DimCondition::Divisible, *HeadSize, DimExpr::constant(2),
            "each head splits into halves");
  C.unite((*Cos)[Width] * DimExpr::constant(2), *HeadSize);
}

/// RotaryEmbedding's rule states all its conditions only where no
/// position_ids pick the cache rows.
bool rotaryStatesAll(const Node &N) { return !hasOperand(N, 3); }

/// TensorScatter-24: past_cache's shape; update has it off the axis and is
/// at most as long on it; write_indices has one entry per batch entry.
void transferTensorScatter(DimContext &C, const DimList *Past) {
  transferShapePreserving(C, Past);
  const Node &N = C.getNode();
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", -2), Past->size());
  if (!Axis || *Axis == 0)
    return;
  if (const DimList *Update = C.dims(1);
      Update && Update->size() == Past->size())
    for (size_t K = 0; K < Past->size(); ++K) {
      if (K != *Axis)
        C.unite((*Update)[K], (*Past)[K]);
      else
        C.require(DimCondition::AtMost, (*Update)[K], (*Past)[K],
                  "the update fits in the cache");
    }
  if (const DimList *W = C.dims(2); W && W->size() == 1)
    C.unite((*W)[0], (*Past)[0]);
}

constexpr DimRule DimRules[] = {
    // The 3-D form needs its rank; the rule reads every operand itself.
    {"", "Attention", 23, transferAttention, /*NeedsFirstOperandDims=*/true},
    // As LayerNormalization: X's shape, the scale broadcast to X[axis:].
    {"", "RMSNormalization", 23, dims::transferNormalizedTail},
    {"", "RotaryEmbedding", 23, transferRotaryEmbedding,
     /*NeedsFirstOperandDims=*/false, /*StatesAllConditions=*/true,
     rotaryStatesAll},
    // Where write_indices put the update is data: not stated.
    {"", "TensorScatter", 24, transferTensorScatter,
     /*NeedsFirstOperandDims=*/true, /*StatesAllConditions=*/false},
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
