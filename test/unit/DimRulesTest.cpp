//===- DimRulesTest.cpp - The op registry's dim rules ---------------------===//
//
// The DimRule hook on its own: which rule an op version gets (its row or
// its trait's), and rules run against a DimContext that is not the
// analysis, so that what a rule reads and states is visible.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Import/Import.h"
#include "gtest/gtest.h"
#include <map>

using namespace onnxopt;

namespace {

std::unique_ptr<Model> parse(llvm::StringRef Text) {
  DiagnosticEngine D;
  std::unique_ptr<Model> M = parseTextModel(Text, D);
  EXPECT_TRUE(M) << "model does not parse";
  return M;
}

/// Operand dims and data given by the test; requirements and equalities
/// recorded as text.
class FakeContext : public DimContext {
public:
  FakeContext(const Node &N) : DimContext(N, lookupOp(N)) {}

  std::map<unsigned, DimList> OperandDims, OperandData;
  std::vector<std::string> Said;

  const DimList *dims(unsigned I) override {
    auto It = OperandDims.find(I);
    return It == OperandDims.end() ? nullptr : &It->second;
  }
  const DimList *flatData(unsigned I) override {
    auto It = OperandData.find(I);
    return It == OperandData.end() ? nullptr : &It->second;
  }
  std::optional<std::vector<double>> floatData(unsigned I) override {
    return std::nullopt;
  }
  std::optional<DimList> constantResultData(unsigned I) override {
    return std::nullopt;
  }
  const DimExpr *getMaxElement(unsigned I) override { return nullptr; }
  bool holdsAlways(DimCondition K, const DimExpr &Lhs,
                   const DimExpr &Rhs) override {
    return false;
  }
  void unite(const DimExpr &A, const DimExpr &B) override {
    Said.push_back(A.str() + " = " + B.str());
  }
  void require(DimCondition K, const DimExpr &Lhs, const DimExpr &Rhs,
               const char *Why) override {
    Said.push_back(Lhs.str() + " ? " + Rhs.str() + ": " + Why);
  }
  void setMaxElement(unsigned I, DimExpr Max) override {}

  /// Runs the node's rule; false when it has none.
  bool run() {
    const DimRule *R = getDimRule(getDef());
    if (!R || !R->Transfer)
      return false;
    R->Transfer(*this, dims(0));
    return true;
  }
  std::string result(unsigned I) const {
    if (!getDims(I))
      return "none";
    std::string S;
    for (const std::optional<DimExpr> &D : *getDims(I))
      S += (S.empty() ? "" : ",") + (D ? D->str() : std::string("?"));
    return "[" + S + "]";
  }
};

DimList symbols(std::initializer_list<const char *> Names) {
  DimList D;
  for (const char *N : Names)
    D.push_back(DimExpr::symbol(N));
  return D;
}

DimList numbers(std::initializer_list<int64_t> Values) {
  DimList D;
  for (int64_t V : Values)
    D.push_back(DimExpr::constant(V));
  return D;
}

TEST(DimRulesTest, TraitsGiveRulesToOpsWithoutRows) {
  // Relu has no row: the ShapePreserving trait's rule, which does not need
  // operand 0's dims to be known.
  const DimRule *Relu = getDimRule(lookupOp("", "Relu", 17));
  ASSERT_TRUE(Relu);
  EXPECT_TRUE(Relu->Transfer);
  EXPECT_FALSE(Relu->NeedsFirstOperandDims);
  // The Reduction trait's rule reads X's dims.
  const DimRule *Reduce = getDimRule(lookupOp("", "ReduceMean", 13));
  ASSERT_TRUE(Reduce);
  EXPECT_TRUE(Reduce->NeedsFirstOperandDims);
  // A row of its own wins over the trait (Add also makes shape data).
  const DimRule *Add = getDimRule(lookupOp("", "Add", 14));
  ASSERT_TRUE(Add);
  EXPECT_STREQ(Add->OpType, "Add");
}

TEST(DimRulesTest, RowsSayWhetherTheyStateEveryCondition) {
  // ReverseSequence's sequence_lens is not checked against the batch.
  const DimRule *Rev = getDimRule(lookupOp("", "ReverseSequence", 10));
  ASSERT_TRUE(Rev);
  EXPECT_FALSE(Rev->StatesAllConditions);
  // NonZero: no results modelled, nothing beyond its traits to require.
  const DimRule *NonZero = getDimRule(lookupOp("", "NonZero", 13));
  ASSERT_TRUE(NonZero);
  EXPECT_FALSE(NonZero->Transfer);
  EXPECT_TRUE(NonZero->StatesAllConditions);
  // Einsum requires its letters to broadcast and a diagonal to be square.
  const DimRule *Einsum = getDimRule(lookupOp("", "Einsum", 12));
  ASSERT_TRUE(Einsum);
  EXPECT_TRUE(Einsum->StatesAllConditions);
  // No rule at all: not modelled (the recorded types stand).
  EXPECT_FALSE(getDimRule(lookupOp("", "Det", 11)));
  EXPECT_FALSE(getDimRule(lookupOp("com.microsoft", "BiasDropout", 1)));
  EXPECT_FALSE(getDimRule(nullptr));
}

TEST(DimRulesTest, ReshapeInfersTheMinusOneAndRequiresDivisibility) {
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, K] X, int64[2] S) => (float[?, 4] Y) {
  Y = Reshape (X, S)
}
)");
  ASSERT_TRUE(M);
  FakeContext C(M->getGraph().getNodes().front());
  C.OperandDims[0] = symbols({"N", "K"});
  C.OperandData[1] = numbers({-1, 4});
  ASSERT_TRUE(C.run());
  EXPECT_EQ(C.result(0), "[(K*N)/4,4]");
  ASSERT_EQ(C.Said.size(), 1u);
  EXPECT_EQ(C.Said[0],
            "K*N ? 4: the element count must divide by the given dims");
}

