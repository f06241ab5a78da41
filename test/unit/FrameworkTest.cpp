//===- FrameworkTest.cpp - GraphPass, analyses, rewriter helpers ----------===//
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Import/Import.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/Passes.h"
#include "gtest/gtest.h"

using namespace onnxopt;

namespace {

std::unique_ptr<Model> parse(llvm::StringRef Text) {
  DiagnosticEngine D;
  std::unique_ptr<Model> M = parseTextModel(Text, D);
  EXPECT_TRUE(M) << Text.str();
  return M;
}

std::string print(const Model &M) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printModel(M, OS);
  return OS.str();
}

/// Collects printed diagnostics.
struct Collected {
  DiagnosticEngine Engine;
  std::vector<std::string> Lines;
  Collected() {
    Engine.setHandler([this](const Diagnostic &D) {
      std::string S;
      llvm::raw_string_ostream OS(S);
      Engine.print(OS, D);
      Lines.push_back(OS.str());
    });
  }
};

// Two nested levels: main -> If (then: Loop-free Neg, else: If -> Abs).
const char *Nested = R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[N] X, bool C) => (float[N] Y) {
  Y = If <then_branch = a () => (float[N] A) {
    A = Neg (X)
  }, else_branch = b () => (float[N] B) {
    B = If <then_branch = c () => (float[N] CC) {
      CC = Abs (X)
    }, else_branch = d () => (float[N] D) {
      D = Relu (X)
    }> (C)
  }> (C)
}
)";

std::vector<std::string> names(llvm::ArrayRef<Graph *> Gs) {
  std::vector<std::string> Out;
  for (Graph *G : Gs)
    Out.push_back(G->getName().str());
  return Out;
}

TEST(GraphPassWalk, Orders) {
  std::unique_ptr<Model> M = parse(Nested);
  ASSERT_TRUE(M);
  EXPECT_EQ(names(collectGraphs(*M, GraphPass::Order::ParentFirst)),
            (std::vector<std::string>{"main", "a", "b", "c", "d"}));
  EXPECT_EQ(names(collectGraphs(*M, GraphPass::Order::BodiesFirst)),
            (std::vector<std::string>{"a", "c", "d", "b", "main"}));
}

/// Records the graphs it visits and counts nodes into a statistic.
class RecordingPass : public GraphPass {
public:
  explicit RecordingPass(std::vector<std::string> &Log) : Log(Log) {}
  llvm::StringRef getArgument() const override { return "record"; }
  llvm::StringRef getDescription() const override { return "test"; }
  LogicalResult runOnGraph(Graph &G, Model &, PassContext &) override {
    Log.push_back(G.getName().str());
    for (Node &N : G.getNodes()) {
      (void)N;
      ++NumNodes;
    }
    return success();
  }
  LogicalResult finishModel(Model &, PassContext &) override {
    Log.push_back("nodes=" + std::to_string(NumNodes));
    return success();
  }
  std::vector<std::string> &Log;
  Statistic NumNodes{this, "num-nodes", "Nodes visited"};
};

/// Does nothing and declares no statistic.
class QuietPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "quiet"; }
  llvm::StringRef getDescription() const override { return "test"; }
  LogicalResult run(Model &, PassContext &) override { return success(); }
};

TEST(GraphPassWalk, PassManagerVisitsEveryGraphThenFinishes) {
  std::unique_ptr<Model> M = parse(Nested);
  ASSERT_TRUE(M);
  std::vector<std::string> Log;
  PassManager PM;
  PM.addPass(std::make_unique<RecordingPass>(Log));
  Collected D;
  ASSERT_TRUE(succeeded(PM.run(*M, D.Engine)));
  EXPECT_EQ(Log,
            (std::vector<std::string>{"a", "c", "d", "b", "main", "nodes=5"}));
}

