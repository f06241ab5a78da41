//===- PatternDriverTest.cpp - Greedy pattern driver units ----------------===//
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/IR/Verifier.h"
#include "gtest/gtest.h"

using namespace onnxopt;

namespace {

/// Builds graphs by hand with unique names.
struct Builder {
  Model M;
  Graph &G = M.getGraph();

  static Type floatN() {
    return Type::tensor(1, std::vector<Dim>{Dim::symbol("N")});
  }
  Value *input(Graph &In, llvm::StringRef Name) {
    M.reserveName(Name);
    return In.addInput(Name, floatN());
  }
  Value *input(llvm::StringRef Name) { return input(G, Name); }
  Node *node(Graph &In, llvm::StringRef Op, llvm::ArrayRef<Value *> Operands,
             llvm::StringRef Result, llvm::StringRef Domain = "") {
    M.reserveName(Result);
    Node *N = In.createNode(Op, Domain, M.makeUniqueName(Op), Operands,
                            {Result.str()});
    N->getResult(0)->setType(floatN());
    return N;
  }
  Node *node(llvm::StringRef Op, llvm::ArrayRef<Value *> Operands,
             llvm::StringRef Result, llvm::StringRef Domain = "") {
    return node(G, Op, Operands, Result, Domain);
  }
  /// Adds an attribute holding a new, empty subgraph to \p Parent.
  Graph &subgraph(Node *Parent, llvm::StringRef AttrName) {
    Attribute A;
    A.Name = AttrName.str();
    A.Kind = AttrKind::Graph;
    A.Graphs.push_back(std::make_unique<Graph>(&M, AttrName.str(), Parent));
    Graph *Sub = A.Graphs[0].get();
    Parent->setAttr(std::move(A));
    return *Sub;
  }

  /// Op types of the nodes of \p In, in order.
  static std::vector<std::string> ops(const Graph &In) {
    std::vector<std::string> Ops;
    for (const Node &N : In.getNodes())
      Ops.push_back(N.getOpType().str());
    return Ops;
  }
  std::vector<std::string> ops() const { return ops(G); }

  bool verify() {
    DiagnosticEngine D;
    return succeeded(verifyModel(M, D));
  }
};

using Ops = std::vector<std::string>;
using PatternList = std::vector<std::unique_ptr<Pattern>>;

/// Y = Identity(X): users of Y read X.
struct FoldIdentity : Pattern {
  FoldIdentity() : Pattern("Identity") {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    return R.replaceNode(&N, {N.getOperand(0)});
  }
};

/// Diagnostics collected as messages.
struct Diags {
  DiagnosticEngine Engine;
  std::vector<std::string> Errors;
  Diags() {
    Engine.setHandler(
        [this](const Diagnostic &D) { Errors.push_back(D.Message); });
  }
};

template <typename... Ps> PatternList patterns() {
  PatternList L;
  (L.push_back(std::make_unique<Ps>()), ...);
  return L;
}

} // namespace

TEST(PatternDriver, FoldsIdentityChain) {
  Builder B;
  Value *X = B.input("x");
  Node *I1 = B.node("Identity", {X}, "i1");
  Node *I2 = B.node("Identity", {I1->getResult(0)}, "i2");
  Node *Relu = B.node("Relu", {I2->getResult(0)}, "y");
  B.G.addOutput(Relu->getResult(0));

  Diags D;
  bool Changed = false;
  ASSERT_TRUE(succeeded(applyPatternsGreedily(B.M, patterns<FoldIdentity>(),
                                              D.Engine, {}, &Changed)));
  EXPECT_TRUE(Changed);
  EXPECT_EQ(B.ops(), Ops{"Relu"});
  EXPECT_EQ(Relu->getOperand(0), X);
  EXPECT_TRUE(D.Errors.empty());
  EXPECT_TRUE(B.verify());
}

TEST(PatternDriver, IdentityFeedingGraphOutput) {
  Builder B;
  Value *X = B.input("x");
  Node *Relu = B.node("Relu", {X}, "a");
  Node *Id = B.node("Identity", {Relu->getResult(0)}, "y");
  B.G.addOutput(Id->getResult(0));
  // Identity of a graph input straight to an output cannot be folded: the
  // rewriter refuses to change the graph interface.
  Node *Kept = B.node("Identity", {X}, "z");
  B.G.addOutput(Kept->getResult(0));

  Diags D;
  ASSERT_TRUE(succeeded(
      applyPatternsGreedily(B.M, patterns<FoldIdentity>(), D.Engine)));
  EXPECT_EQ(B.ops(), (Ops{"Relu", "Identity"}));
  EXPECT_EQ(B.G.getOutput(0)->getName(), "y");
  EXPECT_EQ(B.G.getOutput(0)->getDefiningNode(), Relu);
  EXPECT_TRUE(B.verify());
}

