//===- TextTest.cpp - ONNX text printer and parser units ------------------===//
//
// parse -> print -> parse gives the same model, for every construct the text
// syntax has; names that are not identifiers survive through the encoding;
// what ONNX 1.12 text cannot express is noted and still parses.
//
//===----------------------------------------------------------------------===//
#include "ExportProto.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Import/Import.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstring>
#include <google/protobuf/util/message_differencer.h>
#include <limits>
#include <onnx/onnx_pb.h>

using namespace onnxopt;

namespace {

/// Parses \p Text; diagnostics go to \p Errors.
std::unique_ptr<Model> parse(llvm::StringRef Text, std::string *Errors) {
  DiagnosticEngine Diags;
  Diags.setHandler([&](const Diagnostic &D) {
    llvm::raw_string_ostream OS(*Errors);
    Diags.print(OS, D);
  });
  return parseTextModel(Text, Diags);
}

std::string print(const Model &M) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printModel(M, OS);
  return OS.str();
}

/// Parses \p Text, prints it, parses the print and checks that both models
/// export to the same proto and that printing again gives the same text.
/// Returns the re-parsed model.
std::unique_ptr<Model> roundTrip(llvm::StringRef Text) {
  std::string Errors;
  std::unique_ptr<Model> First = parse(Text, &Errors);
  EXPECT_TRUE(First) << Errors;
  if (!First)
    return nullptr;
  std::string Printed = print(*First);
  std::unique_ptr<Model> Second = parse(Printed, &Errors);
  EXPECT_TRUE(Second) << Errors << "\n" << Printed;
  if (!Second)
    return nullptr;
  EXPECT_EQ(Printed, print(*Second));
  std::unique_ptr<onnx::ModelProto> A = exportModel(*First);
  std::unique_ptr<onnx::ModelProto> B = exportModel(*Second);
  std::string Diff;
  google::protobuf::util::MessageDifferencer D;
  D.ReportDifferencesToString(&Diff);
  EXPECT_TRUE(D.Compare(*A, *B)) << Diff << "\n" << Printed;
  return Second;
}

const Node &nodeAt(const Graph &G, unsigned I) {
  auto It = G.getNodes().begin();
  std::advance(It, I);
  return *It;
}

bool sameBits(float A, float B) { return std::memcmp(&A, &B, 4) == 0; }

} // namespace

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

TEST(Text, PrintsTheDocumentedLayout) {
  std::string Errors;
  auto M = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
flatten (float[N,64,7,7] X) => (float[N,3136] Y) <int64[2] S = {0, 3136}> {
  Y = Reshape <allowzero = 0> (X, S)
})",
                 &Errors);
  ASSERT_TRUE(M) << Errors;
  EXPECT_EQ(print(*M), R"(<
   ir_version: 8,
   opset_import: ["" : 17]
>
flatten (float[N,64,7,7] X) => (float[N,3136] Y)
   <int64[2] S = {0, 3136}>
{
   Y = Reshape <allowzero = 0> (X, S)
}
)");
}

TEST(Text, BareGraphGetsDefaultHeader) {
  std::string Errors;
  auto M = parse("g (float[2] X) => (float[2] Y) { Y = Relu (X) }", &Errors);
  ASSERT_TRUE(M) << Errors;
  EXPECT_EQ(M->getIrVersion(), 8);
  EXPECT_EQ(M->getOpsetVersion(""), 17);
  EXPECT_NE(print(*M).find("opset_import: [\"\" : 17]"), std::string::npos);
}

TEST(Text, Types) {
  auto M = roundTrip(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float S, float[] U, float[?,2] Q, int64[N,seq_len] I, bool B,
   uint8[1] U8, double[3] D, string[2] Str, float16[4] H) => (float Z) {
  Z = Identity (S)
})");
  ASSERT_TRUE(M);
  const Graph &G = M->getGraph();
  // `float` is a scalar (rank 0), `float[]` a tensor of unknown rank.
  EXPECT_TRUE(G.getInput(0)->getType().hasShape());
  EXPECT_EQ(G.getInput(0)->getType().getRank(), 0u);
  EXPECT_FALSE(G.getInput(1)->getType().hasShape());
  EXPECT_EQ(G.getInput(2)->getType().str(), "float[?,2]");
  EXPECT_EQ(G.getInput(3)->getType().str(), "int64[N,seq_len]");
  EXPECT_EQ(G.getInput(8)->getType().str(), "float16[4]");
}

