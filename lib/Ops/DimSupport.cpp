//===- DimSupport.cpp - Helpers the families' dim rules share -------------===//
//
// Also the DimContext's own members and getDimRule, which gives an op
// without a row of its own the rule of its trait.
//
//===----------------------------------------------------------------------===//
#include "DimSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/Ops/Semantics.h"
#include <algorithm>
#include <cstdint>

using namespace onnxopt;
using namespace onnxopt::dims;

//===----------------------------------------------------------------------===//
// DimContext
//===----------------------------------------------------------------------===//

DimContext::DimContext(const Node &N, const OpDef *Def)
    : N(N), Def(Def), Out(N.getNumResults()), OutData(N.getNumResults()) {}

DimContext::~DimContext() = default;

const Type *DimContext::operandType(unsigned I) {
  const Value *V = I < N.getNumOperands() ? N.getOperand(I) : nullptr;
  return V ? &V->getType() : nullptr;
}

const DimList *DimContext::data(unsigned I) {
  std::optional<size_t> Rank;
  if (const DimList *D = dims(I))
    Rank = D->size();
  else if (const Type *T = operandType(I); T && T->isTensor() && T->hasShape())
    Rank = T->getRank();
  // Of unknown rank, the elements may be a [2, 1] that broadcasts.
  return Rank && *Rank <= 1 ? flatData(I) : nullptr;
}

std::optional<std::vector<int64_t>> DimContext::axes() {
  return readAxes(N, Def, [&](unsigned I) { return constants(data(I)); });
}

bool DimContext::givesAxes() const {
  if (!Def)
    return false;
  switch (Def->Axes.K) {
  case AxesSource::None:
    return false;
  case AxesSource::Attribute:
    return N.hasAttr(Def->Axes.Name);
  case AxesSource::Input:
    return Def->Axes.Index < N.getNumOperands() &&
           N.getOperand(Def->Axes.Index);
  }
  return false;
}

std::optional<std::vector<std::pair<int64_t, int64_t>>>
DimContext::constantBounds(unsigned I, size_t Period) const {
  if (Period == 0 || I >= N.getNumOperands() || !N.getOperand(I))
    return std::nullopt;
  Tensor T = getConstantValue(*N.getOperand(I));
  if (T.isNull() || T.getNumElements() == 0)
    return std::nullopt;
  int32_t Elem = T.getElemType();
  if (Elem != static_cast<int32_t>(ElementType::Int64) &&
      Elem != static_cast<int32_t>(ElementType::Int32))
    return std::nullopt;
  std::optional<std::vector<int64_t>> Values = T.toInt64s();
  if (!Values || Values->size() % Period != 0)
    return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> B(
      Period, {INT64_MAX, INT64_MIN});
  for (size_t E = 0; E < Values->size(); ++E) {
    auto &[Lo, Hi] = B[E % Period];
    Lo = std::min(Lo, (*Values)[E]);
    Hi = std::max(Hi, (*Values)[E]);
  }
  return B;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// numpy broadcasting of one aligned position; std::nullopt when the result
/// depends on which of two different expressions is 1.
std::optional<DimExpr> broadcastDim(llvm::ArrayRef<DimExpr> In) {
  std::optional<DimExpr> Number, Other;
  bool NumbersDiffer = false, OthersDiffer = false;
  for (const DimExpr &D : In) {
    if (D.isConstant() && D.getConstant() == 1)
      continue;
    if (D.isConstant()) {
      NumbersDiffer |= Number && *Number != D;
      Number = D;
    } else {
      OthersDiffer |= Other && *Other != D;
      Other = D;
    }
  }
  // A number other than 1 decides: every other dim is it or 1. Two
  // different numbers do not broadcast (legacy ops do not follow numpy).
  if (Number)
    return NumbersDiffer ? std::nullopt : Number;
  if (OthersDiffer)
    return std::nullopt;
  return Other ? *Other : DimExpr::constant(1);
}

} // namespace

PartialDimList dims::broadcast(llvm::ArrayRef<const DimList *> Inputs) {
  size_t Rank = 0;
  for (const DimList *D : Inputs)
    Rank = std::max(Rank, D->size());
  PartialDimList Out(Rank);
  for (size_t I = 0; I < Rank; ++I) {
    std::vector<DimExpr> Column;
    for (const DimList *D : Inputs)
      if (I + D->size() >= Rank)
        Column.push_back((*D)[I + D->size() - Rank]);
    Out[I] = broadcastDim(Column);
  }
  return Out;
}

/// Each aligned position: the dims are equal or 1. Against a number other
/// than 1 every other dim must be that number or 1; between expressions,
/// each must equal the first or one of them be 1.
void dims::requireBroadcast(DimContext &C, llvm::ArrayRef<const DimList *> In) {
  size_t Rank = 0;
  for (const DimList *D : In)
    Rank = std::max(Rank, D->size());
  for (size_t I = 0; I < Rank; ++I) {
    std::optional<DimExpr> Anchor;
    for (const DimList *D : In) {
      if (I + D->size() < Rank)
        continue;
      const DimExpr &E = (*D)[I + D->size() - Rank];
      if (E.isConstant() && E.getConstant() == 1)
        continue;
      if (!Anchor || (E.isConstant() && !Anchor->isConstant())) {
        // A number anchors the position: compare everything with it.
        if (Anchor && !Anchor->isConstant())
          C.require(DimCondition::Broadcast, *Anchor, E,
                    "broadcast dims must match");
        Anchor = E;
        continue;
      }
      C.require(DimCondition::Broadcast, E, *Anchor,
                "broadcast dims must match");
    }
  }
}

