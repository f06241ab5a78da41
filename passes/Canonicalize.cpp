//===- Canonicalize.cpp - Run every op's local patterns -------------------===//
//
// Before:  C = Conv(X, W, B)
//          N = BatchNormalization(C, s, b, mean, var)
//          Y = Mul(N, ONES)                     # ONES: float[1], all 1
// After:   Y = Conv(X, W', B')
//
// The op registry's local patterns (PatternRules.h), each written beside
// the op it rewrites in lib/Ops/<Family>Ops.cpp: per-channel affine maps
// folded into Conv and ConvTranspose (BatchNormalization, Mul, Add),
// arithmetic by its identity element, Pad/Slice/Split/Concat/Expand/Tile
// that move nothing, consecutive Slices and Transposes merged,
// Squeeze/Unsqueeze pairs cancelled and If with a constant condition
// inlined (in the main graph or in the branch or body that holds it).
// Like MLIR's canonicalize: this pass knows no op; it hands one Pattern per
// op that has patterns to the greedy driver, which descends into
// If/Loop/Scan bodies and revisits what each rewrite touched. Each pattern
// looks only at its node and the producers of its operands, so a round is
// linear in the graph. Nodes and constants a rewrite leaves dead are erased
// with it; dead code that was there before is dce's.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/PatternRules.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/Passes.h"
#include <memory>
#include <vector>

using namespace onnxopt;

namespace {

/// The registry's patterns of one default-domain op, at the version of the
/// op the node's model imports.
class RegistryPatterns : public Pattern {
public:
  explicit RegistryPatterns(llvm::StringRef OpType) : Pattern(OpType) {}
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

class CanonicalizePass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "canonicalize"; }
  llvm::StringRef getDescription() const override {
    return "apply the op registry's local patterns (Conv with BatchNorm or a "
           "per-channel Mul/Add fused, identity arithmetic and no-op data "
           "movement removed, Slices and Transposes merged, Squeeze/Unsqueeze "
           "pairs cancelled, If with a constant condition inlined), in every "
           "graph";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    std::vector<std::unique_ptr<Pattern>> Patterns;
    llvm::StringRef Last;
    // Sorted by domain and op type: one Pattern per op, in a fixed order.
    for (const OpDef *D : getAllOpDefs())
      if (D->Domain.empty() && D->Patterns && D->OpType != Last) {
        Patterns.push_back(std::make_unique<RegistryPatterns>(D->OpType));
        Last = D->OpType;
      }
    GreedyRewriteConfig Config;
    Config.EraseDeadNodes = false;
    bool Changed = false;
    LogicalResult Result =
        applyPatternsGreedily(M, Patterns, Ctx.getDiags(), Config, &Changed);
    Ctx.Changed |= Changed;
    return Result;
  }
};

} // namespace

std::unique_ptr<Pass> onnxopt::createCanonicalizePass() {
  return std::make_unique<CanonicalizePass>();
}
