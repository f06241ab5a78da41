//===- ShapeInferenceTest.cpp - Per-node shape inference ------------------===//
//
// Units of the inference adapter on small text models, and the agreement
// check against onnx::shape_inference::InferShapes on every model of
// Debian's libonnx-testdata.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Import/Import.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <random>
#include <thread>

using namespace onnxopt;

namespace {

/// Diagnostics collected as "severity: location: message" lines.
struct Collected {
  DiagnosticEngine Diags;
  std::vector<Diagnostic> All;
  Collected() {
    Diags.setHandler([this](const Diagnostic &D) { All.push_back(D); });
  }
  std::string text() const {
    std::string S;
    for (const Diagnostic &D : All)
      S += D.Location + ": " + D.Message + "\n";
    return S;
  }
  size_t count(Severity Sev) const {
    return std::count_if(All.begin(), All.end(),
                         [&](const Diagnostic &D) { return D.Sev == Sev; });
  }
};

std::unique_ptr<Model> parse(llvm::StringRef Text) {
  DiagnosticEngine D;
  std::unique_ptr<Model> M = parseTextModel(Text, D);
  EXPECT_TRUE(M) << "model does not parse";
  return M;
}

Value *findValue(Graph &G, llvm::StringRef Name) {
  for (const std::unique_ptr<Value> &V : G.getInputs())
    if (V->getName() == Name)
      return V.get();
  for (const std::unique_ptr<Value> &V : G.getConstants())
    if (V->getName() == Name)
      return V.get();
  for (Node &N : G.getNodes())
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I))
        if (V->getName() == Name)
          return V;
  return nullptr;
}

std::string typeOf(Model &M, llvm::StringRef Name) {
  Value *V = findValue(M.getGraph(), Name);
  return V ? V->getType().str() : "<no such value>";
}

Node *findNode(Graph &G, llvm::StringRef Name) {
  for (Node &N : G.getNodes())
    if (N.getName() == Name)
      return &N;
  return nullptr;
}

} // namespace

//===----------------------------------------------------------------------===//
// Merging
//===----------------------------------------------------------------------===//

static Type floatOf(std::vector<Dim> Dims) { return Type::tensor(1, Dims); }

TEST(MergeInferredType, FillsUnknowns) {
  Type D = floatOf({Dim::symbol("N"), Dim::unknown()});
  std::string Why;
  ASSERT_TRUE(mergeInferredType(
      D, floatOf({Dim::symbol("unk__0"), Dim::known(3)}), Why));
  EXPECT_EQ(D.str(), "float[N,3]");

  Type None;
  ASSERT_TRUE(mergeInferredType(None, floatOf({Dim::known(2)}), Why));
  EXPECT_EQ(None.str(), "float[2]");

  Type NoShape = Type::tensor(0);
  ASSERT_TRUE(mergeInferredType(NoShape, floatOf({Dim::known(2)}), Why));
  EXPECT_EQ(NoShape.str(), "float[2]");
}

TEST(MergeInferredType, KnownReplacesSymbolAndIsRecorded) {
  Type D = floatOf({Dim::symbol("N"), Dim::symbol("K")});
  std::vector<DimFact> Facts;
  std::string Why;
  ASSERT_TRUE(mergeInferredType(
      D, floatOf({Dim::symbol("batch"), Dim::known(12)}), Why, &Facts));
  EXPECT_EQ(D.str(), "float[N,12]");
  ASSERT_EQ(Facts.size(), 2u);
  EXPECT_EQ(Facts[0].DimIndex, 0u);
  EXPECT_EQ(Facts[0].Declared.getSymbol(), "N");
  EXPECT_EQ(Facts[0].Inferred.getSymbol(), "batch");
  EXPECT_EQ(Facts[1].DimIndex, 1u);
  EXPECT_EQ(Facts[1].Inferred.getValue(), 12);
}

TEST(MergeInferredType, ContradictionsLeaveTheDeclaredType) {
  std::string Why;
  Type D = floatOf({Dim::symbol("N"), Dim::known(3)});
  EXPECT_FALSE(
      mergeInferredType(D, floatOf({Dim::known(1), Dim::known(4)}), Why));
  EXPECT_EQ(Why, "dim 1: 4 vs 3");
  EXPECT_EQ(D.str(), "float[N,3]");
  EXPECT_FALSE(mergeInferredType(D, floatOf({Dim::known(1)}), Why));
  EXPECT_EQ(Why, "rank 1 vs 2");
  EXPECT_FALSE(mergeInferredType(D, Type::tensor(7), Why));
  EXPECT_EQ(Why, "element type int64 vs float");
  EXPECT_FALSE(mergeInferredType(D, Type::sequence(Type::tensor(1)), Why));
}

TEST(MergeInferredType, Sequences) {
  Type D = Type::sequence(Type::tensor(1));
  std::string Why;
  ASSERT_TRUE(mergeInferredType(
      D, Type::sequence(floatOf({Dim::known(2), Dim::unknown()})), Why));
  EXPECT_EQ(D.str(), "seq(float[2,?])");
}

//===----------------------------------------------------------------------===//
// Inference on small models
//===----------------------------------------------------------------------===//

TEST(ShapeInference, FillsIntermediateTypes) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,32,32] X, float[8,3,3,3] W) => (float[N,8,16,16] Y) {
      C = Conv<kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]>(X, W)
      Y = Relu(C)
      T = Transpose<perm=[0,2,3,1]>(C)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "C"), "float[N,8,16,16]");
  EXPECT_EQ(typeOf(*M, "T"), "float[N,16,16,8]");
  EXPECT_EQ(SI.getStats().NodesInferred, 3u);
  EXPECT_EQ(SI.getStats().ValuesRefined, 2u);
  EXPECT_TRUE(C.All.empty()) << C.text();
}

TEST(ShapeInference, DataPropagationReachesReshape) {
  const char *Text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] X) => (float[?,?] Y) {
      S = Shape(X)
      zero = Constant<value=int64[1] {0}>()
      B = Gather<axis=0>(S, zero)
      m1 = Constant<value_ints=[-1]>()
      Sh = Concat<axis=0>(B, m1)
      Y = Reshape(X, Sh)
    })";
  auto M = parse(Text);
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "Y"), "float[2,12]");
  std::optional<std::vector<Dim>> Sh =
      SI.getPropagatedData(*findValue(M->getGraph(), "Sh"));
  ASSERT_TRUE(Sh.has_value());
  ASSERT_EQ(Sh->size(), 2u);
  EXPECT_EQ((*Sh)[0].getValue(), 2);
  EXPECT_EQ((*Sh)[1].getValue(), -1);

  // Without data propagation Reshape only knows the rank.
  auto M2 = parse(Text);
  ShapeInferenceOptions Opts;
  Opts.DataPropagation = false;
  Opts.NameUnknownDims = false;
  ASSERT_TRUE(succeeded(inferShapes(*M2, C.Diags, Opts)));
  EXPECT_EQ(typeOf(*M2, "Y"), "float[?,?]");
}

TEST(ShapeInference, SymbolicShapeDataKeepsSymbols) {
  auto M2 = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,C,H,W] X) => (float[?,?,?] Y) {
      S = Shape(X)
      starts = Constant<value_ints=[0]>()
      ends = Constant<value_ints=[2]>()
      P = Slice(S, starts, ends)
      m1 = Constant<value_ints=[-1]>()
      Sh = Concat<axis=0>(P, m1)
      Y = Reshape(X, Sh)
    })");
  Collected C;
  ASSERT_TRUE(succeeded(inferShapes(*M2, C.Diags))) << C.text();
  // ONNX 1.12 cannot compute H*W from symbols: the last dim gets a fresh
  // name; the symbolic dims themselves come through.
  EXPECT_EQ(typeOf(*M2, "Y"), "float[N,C,unk__0]");
}

TEST(ShapeInference, ContradictionNamesNodeAndValue) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] X) => (float[N,4] Y) {
      Y = Relu(X)
    })");
  findNode(M->getGraph(), "")->setName("relu0");
  Collected C;
  EXPECT_TRUE(failed(inferShapes(*M, C.Diags)));
  ASSERT_EQ(C.count(Severity::Error), 1u) << C.text();
  EXPECT_NE(C.All[0].Location.find("node 'relu0' (Relu)"), std::string::npos)
      << C.text();
  EXPECT_EQ(C.All[0].Message,
            "inferred type float[N,3] of value 'Y' contradicts its declared "
            "type float[N,4] (dim 1: 3 vs 4)");
  EXPECT_EQ(typeOf(*M, "Y"), "float[N,4]");
}

