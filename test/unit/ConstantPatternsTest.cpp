//===- ConstantPatternsTest.cpp - How a constant depends on its indices ---===//
//
// The matchers make-dynamic trusts to rebuild baked constants: each form is
// recognised exactly and a constant that is off by one element is not.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantPatterns.h"
#include "onnx/onnx_pb.h"
#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace onnxopt;

namespace {

Tensor floats(std::vector<int64_t> Dims, std::vector<float> V) {
  return Tensor::fromFloats("t", Dims, V);
}

/// A YOLO grid [1,2,H,W]: channel 0 counts columns, channel 1 counts rows
/// times \p Stride, plus \p Offset.
Tensor grid(int64_t H, int64_t W, float Stride, float Offset) {
  std::vector<float> V;
  for (int C = 0; C < 2; ++C)
    for (int64_t I = 0; I < H; ++I)
      for (int64_t J = 0; J < W; ++J)
        V.push_back((C == 0 ? float(J) : float(I) * Stride) + Offset);
  return floats({1, 2, H, W}, V);
}

std::vector<double> values(const Tensor &T) { return *T.toDoubles(); }

TEST(ConstantPatterns, SliceAtZeroKeepsTheFirstCell) {
  Tensor T = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor S = sliceAtZero(T, {1}, "s");
  EXPECT_EQ(S.getDims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values(S), (std::vector<double>{1, 4}));
}

TEST(ConstantPatterns, PieceAlongSplitsTheAxisIntoItsGrid) {
  // [2, 5]: a piece of 4 elements from index 1, as a [2, 2] grid.
  Tensor T = floats({2, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14});
  Tensor P = pieceAlong(T, 1, 1, {2, 2}, "p");
  EXPECT_EQ(P.getDims(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(values(P), (std::vector<double>{1, 2, 3, 4, 11, 12, 13, 14}));
  EXPECT_FALSE(pieceAlong(T, 1, 2, {2, 2}, "p")); // past the end
  EXPECT_FALSE(pieceAlong(T, 2, 0, {1}, "p"));    // no such axis
}

TEST(ConstantPatterns, WithDimsKeepsTheElements) {
  Tensor T = floats({1, 4}, {1, 2, 3, 4});
  Tensor R = withDims(T, {2, 1, 2}, "r");
  EXPECT_EQ(R.getDims(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(values(R), values(T));
  EXPECT_FALSE(withDims(T, {3}, "r"));
}

TEST(ConstantPatterns, ConstantAlongAnAxis) {
  Tensor T = floats({2, 3}, {7, 7, 7, 8, 8, 8});
  EXPECT_TRUE(isConstantAlong(T, 1));
  EXPECT_FALSE(isConstantAlong(T, 0));
  // -0.0 and 0.0 are different bytes: not "the same value" to a division.
  EXPECT_FALSE(isConstantAlong(floats({1, 2}, {0.0f, -0.0f}), 1));
}

TEST(ConstantPatterns, GridIsAffineWithPerChannelSteps) {
  std::optional<AffineForm> F = matchAffine(grid(3, 5, 8, 0.5f), {2, 3}, "g");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->Base.getDims(), (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(values(F->Base), (std::vector<double>{0.5, 0.5}));
  ASSERT_EQ(F->Terms.size(), 2u);
  EXPECT_EQ(F->Terms[0].Axis, 2u);
  EXPECT_EQ(values(F->Terms[0].Slope), (std::vector<double>{0, 8}));
  EXPECT_EQ(F->Terms[1].Axis, 3u);
  EXPECT_EQ(values(F->Terms[1].Slope), (std::vector<double>{1, 0}));
}

TEST(ConstantPatterns, AlmostAffineIsRefused) {
  Tensor G = grid(3, 5, 8, 0);
  std::vector<double> V = values(G);
  V.back() += 0.5;
  std::vector<float> F(V.begin(), V.end());
  EXPECT_FALSE(matchAffine(floats(G.getDims(), F), {2, 3}, "g"));
  // An axis of one element has no step to read.
  EXPECT_FALSE(matchAffine(grid(1, 5, 1, 0), {2, 3}, "g"));
}

TEST(ConstantPatterns, AffineNeedsExactFloatArithmetic) {
  // 0.1 * i is not what float arithmetic gives for every i from the step
  // read between the first two elements.
  std::vector<float> V;
  for (int I = 0; I < 40; ++I)
    V.push_back(float(double(I) / 10));
  EXPECT_FALSE(matchAffine(floats({40}, V), {0}, "t"));
  std::vector<float> Halves;
  for (int I = 0; I < 40; ++I)
    Halves.push_back(float(I) * 0.5f + 3);
  EXPECT_TRUE(matchAffine(floats({40}, Halves), {0}, "t"));
}

TEST(ConstantPatterns, ConstantAxisIsLeftOutOfTheTerms) {
  std::optional<AffineForm> F =
      matchAffine(floats({2, 3}, {1, 2, 3, 1, 2, 3}), {0, 1}, "t");
  ASSERT_TRUE(F);
  ASSERT_EQ(F->Terms.size(), 1u);
  EXPECT_EQ(F->Terms[0].Axis, 1u);
}

TEST(ConstantPatterns, CausalMaskIsToeplitz) {
  float Inf = std::numeric_limits<float>::infinity();
  std::vector<float> V;
  for (int I = 0; I < 4; ++I)
    for (int J = 0; J < 4; ++J)
      V.push_back(J > I ? -Inf : 0);
  std::optional<ToeplitzForm> F =
      matchToeplitz(floats({1, 4, 4}, V), 1, 2, "m");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->Below, 1);
  EXPECT_EQ(F->Above, 0);
  EXPECT_EQ(values(F->Table), (std::vector<double>{-Inf, 0}));
}

TEST(ConstantPatterns, BandIsToeplitz) {
  // A window of one position each side: 1 inside the band, 0 outside.
  std::vector<float> V;
  for (int I = 0; I < 6; ++I)
    for (int J = 0; J < 6; ++J)
      V.push_back(std::abs(I - J) <= 1 ? 1 : 0);
  std::optional<ToeplitzForm> F = matchToeplitz(floats({6, 6}, V), 0, 1, "m");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->Below, 2);
  EXPECT_EQ(F->Above, 2);
  EXPECT_EQ(values(F->Table), (std::vector<double>{0, 1, 1, 1, 0}));
}

TEST(ConstantPatterns, NotToeplitzOrUnseenEnds) {
  std::vector<float> V = {1, 0, 0, 1, 1, 0, 1, 0, 1}; // (2,1) is off
  EXPECT_FALSE(matchToeplitz(floats({3, 3}, V), 0, 1, "m"));
  // Every diagonal different: what a larger size adds is not shown.
  EXPECT_FALSE(matchToeplitz(floats({2, 2}, {1, 2, 3, 1}), 0, 1, "m"));
  // Other axes must have size 1.
  EXPECT_FALSE(
      matchToeplitz(floats({2, 3, 3}, std::vector<float>(18, 1)), 1, 2, "m"));
}

/// Rotary rows [Rows, 4] from position \p From: cos or sin of
/// float(From + i) * f, f = 1, 1/2, 1/4, 1/8, rounded as a runtime does.
Tensor rotary(int64_t From, int64_t Rows, bool Sin) {
  std::vector<float> V;
  for (int64_t I = 0; I < Rows; ++I)
    for (float F : {1.0f, 0.5f, 0.25f, 0.125f}) {
      float Angle = float(From + I) * F;
      V.push_back(
          float(Sin ? std::sin(double(Angle)) : std::cos(double(Angle))));
    }
  return floats({Rows, 4}, V);
}

TEST(ConstantPatterns, RotaryRowsFromAnOffset) {
  Tensor C = rotary(7, 5, false), S = rotary(7, 5, true);
  // Read from position 0 they are no sinusoid; from 7 they are, each kind
  // told by its values, the frequencies recovered.
  EXPECT_FALSE(matchSinusoid(C, 0, &S, "c"));
  std::optional<SinusoidForm> FC = matchSinusoid(C, 0, &S, "c", 7);
  std::optional<SinusoidForm> FS = matchSinusoid(S, 0, &C, "s", 7);
  ASSERT_TRUE(FC && FS);
  EXPECT_FALSE(FC->IsSin);
  EXPECT_TRUE(FS->IsSin);
  EXPECT_TRUE(FC->UnitAmp);
  EXPECT_EQ(values(FC->Freq), (std::vector<double>{1, 0.5, 0.25, 0.125}));
  // Another offset, or none of the partner, is no match.
  EXPECT_FALSE(matchSinusoid(C, 0, &S, "c", 6));
  EXPECT_FALSE(matchSinusoid(C, 0, &S, "c", 8));
  EXPECT_FALSE(matchSinusoid(C, 0, nullptr, "c", 7));
  // From position 0 the plain reading holds, as before.
  Tensor C0 = rotary(0, 5, false), S0 = rotary(0, 5, true);
  EXPECT_TRUE(matchSinusoid(C0, 0, &S0, "c"));
}

TEST(ConstantPatterns, PrefixOfALongerTable) {
  Tensor Big = floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(isPrefixAlong(floats({2, 2}, {1, 2, 3, 4}), Big, 0));
  EXPECT_FALSE(isPrefixAlong(floats({2, 2}, {1, 2, 3, 5}), Big, 0));
  EXPECT_FALSE(isPrefixAlong(floats({2, 2}, {1, 2, 3, 4}), Big, 1));
  Tensor Wide = floats({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(isPrefixAlong(floats({2, 2}, {1, 2, 5, 6}), Wide, 1));
}

} // namespace