TEST(DimRulesTest, EinsumLettersBroadcastAndDiagonalsAreSquare) {
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[?, ?, ?] A, float[?, ?, ?] B) => (float[?, ?] Y) {
  Y = Einsum <equation = "bii,bij->bj"> (A, B)
}
)");
  ASSERT_TRUE(M);
  FakeContext C(M->getGraph().getNodes().front());
  // b is 1 in A and N in B: the result takes N; i is M, M and K.
  C.OperandDims[0] = DimList{DimExpr::constant(1), DimExpr::symbol("M"),
                             DimExpr::symbol("M2")};
  C.OperandDims[1] = symbols({"N", "K", "J"});
  ASSERT_TRUE(C.run());
  EXPECT_EQ(C.result(0), "[N,J]");
  ASSERT_EQ(C.Said.size(), 3u);
  EXPECT_EQ(C.Said[0], "M ? M2: a repeated letter takes a diagonal");
  EXPECT_EQ(C.Said[1], "M2 ? M: broadcast dims must match");
  EXPECT_EQ(C.Said[2], "K ? M: broadcast dims must match");
}

/// Unsqueeze's axes come from the attribute until opset 13 and from the
/// second operand after: a node carrying both reads the one its opset
/// names.
std::string unsqueezeAt(int Opset) {
  std::string Text =
      "<ir_version: 8, opset_import: [\"\" : " + std::to_string(Opset) + R"(]>
g (float[N] X, int64[1] A) => (float[?, ?] Y) {
  Y = Unsqueeze <axes = [0]> (X, A)
}
)";
  auto M = parse(Text);
  if (!M)
    return "unparsed";
  FakeContext C(M->getGraph().getNodes().front());
  C.OperandDims[0] = symbols({"N"});
  C.OperandData[1] = numbers({1});
  if (!C.run())
    return "no rule";
  return C.result(0);
}

TEST(DimRulesTest, AxesFollowTheOpset) {
  EXPECT_EQ(unsqueezeAt(11), "[1,N]");
  EXPECT_EQ(unsqueezeAt(13), "[N,1]");
}

/// Squeeze without axes drops the dims that are 1; a symbol might be 1,
/// so no result is computed then.
std::string squeezeAll(DimList X) {
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1, N, 1] X) => (float[N] Y) {
  Y = Squeeze (X)
}
)");
  if (!M)
    return "unparsed";
  FakeContext C(M->getGraph().getNodes().front());
  C.OperandDims[0] = std::move(X);
  if (!C.run())
    return "no rule";
  return C.result(0);
}

TEST(DimRulesTest, SqueezeWithoutAxesDropsOnlyKnownOnes) {
  EXPECT_EQ(squeezeAll(numbers({1, 5, 1})), "[5]");
  EXPECT_EQ(squeezeAll(DimList{DimExpr::constant(1), DimExpr::symbol("N")}),
            "none");
}

/// The data-dependent blockers the analysis lists for \p Text's model.
size_t countDataDependent(llvm::StringRef Text) {
  auto M = parse(Text);
  if (!M)
    return SIZE_MAX;
  DimAnalysis A(*M);
  A.run();
  size_t N = 0;
  for (const DimConstraint &C : A.getConstraints())
    N += C.K == DimConstraint::DataDependent;
  return N;
}