TEST(ShapeInference, KnownDimReplacesDeclaredSymbol) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] X) => (float[N,K] Y) {
      Y = Relu(X)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "Y"), "float[N,3]");
  ASSERT_EQ(SI.getDimFacts().size(), 1u);
  const DimFact &F = SI.getDimFacts()[0];
  EXPECT_EQ(F.V->getName(), "Y");
  EXPECT_EQ(F.From->getOpType(), "Relu");
  EXPECT_EQ(F.DimIndex, 1u);
  EXPECT_EQ(F.Declared.getSymbol(), "K");
  EXPECT_EQ(F.Inferred.getValue(), 3);
}

TEST(ShapeInference, OpsWithoutSchemaKeepTheirTypes) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
    g (float[N,3] X) => (float[N,3] Z) {
      Y = com.example.Mystery(X)
      Z = Relu(Y)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "Y"), "<none>");
  EXPECT_EQ(SI.getStats().NodesWithoutSchema, 1u);
  ASSERT_EQ(C.count(Severity::Remark), 1u) << C.text();
  EXPECT_EQ(C.count(Severity::Warning), 0u) << C.text();
  EXPECT_EQ(C.All[0].Message,
            "1 node(s) of 'com.example.Mystery' (no schema in opset 1) keep "
            "their declared types");
}

TEST(ShapeInference, OpsetsNewerThanTheOpTableAreNotInferred) {
  auto M = parse(R"(
    <ir_version: 10, opset_import: ["" : 25]>
    g (float[N,3] X) => (float[N,3] Y) {
      A = Relu(X)
      Y = Relu(A)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "A"), "<none>");
  EXPECT_EQ(SI.getStats().NodesWithoutSchema, 2u);
  ASSERT_EQ(C.All.size(), 1u) << C.text();
  EXPECT_EQ(C.All[0].Message,
            "2 node(s) of 'Relu' (opset 25 is newer than the op table (24)) "
            "keep their declared types");
}

TEST(ShapeInference, TypeOnlyChangesAboveOpset17UseTheLatestSchema) {
  // Relu did not change after opset 14, Reshape only widened its types at
  // 19 and 21: both are inferred at opset 21, data propagation included.
  auto M = parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3,4] X) => (float[?,?] Y) {
      A = Relu(X)
      S = Shape <end = 1> (A)
      M1 = Constant <value_ints = [-1]> ()
      T = Concat <axis = 0> (S, M1)
      Y = Reshape(A, T)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "A"), "float[2,3,4]");
  EXPECT_EQ(typeOf(*M, "Y"), "float[2,12]");
  EXPECT_EQ(SI.getStats().NodesWithoutSchema, 0u);
  EXPECT_TRUE(C.All.empty()) << C.text();
}

TEST(ShapeInference, SemanticChangesAboveOpset17UseOurInference) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[N,7,4] X) => (A, B, C, R) {
      A, B, C = Split <axis = 1, num_outputs = 3> (X)
      Ax = Constant <value_ints = [1]> ()
      R = ReduceMean <keepdims = 0> (X, Ax)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "A"), "float[N,3,4]");
  EXPECT_EQ(typeOf(*M, "B"), "float[N,3,4]");
  EXPECT_EQ(typeOf(*M, "C"), "float[N,1,4]");
  EXPECT_EQ(typeOf(*M, "R"), "float[N,4]");
}

TEST(ShapeInference, FailingInferenceWarnsOrFailsWhenStrict) {
  const char *Text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3] X, float[4] Z) => (float[?] Y) {
      Y = Add(X, Z)
    })";
  auto M = parse(Text);
  Collected C;
  EXPECT_TRUE(succeeded(inferShapes(*M, C.Diags)));
  ASSERT_EQ(C.count(Severity::Warning), 1u) << C.text();
  EXPECT_TRUE(llvm::StringRef(C.All[0].Message)
                  .startswith("shape inference failed: [ShapeInferenceError]"))
      << C.text();
  EXPECT_EQ(typeOf(*M, "Y"), "float[?]");

  auto M2 = parse(Text);
  Collected C2;
  ShapeInferenceOptions Opts;
  Opts.Strict = true;
  EXPECT_TRUE(failed(inferShapes(*M2, C2.Diags, Opts)));
  EXPECT_EQ(C2.count(Severity::Error), 1u) << C2.text();
}

TEST(ShapeInference, IfBranchesAreInferredInPlace) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[N,3] X) => (float[N,3] Y) {
      Y = If(c) <
        then_branch = t () => (float[N,3] A) { A = Relu(X) },
        else_branch = e () => (float[N,3] B) { B0 = Neg(X)  B = Abs(B0) }
      >
    })");
  Collected C;
  ASSERT_TRUE(succeeded(inferShapes(*M, C.Diags))) << C.text();
  Node &If = M->getGraph().getNodes().front();
  std::vector<Graph *> Subs = If.getSubgraphs();
  ASSERT_EQ(Subs.size(), 2u);
  EXPECT_EQ(findValue(*Subs[1], "B0")->getType().str(), "float[N,3]");
  EXPECT_EQ(typeOf(*M, "Y"), "float[N,3]");
}

TEST(ShapeInference, KnownIfConditionReplacesTheUnionOfTheBranches) {
  // ONNX's If writes the union of both branches ([2,N,4]) into the results;
  // the known condition's branch must replace it, not add its dims to it.
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,N,4] H) => (float[2,N,4] Z) <bool c = {1}> {
      Y = If(c) <
        then_branch = t () => (float[2,N,4] A) { A = Relu(H) },
        else_branch = e () => (float[2,N,4] B) { B = Neg(H) }
      >
      Z = Identity(Y)
    })");
  Collected C;
  ASSERT_TRUE(succeeded(inferShapes(*M, C.Diags))) << C.text();
  EXPECT_EQ(C.count(Severity::Warning), 0u) << C.text();
  EXPECT_EQ(typeOf(*M, "Y"), "float[2,N,4]");
  EXPECT_EQ(typeOf(*M, "Z"), "float[2,N,4]");
}

TEST(ShapeInference, LoopBodyGetsItsInputTypesFromTheLoop) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n, float[4] X) => (float[4] Y, float[?,4] S) {
      cond = Constant<value=bool {1}>()
      Y, S = Loop(n, cond, X) <
        body = b (int64 i, bool ci, x) => (co, y, s) {
          co = Identity(ci)
          y = Add(x, x)
          s = Identity(y)
        }
      >
    })");
  Collected C;
  ASSERT_TRUE(succeeded(inferShapes(*M, C.Diags))) << C.text();
  Graph *Body = M->getGraph().getNodes().back().getSubgraphs()[0];
  // Loop-carried shapes may change between iterations: only the element
  // type reaches the body.
  EXPECT_EQ(Body->getInput(2)->getType().str(), "float[]");   // rank unknown
  EXPECT_EQ(findValue(*Body, "co")->getType().str(), "bool"); // a scalar
  // The body says nothing about s's shape, so neither does the Loop: S
  // keeps its declared dims.
  EXPECT_EQ(typeOf(*M, "S"), "float[?,4]");
}

TEST(ShapeInference, BodiesOfCustomOpsAreInferredFromTheirDeclaredInputs) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
    g (float[N,3] X) => (float[N,3] Y) {
      Y = com.example.Wrap<body = b (float[K,2] a) => (float[K,2] c) {
        t = Relu(a)
        c = Neg(t)
      }>(X)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  Graph *Body = M->getGraph().getNodes().front().getSubgraphs()[0];
  EXPECT_EQ(findValue(*Body, "t")->getType().str(), "float[K,2]");
  EXPECT_EQ(SI.getStats().NodesWithoutSchema, 1u);
  EXPECT_EQ(SI.getStats().NodesInferred, 2u);
}

