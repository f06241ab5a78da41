//===- PatternRules.h - Op registry hooks: local patterns -------*- C++ -*-===//
//
// The PatternRule hook of an op definition (OpDef.h): the local rewrites
// rooted at an op, much as MLIR attaches canonicalization patterns to an op.
// Each pattern looks only at its node and the nodes and constants that
// produce its operands (linear over a graph), rewrites through the Rewriter
// and says why it did not fire through Rewriter::notifyMatchFailure. The
// canonicalize pass (passes/Canonicalize.cpp) runs every op's patterns
// through the greedy driver. The helpers the patterns share (reading
// constants, broadcast checks, forwarding an operand) are in
// lib/Ops/PatternSupport.h.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_PATTERNRULES_H
#define ONNXOPT_OPS_PATTERNRULES_H

#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"

namespace onnxopt {

class Rewriter;

/// Rewrites \p N through \p R and returns success, or returns failure
/// without touching the IR (R.notifyMatchFailure says why).
using PatternFn = LogicalResult (*)(Node &N, Rewriter &R);

/// One local rewrite: a name for docs and debugging, and its function.
struct LocalPattern {
  const char *Name;
  PatternFn Rewrite;
};

/// One row: (domain, op) from Since on, the patterns tried in order (the
/// first that succeeds wins). The first three fields are the registry's key
/// (OpRegistryBuilder).
struct PatternRule {
  const char *Domain;
  const char *OpType;
  int Since;
  llvm::ArrayRef<LocalPattern> Patterns;
};

} // namespace onnxopt

#endif // ONNXOPT_OPS_PATTERNRULES_H
