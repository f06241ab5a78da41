//===- OpFacts.cpp - What every pass may assume about an op ---------------===//
//
// The op predicates read the op registry's traits (OpDef.h): the lists
// exist once, in the family files' trait rows.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/OpDef.h"
#include <algorithm>
#include <onnx/onnx_pb.h>
#include <climits>

using namespace onnxopt;

namespace {

/// Any opset: the newest definition of an op (the traits asked here hold
/// at every version).
constexpr int64_t AnyOpset = INT32_MAX;

bool hasTraitByName(llvm::StringRef Domain, llvm::StringRef OpType, OpTrait T) {
  const OpDef *D = lookupOp(Domain, OpType, AnyOpset);
  return D && D->has(T);
}

/// The default-domain ops with trait \p T at some version, sorted and
/// unique (built once).
std::vector<llvm::StringRef> opsWithTrait(OpTrait T) {
  std::vector<llvm::StringRef> Ops;
  for (const OpDef *D : getAllOpDefs())
    if (D->Domain.empty() && D->has(T) &&
        (Ops.empty() || Ops.back() != D->OpType))
      Ops.push_back(D->OpType);
  return Ops;
}

bool hasFirstOperand(const Node &N) {
  return N.getNumOperands() > 0 && N.getOperand(0);
}

} // namespace

const std::vector<llvm::StringRef> &onnxopt::getShapePreservingOps() {
  static const std::vector<llvm::StringRef> Ops = opsWithTrait(ShapePreserving);
  return Ops;
}

bool onnxopt::isShapePreservingOp(llvm::StringRef OpType) {
  return hasTraitByName("", OpType, ShapePreserving);
}

bool onnxopt::isShapePreserving(const Node &N) {
  return hasFirstOperand(N) && hasTrait(N, ShapePreserving);
}

const std::vector<llvm::StringRef> &onnxopt::getElementwiseBroadcastingOps() {
  static const std::vector<llvm::StringRef> Ops =
      opsWithTrait(ElementwiseBroadcasting);
  return Ops;
}

bool onnxopt::isElementwiseBroadcastingOp(llvm::StringRef OpType) {
  return hasTraitByName("", OpType, ElementwiseBroadcasting);
}

bool onnxopt::isElementwiseBroadcasting(const Node &N) {
  return hasTrait(N, ElementwiseBroadcasting);
}

const std::vector<llvm::StringRef> &onnxopt::getReductionOps() {
  static const std::vector<llvm::StringRef> Ops = opsWithTrait(Reduction);
  return Ops;
}

bool onnxopt::isReductionOp(llvm::StringRef OpType) {
  return hasTraitByName("", OpType, Reduction);
}

bool onnxopt::isNondeterministic(const Node &N) {
  // By name in every domain (OpTrait::Nondeterministic): the registry
  // defines them in the default domain and onnxruntime's.
  llvm::StringRef Op = N.getOpType();
  return hasTraitByName("", Op, Nondeterministic) ||
         hasTraitByName("com.microsoft", Op, Nondeterministic);
}

const Value *onnxopt::trigAngles(const Value &V, bool &IsSin, double &Scale) {
  const Value *Cur = &V;
  Scale = 1.0;
  for (unsigned Step = 0; Step < 8 && Cur; ++Step) {
    const Node *Def = Cur->getDefiningNode();
    if (!Def || !Def->isOnnxDomain() || Def->getNumOperands() == 0)
      return nullptr;
    llvm::StringRef Op = Def->getOpType();
    if (Op == "Cos" || Op == "Sin") {
      IsSin = Op == "Sin";
      return Def->getOperand(0);
    }
    // transformers' `cos * attention_scaling` then `.to(dtype)`: a scalar
    // factor, and a cast between float types.
    if (Op == "Cast") {
      int64_t To = Def->getAttrInt("to", 0);
      if (To != onnx::TensorProto::FLOAT && To != onnx::TensorProto::DOUBLE)
        return nullptr;
      Cur = Def->getOperand(0);
      continue;
    }
    if (Op == "Mul" && Def->getNumOperands() == 2 && Def->getOperand(1)) {
      Tensor K = getConstantValue(*Def->getOperand(1));
      std::optional<std::vector<double>> F = K ? K.toDoubles() : std::nullopt;
      if (!F || F->size() != 1)
        return nullptr;
      Scale *= F->front();
      Cur = Def->getOperand(0);
      continue;
    }
    if (!hasTrait(*Def, ViewLike) && !hasTrait(*Def, IdentityOp))
      return nullptr;
    Cur = Def->getOperand(0);
  }
  return nullptr;
}

