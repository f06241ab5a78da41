//===- OpTableTest.cpp - The op table against ONNX 1.12 and the registry --===//
//
// The table's data is written by hand from ONNX's changelog; these tests
// hold it against what can be checked here: ONNX 1.12's registry (an op
// that changed after 1.12 must exist in it, a new op must not), our
// inference table (every semantic change has an inference, and nothing
// else does), and the resolution rules.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/OpTable.h"
#include "onnxopt/Ops/InferRules.h"
#include "gtest/gtest.h"
#include <cstdlib>
#include <fstream>
#include <onnx/defs/schema.h>
#include <set>
#include <sstream>

using namespace onnxopt;

namespace {

bool inOnnx112(const OpVersionEntry &E) {
  return onnx::OpSchemaRegistry::Schema(E.OpType, getOnnx112MaxOpset(E.Domain),
                                        E.Domain) != nullptr;
}

TEST(OpTable, EntriesAreSortedAndUnique) {
  llvm::ArrayRef<OpVersionEntry> All = getOpVersionEntries();
  ASSERT_FALSE(All.empty());
  for (size_t I = 1; I < All.size(); ++I) {
    auto Key = [](const OpVersionEntry &E) {
      return std::make_tuple(std::string(E.Domain), std::string(E.OpType),
                             E.Since);
    };
    EXPECT_LT(Key(All[I - 1]), Key(All[I])) << All[I].OpType;
  }
}

TEST(OpTable, ChangedOpsExistInOnnx112AndNewOpsDoNot) {
  for (const OpVersionEntry &E : getOpVersionEntries()) {
    llvm::ArrayRef<OpVersionEntry> Versions =
        getOpVersionEntries(E.Domain, E.OpType);
    bool First = &E == &Versions.front();
    if (E.Change == OpChange::New)
      EXPECT_FALSE(inOnnx112(E)) << E.OpType << "-" << E.Since;
    else if (First)
      EXPECT_TRUE(inOnnx112(E)) << E.OpType << "-" << E.Since;
    EXPECT_GT(E.Since, getOnnx112MaxOpset(E.Domain)) << E.OpType;
    EXPECT_LE(E.Since, getOpTableMaxOpset(E.Domain)) << E.OpType;
  }
}

TEST(OpTable, EverySemanticChangeHasAnInferenceAndOnlyThose) {
  for (const OpVersionEntry &E : getOpVersionEntries()) {
    const InferRule *Op = findNewVersionRule(E.Domain, E.OpType, E.Since);
    bool Semantic =
        E.Change == OpChange::New || E.Change == OpChange::Semantics;
    EXPECT_EQ(Op != nullptr, Semantic) << E.OpType << "-" << E.Since;
    if (Op && Op->ReuseOp)
      EXPECT_NE(getReusedSchema(*Op), nullptr)
          << E.OpType << " reuses " << Op->ReuseOp << "-" << Op->ReuseOpset;
    if (Op && !Op->Infer)
      EXPECT_NE(Op->ReuseOp, nullptr) << E.OpType;
  }
}

TEST(OpTable, Resolution) {
  using K = OpResolution::Kind;
  OpResolution R = resolveOpVersion("", "Relu", 23);
  EXPECT_EQ(R.K, K::Onnx112Schema);
  EXPECT_EQ(R.SchemaOpset, 17);
  EXPECT_EQ(R.Since, 0);

  R = resolveOpVersion("", "Relu", 13);
  EXPECT_EQ(R.K, K::Onnx112Schema);
  EXPECT_EQ(R.SchemaOpset, 13);

  // Type-only versions resolve to the newest 1.12 schema and say which
  // types they added.
  R = resolveOpVersion("ai.onnx", "Reshape", 21);
  EXPECT_EQ(R.K, K::Onnx112Schema);
  EXPECT_EQ(R.SchemaOpset, 17);
  EXPECT_EQ(R.Since, 21);
  EXPECT_EQ(describeTypeMask(R.AddedTypes),
            "float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz, uint4, "
            "int4");

  // A type-only version on top of a semantic one keeps the semantics.
  R = resolveOpVersion("", "ReduceMax", 20);
  EXPECT_EQ(R.K, K::Modern);
  EXPECT_EQ(R.Since, 20);
  EXPECT_EQ(R.SemanticSince, 18);
  EXPECT_EQ(describeTypeMask(R.AddedTypes), "bool");

  R = resolveOpVersion("", "Cast", 23);
  EXPECT_EQ(R.K, K::Modern);
  EXPECT_EQ(R.SemanticSince, 19);

  R = resolveOpVersion("", "ReduceMean", 17);
  EXPECT_EQ(R.K, K::Onnx112Schema);
  EXPECT_EQ(R.SchemaOpset, 17);

  EXPECT_EQ(resolveOpVersion("", "Relu", 25).K, K::TooNew);
  // Opset 24: a type the IR does not name yet is still described, and a
  // type-only bump keeps the semantics of the version below it.
  R = resolveOpVersion("", "Reshape", 24);
  EXPECT_EQ(R.K, K::Onnx112Schema);
  EXPECT_EQ(R.Since, 24);
  EXPECT_NE(describeTypeMask(R.AddedTypes).find("float8e8m0"),
            std::string::npos);
  R = resolveOpVersion("", "DequantizeLinear", 24);
  EXPECT_EQ(R.K, K::Modern);
  EXPECT_EQ(R.SemanticSince, 23);
  R = resolveOpVersion("", "Attention", 24);
  EXPECT_EQ(R.K, K::Modern);
  EXPECT_EQ(R.SemanticSince, 24);
  EXPECT_EQ(resolveOpVersion("ai.onnx.ml", "TreeEnsembleRegressor", 5).K,
            K::Removed);
  EXPECT_EQ(resolveOpVersion("ai.onnx.ml", "TreeEnsembleRegressor", 3).K,
            K::Onnx112Schema);
  R = resolveOpVersion("ai.onnx.ml", "LabelEncoder", 5);
  EXPECT_EQ(R.K, K::Modern);
  EXPECT_EQ(R.SemanticSince, 4);
  // Other domains are not versioned by the table.
  R = resolveOpVersion("com.example", "Foo", 40);
  EXPECT_EQ(R.K, K::Onnx112Schema);
  EXPECT_EQ(R.SchemaOpset, 40);
}

/// docs/opsets.md holds the generated table between two markers; with
/// ONNXOPT_UPDATE_DOCS=1 in the environment the test rewrites it.
TEST(OpTable, DocsAgreeWithTheTable) {
  const std::string Path = std::string(ONNXOPT_SOURCE_DIR) + "/docs/opsets.md";
  const std::string Begin =
      "<!-- BEGIN generated by renderOpTableMarkdown -->\n";
  const std::string End = "<!-- END generated -->";
  std::ifstream In(Path);
  ASSERT_TRUE(In.good()) << "cannot read " << Path;
  std::stringstream Buf;
  Buf << In.rdbuf();
  std::string Doc = Buf.str();
  size_t B = Doc.find(Begin), E = Doc.find(End);
  ASSERT_NE(B, std::string::npos) << "no begin marker in " << Path;
  ASSERT_NE(E, std::string::npos) << "no end marker in " << Path;
  B += Begin.size();
  std::string Expected = renderOpTableMarkdown();
  if (std::getenv("ONNXOPT_UPDATE_DOCS")) {
    Doc.replace(B, E - B, Expected);
    std::ofstream(Path) << Doc;
    return;
  }
  EXPECT_EQ(Doc.substr(B, E - B), Expected)
      << "docs/opsets.md is out of date: run ONNXOPT_UPDATE_DOCS=1 "
         "build/test/onnxopt-unittests --gtest_filter=OpTable.Docs*";
}

} // namespace
