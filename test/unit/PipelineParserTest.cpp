//===- PipelineParserTest.cpp - Registry, pipeline text, pass manager -----===//
#include "onnxopt/Export/Export.h"
#include "onnxopt/Pass/PipelineParser.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "onnxopt/Passes.h"
#include "gtest/gtest.h"

using namespace onnxopt;

namespace {

struct TestOptionsPass : Pass {
  llvm::StringRef getArgument() const override { return "test-options"; }
  llvm::StringRef getDescription() const override {
    return "a pass with one option of each kind";
  }
  LogicalResult run(Model &, PassContext &) override { return success(); }

  Option<int64_t> Count{*this, "count", "how many times", 10};
  Option<bool> Flag{*this, "flag", "a switch"};
  Option<double> Ratio{*this, "ratio", "a fraction", 0.5};
  Option<std::string> Label{*this, "label", "free text"};
  ListOption<std::string> Dims{*this, "dims", "dim bindings like N:1"};
  ListOption<ShapeSpec> Shapes{*this, "shapes", "input shapes"};
};

struct TestPlainPass : Pass {
  llvm::StringRef getArgument() const override { return "test-plain"; }
  llvm::StringRef getDescription() const override { return "no options"; }
  LogicalResult run(Model &, PassContext &) override { return success(); }
};

bool checkEven(llvm::StringRef Text, std::string &Error) {
  int64_t V;
  if (!Text.getAsInteger(10, V) && V % 2 == 0)
    return true;
  Error = "'" + Text.str() + "' is odd";
  return false;
}

/// Options with constraints: one of `a`, `b` is required.
struct TestConstrainedPass : Pass {
  llvm::StringRef getArgument() const override { return "test-constrained"; }
  llvm::StringRef getDescription() const override { return "constraints"; }
  LogicalResult run(Model &, PassContext &) override { return success(); }
  ListOption<std::string> A{*this, "a", "required", required()};
  Option<int64_t> B{*this, "b", "required, at least 1", 1,
                    required().also(atLeast(1))};
  Option<std::string> Mode{*this, "mode", "a choice", "x",
                           oneOf({"x", "y", "z"})};
  ListOption<int64_t> Even{*this, "even", "even numbers", checkedBy(checkEven)};
};

/// Records its runs in a shared log; fails or breaks the IR on request.
struct TestActionPass : Pass {
  TestActionPass(std::string Arg, std::vector<std::string> *Log)
      : Arg(std::move(Arg)), Log(Log) {}
  llvm::StringRef getArgument() const override { return Arg; }
  llvm::StringRef getDescription() const override { return "test action"; }
  LogicalResult run(Model &M, PassContext &Ctx) override {
    Log->push_back(Arg);
    if (Fail)
      return emitError(Ctx.getDiags()) << "it went wrong";
    if (BreakIR) {
      // Use a value before its definition.
      Graph &G = M.getGraph();
      G.moveNode(&G.getNodes().back(), &G.getNodes().front());
    }
    return success();
  }
  std::string Arg;
  std::vector<std::string> *Log;
  bool Fail = false;
  bool BreakIR = false;
};

void registerTestPasses() {
  registerPass([] { return std::make_unique<TestOptionsPass>(); });
  registerPass([] { return std::make_unique<TestPlainPass>(); });
  registerPass([] { return std::make_unique<TestConstrainedPass>(); });
}

class PipelineParser : public ::testing::Test {
protected:
  void SetUp() override { registerTestPasses(); }

  /// Parses and prints back; returns the error text on failure.
  std::string roundTrip(llvm::StringRef Text) {
    PassManager PM;
    std::string Error;
    if (failed(parsePassPipeline(Text, PM, Error)))
      return "error: " + Error;
    std::string S;
    llvm::raw_string_ostream OS(S);
    PM.printAsTextualPipeline(OS);
    return OS.str();
  }