/// Counts graphs and nodes; declares a statistic it never bumps.
class CountingPass : public GraphPass {
public:
  llvm::StringRef getArgument() const override { return "count"; }
  llvm::StringRef getDescription() const override { return "test"; }
  LogicalResult runOnGraph(Graph &G, Model &, PassContext &) override {
    ++NumGraphs;
    NumNodes += G.getNodes().size();
    return success();
  }
  Statistic NumGraphs{this, "num-graphs", "Graphs visited"};
  Statistic NumNodes{this, "num-nodes-in-all-graphs", "Nodes visited"};
  Statistic NumNever{this, "num-never", "Never counted"};
};

TEST(PassStatistics, DeclaredCountedAndPrintedInPipelineOrder) {
  std::unique_ptr<Model> M = parse(Nested);
  ASSERT_TRUE(M);
  std::vector<std::string> Log;
  PassManager PM;
  PM.addPass(std::make_unique<RecordingPass>(Log));
  PM.addPass(std::make_unique<QuietPass>());
  auto Counting = std::make_unique<CountingPass>();
  CountingPass *C = Counting.get();
  PM.addPass(std::move(Counting));
  ASSERT_EQ(C->getStatistics().size(), 3u);
  EXPECT_EQ(C->getStatistics()[0]->getName(), "num-graphs");
  EXPECT_EQ(C->getStatistics()[1]->getDescription(), "Nodes visited");
  Collected D;
  ASSERT_TRUE(succeeded(PM.run(*M, D.Engine)));
  EXPECT_EQ(C->NumGraphs, 5u);
  EXPECT_EQ(C->NumNodes, 5u);
  EXPECT_EQ(C->NumNever, 0u);
  // A second run counts on: a statistic covers every run of its pass.
  ASSERT_TRUE(succeeded(PM.run(*M, D.Engine)));
  EXPECT_EQ(C->NumGraphs.getValue(), 10u);

  std::string Text;
  llvm::raw_string_ostream OS(Text);
  PM.printStatistics(OS);
  // Passes without statistics are left out; values and names in columns.
  EXPECT_NE(OS.str().find("Pass statistics report"), std::string::npos);
  EXPECT_NE(OS.str().find("record\n  (S) 10 num-nodes - Nodes visited\n"),
            std::string::npos)
      << OS.str();
  EXPECT_NE(OS.str().find("count\n"
                          "  (S) 10 num-graphs              - Graphs visited\n"
                          "  (S) 10 num-nodes-in-all-graphs - Nodes visited\n"
                          "  (S)  0 num-never               - Never counted\n"),
            std::string::npos)
      << OS.str();
  EXPECT_EQ(OS.str().find("quiet"), std::string::npos) << OS.str();
}

TEST(PassStatistics, NoReportWithoutStatistics) {
  PassManager PM;
  PM.addPass(std::make_unique<QuietPass>());
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  PM.printStatistics(OS);
  EXPECT_EQ(OS.str(), "");
}

/// An analysis that counts how often it is built.
struct CountingAnalysis {
  static inline int Built = 0;
  CountingAnalysis(Model &, AnalysisManager &) { ++Built; }
};

/// Asks for the analysis; optionally changes the model and preserves it.
class UsesAnalysisPass : public Pass {
public:
  UsesAnalysisPass(bool Change, bool Preserve)
      : Change(Change), Preserve(Preserve) {}
  llvm::StringRef getArgument() const override { return "uses"; }
  llvm::StringRef getDescription() const override { return "test"; }
  LogicalResult run(Model &, PassContext &Ctx) override {
    (void)Ctx.getAnalysis<CountingAnalysis>();
    Ctx.Changed = Change;
    if (Preserve)
      Ctx.markAnalysisPreserved<CountingAnalysis>();
    return success();
  }
  bool Change, Preserve;
};

