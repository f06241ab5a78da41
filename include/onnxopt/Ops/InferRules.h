//===- InferRules.h - Op registry hooks: InferRule --------------*- C++ -*-===//
//
// The InferRule hook of an op definition (OpDef.h): type inference where
// ONNX 1.12 has none or where we refine it. The inference adapter
// (lib/Analysis/ShapeInference.cpp) presents a node as an
// onnx::InferenceContext, exactly as to ONNX's own schemas, and asks the
// node's rule:
//
//   - for an op version that changed after ONNX 1.12 (the op table's New
//     and Semantics rows) or an op ONNX has no schema for at all
//     (com.microsoft): our own inference function, or the ONNX 1.12 schema
//     whose inference already follows the new rule, and the version's
//     signature for verification;
//   - for any version: a refinement run after the schema's function (what
//     ONNX 1.12 cannot do with symbols), our own data propagation where the
//     schema has none, or the newer schema whose propagation applies.
//
// The functions themselves live in the family files (lib/Ops/*Ops.cpp),
// which may include ONNX's headers; this header stays free of them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_INFERRULES_H
#define ONNXOPT_OPS_INFERRULES_H

#include "onnxopt/Ops/OpDef.h"
#include <string>

namespace onnx {
struct InferenceContext;
struct DataPropagationContext;
class OpSchema;
} // namespace onnx

namespace onnxopt {

/// An inference function, or a refinement run after one, written against
/// ONNX's context; errors are thrown with fail_shape_inference.
using InferFn = void (*)(onnx::InferenceContext &);
/// A data-propagation function; false when it learned nothing.
using PropagateFn = bool (*)(onnx::DataPropagationContext &);

/// "Any number" as the upper bound of a signature's operand count.
constexpr int ManyOperands = -1;

/// The signature of an op version ONNX 1.12 has no schema for: its operand
/// counts and attributes, for verification.
struct OpSignature {
  /// The reused schema's counts and attributes, plus Attrs; else exactly
  /// the counts below and Attrs.
  bool FromReuse = false;
  int MinInputs = 0, MaxInputs = 0, MinOutputs = 0, MaxOutputs = 0;
  /// Space-separated `name:kind`, kind one of i f s t g is fs ss ts gs.
  const char *Attrs = "";
};

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder). Build rows with the functions below.
struct InferRule {
  const char *Domain;
  const char *OpType;
  int Since;

  enum Kind : uint8_t {
    /// The op is inferred by ONNX 1.12's schema of its version; the rule
    /// only refines or propagates.
    OnSchema,
    /// A version that changed after ONNX 1.12 (the op table says which):
    /// Infer, or the reused schema's inference when Infer is null.
    NewVersion,
    /// An op ONNX has no schema for at any version (onnxruntime's
    /// com.microsoft ops): Infer, at every version of its domain.
    NoSchema,
  } K = OnSchema;

  /// Our own inference (NewVersion, NoSchema).
  InferFn Infer = nullptr;
  /// An ONNX 1.12 schema (op of the same domain, opset) whose inference
  /// applies when Infer is null and whose data propagation applies always
  /// (NewVersion).
  const char *ReuseOp = nullptr;
  int ReuseOpset = 0;
  OpSignature Sig;

  /// Runs after the schema's inference and fills only what it left
  /// unknown, with what the op's semantics prove at every value of the
  /// symbols (OnSchema).
  InferFn Refine = nullptr;
  /// Our data propagation, used instead of the schema's.
  PropagateFn Propagate = nullptr;
  /// Run the data propagation of this op's ONNX 1.12 schema of this opset
  /// (0: the node's own schema's, if any).
  int PropagationOpset = 0;
  /// What the rule infers, for the docs (NoSchema).
  const char *What = nullptr;
};

/// A version newer than ONNX 1.12 inferred by our own function.
constexpr InferRule newVersion(const char *Domain, const char *OpType,
                               int Since, InferFn Infer, OpSignature Sig) {
  InferRule R{Domain, OpType, Since};
  R.K = InferRule::NewVersion;
  R.Infer = Infer;
  R.Sig = Sig;
  return R;
}

/// A version newer than ONNX 1.12 inferred (when \p Infer is null) and
/// propagated by ONNX 1.12's schema \p ReuseOp - \p ReuseOpset.
constexpr InferRule newVersionReusing(const char *Domain, const char *OpType,
                                      int Since, const char *ReuseOp,
                                      int ReuseOpset, OpSignature Sig,
                                      InferFn Infer = nullptr) {
  InferRule R = newVersion(Domain, OpType, Since, Infer, Sig);
  R.ReuseOp = ReuseOp;
  R.ReuseOpset = ReuseOpset;
  return R;
}

/// An op without any ONNX schema, inferred by \p Infer at every version;
/// it needs at least \p MinInputs inputs and \p MinOutputs outputs.
constexpr InferRule noSchema(const char *Domain, const char *OpType,
                             InferFn Infer, int MinInputs, int MinOutputs,
                             const char *What) {
  InferRule R{Domain, OpType, 1};
  R.K = InferRule::NoSchema;
  R.Infer = Infer;
  R.Sig = {false, MinInputs, ManyOperands, MinOutputs, ManyOperands, ""};
  R.What = What;
  return R;
}

/// A default-domain op inferred by ONNX 1.12's schema, refined after it by
/// \p Refine and/or propagated by \p Propagate.
constexpr InferRule onSchema(const char *OpType, int Since, InferFn Refine,
                             PropagateFn Propagate = nullptr) {
  InferRule R{"", OpType, Since};
  R.Refine = Refine;
  R.Propagate = Propagate;
  return R;
}

/// \p R with \p Propagate as its data propagation (instead of the schema's).
constexpr InferRule withPropagation(InferRule R, PropagateFn Propagate) {
  R.Propagate = Propagate;
  return R;
}

/// A default-domain op whose versions from \p Since propagate data with
/// the ONNX 1.12 schema of opset \p PropagationOpset (a newer version that
/// changed only types).
constexpr InferRule propagatesAs(const char *OpType, int Since,
                                 int PropagationOpset) {
  InferRule R{"", OpType, Since};
  R.PropagationOpset = PropagationOpset;
  return R;
}

/// The rule inferring \p OpType of \p Domain at exactly the version
/// \p Since that changed after ONNX 1.12 (a NewVersion rule whose Since is
/// \p Since), or null.
const InferRule *findNewVersionRule(llvm::StringRef Domain,
                                    llvm::StringRef OpType, int Since);

/// The rule of an op without ONNX schemas (NoSchema) in \p Domain at
/// \p Opset, or null.
const InferRule *findNoSchemaRule(llvm::StringRef Domain,
                                  llvm::StringRef OpType, int64_t Opset);

/// The ONNX 1.12 schema a NewVersion rule reuses, or null.
const onnx::OpSchema *getReusedSchema(const InferRule &R);

/// Checks \p N against \p R's signature: input and output counts,
/// attribute names and kinds. Returns false with the reason in \p Why.
bool checkSignature(const Node &N, const InferRule &R, std::string &Why);

/// The short code of an attribute kind as signatures write it ("i", "is",
/// "t", ...).
const char *attrKindCode(AttrKind K);

} // namespace onnxopt

#endif // ONNXOPT_OPS_INFERRULES_H
