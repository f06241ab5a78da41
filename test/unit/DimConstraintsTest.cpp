//===- DimConstraintsTest.cpp - Deciding conditions on dims ---------------===//
#include "onnxopt/Analysis/DimConstraints.h"
#include "gtest/gtest.h"
#include <random>

using namespace onnxopt;

namespace {

DimExpr sym(llvm::StringRef S) { return DimExpr::symbol(S); }
DimExpr num(int64_t V) { return DimExpr::constant(V); }

DimConstraint make(DimConstraint::Kind K, DimExpr L, DimExpr R) {
  DimConstraint C;
  C.K = K;
  C.Lhs = std::move(L);
  C.Rhs = std::move(R);
  return C;
}

SymbolDomain ranges(std::initializer_list<std::pair<const char *, DimRange>> L) {
  DimRangeMap M;
  for (const auto &[S, R] : L)
    M[S] = R;
  return SymbolDomain(M);
}

TEST(DimConstraints, MonotoneBounds) {
  // floor((H-3)/2)+1 >= 1 holds for H >= 3 only.
  DimExpr Out = (sym("H") - num(3)).floorDiv(2) + num(1);
  DimConstraint C = make(DimConstraint::AtLeast, Out, num(1));
  EXPECT_EQ(decide(C, SymbolDomain()), Verdict::Depends);
  EXPECT_EQ(decide(C, ranges({{"H", {3, 100, {}}}})), Verdict::Holds);
  EXPECT_EQ(decide(C, ranges({{"H", {1, 2, {}}}})), Verdict::Fails);
  std::optional<SymbolBound> B = impliedBound(C, SymbolDomain());
  ASSERT_TRUE(B);
  EXPECT_EQ(B->Symbol, "H");
  EXPECT_EQ(B->Min, 3);
  EXPECT_FALSE(B->Max);
  // T <= 128: an upper bound.
  DimConstraint Up = make(DimConstraint::AtMost, sym("T"), num(128));
  B = impliedBound(Up, SymbolDomain());
  ASSERT_TRUE(B);
  EXPECT_EQ(B->Min, 1);
  EXPECT_EQ(B->Max, 128);
  EXPECT_EQ(decide(Up, ranges({{"T", {1, 128, {}}}})), Verdict::Holds);
  EXPECT_EQ(decide(Up, ranges({{"T", {129, 512, {}}}})), Verdict::Fails);
  EXPECT_EQ(decide(Up, ranges({{"T", {1, 512, {}}}})), Verdict::Depends);
}

TEST(DimConstraints, FloorsReadAtTheirBounds) {
  // A dim within its window-padded size: floor(H/4) <= 7*ceil(floor(H/4)/7)
  // for every H (Swin), though neither side is monotone in the other.
  DimExpr X = sym("H").floorDiv(4);
  DimExpr Padded = num(7) * X.ceilDiv(7);
  EXPECT_EQ(decide(make(DimConstraint::AtMost, X, Padded), SymbolDomain()),
            Verdict::Holds);
  EXPECT_EQ(decide(make(DimConstraint::AtLeast, Padded, X), SymbolDomain()),
            Verdict::Holds);
  // One more is not always inside: 7*ceil(x/7) = x at multiples of 7.
  EXPECT_EQ(
      decide(make(DimConstraint::AtMost, X + num(1), Padded), SymbolDomain()),
      Verdict::Depends);
  // Nor is floor(H/2) <= 2*floor(H/4) (H = 2).
  EXPECT_EQ(
      decide(make(DimConstraint::AtMost, sym("H").floorDiv(2), num(2) * X),
             SymbolDomain()),
      Verdict::Depends);
}

TEST(DimConstraints, ProvedBoundsHoldAtEveryValue) {
  // Random sums of floors and ceils of one dim (at least 1): whatever
  // decide() says holds must hold at each value; a fixed seed.
  std::mt19937 Rng(7);
  int Proved = 0;
  for (int Case = 0; Case < 2000; ++Case) {
    DimExpr X = sym("X"), E = num(int64_t(Rng() % 9) - 4);
    for (int T = 0; T < 3; ++T) {
      int64_t K = 2 + Rng() % 7, C = int64_t(Rng() % 15) - 7;
      DimExpr Inner = Rng() % 2 ? X : X.floorDiv(1 + Rng() % 4);
      DimExpr Term = Rng() % 2 ? Inner.floorDiv(K) : Inner.ceilDiv(K);
      E = E + num(C) * (Rng() % 3 ? Term : Inner);
    }
    if (decide(make(DimConstraint::AtLeast, E, num(0)), SymbolDomain()) !=
        Verdict::Holds)
      continue;
    ++Proved;
    for (int64_t V = 1; V <= 300; ++V)
      ASSERT_GE(*E.evaluate([&](llvm::StringRef) { return V; }), 0)
          << E.str() << " at X=" << V;
  }
  EXPECT_GT(Proved, 100); // the check is not empty
}

TEST(DimConstraints, EqualitiesAreNeverSampled) {
  // 2*H = 2*W + 1 never holds (parity), whatever H and W are.
  DimConstraint Odd = make(DimConstraint::Equal, num(2) * sym("H"),
                           num(2) * sym("W") + num(1));
  EXPECT_EQ(decide(Odd, SymbolDomain()), Verdict::Fails);
  // H = W holds at some values only.
  DimConstraint Same = make(DimConstraint::Equal, sym("H"), sym("W"));
  EXPECT_EQ(decide(Same, SymbolDomain()), Verdict::Depends);
  EXPECT_EQ(holdsAt(Same, [](llvm::StringRef S) -> std::optional<int64_t> {
              return S == "H" ? 4 : 5;
            }),
            false);
  // A one-point domain decides it.
  DimConstraint Three = make(DimConstraint::Equal, sym("N"), num(3));
  EXPECT_EQ(decide(Three, ranges({{"N", {3, 3, {}}}})), Verdict::Holds);
  EXPECT_TRUE(pinsSymbols(Three));
  EXPECT_FALSE(pinsSymbols(Same));
}

TEST(DimConstraints, BroadcastAndDivisibility) {
  DimConstraint B = make(DimConstraint::Broadcast, sym("T"), num(16));
  EXPECT_EQ(decide(B, SymbolDomain()), Verdict::Depends);
  EXPECT_TRUE(pinsSymbols(B));
  EXPECT_EQ(decide(B, ranges({{"T", {17, 64, {}}}})), Verdict::Fails);
  EXPECT_EQ(decide(make(DimConstraint::Broadcast, num(1), sym("T")),
                   SymbolDomain()),
            Verdict::Holds);
  // 4*T is a multiple of 2 always, of 8 only for even T, of 3 at some T.
  EXPECT_EQ(decide(make(DimConstraint::Divisible, num(4) * sym("T"), num(2)),
                   SymbolDomain()),
            Verdict::Holds);
  EXPECT_EQ(decide(make(DimConstraint::Divisible, num(4) * sym("T"), num(8)),
                   SymbolDomain()),
            Verdict::Depends);
  EXPECT_EQ(decide(make(DimConstraint::Divisible,
                        num(4) * sym("T") + num(2), num(4)),
                   SymbolDomain()),
            Verdict::Fails);
}

TEST(DimConstraints, Printing) {
  DimConstraint C = make(DimConstraint::AtMost, sym("seq_len"), num(128));
  C.Why = "indices inside the gathered dim";
  EXPECT_EQ(C.str(),
            "seq_len: seq_len <= 128 (the model: indices inside the gathered "
            "dim)");
}

TEST(DimConstraints, EvaluationDoesNotOverflow) {
  DimExpr Big = sym("A") * sym("A") * sym("A");
  EXPECT_FALSE(Big.evaluate([](llvm::StringRef) -> std::optional<int64_t> {
    return int64_t(1) << 40;
  }));
}

} // namespace

