//===- Verifier.h - IR invariants ------------------------------*- C++ -*-===//
#ifndef ONNXOPT_IR_VERIFIER_H
#define ONNXOPT_IR_VERIFIER_H

#include "onnxopt/Support/Diagnostics.h"

namespace onnxopt {

class Model;

struct VerifyOptions {
  /// Require nodes to be in topological order (off only for freshly imported
  /// input, so that topo-sort can repair it).
  bool RequireTopologicalOrder = true;
};

/// Checks the IR invariants: one producer per value, uses resolve and are
/// exact, topological order, graph outputs defined, names unique within
/// their scope. Emits one diagnostic per violation.
LogicalResult verifyModel(const Model &M, DiagnosticEngine &Diags,
                          VerifyOptions Opts = {});

} // namespace onnxopt

#endif // ONNXOPT_IR_VERIFIER_H