  std::string errorOf(llvm::StringRef Text) {
    PassManager PM;
    std::string Error;
    EXPECT_TRUE(failed(parsePassPipeline(Text, PM, Error))) << Text.str();
    // A failed parse adds nothing.
    EXPECT_EQ(PM.size(), 0u);
    return Error;
  }
};

} // namespace

TEST_F(PipelineParser, RoundTrips) {
  for (llvm::StringRef P :
       {"test-plain", "test-options", "test-plain,test-options,test-plain",
        "test-options{count=3}",
        "test-options{count=-1 flag=true ratio=0.125 label=abc dims=N:1,H:640 "
        "shapes=x[N,3,H,W],y[?]}",
        "test-options{label=\"two words\"}", "test-options{label=a[1,3];b[2]}"})
    EXPECT_EQ(roundTrip(P), P);
}

TEST_F(PipelineParser, OptionValues) {
  PassManager PM;
  std::string Error;
  ASSERT_TRUE(succeeded(
      parsePassPipeline("test-options{flag shapes=x[N,3],y[2] dims=N:1,H:640 "
                        "label=\"a {b} \\\"c\\\"\"}",
                        PM, Error)))
      << Error;
  ASSERT_EQ(PM.size(), 1u);
  auto &P = static_cast<TestOptionsPass &>(*PM.getPasses()[0]);
  EXPECT_TRUE(P.Flag.getValue());
  EXPECT_EQ(P.Count.getValue(), 10);
  EXPECT_FALSE(P.Count.hasValue());
  ASSERT_EQ(P.Shapes.size(), 2u);
  EXPECT_EQ(P.Shapes.getValue()[0], (ShapeSpec{"x", {"N", "3"}}));
  EXPECT_EQ(P.Dims.getValue(), (std::vector<std::string>{"N:1", "H:640"}));
  EXPECT_EQ(P.Label.getValue(), "a {b} \"c\"");
}

TEST_F(PipelineParser, Whitespace) {
  EXPECT_EQ(roundTrip("  test-plain ,test-options { count=2   flag }  ,  "
                      "test-plain "),
            "test-plain,test-options{count=2 flag=true},test-plain");
  // Spaces inside brackets belong to the value.
  EXPECT_EQ(roundTrip("test-options{shapes=x[N, 3] count=1}"),
            "test-options{count=1 shapes=x[N,3]}");
  EXPECT_EQ(roundTrip("test-options{}"), "test-options");
  EXPECT_EQ(roundTrip(""), "");
  EXPECT_EQ(roundTrip("   "), "");
}

TEST_F(PipelineParser, UnknownPass) {
  EXPECT_EQ(errorOf("test-plain,tset-plain"),
            "unknown pass 'tset-plain' at position 12; did you mean "
            "'test-plain'?");
  EXPECT_EQ(errorOf("frobnicate"), "unknown pass 'frobnicate' at position 1");
}

TEST_F(PipelineParser, UnknownOption) {
  EXPECT_EQ(errorOf("test-options{count=1 bogus=2}"),
            "pass 'test-options' has no option 'bogus' at position 22 "
            "(available: count, dims, flag, label, ratio, shapes)");
  EXPECT_EQ(errorOf("test-plain{x=1}"),
            "pass 'test-plain' has no option 'x' at position 12 (it has no "
            "options)");
}

TEST_F(PipelineParser, InvalidValue) {
  EXPECT_EQ(errorOf("test-options{count=x}"),
            "invalid value for option 'count' of pass 'test-options' at "
            "position 20: expected an integer, got 'x'");
  EXPECT_EQ(errorOf("test-options{flag=maybe}"),
            "invalid value for option 'flag' of pass 'test-options' at "
            "position 19: expected 'true' or 'false', got 'maybe'");
  EXPECT_EQ(
      errorOf("test-options{shapes=x[1],y}"),
      "invalid value for option 'shapes' of pass 'test-options' at "
      "position 21: expected 'name[d0,d1,...]' or 'name:1x3x640x640', got 'y'");
  EXPECT_EQ(errorOf("test-options{count}"),
            "expected '=' after option 'count' of pass 'test-options' at "
            "position 19");
}

