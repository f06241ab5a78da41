//===- Preconditions.h - Op registry hooks: PreconditionRule ----*- C++ -*-===//
//
// The PreconditionRule hook of an op definition (OpDef.h): what an op's
// inputs and attributes must satisfy for ONNX 1.12's inference function to
// be safe to call and for the op to run: ranks, attribute lengths against
// ranks, kernel shapes against the weight. Node validation
// (lib/Analysis/NodeValidation.cpp) checks them, with the schema's own
// facts, before any ONNX call.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_PRECONDITIONS_H
#define ONNXOPT_OPS_PRECONDITIONS_H

#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Support/Diagnostics.h"
#include "onnxopt/Support/LogicalResult.h"

namespace onnxopt {

/// Checks \p N's attributes and operand ranks; emits one error on the first
/// violation and fails.
using PreconditionFn = LogicalResult (*)(const Node &N,
                                         DiagnosticEngine &Diags);

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder).
struct PreconditionRule {
  const char *Domain;
  const char *OpType;
  int Since;
  /// What ONNX 1.12's inference reads without checking; null: nothing
  /// beyond the schema.
  PreconditionFn Check = nullptr;
  /// The operand whose contents are the result's shape, so that its length
  /// is the result's rank (Reshape, Expand, ConstantOfShape, Resize's
  /// sizes), or -1.
  int ShapeInput = -1;
  /// The schema's attribute list is not the op's: it takes any attributes
  /// (the experimental ATen; ONNX 1.12 does not expose
  /// AllowUncheckedAttributes()).
  bool AnyAttributes = false;
};

} // namespace onnxopt

#endif // ONNXOPT_OPS_PRECONDITIONS_H
