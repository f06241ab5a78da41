//===- PatternDriver.h - Greedy pattern rewriting --------------*- C++ -*-===//
#ifndef ONNXOPT_PASS_PATTERNDRIVER_H
#define ONNXOPT_PASS_PATTERNDRIVER_H

#include "onnxopt/IR/Rewriter.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

/// A local rewrite rooted at one node.
class Pattern {
public:
  /// \p RootOp: op type of the default domain this pattern matches; empty
  /// matches every node. Higher \p Benefit is tried first.
  explicit Pattern(llvm::StringRef RootOp = "", unsigned Benefit = 1)
      : RootOp(RootOp.str()), Benefit(Benefit) {}
  virtual ~Pattern();
  llvm::StringRef getRootOp() const { return RootOp; }
  unsigned getBenefit() const { return Benefit; }
  /// Rewrites \p N through \p R and returns success, or returns failure
  /// without touching the IR (use R.notifyMatchFailure).
  virtual LogicalResult matchAndRewrite(Node &N, Rewriter &R) const = 0;

private:
  std::string RootOp;
  unsigned Benefit;
};

/// Computes the results of a node as constants (MLIR's fold hook), or
/// nothing. The driver tries it before the patterns: every used result is
/// replaced by a constant (Rewriter::replaceWithConstant) and the node, now
/// dead, is erased. The driver takes the results as they come, one per
/// result of the node: passes install foldNode (Analysis/ConstantEval.h),
/// the path constant-fold takes, which evaluates the op's EvalRule and
/// refuses results that contradict their declared types (this layer sits
/// below the analyses and cannot call it itself).
using FoldHook = std::function<std::optional<std::vector<Tensor>>(Node &)>;

struct GreedyRewriteConfig {
  /// Passes over the worklist before giving up.
  unsigned MaxIterations = 10;
  /// Erase nodes whose results are all unused.
  bool EraseDeadNodes = true;
  /// Descend into If/Loop/Scan bodies.
  bool RecurseIntoSubgraphs = true;
  /// Folds nodes to constants before patterns are tried (null: no folding).
  FoldHook Fold;
};

/// Applies \p Patterns to every node of \p M until nothing changes. Returns
/// failure (with a diagnostic) when the iteration cap is hit before
/// convergence. Sets \p Changed if anything was rewritten.
LogicalResult
applyPatternsGreedily(Model &M,
                      llvm::ArrayRef<std::unique_ptr<Pattern>> Patterns,
                      DiagnosticEngine &Diags, GreedyRewriteConfig Config = {},
                      bool *Changed = nullptr);

} // namespace onnxopt

#endif // ONNXOPT_PASS_PATTERNDRIVER_H
