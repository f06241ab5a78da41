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

bool onnxopt::hasValueDependentShape(llvm::StringRef OpType) {
  return hasTraitByName("", OpType, ValueDependentShape);
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
  // The cheap checks first: this runs for every operand asked about.
  if (!Def || Def->getNumResults() != 1 || Def->getAttrs().size() != 1 ||
      !hasTrait(*Def, ConstantProducer))
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

//===----------------------------------------------------------------------===//
// Index rules
//===----------------------------------------------------------------------===//

std::optional<int64_t> onnxopt::resolveAxis(int64_t Axis, int64_t Rank) {
  if (Axis < -Rank || Axis >= Rank)
    return std::nullopt;
  return Axis < 0 ? Axis + Rank : Axis;
}

int64_t onnxopt::clampSliceIndex(int64_t Index, int64_t Len, int64_t Step,
                                 bool IsEnd) {
  // Len >= 0, so adding it to a negative index cannot overflow.
  if (Index < 0)
    Index += Len;
  int64_t Lo = Step < 0 && IsEnd ? -1 : 0;
  int64_t Hi = Step < 0 ? Len - 1 : Len;
  // Lo first: on an empty axis with a negative step Hi is -1 < Lo = 0, and
  // ONNX takes Hi there (std::clamp would be undefined).
  if (Index < Lo)
    Index = Lo;
  if (Index > Hi)
    Index = Hi;
  return Index;
}

std::optional<SliceAxis> onnxopt::resolveSliceAxis(int64_t Len, int64_t Start,
                                                   int64_t End, int64_t Step) {
  if (Step == 0 || Len < 0)
    return std::nullopt;
  SliceAxis A;
  A.Step = Step;
  A.Start = clampSliceIndex(Start, Len, Step, /*IsEnd=*/false);
  int64_t E = clampSliceIndex(End, Len, Step, /*IsEnd=*/true);
  // The distance is at most Len + 1; counting by (distance - 1) / |step| + 1
  // never adds to the step, and |INT64_MIN| is taken as INT64_MAX (either
  // is longer than any axis).
  int64_t Distance = Step > 0 ? E - A.Start : A.Start - E;
  int64_t Magnitude = Step > 0 ? Step : Step == INT64_MIN ? INT64_MAX : -Step;
  A.Count = Distance > 0 ? (Distance - 1) / Magnitude + 1 : 0;
  return A;
}

bool onnxopt::isSliceEndPastAnyDim(int64_t End) { return End >= INT32_MAX; }

std::pair<int64_t, int64_t>
onnxopt::resolveShapeRange(int64_t Rank, int64_t Start, int64_t End) {
  if (Start < 0)
    Start += Rank;
  if (End < 0)
    End += Rank;
  Start = std::clamp<int64_t>(Start, 0, Rank);
  End = std::clamp<int64_t>(End, Start, Rank);
  return {Start, End};
}