namespace {

DimRelation rel(llvm::StringRef Text) {
  DimRelation R;
  std::string Err;
  EXPECT_TRUE(parseDimRelation(Text, R, Err)) << Err;
  return R;
}

TEST(DimConstraints, RelationsDecide) {
  DimRangeMap Ranges;
  Ranges["H"] = DimRange{64, 1024, std::nullopt};
  Ranges["W"] = DimRange{32, 512, std::nullopt};
  SymbolDomain D(Ranges, {rel("W=H"), rel("H%32=0")});
  // W = H is now a fact, and H a multiple of 32 in [64, 512].
  EXPECT_EQ(decide(make(DimConstraint::Equal, sym("H"), sym("W")), D),
            Verdict::Holds);
  EXPECT_EQ(decide(make(DimConstraint::Divisible, sym("W"), num(32)), D),
            Verdict::Holds);
  EXPECT_EQ(decide(make(DimConstraint::AtMost, sym("H"), num(512)), D),
            Verdict::Holds);
  EXPECT_EQ(decide(make(DimConstraint::AtLeast, sym("W"), num(64)), D),
            Verdict::Holds);
  // floor(H/32)*32 = H for multiples of 32.
  EXPECT_EQ(decide(make(DimConstraint::Equal,
                        num(32) * sym("H").floorDiv(32), sym("H")),
                   D),
            Verdict::Holds);
  // Without the relations none of these is decided.
  SymbolDomain Plain(Ranges);
  EXPECT_EQ(decide(make(DimConstraint::Equal, sym("H"), sym("W")), Plain),
            Verdict::Depends);
  DimRelation Bad;
  std::string Err;
  EXPECT_FALSE(parseDimRelation("H%0=0", Bad, Err));
  EXPECT_FALSE(parseDimRelation("H=H", Bad, Err));
  EXPECT_FALSE(parseDimRelation("H=3", Bad, Err) && Bad.Rhs.empty());
  EXPECT_TRUE(rel("H%32=0").holds({{"H", 64}}));
  // A least value decides lower bounds, alone or through an equal symbol,
  // and bounds nothing from above.
  SymbolDomain Least({}, {rel("H>=7"), rel("W=H")});
  EXPECT_EQ(decide(make(DimConstraint::AtLeast, sym("W") - num(6), num(1)),
                   Least),
            Verdict::Holds);
  EXPECT_EQ(decide(make(DimConstraint::AtMost, sym("H"), num(512)), Least),
            Verdict::Depends);
  SymbolDomain LeastMultiple({}, {rel("H>=7"), rel("H%4=0")});
  EXPECT_EQ(decide(make(DimConstraint::AtLeast, sym("H"), num(8)),
                   LeastMultiple),
            Verdict::Holds);
  EXPECT_FALSE(rel("W=H").holds({{"H", 64}, {"W", 32}}));
}

} // namespace