TEST(ShapeInference, InferNodeAfterARewrite) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,8,8] X) => (float[?,?,?,?] Y) {
      Y = Transpose<perm=[0,2,3,1]>(X)
    })");
  Collected C;
  ShapeInference SI(*M, C.Diags);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "Y"), "float[N,8,8,3]");
  Node &T = M->getGraph().getNodes().front();
  T.setAttr(Attribute::getInts("perm", {1, 0, 2, 3}));
  Value *Y = T.getResult(0);
  Y->setType(Type());
  ASSERT_TRUE(succeeded(SI.inferNode(T))) << C.text();
  EXPECT_EQ(Y->getType().str(), "float[3,N,8,8]");
}

/// Every type of \p G and its bodies, in walk order.
static std::vector<std::string> allTypes(Graph &G) {
  std::vector<std::string> Types;
  for (const std::unique_ptr<Value> &V : G.getInputs())
    Types.push_back(V->getName().str() + ": " + V->getType().str());
  for (Node &N : G.getNodes()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I))
        Types.push_back(V->getName().str() + ": " + V->getType().str());
    for (Graph *Sub : N.getSubgraphs())
      for (std::string &T : allTypes(*Sub))
        Types.push_back(std::move(T));
  }
  return Types;
}

TEST(ShapeInference, ShapeInfoKeepsItsTypesBesideTheModel) {
  // The body's inputs get their types from the Loop, its results from the
  // body's inference: the analysis answers both, and the model keeps its
  // own types, untyped ones included, until commit records them.
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n, float[4] X) => (float[4] Y, float[?,4] S) {
      cond = Constant<value=bool {1}>()
      Y, S = Loop(n, cond, X) <
        body = b (int64 i, bool ci, x) => (co, y, s) {
          co = Identity(ci)
          y = Add(x, x)
          s = Identity(y)
        }
      >
    })");
  std::vector<std::string> Before = allTypes(M->getGraph());
  Collected C;
  ShapeInfo Types(*M, C.Diags);
  ASSERT_TRUE(succeeded(Types.getResult())) << C.text();
  Graph *Body = M->getGraph().getNodes().back().getSubgraphs()[0];
  EXPECT_EQ(Types.getType(*findValue(*Body, "co")).str(), "bool");
  EXPECT_TRUE(findValue(*Body, "co")->getType().isNone());
  EXPECT_EQ(allTypes(M->getGraph()), Before);

  // Inferring a node again reads the results kept so far and keeps its
  // own beside the model too.
  Node &Add = *findValue(*Body, "y")->getDefiningNode();
  ASSERT_TRUE(succeeded(Types.getEngine().inferNode(Add))) << C.text();
  EXPECT_EQ(Types.getType(*findValue(*Body, "y")).str(), "float[]");
  EXPECT_EQ(allTypes(M->getGraph()), Before);

  // Committed, the model holds what inferShapes records.
  auto Expected = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n, float[4] X) => (float[4] Y, float[?,4] S) {
      cond = Constant<value=bool {1}>()
      Y, S = Loop(n, cond, X) <
        body = b (int64 i, bool ci, x) => (co, y, s) {
          co = Identity(ci)
          y = Add(x, x)
          s = Identity(y)
        }
      >
    })");
  ASSERT_TRUE(succeeded(inferShapes(*Expected, C.Diags))) << C.text();
  Types.commit();
  EXPECT_TRUE(Types.isCommitted());
  EXPECT_EQ(allTypes(M->getGraph()), allTypes(Expected->getGraph()));
  EXPECT_NE(allTypes(M->getGraph()), Before);
}

TEST(ShapeInference, DimAnalysisReadsTypesThroughShapeInfo) {
  // NonZero's count is data-dependent: only inference's type names it.
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] X) => (int64[?,?] Y) {
      Z = NonZero(X)
      Y = Identity(Z)
    })");
  Collected C;
  ShapeInfo Types(*M, C.Diags);
  ASSERT_TRUE(succeeded(Types.getResult())) << C.text();
  Value *Z = findValue(M->getGraph(), "Z");
  ASSERT_TRUE(Z->getType().isNone());
  const Type &Inferred = Types.getType(*Z);
  ASSERT_TRUE(Inferred.hasShape()) << Inferred.str();
  ASSERT_TRUE(Inferred.getDims()[1].isSymbol()) << Inferred.str();
  DimAnalysis DA(*M, &Types);
  DA.run();
  const std::vector<DimExpr> *ZDims = DA.getDims(*Z);
  ASSERT_TRUE(ZDims);
  ASSERT_EQ(ZDims->size(), 2u);
  EXPECT_EQ(DA.getBest((*ZDims)[1]),
            DimExpr::symbol(Inferred.getDims()[1].getSymbol()));
  EXPECT_TRUE(Z->getType().isNone());
}

TEST(ShapeInference, ChangeLogKeepsTheTypesOfNewNodes) {
  // A pass that infers to read types and makes nodes (fold-shapes): the
  // new nodes keep their inferred types; a new value that took a graph
  // output's place gets the output's declared type back.
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] X) => (float[?,?] Y) {
      T = Relu(X)
      Y = Identity(T)
    })");
  Collected C;
  TypeChangeLog Log;
  Rewriter R(*M, C.Diags, &Log);
  ShapeInference SI(*M, C.Diags);
  SI.setTypeChangeLog(&Log);
  ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
  EXPECT_EQ(typeOf(*M, "T"), "float[N,3]");
  EXPECT_EQ(typeOf(*M, "Y"), "float[N,3]");
  Value *T = findValue(M->getGraph(), "T");
  Value *Y = findValue(M->getGraph(), "Y");
  R.setInsertionPointBefore(Y->getDefiningNode());
  Node *Neg = R.createNode("Neg", {T});
  Node *Abs = R.createNode("Abs", {T});
  ASSERT_TRUE(succeeded(SI.inferNode(*Neg))) << C.text();
  ASSERT_TRUE(succeeded(SI.inferNode(*Abs))) << C.text();
  Node *Identity = Y->getDefiningNode();
  ASSERT_TRUE(succeeded(R.replaceAllUsesWith(Y, Neg->getResult(0))));
  Log.transfer(Neg->getResult(0), Y);
  Log.forget(Y);
  R.eraseNode(Identity);
  Log.restore();
  EXPECT_TRUE(T->getType().isNone()) << T->getType().str();
  EXPECT_EQ(Abs->getResult(0)->getType().str(), "float[N,3]");
  EXPECT_EQ(M->getGraph().getOutput(0)->getType().str(), "float[?,?]");
}

TEST(ShapeInference, ConstantInitializersAreInputData) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[6,4] X) => (float[?,?] Y)
    <int64[2] shape = {3, 8}> {
      Y = Reshape(X, shape)
    })");
  Collected C;
  ASSERT_TRUE(succeeded(inferShapes(*M, C.Diags))) << C.text();
  EXPECT_EQ(typeOf(*M, "Y"), "float[3,8]");
}

TEST(ShapeInference, UnknownDimsGetStableFreshNames) {
  auto M = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[unk__0,3] X, int64[2] S) => (float[?,?] Y) {
      Y = Reshape(X, S)
      Z = Relu(Y)
    })");
  Collected C;
  ASSERT_TRUE(succeeded(inferShapes(*M, C.Diags))) << C.text();
  // Without shape data Reshape's dims are unknown (its rank is S's
  // length): they get fresh names, and unk__0 is taken by the model. Relu
  // keeps them.
  EXPECT_EQ(typeOf(*M, "Y"), "float[unk__1,unk__2]");
  EXPECT_EQ(typeOf(*M, "Z"), "float[unk__1,unk__2]");
}

//===----------------------------------------------------------------------===//
// Dim expressions
//===----------------------------------------------------------------------===//

namespace {
DimExpr sym(llvm::StringRef S) { return DimExpr::symbol(S); }
DimExpr num(int64_t C) { return DimExpr::constant(C); }
} // namespace

TEST(DimExpr, CanonicalForms) {
  DimExpr H = sym("H"), W = sym("W");
  EXPECT_EQ(H + W, W + H);
  EXPECT_EQ((num(2) * H) * W, W * (H * num(2)));
  EXPECT_EQ((H + W - H).str(), "W");
  EXPECT_EQ((H * W + num(3) - num(3)).str(), "H*W");
  EXPECT_TRUE((H - H).isConstant());
  EXPECT_EQ((H - H).getConstant(), 0);
  EXPECT_EQ((num(2) * W * H + num(4) + H).str(), "2*H*W+H+4");
  EXPECT_TRUE(H.isSymbol());
  EXPECT_FALSE((num(2) * H).isSymbol());
}