TEST(PatternDriver, NothingToDo) {
  Builder B;
  Node *Relu = B.node("Relu", {B.input("x")}, "y");
  B.G.addOutput(Relu->getResult(0));
  Diags D;
  bool Changed = true;
  ASSERT_TRUE(succeeded(applyPatternsGreedily(B.M, patterns<FoldIdentity>(),
                                              D.Engine, {}, &Changed)));
  EXPECT_FALSE(Changed);
  EXPECT_EQ(B.ops(), Ops{"Relu"});
}

TEST(PatternDriver, ErasesDeadNodes) {
  Builder B;
  Value *X = B.input("x");
  // A dead chain: Abs -> Neg, nothing reads Neg.
  Node *Abs = B.node("Abs", {X}, "b");
  B.node("Neg", {Abs->getResult(0)}, "c");
  Node *Relu = B.node("Relu", {X}, "y");
  B.G.addOutput(Relu->getResult(0));

  Diags D;
  GreedyRewriteConfig NoErase;
  NoErase.EraseDeadNodes = false;
  bool Changed = true;
  ASSERT_TRUE(
      succeeded(applyPatternsGreedily(B.M, {}, D.Engine, NoErase, &Changed)));
  EXPECT_FALSE(Changed);
  EXPECT_EQ(B.ops(), (Ops{"Abs", "Neg", "Relu"}));

  ASSERT_TRUE(
      succeeded(applyPatternsGreedily(B.M, {}, D.Engine, {}, &Changed)));
  EXPECT_TRUE(Changed);
  EXPECT_EQ(B.ops(), Ops{"Relu"});
  EXPECT_EQ(X->getNumUses(), 1u);
  EXPECT_TRUE(B.verify());
}

namespace {

/// x, c -> If(c) { then: Identity(Identity(x)) ; else: Neg(Identity(x)) }.
struct IfModel {
  Builder B;
  Value *X, *Cond;
  Node *If;
  Graph *Then, *Else;
  IfModel() {
    X = B.input("x");
    Cond = B.input("c");
    If = B.node("If", {Cond}, "y");
    B.G.addOutput(If->getResult(0));
    Then = &B.subgraph(If, "then_branch");
    Node *T1 = B.node(*Then, "Identity", {X}, "t1");
    Node *T2 = B.node(*Then, "Relu", {T1->getResult(0)}, "t2");
    Then->addOutput(T2->getResult(0));
    Else = &B.subgraph(If, "else_branch");
    Node *E1 = B.node(*Else, "Identity", {X}, "e1");
    Node *E2 = B.node(*Else, "Identity", {E1->getResult(0)}, "e2");
    Node *E3 = B.node(*Else, "Neg", {E2->getResult(0)}, "e3");
    Else->addOutput(E3->getResult(0));
    // Dead inside the body.
    B.node(*Else, "Abs", {X}, "dead");
  }
};

} // namespace

TEST(PatternDriver, DescendsIntoSubgraphs) {
  IfModel S;
  ASSERT_TRUE(S.B.verify());
  Diags D;
  ASSERT_TRUE(succeeded(
      applyPatternsGreedily(S.B.M, patterns<FoldIdentity>(), D.Engine)));
  EXPECT_EQ(Builder::ops(*S.Then), Ops{"Relu"});
  EXPECT_EQ(Builder::ops(*S.Else), Ops{"Neg"});
  EXPECT_EQ(S.Else->getNodes().front().getOperand(0), S.X);
  // x is read by the two bodies, via outer-scope uses.
  EXPECT_EQ(S.X->getNumUses(), 2u);
  EXPECT_TRUE(S.B.verify());
}

TEST(PatternDriver, StaysInMainGraphWhenAsked) {
  IfModel S;
  Diags D;
  GreedyRewriteConfig Config;
  Config.RecurseIntoSubgraphs = false;
  ASSERT_TRUE(succeeded(applyPatternsGreedily(S.B.M, patterns<FoldIdentity>(),
                                              D.Engine, Config)));
  EXPECT_EQ(Builder::ops(*S.Then), (Ops{"Identity", "Relu"}));
  EXPECT_EQ(Builder::ops(*S.Else), (Ops{"Identity", "Identity", "Neg", "Abs"}));
}

