//===- ColdVectorTest.cpp - Attribute payload lists -----------------------===//
#include "onnxopt/IR/Attribute.h"
#include "onnxopt/Support/ColdVector.h"
#include "gtest/gtest.h"
#include <numeric>

using namespace onnxopt;

namespace {

int64_t sum(const std::vector<int64_t> &V) {
  return std::accumulate(V.begin(), V.end(), int64_t(0));
}

} // namespace

TEST(ColdVector, ReadsAsAVectorWhetherEmptyOrNot) {
  ColdVector<int64_t> V;
  EXPECT_TRUE(V.empty());
  EXPECT_EQ(V.size(), 0u);
  EXPECT_EQ(sum(V), 0) << "an empty one reads as an empty vector";
  int Seen = 0;
  for (int64_t X : V)
    Seen += int(X);
  for (int64_t &X : V) // the non-const iterators of an empty one
    Seen += int(X);
  EXPECT_EQ(Seen, 0);

  V.push_back(2);
  V.emplace_back(3);
  EXPECT_EQ(V.size(), 2u);
  EXPECT_EQ(V[1], 3);
  EXPECT_EQ(sum(V), 5);
  llvm::ArrayRef<int64_t> A = V;
  EXPECT_EQ(A.size(), 2u);
  std::vector<int64_t> Copy = V;
  EXPECT_EQ(Copy, (std::vector<int64_t>{2, 3}));
}

TEST(ColdVector, EmptyingFreesAndEqualityIsByContents) {
  ColdVector<int64_t> A = std::vector<int64_t>{1, 2};
  ColdVector<int64_t> B;
  B.assign(A.begin(), A.end());
  EXPECT_EQ(A, B);
  B = std::vector<int64_t>();
  EXPECT_TRUE(B.empty());
  EXPECT_NE(A, B);
  ColdVector<int64_t> C;
  EXPECT_EQ(B, C) << "emptied and never filled are equal";
  ColdVector<int64_t> D = A; // copies, does not share
  D.mut().push_back(9);
  EXPECT_EQ(A.size(), 2u);
  EXPECT_EQ(D.size(), 3u);
  D.resize(0);
  EXPECT_TRUE(D.empty());
}

TEST(ColdVector, AttributesCompareAsBefore) {
  Attribute X = Attribute::getInts("axes", {0, 1});
  Attribute Y = Attribute::getInts("axes", {0, 1});
  Attribute Z = Attribute::getInts("axes", {1});
  EXPECT_TRUE(X.equals(Y));
  EXPECT_FALSE(X.equals(Z));
  Attribute S = Attribute::getString("mode", "nearest");
  EXPECT_EQ(S.S.str(), "nearest");
  EXPECT_TRUE(S.Ints.empty());
  EXPECT_FALSE(S.equals(Attribute::getString("mode", "linear")));
  // One payload per attribute: the others cost a pointer each.
  static_assert(sizeof(void *) != 8 || sizeof(Attribute) <= 120,
                "Attribute grew");
}