TEST(DimExpr, FloorAndCeilDivisionNormalize) {
  DimExpr H = sym("H");
  // Conv k=3, s=2, p=1: floor((H + 2 - 3) / 2) + 1 = ceil(H/2).
  DimExpr Conv = (H + num(2 - 3)).floorDiv(2) + num(1);
  EXPECT_EQ(Conv, H.ceilDiv(2));
  EXPECT_EQ(Conv.str(), "ceil(H/2)");
  // Stacked stride-2 layers compose.
  EXPECT_EQ(H.ceilDiv(2).ceilDiv(2).ceilDiv(2), H.ceilDiv(8));
  EXPECT_EQ(H.floorDiv(2).floorDiv(2).str(), "floor(H/4)");
  // Exact parts come out of the division.
  EXPECT_EQ((num(2) * H + num(4)).floorDiv(2), H + num(2));
  EXPECT_EQ((num(2) * H).floorDiv(4).str(), "floor(H/2)");
  EXPECT_EQ((H + num(5)).floorDiv(4).str(), "floor((H+1)/4)+1");
  EXPECT_EQ(num(7).floorDiv(2).getConstant(), 3);
  EXPECT_EQ(num(-7).floorDiv(2).getConstant(), -4);
  EXPECT_NE(H.floorDiv(2), H.ceilDiv(2));
}

TEST(DimExpr, ModuloPadsCompose) {
  DimExpr W = sym("W");
  // Swin pads to a multiple of the window: W + (7 - W % 7) % 7.
  EXPECT_EQ(W + (num(7) - W.mod(7)).mod(7), num(7) * W.ceilDiv(7));
  // Patch merging pads to an even size: W + W % 2 = 2*ceil(W/2), after
  // a stride-4 stem too (floor(W/4) - floor(W/8) is floor((W+4)/8)).
  EXPECT_EQ(W + W.mod(2), num(2) * W.ceilDiv(2));
  DimExpr Stem = W.floorDiv(4);
  EXPECT_EQ(Stem + Stem.mod(2), num(2) * (W + num(4)).floorDiv(8));
  // Whole multiples of the divisor leave a floor; a negative lead flips
  // to a ceil: floor(-W/7) = -ceil(W/7).
  EXPECT_EQ((num(7) * Stem + W).floorDiv(7), Stem + W.floorDiv(7));
  EXPECT_EQ((num(0) - W).floorDiv(7), num(0) - W.ceilDiv(7));
}

TEST(DimExpr, ModuloFormsEvaluateAsIntegers) {
  // The rewritten forms against integer arithmetic, negative values too.
  DimExpr X = sym("X");
  std::vector<std::pair<DimExpr, std::function<int64_t(int64_t)>>> Cases = {
      {X.mod(7), [](int64_t V) { return ((V % 7) + 7) % 7; }},
      {(num(7) - X.mod(7)).mod(7),
       [](int64_t V) { return (7 - ((V % 7) + 7) % 7) % 7; }},
      {X.floorDiv(4) + X.floorDiv(4).mod(2),
       [](int64_t V) {
         int64_t F = V >= 0 ? V / 4 : -((-V + 3) / 4);
         return F + ((F % 2) + 2) % 2;
       }},
      {(num(3) * X) - num(2) * X.floorDiv(2),
       [](int64_t V) {
         return 3 * V - 2 * (V >= 0 ? V / 2 : -((-V + 1) / 2));
       }},
      {(num(5) - X).floorDiv(3),
       [](int64_t V) {
         int64_t A = 5 - V;
         return A >= 0 ? A / 3 : -((-A + 2) / 3);
       }},
  };
  for (auto &[E, F] : Cases)
    for (int64_t V = -20; V <= 40; ++V)
      EXPECT_EQ(E.evaluate([&](llvm::StringRef) { return V; }), F(V))
          << E.str() << " at " << V;
}

TEST(DimExpr, RandomFormsEvaluateAsIntegers) {
  // Random sums, products, floors, ceils and modulos of two symbols: the
  // canonical forms (whole multiples out of floors, a positive lead,
  // Hermite's halves) must keep every value. A fixed seed: deterministic.
  std::mt19937 Rng(20261207);
  using Fn = std::function<int64_t(int64_t, int64_t)>;
  auto FloorDiv = [](int64_t A, int64_t K) {
    return A >= 0 ? A / K : -((-A + K - 1) / K);
  };
  std::function<std::pair<DimExpr, Fn>(int)> Make = [&](int Depth) {
    std::uniform_int_distribution<int> Pick(0, Depth > 0 ? 7 : 2);
    int64_t Ks[] = {2, 3, 4, 7, 8};
    int64_t K = Ks[Rng() % 5];
    int64_t C = int64_t(Rng() % 21) - 10;
    switch (Pick(Rng)) {
    case 0:
      return std::make_pair(sym("X"), Fn([](int64_t X, int64_t) { return X; }));
    case 1:
      return std::make_pair(sym("Y"), Fn([](int64_t, int64_t Y) { return Y; }));
    case 2:
      return std::make_pair(num(C), Fn([C](int64_t, int64_t) { return C; }));
    default:
      break;
    }
    auto [A, FA] = Make(Depth - 1);
    auto [B, FB] = Make(Depth - 1);
    switch (Rng() % 6) {
    case 0:
      return std::make_pair(A + B, Fn([FA = FA, FB = FB](int64_t X, int64_t Y) {
                              return FA(X, Y) + FB(X, Y);
                            }));
    case 1:
      return std::make_pair(A - B, Fn([FA = FA, FB = FB](int64_t X, int64_t Y) {
                              return FA(X, Y) - FB(X, Y);
                            }));
    case 2:
      return std::make_pair(num(C) * A, Fn([FA = FA, C](int64_t X, int64_t Y) {
                              return C * FA(X, Y);
                            }));
    case 3:
      return std::make_pair(A.floorDiv(K),
                            Fn([FA = FA, K, FloorDiv](int64_t X, int64_t Y) {
                              return FloorDiv(FA(X, Y), K);
                            }));
    case 4:
      return std::make_pair(A.ceilDiv(K),
                            Fn([FA = FA, K, FloorDiv](int64_t X, int64_t Y) {
                              return -FloorDiv(-FA(X, Y), K);
                            }));
    default:
      return std::make_pair(A.mod(K),
                            Fn([FA = FA, K, FloorDiv](int64_t X, int64_t Y) {
                              int64_t V = FA(X, Y);
                              return V - K * FloorDiv(V, K);
                            }));
    }
  };
  for (int Case = 0; Case < 400; ++Case) {
    auto [E, F] = Make(4);
    for (int64_t X = -13; X <= 29; X += 3)
      for (int64_t Y = -7; Y <= 20; Y += 4) {
        std::optional<int64_t> V = E.evaluate([&](llvm::StringRef S) {
          return std::optional<int64_t>(S == "X" ? X : Y);
        });
        ASSERT_EQ(V, F(X, Y)) << E.str() << " at X=" << X << ", Y=" << Y;
      }
  }
}

TEST(DimExpr, ExactDivision) {
  DimExpr N = sym("N"), C = sym("C"), H = sym("H"), W = sym("W");
  EXPECT_EQ(*(N * C * H * W).divExact(N * C), H * W);
  EXPECT_EQ(*(num(6) * H).divExact(num(3)), num(2) * H);
  EXPECT_EQ((*H.divExact(num(3))).str(), "H/3");
  EXPECT_EQ((*(H * W).divExact(num(2))).str(), "(H*W)/2");
  EXPECT_FALSE((H + W).divExact(H).has_value());
  EXPECT_FALSE(H.divExact(W).has_value());
  EXPECT_EQ(*H.divExact(H), num(1));
  // By a sum, where the quotient is one term: a view's element count over
  // its other entries ([B, 2, 2*T, T] after a pad of T*(2*T-1) columns).
  DimExpr B = sym("B"), T = sym("T");
  DimExpr Count = num(2) * B * T * (num(2) * T - num(1));
  EXPECT_EQ(*Count.divExact(num(2) * T * (num(2) * T - num(1))), B);
  EXPECT_EQ(*(num(6) * H + num(3)).divExact(num(2) * H + num(1)), num(3));
  EXPECT_EQ(*((H + W) * N).divExact(H + W), N);
  // Not one term, or not exact: none.
  EXPECT_FALSE((H * H - num(1)).divExact(H + num(1)).has_value());
  EXPECT_FALSE((num(2) * H + num(3)).divExact(H + num(1)).has_value());
  EXPECT_FALSE((H * W + num(1)).divExact(H + num(1)).has_value());
}