TEST(AnalysisManager, CachedUntilAPassInvalidatesIt) {
  std::unique_ptr<Model> M = parse(Nested);
  ASSERT_TRUE(M);
  CountingAnalysis::Built = 0;
  PassManager PM;
  PM.addPass(std::make_unique<UsesAnalysisPass>(false, false)); // builds
  PM.addPass(std::make_unique<UsesAnalysisPass>(false, false)); // cached
  PM.addPass(std::make_unique<UsesAnalysisPass>(true, true));   // kept
  PM.addPass(std::make_unique<UsesAnalysisPass>(true, false));  // dropped
  PM.addPass(std::make_unique<UsesAnalysisPass>(false, false)); // rebuilt
  Collected D;
  ASSERT_TRUE(succeeded(PM.run(*M, D.Engine)));
  EXPECT_EQ(CountingAnalysis::Built, 2);
}

/// Emits an error but returns success.
class SloppyPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "sloppy"; }
  llvm::StringRef getDescription() const override { return "test"; }
  LogicalResult run(Model &, PassContext &Ctx) override {
    emitError(Ctx.getDiags()) << "something is wrong";
    return success();
  }
};

TEST(PassManagerRun, AnErrorFailsThePassEvenIfItReturnsSuccess) {
  std::unique_ptr<Model> M = parse(Nested);
  ASSERT_TRUE(M);
  PassManager PM;
  PM.addPass(std::make_unique<SloppyPass>());
  Collected D;
  EXPECT_TRUE(failed(PM.run(*M, D.Engine)));
  ASSERT_EQ(D.Lines.size(), 2u);
  EXPECT_EQ(D.Lines[0], "error: sloppy: something is wrong\n");
  EXPECT_EQ(D.Lines[1], "note: pass 'sloppy' failed\n");
}

TEST(PassManagerRun, PipelinesBuiltInCode) {
  registerAllPasses();
  PassManager PM;
  std::string Err;
  EXPECT_TRUE(succeeded(PM.addPipeline("cse,dce{keep-custom-ops=true}", Err)));
  EXPECT_EQ(PM.size(), 2u);
  EXPECT_TRUE(failed(PM.addPipeline("cse,nope", Err)));
  EXPECT_NE(Err.find("unknown pass 'nope'"), std::string::npos) << Err;
  EXPECT_EQ(PM.size(), 2u) << "a bad pipeline adds nothing";
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  PM.printAsTextualPipeline(OS);
  EXPECT_EQ(OS.str(), "cse,dce{keep-custom-ops=true}");
}

/// Adds a Shape of the innermost body's input (a subgraph: the size counts
/// every graph); with \p EraseOne it also erases the main graph's last
/// node, so the node count stays and only the Shape ops grow.
class GrowingPass : public Pass {
public:
  explicit GrowingPass(bool EraseOne) : EraseOne(EraseOne) {}
  llvm::StringRef getArgument() const override { return "grow"; }
  llvm::StringRef getDescription() const override { return "test"; }
  LogicalResult run(Model &M, PassContext &Ctx) override {
    Graph *G = &M.getGraph();
    while (!G->getNodes().empty() &&
           !G->getNodes().front().getSubgraphs().empty())
      G = G->getNodes().front().getSubgraphs().back();
    Rewriter R(M, Ctx.getDiags());
    if (EraseOne)
      R.eraseNode(&M.getGraph().getNodes().back());
    R.setInsertionPoint(*G, nullptr);
    Value *X = M.getGraph().getInputs().front().get();
    R.createNode("Shape", {X});
    Ctx.Changed = true;
    return success();
  }
  bool EraseOne;
};

