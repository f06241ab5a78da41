//===- IRTest.cpp - IR, rewriter and verifier units -----------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/IR/Verifier.h"
#include "gtest/gtest.h"

using namespace onnxopt;

namespace {

/// x -> Relu -> a -> Neg -> y (graph output), built through the API.
struct SmallGraph {
  Model M;
  Graph &G = M.getGraph();
  Value *X, *A, *Y;
  Node *Relu, *Neg;
  SmallGraph() {
    M.reserveName("x");
    M.reserveName("a");
    M.reserveName("y");
    X = G.addInput("x", Type::tensor(1, std::vector<Dim>{Dim::symbol("N")}));
    Relu = G.createNode("Relu", "", "relu", {X}, {"a"});
    A = Relu->getResult(0);
    Neg = G.createNode("Neg", "", "neg", {A}, {"y"});
    Y = Neg->getResult(0);
    Y->setType(X->getType());
    G.addOutput(Y);
  }

  /// An If before \p InsertBefore (null: at the end) whose then_branch
  /// reads A, the outer value Relu produces.
  Node *addIfReadingA(Node *InsertBefore) {
    Node *If = G.createNode("If", "", "if", {X}, {"z"}, InsertBefore);
    Attribute Then;
    Then.Name = "then_branch";
    Then.Kind = AttrKind::Graph;
    Then.Graphs.push_back(std::make_unique<Graph>(&M, "then", If));
    Graph &Body = *Then.Graphs[0];
    Node *Inner = Body.createNode("Neg", "", "inner", {A}, {"t"});
    Body.addOutput(Inner->getResult(0));
    If->setAttr(std::move(Then));
    return If;
  }
};

} // namespace

TEST(IR, UseListsAreExact) {
  SmallGraph S;
  ASSERT_EQ(S.X->getNumUses(), 1u);
  EXPECT_EQ(S.X->getUses()[0].User, S.Relu);
  EXPECT_TRUE(S.Y->isGraphOutput());
  EXPECT_TRUE(S.Y->isOutputOf(S.G));
  S.Neg->setOperand(0, S.X);
  EXPECT_EQ(S.X->getNumUses(), 2u);
  EXPECT_TRUE(S.A->use_empty());
  DiagnosticEngine D;
  EXPECT_TRUE(succeeded(verifyModel(S.M, D)));
}

TEST(IR, TypePrinting) {
  Type T = Type::tensor(1, std::vector<Dim>{Dim::symbol("N"), Dim::known(3),
                                            Dim::unknown()});
  EXPECT_EQ(T.str(), "float[N,3,?]");
  EXPECT_FALSE(T.isStatic());
  EXPECT_EQ(Type::sequence(Type::tensor(7)).str(), "seq(int64[])");
  EXPECT_EQ(Type::tensor(1, std::vector<Dim>()).str(), "float");
  EXPECT_TRUE(Type::tensor(1, std::vector<Dim>{Dim::known(2)}).isStatic());
}

TEST(IR, UniqueNamesAreLinearAndStable) {
  Model M;
  EXPECT_EQ(M.makeUniqueName("a"), "a");
  EXPECT_EQ(M.makeUniqueName("a"), "a_1");
  EXPECT_EQ(M.makeUniqueName("a"), "a_2");
  EXPECT_TRUE(M.isNameTaken("a_1"));
}

TEST(Rewriter, ReplaceAllUsesKeepsOutputName) {
  SmallGraph S;
  DiagnosticEngine D;
  Rewriter R(S.M, D);
  R.setInsertionPointBefore(S.Neg);
  Node *Abs = R.createNode("Abs", {S.A});
  Value *NewY = Abs->getResult(0);
  ASSERT_TRUE(succeeded(R.replaceAllUsesWith(S.Y, NewY)));
  EXPECT_EQ(NewY->getName(), "y");
  EXPECT_EQ(S.G.getOutput(0), NewY);
  EXPECT_EQ(NewY->getType(), S.X->getType());
  R.eraseNode(S.Neg);
  EXPECT_TRUE(succeeded(verifyModel(S.M, D)));
}

TEST(Rewriter, RefusesToMergeInputIntoOutput) {
  SmallGraph S;
  DiagnosticEngine D;
  Rewriter R(S.M, D);
  EXPECT_TRUE(failed(R.replaceAllUsesWith(S.Y, S.X)));
  EXPECT_EQ(S.G.getOutput(0), S.Y);
  // Non-output values may be replaced by anything.
  EXPECT_TRUE(succeeded(R.replaceAllUsesWith(S.A, S.X)));
  EXPECT_EQ(S.Neg->getOperand(0), S.X);
}

TEST(Verifier, ReportsUseBeforeDefinition) {
  SmallGraph S;
  S.G.moveNode(S.Neg, S.Relu);
  DiagnosticEngine D;
  std::vector<std::string> Messages;
  D.setHandler([&](const Diagnostic &Diag) { Messages.push_back(Diag.Message); });
  EXPECT_TRUE(failed(verifyModel(S.M, D)));
  ASSERT_FALSE(Messages.empty());
  EXPECT_NE(Messages[0].find("topological"), std::string::npos);
  VerifyOptions Relaxed;
  Relaxed.RequireTopologicalOrder = false;
  Messages.clear();
  EXPECT_TRUE(succeeded(verifyModel(S.M, D, Relaxed)));
}

