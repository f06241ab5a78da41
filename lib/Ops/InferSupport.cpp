//===- InferSupport.cpp - Helpers of the families' inference rules --------===//
//
// Also the registry's answers about inference rules (InferRules.h): which
// rule infers a version, its reused schema, and its signature check.
//
//===----------------------------------------------------------------------===//
#include "InferSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpFacts.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <limits>
#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>

using namespace onnxopt;
using namespace onnxopt::infer;

bool infer::hasInput(InferenceContext &Ctx, size_t I) {
  return I < Ctx.getNumInputs() && Ctx.getInputType(I) != nullptr;
}

/// The integer contents of constant input \p I (int64 or int32), if known.
std::optional<std::vector<int64_t>> infer::intInput(InferenceContext &Ctx,
                                                    size_t I) {
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
std::optional<std::vector<float>> infer::floatInput(InferenceContext &Ctx,
                                                    size_t I) {
  if (I >= Ctx.getNumInputs())
    return std::nullopt;
  const TensorProto *T = Ctx.getInputData(I);
  if (!T || T->data_type() != TensorProto::FLOAT)
    return std::nullopt;
  return onnx::ParseData<float>(T);
}

/// The contents of input \p I as dims: constant values or what data
/// propagation knows (symbols included).
std::optional<TensorShapeProto> infer::shapeInput(InferenceContext &Ctx,
                                                  size_t I) {
  if (!hasInput(Ctx, I))
    return std::nullopt;
  bool Found = false;
  TensorShapeProto S = onnx::getShapeInput(Ctx, I, Found);
  if (!Found)
    return std::nullopt;
  return S;
}

std::vector<int64_t> infer::intsAttr(InferenceContext &Ctx, const char *Name) {
  std::vector<int64_t> V;
  if (const onnx::AttributeProto *A = Ctx.getAttribute(Name))
    V.assign(A->ints().begin(), A->ints().end());
  return V;
}

std::string infer::stringAttr(InferenceContext &Ctx, const char *Name,
                              const std::string &Default) {
  const onnx::AttributeProto *A = Ctx.getAttribute(Name);
  return A ? A->s() : Default;
}

int64_t infer::normalizeAxis(int64_t Axis, int64_t Rank, const char *What) {
  std::optional<int64_t> A = resolveAxis(Axis, Rank);
  if (!A)
    fail_shape_inference(What, " ", Axis, " is out of range for rank ", Rank);
  return *A;
}

void infer::setElemType(InferenceContext &Ctx, size_t Out, int32_t ElemType) {
  if (Out < Ctx.getNumOutputs())
    Ctx.getOutputType(Out)->mutable_tensor_type()->set_elem_type(ElemType);
}

int32_t infer::inputElemType(InferenceContext &Ctx, size_t I) {
  if (!hasInput(Ctx, I))
    return 0;
  const onnx::TypeProto *T = Ctx.getInputType(I);
  return T->has_tensor_type() ? T->tensor_type().elem_type() : 0;
}

/// A copy of input \p I's type (element type and shape) for output \p Out.
void infer::sameAsInput(InferenceContext &Ctx, size_t I, size_t Out) {
  if (!hasInput(Ctx, I) || Out >= Ctx.getNumOutputs())
    return;
  const onnx::TypeProto *T = Ctx.getInputType(I);
  if (!T->has_tensor_type())
    return;
  *Ctx.getOutputType(Out) = *T;
}

TensorShapeProto *infer::outputShape(InferenceContext &Ctx, size_t Out) {
  return Ctx.getOutputType(Out)->mutable_tensor_type()->mutable_shape();
}

void infer::addDim(TensorShapeProto &S, const TensorShapeProto::Dimension &D) {
  *S.add_dim() = D;
}
void infer::addDim(TensorShapeProto &S, int64_t V) {
  S.add_dim()->set_dim_value(V);
}
void infer::addUnknownDim(TensorShapeProto &S) { S.add_dim(); }

std::optional<int64_t> infer::known(const TensorShapeProto::Dimension &D) {
  if (D.has_dim_value())
    return D.dim_value();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Inference functions
//===----------------------------------------------------------------------===//

/// Mish, Gelu, BitwiseNot, GroupNormalization, RMSNormalization,

void infer::inferSameAsFirstInput(InferenceContext &Ctx) {
  sameAsInput(Ctx, 0, 0);
}

void infer::inferBroadcast(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (onnx::hasNInputShapes(Ctx, 2))
    onnx::bidirectionalBroadcastShapeInference(
        Ctx.getInputType(0)->tensor_type().shape(),
        Ctx.getInputType(1)->tensor_type().shape(), *outputShape(Ctx, 0));
}

//===----------------------------------------------------------------------===//
// The registry's inference rules
//===----------------------------------------------------------------------===//

const InferRule *onnxopt::findNewVersionRule(llvm::StringRef Domain,
                                             llvm::StringRef OpType,
                                             int Since) {
  const OpDef *D = lookupOp(Domain, OpType, Since);
  const InferRule *R = D ? D->Infer : nullptr;
  if (!R || R->K != InferRule::NewVersion || R->Since != Since)
    return nullptr;
  return R;
}

const InferRule *onnxopt::findNoSchemaRule(llvm::StringRef Domain,
                                           llvm::StringRef OpType,
                                           int64_t Opset) {
  const OpDef *D = lookupOp(Domain, OpType, Opset);
  const InferRule *R = D ? D->Infer : nullptr;
  return R && R->K == InferRule::NoSchema ? R : nullptr;
}

const onnx::OpSchema *onnxopt::getReusedSchema(const InferRule &R) {
  if (!R.ReuseOp)
    return nullptr;
  return onnx::OpSchemaRegistry::Schema(R.ReuseOp, R.ReuseOpset, R.Domain);
}

const char *onnxopt::attrKindCode(AttrKind K) {
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

bool onnxopt::checkSignature(const Node &N, const InferRule &Op,
                             std::string &Why) {
  constexpr int Many = ManyOperands;
  int MinIn = Op.Sig.MinInputs, MaxIn = Op.Sig.MaxInputs,
      MinOut = Op.Sig.MinOutputs, MaxOut = Op.Sig.MaxOutputs;
  // name -> kind code
  std::vector<std::pair<std::string, std::string>> Allowed;
  if (Op.Sig.FromReuse) {
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
  llvm::StringRef(Op.Sig.Attrs).split(Words, ' ', -1, false);
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
