//===- DimSupport.h - Helpers the families' dim rules share ----*- C++ -*-===//
//
// Private to lib/Ops: numpy broadcasting of dims, axis resolution, shape
// data helpers, and the trait rules (ShapePreserving,
// ElementwiseBroadcasting, Reduction) that several families build their
// own rules on.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_OPS_DIMSUPPORT_H
#define ONNXOPT_LIB_OPS_DIMSUPPORT_H

#include "onnxopt/Ops/DimRules.h"
#include "llvm/ADT/ArrayRef.h"
#include <initializer_list>

namespace onnxopt {
namespace dims {

/// numpy broadcasting of every aligned position (std::nullopt where the
/// result depends on which of two different expressions is 1).
PartialDimList broadcast(llvm::ArrayRef<const DimList *> Inputs);

/// Requires each aligned position to broadcast: the dims are equal or 1.
void requireBroadcast(DimContext &C, llvm::ArrayRef<const DimList *> In);

inline PartialDimList full(const DimList &D) {
  return PartialDimList(D.begin(), D.end());
}

DimExpr product(llvm::ArrayRef<DimExpr> D);

/// Normalizes a possibly negative axis; std::nullopt when out of range.
std::optional<size_t> normAxis(int64_t Axis, size_t Rank);

/// The values of \p D when every element is a number.
std::optional<std::vector<int64_t>> constants(const DimList *D);

/// Known numbers as dims or data.
DimList constantDims(llvm::ArrayRef<int64_t> Values);

/// True if \p E is at least 0 at every non-negative value of its symbols:
/// at least 0 where they are all 0, and never decreasing as they grow. Not
/// the symbol domain's default (dims >= 1): a dim may be 0 (an empty KV
/// cache), and `past - 1` is then -1.
bool nonNegativeEverywhere(const DimExpr &E);

/// The length numpy broadcasting gives 1-D data of lengths \p Lens, or 0
/// when they do not broadcast (or one is empty).
size_t broadcastLength(std::initializer_list<size_t> Lens);

/// Element \p I of data broadcast from \p D (one element or as many).
inline const DimExpr &elementAt(const DimList &D, size_t I) {
  return D[D.size() == 1 ? 0 : I];
}

// The trait rules, for the ops that add to them.

/// ShapePreserving: the first result has the first operand's shape.
void transferShapePreserving(DimContext &C, const DimList *X);
/// The normalizations over X[axis:] (LayerNormalization, RMSNormalization):
/// X's shape; every other operand (scale, bias) broadcasts to X[axis:].
void transferNormalizedTail(DimContext &C, const DimList *X);
/// ElementwiseBroadcasting: numpy broadcasting of every operand.
void transferBroadcast(DimContext &C, const DimList *X);
/// transferBroadcast's work; false when some operand's dims are unknown
/// (nothing was computed).
bool broadcastOperands(DimContext &C);
/// Reduction: the axes reduced (to 1 with keepdims) or dropped.
void transferReduce(DimContext &C, const DimList *X);

} // namespace dims
} // namespace onnxopt

#endif // ONNXOPT_LIB_OPS_DIMSUPPORT_H