//===----------------------------------------------------------------------===//
// Attributes and literals
//===----------------------------------------------------------------------===//

TEST(Text, Attributes) {
  auto M = roundTrip(R"(<ir_version: 8, opset_import: ["" : 17, "x" : 1]>
g (float[2] X) => (float[2] Y) {
  Y = x.Op <i = -3, f = 0.1, f2 = 2.0, f3 = 1e-05, s = "a b/c:d", is = [1, -2],
            fs = [1.0, 0.5], ss = ["p", "q"], t = float[2] {1.5, -2.0},
            t2 = int64 named {7}> (X)
})");
  ASSERT_TRUE(M);
  const Node &N = nodeAt(M->getGraph(), 0);
  EXPECT_EQ(N.getAttrInt("i", 0), -3);
  EXPECT_TRUE(sameBits(N.getAttrFloat("f", 0), 0.1f));
  EXPECT_TRUE(sameBits(N.getAttrFloat("f2", 0), 2.0f));
  EXPECT_EQ(N.getAttr("f2")->Kind, AttrKind::Float);
  EXPECT_TRUE(sameBits(N.getAttrFloat("f3", 0), 1e-05f));
  EXPECT_EQ(N.getAttrString("s"), "a b/c:d");
  EXPECT_EQ(*N.getAttrInts("is"), (std::vector<int64_t>{1, -2}));
  ASSERT_EQ(N.getAttr("fs")->Kind, AttrKind::Floats);
  EXPECT_EQ(N.getAttr("fs")->Floats, (std::vector<float>{1.0f, 0.5f}));
  EXPECT_EQ(N.getAttr("ss")->Strings, (std::vector<std::string>{"p", "q"}));
  const Tensor &T = N.getAttr("t")->Tensors[0];
  EXPECT_EQ(T.getDims(), std::vector<int64_t>{2});
  EXPECT_EQ(*T.toDoubles(), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(N.getAttr("t2")->Tensors[0].getName(), "named");
  EXPECT_TRUE(N.getAttr("t2")->Tensors[0].getDims().empty());
}

TEST(Text, FloatsRoundTripBitExactly) {
  const float Values[] = {0.1f,
                          1.0f / 3,
                          -0.0f,
                          16777217.0f,
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::lowest(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::epsilon(),
                          123456.789f,
                          1e-30f};
  Model M;
  Graph &G = M.getGraph();
  M.getOpsetImports().push_back({"", 17});
  Value *X = G.addInput("X", Type::tensor(1, std::vector<Dim>{}));
  Node *N = G.createNode("Op", "x", "", {X}, {"Y"});
  std::vector<float> Floats(std::begin(Values), std::end(Values));
  N->setAttr(Attribute::getFloats("fs", Floats));
  N->setAttr(Attribute::getTensor(
      "t", Tensor::fromFloats("", {int64_t(Floats.size())}, Floats)));
  G.addOutput(N->getResult(0));

  std::string Errors;
  auto Back = parse(print(M), &Errors);
  ASSERT_TRUE(Back) << Errors;
  const Node &B = nodeAt(Back->getGraph(), 0);
  ASSERT_EQ(B.getAttr("fs")->Floats.size(), Floats.size());
  std::optional<std::vector<double>> TensorValues =
      B.getAttr("t")->Tensors[0].toDoubles();
  ASSERT_TRUE(TensorValues);
  for (size_t I = 0; I < Floats.size(); ++I) {
    EXPECT_TRUE(sameBits(B.getAttr("fs")->Floats[I], Floats[I])) << I;
    EXPECT_TRUE(sameBits(float((*TensorValues)[I]), Floats[I])) << I;
  }
  // Shortest form that reads back, not 9 digits everywhere.
  EXPECT_NE(print(M).find("[0.1, 0.33333334, -0.0, 16777216.0, 3.4028235e+38"),
            std::string::npos)
      << print(M);
}

TEST(Text, TensorElementTypes) {
  auto M = roundTrip(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1] X) => (float[1] Y)
  <int8[2] a = {-128, 127}, uint8[2] b = {0, 255}, bool[2] c = {1, 0},
   int16[2] d = {-32768, 32767}, uint16[1] e = {65535},
   int32[2] f = {-2147483648, 2147483647},
   int64[2] g = {-9223372036854775808, 9223372036854775807},
   uint32[1] h = {4294967295}, uint64[1] i = {18446744073709551615},
   double[2] j = {0.1, -1e-300}, string[2] k = {"x y", ""}, float[0] l = {}> {
  Y = Identity (X)
})");
  ASSERT_TRUE(M);
  const Graph &G = M->getGraph();
  ASSERT_EQ(G.getConstants().size(), 12u);
  auto Ints = [&](unsigned I) {
    return *G.getConstants()[I]->getInitializer().toInt64s();
  };
  EXPECT_EQ(Ints(0), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(Ints(1), (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(Ints(2), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Ints(3), (std::vector<int64_t>{-32768, 32767}));
  EXPECT_EQ(Ints(6), (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  const auto &K = detail::getProto(G.getConstants()[10]->getInitializer());
  ASSERT_EQ(K.string_data_size(), 2);
  EXPECT_EQ(K.string_data(0), "x y");
  EXPECT_EQ(*G.getConstants()[9]->getInitializer().toDoubles(),
            (std::vector<double>{0.1, -1e-300}));
  EXPECT_EQ(G.getConstants()[11]->getInitializer().getNumElements(), 0);
}

TEST(Text, RawTensorDataPrintsLikeTypedData) {
  // Binary models mostly store raw little-endian bytes.
  struct Case {
    int32_t ElemType;
    std::string Bytes;
  };
  const Case Cases[] = {
      {3, std::string("\x80\x7f\x00", 3)},                      // int8
      {2, std::string("\x00\xff", 2)},                          // uint8
      {9, std::string("\x01\x00", 2)},                          // bool
      {5, std::string("\x00\x80\xff\x7f", 4)},                  // int16
      {4, std::string("\xff\xff", 2)},                          // uint16
      {6, std::string("\x00\x00\x00\x80", 4)},                  // int32
      {12, std::string("\xff\xff\xff\xff", 4)},                 // uint32
      {13, std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8)}, // uint64
      {7, std::string("\x00\x00\x00\x00\x00\x00\x00\x80", 8)},  // int64
      {1, std::string("\xcd\xcc\xcc\x3d", 4)},                  // float 0.1
      {11, std::string("\x9a\x99\x99\x99\x99\x99\xb9\x3f", 8)}, // double 0.1
  };
  Model M;
  M.getOpsetImports().push_back({"", 17});
  Graph &G = M.getGraph();
  Value *X = G.addInput("X", Type::tensor(1, std::vector<Dim>{}));
  for (size_t I = 0; I < std::size(Cases); ++I) {
    size_t Size = getElemTypeSize(Cases[I].ElemType);
    G.addConstant("c" + std::to_string(I),
                  Tensor::fromRaw("", Cases[I].ElemType,
                                  {int64_t(Cases[I].Bytes.size() / Size)},
                                  Cases[I].Bytes));
  }
  G.addOutput(X);

  std::string Errors;
  auto Back = parse(print(M), &Errors);
  ASSERT_TRUE(Back) << Errors << print(M);
  ASSERT_EQ(Back->getGraph().getConstants().size(), std::size(Cases));
  for (size_t I = 0; I < std::size(Cases); ++I)
    EXPECT_TRUE(
        Back->getGraph().getConstants()[I]->getInitializer().contentEquals(
            G.getConstants()[I]->getInitializer()))
        << I << "\n"
        << print(M);
  EXPECT_NE(print(M).find("int8[3] c0 = {-128, 127, 0}"), std::string::npos);
  EXPECT_NE(print(M).find("uint64[1] c7 = {18446744073709551615}"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

TEST(Text, InitializersAndValueInfos) {
  auto M = roundTrip(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N] X, float[2] W = {1.0, 2.0}) => (float[N] Y)
    <float[1] C = {3.0}, float[N] T> {
  T = Add (X, C)
  Y = Add (T, W)
})");
  ASSERT_TRUE(M);
  const Graph &G = M->getGraph();
  ASSERT_EQ(G.getNumInputs(), 2u);
  EXPECT_TRUE(G.getInput(1)->hasInitializer());
  EXPECT_EQ(G.getInput(1)->getType().str(), "float[2]");
  ASSERT_EQ(G.getConstants().size(), 1u);
  EXPECT_EQ(G.getConstants()[0]->getName(), "C");
  const Value *T = nodeAt(G, 0).getResult(0);
  EXPECT_TRUE(T->HadValueInfo);
  EXPECT_EQ(T->getType().str(), "float[N]");
  // The default value is printed among the initializers, in model order.
  std::string Text = print(*M);
  EXPECT_NE(Text.find("g (float[N] X, float[2] W) => (float[N] Y)\n"
                      "   <float[2] W = {1.0, 2.0},\n"
                      "    float[1] C = {3.0},\n"
                      "    float[N] T>\n"),
            std::string::npos)
      << Text;
}

TEST(Text, OmittedOperandsAndResults) {
  auto M = roundTrip(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X, float[2] R) => (float[2] Y) {
  Y, , Z = Op1 (X, , R, )
  __, W = Op2 (__, X)
})");
  ASSERT_TRUE(M);
  const Node &A = nodeAt(M->getGraph(), 0);
  ASSERT_EQ(A.getNumOperands(), 4u);
  EXPECT_EQ(A.getOperand(1), nullptr);
  EXPECT_EQ(A.getOperand(3), nullptr);
  ASSERT_EQ(A.getNumResults(), 3u);
  EXPECT_TRUE(!A.getResult(1) || A.getResult(1)->getName().empty());
  const Node &B = nodeAt(M->getGraph(), 1);
  ASSERT_EQ(B.getNumOperands(), 2u);
  EXPECT_EQ(B.getOperand(0), nullptr);
  EXPECT_TRUE(!B.getResult(0) || B.getResult(0)->getName().empty());
  std::string Text = print(*M);
  EXPECT_NE(Text.find("Y, , Z = Op1 (X, , R, )"), std::string::npos) << Text;
  EXPECT_NE(Text.find("__, W = Op2 (__, X)"), std::string::npos) << Text;
}

TEST(Text, Subgraphs) {
  auto M = roundTrip(R"(<ir_version: 8, opset_import: ["" : 17]>
g (bool C, float[N] X, int64 Trip) => (float[N] Y, float[N] L) {
  Y = If <then_branch = then_g () => (float[N] A) <float[1] k = {2.0}> {
        A = Mul (X, k)
      }, else_branch = else_g () => (float[N] B) {
        B = If <then_branch = inner () => (float[N] D) { D = Neg (X) },
                else_branch = inner2 () => (float[N] E) { E = Abs (X) }> (C)
      }> (C)
  L = Loop <body = body (int64 i, bool c, float[N] acc) => (bool c2, float[N] acc2) {
        c2 = Identity (c)
        acc2 = Add (acc, X)
      }> (Trip, C, X)
})");
  ASSERT_TRUE(M);
  const Node &If = nodeAt(M->getGraph(), 0);
  std::vector<Graph *> Subs = If.getSubgraphs();
  ASSERT_EQ(Subs.size(), 2u);
  EXPECT_EQ(Subs[0]->getName(), "then_g");
  EXPECT_EQ(Subs[0]->getConstants().size(), 1u);
  // The outer-scope use resolves to the main graph's input.
  EXPECT_EQ(nodeAt(*Subs[0], 0).getOperand(0), M->getGraph().getInput(1));
  EXPECT_EQ(nodeAt(*Subs[1], 0).getSubgraphs().size(), 2u);
  const Node &Loop = nodeAt(M->getGraph(), 1);
  ASSERT_EQ(Loop.getSubgraphs().size(), 1u);
  EXPECT_EQ(Loop.getSubgraphs()[0]->getNumInputs(), 3u);
}

TEST(Text, Domains) {
  auto M = roundTrip(
      R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1, "ai.onnx" : 17, "ai.onnx.ml" : 3]>
g (float[2] X) => (float[2] Y) {
  A = com.microsoft.Gelu (X)
  B = ai.onnx.Relu (A)
  C = ai.onnx.ml.Normalizer (B)
  Y = Identity (C)
})");
  ASSERT_TRUE(M);
  const Graph &G = M->getGraph();
  EXPECT_EQ(nodeAt(G, 0).getDomain(), "com.microsoft");
  EXPECT_EQ(nodeAt(G, 0).getOpType(), "Gelu");
  EXPECT_EQ(nodeAt(G, 1).getDomain(), "ai.onnx");
  EXPECT_EQ(nodeAt(G, 2).getDomain(), "ai.onnx.ml");
  EXPECT_EQ(nodeAt(G, 3).getDomain(), "");
  EXPECT_EQ(M->getOpsetVersion("com.microsoft"), 1);
  EXPECT_EQ(M->getOpsetImports().size(), 4u);
}

TEST(Text, ModelHeaderAndFunctions) {
  auto M = roundTrip(
      R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1],
  producer_name: "gen", producer_version: "1.0", domain: "my.models",
  model_version: 7, doc_string: "two
lines", metadata_props: ["a" : "1", "b" : "2"]>
g (float[2] X) => (float[2] Y) {
  Y = local.Scale <by = 2.0> (X)
}
<domain: "local", opset_import: ["" : 17], doc_string: "scales">
Scale <by> (x) => (y) {
  y = Mul <alpha: float = @by> (x, x)
})");
  ASSERT_TRUE(M);
  std::unique_ptr<onnx::ModelProto> P = exportModel(*M);
  EXPECT_EQ(P->producer_name(), "gen");
  EXPECT_EQ(P->producer_version(), "1.0");
  EXPECT_EQ(P->domain(), "my.models");
  EXPECT_EQ(P->model_version(), 7);
  EXPECT_EQ(P->doc_string(), "two\nlines");
  ASSERT_EQ(P->metadata_props_size(), 2);
  EXPECT_EQ(P->metadata_props(1).key(), "b");
  ASSERT_EQ(P->functions_size(), 1);
  const onnx::FunctionProto &F = P->functions(0);
  EXPECT_EQ(F.name(), "Scale");
  EXPECT_EQ(F.domain(), "local");
  EXPECT_EQ(F.doc_string(), "scales");
  ASSERT_EQ(F.attribute_size(), 1);
  ASSERT_EQ(F.node_size(), 1);
  EXPECT_EQ(F.node(0).attribute(0).ref_attr_name(), "by");
  EXPECT_EQ(F.node(0).attribute(0).type(), onnx::AttributeProto::FLOAT);
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

TEST(Text, NamesThatAreNotIdentifiersAreEncoded) {
  const char *const Names[] = {
      "input.1", "onnx::Conv_3", "0",       "/conv/Conv_output_0",
      "a:b",     "__init",       "a.b_x41", "float",
      "x y\"z",  "\xc3\xa9"};
  Model M;
  M.getOpsetImports().push_back({"", 17});
  Graph &G = M.getGraph();
  G.setName("torch-jit-export");
  Value *Prev = G.addInput(
      Names[0], Type::tensor(1, std::vector<Dim>{Dim::symbol("batch size"),
                                                 Dim::symbol("__s")}));
  for (size_t I = 1; I < std::size(Names); ++I)
    Prev = G.createNode("Identity", "", "", {Prev}, {Names[I]})->getResult(0);
  G.addOutput(Prev);

  std::string Text = print(M);
  for (const char *Spelled :
       {"__torch_x2Djit_x2Dexport (float[__batch_x20size,____s] __input_x2E1)",
        "__onnx_x3A_x3AConv_3 = Identity (__input_x2E1)", "__0 = Identity",
        "___x2Fconv_x2FConv_output_0 = Identity", "__a_x3Ab = Identity",
        "____init = Identity", "__a_x2Eb_x5Fx41 = Identity",
        "__float = Identity", "__x_x20y_x22z = Identity",
        "___xC3_xA9 = Identity"})
    EXPECT_NE(Text.find(Spelled), std::string::npos) << Spelled << "\n" << Text;

  std::string Errors;
  auto Back = parse(Text, &Errors);
  ASSERT_TRUE(Back) << Errors;
  const Graph &B = Back->getGraph();
  EXPECT_EQ(B.getName(), "torch-jit-export");
  EXPECT_EQ(B.getInput(0)->getName(), "input.1");
  EXPECT_EQ(B.getInput(0)->getType().getDims()[0].getSymbol(), "batch size");
  EXPECT_EQ(B.getInput(0)->getType().getDims()[1].getSymbol(), "__s");
  unsigned I = 1;
  for (const Node &N : B.getNodes())
    EXPECT_EQ(N.getResult(0)->getName(), Names[I++]);
}

TEST(Text, PlainIdentifiersAreNotEncoded) {
  auto M = roundTrip(R"(<ir_version: 8, opset_import: ["" : 17]>
main_graph (float[2] x_1, float[2] _private, float[2] unk__0) => (float[2] Y) {
  Y = Sum (x_1, _private, unk__0)
})");
  ASSERT_TRUE(M);
  EXPECT_EQ(M->getGraph().getInput(2)->getName(), "unk__0");
  std::string Text = print(*M);
  EXPECT_NE(Text.find("Y = Sum (x_1, _private, unk__0)"), std::string::npos)
      << Text;
}

//===----------------------------------------------------------------------===//
// What ONNX 1.12 text cannot express
//===----------------------------------------------------------------------===//

TEST(Text, UnexpressibleValuesAreNotedAndStillParse) {
  Model M;
  M.getOpsetImports().push_back({"", 17});
  Graph &G = M.getGraph();
  Value *X = G.addInput("X", Type::sequence(Type::tensor(1)));
  Node *N = G.createNode("Op", "x", "conv1", {X}, {"Y"});
  N->setAttr(Attribute::getInts("empty", {}));
  N->setAttr(Attribute::getFloat("inf", INFINITY));
  N->setAttr(Attribute::getString("quote", "say \"hi\""));
  N->setAttr(
      Attribute::getTensor("nan", Tensor::fromFloats("", {2}, {NAN, 1.0f})));
  N->setAttr(Attribute::getTensor(
      "half", Tensor::fromRaw("", 10, {1}, llvm::StringRef("\x00\x3c", 2))));
  G.addOutput(N->getResult(0));

  std::string Text = print(M);
  for (const char *Note :
       {"# note: the type seq(float[]) of 'X' has no ONNX 1.12 text form",
        "# note: attribute 'empty' (an empty list of ints) has no ONNX 1.12 "
        "text form",
        "# note: float value inf has no ONNX 1.12 text form and is "
        "approximated",
        "# note: a string containing '\"' is printed with ' in its place",
        "# note: float value nan has no ONNX 1.12 text form",
        "# note: the data of a float16 tensor has no ONNX 1.12 text form",
        "# note: no ONNX 1.12 text form, not printed: node names (1)"})
    EXPECT_NE(Text.find(Note), std::string::npos) << Note << "\n" << Text;

  std::string Errors;
  auto Back = parse(Text, &Errors);
  ASSERT_TRUE(Back) << Errors << "\n" << Text;
  const Node &B = nodeAt(Back->getGraph(), 0);
  EXPECT_FALSE(B.hasAttr("empty"));
  EXPECT_EQ(B.getAttrFloat("inf", 0), std::numeric_limits<float>::max());
  EXPECT_EQ(B.getAttrString("quote"), "say 'hi'");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(Text, ParseErrorsHaveLineColumnAndSource) {
  std::string Errors;
  EXPECT_FALSE(parse("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                     "g (float[2] X) => (float[2] Y) {\n"
                     "  Y = Relu X\n"
                     "}\n",
                     &Errors));
  EXPECT_EQ(Errors, "error: cannot parse ONNX text: line 3, column 12: "
                    "expected '('\n"
                    "    Y = Relu X\n"
                    "             ^\n");
}

TEST(Text, LiteralsOutOfRangeAreErrors) {
  std::string Errors;
  EXPECT_FALSE(parse("g (float[2] X) => (float[2] Y) {\n"
                     "  Y = LeakyRelu <alpha = 1e39> (X)\n"
                     "}\n",
                     &Errors));
  EXPECT_NE(Errors.find("error: cannot parse ONNX text: line 2, column 26: "
                        "number out of range"),
            std::string::npos)
      << Errors;
}

TEST(Text, EmptyInputIsAnError) {
  std::string Errors;
  EXPECT_FALSE(parse("# only a comment\n\n", &Errors));
  EXPECT_EQ(Errors, "error: cannot parse ONNX text: the input is empty\n");
}

TEST(Text, UndefinedValuesAreReportedByTheImporter) {
  std::string Errors;
  EXPECT_FALSE(
      parse("g (float[2] X) => (float[2] Y) { Y = Add (X, Nope) }", &Errors));
  EXPECT_NE(Errors.find("Nope"), std::string::npos) << Errors;
}
