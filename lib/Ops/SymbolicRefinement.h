//===- SymbolicRefinement.h - Symbolic rules on top of ONNX's inference -*- C++
//-*-===//
//
// ONNX 1.12's inference cannot do arithmetic on symbols and loses shapes
// where data propagation stops: Reshape(X[batch,4,4], [batch,-1,8]) gets
// [batch,unk__0,8], and a Reshape whose target has no propagated contents
// gets no shape at all, although its rank is the target's length. The rules
// here run after ONNX's function for the same node and only fill in what
// ONNX left unknown, with what the node's semantics prove at every value of
// the symbols (or make the node fail at run time).
//
// Private to lib/Ops: includes ONNX headers. The rules are the refinement
// and propagation hooks of the ops' InferRule rows (TensorOps, MathOps).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_OPS_SYMBOLICREFINEMENT_H
#define ONNXOPT_LIB_OPS_SYMBOLICREFINEMENT_H

#include "llvm/ADT/StringRef.h"
#include <onnx/defs/shape_inference.h>
#include <string>
#include <vector>

namespace onnxopt {
namespace detail {

/// Reshape (opset 5 and later): the rank from the target's length when its
/// contents are unknown; the `-1` entry from the element count, as a number
/// or a single symbol, when the other entries and the input's dims are
/// numbers or symbols whose product divides the input's exactly.
void refineReshape(onnx::InferenceContext &Ctx, bool AllowZero);

/// Slice (opset 10 and later): the rank of the input; the axes not cut keep
/// their dims; a cut axis gets its length when the starts and ends are
/// numbers (constant or propagated) and the dim is one, or when the slice
/// provably takes the whole dim (from 0 to the dim's own symbol). A
/// symbolic end on a fixed dim (`table[:, :seq]`, min(seq, 128)) stays
/// unknown: see sliceLength for the bound that would make it `seq`.
void refineSlice(onnx::InferenceContext &Ctx);

/// Data propagation for an integer Div, which ONNX 1.12 has none for:
/// `x / 1` is x, and numbers divide (truncating, as runtimes do for
/// integers) when both are non-negative. Returns false when nothing is
/// known.
bool propagateIntegerDiv(onnx::DataPropagationContext &Ctx);

/// Range: a unit step from an integral start (numbers of any element type)
/// to a limit that is a number or, from 0, a dim (propagated from Shape):
/// the length is limit - start (at least 0), or the dim itself.
void refineRange(onnx::InferenceContext &Ctx);

/// Expand: the rank and the dims of broadcasting the input with a target
/// whose contents are propagated (ONNX 1.12 reads only constant targets):
/// a 1 takes the other dim, equal dims stay, a number other than 1 wins
/// over a symbol.
void refineExpand(onnx::InferenceContext &Ctx);

/// An Einsum equation's terms: per input its letters with '.' for an
/// ellipsis, and the output's (the implicit form's: the ellipsis, then the
/// letters seen once, in alphabetical order).
struct EinsumTerms {
  std::vector<std::string> Inputs;
  std::string Output;
  bool Explicit = false;
};
/// False when \p Equation is not an equation of letters and ellipses.
bool parseEinsum(llvm::StringRef Equation, EinsumTerms &Terms);

/// Einsum: the output dims of an equation, each the dim its letter has in
/// the inputs (ONNX 1.12 infers only the rank); the dims an ellipsis
/// stands for broadcast as Expand's do.
void refineEinsum(onnx::InferenceContext &Ctx);

/// Data propagation for ops ONNX 1.12 propagates nothing through, on the
/// shape tensors torch writes (`Expand(x, Where(Equal(s, -1), 1, s))`):
/// Reshape to rank <= 1 keeps the data; ConstantOfShape of a known length
/// with an integer fill; Equal and Where element by element, with a symbol
/// (a dim) never equal to a negative number. Each returns false when
/// nothing is known.
bool propagateReshape(onnx::DataPropagationContext &Ctx);
bool propagateConstantOfShape(onnx::DataPropagationContext &Ctx);
bool propagateEqual(onnx::DataPropagationContext &Ctx);
bool propagateWhere(onnx::DataPropagationContext &Ctx);
/// What a Cast to element type \p To does to the integer values of shape
/// data: they are Kept where the type holds them as they are (a signed
/// integer of 32 bits or more; float, exact to 2^24, which dims are taken
/// to stay below, as torch's `arange(w, dtype=float)` grids need; double),
/// KeptIfNotNegative for the wide unsigned types (a -1 of a target wraps),
/// read AsBool (0 and 1) for bool, and Lost for the rest (float16 rounds
/// 4001 to 4000; the narrow integers wrap). The one rule of the data
/// propagation below and of the dim analysis' Cast (TensorOps.cpp).
enum class CastValues { Kept, KeptIfNotNegative, AsBool, Lost };
CastValues castValues(int64_t To);
/// Cast keeps the data as castValues says (ONNX's own propagation copies it
/// to any type).
bool propagateCast(onnx::DataPropagationContext &Ctx);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_OPS_SYMBOLICREFINEMENT_H
