//===- ModernOps.h - Inference of op versions newer than ONNX 1.12 -*- C++
//-*-===//
//
// For every op version of the op table (include/onnxopt/Analysis/OpTable.h)
// that changed semantics after ONNX 1.12, how onnx-opt infers it: either
// our own inference function, written against onnx::InferenceContext so
// that the engine presents the node exactly as for ONNX's schemas, or an
// ONNX 1.12 schema whose inference already follows the new rule (Reduce*-18
// takes axes as an input exactly as ReduceSum-13 does). Each entry also
// gives the version's signature (input and output counts, attributes) for
// verification.
//
// Private to lib/: includes ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_ANALYSIS_MODERNOPS_H
#define ONNXOPT_LIB_ANALYSIS_MODERNOPS_H

#include "onnxopt/IR/Attribute.h"
#include "llvm/ADT/StringRef.h"
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

namespace onnxopt {
class Node;
namespace detail {

using ModernInferenceFn = void (*)(onnx::InferenceContext &);

/// How one op version newer than ONNX 1.12 is inferred and checked.
struct ModernOp {
  const char *Domain;
  const char *OpType;
  int Since;
  /// Our own inference, or null to use InferOp's schema.
  ModernInferenceFn Infer;
  /// An ONNX 1.12 schema whose inference applies (when Infer is null) and
  /// whose data propagation applies (always, when set).
  const char *ReuseOp;
  int ReuseOpset;
  /// The signature. With SigFromReuse, the reused schema's signature plus
  /// Attrs; else exactly these counts and Attrs.
  bool SigFromReuse;
  int MinInputs, MaxInputs, MinOutputs, MaxOutputs;
  /// Space-separated `name:kind`, kind one of i f s t g is fs ss ts gs.
  const char *Attrs;
};

/// The entry for \p OpType of \p Domain whose semantics date from \p Since,
/// or null.
const ModernOp *findModernOp(llvm::StringRef Domain, llvm::StringRef OpType,
                             int Since);

/// The ONNX 1.12 schema that \p Op reuses, or null.
const onnx::OpSchema *getReusedSchema(const ModernOp &Op);

/// Checks \p N against \p Op's signature: input and output counts, attribute
/// names and kinds. Returns false with the reason in \p Why.
bool checkModernSignature(const Node &N, const ModernOp &Op, std::string &Why);

/// The short code of an attribute kind as the op signatures write it ("i",
/// "is", "t", ...); shared by the signature check here and ModernVerify.
const char *attrKindCode(AttrKind K);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_ANALYSIS_MODERNOPS_H
