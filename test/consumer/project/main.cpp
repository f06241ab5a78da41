//===- main.cpp - A downstream tool with its own passes -------------------===//
//
// Shows, against an installed onnx-opt, the three ways a compiler team
// extends it: a model-level Pass, a GraphPass (the framework walks every
// subgraph), and a pattern applied by the greedy driver; then drives the
// library directly (load -> pipeline built in code -> analysis -> save)
// without onnxOptMain.
//
//   consumer-opt <onnx-opt arguments>      the full command line
//   consumer-opt --embed IN OUT            the library, driven by hand
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Import/Import.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/Passes.h"
#include "onnxopt/Tool/OnnxOptMain.h"
#include <cstring>

using namespace onnxopt;

namespace {
/// Sets the main graph's name: a model-level pass with a typed option.
class SetGraphNamePass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "set-graph-name"; }
  llvm::StringRef getDescription() const override {
    return "rename the main graph";
  }
  LogicalResult run(Model &M, PassContext &Ctx) override {
    M.getGraph().setName(Name.getValue());
    Ctx.Changed = true;
    return success();
  }

private:
  Option<std::string> Name{*this, "name", "the new name", "g"};
};

/// Prefixes node names, in every graph: the pass manager walks the bodies.
class PrefixNodeNamesPass : public GraphPass {
public:
  llvm::StringRef getArgument() const override { return "prefix-node-names"; }
  llvm::StringRef getDescription() const override {
    return "prefix the name of every node";
  }
  LogicalResult runOnGraph(Graph &G, Model &, PassContext &Ctx) override {
    for (Node &N : G.getNodes())
      N.setName(Prefix.getValue() + N.getName().str());
    Ctx.Changed = true;
    // Names are not what any analysis reads.
    Ctx.markAllAnalysesPreserved();
    return success();
  }

private:
  Option<std::string> Prefix{*this, "prefix", "text put in front", "p_"};
};

/// Neg(Neg(x)) -> x, as a pattern; the driver descends into bodies itself.
struct EraseDoubleNeg : Pattern {
  EraseDoubleNeg() : Pattern("Neg") {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    Node *Inner =
        N.getOperand(0) ? N.getOperand(0)->getDefiningNode() : nullptr;
    if (!Inner || !Inner->is("Neg"))
      return R.notifyMatchFailure(N, "input is not a Neg");
    if (!canReplaceAllUsesWith(N.getResult(0), Inner->getOperand(0)))
      return R.notifyMatchFailure(N, "graph interface");
    return R.replaceNode(&N, {Inner->getOperand(0)});
  }
};

class EraseDoubleNegPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "erase-double-neg"; }
  llvm::StringRef getDescription() const override {
    return "rewrite Neg(Neg(x)) to x";
  }
  LogicalResult run(Model &M, PassContext &Ctx) override {
    std::vector<std::unique_ptr<Pattern>> Patterns;
    Patterns.push_back(std::make_unique<EraseDoubleNeg>());
    return applyPatternsGreedily(M, Patterns, Ctx.getDiags(), {},
                                 &Ctx.Changed);
  }
};

void registerConsumerPasses() {
  registerPass([] { return std::make_unique<SetGraphNamePass>(); });
  registerPass([] { return std::make_unique<PrefixNodeNamesPass>(); });
  registerPass([] { return std::make_unique<EraseDoubleNegPass>(); });
}

/// load -> a pipeline built in code -> read an analysis -> save.
int embed(const char *In, const char *Out) {
  registerAllPasses();
  registerConsumerPasses();
  DiagnosticEngine Diags;
  Diags.setFileName(In);
  std::unique_ptr<Model> M = loadModel(In, Diags);
  if (!M)
    return 1;
  PassManager PM;
  std::string Err;
  if (failed(PM.addPipeline("erase-double-neg,dce,prefix-node-names{prefix=e_}",
                            Err))) {
    llvm::errs() << "pipeline: " << Err << "\n";
    return 1;
  }
  AnalysisManager AM(*M, Diags);
  if (failed(PM.run(*M, Diags, AM)))
    return 1;
  // The shape analysis the built-in passes share.
  ShapeInfo &SI = AM.getAnalysis<ShapeInfo>();
  if (failed(SI.getResult()))
    return 1;
  llvm::outs() << "inferred " << SI.getEngine().getStats().NodesInferred
               << " nodes\n";
  return failed(saveModel(*M, Out, FileFormat::Binary, Diags)) ? 1 : 0;
}
} // namespace

int main(int Argc, char **Argv) {
  if (Argc == 4 && std::strcmp(Argv[1], "--embed") == 0)
    return embed(Argv[2], Argv[3]);
  registerConsumerPasses();
  return onnxOptMain(Argc, Argv);
}
