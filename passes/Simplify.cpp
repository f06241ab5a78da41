//===- Simplify.cpp - The default pipeline, run to a fixed point ----------===//
//
// `simplify` runs
//
//   infer-shapes, fold-shapes, constant-fold, canonicalize,
//   eliminate-identity, cse, dce, unify-dims
//
// in rounds until a round in which no pass changed the model (at most
// max-rounds). One round is not enough: a fold exposes a duplicate for cse,
// cse merges two Shape chains into one that fold-shapes can then fold, a
// canonicalization removes an op whose removal lets constant-fold reach
// further. With the rounds, a second `--simplify` on the output of the first
// writes the same bytes.
//
// Each round is linear in the model (its passes are), and rounds stop as
// soon as one changes nothing, so a model that is already simple costs one
// round. The inner passes take the outer run's options (verification after
// each pass that changed the model, IR printing, timing, graph size
// checks); their timings, graph sizes and statistics are reported under
// the pass ("simplify: cse"). Diagnostics read "simplify: cse: ..."; a
// warning repeated by a later round is shown once.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/Model.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Passes.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include <memory>
#include <string>
#include <vector>

using namespace onnxopt;

namespace {

/// The passes of one round, in order.
const char *const RoundPipeline =
    "infer-shapes,fold-shapes,constant-fold,canonicalize,eliminate-identity,"
    "cse,dce,unify-dims";

class SimplifyPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "simplify"; }
  llvm::StringRef getDescription() const override {
    return "infer-shapes, fold-shapes, constant-fold, canonicalize, "
           "eliminate-identity, cse, dce and unify-dims in rounds until a "
           "round changes nothing";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override;
  const PassManager *getNestedPipeline() const override { return Inner.get(); }

private:
  LogicalResult buildPipeline(PassContext &Ctx);
  void reportTimings(PassContext &Ctx, size_t FirstRow) const;

  Option<int64_t> MaxRounds{*this, "max-rounds",
                            "rounds to run before stopping with a warning "
                            "when the model still changes",
                            10, atLeast(1)};
  /// Rebuilt by every run; kept afterwards so --timing can print its
  /// passes' statistics.
  std::unique_ptr<PassManager> Inner;
};

LogicalResult SimplifyPass::buildPipeline(PassContext &Ctx) {
  PassManagerOptions Opts;
  if (PassManager *Outer = Ctx.getPassManager())
    Opts = Outer->getOptions();
  Inner = std::make_unique<PassManager>(std::move(Opts));
  std::string Err;
  if (failed(Inner->addPipeline(RoundPipeline, Err)))
    return emitError(Ctx.getDiags()) << "inner pipeline: " << Err;
  return success();
}

/// Adds the inner passes' time rows to the outer table, one row per pass
/// (summed over the rounds), in pipeline order.
void SimplifyPass::reportTimings(PassContext &Ctx, size_t FirstRow) const {
  PassManager *Outer = Ctx.getPassManager();
  if (!Outer || !Outer->getOptions().Timing)
    return;
  std::vector<std::string> Order;
  llvm::StringMap<double> Total;
  auto Rows = Inner->getTimings();
  for (size_t I = FirstRow; I < Rows.size(); ++I) {
    auto [It, New] = Total.try_emplace(Rows[I].first, 0.0);
    if (New)
      Order.push_back(Rows[I].first);
    It->second += Rows[I].second;
  }
  for (const std::string &Name : Order)
    Outer->recordTiming("simplify: " + Name, Total[Name]);
}

LogicalResult SimplifyPass::run(Model &M, PassContext &Ctx) {
  if (failed(buildPipeline(Ctx)))
    return failure();
  PassManager *Outer = Ctx.getPassManager();
  // Later rounds report a warning only if no earlier round did; their
  // remarks (what a round folded) are left out.
  DeduplicatingDiagnostics Later(Ctx.getDiags());
  LogicalResult Result = success();
  int64_t Round = 0;
  for (;; ++Round) {
    DiagnosticEngine &Diags = Round == 0 ? Ctx.getDiags() : Later.get();
    bool Changed = false;
    // Every round starts from fresh analyses: the outer pass manager's
    // cache describes the model before this pass.
    AnalysisManager AM(M, Diags);
    if (failed(Inner->run(M, Diags, AM, &Changed))) {
      Result = failure();
      break;
    }
    if (!Changed)
      break;
    Ctx.Changed = true;
    if (Round + 1 >= MaxRounds) {
      emitWarning(Ctx.getDiags()) << "the model still changes after "
                                  << MaxRounds << " rounds (max-rounds)";
      break;
    }
  }
  if (Outer)
    Outer->recordGraphSizes(*Inner, "simplify: ");
  reportTimings(Ctx, 0);
  return Result;
}

} // namespace

std::unique_ptr<Pass> onnxopt::createSimplifyPass() {
  return std::make_unique<SimplifyPass>();
}
