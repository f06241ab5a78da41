//===- OpFactsTest.cpp - Shared op facts units ----------------------------===//
//
// Slice and Shape index rules against ONNX's definition (negative steps,
// INT64_MAX/INT64_MIN ends and steps, empty axes), the op predicates (read
// off the op registry's traits), and what counts as a constant.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Import/Import.h"
#include "gtest/gtest.h"
#include <climits>
#include <vector>

using namespace onnxopt;

namespace {

/// The indices Slice takes on an axis of length \p Len, or {-999} when
/// the slice is invalid.
std::vector<int64_t> taken(int64_t Len, int64_t Start, int64_t End,
                           int64_t Step) {
  std::optional<SliceAxis> A = resolveSliceAxis(Len, Start, End, Step);
  if (!A)
    return {-999};
  std::vector<int64_t> R;
  for (int64_t I = 0; I < A->Count; ++I)
    R.push_back(A->at(I));
  return R;
}

using I64 = std::vector<int64_t>;

TEST(OpFacts, ClampSliceIndexPositiveStep) {
  EXPECT_EQ(clampSliceIndex(2, 5, 1, false), 2);
  EXPECT_EQ(clampSliceIndex(-2, 5, 1, false), 3);
  EXPECT_EQ(clampSliceIndex(-7, 5, 1, false), 0);
  EXPECT_EQ(clampSliceIndex(9, 5, 1, true), 5);
  EXPECT_EQ(clampSliceIndex(INT64_MAX, 5, 1, true), 5);
  EXPECT_EQ(clampSliceIndex(INT64_MIN, 5, 1, true), 0);
}

TEST(OpFacts, ClampSliceIndexNegativeStep) {
  // Starts clamp to [0, Len-1], ends to [-1, Len-1].
  EXPECT_EQ(clampSliceIndex(INT64_MAX, 5, -1, false), 4);
  EXPECT_EQ(clampSliceIndex(-1, 5, -1, false), 4);
  EXPECT_EQ(clampSliceIndex(-9, 5, -1, false), 0);
  EXPECT_EQ(clampSliceIndex(INT64_MIN, 5, -1, true), -1);
  EXPECT_EQ(clampSliceIndex(-6, 5, -1, true), -1);
  EXPECT_EQ(clampSliceIndex(-1, 5, -1, true), 4);
  // An empty axis: nothing lies in [0, -1]; ONNX takes -1.
  EXPECT_EQ(clampSliceIndex(0, 0, -1, false), -1);
  EXPECT_EQ(clampSliceIndex(0, 0, -1, true), -1);
}

TEST(OpFacts, ResolveSliceAxis) {
  EXPECT_EQ(taken(5, 1, 4, 1), (I64{1, 2, 3}));
  EXPECT_EQ(taken(5, 0, INT64_MAX, 2), (I64{0, 2, 4}));
  EXPECT_EQ(taken(5, -2, INT64_MAX, 1), (I64{3, 4}));
  EXPECT_EQ(taken(5, 3, 1, 1), I64{});
  // x[::-1], x[3:0:-1], x[-1:-6:-2].
  EXPECT_EQ(taken(5, -1, INT64_MIN, -1), (I64{4, 3, 2, 1, 0}));
  EXPECT_EQ(taken(5, 3, 0, -1), (I64{3, 2, 1}));
  EXPECT_EQ(taken(5, -1, -6, -2), (I64{4, 2, 0}));
  // A start far below the axis with a negative step starts at 0 (and
  // takes it: the end clamps to -1).
  EXPECT_EQ(taken(5, -100, -100, -1), (I64{0}));
  EXPECT_EQ(taken(5, INT64_MIN, INT64_MIN, -1), (I64{0}));
  EXPECT_EQ(taken(5, 0, -100, -1), (I64{0}));
  // Huge steps take one element and do not overflow.
  EXPECT_EQ(taken(5, 1, INT64_MAX, INT64_MAX), (I64{1}));
  EXPECT_EQ(taken(5, INT64_MAX, INT64_MIN, INT64_MIN), (I64{4}));
  // Empty axes, and invalid slices.
  EXPECT_EQ(taken(0, 0, INT64_MAX, 1), I64{});
  EXPECT_EQ(taken(0, -1, INT64_MIN, -1), I64{});
  EXPECT_EQ(taken(5, 0, 5, 0), (I64{-999}));
  EXPECT_EQ(taken(-1, 0, 5, 1), (I64{-999}));
}

TEST(OpFacts, SliceEndPastAnyDim) {
  EXPECT_TRUE(isSliceEndPastAnyDim(INT64_MAX));
  EXPECT_TRUE(isSliceEndPastAnyDim(INT32_MAX));
  EXPECT_FALSE(isSliceEndPastAnyDim(4096));
  EXPECT_FALSE(isSliceEndPastAnyDim(-1));
}

TEST(OpFacts, ResolveAxis) {
  EXPECT_EQ(resolveAxis(0, 3), 0);
  EXPECT_EQ(resolveAxis(-1, 3), 2);
  EXPECT_EQ(resolveAxis(-3, 3), 0);
  EXPECT_EQ(resolveAxis(3, 3), std::nullopt);
  EXPECT_EQ(resolveAxis(-4, 3), std::nullopt);
  EXPECT_EQ(resolveAxis(INT64_MIN, 3), std::nullopt);
  EXPECT_EQ(resolveAxis(0, 0), std::nullopt);
}

using Range = std::pair<int64_t, int64_t>;

TEST(OpFacts, ResolveShapeRange) {
  EXPECT_EQ(resolveShapeRange(4, 0, 4), Range(0, 4));
  EXPECT_EQ(resolveShapeRange(4, -1, 4), Range(3, 4));
  EXPECT_EQ(resolveShapeRange(4, 1, -1), Range(1, 3));
  EXPECT_EQ(resolveShapeRange(4, 3, 1), Range(3, 3));
  EXPECT_EQ(resolveShapeRange(4, -9, 99), Range(0, 4));
}

TEST(OpFacts, ListsAreSortedAndUnique) {
  for (const std::vector<llvm::StringRef> *L :
       {&getShapePreservingOps(), &getElementwiseBroadcastingOps(),
        &getReductionOps()}) {
    EXPECT_FALSE(L->empty());
    for (size_t I = 1; I < L->size(); ++I)
      EXPECT_LT((*L)[I - 1], (*L)[I]);
  }
  EXPECT_EQ(getReductionOps().size(), 10u);
}

TEST(OpFacts, ListMembership) {
  for (llvm::StringRef Op : {"Relu", "Sigmoid", "Gelu", "Cast", "Trilu",
                             "Softmax", "QuantizeLinear", "Atanh"})
    EXPECT_TRUE(isShapePreservingOp(Op)) << Op.str();
  for (llvm::StringRef Op : {"Add", "Reshape", "Transpose", "Flatten", "MatMul",
                             "GroupNormalization", "NonZero"})
    EXPECT_FALSE(isShapePreservingOp(Op)) << Op.str();
  for (llvm::StringRef Op : {"Add", "Where", "Max", "BitShift", "Xor"})
    EXPECT_TRUE(isElementwiseBroadcastingOp(Op)) << Op.str();
  EXPECT_FALSE(isElementwiseBroadcastingOp("PRelu"));
  EXPECT_TRUE(isReductionOp("ReduceSumSquare"));
  EXPECT_FALSE(isReductionOp("Reduce"));
  EXPECT_TRUE(hasValueDependentShape("NonZero"));
  EXPECT_FALSE(hasValueDependentShape("TopK"));
  EXPECT_FALSE(isShapePreservingOp("NoSuchOp"));
}

std::unique_ptr<Model> parse(llvm::StringRef Text) {
  DiagnosticEngine Diags;
  std::unique_ptr<Model> M = parseTextModel(Text, Diags);
  EXPECT_TRUE(M) << Text.str();
  return M;
}

TEST(OpFacts, NodePredicatesReadTheNodesDomain) {
  std::unique_ptr<Model> M =
      parse("<ir_version: 8, opset_import: [\"\" : 17, \"custom\" : 1]>\n"
            "g (float[2] X) => (float[2] Y, float[2] Z, float[2] W) {\n"
            "  Y = Relu (X)\n"
            "  Z = custom.Relu (X)\n"
            "  W = Add (X, X)\n}\n");
  ASSERT_TRUE(M);
  std::vector<bool> Preserving, Broadcasting;
  for (Node &N : M->getGraph().getNodes()) {
    Preserving.push_back(isShapePreserving(N));
    Broadcasting.push_back(isElementwiseBroadcasting(N));
  }
  EXPECT_EQ(Preserving, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(Broadcasting, (std::vector<bool>{false, false, true}));
}

TEST(OpFacts, NondeterministicInAnyDomain) {
  std::unique_ptr<Model> M =
      parse("<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : "
            "1]>\n"
            "g (float[2] X) => (float[2] Y, float[2] Z, float[2] W) {\n"
            "  Y = RandomNormalLike (X)\n"
            "  Z = com.microsoft.BiasDropout (X, X)\n"
            "  W = Relu (X)\n}\n");
  ASSERT_TRUE(M);
  std::vector<bool> Got;
  for (Node &N : M->getGraph().getNodes())
    Got.push_back(isNondeterministic(N));
  EXPECT_EQ(Got, (std::vector<bool>{true, true, false}));
}

TEST(OpFacts, Constants) {
  std::unique_ptr<Model> M = parse(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (int64[1] D) => (int64[1] Y) <int64[1] D = {1}, int64[1] C = {2}> {\n"
      "  K = Constant <value_ints = [3]> ()\n"
      "  T = Constant <value = int64[1] {4}> ()\n"
      "  A = Add (D, C)\n  B = Add (K, T)\n  Y = Add (A, B)\n}\n");
  ASSERT_TRUE(M);
  std::vector<Node *> Adds;
  for (Node &N : M->getGraph().getNodes())
    if (N.is("Add"))
      Adds.push_back(&N);
  ASSERT_EQ(Adds.size(), 3u);
  const Value &D = *Adds[0]->getOperand(0), &C = *Adds[0]->getOperand(1);
  const Value &K = *Adds[1]->getOperand(0), &T = *Adds[1]->getOperand(1);
  // An input's initializer is a constant for shape reasoning; from IR 4 a
  // value rewrite leaves it (a default the caller may override).
  EXPECT_TRUE(isConstant(D));
  EXPECT_NE(getStoredConstant(D), nullptr);
  EXPECT_TRUE(isOverridableInitializer(D));
  EXPECT_TRUE(getFoldableConstantValue(D).isNull());
  EXPECT_FALSE(isOverridableInitializer(C));
  EXPECT_TRUE(isConstant(C));
  EXPECT_NE(getStoredConstant(C), nullptr);
  // value_ints makes a constant but stores no tensor.
  EXPECT_TRUE(isConstant(K));
  EXPECT_EQ(getStoredConstant(K), nullptr);
  EXPECT_EQ(getConstantValue(K).toInt64s(), (std::optional<I64>{{3}}));
  EXPECT_NE(getStoredConstant(T), nullptr);
  std::optional<ConstantInts> Ints = getConstantInts(K, 64);
  ASSERT_TRUE(Ints);
  EXPECT_EQ(Ints->Values, I64{3});
  EXPECT_FALSE(Ints->Scalar);
  EXPECT_FALSE(getConstantInts(K, 0));
  EXPECT_TRUE(getConstantInts(D, 64));
  EXPECT_FALSE(isConstant(*Adds[2]->getOperand(0)));
}

TEST(OpFacts, IfBranchesFit) {
  // Branch outputs: [2,B,4] (both), [2,B,4] and no shape, [2,B,4] and [3].
  std::unique_ptr<Model> M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2,B,4] H, float[3] S, float[] U) => (float[2,N,4] Y, float[2,B,4] Z, float[2,B,4] W) {
      Y, Z, W = If (c) <
        then_branch = t () => (float[2,B,4] A, float[2,B,4] A2, float[2,B,4] A3) {
          A = Identity (H)
          A2 = Identity (H)
          A3 = Identity (H)
        },
        else_branch = e () => (float[2,B,4] E, float[] E2, float[3] E3) {
          E = Neg (H)
          E2 = Identity (U)
          E3 = Identity (S)
        }>
      V = Neg (H)
    })");
  Node &If = M->getGraph().getNodes().front();
  Node &Neg = *std::next(M->getGraph().getNodes().begin());
  // A declared name other than the branches' is a fact, not a conflict.
  EXPECT_TRUE(ifBranchesFit(If, 0, If.getResult(0)->getType()));
  auto Floats = [](std::vector<Dim> Dims) { return Type::tensor(1, Dims); };
  Type Rank3 = Floats({Dim::known(2), Dim::unknown(), Dim::known(4)});
  EXPECT_TRUE(ifBranchesFit(If, 0, Rank3));
  EXPECT_FALSE(ifBranchesFit(
      If, 0, Floats({Dim::known(3), Dim::unknown(), Dim::known(4)})));
  EXPECT_FALSE(ifBranchesFit(If, 0, Floats({Dim::known(2)})));
  // Another element type (int64).
  EXPECT_FALSE(ifBranchesFit(If, 0, Type::tensor(7)));
  // A branch output without a shape proves nothing.
  EXPECT_FALSE(ifBranchesFit(If, 1, Rank3));
  // A branch output the declaration contradicts.
  EXPECT_FALSE(ifBranchesFit(If, 2, Rank3));
  EXPECT_FALSE(ifBranchesFit(If, 3, Rank3));
  EXPECT_FALSE(ifBranchesFit(Neg, 0, Rank3));
}

} // namespace
