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
// Private to lib/: includes ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_ANALYSIS_SYMBOLICREFINEMENT_H
#define ONNXOPT_LIB_ANALYSIS_SYMBOLICREFINEMENT_H

#include <onnx/defs/shape_inference.h>

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

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_ANALYSIS_SYMBOLICREFINEMENT_H
