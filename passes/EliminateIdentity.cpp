//===- EliminateIdentity.cpp - Remove Identity and no-op Cast nodes -------===//
//
// Before:  T = Identity(X)
//          Y = Relu(T)
// After:   Y = Relu(X)
//
// Before:  C = Cast<to=1>(X)     # X: float[N,3]
//          Y = Relu(C)
// After:   Y = Relu(X)           # only with erase-casts (the default)
//
// When the Identity's output is a graph output, its input takes over the
// output's name; that is refused (and the node kept) when the input is a
// graph input, an initializer, a value of an enclosing graph, or already a
// graph output itself: removing the node would change the interface.
// A Cast is a no-op only when its input is a tensor whose element type is
// recorded and equal to `to`. Runs through the greedy driver, which
// descends into If/Loop/Scan bodies; it erases only the nodes it rewrites
// (dead nodes elsewhere are left to dce).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/Passes.h"
#include <memory>
#include <vector>

using namespace onnxopt;

namespace {

/// Replaces the single result of \p N by \p In and erases \p N, unless the
/// graph interface forbids it.
LogicalResult forwardOperand(Node &N, Value *In, Rewriter &R) {
  Value *Out = N.getResult(0);
  if (!canReplaceAllUsesWith(Out, In))
    return R.notifyMatchFailure(
        N, "output is a graph output that its input cannot replace");
  return R.replaceNode(&N, {In});
}

bool hasOneOperandOneResult(const Node &N) {
  return N.getNumOperands() == 1 && N.getOperand(0) && N.getNumResults() == 1 &&
         N.getResult(0);
}

struct EraseIdentity : Pattern {
  EraseIdentity() : Pattern("Identity") {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    if (!hasOneOperandOneResult(N))
      return R.notifyMatchFailure(N, "expected one input and one output");
    return forwardOperand(N, N.getOperand(0), R);
  }
};

struct EraseNoOpCast : Pattern {
  EraseNoOpCast() : Pattern("Cast") {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    if (!hasOneOperandOneResult(N))
      return R.notifyMatchFailure(N, "expected one input and one output");
    const Type &InTy = N.getOperand(0)->getType();
    if (!InTy.isTensor() ||
        InTy.getElemType() == static_cast<int32_t>(ElementType::Undefined))
      return R.notifyMatchFailure(N, "input element type is unknown");
    if (InTy.getElemType() != N.getAttrInt("to", -1))
      return R.notifyMatchFailure(N, "cast changes the element type");
    return forwardOperand(N, N.getOperand(0), R);
  }
};

class EliminateIdentityPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "eliminate-identity"; }
  llvm::StringRef getDescription() const override {
    return "remove Identity nodes and Casts to the type their input already "
           "has, in every graph";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    std::vector<std::unique_ptr<Pattern>> Patterns;
    Patterns.push_back(std::make_unique<EraseIdentity>());
    if (EraseCasts)
      Patterns.push_back(std::make_unique<EraseNoOpCast>());
    GreedyRewriteConfig Config;
    Config.EraseDeadNodes = false;
    bool Changed = false;
    LogicalResult Result =
        applyPatternsGreedily(M, Patterns, Ctx.getDiags(), Config, &Changed);
    Ctx.Changed |= Changed;
    return Result;
  }

private:
  Option<bool> EraseCasts{
      *this, "erase-casts",
      "also remove Casts whose input already has the target element type",
      true};
};

} // namespace

std::unique_ptr<Pass> onnxopt::createEliminateIdentityPass() {
  return std::make_unique<EliminateIdentityPass>();
}