TEST(DimExpr, SharedFormsAreValues) {
  // Copies share their terms; none of the operations may change the one
  // they read, and the small constants made once are the same everywhere.
  DimExpr H = sym("H");
  DimExpr Copy = H;
  DimExpr Sum = Copy + num(1);
  EXPECT_EQ(Copy.str(), "H");
  EXPECT_EQ(Sum.str(), "H+1");
  EXPECT_EQ((Sum - H).key(), num(1).key());
  EXPECT_TRUE((Sum - H - num(1)).isConstant());
  EXPECT_EQ((Sum - H - num(1)).key(), DimExpr().key());
  // Inside and outside the shared range, and at its edges.
  for (int64_t C : {int64_t(-17), int64_t(-16), int64_t(-1), int64_t(1),
                    int64_t(1023), int64_t(1024), int64_t(1) << 40}) {
    EXPECT_EQ(num(C), (H + num(C)) - H) << C;
    EXPECT_EQ(num(C).getConstant(), C);
  }
  // Made from several threads at once, a shared constant is one value.
  std::vector<std::thread> Threads;
  std::vector<std::string> Keys(4);
  for (size_t I = 0; I < Keys.size(); ++I)
    Threads.emplace_back([&Keys, I] {
      for (int64_t C = -16; C < 1024; ++C)
        if (DimExpr::constant(C).getConstant() != C)
          return;
      Keys[I] = DimExpr::constant(777).key();
    });
  for (std::thread &T : Threads)
    T.join();
  for (const std::string &K : Keys)
    EXPECT_EQ(K, num(777).key());
}

TEST(DimExpr, UnknownsAreOnlyEqualToThemselves) {
  DimExpr A = DimExpr::unknown(), B = DimExpr::unknown();
  EXPECT_NE(A, B);
  EXPECT_EQ(A, A);
  EXPECT_TRUE((A * sym("H")).hasUnknown());
  EXPECT_FALSE(sym("H").hasUnknown());
}

TEST(DimExpr, ExporterMadeSymbols) {
  for (const char *S : {"unk__12", "Concatboxes_dim_1", "dim3",
                        "p2o.DynamicDimension.4", "Softmaxscores_dim_0", "s0",
                        "s12", "input_dynamic_axes_1", "2*ceil(H/8)", "seq+1"})
    EXPECT_TRUE(isExporterMadeSymbol(S)) << S;
  for (const char *S :
       {"batch", "N", "seq_len", "dim", "unk__", "dimension", "height",
        "_dim_2x", "s", "steps", "boxes_dim1", "_dynamic_axes_1"})
    EXPECT_FALSE(isExporterMadeSymbol(S)) << S;
}

//===----------------------------------------------------------------------===//
// Dim analysis
//===----------------------------------------------------------------------===//

namespace {

/// Infers shapes, runs the dim analysis and returns the dims of \p Name.
std::string dimsOf(DimAnalysis &DA, Model &M, llvm::StringRef Name) {
  Value *V = findValue(M.getGraph(), Name);
  const std::vector<DimExpr> *D = V ? DA.getDims(*V) : nullptr;
  if (!D)
    return "<none>";
  std::string S = "[";
  for (size_t I = 0; I < D->size(); ++I)
    S += (I ? "," : "") + DA.getBest((*D)[I]).str();
  return S + "]";
}

std::unique_ptr<Model> inferred(llvm::StringRef Text) {
  std::unique_ptr<Model> M = parse(Text);
  Collected C;
  EXPECT_TRUE(succeeded(inferShapes(*M, C.Diags))) << C.text();
  return M;
}

} // namespace

TEST(DimAnalysis, ConvolutionsAndPools) {
  auto M = inferred(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3,H,W] X, float[8,3,3,3] K) => (float[N,8,?,?] Y) {
      C = Conv<kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]>(X, K)
      P = MaxPool<kernel_shape=[2,2], strides=[2,2]>(C)
      S = Conv<strides=[2,2], auto_pad="SAME_UPPER">(X, K)
      Y = Relu(P)
    })");
  DimAnalysis DA(*M);
  DA.run();
  EXPECT_EQ(dimsOf(DA, *M, "C"), "[N,8,ceil(H/2),ceil(W/2)]");
  EXPECT_EQ(dimsOf(DA, *M, "P"), "[N,8,floor((H+1)/4),floor((W+1)/4)]");
  EXPECT_EQ(dimsOf(DA, *M, "S"), "[N,8,ceil(H/2),ceil(W/2)]");
  EXPECT_EQ(dimsOf(DA, *M, "Y"), dimsOf(DA, *M, "P"));
}

TEST(DimAnalysis, ShapeArithmeticReachesReshape) {
  // ONNX 1.12 names the last dim unk__0; the algebra knows it is C*H*W.
  auto M = inferred(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,C,H,W] X) => (float[?,?] Y) {
      S = Shape(X)
      Starts = Constant<value_ints=[0]>()
      Ends = Constant<value_ints=[1]>()
      B = Slice(S, Starts, Ends)
      M1 = Constant<value_ints=[-1]>()
      Sh = Concat<axis=0>(B, M1)
      Y = Reshape(X, Sh)
    })");
  EXPECT_EQ(typeOf(*M, "Y"), "float[N,unk__0]");
  DimAnalysis DA(*M);
  DA.run();
  EXPECT_EQ(dimsOf(DA, *M, "Y"), "[N,C*H*W]");
  EXPECT_TRUE(DA.provenEqual(DimExpr::symbol("unk__0"),
                             sym("C") * sym("H") * sym("W")));
}

TEST(DimAnalysis, ConcatAndMatMulProveEqualities) {
  auto M = inferred(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[A,4] X, float[B,4] Y, float[K,L] P, float[Q,R] S)
        => (float[?,4] Z, float[?,?] T) {
      Z = Concat<axis=0>(X, Y)
      T = MatMul(P, S)
    })");
  DimAnalysis DA(*M);
  DA.run();
  EXPECT_EQ(dimsOf(DA, *M, "Z"), "[A+B,4]");
  EXPECT_TRUE(DA.provenEqual(sym("L"), sym("Q")));
  EXPECT_FALSE(DA.provenEqual(sym("A"), sym("B")));
  EXPECT_EQ(dimsOf(DA, *M, "T"), "[K,R]");
}

TEST(DimAnalysis, BroadcastingProvesNothing) {
  // N and P could each be 1: Add does not make them equal.
  auto M = inferred(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[M,N] X, float[M,P] Y) => (float[M,?] Z) {
      Z = Add(X, Y)
    })");
  DimAnalysis DA(*M);
  DA.run();
  EXPECT_FALSE(DA.provenEqual(sym("N"), sym("P")));
  EXPECT_EQ(typeOf(*M, "Z"), "float[M,unk__0]");
  EXPECT_FALSE(DA.provenEqual(sym("unk__0"), sym("N")));
  EXPECT_FALSE(DA.provenEqual(sym("unk__0"), sym("P")));
}

TEST(DimAnalysis, DeclaredNamesAreTiedToExpressions) {
  auto M = inferred(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,8,H,W] X) => (float[N,dim1] A, float[N,dim2] B) {
      A = Flatten(X)
      R = Relu(X)
      B = Flatten(R)
    })");
  DimAnalysis DA(*M);
  DA.run();
  EXPECT_TRUE(DA.provenEqual(sym("dim1"), sym("dim2")));
  EXPECT_EQ(DA.getBest(sym("dim1")).str(), "8*H*W");
  std::string Explained;
  llvm::raw_string_ostream OS(Explained);
  DA.explain(OS);
  EXPECT_NE(Explained.find("8*H*W: dim1 dim2"), std::string::npos) << Explained;
  EXPECT_NE(Explained.find("(Flatten)"), std::string::npos) << Explained;
}

//===----------------------------------------------------------------------===//
// Agreement with onnx::shape_inference::InferShapes on libonnx-testdata
//===----------------------------------------------------------------------===//

namespace {

const char *kTestData = "/usr/share/libonnx-testdata/data";

/// Compares our types with ONNX's, treating fresh `unk__` symbols on both
/// sides as equal when they correspond one to one.
class TypeComparer {
public:
  explicit TypeComparer(const llvm::StringSet<> &Original)
      : Original(Original) {}

