//===- ConstantEvalTest.cpp - Constant evaluator units --------------------===//
//
// Each test parses a small model in ONNX text and evaluates its last node
// with the constants of its operands (initializers and Constant nodes).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Import/Import.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Pass/PatternDriver.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <onnx/onnx_pb.h>

using namespace onnxopt;

namespace {

constexpr int32_t kFloat = 1, kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10;

struct Evaluated {
  std::unique_ptr<Model> M;
  std::optional<std::vector<Tensor>> Results;
  std::string Why;

  bool ok() const { return Results.has_value(); }
  const Tensor &result(unsigned I = 0) const { return (*Results)[I]; }
  std::vector<int64_t> ints(unsigned I = 0) const {
    return result(I).toInt64s().value_or(std::vector<int64_t>{-999});
  }
  std::vector<double> reals(unsigned I = 0) const {
    return result(I).toDoubles().value_or(std::vector<double>{-999});
  }
  std::vector<int64_t> dims(unsigned I = 0) const {
    return result(I).getDims();
  }
};

/// Parses \p Body as the nodes of a graph at \p Opset (inputs and
/// initializers in \p Signature) and evaluates its last node.
Evaluated evalLast(llvm::StringRef Signature, llvm::StringRef Body,
                   int64_t Opset = 17, uint64_t Limit = 1 << 20) {
  Evaluated E;
  std::string Text =
      "<ir_version: 8, opset_import: [\"\" : " + std::to_string(Opset) +
      "]>\n" + Signature.str() + " {\n" + Body.str() + "\n}\n";
  DiagnosticEngine Diags;
  E.M = parseTextModel(Text, Diags);
  EXPECT_TRUE(E.M) << Text;
  if (!E.M)
    return E;
  Node &Last = E.M->getGraph().getNodes().back();
  std::vector<Tensor> Operands;
  for (Value *V : Last.getOperands())
    Operands.push_back(V ? getConstantValue(*V) : Tensor());
  ConstantEvalOptions Opts;
  Opts.MaxResultBytes = Limit;
  E.Results = evaluateNode(Last, Operands, Opset, Opts, E.Why);
  return E;
}

using I64 = std::vector<int64_t>;
using F64 = std::vector<double>;

TEST(ConstantEval, ShapeOfStaticAndPartialTypes) {
  Evaluated E = evalLast("g (float[2,3,5] X) => (int64[3] Y)", "Y = Shape (X)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{2, 3, 5}));
  EXPECT_EQ(E.dims(), (I64{3}));

  E = evalLast("g (float[N,3,5] X) => (int64[3] Y)", "Y = Shape (X)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "dim 0 of the input is not known");

  // Opset 15: only the dims in [start, end) need to be known.
  E = evalLast("g (float[N,3,5] X) => (int64[2] Y)",
               "Y = Shape <start = 1> (X)", 15);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{3, 5}));
  E = evalLast("g (float[N,3,5] X) => (int64[1] Y)",
               "Y = Shape <start = -2, end = -1> (X)", 15);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{3}));
}

