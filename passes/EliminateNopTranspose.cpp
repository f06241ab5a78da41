//===- EliminateNopTranspose.cpp - Remove and fuse Transposes -------------===//
//
// Before:  T = Transpose<perm=[0,1,2]>(X)          # the identity
//          Y = Relu(T)
// After:   Y = Relu(X)
//
// Before:  A = Transpose<perm=[0,2,3,1]>(X)        # NCHW -> NHWC
//          B = Transpose<perm=[0,3,1,2]>(A)        # NHWC -> NCHW
// After:   B reads X                               # the pair cancels
//
// Before:  A = Transpose<perm=[1,0,2]>(X)
//          B = Transpose<perm=[0,2,1]>(A)
// After:   B = Transpose<perm=[1,2,0]>(X)          # one Transpose
//
// Before:  W2 = Transpose<perm=[1,0]>(W)           # W a constant
// After:   W2 a constant (with fold-constants, the default)
//
// Exporters leave these around layout changes (channels-last round trips,
// a transposed Linear weight). The first two are the op registry's
// Transpose patterns (lib/Ops/TensorOps.cpp), which canonicalize, and so
// simplify, runs as well; this pass runs only those, plus the fold. A
// Transpose whose result is a graph output is replaced only where the
// graph interface allows (its input is an ordinary node result of the same
// graph). Runs through the greedy driver, which descends into If/Loop/Scan
// bodies.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/PatternRules.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/Passes.h"
#include <memory>
#include <optional>
#include <vector>

using namespace onnxopt;

namespace {

/// The op every rewrite here is rooted at (the patterns' anchor, and the
/// only op the fold hook folds).
constexpr llvm::StringLiteral TransposeRoot = "Transpose";

/// The op registry's Transpose patterns (lib/Ops/TensorOps.cpp: an identity
/// perm erased, a pair merged), which canonicalize runs too.
struct TransposePatterns : Pattern {
  TransposePatterns() : Pattern(TransposeRoot) {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    const OpDef *D = lookupOp(N);
    if (!D || !D->Patterns)
      return R.notifyMatchFailure(N, "no patterns at this opset");
    for (const LocalPattern &P : D->Patterns->Patterns)
      if (succeeded(P.Rewrite(N, R)))
        return success();
    return failure();
  }
};

class EliminateNopTransposePass : public Pass {
public:
  llvm::StringRef getArgument() const override {
    return "eliminate-nop-transpose";
  }
  llvm::StringRef getDescription() const override {
    return "remove identity Transposes, fuse consecutive ones and fold "
           "Transposes of constants, in every graph";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    std::vector<std::unique_ptr<Pattern>> Patterns;
    Patterns.push_back(std::make_unique<TransposePatterns>());
    GreedyRewriteConfig Config;
    // Dead code that the pass did not make is dce's business.
    Config.EraseDeadNodes = false;
    if (FoldConstants)
      Config.Fold = [&Ctx](Node &N) -> std::optional<std::vector<Tensor>> {
        if (!N.is(TransposeRoot))
          return std::nullopt;
        std::string Why;
        return foldNode(N, {}, Ctx.getDiags(), Why);
      };
    bool Changed = false;
    LogicalResult Result =
        applyPatternsGreedily(M, Patterns, Ctx.getDiags(), Config, &Changed);
    Ctx.Changed |= Changed;
    return Result;
  }

private:
  Option<bool> FoldConstants{*this, "fold-constants",
                             "replace Transposes of constants by constants",
                             true};
};

} // namespace

std::unique_ptr<Pass> onnxopt::createEliminateNopTransposePass() {
  return std::make_unique<EliminateNopTransposePass>();
}