TEST_F(PipelineParser, Syntax) {
  EXPECT_EQ(errorOf("test-options{count=1"),
            "expected '}' at position 21 to end the options of pass "
            "'test-options'");
  EXPECT_EQ(errorOf("test-options{shapes=x[1 count=1}"),
            "expected ']' at position 33");
  EXPECT_EQ(errorOf(",test-plain"), "empty pass name at position 1");
  EXPECT_EQ(errorOf("test-plain,"), "empty pass name at position 12");
  EXPECT_EQ(errorOf("test-plain,,test-plain"),
            "empty pass name at position 12");
  EXPECT_EQ(errorOf("{count=1}"), "empty pass name at position 1");
  EXPECT_EQ(errorOf("test-plain test-plain"),
            "passes are separated by commas at position 12: "
            "'test-plain,test-plain'");
  EXPECT_EQ(errorOf("test-plain test-options"),
            "passes are separated by commas at position 12: "
            "'test-plain,test-options'");
  EXPECT_EQ(errorOf("test-options count=2"),
            "options go in braces after the pass name at position 14: "
            "'test-options{count=2}'");
  EXPECT_EQ(errorOf("test-plain;test-options"),
            "passes are separated by commas at position 11: "
            "'test-plain;test-options' -> 'test-plain,test-options'");
  EXPECT_EQ(errorOf("test-plain xyz"),
            "expected ',' or end of pipeline at position 12, got 'x'");
  EXPECT_EQ(errorOf("test-options{=1}"),
            "expected an option name at position 14");
  EXPECT_EQ(errorOf("test-options{label=\"abc}"),
            "unterminated quoted value at position 20");
}

TEST_F(PipelineParser, Registry) {
  ASSERT_TRUE(createPass("test-plain"));
  EXPECT_EQ(createPass("test-plain")->getArgument(), "test-plain");
  EXPECT_FALSE(createPass("no-such-pass"));

  std::vector<std::unique_ptr<Pass>> All = getRegisteredPasses();
  for (size_t I = 1; I < All.size(); ++I)
    EXPECT_LT(All[I - 1]->getArgument(), All[I]->getArgument());

  std::string S;
  llvm::raw_string_ostream OS(S);
  printRegisteredPasses(OS);
  OS.flush();
  // The argument column is as wide as the longest registered argument.
  EXPECT_NE(S.find("  test-plain "), std::string::npos) << S;
  EXPECT_NE(S.find("  - no options\n"), std::string::npos) << S;
  EXPECT_NE(S.find("  - a pass with one option of each kind\n"
                   "    count=<int>           how many times (default: 10)\n"
                   "    dims=<list<string>>   dim bindings like N:1\n"
                   "    flag=<bool>           a switch (default: false)\n"
                   "    label=<string>        free text\n"
                   "    ratio=<float>         a fraction (default: 0.5)\n"
                   "    shapes=<list<shape>>  input shapes\n"),
            std::string::npos)
      << S;
}

TEST_F(PipelineParser, BuiltinPasses) {
  registerAllPasses();
  registerAllPasses();
  for (llvm::StringRef Arg : {"cse", "dce", "eliminate-identity", "topo-sort"})
    EXPECT_TRUE(createPass(Arg)) << Arg.str();
  EXPECT_EQ(errorOf("csee"),
            "unknown pass 'csee' at position 1; did you mean 'cse'?");
}

//===----------------------------------------------------------------------===//
// Running pipelines
//===----------------------------------------------------------------------===//

namespace {

/// x -> Relu -> a -> Neg -> y.
struct SmallModel {
  Model M;
  SmallModel() {
    Graph &G = M.getGraph();
    for (const char *N : {"x", "a", "y", "relu", "neg"})
      M.reserveName(N);
    Value *X =
        G.addInput("x", Type::tensor(1, std::vector<Dim>{Dim::known(2)}));
    Node *Relu = G.createNode("Relu", "", "relu", {X}, {"a"});
    Node *Neg = G.createNode("Neg", "", "neg", {Relu->getResult(0)}, {"y"});
    Neg->getResult(0)->setType(X->getType());
    G.addOutput(Neg->getResult(0));
  }
};

struct CollectedDiags {
  DiagnosticEngine Engine;
  std::vector<std::string> Lines;
  CollectedDiags() {
    Engine.setHandler([this](const Diagnostic &D) {
      std::string S;
      llvm::raw_string_ostream OS(S);
      Engine.print(OS, D);
      Lines.push_back(OS.str());
    });
  }
};

} // namespace