TEST(DimExpr, SumOfManyEqualsAddingOneByOne) {
  // Symbols, constants, repeated and cancelling terms, products and
  // divisions: DimExpr::sum gives the same expression as operator+.
  std::vector<DimExpr> Parts;
  for (int I = 0; I < 40; ++I) {
    DimExpr S = DimExpr::symbol("s" + std::to_string(I % 13));
    Parts.push_back(S);
    Parts.push_back(DimExpr::constant(I - 20));
    if (I % 5 == 0)
      Parts.push_back(DimExpr::constant(-1) * S);
    if (I % 7 == 0)
      Parts.push_back(S * DimExpr::symbol("t").floorDiv(2));
    Parts.push_back(DimExpr());
  }
  DimExpr OneByOne;
  for (const DimExpr &P : Parts)
    OneByOne = OneByOne + P;
  EXPECT_EQ(DimExpr::sum(Parts), OneByOne);
  EXPECT_EQ(DimExpr::sum(Parts).str(), OneByOne.str());
  EXPECT_EQ(DimExpr::sum({}), DimExpr());
  EXPECT_EQ(DimExpr::sum({DimExpr::symbol("a"),
                          DimExpr::constant(-1) * DimExpr::symbol("a")}),
            DimExpr());
  EXPECT_TRUE(DimExpr::sum({DimExpr::constant(2), DimExpr::constant(3)})
                  .isConstant());
  EXPECT_EQ(DimExpr::sum({DimExpr::constant(2), DimExpr::constant(3)})
                .getConstant(),
            5);
}
