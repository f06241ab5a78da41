//===- DimRangesTest.cpp - Dim ranges in metadata_props -------------------===//
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Import/Import.h"
#include "gtest/gtest.h"

using namespace onnxopt;

namespace {

std::unique_ptr<Model> parse(llvm::StringRef Text) {
  DiagnosticEngine Diags;
  return parseTextModel(Text, Diags);
}

TEST(DimRangesTest, ParseRange) {
  DimRange R;
  std::string Err;
  ASSERT_TRUE(parseDimRange("1:16:4", R, Err)) << Err;
  EXPECT_EQ(R.Min, 1);
  EXPECT_EQ(R.Max, 16);
  EXPECT_EQ(R.getOpt(), 4);
  ASSERT_TRUE(parseDimRange("0:8", R, Err)) << Err;
  EXPECT_FALSE(R.Opt);
  EXPECT_EQ(R.getOpt(), 8);
  EXPECT_EQ(printDimRange(R), "0:8");
  for (const char *Bad :
       {"", "1", "1:2:3:4", "x:2", "-1:2", "3:2", "1:4:5", "1:4:0"})
    EXPECT_FALSE(parseDimRange(Bad, R, Err)) << Bad;
}

TEST(DimRangesTest, StoredFormRoundTrips) {
  DimRangeMap Ranges;
  Ranges["W"] = {1, 4096, std::nullopt};
  Ranges["N"] = {1, 16, 1};
  std::string Text = printDimRanges(Ranges);
  EXPECT_EQ(Text, "v1;N=1:16:1;W=1:4096");
  DimRangeMap Back;
  std::string Err;
  ASSERT_TRUE(parseDimRanges(Text, Back, Err)) << Err;
  EXPECT_EQ(Back, Ranges);
  EXPECT_TRUE(parseDimRanges("v1", Back, Err));
  EXPECT_TRUE(Back.empty());
  EXPECT_FALSE(parseDimRanges("v3;N=1:2", Back, Err));
  // v1 has no relations; v2 keeps them after the ranges.
  EXPECT_FALSE(parseDimRanges("v1;N=1:2;rel:W=H", Back, Err));
  EXPECT_TRUE(parseDimRanges("v2;N=1:2;rel:W=H;rel:H%32=0", Back, Err)) << Err;
  EXPECT_EQ(Back.size(), 1u);
  EXPECT_FALSE(parseDimRanges("v1;N:1:2", Back, Err));
}

TEST(DimRangesTest, SumBoundRelations) {
  DimRelation R;
  std::string Err;
  ASSERT_TRUE(parseDimRelation(" seq + 2*past <= 64 ", R, Err)) << Err;
  EXPECT_EQ(R.K, DimRelation::AtMost);
  EXPECT_EQ(printDimRelation(R), "2*past+seq<=64");
  EXPECT_EQ(R.symbols(), (std::vector<std::string>{"past", "seq"}));
  EXPECT_TRUE(R.holds({{"past", 30}, {"seq", 4}}));
  EXPECT_FALSE(R.holds({{"past", 30}, {"seq", 5}}));
  EXPECT_FALSE(R.isDecidedBy({{"past", 30}}));
  EXPECT_FALSE(R.holds({{"past", INT64_MAX}, {"seq", 1}})); // no overflow
  // Renaming may merge two terms.
  DimRelation M = R.renamed([](const std::string &S) {
    return S == "seq" ? std::string("past") : S;
  });
  EXPECT_EQ(printDimRelation(M), "3*past<=64");
  for (const char *Bad : {"a+b<64", "a+<=4", "0*a+b<=4", "a+b<=x", "<=4"})
    EXPECT_FALSE(parseDimRelation(Bad, R, Err)) << Bad;
  DimRangeMap Back;
  EXPECT_TRUE(parseDimRanges("v2;rel:past+seq<=64", Back, Err)) << Err;
}

TEST(DimRangesTest, LeastValueRelations) {
  DimRelation R;
  std::string Err;
  ASSERT_TRUE(parseDimRelation(" H >= 7 ", R, Err)) << Err;
  EXPECT_EQ(R.K, DimRelation::AtLeast);
  EXPECT_EQ(printDimRelation(R), "H>=7");
  EXPECT_EQ(R.symbols(), (std::vector<std::string>{"H"}));
  EXPECT_TRUE(R.holds({{"H", 7}}));
  EXPECT_FALSE(R.holds({{"H", 6}}));
  EXPECT_EQ(printDimRelation(R.renamed([](const std::string &) {
              return std::string("height");
            })),
            "height>=7");
  for (const char *Bad : {"H>=", "H>=-1", ">=3", "H>=x", "H>>=3", "H+W>=3"})
    EXPECT_FALSE(parseDimRelation(Bad, R, Err)) << Bad;
  DimRangeMap Back;
  EXPECT_TRUE(parseDimRanges("v2;rel:H>=7", Back, Err)) << Err;
}

TEST(DimRangesTest, SetKeepsOtherMetadataAndRemoves) {
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 17],
      producer_name: "test", metadata_props: ["a" : "1"]>
      g (float[N] X) => (float[N] Y) { Y = Relu (X) })");
  ASSERT_TRUE(M);
  DimRangeMap Ranges, Got;
  std::string Err;
  ASSERT_TRUE(getDimRanges(*M, Got, Err)) << Err;
  EXPECT_TRUE(Got.empty());

  Ranges["N"] = {2, 8, 4};
  ASSERT_TRUE(setDimRanges(*M, Ranges, Err)) << Err;
  ASSERT_TRUE(getDimRanges(*M, Got, Err)) << Err;
  EXPECT_EQ(Got, Ranges);

  ASSERT_TRUE(setDimRanges(*M, DimRangeMap(), Err)) << Err;
  ASSERT_TRUE(getDimRanges(*M, Got, Err)) << Err;
  EXPECT_TRUE(Got.empty());
  EXPECT_NE(M->Residual.find("test"), std::string::npos);
  EXPECT_NE(M->Residual.find('a'), std::string::npos);
  EXPECT_EQ(M->Residual.find(DimRangesKey), std::string::npos);
}

