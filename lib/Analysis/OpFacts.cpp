//===- OpFacts.cpp - What every pass may assume about an op ---------------===//
//
// The lists are sorted arrays searched by bisection: no static constructors,
// and a unit test checks the order.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/IR/IR.h"
#include <algorithm>
#include <climits>

using namespace onnxopt;

namespace {

bool contains(llvm::ArrayRef<llvm::StringLiteral> Sorted, llvm::StringRef Op) {
  const llvm::StringLiteral *It = std::lower_bound(
      Sorted.begin(), Sorted.end(), Op,
      [](llvm::StringRef A, llvm::StringRef B) { return A < B; });
  return It != Sorted.end() && *It == Op;
}

// Checked against ONNX's operator definitions: each op's first output has
// the first input's shape at every opset it exists in (PRelu's slope and
// the normalizations' parameters broadcast to the input, Clip's bounds are
// scalars, QuantizeLinear/DequantizeLinear keep x's shape).
constexpr llvm::StringLiteral ShapePreservingOps[] = {
    "Abs",
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "BatchNormalization",
    "BitwiseNot",
    "Cast",
    "CastLike",
    "Ceil",
    "Celu",
    "Clip",
    "Cos",
    "Cosh",
    "CumSum",
    "DequantizeLinear",
    "Dropout",
    "Elu",
    "Erf",
    "Exp",
    "Floor",
    "Gelu",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "Identity",
    "InstanceNormalization",
    "IsInf",
    "IsNaN",
    "LRN",
    "LayerNormalization",
    "LeakyRelu",
    "Log",
    "LogSoftmax",
    "LpNormalization",
    "MeanVarianceNormalization",
    "Mish",
    "Neg",
    "Not",
    "PRelu",
    "QuantizeLinear",
    "Reciprocal",
    "Relu",
    "ReverseSequence",
    "Round",
    "Selu",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Softmax",
    "Softplus",
    "Softsign",
    "Sqrt",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "Trilu",
};

constexpr llvm::StringLiteral ElementwiseBroadcastingOps[] = {
    "Add",        "And",         "BitShift", "BitwiseAnd", "BitwiseOr",
    "BitwiseXor", "Div",         "Equal",    "Greater",    "GreaterOrEqual",
    "Less",       "LessOrEqual", "Max",      "Mean",       "Min",
    "Mod",        "Mul",         "Or",       "Pow",        "Sub",
    "Sum",        "Where",       "Xor",
};

constexpr llvm::StringLiteral ReductionOps[] = {
    "ReduceL1",  "ReduceL2",        "ReduceLogSum", "ReduceLogSumExp",
    "ReduceMax", "ReduceMean",      "ReduceMin",    "ReduceProd",
    "ReduceSum", "ReduceSumSquare",
};

// ONNX's random ops and Dropout (random in training mode); the last three
// Dropout forms are onnxruntime's com.microsoft ops.
constexpr llvm::StringLiteral NondeterministicOps[] = {
    "Bernoulli",         "BiasDropout",      "BitmaskBiasDropout",
    "BitmaskDropout",    "Dropout",          "Multinomial",
    "RandomNormal",      "RandomNormalLike", "RandomUniform",
    "RandomUniformLike",
};

constexpr llvm::StringLiteral ValueDependentShapeOps[] = {
    "Compress", "NonMaxSuppression", "NonZero", "Unique"};

bool hasFirstOperand(const Node &N) {
  return N.getNumOperands() > 0 && N.getOperand(0);
}

} // namespace

llvm::ArrayRef<llvm::StringLiteral> onnxopt::getShapePreservingOps() {
  return ShapePreservingOps;
}

bool onnxopt::isShapePreservingOp(llvm::StringRef OpType) {
  return contains(ShapePreservingOps, OpType);
}

bool onnxopt::isShapePreserving(const Node &N) {
  return N.isOnnxDomain() && hasFirstOperand(N) &&
         isShapePreservingOp(N.getOpType());
}

llvm::ArrayRef<llvm::StringLiteral> onnxopt::getElementwiseBroadcastingOps() {
  return ElementwiseBroadcastingOps;
}

bool onnxopt::isElementwiseBroadcastingOp(llvm::StringRef OpType) {
  return contains(ElementwiseBroadcastingOps, OpType);
}