  bool same(const Type &Ours, const Type &Theirs) {
    if (Ours.getKind() != Theirs.getKind() ||
        Ours.getElemType() != Theirs.getElemType() ||
        Ours.hasShape() != Theirs.hasShape() ||
        Ours.getRank() != Theirs.getRank())
      return false;
    for (size_t I = 0; I < Ours.getRank(); ++I)
      if (!sameDim(Ours.getDims()[I], Theirs.getDims()[I]))
        return false;
    switch (Ours.getKind()) {
    case Type::Kind::Sequence:
    case Type::Kind::Optional:
    case Type::Kind::Map:
      return same(Ours.getElementType(), Theirs.getElementType());
    default:
      return true;
    }
  }

  /// Ours is \p Theirs with some of ONNX's fresh dims known: same element
  /// type and rank, every other dim the same.
  bool refinesDims(const Type &Ours, const Type &Theirs) {
    if (!Ours.isTensor() || !Theirs.isTensor() || !Ours.hasShape() ||
        !Theirs.hasShape() || Ours.getRank() != Theirs.getRank() ||
        Ours.getElemType() != Theirs.getElemType())
      return false;
    for (size_t I = 0; I < Ours.getRank(); ++I) {
      const Dim &T = Theirs.getDims()[I];
      if (!(T.isSymbol() && isFresh(T.getSymbol())) &&
          !sameDim(Ours.getDims()[I], T))
        return false;
    }
    return true;
  }

private:
  const llvm::StringSet<> &Original;
  std::map<std::string, std::string> OursToTheirs, TheirsToOurs;

  bool isFresh(llvm::StringRef S) const {
    return S.startswith("unk__") && !Original.count(S);
  }
  bool sameDim(const Dim &A, const Dim &B) {
    if (A.getKind() != B.getKind())
      return false;
    if (A.isKnown())
      return A.getValue() == B.getValue();
    if (!A.isSymbol())
      return true;
    if (!isFresh(A.getSymbol()) || !isFresh(B.getSymbol()))
      return A.getSymbol() == B.getSymbol();
    auto [It1, New1] = OursToTheirs.emplace(A.getSymbol(), B.getSymbol());
    auto [It2, New2] = TheirsToOurs.emplace(B.getSymbol(), A.getSymbol());
    return It1->second == B.getSymbol() && It2->second == A.getSymbol();
  }
};

void collectSymbols(const onnx::TypeProto &T, llvm::StringSet<> &Out) {
  if (T.has_tensor_type())
    for (const auto &D : T.tensor_type().shape().dim())
      if (D.has_dim_param())
        Out.insert(D.dim_param());
  if (T.has_sequence_type())
    collectSymbols(T.sequence_type().elem_type(), Out);
  if (T.has_optional_type())
    collectSymbols(T.optional_type().elem_type(), Out);
}

void collectSymbols(const onnx::GraphProto &G, llvm::StringSet<> &Out) {
  for (const auto *List : {&G.input(), &G.output(), &G.value_info()})
    for (const onnx::ValueInfoProto &VI : *List)
      collectSymbols(VI.type(), Out);
  for (const onnx::NodeProto &N : G.node())
    for (const onnx::AttributeProto &A : N.attribute()) {
      if (A.has_g())
        collectSymbols(A.g(), Out);
      for (const onnx::GraphProto &Sub : A.graphs())
        collectSymbols(Sub, Out);
    }
}

Type typeFromProto(const onnx::TypeProto &P);

std::optional<std::vector<Dim>>
shapeFromProto(const onnx::TensorShapeProto *S) {
  if (!S)
    return std::nullopt;
  std::vector<Dim> Dims;
  for (const auto &D : S->dim())
    Dims.push_back(D.has_dim_value()   ? Dim::known(D.dim_value())
                   : D.has_dim_param() ? Dim::symbol(D.dim_param())
                                       : Dim::unknown());
  return Dims;
}

Type typeFromProto(const onnx::TypeProto &P) {
  if (P.has_tensor_type())
    return Type::tensor(P.tensor_type().elem_type(),
                        shapeFromProto(P.tensor_type().has_shape()
                                           ? &P.tensor_type().shape()
                                           : nullptr));
  if (P.has_sequence_type())
    return Type::sequence(typeFromProto(P.sequence_type().elem_type()));
  if (P.has_optional_type())
    return Type::optional(typeFromProto(P.optional_type().elem_type()));
  if (P.has_map_type())
    return Type::map(P.map_type().key_type(),
                     typeFromProto(P.map_type().value_type()));
  return Type();
}

struct Agreement {
  size_t Values = 0;
  size_t Differ = 0;
  /// Reshape and Slice results with a shape where ONNX 1.12 records none:
  /// our rules (lib/Ops/SymbolicRefinement.h) know the rank (the
  /// target's length, the input's rank) and the dims they prove from the
  /// shape data; not a disagreement.
  size_t Refined = 0;
  /// Results with the same rank as ONNX's whose dims we know where ONNX
  /// has fresh symbols.
  size_t DimsRefined = 0;
  std::string FirstDifference;
};

bool isRefinement(const Type &Ours, const Type &Theirs) {
  return Ours.isTensor() && Theirs.isTensor() && !Theirs.hasShape() &&
         Ours.hasShape() && Ours.getElemType() == Theirs.getElemType();
}

/// Compares every value of our graph \p G with the type ONNX recorded for
/// it in \p P (input, output or value_info), then the subgraphs.
void compareGraph(Graph &G, const onnx::GraphProto &P, TypeComparer &Cmp,
                  Agreement &A) {
  std::map<std::string, const onnx::TypeProto *> Theirs;
  for (const auto *List : {&P.input(), &P.value_info(), &P.output()})
    for (const onnx::ValueInfoProto &VI : *List)
      Theirs[VI.name()] = &VI.type();
  auto Check = [&](const Value &V) {
    auto It = Theirs.find(V.getName().str());
    Type T = It == Theirs.end() ? Type() : typeFromProto(*It->second);
    ++A.Values;
    if (Cmp.same(V.getType(), T))
      return;
    const Node *Def = V.getDefiningNode();
    if (Def && (Def->is("Reshape") || Def->is("Slice")) &&
        isRefinement(V.getType(), T)) {
      ++A.Refined;
      return;
    }
    // Shape operands computed from constants are evaluated (LayerNorm's
    // expanded body sizes ConstantOfShape by Neg(axis)): dims ONNX leaves
    // fresh are known, nothing else differs.
    if (Def && Cmp.refinesDims(V.getType(), T)) {
      ++A.DimsRefined;
      return;
    }
    if (!A.Differ++)
      A.FirstDifference = "value '" + V.getName().str() + "' in graph '" +
                          G.getPath() + "': ours " + V.getType().str() +
                          ", onnx " + T.str();
  };
  for (const std::unique_ptr<Value> &V : G.getInputs())
    Check(*V);
  int Index = 0;
  for (Node &N : G.getNodes()) {
    const onnx::NodeProto *PN =
        Index < P.node_size() ? &P.node(Index) : nullptr;
    ++Index;
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I))
        Check(*V);
    if (!PN || PN->op_type() != N.getOpType())
      continue;
    for (const Attribute &Attr : N.getAttrs()) {
      if (Attr.Kind != AttrKind::Graph)
        continue;
      for (const onnx::AttributeProto &PA : PN->attribute())
        if (PA.name() == Attr.Name && PA.has_g())
          compareGraph(*Attr.Graphs.front(), PA.g(), Cmp, A);
    }
  }
}

} // namespace

