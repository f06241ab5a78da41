//===- PatternSupport.h - Helpers of the local patterns --------*- C++ -*-===//
//
// What the "Local patterns" sections of the family files share
// (PatternRules.h): reading small constants, deciding symbolically that a
// broadcast keeps a shape, forwarding an operand in place of a result, copying
// a node. Private to lib/Ops.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_OPS_PATTERNSUPPORT_H
#define ONNXOPT_LIB_OPS_PATTERNSUPPORT_H

#include "onnxopt/IR/Tensor.h"
#include "onnxopt/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <vector>

namespace onnxopt {
class Node;
class Rewriter;
class Type;
class Value;
namespace pattern {

/// Operand \p I of \p N, or null when absent or omitted.
Value *operandOrNull(const Node &N, unsigned I);

/// True when \p V is a constant of at most \p MaxElements elements, every
/// one equal to \p X (numerically; +0 and -0 are both 0).
bool isSplatConstant(const Value *V, double X, int64_t MaxElements = 1 << 20);

/// \p V's constant contents as doubles, when it is a constant of a float
/// or integer type with at most \p MaxElements elements.
std::optional<std::vector<double>> readConstant(const Value *V,
                                                int64_t MaxElements);

/// True when broadcasting \p X against a tensor of dims \p Dims gives
/// exactly \p X's shape at every shape \p X's symbols allow: \p X's rank is
/// known, \p Dims has no more dims, and each of \p Dims (aligned right) is 1
/// or equal to \p X's known dim. A symbolic dim against a dim above 1 could
/// be 1 and grow, so it is refused.
bool broadcastKeepsShape(const Type &X, llvm::ArrayRef<int64_t> Dims);

/// True when \p A and \p B are tensors of one element type and one shape,
/// dim by dim (equal known values or equal symbols; an unknown dim is
/// never equal to anything).
bool sameTensorType(const Type &A, const Type &B);

/// Replaces the single result of \p N by \p In and erases \p N, with the
/// producers only \p N kept alive; failure (no change) when the graph
/// interface forbids it or \p In's element type differs from the result's.
LogicalResult forwardOperand(Node &N, Value *In, Rewriter &R);

/// \p N, recreated at the insertion point with \p Operands (every
/// attribute copied, one result per result of \p N with its type), or null
/// when an attribute holds a graph (not copied here).
Node *cloneNode(const Node &N, llvm::ArrayRef<Value *> Operands, Rewriter &R);

/// \p A + \p B, saturated at the int64 limits (Slice bounds near INT64_MAX).
int64_t saturatingAdd(int64_t A, int64_t B);

/// Conv + Mul/Add of a per-channel constant folded into the Conv
/// (NNOps.cpp; listed among Mul's and Add's patterns in MathOps.cpp).
LogicalResult fuseConvMul(Node &N, Rewriter &R);
LogicalResult fuseConvAdd(Node &N, Rewriter &R);

} // namespace pattern
} // namespace onnxopt

#endif // ONNXOPT_LIB_OPS_PATTERNSUPPORT_H