namespace {
/// The rank of operand \p I of \p N as recorded; 0 when absent or unknown.
size_t operandRank(const Node &N, unsigned I) {
  const Value *V = I < N.getNumOperands() ? N.getOperand(I) : nullptr;
  return V && V->getType().hasShape() ? V->getType().getRank() : 0;
}

bool hasOperandAt(const Node &N, unsigned I) {
  return I < N.getNumOperands() && N.getOperand(I);
}
} // namespace

std::optional<std::pair<unsigned, unsigned>>
onnxopt::exactDimPartner(const Node &N, unsigned Operand, unsigned FromRight) {
  if (!N.isOnnxDomain() || FromRight == 0)
    return std::nullopt;
  llvm::StringRef Op = N.getOpType();
  // Q, K and V are [B, heads, seq, size] or [B, seq, hidden].
  size_t QKVRank = operandRank(N, 0);
  unsigned SeqAxis = QKVRank == 4 ? 2 : 1;
  if (Op == "Attention" && Operand == 3 && (QKVRank == 3 || QKVRank == 4) &&
      !hasOperandAt(N, 4)) {
    if (FromRight == 1)
      return std::make_pair(1u, SeqAxis);
    if (FromRight == 2)
      return std::make_pair(0u, SeqAxis);
    return std::nullopt;
  }
  // RotaryEmbedding's caches without position_ids: [B, seq, half].
  if (Op == "RotaryEmbedding" && (Operand == 1 || Operand == 2) &&
      !hasOperandAt(N, 3) && (QKVRank == 3 || QKVRank == 4)) {
    if (FromRight == 3)
      return std::make_pair(0u, 0u);
    if (FromRight == 2)
      return std::make_pair(0u, SeqAxis);
  }
  return std::nullopt;
}

bool onnxopt::hasValueDependentShape(llvm::StringRef OpType) {
  return hasTraitByName("", OpType, ValueDependentShape);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

namespace {

/// The node that makes \p V when it is a well-formed `Constant` (one
/// result, one value attribute).
const Node *definingConstant(const Value &V) {
  const Node *Def = V.getDefiningNode();
  // The cheap checks first: this runs for every operand asked about.
  if (!Def || Def->getNumResults() != 1 || Def->getAttrs().size() != 1 ||
      !hasTrait(*Def, ConstantProducer))
    return nullptr;
  return Def;
}

} // namespace

bool onnxopt::isOverridableInitializer(const Value &V) {
  if (!V.hasInitializer() || !V.isGraphInput())
    return false;
  const Graph *G = V.getOwningGraph();
  return !G || G->getModel().getIrVersion() >= 4;
}

const Tensor *onnxopt::getStoredConstant(const Value &V) {
  if (V.hasInitializer())
    return &V.getInitializer();
  const Node *Def = definingConstant(V);
  if (!Def)
    return nullptr;
  const Attribute &A = Def->getAttrs().front();
  if (A.Name != "value" || A.Kind != AttrKind::Tensor || A.Tensors.empty())
    return nullptr;
  return &A.Tensors.front();
}

bool onnxopt::isConstant(const Value &V) {
  return V.hasInitializer() || definingConstant(V) != nullptr;
}

Tensor onnxopt::getConstantValue(const Value &V) {
  if (V.hasInitializer())
    return V.getInitializer();
  const Node *Def = definingConstant(V);
  return Def ? getConstantNodeValue(*Def) : Tensor();
}

Tensor onnxopt::getFoldableConstantValue(const Value &V) {
  return isOverridableInitializer(V) ? Tensor() : getConstantValue(V);
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
