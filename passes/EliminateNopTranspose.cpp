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
// a transposed Linear weight). A Transpose without `perm` reverses the dims,
// so its perm is known only with its input's rank. Composition: B(A(X))
// takes dim i of its result from dim pA[pB[i]] of X. A Transpose whose
// result is a graph output is replaced only where the graph interface
// allows (its input is an ordinary node result of the same graph). Runs
// through the greedy driver, which descends into If/Loop/Scan bodies.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/Passes.h"
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

using namespace onnxopt;

namespace {

/// The op every rewrite here is rooted at (the patterns' anchor, and the
/// only op the fold hook folds).
constexpr llvm::StringLiteral TransposeRoot = "Transpose";

/// The permutation \p N applies, or nothing when it is not known (no perm
/// and an input of unknown rank) or not a permutation. \p KnownRank is the
/// input's rank when the caller knows it better than the recorded type (the
/// result of another Transpose).
std::optional<std::vector<int64_t>>
getPerm(const Node &N, std::optional<size_t> KnownRank = std::nullopt) {
  if (N.getNumOperands() != 1 || !N.getOperand(0) || N.getNumResults() != 1 ||
      !N.getResult(0))
    return std::nullopt;
  std::optional<std::vector<int64_t>> Perm = N.getAttrInts("perm");
  if (!Perm) {
    const Type &T = N.getOperand(0)->getType();
    if (!KnownRank && T.isTensor() && T.hasShape())
      KnownRank = T.getRank();
    if (!KnownRank)
      return std::nullopt;
    Perm.emplace(*KnownRank);
    std::iota(Perm->rbegin(), Perm->rend(), 0);
  }
  std::vector<bool> Seen(Perm->size(), false);
  for (int64_t P : *Perm) {
    if (P < 0 || P >= static_cast<int64_t>(Perm->size()) || Seen[P])
      return std::nullopt;
    Seen[P] = true;
  }
  return Perm;
}

bool isIdentity(llvm::ArrayRef<int64_t> Perm) {
  for (size_t I = 0; I < Perm.size(); ++I)
    if (Perm[I] != static_cast<int64_t>(I))
      return false;
  return true;
}

LogicalResult forward(Node &N, Value *In, Rewriter &R) {
  if (!canReplaceAllUsesWith(N.getResult(0), In))
    return R.notifyMatchFailure(
        N, "result is a graph output that the input cannot replace");
  return R.replaceNode(&N, {In});
}

struct EraseIdentityTranspose : Pattern {
  EraseIdentityTranspose() : Pattern(TransposeRoot, /*Benefit=*/2) {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    std::optional<std::vector<int64_t>> Perm = getPerm(N);
    if (!Perm)
      return R.notifyMatchFailure(N, "perm unknown or invalid");
    if (!isIdentity(*Perm))
      return R.notifyMatchFailure(N, "perm moves dims");
    return forward(N, N.getOperand(0), R);
  }
};

struct FuseTransposePair : Pattern {
  FuseTransposePair() : Pattern(TransposeRoot) {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    Node *Inner =
        N.getOperand(0) ? N.getOperand(0)->getDefiningNode() : nullptr;
    if (!Inner || !Inner->is(getRootOp()))
      return R.notifyMatchFailure(N, "input is not a Transpose");
    std::optional<std::vector<int64_t>> First = getPerm(*Inner);
    if (!First)
      return R.notifyMatchFailure(N, "perm of the input Transpose unknown");
    std::optional<std::vector<int64_t>> Outer = getPerm(N, First->size());
    if (!Outer || Outer->size() != First->size())
      return R.notifyMatchFailure(N, "perms unknown or of different ranks");
    std::vector<int64_t> Composed(Outer->size());
    for (size_t I = 0; I < Composed.size(); ++I)
      Composed[I] = (*First)[(*Outer)[I]];
    Value *X = Inner->getOperand(0);
    if (isIdentity(Composed)) {
      if (failed(forward(N, X, R)))
        return failure();
    } else {
      // One Transpose of X replaces the pair (a new node result can always
      // take over a graph output's name).
      Node *Fused = R.createNode("Transpose", {X}, 1, "", N.getName());
      Fused->setAttr(Attribute::getInts("perm", Composed));
      Fused->getResult(0)->setType(N.getResult(0)->getType());
      if (failed(R.replaceNode(&N, {Fused->getResult(0)}))) {
        R.eraseNode(Fused);
        return R.notifyMatchFailure(N, "the graph interface forbids it");
      }
    }
    // The inner Transpose stays only for its other users.
    if (Inner->getResult(0)->use_empty())
      R.eraseNode(Inner);
    return success();
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
    Patterns.push_back(std::make_unique<EraseIdentityTranspose>());
    Patterns.push_back(std::make_unique<FuseTransposePair>());
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