TEST(PassManagerGrowth, AGrowingPassFailsOnlyWithFailOnGrowth) {
  for (bool FailOnGrowth : {false, true}) {
    std::unique_ptr<Model> M = parse(Nested);
    ASSERT_TRUE(M);
    PassManagerOptions Opts;
    Opts.FailOnGrowth = FailOnGrowth;
    PassManager PM(Opts);
    PM.addPass(std::make_unique<QuietPass>());
    PM.addPass(std::make_unique<GrowingPass>(false));
    Collected D;
    LogicalResult R = PM.run(*M, D.Engine);
    if (!FailOnGrowth) {
      EXPECT_TRUE(succeeded(R));
      EXPECT_TRUE(D.Lines.empty());
      // Nothing measured, nothing printed.
      std::string Text;
      llvm::raw_string_ostream OS(Text);
      PM.printGraphSizes(OS);
      EXPECT_EQ(OS.str(), "");
      continue;
    }
    EXPECT_TRUE(failed(R));
    ASSERT_EQ(D.Lines.size(), 1u);
    // The Shape went into the innermost If's else branch: 5 nodes in 5
    // graphs, then 6.
    EXPECT_EQ(D.Lines[0], "error: pass 'grow' made the graph bigger: 5 nodes "
                          "(0 Shape) before, 6 nodes (1 Shape) after "
                          "(--fail-on-growth)\n");
  }
}

TEST(PassManagerGrowth, MoreShapeOpsAloneIsGrowth) {
  std::unique_ptr<Model> M = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N] X) => (float[N] Y) {
  Y = Neg (X)
  Z = Abs (X)
}
)");
  ASSERT_TRUE(M);
  PassManagerOptions Opts;
  Opts.FailOnGrowth = true;
  PassManager PM(Opts);
  PM.addPass(std::make_unique<GrowingPass>(true));
  Collected D;
  EXPECT_TRUE(failed(PM.run(*M, D.Engine)));
  ASSERT_EQ(D.Lines.size(), 1u);
  EXPECT_EQ(D.Lines[0], "error: pass 'grow' made the graph bigger: 2 nodes "
                        "(0 Shape) before, 2 nodes (1 Shape) after "
                        "(--fail-on-growth)\n");
}

TEST(PassManagerGrowth, MeasureRecordsEveryPassAndMarksGrowth) {
  std::unique_ptr<Model> M = parse(Nested);
  ASSERT_TRUE(M);
  PassManagerOptions Opts;
  Opts.Measure = true;
  PassManager PM(Opts);
  PM.addPass(std::make_unique<QuietPass>());
  PM.addPass(std::make_unique<GrowingPass>(false));
  Collected D;
  ASSERT_TRUE(succeeded(PM.run(*M, D.Engine)));
  EXPECT_EQ(GraphSize::of(*M).Nodes, 6u);
  EXPECT_EQ(GraphSize::of(*M).ShapeOps, 1u);
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  PM.printGraphSizes(OS);
  EXPECT_NE(OS.str().find("Graph size report"), std::string::npos);
  EXPECT_NE(OS.str().find("5 (0) -> 5 (0)           quiet\n"),
            std::string::npos)
      << OS.str();
  EXPECT_NE(OS.str().find("5 (0) -> 6 (1)           grow  (grew)\n"),
            std::string::npos)
      << OS.str();
}

TEST(RewriterHelpers, ReplaceWithConstantKeepsTheName) {
  std::unique_ptr<Model> M = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y, int64[1] S) {
  T = Shape (X)
  Y = Relu (X)
  S = Identity (T)
  U = Neg (X)
}
)");
  ASSERT_TRUE(M);
  Collected D;
  Rewriter R(*M, D.Engine);
  Graph &G = M->getGraph();
  Node *Shape = &*G.getNodes().begin();
  Value *C = R.replaceWithConstant(*Shape->getResult(0),
                                   Tensor::fromInt64s("", {1}, {2}));
  ASSERT_TRUE(C);
  EXPECT_EQ(C->getName(), "T");
  EXPECT_TRUE(C->isConstant());
  EXPECT_EQ(R.eraseDeadChain(*Shape), 1u);
  std::string Text = print(*M);
  EXPECT_NE(Text.find("int64[1] T = {2}"), std::string::npos) << Text;
  EXPECT_EQ(Text.find("Shape"), std::string::npos) << Text;
}

