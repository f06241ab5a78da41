//===- PreconditionSupport.h - Helpers of the preconditions ----*- C++ -*-===//
//
// What the "Run-time preconditions" sections of several family files share.
// Private to lib/Ops.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_OPS_PRECONDITIONSUPPORT_H
#define ONNXOPT_LIB_OPS_PRECONDITIONSUPPORT_H

#include <cstdint>

namespace onnxopt {
class Value;
namespace precondition {

/// The rank of \p V when its type says it, else -1.
int64_t knownRank(const Value *V);

/// The least dim n >= 1 that a Resize scale \p Scale (> 0) keeps non-empty:
/// ONNX Runtime's output dim is floor(float(Scale) * n), in float, so this
/// is where that product first reaches 1 (1 for a scale >= 1, 0 for a
/// scale that is not positive: the schema's check, not a dim's). Scales
/// so small that no dim below 2^31 reaches it give 2^31.
int64_t leastDimForScale(double Scale);

} // namespace precondition
} // namespace onnxopt

#endif // ONNXOPT_LIB_OPS_PRECONDITIONSUPPORT_H
