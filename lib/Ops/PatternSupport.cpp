//===- PatternSupport.cpp - Helpers of the local patterns -----------------===//
#include "PatternSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/OpFacts.h"
#include <limits>

using namespace onnxopt;

Value *pattern::operandOrNull(const Node &N, unsigned I) {
  return I < N.getNumOperands() ? N.getOperand(I) : nullptr;
}

std::optional<std::vector<double>> pattern::readConstant(const Value *V,
                                                         int64_t MaxElements) {
  if (!V)
    return std::nullopt;
  Tensor T = getConstantValue(*V);
  // Count before reading: a large weight is never unpacked here.
  if (!T || T.getNumElements() > MaxElements)
    return std::nullopt;
  return T.toDoubles();
}

bool pattern::isSplatConstant(const Value *V, double X, int64_t MaxElements) {
  std::optional<std::vector<double>> Values = readConstant(V, MaxElements);
  if (!Values)
    return false;
  for (double D : *Values)
    if (D != X)
      return false;
  return true;
}

bool pattern::broadcastKeepsShape(const Type &X, llvm::ArrayRef<int64_t> Dims) {
  if (!X.isTensor() || !X.hasShape() || Dims.size() > X.getRank())
    return false;
  llvm::ArrayRef<Dim> XDims = X.getDims();
  size_t Offset = XDims.size() - Dims.size();
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (Dims[I] == 1)
      continue;
    const Dim &D = XDims[Offset + I];
    if (!D.isKnown() || D.getValue() != Dims[I])
      return false;
  }
  return true;
}

bool pattern::sameTensorType(const Type &A, const Type &B) {
  if (!A.isTensor() || !B.isTensor() || A.getElemType() != B.getElemType() ||
      !A.hasShape() || !B.hasShape() || A.getRank() != B.getRank())
    return false;
  for (size_t I = 0; I < A.getRank(); ++I) {
    const Dim &DA = A.getDims()[I], &DB = B.getDims()[I];
    if (DA.isUnknown() || DB.isUnknown() || DA != DB)
      return false;
  }
  return true;
}

LogicalResult pattern::forwardOperand(Node &N, Value *In, Rewriter &R) {
  Value *Out = N.getNumResults() == 1 ? N.getResult(0) : nullptr;
  if (!Out || !In)
    return R.notifyMatchFailure(N, "expected one result and an operand");
  int32_t InET = In->getType().getElemType(),
          OutET = Out->getType().getElemType();
  if (InET && OutET && InET != OutET)
    return R.notifyMatchFailure(N, "result has another element type");
  if (!canReplaceAllUsesWith(Out, In))
    return R.notifyMatchFailure(
        N, "result is a graph output that the operand cannot replace");
  if (failed(R.replaceAllUsesWith(Out, In)))
    return R.notifyMatchFailure(N, "the graph interface forbids it");
  // N, and the constants and shape arithmetic that fed only N.
  R.eraseDeadChain(N);
  return success();
}

static Attribute copyAttribute(const Attribute &A) {
  Attribute C;
  C.Name = A.Name;
  C.I = A.I;
  C.F = A.F;
  C.Kind = A.Kind;
  C.S = A.S;
  C.Ints = A.Ints;
  C.Floats = A.Floats;
  C.Strings = A.Strings;
  C.Tensors = A.Tensors;
  C.Residual = A.Residual;
  return C;
}

Node *pattern::cloneNode(const Node &N, llvm::ArrayRef<Value *> Operands,
                         Rewriter &R) {
  for (const Attribute &A : N.getAttrs())
    if (A.isGraph())
      return nullptr;
  Node *C = R.createNode(N.getOpType(), Operands, N.getNumResults(),
                         N.getDomain(), N.getName());
  for (const Attribute &A : N.getAttrs())
    C->setAttr(copyAttribute(A));
  for (unsigned I = 0, E = N.getNumResults(); I < E; ++I)
    if (N.getResult(I) && C->getResult(I))
      C->getResult(I)->setType(N.getResult(I)->getType());
  return C;
}

int64_t pattern::saturatingAdd(int64_t A, int64_t B) {
  int64_t Out;
  if (!__builtin_add_overflow(A, B, &Out))
    return Out;
  return B > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}
