//===- ContribOps.h - Inference of ONNX Runtime's com.microsoft ops -*- C++
//-*-===//
//
// ONNX has no schemas for the contrib ops of ONNX Runtime-optimized exports
// (Attention, SkipLayerNormalization, FastGelu, MatMulNBits, ...), so their
// results used to keep their declared types and everything after them lost
// its shape. This table gives the common ones shape functions written from
// onnxruntime's operator documentation (docs/ContribOperators.md), against
// onnx::InferenceContext like ModernOps, so the engine presents them exactly
// as default-domain ops. Each function states only what the op's definition
// fixes (an output that is "the same shape as input"); outputs whose shape
// depends on a runtime buffer policy (present key/value caches) keep their
// declared types. Ops of com.microsoft not listed, and other domains, keep
// their declared types as before.
//
// Private to lib/: includes ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_ANALYSIS_CONTRIBOPS_H
#define ONNXOPT_LIB_ANALYSIS_CONTRIBOPS_H

#include "ModernOps.h"
#include "llvm/ADT/StringRef.h"

namespace onnxopt {
namespace detail {

/// One contrib op with a shape function.
struct ContribOp {
  const char *Domain;
  const char *OpType;
  ModernInferenceFn Infer;
  /// The inputs and outputs the op needs at least (optional ones may be
  /// omitted).
  int MinInputs, MinOutputs;
  /// What the function infers, for docs/shape-inference.md.
  const char *What;
};

/// The entry for \p OpType of \p Domain, or null.
const ContribOp *findContribOp(llvm::StringRef Domain, llvm::StringRef OpType);

/// Every entry, sorted by domain and op type.
llvm::ArrayRef<ContribOp> getContribOps();

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_ANALYSIS_CONTRIBOPS_H
