//===- DimNameParserTest.cpp - Dim names that are expressions -------------===//
//
// The forms exporters write (dynamo's sympy printing, onnxruntime's and
// this project's own), each parsed into the algebra and compared with the
// expression built by hand: equal keys mean equal expressions.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/DimNameParser.h"
#include "gtest/gtest.h"

using namespace onnxopt;

namespace {

DimExpr sym(llvm::StringRef S) { return DimExpr::symbol(S); }
DimExpr num(int64_t C) { return DimExpr::constant(C); }

/// The key of what \p Name parses to, or "none".
std::string parsed(llvm::StringRef Name) {
  std::optional<DimExpr> E = parseDimName(Name);
  return E ? E->key() : "none";
}

TEST(DimNameParserTest, DynamoForms) {
  // Conv/Pool outputs as dynamo names them (resnet, hubert, dinov2).
  EXPECT_EQ(parsed("(((height - 1)//4)) + 1"),
            ((sym("height") - num(1)).floorDiv(4) + num(1)).key());
  EXPECT_EQ(parsed("((samples//5)) - 1"),
            (sym("samples").floorDiv(5) - num(1)).key());
  EXPECT_EQ(
      parsed("((height//14))*((width//14)) + 1"),
      (sym("height").floorDiv(14) * sym("width").floorDiv(14) + num(1)).key());
  EXPECT_EQ(parsed("128*batch"), (num(128) * sym("batch")).key());
  EXPECT_EQ(parsed("2*s0"), (num(2) * sym("s0")).key());
  EXPECT_EQ(parsed("s0 + s1"), (sym("s0") + sym("s1")).key());
  EXPECT_EQ(parsed("seq - 1"), (sym("seq") - num(1)).key());
  EXPECT_EQ(parsed("s0**2"), (sym("s0") * sym("s0")).key());
  EXPECT_EQ(parsed("-s0 + 2*s1"), (num(2) * sym("s1") - sym("s0")).key());
}

TEST(DimNameParserTest, SympyFunctions) {
  EXPECT_EQ(parsed("floor(s0/2)"), sym("s0").floorDiv(2).key());
  EXPECT_EQ(parsed("ceiling(s0/2)"), sym("s0").ceilDiv(2).key());
  EXPECT_EQ(parsed("FloorDiv(s0, 4)"), sym("s0").floorDiv(4).key());
  EXPECT_EQ(parsed("CeilDiv(s0, 4)"), sym("s0").ceilDiv(4).key());
  EXPECT_EQ(parsed("CeilToInt(s0/3)"), sym("s0").ceilDiv(3).key());
  EXPECT_EQ(parsed("FloorToInt(s0/3)"), sym("s0").floorDiv(3).key());
  // a % k = a - k*floor(a/k).
  EXPECT_EQ(parsed("Mod(s0, 4)"),
            (sym("s0") - num(4) * sym("s0").floorDiv(4)).key());
  EXPECT_EQ(parsed("s0 % 4"), parsed("Mod(s0, 4)"));
  // Padded to whole windows and to an even size, as Swin's names read:
  // the same dims the graph's Mod on shape data gives.
  EXPECT_EQ(parsed("((width//4)) + (7 - ((width//4)) % 7) % 7"),
            (num(7) * sym("width").floorDiv(4).ceilDiv(7)).key());
  EXPECT_EQ(parsed("s0 + Mod(s0, 2)"), (num(2) * sym("s0").ceilDiv(2)).key());
  // floor of a sum of fractions: floor(s0/2 + 1/2) = floor((s0+1)/2).
  EXPECT_EQ(parsed("floor(s0/2 + 1/2)"),
            (sym("s0") + num(1)).floorDiv(2).key());
}

TEST(DimNameParserTest, OwnPrintedForms) {
  // What DimExpr::str() prints parses back to the same expression.
  DimExpr H = sym("H"), W = sym("W");
  for (const DimExpr &E :
       {H.ceilDiv(8), (H + num(1)).floorDiv(32) * (W + num(1)).floorDiv(32),
        num(2) * H.ceilDiv(8) * W.ceilDiv(8) + num(4), H * W, H + num(1),
        (H - num(3)).floorDiv(2) + num(1), *(H * W).divExact(num(3))}) {
    std::optional<DimExpr> P = parseDimName(E.str());
    ASSERT_TRUE(P) << E.str();
    EXPECT_EQ(P->key(), E.key()) << E.str();
  }
}

TEST(DimNameParserTest, PlainNamesAndRefusals) {
  EXPECT_EQ(parsed("batch"), sym("batch").key());
  EXPECT_EQ(parsed("p2o.DynamicDimension.4"),
            sym("p2o.DynamicDimension.4").key());
  EXPECT_FALSE(isExpressionDimName("batch"));
  EXPECT_TRUE(isExpressionDimName("seq + 1"));
  // No form in the algebra: the name stays an opaque symbol.
  EXPECT_EQ(parsed("Min(s0, 1024)"), "none");
  EXPECT_EQ(parsed("Max(1, s0)"), "none");
  EXPECT_EQ(parsed("s0//s1"), "none");
  EXPECT_EQ(parsed("s0//0"), "none");
  EXPECT_EQ(parsed("s0 % s1"), "none");
  // A bare `/` is this project's exact division (`(H*W)/3`).
  EXPECT_EQ(parsed("s0/2"), sym("s0").divExact(num(2))->key());
  EXPECT_EQ(parsed("s0 +"), "none");
  EXPECT_EQ(parsed("(s0"), "none");
  EXPECT_EQ(parsed("s0)"), "none");
  EXPECT_EQ(parsed("s0**99"), "none");
  EXPECT_EQ(parsed(""), "none");
  EXPECT_EQ(parsed("a b"), "none");
  EXPECT_FALSE(isExpressionDimName("Min(s0, 1024)"));
  // Deep nesting is refused, not a stack overflow.
  EXPECT_EQ(parsed(std::string(5000, '(') + "a" + std::string(5000, ')')),
            "none");
  EXPECT_EQ(parsed(std::string(3000, '-') + "a"), "none");
}

} // namespace
