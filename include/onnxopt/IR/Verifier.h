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
  /// Where the input's order stands, filled when RequireTopologicalOrder
  /// is off: what topo-sort would have to repair, found by the same walk.
  struct OrderReport {
    /// Nodes that read a value of their own graph produced by a later node.
    size_t LateNodes = 0;
    /// Whether any value was read before its producer (also from inside a
    /// subgraph, of an enclosing graph's value): when false, the verdict
    /// holds with the order required too.
    bool AnyLateUse = false;
  };
  OrderReport *Order = nullptr;
};

/// Checks the IR invariants: one producer per value, uses resolve and are
/// exact, topological order, graph outputs defined, names unique within
/// their scope. Emits one diagnostic per violation.
LogicalResult verifyModel(const Model &M, DiagnosticEngine &Diags,
                          VerifyOptions Opts = {});

} // namespace onnxopt

#endif // ONNXOPT_IR_VERIFIER_H