TEST(PatternDriver, ErasesDeadNodeWithSubgraphs) {
  IfModel S;
  // Nobody reads the If any more; it goes with its bodies, and the nodes of
  // the bodies that were queued must not be visited afterwards.
  S.B.G.eraseOutput(0);
  Node *Relu = S.B.node("Relu", {S.X}, "z");
  S.B.G.addOutput(Relu->getResult(0));
  Diags D;
  ASSERT_TRUE(succeeded(
      applyPatternsGreedily(S.B.M, patterns<FoldIdentity>(), D.Engine)));
  EXPECT_EQ(S.B.ops(), Ops{"Relu"});
  EXPECT_EQ(S.X->getNumUses(), 1u);
  EXPECT_TRUE(S.B.verify());
}

namespace {

/// Records the nodes it is offered, never matches.
struct Recorder : Pattern {
  Recorder(llvm::StringRef Root, unsigned Benefit, std::string Tag,
           std::vector<std::string> *Log)
      : Pattern(Root, Benefit), Tag(std::move(Tag)), Log(Log) {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    Log->push_back(Tag + ":" + N.getResult(0)->getName().str());
    return R.notifyMatchFailure(N, "recording only");
  }
  std::string Tag;
  std::vector<std::string> *Log;
};

} // namespace

TEST(PatternDriver, OrderByGraphAndBenefit) {
  Builder B;
  Value *X = B.input("x");
  Node *A = B.node("Relu", {X}, "a");
  Node *Bn = B.node("Abs", {A->getResult(0)}, "b");
  Node *C = B.node("Relu", {Bn->getResult(0)}, "c", "com.example");
  B.G.addOutput(C->getResult(0));

  std::vector<std::string> Log;
  PatternList L;
  L.push_back(std::make_unique<Recorder>("Relu", 1, "relu1", &Log));
  L.push_back(std::make_unique<Recorder>("", 1, "any", &Log));
  L.push_back(std::make_unique<Recorder>("Relu", 5, "relu5", &Log));
  Diags D;
  ASSERT_TRUE(succeeded(applyPatternsGreedily(B.M, L, D.Engine)));
  // Graph order; higher benefit first, ties in registration order; a root op
  // only matches the default domain.
  EXPECT_EQ(Log, (std::vector<std::string>{"relu5:a", "relu1:a", "any:a",
                                           "any:b", "any:c"}));
}

namespace {

/// Replaces every Relu with a fresh Relu: never converges.
struct RecreateRelu : Pattern {
  RecreateRelu() : Pattern("Relu") {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    Node *New = R.createNode("Relu", {N.getOperand(0)});
    return R.replaceNode(&N, {New->getResult(0)});
  }
};

/// Bumps an attribute of every Neg in place: never converges either.
struct BumpCounter : Pattern {
  BumpCounter() : Pattern("Neg") {}
  LogicalResult matchAndRewrite(Node &N, Rewriter &R) const override {
    N.setAttr(Attribute::getInt("counter", N.getAttrInt("counter", 0) + 1));
    R.notifyModified(&N);
    return success();
  }
};

} // namespace

TEST(PatternDriver, ReportsNonConvergence) {
  Builder B;
  Node *Relu = B.node("Relu", {B.input("x")}, "a");
  Node *Neg = B.node("Neg", {Relu->getResult(0)}, "y");
  B.G.addOutput(Neg->getResult(0));

  for (int Which = 0; Which < 2; ++Which) {
    PatternList L;
    if (Which == 0)
      L = patterns<RecreateRelu>();
    else
      L = patterns<BumpCounter>();
    Diags D;
    GreedyRewriteConfig Config;
    Config.MaxIterations = 3;
    bool Changed = false;
    EXPECT_TRUE(
        failed(applyPatternsGreedily(B.M, L, D.Engine, Config, &Changed)));
    EXPECT_TRUE(Changed);
    EXPECT_EQ(
        D.Errors,
        std::vector<std::string>{
            "greedy pattern rewrite did not converge after 3 iterations"});
    EXPECT_EQ(B.ops(), (Ops{"Relu", "Neg"}));
    EXPECT_TRUE(B.verify());
  }
}