TEST(ConstantEval, Size) {
  Evaluated E = evalLast("g (float[2,3,5] X) => (int64 Y)", "Y = Size (X)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{30}));
  EXPECT_TRUE(E.dims().empty());
}

TEST(ConstantEval, GatherScalarAndNegativeIndices) {
  const char *Sig = "g () => (int64 Y) <int64[4] S = {7, 8, 9, 10}, "
                    "int64 I = {-1}, int64[2] J = {0, -2}>";
  Evaluated E = evalLast(Sig, "Y = Gather <axis = 0> (S, I)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{10}));
  EXPECT_TRUE(E.dims().empty());

  E = evalLast(Sig, "Y = Gather (S, J)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{7, 9}));

  E = evalLast("g () => (int64[2,2] Y) <int64[2,3] D = {1, 2, 3, 4, 5, 6}, "
               "int32[2] K = {2, 0}>",
               "Y = Gather <axis = 1> (D, K)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{3, 1, 6, 4}));
  EXPECT_EQ(E.dims(), (I64{2, 2}));

  E = evalLast("g () => (int64 Y) <int64[2] S = {1, 2}, int64 I = {2}>",
               "Y = Gather (S, I)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "index 2 is out of range for dim 2");
}

TEST(ConstantEval, SliceWithAttributesBeforeOpset10) {
  Evaluated E = evalLast("g () => (int64[2] Y) <int64[4] S = {1, 2, 3, 4}>",
                         "Y = Slice <starts = [1], ends = [1000]> (S)", 9);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{2, 3, 4}));
}

TEST(ConstantEval, SliceWithInputs) {
  const char *Sig = "g () => (int64[2] Y) <int64[5] S = {0, 1, 2, 3, 4}, "
                    "int64[1] B = {-1}, int64[1] E = {-9223372036854775807}, "
                    "int64[1] A = {0}, int64[1] T = {-2}, "
                    "int64[1] B2 = {2}, int64[1] E2 = {9223372036854775807}>";
  Evaluated E = evalLast(Sig, "Y = Slice (S, B, E, A, T)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{4, 2, 0}));
  E = evalLast(Sig, "Y = Slice (S, B2, E2)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{2, 3, 4}));

  // Two axes of a matrix, the second backwards.
  E = evalLast("g () => (int64[1,2] Y) <int64[2,3] D = {1, 2, 3, 4, 5, 6}, "
               "int64[2] B = {1, 2}, int64[2] E = {2, 0}, "
               "int64[2] A = {0, -1}, int64[2] T = {1, -1}>",
               "Y = Slice (D, B, E, A, T)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{6, 5}));
  EXPECT_EQ(E.dims(), (I64{1, 2}));
}

TEST(ConstantEval, ConcatAxes) {
  Evaluated E = evalLast("g () => (int64[2,3] Y) <int64[2,1] A = {1, 2}, "
                         "int64[2,2] B = {3, 4, 5, 6}>",
                         "Y = Concat <axis = -1> (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(E.dims(), (I64{2, 3}));

  E = evalLast("g () => (int64[2,3] Y) <int64[2,1] A = {1, 2}, "
               "int64[1,1] B = {3}>",
               "Y = Concat <axis = 1> (A, B)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "operands differ in dim 0");
}

TEST(ConstantEval, UnsqueezeAndSqueezeAcrossOpsets) {
  const char *Sig = "g () => (int64[1] Y) <int64 S = {5}, int64[1] Z = {0}, "
                    "int64[1,3,1] T = {1, 2, 3}>";
  Evaluated E = evalLast(Sig, "Y = Unsqueeze <axes = [0]> (S)", 11);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{1}));
  E = evalLast(Sig, "Y = Unsqueeze (S, Z)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{1}));
  EXPECT_EQ(E.ints(), (I64{5}));
  // At opset 13 the attribute is gone: axes must be an input.
  E = evalLast(Sig, "Y = Unsqueeze <axes = [0]> (S)", 13);
  EXPECT_FALSE(E.ok());

  E = evalLast(Sig, "Y = Squeeze (T)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{3}));
  E = evalLast(Sig, "Y = Squeeze <axes = [-1]> (T)", 11);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{1, 3}));
  E = evalLast(Sig, "Y = Squeeze (T, Z)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{3, 1}));
  E = evalLast("g () => (int64[1] Y) <int64[2] T = {1, 2}, int64[1] Z = {0}>",
               "Y = Squeeze (T, Z)", 13);
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "cannot squeeze dim 0 of size 2");
}

TEST(ConstantEval, Reshape) {
  const char *Sig = "g () => (int64[3,2] Y) <int64[2,3] D = {1, 2, 3, 4, 5, 6},"
                    " int64[2] S = {-1, 2}, int64[2] Z = {0, -1},"
                    " int64[3] W = {0, 3, 2}>";
  Evaluated E = evalLast(Sig, "Y = Reshape (D, S)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{3, 2}));
  EXPECT_EQ(E.ints(), (I64{1, 2, 3, 4, 5, 6}));
  E = evalLast(Sig, "Y = Reshape (D, Z)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{2, 3}));
  // allowzero: 0 is a real zero, and 6 elements do not fit [0,3,2].
  E = evalLast(Sig, "Y = Reshape <allowzero = 1> (D, W)", 14);
  EXPECT_FALSE(E.ok());
  E = evalLast(Sig, "Y = Reshape <shape = [3, -1]> (D)", 4);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{3, 2}));
}

TEST(ConstantEval, FlattenAndTranspose) {
  const char *Sig =
      "g () => (int64[3,2] Y) <int64[2,3,1] D = {1, 2, 3, 4, 5, 6}>";
  Evaluated E = evalLast(Sig, "Y = Flatten <axis = 0> (D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{1, 6}));
  E = evalLast(Sig, "Y = Transpose <perm = [1, 0, 2]> (D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{3, 2, 1}));
  EXPECT_EQ(E.ints(), (I64{1, 4, 2, 5, 3, 6}));
  E = evalLast(Sig, "Y = Transpose (D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{1, 3, 2}));
  EXPECT_EQ(E.ints(), (I64{1, 4, 2, 5, 3, 6}));
}

TEST(ConstantEval, BroadcastingArithmetic) {
  Evaluated E = evalLast("g () => (int64[2,3] Y) <int64[2,1] A = {10, 20}, "
                         "int64[3] B = {1, 2, 3}>",
                         "Y = Add (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{2, 3}));
  EXPECT_EQ(E.ints(), (I64{11, 12, 13, 21, 22, 23}));

  E = evalLast("g () => (int32[1] Y) <int32[1] A = {2147483647}, "
               "int32[1] B = {1}>",
               "Y = Add (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.result().getElemType(), kInt32);
  EXPECT_EQ(E.ints(), (I64{-2147483648}));

  const char *Div = "g () => (int64[2] Y) <int64[2] A = {7, -7}, "
                    "int64 B = {2}, int64 Z = {0}, int64 M = {-3}>";
  E = evalLast(Div, "Y = Div (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{3, -3}));
  E = evalLast(Div, "Y = Div (A, Z)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "integer division by zero");
  E = evalLast(Div, "Y = Mod (A, M)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{-2, -1}));
  E = evalLast(Div, "Y = Mod <fmod = 1> (A, M)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{1, -1}));

  E = evalLast("g () => (float[2] Y) <float[2] A = {1.5, -2.0}, "
               "float B = {0.5}>",
               "Y = Mul (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.result().getElemType(), kFloat);
  EXPECT_EQ(E.reals(), (F64{0.75, -1.0}));

  E = evalLast("g () => (int64[2] Y) <int64[2] A = {1, 2}, float B = {1.0}>",
               "Y = Add (A, B)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "operands differ in element type");
}

TEST(ConstantEval, LegacyBroadcastBeforeOpset7) {
  const char *Sig =
      "g () => (int64[2,3] Y) <int64[2,3] A = {1, 2, 3, 4, 5, 6}, "
      "int64[2] B = {10, 20}, int64[3] C = {1, 1, 1}>";
  Evaluated E = evalLast(Sig, "Y = Add <broadcast = 1, axis = 0> (A, B)", 6);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{11, 12, 13, 24, 25, 26}));
  E = evalLast(Sig, "Y = Sub <broadcast = 1> (A, C)", 6);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{0, 1, 2, 3, 4, 5}));
  E = evalLast(Sig, "Y = Sub (A, C)", 6);
  EXPECT_FALSE(E.ok());
}

TEST(ConstantEval, ComparisonLogicAndWhere) {
  const char *Sig = "g () => (bool[3] Y) <int64[3] A = {1, 5, 3}, "
                    "int64 B = {3}, bool[3] C = {1, 0, 1}, "
                    "int64[3] X = {7, 8, 9}>";
  Evaluated E = evalLast(Sig, "Y = Less (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.result().getElemType(), kBool);
  EXPECT_EQ(E.ints(), (I64{1, 0, 0}));
  E = evalLast(Sig, "Y = Equal (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{0, 0, 1}));
  E = evalLast(Sig, "Y = Not (C)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{0, 1, 0}));
  E = evalLast(Sig, "Y = Where (C, X, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{7, 3, 9}));
  E = evalLast(Sig, "Y = Not (A)");
  EXPECT_FALSE(E.ok());
}

TEST(ConstantEval, VariadicMinMaxSum) {
  const char *Sig = "g () => (int64[3] Y) <int64[3] A = {1, 5, 3}, "
                    "int64 B = {3}, int64[1] C = {4}>";
  Evaluated E = evalLast(Sig, "Y = Max (A, B, C)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{4, 5, 4}));
  E = evalLast(Sig, "Y = Min (A, B)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{1, 3, 3}));
  E = evalLast(Sig, "Y = Sum (A, B, C)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{8, 12, 10}));
}

TEST(ConstantEval, CastRoundsAndRefuses) {
  const char *Sig = "g () => (int64[3] Y) <float[3] A = {2.7, -2.7, 0.0}, "
                    "float[1] Big = {1e20}, int64[2] I = {3, -1}, "
                    "float[1] H = {1.0009765625}>";
  Evaluated E = evalLast(Sig, "Y = Cast <to = 7> (A)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.result().getElemType(), kInt64);
  EXPECT_EQ(E.ints(), (I64{2, -2, 0}));
  E = evalLast(Sig, "Y = Cast <to = 9> (A)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{1, 1, 0}));
  E = evalLast(Sig, "Y = Cast <to = 6> (Big)");
  EXPECT_FALSE(E.ok());
  E = evalLast(Sig, "Y = Cast <to = 2> (I)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{3, 255}));
  // Cast-1 names the type with a string.
  E = evalLast(Sig, "Y = Cast <to = \"FLOAT\"> (I)", 1);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.result().getElemType(), kFloat);
  EXPECT_EQ(E.reals(), (F64{3.0, -1.0}));
  // 1 + 2^-10 is exact in half precision; 1 + 2^-11 rounds to even (1.0).
  E = evalLast(Sig, "Y = Cast <to = 10> (H)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.result().getElemType(), kFloat16);
  EXPECT_EQ(E.reals(), (F64{1.0009765625}));
  E = evalLast("g () => (float16[1] Y) <float[1] H = {1.00048828125}>",
               "Y = Cast <to = 10> (H)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{1.0}));
}

TEST(ConstantEval, Range) {
  Evaluated E = evalLast("g () => (int64[3] Y) <int64 S = {10}, int64 L = {3}, "
                         "int64 D = {-3}>",
                         "Y = Range (S, L, D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{10, 7, 4}));
  E = evalLast("g () => (float[3] Y) <float S = {0.0}, float L = {1.0}, "
               "float D = {0.25}>",
               "Y = Range (S, L, D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{0.0, 0.25, 0.5, 0.75}));
  E = evalLast("g () => (int64[3] Y) <int64 S = {0}, int64 L = {5}, "
               "int64 D = {-1}>",
               "Y = Range (S, L, D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{0}));
}

TEST(ConstantEval, ConstantOfShapeExpandTile) {
  Evaluated E = evalLast("g () => (int32[2,2] Y) <int64[2] S = {2, 2}>",
                         "Y = ConstantOfShape <value = int32[1] {7}> (S)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.result().getElemType(), kInt32);
  EXPECT_EQ(E.ints(), (I64{7, 7, 7, 7}));
  E = evalLast("g () => (float[2] Y) <int64[1] S = {2}>",
               "Y = ConstantOfShape (S)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{0.0, 0.0}));

  E = evalLast("g () => (int64[2,3] Y) <int64[2,1] A = {1, 2}, "
               "int64[2] S = {1, 3}>",
               "Y = Expand (A, S)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{2, 3}));
  EXPECT_EQ(E.ints(), (I64{1, 1, 1, 2, 2, 2}));

  E = evalLast("g () => (int64[2,4] Y) <int64[1,2] A = {1, 2}, "
               "int64[2] R = {2, 2}>",
               "Y = Tile (A, R)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{2, 4}));
  EXPECT_EQ(E.ints(), (I64{1, 2, 1, 2, 1, 2, 1, 2}));
  // Tile-1: (input, tiles, axis).
  E = evalLast("g () => (int64[3] Y) <int64[1,2] A = {1, 2}, int64 T = {3}, "
               "int64 X = {0}>",
               "Y = Tile (A, T, X)", 5);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{3, 2}));
}

TEST(ConstantEval, SizeBudget) {
  // 1024 floats are 4096 bytes: over a 4000-byte budget.
  const char *Sig = "g () => (float[1024] Y) <int64[1] S = {1024}, "
                    "int64[1] T = {1000}>";
  Evaluated E = evalLast(Sig, "Y = ConstantOfShape (S)", 17, 4000);
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why,
            "result of 1024 x 4 bytes exceeds the size limit of 4000 bytes");
  E = evalLast(Sig, "Y = ConstantOfShape (S)", 17, 4096);
  EXPECT_TRUE(E.ok()) << E.Why;
  E = evalLast(Sig, "Y = ConstantOfShape (T)", 17, 4000);
  EXPECT_TRUE(E.ok()) << E.Why;
  // A Constant node only moves its tensor: no budget.
  E = evalLast("g () => (int64[4] Y)",
               "Y = Constant <value = int64[4] {1, 2, 3, 4}> ()", 17, 8);
  EXPECT_TRUE(E.ok()) << E.Why;
}

TEST(ConstantEval, Reductions) {
  const char *Sig = "g () => (int64[2] Y) <int64[2,3] D = {1, 2, 3, 4, 5, 6}, "
                    "int64[1] A = {1}>";
  Evaluated E = evalLast(Sig, "Y = ReduceProd <axes = [1], keepdims = 0> (D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{2}));
  EXPECT_EQ(E.ints(), (I64{6, 120}));
  E = evalLast(Sig, "Y = ReduceProd (D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{1, 1}));
  EXPECT_EQ(E.ints(), (I64{720}));
  E = evalLast(Sig, "Y = ReduceSum <keepdims = 0> (D, A)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{6, 15}));
  E = evalLast(Sig, "Y = ReduceSum <axes = [0]> (D)", 11);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{1, 3}));
  EXPECT_EQ(E.ints(), (I64{5, 7, 9}));
  E = evalLast(Sig, "Y = ReduceSum <noop_with_empty_axes = 1> (D)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{2, 3}));
  E = evalLast(Sig, "Y = ReduceMax <axes = [0, 1], keepdims = 0> (D)");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{6}));
}

TEST(ConstantEval, SplitOutputs) {
  Evaluated E = evalLast("g () => (int64[2] Y, int64[3] Z) "
                         "<int64[5] D = {1, 2, 3, 4, 5}, int64[2] S = {2, 3}>",
                         "Y, Z = Split <axis = 0> (D, S)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(0), (I64{1, 2}));
  EXPECT_EQ(E.ints(1), (I64{3, 4, 5}));
  E = evalLast("g () => (int64[2] Y, int64[2] Z) <int64[2,2] D = {1, 2, 3, 4}>",
               "Y, Z = Split <axis = 1> (D)", 11);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(0), (I64{1, 3}));
  EXPECT_EQ(E.ints(1), (I64{2, 4}));
}

TEST(ConstantEval, Split18NumOutputs) {
  // ceil(5 / 3) = 2: chunks 2, 2, 1.
  Evaluated E = evalLast("g () => (Y, Z, W) <int64[5] D = {1, 2, 3, 4, 5}>",
                         "Y, Z, W = Split <axis = 0, num_outputs = 3> (D)", 18);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(0), (I64{1, 2}));
  EXPECT_EQ(E.ints(1), (I64{3, 4}));
  EXPECT_EQ(E.ints(2), (I64{5}));
  // 4 into 3 would leave an empty last chunk.
  E = evalLast("g () => (Y, Z, W) <int64[4] D = {1, 2, 3, 4}>",
               "Y, Z, W = Split <axis = 0, num_outputs = 3> (D)", 18);
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "dim 4 cannot be split into 3 parts");
  E = evalLast("g () => (Y, Z) <int64[4] D = {1, 2, 3, 4}>",
               "Y, Z = Split <axis = 0, num_outputs = 3> (D)", 18);
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "num_outputs is 3 but the node has 2 results");
}

TEST(ConstantEval, Reduce18AxesInputAndShape15StartEnd) {
  Evaluated E = evalLast("g () => (Y) <int64[2,3] D = {1, 2, 3, 4, 5, 6}, "
                         "int64[1] A = {1}>",
                         "Y = ReduceMax <keepdims = 0> (D, A)", 18);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{3, 6}));
  E = evalLast("g (float[2,3,4,5] X) => (Y)",
               "Y = Shape <start = 1, end = -1> (X)", 21);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{3, 4}));
}

TEST(ConstantEval, RefusalsSayWhy) {
  Evaluated E = evalLast("g (int64[2] X) => (int64[2] Y) <int64[2] C = {1, 2}>",
                         "Y = Add (X, C)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "operand 0 ('X') is not a constant");
  E = evalLast("g () => (float[2] Y) <float[2] C = {1.0, 2.0}>",
               "Y = Relu (C)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "op Relu is not supported");
  E = evalLast("g () => (float[2] Y) <float[2] C = {1.0, 2.0}>",
               "Y = Mod (C, C)");
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "Mod of floating types requires fmod=1");
}

TEST(ConstantEval, ConstantNodesAndDefaults) {
  Evaluated E =
      evalLast("g () => (int64[2] Y)", "Y = Constant <value_ints = [4, 5]> ()");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{4, 5}));
  E = evalLast("g () => (float Y)", "Y = Constant <value_float = 2.5> ()");
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{2.5}));
  EXPECT_TRUE(E.dims().empty());

  // An initializer that is also a graph input is a constant for shape
  // reasoning, a default (not foldable) for value rewrites.
  DiagnosticEngine Diags;
  std::unique_ptr<Model> M = parseTextModel(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (int64[1] D) => (int64[1] Y) <int64[1] D = {1}, int64[1] C = {2}> {\n"
      "  Y = Add (D, C)\n}\n",
      Diags);
  ASSERT_TRUE(M);
  Node &Add = M->getGraph().getNodes().front();
  EXPECT_FALSE(getConstantValue(*Add.getOperand(0)).isNull());
  EXPECT_TRUE(getFoldableConstantValue(*Add.getOperand(0)).isNull());
  EXPECT_FALSE(getFoldableConstantValue(*Add.getOperand(1)).isNull());
}

TEST(ConstantEval, NondeterministicOps) {
  DiagnosticEngine Diags;
  std::unique_ptr<Model> M =
      parseTextModel("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                     "g (float[2] X) => (float[2] Y) {\n"
                     "  R = RandomUniformLike (X)\n  Y = Dropout (R)\n}\n",
                     Diags);
  ASSERT_TRUE(M);
  for (Node &N : M->getGraph().getNodes())
    EXPECT_TRUE(isNondeterministic(N)) << N.getOpType().str();
  EXPECT_FALSE(isEvaluableOp("RandomUniformLike"));
  EXPECT_TRUE(isEvaluableOp("Gather"));
}

//===----------------------------------------------------------------------===//
// Agreement with ONNX's reference outputs
//===----------------------------------------------------------------------===//

/// Reads a serialized TensorProto; a null Tensor on failure. The test data
/// stores bfloat16 tensors as uint16 (numpy has no bfloat16): \p ElemType,
/// the declared type, relabels them.
Tensor readTensorFile(const std::string &Path, int32_t ElemType) {
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  if (!Buf)
    return Tensor();
  onnx::TensorProto P;
  if (!P.ParseFromArray((*Buf)->getBufferStart(), (*Buf)->getBufferSize()))
    return Tensor();
  if (ElemType == onnx::TensorProto::BFLOAT16 &&
      P.data_type() == onnx::TensorProto::UINT16) {
    Tensor U = detail::tensorWrappingProto(std::move(P));
    std::string Storage;
    std::optional<llvm::StringRef> Bytes = U.getRawBytes(Storage);
    if (!Bytes)
      return Tensor();
    return Tensor::fromRaw(U.getName(), ElemType, U.getDims(), *Bytes);
  }
  return detail::tensorWrappingProto(std::move(P));
}

/// Compares a computed tensor with the expected one: same type and dims,
/// integers exactly, floating values within a few ulps (NaN equals NaN).
std::string compareTensors(const Tensor &Got, const Tensor &Want) {
  if (Got.getElemType() != Want.getElemType())
    return "element type " + std::to_string(Got.getElemType()) + " vs " +
           std::to_string(Want.getElemType());
  if (Got.getDims() != Want.getDims())
    return "dims differ";
  if (auto A = Got.toInt64s()) {
    if (*A != *Want.toInt64s())
      return "integer values differ";
    return "";
  }
  auto A = Got.toDoubles(), B = Want.toDoubles();
  if (!A || !B || A->size() != B->size())
    return "cannot read values";
  for (size_t I = 0; I < A->size(); ++I) {
    double X = (*A)[I], Y = (*B)[I];
    if (std::isnan(X) && std::isnan(Y))
      continue;
    if (X == Y)
      continue;
    if (std::fabs(X - Y) > 1e-6 * std::max(std::fabs(X), std::fabs(Y)))
      return "value " + std::to_string(I) + ": " + std::to_string(X) + " vs " +
             std::to_string(Y);
  }
  return "";
}

/// Every single-node model of Debian's ONNX node tests whose op the
/// evaluator knows: evaluating the node on the test's inputs must give the
/// test's outputs, or refuse (never a wrong answer).
TEST(ConstantEval, AgreesWithOnnxNodeTests) {
  const std::string Root = "/usr/share/libonnx-testdata/data/node";
  if (!llvm::sys::fs::is_directory(Root))
    GTEST_SKIP() << Root << " is not installed";
  std::vector<std::string> Dirs;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Root, EC), End; It != End && !EC;
       It.increment(EC))
    Dirs.push_back(It->path());
  std::sort(Dirs.begin(), Dirs.end());

  unsigned Checked = 0, Refused = 0;
  std::vector<std::string> Wrong;
  for (const std::string &Dir : Dirs) {
    DiagnosticEngine Diags;
    Diags.setHandler([](const Diagnostic &) {});
    std::unique_ptr<Model> M = loadModel(Dir + "/model.onnx", Diags);
    if (!M || M->getGraph().getNumNodes() != 1)
      continue;
    Node &N = M->getGraph().getNodes().front();
    if (!N.isOnnxDomain() || !isEvaluableOp(N.getOpType()))
      continue;
    Graph &G = M->getGraph();
    // Sequence and optional inputs are not tensors: nothing to evaluate.
    bool AllTensors = true;
    for (unsigned I = 0; I < G.getNumInputs(); ++I)
      AllTensors &= G.getInput(I)->getType().isTensor();
    for (unsigned I = 0; I < G.getNumOutputs(); ++I)
      AllTensors &= G.getOutput(I)->getType().isTensor();
    if (!AllTensors)
      continue;
    for (unsigned Set = 0;; ++Set) {
      std::string SetDir = Dir + "/test_data_set_" + std::to_string(Set);
      if (!llvm::sys::fs::is_directory(SetDir))
        break;
      std::vector<Tensor> Operands;
      for (Value *V : N.getOperands()) {
        Tensor T;
        for (unsigned I = 0; V && I < G.getNumInputs(); ++I)
          if (G.getInput(I) == V)
            T = readTensorFile(SetDir + "/input_" + std::to_string(I) + ".pb",
                               V->getType().getElemType());
        if (V && T.isNull())
          T = getConstantValue(*V);
        Operands.push_back(T);
      }
      ConstantEvalOptions Opts;
      Opts.MaxResultBytes = 0;
      std::string Why;
      std::optional<std::vector<Tensor>> Results =
          evaluateNode(N, Operands, M->getOpsetVersion(""), Opts, Why);
      std::string Name =
          llvm::sys::path::filename(Dir).str() + "/" + std::to_string(Set);
      if (!Results) {
        ++Refused; // strings, uint64 Min/Max/Mod, computed bfloat16
        continue;
      }
      ++Checked;
      for (unsigned I = 0; I < G.getNumOutputs(); ++I) {
        Tensor Want =
            readTensorFile(SetDir + "/output_" + std::to_string(I) + ".pb",
                           G.getOutput(I)->getType().getElemType());
        unsigned R = 0;
        while (R < N.getNumResults() && N.getResult(R) != G.getOutput(I))
          ++R;
        if (Want.isNull() || R == N.getNumResults())
          continue;
        std::string Diff = compareTensors((*Results)[R], Want);
        if (!Diff.empty())
          Wrong.push_back(Name + " output " + std::to_string(I) + ": " + Diff);
      }
    }
  }
  for (const std::string &W : Wrong)
    ADD_FAILURE() << W;
  EXPECT_GT(Checked, 150u);
  std::printf("constant evaluator vs ONNX node tests: %u agree, %u refused, "
              "%zu wrong\n",
              Checked, Refused, Wrong.size());
}

} // namespace

namespace {

TEST(ConstantEval, TriluUpperAndLowerWithK) {
  const char *Sig = "g () => (float[3,3] Y) <float[3,3] A = {1.0, 2.0, 3.0, "
                    "4.0, 5.0, 6.0, 7.0, 8.0, 9.0}, int64 K = {1}>";
  Evaluated E = evalLast(Sig, "Y = Trilu (A, K)", 14);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  E = evalLast(Sig, "Y = Trilu <upper = 0> (A)", 14);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{1, 0, 0, 4, 5, 0, 7, 8, 9}));
}

TEST(ConstantEval, ClipByInputsAndAttributes) {
  Evaluated E = evalLast("g () => (float[4] Y) <float[4] A = {-2.0, 0.5, 3.0, "
                         "9.0}, float L = {0.0}, float H = {3.0}>",
                         "Y = Clip (A, L, H)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{0, 0.5, 3, 3}));
  E = evalLast("g () => (float[4] Y) <float[4] A = {-2.0, 0.5, 3.0, 9.0}>",
               "Y = Clip <min = -1.0> (A)", 9);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.reals(), (F64{-1, 0.5, 3, 9}));
  E = evalLast("g () => (int64[3] Y) <int64[3] A = {-5, 2, 7}, int64 H = "
               "{4}>",
               "Y = Clip (A, , H)", 13);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{-5, 2, 4}));
}

} // namespace

namespace {

/// evaluateFromConstants on the value named \p Name of the model \p Text.
Tensor evalCone(llvm::StringRef Text, llvm::StringRef Name,
                unsigned MaxNodes = 64) {
  DiagnosticEngine Diags;
  std::unique_ptr<Model> M = parseTextModel(Text, Diags);
  EXPECT_TRUE(M) << Text.str();
  if (!M)
    return Tensor();
  // Shape reads recorded types, as it does during inference.
  EXPECT_TRUE(succeeded(inferShapes(*M, Diags)));
  for (Node &N : M->getGraph().getNodes())
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I); V && V->getName() == Name) {
        ConstantConeOptions Opts;
        Opts.MaxNodes = MaxNodes;
        llvm::DenseMap<const Value *, Tensor> Memo;
        // The result outlives the model: copy it out of the model's buffers.
        Tensor T = evaluateFromConstants(*V, 13, Opts, Memo);
        return T ? Tensor::fromInt64s(T.getName(), T.getDims(),
                                      T.toInt64s().value_or(I64{}))
                 : Tensor();
      }
  ADD_FAILURE() << "no value " << Name.str();
  return Tensor();
}

const char *kExpandTarget = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,4] X, float[2,3] Y) => (int64[3] T, int64[2] SX, int64[2] SY, float[2,2] R) {
  S = Constant <value = int64[3] {2, 3, 4}> ()
  L = Shape (S)
  Ones = ConstantOfShape <value = int64[1] {1}> (L)
  M1 = Constant <value = int64 {-1}> ()
  Neg = Mul (Ones, M1)
  Eq = Equal (S, Neg)
  T = Where (Eq, Ones, S)
  SX = Shape (X)
  SY = Shape (Y)
  Sh = Constant <value = int64[2] {2, 2}> ()
  R = RandomUniform <shape = [2, 2]> ()
}
)";

} // namespace

TEST(ConstantEval, ConeOfConstantsOnly) {
  // torch's Expand target check on a constant target: the target back.
  Tensor T = evalCone(kExpandTarget, "T");
  ASSERT_TRUE(T);
  EXPECT_EQ(T.toInt64s().value_or(I64{}), (I64{2, 3, 4}));
  // Shape of a static value is a constant; of a symbolic one it is not.
  Tensor SY = evalCone(kExpandTarget, "SY");
  ASSERT_TRUE(SY);
  EXPECT_EQ(SY.toInt64s().value_or(I64{}), (I64{2, 3}));
  EXPECT_FALSE(evalCone(kExpandTarget, "SX"));
  // Random ops are never evaluated.
  EXPECT_FALSE(evalCone(kExpandTarget, "R"));
  // T needs 5 nodes evaluated: over a budget of 3 it is given up.
  EXPECT_FALSE(evalCone(kExpandTarget, "T", 3));
}

//===----------------------------------------------------------------------===//
// The registry's evaluation rules and the one fold path
//===----------------------------------------------------------------------===//

namespace {

TEST(ConstantEvalRegistry, EveryEvaluationIsReachable) {
  unsigned WithEval = 0;
  for (const OpDef *D : getAllOpDefs()) {
    if (!D->Eval)
      continue;
    ++WithEval;
    EXPECT_TRUE(D->Domain.empty()) << D->OpType.str();
    EXPECT_TRUE(isEvaluableOp(D->OpType)) << D->OpType.str();
    EXPECT_FALSE(D->has(Nondeterministic)) << D->OpType.str();
  }
  EXPECT_GT(WithEval, 50u);
  EXPECT_FALSE(isEvaluableOp("Conv"));
}

TEST(ConstantEvalRegistry, VersionsAreRows) {
  // The evaluation changes with the definition's version range: one row
  // per version that changed it.
  auto evalAt = [](llvm::StringRef Op, int64_t Opset) {
    const OpDef *D = lookupOp("", Op, Opset);
    return D && D->Eval ? D->Eval->Eval : nullptr;
  };
  EXPECT_NE(evalAt("Slice", 9), evalAt("Slice", 10));
  EXPECT_EQ(evalAt("Slice", 10), evalAt("Slice", 21));
  EXPECT_NE(evalAt("Add", 6), evalAt("Add", 7));
  EXPECT_NE(evalAt("Add", 7), evalAt("Sub", 7)) << "the row names the op";
  EXPECT_NE(evalAt("Split", 12), evalAt("Split", 13));
  // ReduceSum's axes moved to an input at 13, ReduceMax's at 18: one
  // evaluator, the definition's AxesSource says where.
  EXPECT_EQ(evalAt("ReduceSum", 11), evalAt("ReduceSum", 13));
  EXPECT_EQ(lookupOp("", "ReduceMax", 17)->Axes.K, AxesSource::Attribute);
}

TEST(ConstantEvalRegistry, VariadicBroadcastsFromOpset8) {
  const char *Sig = "g () => (int64[3] Y) <int64[3] A = {1, 5, 3}, "
                    "int64[1] C = {4}>";
  Evaluated E = evalLast(Sig, "Y = Max (A, C)", 7);
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "operand shapes do not broadcast");
  E = evalLast(Sig, "Y = Max (A, C)", 8);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(), (I64{4, 5, 4}));
}

TEST(ConstantEvalRegistry, ConcatAxisRequiredFromOpset4) {
  const char *Sig = "g () => (int64[2,3] Y) <int64[2,1] A = {1, 2}, "
                    "int64[2,2] B = {3, 4, 5, 6}>";
  Evaluated E = evalLast(Sig, "Y = Concat (A, B)", 3);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.dims(), (I64{2, 3}));
  E = evalLast(Sig, "Y = Concat (A, B)", 4);
  EXPECT_FALSE(E.ok());
  EXPECT_EQ(E.Why, "attribute axis is required");
}

TEST(ConstantEvalRegistry, SplitSizesByVersion) {
  const char *Sig = "g () => (int64[1] Y, int64[3] Z) <int64[4] D = {1, 2, "
                    "3, 4}, int64[2] S = {1, 3}>";
  // Split-1 reads a second operand, Split-2 the attribute only.
  Evaluated E = evalLast(Sig, "Y, Z = Split <axis = 0> (D, S)", 1);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(1), (I64{2, 3, 4}));
  E = evalLast(Sig, "Y, Z = Split <axis = 0, split = [1, 3]> (D)", 2);
  ASSERT_TRUE(E.ok()) << E.Why;
  EXPECT_EQ(E.ints(0), (I64{1}));
}

/// A folded Transpose whose declared type its value contradicts.
const char *kContradicted = R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (int64[3,2] Y) {
  K = Constant <value = int64[2,3] {1, 2, 3, 4, 5, 6}> ()
  T = Transpose <perm = [1, 0]> (K)
  Y = Identity (T)
}
)";

TEST(ConstantEvalFold, FoldNodeChecksTheDeclaredType) {
  DiagnosticEngine Diags;
  std::vector<std::string> Warnings;
  Diags.setHandler([&](const Diagnostic &D) { Warnings.push_back(D.Message); });
  std::unique_ptr<Model> M = parseTextModel(kContradicted, Diags);
  ASSERT_TRUE(M);
  Node *T = nullptr;
  for (Node &N : M->getGraph().getNodes())
    if (N.getOpType() == "Transpose")
      T = &N;
  ASSERT_TRUE(T);
  std::string Why;
  ConstantEvalOptions Opts;
  // As declared: folds.
  T->getResult(0)->setType(
      Type::tensor(7, std::vector<Dim>{Dim::known(3), Dim::known(2)}));
  std::optional<std::vector<Tensor>> R = foldNode(*T, Opts, Diags, Why);
  ASSERT_TRUE(R) << Why;
  EXPECT_EQ((*R)[0].getDims(), (I64{3, 2}));
  EXPECT_TRUE(Warnings.empty());
  // Declared [2,3]: the value contradicts it, nothing is folded.
  T->getResult(0)->setType(
      Type::tensor(7, std::vector<Dim>{Dim::known(2), Dim::known(3)}));
  R = foldNode(*T, Opts, Diags, Why);
  EXPECT_FALSE(R);
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_NE(Warnings[0].find("contradicts its declared type"),
            std::string::npos)
      << Warnings[0];
  // Not a candidate (an operand is not constant): no reason, no warning.
  std::unique_ptr<Model> Dyn =
      parseTextModel("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                     "g (int64[2] X) => (int64[2] Y) {\n  Y = Neg (X)\n}\n",
                     Diags);
  ASSERT_TRUE(Dyn);
  R = foldNode(Dyn->getGraph().getNodes().front(), Opts, Diags, Why);
  EXPECT_FALSE(R);
  EXPECT_TRUE(Why.empty()) << Why;
  EXPECT_EQ(Warnings.size(), 1u);
}

TEST(ConstantEvalFold, DriverFoldHookIsTheFoldPath) {
  DiagnosticEngine Diags;
  std::vector<std::string> Warnings;
  Diags.setHandler([&](const Diagnostic &D) { Warnings.push_back(D.Message); });
  std::unique_ptr<Model> M = parseTextModel(kContradicted, Diags);
  ASSERT_TRUE(M);
  for (Node &N : M->getGraph().getNodes())
    if (N.getOpType() == "Transpose")
      N.getResult(0)->setType(
          Type::tensor(7, std::vector<Dim>{Dim::known(2), Dim::known(3)}));
  GreedyRewriteConfig Config;
  Config.Fold = [&](Node &N) {
    std::string Why;
    return foldNode(N, {}, Diags, Why);
  };
  bool Changed = false;
  ASSERT_TRUE(
      succeeded(applyPatternsGreedily(*M, {}, Diags, Config, &Changed)));
  // The Transpose stays: its value contradicts its declared type.
  bool HasTranspose = false;
  for (Node &N : M->getGraph().getNodes())
    HasTranspose |= N.getOpType() == "Transpose";
  EXPECT_TRUE(HasTranspose);
  EXPECT_FALSE(Warnings.empty());
}

} // namespace
