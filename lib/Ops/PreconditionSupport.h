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

} // namespace precondition
} // namespace onnxopt

#endif // ONNXOPT_LIB_OPS_PRECONDITIONSUPPORT_H
