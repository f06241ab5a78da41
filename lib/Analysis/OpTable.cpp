//===- OpTable.cpp - Op versions of ai.onnx 18-24 and ai.onnx.ml 4-5 ------===//
//
// The data is written from ONNX's operator changelog, one block per opset,
// in the changelog's order, so that a reviewer can hold the two side by
// side. Types-only means the version only widened type constraints; every
// version that added an input, an attribute or an attribute value, or
// changed a shape rule, is Semantics even when the shape rule happens to be
// the same (verification must know the new signature).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/OpTable.h"
#include "onnxopt/IR/ElementType.h"
#include "onnxopt/Ops/InferRules.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <onnx/defs/schema.h>
#include <tuple>
#include <vector>

using namespace onnxopt;

namespace {

constexpr uint32_t bit(ElementType T) {
  return uint32_t(1) << static_cast<int32_t>(T);
}
constexpr uint32_t BF16 = bit(ElementType::BFloat16);
constexpr uint32_t F8 =
    bit(ElementType::Float8E4M3FN) | bit(ElementType::Float8E4M3FNUZ) |
    bit(ElementType::Float8E5M2) | bit(ElementType::Float8E5M2FNUZ);
constexpr uint32_t I4 = bit(ElementType::UInt4) | bit(ElementType::Int4);
constexpr uint32_t F4 = bit(ElementType::Float4E2M1);
/// float8e8m0 (IR 12, code 24): the IR does not name it yet (its elements
/// round-trip as a code), so the bit is written by its number.
constexpr int32_t Float8E8M0Code = 24;
constexpr uint32_t F8E8M0 = uint32_t(1) << Float8E8M0Code;
constexpr uint32_t STR = bit(ElementType::String);
constexpr uint32_t BOOL = bit(ElementType::Bool);

constexpr OpChange New = OpChange::New;
constexpr OpChange Types = OpChange::TypesOnly;
constexpr OpChange Sem = OpChange::Semantics;
constexpr OpChange Removed = OpChange::Removed;

constexpr const char *ML = "ai.onnx.ml";

const OpVersionEntry Entries[] = {
    // ai.onnx opset 18 (ONNX 1.13).
    {"", "BitwiseAnd", 18, New, 0, "elementwise and of integers"},
    {"", "BitwiseNot", 18, New, 0, "elementwise not of integers"},
    {"", "BitwiseOr", 18, New, 0, "elementwise or of integers"},
    {"", "BitwiseXor", 18, New, 0, "elementwise xor of integers"},
    {"", "CenterCropPad", 18, New, 0, "crop or pad to `shape` on `axes`"},
    {"", "Col2Im", 18, New, 0, "rearranges column blocks into an image"},
    {"", "GroupNormalization", 18, New, 0, "scale and bias per group"},
    {"", "LpPool", 18, Sem, 0, "attributes ceil_mode and dilations"},
    {"", "Mish", 18, New, 0, "x * tanh(softplus(x))"},
    {"", "OptionalGetElement", 18, Sem, 0, "also takes a tensor or sequence"},
    {"", "OptionalHasElement", 18, Sem, 0,
     "also takes a tensor or sequence; input optional"},
    {"", "Pad", 18, Sem, 0, "input axes"},
    {"", "ReduceL1", 18, Sem, 0, "axes is an input"},
    {"", "ReduceL2", 18, Sem, 0, "axes is an input"},
    {"", "ReduceLogSum", 18, Sem, 0, "axes is an input"},
    {"", "ReduceLogSumExp", 18, Sem, 0, "axes is an input"},
    {"", "ReduceMax", 18, Sem, 0, "axes is an input"},
    {"", "ReduceMean", 18, Sem, 0, "axes is an input"},
    {"", "ReduceMin", 18, Sem, 0, "axes is an input"},
    {"", "ReduceProd", 18, Sem, 0, "axes is an input"},
    {"", "ReduceSumSquare", 18, Sem, 0, "axes is an input"},
    {"", "Resize", 18, Sem, 0,
     "attributes antialias, axes, keep_aspect_ratio_policy"},
    {"", "ScatterElements", 18, Sem, 0, "reduction max and min"},
    {"", "ScatterND", 18, Sem, 0, "reduction max and min"},
    {"", "Split", 18, Sem, 0, "attribute num_outputs"},

    // ai.onnx opset 19 (ONNX 1.14): float8 types.
    {"", "AveragePool", 19, Sem, 0, "attribute dilations"},
    {"", "Cast", 19, Sem, F8, "attribute saturate; float8 types"},
    {"", "CastLike", 19, Sem, F8, "attribute saturate; float8 types"},
    {"", "Constant", 19, Types, F8, "float8 types"},
    {"", "DeformConv", 19, New, 0, "deformable convolution"},
    {"", "DequantizeLinear", 19, Sem, F8 | BF16 | bit(ElementType::Float16),
     "float8 types; y has the type of x_scale (float, float16, bfloat16)"},
    {"", "Equal", 19, Types, STR, "string type"},
    {"", "Identity", 19, Types, F8, "float8 types"},
    {"", "If", 19, Types, F8, "float8 types"},
    {"", "Loop", 19, Types, F8, "float8 types"},
    {"", "Pad", 19, Sem, 0, "mode wrap"},
    {"", "QuantizeLinear", 19, Sem, F8, "attribute saturate; float8 types"},
    {"", "Reshape", 19, Types, F8, "float8 types"},
    {"", "Resize", 19, Sem, 0,
     "coordinate_transformation_mode half_pixel_symmetric"},
    {"", "Scan", 19, Types, F8, "float8 types"},
    {"", "Shape", 19, Types, F8, "float8 types"},
    {"", "Size", 19, Types, F8, "float8 types"},

    // ai.onnx opset 20 (ONNX 1.15).
    {"", "AffineGrid", 20, New, 0, "sampling grid from affine matrices"},
    {"", "ConstantOfShape", 20, Types, F8 | BF16, "float8 and bfloat16 types"},
    {"", "DFT", 20, Sem, 0, "axis and dft_length are inputs"},
    {"", "Gelu", 20, New, 0, "attribute approximate"},
    {"", "GridSample", 20, Sem, 0, "n-d inputs; modes linear and cubic"},
    {"", "ImageDecoder", 20, New, 0, "decodes an encoded image"},
    {"", "IsInf", 20, Types, F8 | BF16, "float8 and bfloat16 types"},
    {"", "IsNaN", 20, Types, F8 | BF16, "float8 and bfloat16 types"},
    {"", "ReduceMax", 20, Types, BOOL, "bool type"},
    {"", "ReduceMin", 20, Types, BOOL, "bool type"},
    {"", "RegexFullMatch", 20, New, 0, "string regex match"},
    {"", "StringConcat", 20, New, 0, "elementwise string concatenation"},
    {"", "StringSplit", 20, New, 0, "string split"},

    // ai.onnx opset 21 (ONNX 1.16): int4 and uint4 types.
    {"", "Cast", 21, Types, I4, "int4 and uint4 types"},
    {"", "CastLike", 21, Types, I4, "int4 and uint4 types"},
    {"", "Constant", 21, Types, I4, "int4 and uint4 types"},
    {"", "ConstantOfShape", 21, Types, I4, "int4 and uint4 types"},
    {"", "DequantizeLinear", 21, Sem, I4, "attribute block_size; int4 types"},
    {"", "Flatten", 21, Types, I4 | F8, "int4, uint4 and float8 types"},
    {"", "GroupNormalization", 21, Sem, 0,
     "scale and bias per channel; attribute stash_type"},
    {"", "Identity", 21, Types, I4, "int4 and uint4 types"},
    {"", "If", 21, Types, I4, "int4 and uint4 types"},
    {"", "Loop", 21, Types, I4, "int4 and uint4 types"},
    {"", "Pad", 21, Types, I4 | F8, "int4, uint4 and float8 types"},
    {"", "QLinearMatMul", 21, Types, F8 | BF16 | bit(ElementType::Float16),
     "float8, float16 and bfloat16 types"},
    {"", "QuantizeLinear", 21, Sem, I4,
     "attributes block_size and output_dtype; int4 types"},
    {"", "Reshape", 21, Types, I4, "int4 and uint4 types"},
    {"", "Scan", 21, Types, I4, "int4 and uint4 types"},
    {"", "Shape", 21, Types, I4, "int4 and uint4 types"},
    {"", "Size", 21, Types, I4, "int4 and uint4 types"},
    {"", "Squeeze", 21, Types, I4 | F8, "int4, uint4 and float8 types"},
    {"", "Transpose", 21, Types, I4 | F8, "int4, uint4 and float8 types"},
    {"", "Unsqueeze", 21, Types, I4 | F8, "int4, uint4 and float8 types"},

    // ai.onnx opset 22 (ONNX 1.17): bfloat16 for the float ops that lacked it.
    {"", "Acos", 22, Types, BF16, "bfloat16 type"},
    {"", "Acosh", 22, Types, BF16, "bfloat16 type"},
    {"", "Asin", 22, Types, BF16, "bfloat16 type"},
    {"", "Asinh", 22, Types, BF16, "bfloat16 type"},
    {"", "Atan", 22, Types, BF16, "bfloat16 type"},
    {"", "Atanh", 22, Types, BF16, "bfloat16 type"},
    {"", "AveragePool", 22, Types, BF16, "bfloat16 type"},
    {"", "Bernoulli", 22, Types, BF16, "bfloat16 type"},
    {"", "Conv", 22, Types, BF16, "bfloat16 type"},
    {"", "ConvTranspose", 22, Types, BF16, "bfloat16 type"},
    {"", "Cos", 22, Types, BF16, "bfloat16 type"},
    {"", "Cosh", 22, Types, BF16, "bfloat16 type"},
    {"", "DeformConv", 22, Types, BF16, "bfloat16 type"},
    {"", "Det", 22, Types, BF16, "bfloat16 type"},
    {"", "Dropout", 22, Types, BF16, "bfloat16 type"},
    {"", "Elu", 22, Types, BF16, "bfloat16 type"},
    {"", "EyeLike", 22, Types, BF16, "bfloat16 type"},
    {"", "GRU", 22, Types, BF16, "bfloat16 type"},
    {"", "GlobalAveragePool", 22, Types, BF16, "bfloat16 type"},
    {"", "GlobalLpPool", 22, Types, BF16, "bfloat16 type"},
    {"", "GlobalMaxPool", 22, Types, BF16, "bfloat16 type"},
    {"", "HardSigmoid", 22, Types, BF16, "bfloat16 type"},
    {"", "HardSwish", 22, Types, BF16, "bfloat16 type"},
    {"", "InstanceNormalization", 22, Types, BF16, "bfloat16 type"},
    {"", "LSTM", 22, Types, BF16, "bfloat16 type"},
    {"", "LpNormalization", 22, Types, BF16, "bfloat16 type"},
    {"", "LpPool", 22, Types, BF16, "bfloat16 type"},
    {"", "MaxPool", 22, Types, BF16, "bfloat16 type"},
    {"", "MaxRoiPool", 22, Types, BF16, "bfloat16 type"},
    {"", "MaxUnpool", 22, Types, BF16, "bfloat16 type"},
    {"", "Mish", 22, Types, BF16, "bfloat16 type"},
    {"", "Multinomial", 22, Types, BF16, "bfloat16 type"},
    {"", "NegativeLogLikelihoodLoss", 22, Types, BF16, "bfloat16 type"},
    {"", "RNN", 22, Types, BF16, "bfloat16 type"},
    {"", "RandomNormal", 22, Types, BF16, "bfloat16 type"},
    {"", "RandomNormalLike", 22, Types, BF16, "bfloat16 type"},
    {"", "RandomUniform", 22, Types, BF16, "bfloat16 type"},
    {"", "RandomUniformLike", 22, Types, BF16, "bfloat16 type"},
    {"", "RoiAlign", 22, Types, BF16, "bfloat16 type"},
    {"", "Round", 22, Types, BF16, "bfloat16 type"},
    {"", "Selu", 22, Types, BF16, "bfloat16 type"},
    {"", "Sin", 22, Types, BF16, "bfloat16 type"},
    {"", "Sinh", 22, Types, BF16, "bfloat16 type"},
    {"", "Softplus", 22, Types, BF16, "bfloat16 type"},
    {"", "Softsign", 22, Types, BF16, "bfloat16 type"},
    {"", "Tan", 22, Types, BF16, "bfloat16 type"},
    {"", "ThresholdedRelu", 22, Types, BF16, "bfloat16 type"},

    // ai.onnx opset 23 (ONNX 1.18): float4e2m1 types.
    {"", "Attention", 23, New, 0, "scaled dot-product attention"},
    {"", "Cast", 23, Types, F4, "float4e2m1 type"},
    {"", "CastLike", 23, Types, F4, "float4e2m1 type"},
    {"", "Constant", 23, Types, F4, "float4e2m1 type"},
    {"", "ConstantOfShape", 23, Types, F4, "float4e2m1 type"},
    {"", "DequantizeLinear", 23, Sem, F4,
     "attribute output_dtype; float4e2m1 type"},
    {"", "Flatten", 23, Types, F4, "float4e2m1 type"},
    {"", "Identity", 23, Types, F4, "float4e2m1 type"},
    {"", "If", 23, Types, F4, "float4e2m1 type"},
    {"", "Loop", 23, Types, F4, "float4e2m1 type"},
    {"", "Pad", 23, Types, F4, "float4e2m1 type"},
    {"", "QuantizeLinear", 23, Sem, F4, "attribute precision; float4e2m1"},
    {"", "RMSNormalization", 23, New, 0, "root-mean-square normalization"},
    {"", "Reshape", 23, Types, F4, "float4e2m1 type"},
    {"", "RotaryEmbedding", 23, New, 0, "rotary position embedding"},
    {"", "Scan", 23, Types, F4, "float4e2m1 type"},
    {"", "Shape", 23, Types, F4, "float4e2m1 type"},
    {"", "Size", 23, Types, F4, "float4e2m1 type"},
    {"", "Squeeze", 23, Types, F4, "float4e2m1 type"},
    {"", "Transpose", 23, Types, F4, "float4e2m1 type"},
    {"", "Unsqueeze", 23, Types, F4, "float4e2m1 type"},

    // ai.onnx opset 24 (ONNX 1.19): float8e8m0 types; KV caches updated in
    // place.
    {"", "Attention", 24, Sem, 0, "input nonpad_kv_seqlen"},
    {"", "Cast", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "CastLike", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Constant", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "ConstantOfShape", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "DequantizeLinear", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Flatten", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Identity", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "If", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Loop", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Pad", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "QuantizeLinear", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Reshape", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Scan", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Shape", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Size", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "SplitToSequence", 24, Types, BF16, "bfloat16 type"},
    {"", "Squeeze", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Swish", 24, New, 0, "x * sigmoid(alpha * x)"},
    {"", "TensorScatter", 24, New, 0, "writes an update into a KV cache"},
    {"", "TopK", 24, Types, BF16, "bfloat16 type"},
    {"", "Transpose", 24, Types, F8E8M0, "float8e8m0 type"},
    {"", "Unsqueeze", 24, Types, F8E8M0, "float8e8m0 type"},

    // ai.onnx.ml opset 4 (ONNX 1.13).
    {ML, "LabelEncoder", 4, Sem, 0,
     "tensor attributes keys_tensor, values_tensor, default_tensor"},
    // ai.onnx.ml opset 5 (ONNX 1.16).
    {ML, "TreeEnsemble", 5, New, 0, "replaces the TreeEnsemble* ops"},
    {ML, "TreeEnsembleClassifier", 5, Removed, 0, "use TreeEnsemble"},
    {ML, "TreeEnsembleRegressor", 5, Removed, 0, "use TreeEnsemble"},
};

bool isDefaultDomain(llvm::StringRef D) { return D.empty() || D == "ai.onnx"; }

llvm::StringRef canonicalDomain(llvm::StringRef D) {
  return isDefaultDomain(D) ? llvm::StringRef() : D;
}

auto keyOf(const OpVersionEntry &E) {
  return std::make_tuple(llvm::StringRef(E.Domain), llvm::StringRef(E.OpType),
                         E.Since);
}

/// The entries sorted by (domain, op, version), built on first use.
const std::vector<OpVersionEntry> &sortedEntries() {
  static const std::vector<OpVersionEntry> Sorted = [] {
    std::vector<OpVersionEntry> V(std::begin(Entries), std::end(Entries));
    std::sort(V.begin(), V.end(),
              [](const OpVersionEntry &A, const OpVersionEntry &B) {
                return keyOf(A) < keyOf(B);
              });
    return V;
  }();
  return Sorted;
}

} // namespace

int onnxopt::getOnnx112MaxOpset(llvm::StringRef Domain) {
  if (isDefaultDomain(Domain))
    return 17;
  if (Domain == "ai.onnx.ml")
    return 3;
  return 0;
}

int onnxopt::getOpTableMaxOpset(llvm::StringRef Domain) {
  if (isDefaultDomain(Domain))
    return 24;
  if (Domain == "ai.onnx.ml")
    return 5;
  return 0;
}

llvm::ArrayRef<OpVersionEntry> onnxopt::getOpVersionEntries() {
  return sortedEntries();
}

llvm::ArrayRef<OpVersionEntry>
onnxopt::getOpVersionEntries(llvm::StringRef Domain, llvm::StringRef OpType) {
  const std::vector<OpVersionEntry> &All = sortedEntries();
  llvm::StringRef D = canonicalDomain(Domain);
  auto Lo =
      std::lower_bound(All.begin(), All.end(), std::make_pair(D, OpType),
                       [](const OpVersionEntry &E, const auto &K) {
                         return std::make_pair(llvm::StringRef(E.Domain),
                                               llvm::StringRef(E.OpType)) < K;
                       });
  auto Hi = Lo;
  while (Hi != All.end() && D == Hi->Domain && OpType == Hi->OpType)
    ++Hi;
  return llvm::makeArrayRef(&*All.begin() + (Lo - All.begin()), Hi - Lo);
}

OpResolution onnxopt::resolveOpVersion(llvm::StringRef Domain,
                                       llvm::StringRef OpType, int64_t Opset) {
  OpResolution R;
  int Max112 = getOnnx112MaxOpset(Domain);
  if (Max112 == 0 || Opset <= Max112) {
    R.SchemaOpset = static_cast<int>(Opset);
    return R;
  }
  if (Opset > getOpTableMaxOpset(Domain)) {
    R.K = OpResolution::Kind::TooNew;
    return R;
  }
  R.SchemaOpset = Max112;
  llvm::ArrayRef<OpVersionEntry> Versions = getOpVersionEntries(Domain, OpType);
  // Walk back from the version in effect: type-only versions keep the
  // previous version's semantics; the first other one decides.
  for (auto It = Versions.rbegin(); It != Versions.rend(); ++It) {
    if (It->Since > Opset)
      continue;
    if (!R.Since)
      R.Since = It->Since;
    if (It->Change == OpChange::Removed && It->Since == R.Since) {
      R.K = OpResolution::Kind::Removed;
      return R;
    }
    R.AddedTypes |= It->AddedTypes;
    if (It->Change == OpChange::TypesOnly)
      continue;
    R.K = OpResolution::Kind::Modern;
    R.SemanticSince = It->Since;
    return R;
  }
  return R;
}

llvm::StringRef onnxopt::getOpChangeName(OpChange C) {
  switch (C) {
  case OpChange::New:
    return "new";
  case OpChange::TypesOnly:
    return "types only";
  case OpChange::Semantics:
    return "semantics";
  case OpChange::Removed:
    return "removed";
  }
  return "";
}

std::string onnxopt::describeTypeMask(uint32_t Mask) {
  std::string S;
  for (int32_t K = 0; K < 32; ++K)
    if (Mask & (uint32_t(1) << K)) {
      if (!S.empty())
        S += ", ";
      llvm::StringRef Name = getElementTypeName(static_cast<ElementType>(K));
      S += K == Float8E8M0Code && Name.empty() ? "float8e8m0" : Name.str();
    }
  return S;
}

//===----------------------------------------------------------------------===//
// docs/opsets.md
//===----------------------------------------------------------------------===//

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
      const InferRule *Op =
          findNewVersionRule(E.Domain, E.OpType, R.SemanticSince);
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