TEST(DimRangesTest, ParseGears) {
  DimGears Gears;
  std::string Err;
  ASSERT_TRUE(parseDimGears("a[1,8],b:1x8x4; a:[2,16],b[2,16,4]", Gears, Err))
      << Err;
  ASSERT_EQ(Gears.size(), 2u);
  ASSERT_EQ(Gears[0].size(), 2u);
  EXPECT_EQ(Gears[0][1].Input, "b");
  EXPECT_EQ(Gears[0][1].Dims, (std::vector<int64_t>{1, 8, 4}));
  EXPECT_EQ(Gears[1][0].Input, "a");
  EXPECT_EQ(printDimGears(Gears), "a[1,8],b[1,8,4];a[2,16],b[2,16,4]");
  for (const char *Bad :
       {"", ";", "a[1,N]", "a[-1]", "[1,2]", "a[1,2", "a:1xNx2", "a"})
    EXPECT_FALSE(parseDimGears(Bad, Gears, Err)) << Bad;
}

TEST(DimRangesTest, GearsStoredAndResolved) {
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,L] ids, float[3] s, float[N,L,8] feats) => (float[N,L,8] Y) {
  Y = Relu (feats)
})");
  ASSERT_TRUE(M);
  DimGears Gears;
  std::string Err;
  ASSERT_TRUE(parseDimGears("feats[2,5,8],s[3],ids[2,5]", Gears, Err)) << Err;
  DimGear Normalized;
  std::map<std::string, int64_t> Values;
  ASSERT_TRUE(resolveDimGear(*M, Gears[0], Normalized, Values, Err)) << Err;
  // Graph input order, static inputs dropped.
  EXPECT_EQ(printDimGear(Normalized), "ids[2,5],feats[2,5,8]");
  EXPECT_EQ(Values, (std::map<std::string, int64_t>{{"L", 5}, {"N", 2}}));
  for (const char *Bad :
       {"ids[2,5]", "ids[2,5],feats[2,6,8]", "ids[2,5],feats[2,5,9]",
        "ids[2,5],feats[2,5]", "ids[2,5],feats[2,5,8],s[4]",
        "ids[2,5],feats[2,5,8],x[1]"}) {
    ASSERT_TRUE(parseDimGears(Bad, Gears, Err)) << Err;
    EXPECT_FALSE(resolveDimGear(*M, Gears[0], Normalized, Values, Err)) << Bad;
  }
  ASSERT_TRUE(
      parseDimGears("ids[1,4],feats[1,4,8];ids[2,5],feats[2,5,8]", Gears, Err));
  ASSERT_TRUE(setDimGears(*M, Gears, Err)) << Err;
  DimGears Back;
  ASSERT_TRUE(getDimGears(*M, Back, Err)) << Err;
  EXPECT_EQ(Back, Gears);
  ASSERT_TRUE(setDimGears(*M, {}, Err)) << Err;
  ASSERT_TRUE(getDimGears(*M, Back, Err)) << Err;
  EXPECT_TRUE(Back.empty());
}

} // namespace