bool onnxopt::isElementwiseBroadcasting(const Node &N) {
  return N.isOnnxDomain() && isElementwiseBroadcastingOp(N.getOpType());
}

llvm::ArrayRef<llvm::StringLiteral> onnxopt::getReductionOps() {
  return ReductionOps;
}

bool onnxopt::isReductionOp(llvm::StringRef OpType) {
  return contains(ReductionOps, OpType);
}

bool onnxopt::isNondeterministic(const Node &N) {
  return contains(NondeterministicOps, N.getOpType());
}

bool onnxopt::hasValueDependentShape(llvm::StringRef OpType) {
  return contains(ValueDependentShapeOps, OpType);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

namespace {

/// From IR 4 an initializer that is also a graph input is only a default.
bool isOverridable(const Value &V) {
  if (!V.isGraphInput())
    return false;
  const Graph *G = V.getOwningGraph();
  return !G || G->getModel().getIrVersion() >= 4;
}

/// The node that makes \p V when it is a well-formed `Constant` (one
/// result, one value attribute).
const Node *definingConstant(const Value &V) {
  const Node *Def = V.getDefiningNode();
  if (!Def || !Def->is("Constant") || Def->getNumResults() != 1 ||
      Def->getAttrs().size() != 1)
    return nullptr;
  return Def;
}

} // namespace

const Tensor *onnxopt::getStoredConstant(const Value &V) {
  if (V.hasInitializer())
    return isOverridable(V) ? nullptr : &V.getInitializer();
  const Node *Def = definingConstant(V);
  if (!Def)
    return nullptr;
  const Attribute &A = Def->getAttrs().front();
  if (A.Name != "value" || A.Kind != AttrKind::Tensor || A.Tensors.empty())
    return nullptr;
  return &A.Tensors.front();
}

bool onnxopt::isConstant(const Value &V) {
  if (V.hasInitializer())
    return !isOverridable(V);
  return definingConstant(V) != nullptr;
}

Tensor onnxopt::getConstantValue(const Value &V) {
  if (V.hasInitializer())
    return isOverridable(V) ? Tensor() : V.getInitializer();
  const Node *Def = definingConstant(V);
  return Def ? getConstantNodeValue(*Def) : Tensor();
}

std::optional<ConstantInts> onnxopt::getConstantInts(const Value &V,
                                                     size_t MaxElements) {
  Tensor T = getConstantValue(V);
  if (T.isNull())
    return std::nullopt;
  int32_t Elem = T.getElemType();
  if (Elem != static_cast<int32_t>(ElementType::Int64) &&
      Elem != static_cast<int32_t>(ElementType::Int32))
    return std::nullopt;
  size_t Rank = T.getDims().size();
  if (Rank > 1 || T.getNumElements() > static_cast<int64_t>(MaxElements))
    return std::nullopt;
  std::optional<std::vector<int64_t>> Values = T.toInt64s();
  if (!Values)
    return std::nullopt;
  return ConstantInts{std::move(*Values), Rank == 0};
}

Tensor onnxopt::getConstantNodeValue(const Node &N) {
  if (N.getNumResults() != 1 || !N.getResult(0) || N.getAttrs().size() != 1)
    return Tensor();
  const Attribute &A = N.getAttrs().front();
  llvm::StringRef Name = N.getResult(0)->getName();
  if (A.Name == "value" && A.Kind == AttrKind::Tensor && !A.Tensors.empty() &&
      A.Tensors.front().getElemType() !=
          static_cast<int32_t>(ElementType::String))
    return A.Tensors.front();
  if (A.Name == "value_int" && A.Kind == AttrKind::Int)
    return Tensor::fromInt64s(Name, {}, {A.I});
  if (A.Name == "value_ints" && A.Kind == AttrKind::Ints)
    return Tensor::fromInt64s(Name, {int64_t(A.Ints.size())}, A.Ints);
  if (A.Name == "value_float" && A.Kind == AttrKind::Float)
    return Tensor::fromFloats(Name, {}, {A.F});
  if (A.Name == "value_floats" && A.Kind == AttrKind::Floats)
    return Tensor::fromFloats(Name, {int64_t(A.Floats.size())}, A.Floats);
  return Tensor();
}
