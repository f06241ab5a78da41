//===- MicrosoftOps.cpp - onnxruntime's com.microsoft domain
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
#include <onnx/defs/shape_inference.h>
#include <optional>

using namespace onnxopt;

namespace {

//===----------------------------------------------------------------------===//
// Traits, shape operands, axes
//===----------------------------------------------------------------------===//

constexpr TraitRow Traits[] = {
    {"com.microsoft", "BiasDropout", 1, Nondeterministic, {}, {}, -1},
    {"com.microsoft", "BitmaskBiasDropout", 1, Nondeterministic, {}, {}, -1},
    {"com.microsoft", "BitmaskDropout", 1, Nondeterministic, {}, {}, -1},
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

// ONNX has no schemas for the contrib ops of ONNX Runtime-optimized exports
// (Attention, SkipLayerNormalization, FastGelu, MatMulNBits, ...): shape
// functions written from onnxruntime's operator documentation
// (docs/ContribOperators.md), against onnx::InferenceContext so the engine
// presents them exactly as default-domain ops. Each function states only
// what the op's definition fixes (an output that is "the same shape as
// input"); outputs whose shape depends on a runtime buffer policy (present
// key/value caches) keep their declared types. Ops not listed keep their
// declared types. The rules did not change between versions of the domain.

namespace {

using onnx::InferenceContext;
using onnx::TensorShapeProto;
using Dimension = onnx::TensorShapeProto_Dimension;

constexpr const char *MS = "com.microsoft";

bool hasInput(InferenceContext &Ctx, size_t I) {
  return I < Ctx.getNumInputs() && Ctx.getInputType(I) != nullptr;
}
bool hasOutput(InferenceContext &Ctx, size_t I) {
  return I < Ctx.getNumOutputs();
}

/// The shape of input \p I when it is a tensor of rank \p Rank (any rank
/// when Rank < 0).
const TensorShapeProto *shapeOf(InferenceContext &Ctx, size_t I,
                                int Rank = -1) {
  if (!hasInput(Ctx, I) || !Ctx.getInputType(I)->has_tensor_type() ||
      !Ctx.getInputType(I)->tensor_type().has_shape())
    return nullptr;
  const TensorShapeProto &S = Ctx.getInputType(I)->tensor_type().shape();
  return Rank < 0 || S.dim_size() == Rank ? &S : nullptr;
}

void elemTypeFrom(InferenceContext &Ctx, size_t In, size_t Out) {
  if (hasInput(Ctx, In) && hasOutput(Ctx, Out))
    onnx::propagateElemTypeFromInputToOutput(Ctx, In, Out);
}

/// Output \p Out has the type and shape of input \p In.
void sameAs(InferenceContext &Ctx, size_t In, size_t Out) {
  if (!hasInput(Ctx, In) || !hasOutput(Ctx, Out) ||
      !Ctx.getInputType(In)->has_tensor_type())
    return;
  *Ctx.getOutputType(Out) = *Ctx.getInputType(In);
}

TensorShapeProto &outputShape(InferenceContext &Ctx, size_t Out) {
  return *Ctx.getOutputType(Out)->mutable_tensor_type()->mutable_shape();
}

std::optional<int64_t> known(const Dimension &D) {
  if (D.has_dim_value())
    return D.dim_value();
  return std::nullopt;
}

Dimension number(int64_t V) {
  Dimension D;
  D.set_dim_value(V);
  return D;
}

void require(InferenceContext &Ctx, size_t Inputs, size_t Outputs,
             const char *Op) {
  if (Ctx.getNumInputs() < Inputs || Ctx.getNumOutputs() < Outputs)
    fail_shape_inference(Op, " needs at least ", Inputs, " inputs and ",
                         Outputs, " outputs");
}

int64_t intAttr(InferenceContext &Ctx, const char *Name, int64_t Default) {
  return onnx::getAttribute(Ctx, Name, Default);
}

// The shape functions.

/// Gelu, FastGelu, BiasGelu, QuickGelu, FastGelu's bias, BiasAdd,
/// RotaryEmbedding: elementwise over the first input (a bias broadcasts
/// along its last dim).
void inferSameAsInput0(InferenceContext &Ctx) { sameAs(Ctx, 0, 0); }

/// SkipLayerNormalization, SkipSimplifiedLayerNormalization: the output and
/// the optional input_skip_bias_sum (output 3) have the input's shape;
/// mean and inv_std_var (1, 2) are left as declared.
void inferSkipLayerNorm(InferenceContext &Ctx) {
  require(Ctx, 3, 1, "SkipLayerNormalization");
  sameAs(Ctx, 0, 0);
  if (Ctx.getNumOutputs() > 3)
    sameAs(Ctx, 0, 3);
}

/// EmbedLayerNormalization: input_ids [B,S] and word_embedding [V,H] give
/// output [B,S,H] (word_embedding's type), and embedding_sum (output 2)
/// the same. mask_index (output 1) is left as declared: its type and shape
/// depend on the mask_index_type attribute's version.
void inferEmbedLayerNorm(InferenceContext &Ctx) {
  require(Ctx, 3, 1, "EmbedLayerNormalization");
  elemTypeFrom(Ctx, 2, 0);
  const TensorShapeProto *Ids = shapeOf(Ctx, 0, 2);
  const TensorShapeProto *Words = shapeOf(Ctx, 2, 2);
  if (!Ids || !Words)
    return;
  TensorShapeProto &Out = outputShape(Ctx, 0);
  *Out.add_dim() = Ids->dim(0);
  *Out.add_dim() = Ids->dim(1);
  *Out.add_dim() = Words->dim(1);
  if (Ctx.getNumOutputs() > 2)
    *Ctx.getOutputType(2) = *Ctx.getOutputType(0);
}

/// Attention: input [B,S,H_in] and weights [H_in, Hq+Hk+Hv] give output
/// [B,S,Hv], Hv from qkv_hidden_sizes or a third of the weights' columns.
/// present (output 1) is left as declared.
void inferAttention(InferenceContext &Ctx) {
  require(Ctx, 2, 1, "Attention");
  elemTypeFrom(Ctx, 0, 0);
  const TensorShapeProto *In = shapeOf(Ctx, 0, 3);
  const TensorShapeProto *W = shapeOf(Ctx, 1, 2);
  if (!In)
    return;
  std::optional<Dimension> Hidden;
  const onnx::AttributeProto *Sizes = Ctx.getAttribute("qkv_hidden_sizes");
  if (Sizes && Sizes->ints_size() == 3) {
    if (Sizes->ints(2) <= 0)
      fail_shape_inference("qkv_hidden_sizes must be positive");
    Hidden = number(Sizes->ints(2));
  } else if (W) {
    if (std::optional<int64_t> Cols = known(W->dim(1)); Cols && *Cols % 3 == 0)
      Hidden = number(*Cols / 3);
  }
  TensorShapeProto &Out = outputShape(Ctx, 0);
  *Out.add_dim() = In->dim(0);
  *Out.add_dim() = In->dim(1);
  Dimension *H = Out.add_dim();
  if (Hidden)
    *H = *Hidden;
}

/// MultiHeadAttention with separate 3-D query [B,S,D] and value [B,L,Dv]:
/// output [B,S,Dv]; with a 4-D value [B,N,L,h]: [B,S,N*h] when both are
/// numbers. Packed forms are left as declared.
void inferMultiHeadAttention(InferenceContext &Ctx) {
  require(Ctx, 1, 1, "MultiHeadAttention");
  elemTypeFrom(Ctx, 0, 0);
  const TensorShapeProto *Q = shapeOf(Ctx, 0, 3);
  const TensorShapeProto *V = shapeOf(Ctx, 2);
  if (!Q || !V)
    return;
  Dimension Hidden;
  if (V->dim_size() == 3) {
    Hidden = V->dim(2);
  } else if (V->dim_size() == 4) {
    std::optional<int64_t> N = known(V->dim(1)), Hv = known(V->dim(3));
    int64_t Product;
    if (N && Hv && *N >= 0 && *Hv >= 0 &&
        !__builtin_mul_overflow(*N, *Hv, &Product))
      Hidden = number(Product);
  } else {
    return;
  }
  TensorShapeProto &Out = outputShape(Ctx, 0);
  *Out.add_dim() = Q->dim(0);
  *Out.add_dim() = Q->dim(1);
  *Out.add_dim() = Hidden;
}

/// GroupQueryAttention: query [B,S,D]. With key and value given, D is
/// num_heads * head_size and the output is [B,S,D]; with QKV packed into
/// the query, D is (num_heads + 2 * kv_num_heads) * head_size and the
/// output [B,S,num_heads*head_size]. present_key/value are left as
/// declared (their length follows the KV-cache buffer policy).
void inferGroupQueryAttention(InferenceContext &Ctx) {
  require(Ctx, 1, 1, "GroupQueryAttention");
  elemTypeFrom(Ctx, 0, 0);
  const TensorShapeProto *Q = shapeOf(Ctx, 0, 3);
  if (!Q)
    return;
  Dimension Hidden = Q->dim(2);
  if (!hasInput(Ctx, 1)) {
    Hidden.Clear();
    int64_t Heads = intAttr(Ctx, "num_heads", 0);
    int64_t KvHeads = intAttr(Ctx, "kv_num_heads", 0);
    std::optional<int64_t> D = known(Q->dim(2));
    // Head counts are small; beyond this the attributes are malformed.
    constexpr int64_t MaxHeads = int64_t(1) << 20;
    if (D && *D >= 0 && Heads > 0 && KvHeads > 0 && Heads <= MaxHeads &&
        KvHeads <= MaxHeads && *D % (Heads + 2 * KvHeads) == 0)
      Hidden = number(*D / (Heads + 2 * KvHeads) * Heads);
  }
  TensorShapeProto &Out = outputShape(Ctx, 0);
  *Out.add_dim() = Q->dim(0);
  *Out.add_dim() = Q->dim(1);
  *Out.add_dim() = Hidden;
}

/// MatMulNBits: A [..., K] times the packed B of N columns: [..., N], A's
/// element type.
void inferMatMulNBits(InferenceContext &Ctx) {
  require(Ctx, 3, 1, "MatMulNBits");
  elemTypeFrom(Ctx, 0, 0);
  const TensorShapeProto *A = shapeOf(Ctx, 0);
  const onnx::AttributeProto *N = Ctx.getAttribute("N");
  if (!A || A->dim_size() < 1 || !N || N->i() <= 0)
    return;
  TensorShapeProto &Out = outputShape(Ctx, 0);
  for (int I = 0; I + 1 < A->dim_size(); ++I)
    *Out.add_dim() = A->dim(I);
  Out.add_dim()->set_dim_value(N->i());
}

// Sorted by op type.
constexpr InferRule InferRows[] = {
    noSchema(MS, "Attention", inferAttention, 2, 1,
             "output [B,S,Hv] from input [B,S,H] and weights (or "
             "qkv_hidden_sizes)"),
    noSchema(MS, "BiasAdd", inferSameAsInput0, 3, 1, "the input's shape"),
    noSchema(MS, "BiasGelu", inferSameAsInput0, 2, 1, "the input's shape"),
    noSchema(MS, "EmbedLayerNormalization", inferEmbedLayerNorm, 3, 1,
             "output and embedding_sum [B,S,H] from input_ids and "
             "word_embedding"),
    noSchema(MS, "FastGelu", inferSameAsInput0, 1, 1, "the input's shape"),
    noSchema(MS, "Gelu", inferSameAsInput0, 1, 1, "the input's shape"),
    noSchema(MS, "GroupQueryAttention", inferGroupQueryAttention, 1, 1,
             "output [B,S,num_heads*head_size] (packed QKV or not)"),
    noSchema(MS, "MatMulNBits", inferMatMulNBits, 3, 1,
             "[..., N] from A [..., K]"),
    noSchema(MS, "MultiHeadAttention", inferMultiHeadAttention, 1, 1,
             "output [B,S,Dv] from 3-D query and 3-D or 4-D value"),
    noSchema(MS, "QuickGelu", inferSameAsInput0, 1, 1, "the input's shape"),
    noSchema(MS, "RotaryEmbedding", inferSameAsInput0, 3, 1,
             "the input's shape"),
    noSchema(MS, "SkipLayerNormalization", inferSkipLayerNorm, 3, 1,
             "output and input_skip_bias_sum: the input's shape"),
    noSchema(MS, "SkipSimplifiedLayerNormalization", inferSkipLayerNorm, 3, 1,
             "output and input_skip_bias_sum: the input's shape"),
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

void ops::registerMicrosoftOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