TEST(ShapeInference, AgreesWithOnnxOnLibonnxTestdata) {
  if (!llvm::sys::fs::is_directory(kTestData))
    GTEST_SKIP() << "libonnx-testdata is not installed";
  std::vector<std::string> Paths;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator Suite(kTestData, EC), End;
       Suite != End && !EC; Suite.increment(EC))
    for (llvm::sys::fs::directory_iterator Case(Suite->path(), EC), CEnd;
         Case != CEnd && !EC; Case.increment(EC)) {
      std::string Path = Case->path() + "/model.onnx";
      if (llvm::sys::fs::exists(Path))
        Paths.push_back(Path);
    }
  std::sort(Paths.begin(), Paths.end());
  ASSERT_GT(Paths.size(), 1000u);

  auto Start = std::chrono::steady_clock::now();
  size_t Agree = 0, OnnxThrew = 0, NotLoaded = 0, Values = 0, Refined = 0,
         DimsRefined = 0;
  std::vector<std::string> Differences, Conflicts;
  for (const std::string &Path : Paths) {
    auto Buffer = llvm::MemoryBuffer::getFile(Path);
    ASSERT_TRUE(bool(Buffer)) << Path;
    onnx::ModelProto Proto;
    ASSERT_TRUE(Proto.ParseFromArray((*Buffer)->getBufferStart(),
                                     (*Buffer)->getBufferSize()))
        << Path;
    llvm::StringSet<> Original;
    collectSymbols(Proto.graph(), Original);

    onnx::ShapeInferenceOptions OnnxOpts(/*check_type=*/false,
                                         /*strict_mode=*/0,
                                         /*data_prop=*/true);
    std::unordered_map<std::string, onnx::TensorShapeProto> Generated;
    try {
      onnx::shape_inference::InferShapes(
          Proto, onnx::OpSchemaRegistry::Instance(), OnnxOpts, &Generated);
    } catch (const std::exception &) {
      ++OnnxThrew;
      continue;
    }

    Collected C;
    std::unique_ptr<Model> M = loadModel(Path, C.Diags);
    if (!M) {
      ++NotLoaded;
      continue;
    }
    (void)inferShapes(*M, C.Diags);
    // The dim algebra's ops must agree with ONNX wherever both know a
    // number.
    DimAnalysis DA(*M);
    DA.run();
    for (const std::string &Conflict : DA.getConflicts())
      Conflicts.push_back(Path.substr(strlen(kTestData) + 1) + ": " + Conflict);
    TypeComparer Cmp(Original);
    Agreement A;
    compareGraph(M->getGraph(), Proto.graph(), Cmp, A);
    Values += A.Values;
    Refined += A.Refined;
    DimsRefined += A.DimsRefined;
    if (!A.Differ)
      ++Agree;
    else
      Differences.push_back(Path.substr(strlen(kTestData) + 1) + ": " +
                            std::to_string(A.Differ) + " value(s), first " +
                            A.FirstDifference);
  }
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  std::string Report;
  for (const std::string &D : Differences)
    Report += "  " + D + "\n";
  std::printf("libonnx-testdata: %zu models, %zu agree on all %zu values "
              "compared (%zu Reshape/Slice results with a shape ONNX does "
              "not record, %zu with dims it leaves fresh), %zu differ, onnx "
              "threw on %zu, %zu not loaded "
              "(%.2f s)\n%s",
              Paths.size(), Agree, Values, Refined, DimsRefined,
              Differences.size(), OnnxThrew, NotLoaded, Seconds,
              Report.c_str());
  EXPECT_EQ(NotLoaded, 0u);
  EXPECT_TRUE(Differences.empty()) << Report;
  std::string ConflictReport;
  for (const std::string &C : Conflicts)
    ConflictReport += "  " + C + "\n";
  EXPECT_TRUE(Conflicts.empty()) << "dim algebra vs onnx:\n" << ConflictReport;
}

/// Soundness of the symbolic ops: every model of libonnx-testdata is loaded
/// twice, once as is and once with its inputs' dims replaced by symbols.
/// Each dim the algebra expresses in the symbolic copy, evaluated at the
/// original input dims, must equal what ONNX infers for the static model.
TEST(DimAnalysis, SymbolicDimsEvaluateToOnnxsStaticDims) {
  if (!llvm::sys::fs::is_directory(kTestData))
    GTEST_SKIP() << "libonnx-testdata is not installed";
  std::vector<std::string> Paths;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator Suite(kTestData, EC), End;
       Suite != End && !EC; Suite.increment(EC))
    for (llvm::sys::fs::directory_iterator Case(Suite->path(), EC), CEnd;
         Case != CEnd && !EC; Case.increment(EC))
      if (llvm::sys::fs::exists(Case->path() + "/model.onnx"))
        Paths.push_back(Case->path() + "/model.onnx");
  std::sort(Paths.begin(), Paths.end());

  size_t Checked = 0, Symbolic = 0;
  std::string Report;
  for (const std::string &Path : Paths) {
    Collected C;
    std::unique_ptr<Model> Static = loadModel(Path, C.Diags);
    std::unique_ptr<Model> Sym = loadModel(Path, C.Diags);
    ASSERT_TRUE(Static && Sym) << Path;
    (void)inferShapes(*Static, C.Diags);
    std::map<std::string, int64_t> Values;
    for (const std::unique_ptr<Value> &In : Sym->getGraph().getInputs()) {
      if (In->hasInitializer() || !In->getType().isTensor() ||
          !In->getType().hasShape())
        continue;
      std::vector<Dim> &Dims = In->getMutableType().getMutableDims();
      for (size_t K = 0; K < Dims.size(); ++K) {
        if (!Dims[K].isKnown())
          continue;
        std::string Name =
            "in_" + In->getName().str() + "_" + std::to_string(K);
        Values[Name] = Dims[K].getValue();
        Dims[K] = Dim::symbol(Name);
      }
    }
    ShapeInferenceOptions Opts;
    Opts.NameUnknownDims = true;
    (void)inferShapes(*Sym, C.Diags, Opts);
    DimAnalysis DA(*Sym);
    DA.run();
    auto Lookup = [&](llvm::StringRef S) -> std::optional<int64_t> {
      auto It = Values.find(S.str());
      if (It == Values.end())
        return std::nullopt;
      return It->second;
    };
    Graph &SG = Sym->getGraph();
    for (Node &N : SG.getNodes())
      for (unsigned I = 0; I < N.getNumResults(); ++I) {
        Value *V = N.getResult(I);
        const std::vector<DimExpr> *D = V ? DA.getDims(*V) : nullptr;
        Value *SV = V ? findValue(Static->getGraph(), V->getName()) : nullptr;
        if (!D || !SV || !SV->getType().hasShape() ||
            SV->getType().getRank() != D->size())
          continue;
        for (size_t K = 0; K < D->size(); ++K) {
          DimExpr E = DA.getBest((*D)[K]);
          std::optional<int64_t> Got = E.evaluate(Lookup);
          const Dim &Want = SV->getType().getDims()[K];
          if (!Got || !Want.isKnown())
            continue;
          ++Checked;
          if (!E.isConstant())
            ++Symbolic;
          if (*Got != Want.getValue())
            Report += "  " + Path.substr(strlen(kTestData) + 1) + ": '" +
                      V->getName().str() + "' dim " + std::to_string(K) +
                      " = " + E.str() + " = " + std::to_string(*Got) +
                      ", onnx " + std::to_string(Want.getValue()) + "\n";
        }
      }
  }
  std::printf("dim algebra: %zu dims checked against onnx, %zu of them "
              "symbolic\n",
              Checked, Symbolic);
  EXPECT_GT(Symbolic, 500u);
  EXPECT_TRUE(Report.empty()) << Report;
}

TEST(DimAnalysis, AgreesWithOnnxOnTheExporterMadeModels) {
  llvm::SmallString<256> Dir(__FILE__);
  llvm::sys::path::remove_filename(Dir);
  llvm::sys::path::append(Dir, "..", "models");
  std::error_code EC;
  size_t Models = 0;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    if (!llvm::StringRef(It->path()).endswith(".onnx"))
      continue;
    ++Models;
    Collected C;
    std::unique_ptr<Model> M = loadModel(It->path(), C.Diags);
    ASSERT_TRUE(M) << It->path() << "\n" << C.text();
    (void)inferShapes(*M, C.Diags);
    DimAnalysis DA(*M);
    DA.run();
    std::string Report;
    for (const std::string &Conflict : DA.getConflicts())
      Report += "  " + Conflict + "\n";
    EXPECT_TRUE(Report.empty()) << It->path() << ":\n" << Report;
  }
  if (!Models)
    GTEST_SKIP() << "no models in " << Dir.str().str();
}

//===----------------------------------------------------------------------===//
// Scaling (a measurement, not a check: run with
// --gtest_also_run_disabled_tests --gtest_filter='*Scaling*')
//===----------------------------------------------------------------------===//