TEST(Verifier, ReportsWhatIsOutOfOrder) {
  DiagnosticEngine D;
  VerifyOptions Relaxed;
  Relaxed.RequireTopologicalOrder = false;
  VerifyOptions::OrderReport Order;
  Relaxed.Order = &Order;
  {
    SmallGraph S;
    EXPECT_TRUE(succeeded(verifyModel(S.M, D, Relaxed)));
    EXPECT_EQ(Order.LateNodes, 0u);
    EXPECT_FALSE(Order.AnyLateUse);
  }
  {
    // Neg first: one node reads a later value of its graph.
    SmallGraph S;
    S.G.moveNode(S.Neg, S.Relu);
    Order = {};
    EXPECT_TRUE(succeeded(verifyModel(S.M, D, Relaxed)));
    EXPECT_EQ(Order.LateNodes, 1u);
    EXPECT_TRUE(Order.AnyLateUse);
  }
  {
    // A body reads an outer value produced after its holder: no node of
    // the main graph is late, but the order is not what the verifier
    // requires by default.
    SmallGraph S;
    S.addIfReadingA(S.Relu);
    Order = {};
    EXPECT_TRUE(succeeded(verifyModel(S.M, D, Relaxed)));
    EXPECT_EQ(Order.LateNodes, 0u);
    EXPECT_TRUE(Order.AnyLateUse);
    std::vector<std::string> Messages;
    DiagnosticEngine Strict;
    Strict.setHandler(
        [&](const Diagnostic &Diag) { Messages.push_back(Diag.Message); });
    EXPECT_TRUE(failed(verifyModel(S.M, Strict)));
    ASSERT_FALSE(Messages.empty());
    EXPECT_NE(Messages[0].find("is not defined in this scope"),
              std::string::npos)
        << Messages[0];
  }
}

TEST(Verifier, ReportsDuplicateNames) {
  // Two results named alike (the API does not stop it; the verifier does),
  // and a renamed value that comes to share a name.
  SmallGraph S;
  S.G.createNode("Relu", "", "dup", {S.X}, {"a"});
  DiagnosticEngine D;
  std::vector<std::string> Messages;
  D.setHandler([&](const Diagnostic &Diag) { Messages.push_back(Diag.Message); });
  EXPECT_TRUE(failed(verifyModel(S.M, D)));
  ASSERT_FALSE(Messages.empty());
  EXPECT_NE(Messages[0].find("name 'a' is defined more than once"),
            std::string::npos)
      << Messages[0];

  SmallGraph T;
  T.Y->setName("a");
  Messages.clear();
  EXPECT_TRUE(failed(verifyModel(T.M, D)));
  ASSERT_FALSE(Messages.empty());
  EXPECT_NE(Messages[0].find("name 'a' is defined more than once"),
            std::string::npos)
      << Messages[0];
}

TEST(Verifier, SubgraphMayUseOuterValues) {
  SmallGraph S;
  Node *If = S.addIfReadingA(nullptr);
  DiagnosticEngine D;
  EXPECT_TRUE(succeeded(verifyModel(S.M, D)));
  EXPECT_EQ(S.A->getNumUses(), 2u);
  // Erasing the If releases the outer use held by its body.
  S.G.eraseNode(If);
  EXPECT_EQ(S.A->getNumUses(), 1u);
  EXPECT_TRUE(succeeded(verifyModel(S.M, D)));
}

TEST(IR, NameTableFindsWhatItInterned) {
  NameTable T;
  EXPECT_EQ(T.find("a"), nullptr);
  // Names that differ only past their first eight bytes, in their last
  // byte, by length, by an embedded NUL, and the empty name; enough of
  // them to grow the table several times.
  std::vector<std::string> Names = {"", std::string("a\0b", 3),
                                    std::string("a\0c", 3)};
  for (int I = 0; I < 5000; ++I) {
    Names.push_back("/layers." + std::to_string(I) + "/MatMul_output_0");
    Names.push_back("x" + std::to_string(I));
    Names.push_back(std::string(I % 40, 'q') + std::to_string(I % 7));
  }
  std::vector<const NameEntry *> Entries;
  size_t Distinct = 0;
  for (const std::string &N : Names) {
    bool New = !T.find(N);
    Distinct += New;
    NameEntry &E = T.intern(N);
    EXPECT_EQ(E.getKey(), llvm::StringRef(N));
    Entries.push_back(&E);
  }
  EXPECT_EQ(T.size(), Distinct);
  // Entries never move: the first answer still holds after the growth.
  for (size_t I = 0; I < Names.size(); ++I) {
    EXPECT_EQ(T.find(Names[I]), Entries[I]) << Names[I];
    EXPECT_EQ(&T.intern(Names[I]), Entries[I]);
  }
  EXPECT_EQ(T.size(), Distinct);
  EXPECT_EQ(T.find("/layers.5000/MatMul_output_0"), nullptr);
  EXPECT_NE(T.find(std::string("a\0b", 3)), T.find(std::string("a\0c", 3)));
}

TEST(IR, InternedStringsAreShared) {
  // The per-thread cache must not confuse texts that share their size,
  // head and tail.
  std::string A = "abcdefgh_X_ijklmnop", B = "abcdefgh_Y_ijklmnop";
  const InternedString *IA = internString(A), *IB = internString(B);
  EXPECT_NE(IA, IB);
  EXPECT_EQ(IA->getKey(), A);
  EXPECT_EQ(IB->getKey(), B);
  EXPECT_EQ(internString(A), IA);
  EXPECT_EQ(internString(std::string(A)), IA);
  EXPECT_EQ(internString(""), internString(llvm::StringRef()));
}
