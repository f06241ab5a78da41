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
#include "onnxopt/Ops/Semantics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace onnxopt {

class Node;
class Type;
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

/// The angles \p V is \p Scale times the cosine or sine of (\p IsSin says
/// which): \p V is Cos(A) or Sin(A) of the default domain, seen through
/// ops that only reshape or copy their first operand (Unsqueeze, Reshape,
/// Identity, ...), casts between float types and Muls by a constant
/// scalar. Null when it is not.
const Value *trigAngles(const Value &V, bool &IsSin, double &Scale);

/// Where dim \p FromRight (1 = the last) of operand \p Operand of \p N must
/// equal a dim of another operand exactly, not by broadcasting, for \p N
/// to run on ONNX Runtime: that operand and dim. An Attention's attn_mask
/// rows and columns are Q's and K's sequences (without a past cache);
/// RotaryEmbedding's caches without position_ids are X's batch and
/// sequence. std::nullopt for every other operand and op. The ranks are
/// read from the operands' recorded types.
std::optional<std::pair<unsigned, unsigned>>
exactDimPartner(const Node &N, unsigned Operand, unsigned FromRight);

/// Ops whose result dims depend on the values of their operands, not only
/// on their shapes (NonZero, NonMaxSuppression, Unique, Compress).
bool hasValueDependentShape(llvm::StringRef OpType);

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

// Two views of a constant. The shape passes (inference, the dim analysis,
// fold-shapes, make-dynamic, freeze-dims, check-static, ...) read every
// initializer as a constant, also one that is listed in graph.input: IR 3
// required every initializer there, and exporters that kept the habit
// (torch's keep_initializers_as_inputs) list weights and baked shape
// tensors as inputs nobody feeds. Reasoning about shapes as if a caller
// could replace a Reshape target made make-dynamic find nothing to check
// and exit 0 on a model that failed at every new shape (issue 31). A pass
// that lets the user name such an input (make-dynamic's shapes=) drops its
// initializer first, so it stops being a constant. The value passes
// (constant-fold) keep such an input from IR 4 on: replacing it by its
// default would drop an override the caller may still make.

/// The tensor the model stores as \p V's contents, or null: any
/// initializer (graph input or not, see above), or the `value` tensor of
/// the `Constant` node that produces \p V.
const Tensor *getStoredConstant(const Value &V);

/// True when the model fixes \p V's contents for shape reasoning: a stored
/// constant, or the result of a `Constant` node of any form (value_int(s),
/// value_float(s), value_string(s), sparse_value).
bool isConstant(const Value &V);

/// The constant contents of \p V for shape reasoning, or a null Tensor: a
/// stored constant, or what a `Constant` node's value_int(s)/value_float(s)
/// make. Strings and sparse values give a null Tensor (nothing here
/// evaluates them).
Tensor getConstantValue(const Value &V);

/// True for an initializer that is also a graph input of a model from IR 4
/// on: a default the caller may override.
bool isOverridableInitializer(const Value &V);

/// getConstantValue for a pass that replaces values by what they evaluate
/// to (constant-fold): a null Tensor for an overridable initializer.
Tensor getFoldableConstantValue(const Value &V);

/// The contents of a small integer constant: the shape tensors, indices,
/// axes and Slice bounds that shape arithmetic is made of.
struct ConstantInts {
  std::vector<int64_t> Values;
  bool Scalar = false;
};

/// \p V's contents when it is an int32 or int64 constant of rank 0 or 1
/// with at most \p MaxElements elements; std::nullopt otherwise.
std::optional<ConstantInts> getConstantInts(const Value &V, size_t MaxElements);

//===----------------------------------------------------------------------===//
// Control flow (ControlFlowOps.cpp)
//===----------------------------------------------------------------------===//

/// True when \p N is an If each of whose branches outputs, for result
/// \p Result, a tensor of known element type and rank that \p Declared
/// allows (same kind, element type and rank, no two known dims differ).
/// Whichever branch runs, the result then has a type \p Declared allows: a
/// contradiction between \p Declared and the If's inferred type comes from
/// how the branches' types were combined, not from the model.
bool ifBranchesFit(const Node &N, unsigned Result, const Type &Declared);

// getConstantNodeValue and the index rules (resolveAxis, resolveSliceAxis,
// resolveShapeRange, ...) are in onnxopt/Ops/Semantics.h, included above.

} // namespace onnxopt

#endif // ONNXOPT_OPS_OPFACTS_H