/// A chain of \p Size nodes cycling through Add, Relu, Transpose, Mul,
/// Reshape and Sigmoid over a float[N,64,S] input, with constants for Add's
/// bias and Reshape's target shape.
static std::unique_ptr<Model> buildChain(size_t Size) {
  auto M = std::make_unique<Model>();
  M->getOpsetImports().push_back({"", 17});
  Graph &G = M->getGraph();
  M->reserveName("x");
  Value *X = G.addInput(
      "x", floatOf({Dim::symbol("N"), Dim::known(64), Dim::symbol("S")}));
  Value *Bias = G.addConstant(
      M->makeUniqueName("bias"),
      Tensor::fromFloats("bias", {64, 1}, std::vector<float>(64, 1.0f)));
  Value *Shape = G.addConstant(M->makeUniqueName("shape"),
                               Tensor::fromInt64s("shape", {3}, {0, 64, -1}));
  Value *Cur = X;
  for (size_t I = 0; I < Size; ++I) {
    std::string Name = M->makeUniqueName("v");
    Node *N = nullptr;
    switch (I % 6) {
    case 0:
      N = G.createNode("Add", "", "", {Cur, Bias}, {Name});
      break;
    case 1:
      N = G.createNode("Relu", "", "", {Cur}, {Name});
      break;
    case 2:
      N = G.createNode("Transpose", "", "", {Cur}, {Name});
      N->setAttr(Attribute::getInts("perm", {0, 2, 1}));
      break;
    case 3:
      N = G.createNode("Transpose", "", "", {Cur}, {Name});
      N->setAttr(Attribute::getInts("perm", {0, 2, 1}));
      break;
    case 4:
      N = G.createNode("Reshape", "", "", {Cur, Shape}, {Name});
      break;
    default:
      N = G.createNode("Sigmoid", "", "", {Cur}, {Name});
      break;
    }
    Cur = N->getResult(0);
  }
  G.addOutput(Cur);
  return M;
}

TEST(ShapeInference, DISABLED_Scaling) {
  // The first size warms up ONNX's schema registry.
  for (size_t Size : {1000, 10000, 100000, 10000}) {
    auto BuildStart = std::chrono::steady_clock::now();
    std::unique_ptr<Model> M = buildChain(Size);
    double BuildSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - BuildStart)
                              .count();
    Collected C;
    auto Start = std::chrono::steady_clock::now();
    ShapeInference SI(*M, C.Diags);
    ASSERT_TRUE(succeeded(SI.inferModel())) << C.text();
    double Seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    EXPECT_EQ(SI.getStats().NodesInferred, Size);
    std::printf("infer-shapes on a %zu-node chain: %.3f s (%.2f us/node; "
                "building it took %.3f s), output %s\n",
                Size, Seconds, Seconds * 1e6 / Size, BuildSeconds,
                M->getGraph().getOutput(0)->getType().str().c_str());
  }
}

//===----------------------------------------------------------------------===//
// The memo of node signatures
//===----------------------------------------------------------------------===//

namespace {

std::string printDims(llvm::ArrayRef<Dim> Dims) {
  std::string S;
  for (const Dim &D : Dims)
    S += (D.isKnown()    ? std::to_string(D.getValue())
          : D.isSymbol() ? D.getSymbol().str()
                         : std::string("?")) +
         ",";
  return S;
}

/// Everything an engine leaves behind: types, propagated data, facts,
/// stats and diagnostics, one line each.
std::string inferAndDump(llvm::StringRef Text, bool Memoize,
                         size_t *FromMemo = nullptr) {
  auto M = parse(Text);
  Collected C;
  ShapeInferenceOptions Opts;
  Opts.Memoize = Memoize;
  ShapeInference SI(*M, C.Diags, Opts);
  std::string S = succeeded(SI.inferModel()) ? "ok\n" : "failed\n";
  auto Dump = [&](const Value &V) {
    S += V.getName().str() + ": " + V.getType().str();
    if (std::optional<std::vector<Dim>> D = SI.getPropagatedData(V))
      S += " data " + printDims(*D);
    S += "\n";
  };
  for (const std::unique_ptr<Value> &V : M->getGraph().getInputs())
    Dump(*V);
  for (Node &N : M->getGraph().getNodes())
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I))
        Dump(*V);
  for (const DimFact &F : SI.getDimFacts())
    S += "fact " + F.V->getName().str() + " from " + F.From->getName().str() +
         " dim " + std::to_string(F.DimIndex) + ": " +
         printDims({F.Declared, F.Inferred}) + "\n";
  const ShapeInferenceStats &St = SI.getStats();
  if (FromMemo)
    *FromMemo = St.NodesMemoized;
  S += "stats " + std::to_string(St.NodesInferred) + " " +
       std::to_string(St.NodesWithoutSchema) + " " +
       std::to_string(St.NodesFailed) + " " + std::to_string(St.ValuesRefined) +
       " " + std::to_string(St.Contradictions) + "\n";
  return S + C.text();
}

} // namespace

TEST(ShapeInferenceMemo, RepeatedSignaturesGetWhatEachNodeWouldGet) {
  // Pairs of nodes of one signature up to symbol names ([N,8] and [M,8]),
  // reading the same or different constants; fresh dims (the -1 of
  // Reshape to [-1,3]), failures and contradictions per node.
  const char *Text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,8] A, float[M,8] B, float[8,4] W, float[N,3] E1,
       float[M,3] E2) => (float[N,2,2] RA2, float[M,2,2] RB2, float[M,3] RB3)
      <int64[3] S1 = {0, 2, 2}, int64[3] S2 = {0, 2, 2}> {
      A1 = MatMul(A, W)
      B1 = MatMul(B, W)
      SA = Shape(A1)
      SB = Shape(B1)
      C22 = Constant <value_ints = [0, 2, 2]> ()
      C41 = Constant <value_ints = [0, 4, 1]> ()
      C3 = Constant <value_ints = [-1, 3]> ()
      RA = Reshape(A1, C22)
      RB = Reshape(B1, C41)
      RA2 = Reshape(A1, C22)
      RB2 = Reshape(B1, C22)
      RA3 = Reshape(A1, C3)
      RB3 = Reshape(B1, C3)
      RS1 = Reshape(A1, S1)
      RS2 = Reshape(A1, S2)
      Zero = Constant <value_ints = [0]> ()
      GA = Gather <axis = 0> (SA, Zero)
      GB = Gather <axis = 0> (SB, Zero)
      One = Constant <value_ints = [-1]> ()
      TA = Concat <axis = 0> (GA, One)
      TB = Concat <axis = 0> (GB, One)
      FA = Reshape(A1, TA)
      FB = Reshape(B1, TB)
      SameN = Add(A1, A1)
      NandM = Add(A1, B1)
      BadA = MatMul(E1, W)
      BadB = MatMul(E2, W)
    })";
  size_t FromMemo = 0;
  std::string Memoized = inferAndDump(Text, /*Memoize=*/true, &FromMemo);
  EXPECT_EQ(Memoized, inferAndDump(Text, /*Memoize=*/false));
  // B1, SB, RA2, RB2, RB3, GB, TB and FB repeat a signature and its reads,
  // and so do RS1 and RS2 (initializers S1 and S2 hold C22's contents
  // under other names); not RB (another constant), NandM ([N,4]+[M,4] is
  // not [N,4]+[N,4]) nor BadB (failures are not remembered).
  EXPECT_EQ(FromMemo, 10u);
  // Spot checks: symbols mapped back, contents told apart.
  EXPECT_NE(Memoized.find("RA: float[N,2,2]\n"), std::string::npos) << Memoized;
  EXPECT_NE(Memoized.find("RB: float[M,4,1]\n"), std::string::npos) << Memoized;
  EXPECT_NE(Memoized.find("RB2: float[M,2,2]\n"), std::string::npos)
      << Memoized;
  EXPECT_NE(Memoized.find("SB: int64[2] data M,4,\n"), std::string::npos)
      << Memoized;
  EXPECT_NE(Memoized.find("FB: float[M,4]\n"), std::string::npos) << Memoized;
  EXPECT_NE(Memoized.find("RS2: float[N,2,2]\n"), std::string::npos)
      << Memoized;
  // Each node of a failing signature warns with its own name.
  EXPECT_NE(Memoized.find("BadA"), std::string::npos) << Memoized;
  EXPECT_NE(Memoized.find("BadB"), std::string::npos) << Memoized;
}