DimExpr dims::product(llvm::ArrayRef<DimExpr> D) {
  DimExpr P = DimExpr::constant(1);
  for (const DimExpr &E : D)
    P = P * E;
  return P;
}

std::optional<size_t> dims::normAxis(int64_t Axis, size_t Rank) {
  if (std::optional<int64_t> A = resolveAxis(Axis, static_cast<int64_t>(Rank)))
    return static_cast<size_t>(*A);
  return std::nullopt;
}

std::optional<std::vector<int64_t>> dims::constants(const DimList *D) {
  if (!D)
    return std::nullopt;
  std::vector<int64_t> V;
  for (const DimExpr &E : *D) {
    if (!E.isConstant())
      return std::nullopt;
    V.push_back(E.getConstant());
  }
  return V;
}

DimList dims::constantDims(llvm::ArrayRef<int64_t> Values) {
  DimList D;
  D.reserve(Values.size());
  for (int64_t X : Values)
    D.push_back(DimExpr::constant(X));
  return D;
}

bool dims::nonNegativeEverywhere(const DimExpr &E) {
  auto Zero = [](llvm::StringRef) -> std::optional<int64_t> { return 0; };
  std::optional<int64_t> AtZero = E.evaluate(Zero);
  return AtZero && *AtZero >= 0 && E.isNondecreasing(Zero);
}

size_t dims::broadcastLength(std::initializer_list<size_t> Lens) {
  size_t Len = 1;
  for (size_t L : Lens) {
    if (L == 0)
      return 0;
    if (L == 1 || L == Len)
      continue;
    if (Len != 1)
      return 0;
    Len = L;
  }
  return Len;
}

//===----------------------------------------------------------------------===//
// The trait rules
//===----------------------------------------------------------------------===//

void dims::transferShapePreserving(DimContext &C, const DimList *X) {
  if (X)
    C.setDims(0, full(*X));
}

bool dims::broadcastOperands(DimContext &C) {
  const Node &N = C.getNode();
  std::vector<const DimList *> In;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const DimList *D = C.dims(I);
    if (!D)
      return false;
    In.push_back(D);
  }
  if (!In.empty()) {
    C.setDims(0, broadcast(In));
    requireBroadcast(C, In);
  }
  return true;
}

void dims::transferBroadcast(DimContext &C, const DimList *X) {
  broadcastOperands(C);
}

void dims::transferReduce(DimContext &C, const DimList *X) {
  const Node &N = C.getNode();
  std::optional<std::vector<int64_t>> Axes = C.axes();
  if (!Axes && C.givesAxes())
    return; // axes computed at run time
  bool Keep = N.getAttrInt("keepdims", 1);
  std::vector<bool> Reduced(X->size(), !Axes || Axes->empty());
  if (Axes && Axes->empty() && N.getAttrInt("noop_with_empty_axes", 0))
    return C.setDims(0, full(*X));
  if (Axes)
    for (int64_t A : *Axes) {
      std::optional<size_t> P = normAxis(A, X->size());
      if (!P)
        return;
      Reduced[*P] = true;
    }
  PartialDimList R;
  for (size_t K = 0; K < X->size(); ++K) {
    if (!Reduced[K])
      R.push_back((*X)[K]);
    else if (Keep)
      R.push_back(DimExpr::constant(1));
  }
  C.setDims(0, std::move(R));
}

namespace {
constexpr DimRule ShapePreservingRule = {
    "", "", 1, dims::transferShapePreserving, /*NeedsFirstOperandDims=*/false};
constexpr DimRule BroadcastingRule = {"", "", 1, dims::transferBroadcast,
                                      /*NeedsFirstOperandDims=*/false};
constexpr DimRule ReductionRule = {"", "", 1, dims::transferReduce,
                                   /*NeedsFirstOperandDims=*/true};
} // namespace

const DimRule *onnxopt::getDimRule(const OpDef *D) {
  if (!D)
    return nullptr;
  if (D->Dims)
    return D->Dims;
  if (D->has(ShapePreserving))
    return &ShapePreservingRule;
  if (D->has(ElementwiseBroadcasting))
    return &BroadcastingRule;
  if (D->has(Reduction))
    return &ReductionRule;
  return nullptr;
}

void dims::transferNormalizedTail(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (!X)
    return;
  const Node &N = C.getNode();
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", -1), X->size());
  if (!Axis)
    return;
  DimList Tail(X->begin() + *Axis, X->end());
  for (unsigned I = 1; I < N.getNumOperands(); ++I)
    if (const DimList *P = C.dims(I); P && P->size() <= Tail.size())
      requireBroadcast(C, {&Tail, P});
}

std::optional<std::vector<int64_t>> onnxopt::getConstantDims(const DimList *D) {
  return dims::constants(D);
}
