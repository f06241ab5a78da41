//===- OpFacts.h - What every pass may assume about an op ------*- C++ -*-===//
//
// The facts about ONNX ops and values that several passes and analyses
// need, written once: which ops keep their operand's shape, which broadcast
// numpy-style, which are not a function of their inputs, what counts as a
// constant, and ONNX's index rules for Slice and Shape. A pass that needs one
// of these asks here instead of keeping a list of its own, so that fold-shapes,
// the dim analysis, cse and constant-fold cannot disagree about an op.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_OPFACTS_H
#define ONNXOPT_OPS_OPFACTS_H

#include "onnxopt/IR/Tensor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace onnxopt {

class Node;
class Value;

//===----------------------------------------------------------------------===//
// Op predicates (default domain unless said otherwise), read off the op
// registry's traits (OpDef.h)
//===----------------------------------------------------------------------===//

/// Ops whose first result has exactly the shape of their first operand,
/// at every opset: unary elementwise math and activations, casts, the
/// normalizations (their statistics results have other shapes), and ops
/// that move elements within a dim (CumSum, ReverseSequence, Trilu).
/// Sorted (registry traits: ShapePreserving).
const std::vector<llvm::StringRef> &getShapePreservingOps();
bool isShapePreservingOp(llvm::StringRef OpType);
/// isShapePreservingOp for a default-domain node that has a first operand.
bool isShapePreserving(const Node &N);

/// Ops whose result is their operands broadcast numpy-style, at the opsets
/// exporters use (before opset 7 some had an `axis` attribute instead).
/// Sorted (registry traits: ElementwiseBroadcasting).
const std::vector<llvm::StringRef> &getElementwiseBroadcastingOps();
bool isElementwiseBroadcastingOp(llvm::StringRef OpType);
bool isElementwiseBroadcasting(const Node &N);

/// The Reduce* ops (axes as attribute, or as input from opset 13/18).
/// Sorted (registry traits: Reduction).
const std::vector<llvm::StringRef> &getReductionOps();
bool isReductionOp(llvm::StringRef OpType);

/// Ops whose results are not a function of their inputs (the random ops,
/// Dropout and onnxruntime's com.microsoft dropouts), in any domain: a
/// custom op of the same name is not trusted to be pure either. They are
/// never folded or merged.
bool isNondeterministic(const Node &N);

/// Ops whose result dims depend on the values of their operands, not only
/// on their shapes (NonZero, NonMaxSuppression, Unique, Compress).
bool hasValueDependentShape(llvm::StringRef OpType);

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The tensor the model stores as \p V's contents, or null: an initializer
/// that is not a graph input (any initializer before IR 4, where every
/// initializer was also listed as an input; from IR 4 an input's
/// initializer is only a default the caller may override), or the `value`
/// tensor of the `Constant` node that produces \p V.
const Tensor *getStoredConstant(const Value &V);

/// True when the model fixes \p V's contents: a stored constant, or the
/// result of a `Constant` node of any form (value_int(s), value_float(s),
/// value_string(s), sparse_value).
bool isConstant(const Value &V);

/// The constant contents of \p V, or a null Tensor: a stored constant, or
/// what a `Constant` node's value_int(s)/value_float(s) make. Strings and
/// sparse values give a null Tensor (nothing here evaluates them).
Tensor getConstantValue(const Value &V);

/// The contents of a small integer constant: the shape tensors, indices,
/// axes and Slice bounds that shape arithmetic is made of.
struct ConstantInts {
  std::vector<int64_t> Values;
  bool Scalar = false;
};

/// \p V's contents when it is an int32 or int64 constant of rank 0 or 1
/// with at most \p MaxElements elements; std::nullopt otherwise.
std::optional<ConstantInts> getConstantInts(const Value &V, size_t MaxElements);

/// The tensor a `Constant` node produces (`value`, `value_int(s)`,
/// `value_float(s)`), named after its result; a null Tensor for strings,
/// sparse values and malformed nodes.
Tensor getConstantNodeValue(const Node &N);

//===----------------------------------------------------------------------===//
// Index rules
//===----------------------------------------------------------------------===//

/// An axis attribute or input on a value of rank \p Rank: in [-Rank, Rank-1],
/// negative counting from the back; std::nullopt when out of range.
std::optional<int64_t> resolveAxis(int64_t Axis, int64_t Rank);

/// ONNX Slice's rule for one start or end index on an axis of length \p Len
/// (>= 0): a negative index counts from the back (Len is added once), then
/// it is clamped to [0, Len] for a positive \p Step; for a negative step
/// starts clamp to [0, Len-1] and ends to [-1, Len-1] (-1: up to and
/// including element 0). On an empty axis with a negative step both are -1.
int64_t clampSliceIndex(int64_t Index, int64_t Len, int64_t Step, bool IsEnd);

/// One axis of a Slice after ONNX's rules: the first element taken, the
/// step, and how many elements are taken.
struct SliceAxis {
  int64_t Start = 0;
  int64_t Step = 1;
  int64_t Count = 0;
  /// Index of the \p I-th element taken (I < Count).
  int64_t at(int64_t I) const { return Start + I * Step; }
};

/// Slice from \p Start to \p End by \p Step on an axis of length \p Len;
/// std::nullopt for a zero step or a negative length (invalid models).
/// Steps of any size, INT64_MIN and INT64_MAX included, do not overflow.
std::optional<SliceAxis> resolveSliceAxis(int64_t Len, int64_t Start,
                                          int64_t End, int64_t Step);

/// A Slice end that takes an axis whole from a start of 0 whatever the
/// axis' length: exporters write INT32_MAX or INT64_MAX for `x[a:]`, and
/// no dim of a model is that long (the ONNX legacy IR even truncates dims
/// above 2^31).
bool isSliceEndPastAnyDim(int64_t End);

/// Shape-15's start and end attributes on a value of rank \p Rank: the
/// half-open range [first, second) of dims it returns (second >= first).
std::pair<int64_t, int64_t> resolveShapeRange(int64_t Rank, int64_t Start,
                                              int64_t End);

} // namespace onnxopt

#endif // ONNXOPT_OPS_OPFACTS_H