TEST(RewriterHelpers, EraseDeadChainWithAValueReadTwice) {
  // Concat(C, C): the producer of C is reached through both operands.
  std::unique_ptr<Model> M = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y) <float[2] W = {1.0, 2.0}> {
  C = Add (X, W)
  K = Concat <axis = 0> (C, C)
  Y = Relu (X)
}
)");
  ASSERT_TRUE(M);
  Collected D;
  Rewriter R(*M, D.Engine);
  Node *Concat = nullptr;
  for (Node &N : M->getGraph().getNodes())
    if (N.is("Concat"))
      Concat = &N;
  ASSERT_TRUE(Concat);
  EXPECT_EQ(R.eraseDeadChain(*Concat), 2u);
  std::string Text = print(*M);
  EXPECT_EQ(Text.find("Add"), std::string::npos) << Text;
  EXPECT_EQ(Text.find("W ="), std::string::npos) << "W died with its user";
}

TEST(PatternDriverFold, FoldHookReplacesResultsAndErasesTheNode) {
  std::unique_ptr<Model> M = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y) {
  K = Constant <value = float[2] {1.0, 2.0}> ()
  N = Neg (K)
  Y = Add (X, N)
}
)");
  ASSERT_TRUE(M);
  GreedyRewriteConfig Config;
  Config.Fold = [](Node &N) -> std::optional<std::vector<Tensor>> {
    if (!N.is("Neg"))
      return std::nullopt;
    return std::vector<Tensor>{Tensor::fromFloats("", {2}, {-1.0f, -2.0f})};
  };
  Collected D;
  bool Changed = false;
  ASSERT_TRUE(
      succeeded(applyPatternsGreedily(*M, {}, D.Engine, Config, &Changed)));
  EXPECT_TRUE(Changed);
  std::string Text = print(*M);
  EXPECT_EQ(Text.find("Neg"), std::string::npos) << Text;
  EXPECT_NE(Text.find("float[2] N = {-1.0, -2.0}"), std::string::npos) << Text;
}

TEST(PatternDriverDead, ZeroResultCustomNodesStay) {
  std::unique_ptr<Model> M = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
g (float[2] X) => (float[2] Y) {
  Y = Relu (X)
}
)");
  ASSERT_TRUE(M);
  // ONNX 1.12 text cannot write a node without outputs: build it.
  Graph &G = M->getGraph();
  G.createNode("Print", "com.example", "print", {G.getInput(0)}, {});
  // A default-domain node without results is dead.
  G.createNode("Relu", "", "dead", {G.getInput(0)}, {});
  Collected D;
  ASSERT_TRUE(succeeded(applyPatternsGreedily(*M, {}, D.Engine)));
  std::vector<std::string> Ops;
  for (Node &N : G.getNodes())
    Ops.push_back(N.getOpType().str());
  EXPECT_EQ(Ops, (std::vector<std::string>{"Relu", "Print"}));
}

} // namespace

namespace {
TEST(ShapeInferenceSubgraphs, AnErrorInABodyFailsTheWholeInference) {
  // The then-branch declares Relu's result with the wrong length.
  std::unique_ptr<Model> M = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X, bool C) => (float[2] Y) {
  Y = If <then_branch = t () => (float[2] A) {
    A = Relu (X)
  }, else_branch = e () => (float[2] B) {
    B = Neg (X)
  }> (C)
}
)");
  ASSERT_TRUE(M);
  Graph &Then = *M->getGraph().getNodes().begin()->getSubgraphs()[0];
  Then.getOutput(0)->setType(Type::tensor(1, std::vector<Dim>{Dim::known(3)}));
  Collected D;
  ShapeInference SI(*M, D.Engine);
  EXPECT_TRUE(failed(SI.inferModel()));
  ASSERT_FALSE(D.Lines.empty());
  EXPECT_NE(D.Lines[0].find("contradicts"), std::string::npos) << D.Lines[0];
}
} // namespace