TEST(PassManagerRun, RunsInOrderAndTimes) {
  std::vector<std::string> Log;
  PassManagerOptions Opts;
  Opts.Timing = true;
  PassManager PM(Opts);
  PM.addPass(std::make_unique<TestActionPass>("first", &Log));
  PM.addPass(std::make_unique<TestActionPass>("second", &Log));
  SmallModel S;
  CollectedDiags D;
  ASSERT_TRUE(succeeded(PM.run(S.M, D.Engine)));
  EXPECT_EQ(Log, (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(D.Lines.empty());

  std::string T;
  llvm::raw_string_ostream OS(T);
  PM.printTiming(OS);
  OS.flush();
  EXPECT_NE(T.find("Pass execution timing report"), std::string::npos);
  EXPECT_NE(T.find("%)  first\n"), std::string::npos) << T;
  EXPECT_NE(T.find("%)  second\n"), std::string::npos) << T;
  EXPECT_NE(T.find("%)  (verifier)\n"), std::string::npos) << T;
  EXPECT_NE(T.find("(100.0%)  Total\n"), std::string::npos) << T;
  EXPECT_LT(T.find("first"), T.find("second"));
}

TEST(PassManagerRun, StopsAtFailingPass) {
  std::vector<std::string> Log;
  PassManager PM;
  PM.addPass(std::make_unique<TestActionPass>("first", &Log));
  auto Bad = std::make_unique<TestActionPass>("bad", &Log);
  Bad->Fail = true;
  PM.addPass(std::move(Bad));
  PM.addPass(std::make_unique<TestActionPass>("never", &Log));
  SmallModel S;
  CollectedDiags D;
  EXPECT_TRUE(failed(PM.run(S.M, D.Engine)));
  EXPECT_EQ(Log, (std::vector<std::string>{"first", "bad"}));
  ASSERT_EQ(D.Lines.size(), 2u);
  // The pass manager names the pass; the pass did not type it.
  EXPECT_EQ(D.Lines[0], "error: bad: it went wrong\n");
  EXPECT_EQ(D.Lines[1], "note: pass 'bad' failed\n");
}

TEST(PassManagerRun, VerifiesEachPass) {
  std::vector<std::string> Log;
  PassManager PM;
  auto Breaker = std::make_unique<TestActionPass>("breaker", &Log);
  Breaker->BreakIR = true;
  PM.addPass(std::move(Breaker));
  PM.addPass(std::make_unique<TestActionPass>("never", &Log));
  SmallModel S;
  CollectedDiags D;
  EXPECT_TRUE(failed(PM.run(S.M, D.Engine)));
  EXPECT_EQ(Log, (std::vector<std::string>{"breaker"}));
  ASSERT_GE(D.Lines.size(), 2u);
  EXPECT_EQ(D.Lines.back(),
            "error: verification failed after pass 'breaker'\n");

  // Without verification the broken IR goes through unnoticed.
  SmallModel S2;
  CollectedDiags D2;
  Log.clear();
  PM.getOptions().VerifyEach = false;
  EXPECT_TRUE(succeeded(PM.run(S2.M, D2.Engine)));
  EXPECT_EQ(Log, (std::vector<std::string>{"breaker", "never"}));
}

TEST(PassManagerRun, PrintsIrAfterSelectedPasses) {
  std::vector<std::string> Log;
  std::string Ir;
  llvm::raw_string_ostream IrOS(Ir);
  PassManagerOptions Opts;
  Opts.PrintIrAfter = {"second"};
  Opts.IrStream = &IrOS;
  Opts.IrPrinter = [](const Model &M, llvm::raw_ostream &OS) {
    printModel(M, OS);
  };
  PassManager PM(Opts);
  PM.addPass(std::make_unique<TestActionPass>("first", &Log));
  PM.addPass(std::make_unique<TestActionPass>("second", &Log));
  SmallModel S;
  CollectedDiags D;
  ASSERT_TRUE(succeeded(PM.run(S.M, D.Engine)));
  IrOS.flush();
  EXPECT_EQ(Ir.find("# -----// IR after pass 'first' //----- #"),
            std::string::npos);
  size_t Header = Ir.find("# -----// IR after pass 'second' //----- #\n");
  ASSERT_EQ(Header, 0u) << Ir;
  EXPECT_NE(Ir.find("Relu"), std::string::npos) << Ir;

  Ir.clear();
  PM.getOptions().PrintIrAfter.clear();
  PM.getOptions().PrintIrAfterAll = true;
  SmallModel S2;
  ASSERT_TRUE(succeeded(PM.run(S2.M, D.Engine)));
  IrOS.flush();
  EXPECT_NE(Ir.find("IR after pass 'first'"), std::string::npos);
  EXPECT_LT(Ir.find("IR after pass 'first'"),
            Ir.find("IR after pass 'second'"));
}

TEST_F(PipelineParser, Constraints) {
  EXPECT_EQ(roundTrip("test-constrained{a=1}"), "test-constrained{a=1}");
  EXPECT_EQ(roundTrip("test-constrained{b=2 mode=z even=2,4}"),
            "test-constrained{b=2 mode=z even=2,4}");
  EXPECT_EQ(errorOf("test-plain,test-constrained"),
            "pass 'test-constrained' needs option 'a' or 'b' at position 12, "
            "e.g. 'test-constrained{a=...}' (see onnx-opt --list-passes)");
  EXPECT_EQ(errorOf("test-constrained{mode=y}"),
            "pass 'test-constrained' needs option 'a' or 'b' at position 1, "
            "e.g. 'test-constrained{a=...}' (see onnx-opt --list-passes)");
  EXPECT_EQ(errorOf("test-constrained{b=0}"),
            "invalid value for option 'b' of pass 'test-constrained' at "
            "position 20: must be at least 1, got 0");
  EXPECT_EQ(errorOf("test-constrained{a=1 mode=w}"),
            "invalid value for option 'mode' of pass 'test-constrained' at "
            "position 27: expected 'x', 'y' or 'z', got 'w'");
  EXPECT_EQ(errorOf("test-constrained{a=1 even=2,3}"),
            "invalid value for option 'even' of pass 'test-constrained' at "
            "position 27: '3' is odd");
}

TEST_F(PipelineParser, HintsAndPositions) {
  std::vector<std::unique_ptr<Pass>> Passes;
  PipelineError E;
  // A comma between options: the pipeline as it should be, at the comma.
  ASSERT_TRUE(
      failed(parsePassPipeline("test-options{dims=N:1,count=2}", Passes, E)));
  EXPECT_EQ(E.Message, "options are separated by spaces, not commas: "
                       "'test-options{dims=N:1 count=2}'");
  EXPECT_EQ(E.Pos, 21u);
  // A comma inside a list value is not that mistake.
  EXPECT_EQ(roundTrip("test-options{dims=N:1,H:2}"),
            "test-options{dims=N:1,H:2}");
  // A misspelled option gets the closest name.
  ASSERT_TRUE(failed(parsePassPipeline("test-options{cout=2}", Passes, E)));
  EXPECT_EQ(E.Message,
            "pass 'test-options' has no option 'cout'; did you mean 'count'?");
  EXPECT_EQ(E.Pos, 13u);
  EXPECT_TRUE(Passes.empty());
  EXPECT_EQ(suggestClosest("sumary", {"summary", "simplify"}), "summary");
  EXPECT_EQ(suggestClosest("xyz", {"summary", "simplify"}), "");
}