TEST(DimRulesTest, TopKBlocksOnlyWhereItsKIsAnOperand) {
  // TopK-1 takes k as an attribute: its result dims are known.
  EXPECT_EQ(countDataDependent(R"(<ir_version: 4, opset_import: ["" : 9]>
g (float[N, 10] X) => (float[N, 2] V, int64[N, 2] I) {
  V, I = TopK <k = 2> (X)
}
)"),
            0u);
  // TopK-10 reads k from an operand: unknown here, so the dims depend on
  // a value.
  EXPECT_EQ(countDataDependent(R"(<ir_version: 8, opset_import: ["" : 11]>
g (float[N, 10] X, int64[1] K) => (float[N, ?] V, int64[N, ?] I) {
  V, I = TopK (X, K)
}
)"),
            1u);
}

TEST(DimRulesTest, CeilModePoolsGiveOnnxFormulaWhereOrtAgrees) {
  // k=3, s=2, no end pad: ceil((H - 3) / 2) + 1, which is floor(H/2), and
  // the output must be at least 1.
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, C, H, W] X) => (Y, Z) {
  Y = MaxPool <kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1> (X)
  Z = AveragePool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1], ceil_mode = 1> (X)
}
)");
  ASSERT_TRUE(M);
  auto It = M->getGraph().getNodes().begin();
  FakeContext C(*It);
  C.OperandDims[0] = symbols({"N", "C", "H", "W"});
  ASSERT_TRUE(C.run());
  EXPECT_EQ(C.result(0), "[N,C,floor(H/2),floor(W/2)]");
  ASSERT_EQ(C.Said.size(), 2u);
  EXPECT_EQ(C.Said[0],
            "floor(H/2) ? 1: the input must cover the kernel (output size "
            ">= 1)");
  // An end pad of 1 with stride 2 past a kernel of 2: ONNX Runtime may drop
  // the last window, so the dims are left to the recorded type.
  FakeContext D(*++It);
  D.OperandDims[0] = symbols({"N", "C", "H", "W"});
  ASSERT_TRUE(D.run());
  EXPECT_EQ(D.result(0), "[N,C,?,?]");
}

TEST(DimRulesTest, SplitNumOutputsNeedsANonEmptyLastChunk) {
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[N, C] X) => (A, B, Z) {
  A, B, Z = Split <axis = 1, num_outputs = 3> (X)
}
)");
  ASSERT_TRUE(M);
  FakeContext C(M->getGraph().getNodes().front());
  C.OperandDims[0] = symbols({"N", "C"});
  ASSERT_TRUE(C.run());
  EXPECT_EQ(C.result(0), "[N,ceil(C/3)]");
  EXPECT_EQ(C.result(2), "[N,-2*ceil(C/3)+C]");
  ASSERT_EQ(C.Said.size(), 1u);
  EXPECT_EQ(C.Said[0], "-2*ceil(C/3)+C ? 1: num_outputs chunks of ceil(dim / "
                       "num_outputs) must leave a non-empty last chunk");
  // A known dim: 10 in 3 is [4, 4, 2].
  FakeContext K(M->getGraph().getNodes().front());
  K.OperandDims[0] = DimList{DimExpr::symbol("N"), DimExpr::constant(10)};
  ASSERT_TRUE(K.run());
  EXPECT_EQ(K.result(1), "[N,4]");
  EXPECT_EQ(K.result(2), "[N,2]");
}

TEST(DimRulesTest, UpsampleScalesBelowOneNeedLargeEnoughDims) {
  // Upsample-7's scales attribute: 0.5 needs H >= 2, 0.3 needs W >= 4
  // (3 * 0.3 < 1 in float), 2 and 1 nothing.
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 7]>
g (float[N, C, H, W] X) => (Y) {
  Y = Upsample <scales = [2.0, 1.0, 0.5, 0.3]> (X)
}
)");
  ASSERT_TRUE(M);
  FakeContext C(M->getGraph().getNodes().front());
  C.OperandDims[0] = symbols({"N", "C", "H", "W"});
  ASSERT_TRUE(C.run());
  EXPECT_EQ(C.result(0), "[2*N,C,floor(H/2),?]");
  ASSERT_EQ(C.Said.size(), 2u);
  EXPECT_EQ(C.Said[0], "H ? 2: a scale below 1 must not empty the dim: "
                       "floor(dim * scale) >= 1");
  EXPECT_EQ(C.Said[1], "W ? 4: a scale below 1 must not empty the dim: "
                       "floor(dim * scale) >= 1");
}

} // namespace
