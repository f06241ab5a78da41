//===- MathOps.cpp - Elementwise math, comparisons, logic, reductions, MatMul
//and Gemm
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "DimSupport.h"
#include "EvalSupport.h"
#include "InferSupport.h"
#include "PatternSupport.h"
#include "PreconditionSupport.h"
#include "SymbolicRefinement.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/Ops/PatternRules.h"
#include "onnxopt/Ops/Preconditions.h"
#include "onnxopt/Ops/Semantics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <onnx/defs/tensor_proto_util.h>

using namespace onnxopt;

namespace {

//===----------------------------------------------------------------------===//
// Traits, shape operands, axes
//===----------------------------------------------------------------------===//

constexpr ShapeOperand ReduceL1Operands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceL2Operands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceLogSumOperands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceLogSumExpOperands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceMaxOperands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceMeanOperands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceMinOperands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceProdOperands18[] = {{1, "axes"}};
constexpr ShapeOperand ReduceSumOperands13[] = {{1, "axes"}};
constexpr ShapeOperand ReduceSumSquareOperands18[] = {{1, "axes"}};

constexpr TraitRow Traits[] = {
    {"", "Abs", 1, ShapePreserving, {}, {}, -1},
    {"", "Acos", 1, ShapePreserving, {}, {}, -1},
    {"", "Acosh", 1, ShapePreserving, {}, {}, -1},
    {"",
     "Add",
     1,
     ElementwiseBroadcasting | ShapeArithmetic | Arithmetic | Sums,
     {},
     {},
     -1},
    {"", "And", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "ArgMax", 1, 0, {}, {}, -1},
    {"", "ArgMin", 1, 0, {}, {}, -1},
    {"", "Asin", 1, ShapePreserving, {}, {}, -1},
    {"", "Asinh", 1, ShapePreserving, {}, {}, -1},
    {"", "Atan", 1, ShapePreserving, {}, {}, -1},
    {"", "Atanh", 1, ShapePreserving, {}, {}, -1},
    {"", "Bernoulli", 1, Nondeterministic, {}, {}, -1},
    {"", "BitShift", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "BitwiseAnd", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "BitwiseNot", 1, ShapePreserving, {}, {}, -1},
    {"", "BitwiseOr", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "BitwiseXor", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Ceil", 1, ShapePreserving, {}, {}, -1},
    {"", "Celu", 1, ShapePreserving, {}, {}, -1},
    {"", "Clip", 1, ShapePreserving, {}, {}, -1},
    {"", "Cos", 1, ShapePreserving, {}, {}, -1},
    {"", "Cosh", 1, ShapePreserving, {}, {}, -1},
    {"",
     "Div",
     1,
     ElementwiseBroadcasting | ShapeArithmetic | Arithmetic,
     {},
     {},
     -1},
    {"", "Elu", 1, ShapePreserving, {}, {}, -1},
    {"", "Equal", 1, ElementwiseBroadcasting | Comparison, {}, {}, -1},
    {"", "Erf", 1, ShapePreserving, {}, {}, -1},
    {"", "Exp", 1, ShapePreserving, {}, {}, -1},
    {"", "Floor", 1, ShapePreserving, {}, {}, -1},
    {"", "Gelu", 1, ShapePreserving, {}, {}, -1},
    {"", "Gemm", 1, TransposableMatrixProduct, {}, {}, -1},
    {"", "Greater", 1, ElementwiseBroadcasting | Comparison, {}, {}, -1},
    {"", "GreaterOrEqual", 1, ElementwiseBroadcasting | Comparison, {}, {}, -1},
    {"", "HardSigmoid", 1, ShapePreserving, {}, {}, -1},
    {"", "HardSwish", 1, ShapePreserving, {}, {}, -1},
    {"", "IsInf", 1, ShapePreserving, {}, {}, -1},
    {"", "IsNaN", 1, ShapePreserving, {}, {}, -1},
    {"", "LeakyRelu", 1, ShapePreserving, {}, {}, -1},
    {"", "Less", 1, ElementwiseBroadcasting | Comparison, {}, {}, -1},
    {"", "LessOrEqual", 1, ElementwiseBroadcasting | Comparison, {}, {}, -1},
    {"", "Log", 1, ShapePreserving, {}, {}, -1},
    {"", "MatMul", 1, BatchedMatrixProduct, {}, {}, -1},
    {"", "Max", 1, ElementwiseBroadcasting | ShapeArithmetic, {}, {}, -1},
    {"", "Mean", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Min", 1, ElementwiseBroadcasting | ShapeArithmetic, {}, {}, -1},
    {"", "Mish", 1, ShapePreserving, {}, {}, -1},
    {"", "Mod", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"",
     "Mul",
     1,
     ElementwiseBroadcasting | ShapeArithmetic | Arithmetic | Multiplies,
     {},
     {},
     -1},
    {"", "Multinomial", 1, Nondeterministic, {}, {}, -1},
    {"", "Neg", 1, ShapePreserving, {}, {}, -1},
    {"", "Not", 1, ShapePreserving, {}, {}, -1},
    {"", "Or", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "PRelu", 1, ShapePreserving, {}, {}, -1},
    {"", "Pow", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "RandomNormal", 1, Nondeterministic, {}, {}, -1},
    {"", "RandomNormalLike", 1, Nondeterministic, {}, {}, -1},
    {"", "RandomUniform", 1, Nondeterministic, {}, {}, -1},
    {"", "RandomUniformLike", 1, Nondeterministic, {}, {}, -1},
    {"", "Reciprocal", 1, ShapePreserving, {}, {}, -1},
    {"", "ReduceL1", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"",
     "ReduceL1",
     18,
     Reduction,
     ReduceL1Operands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "ReduceL2", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"",
     "ReduceL2",
     18,
     Reduction,
     ReduceL2Operands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"",
     "ReduceLogSum",
     1,
     Reduction,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "ReduceLogSum",
     18,
     Reduction,
     ReduceLogSumOperands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"",
     "ReduceLogSumExp",
     1,
     Reduction,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "ReduceLogSumExp",
     18,
     Reduction,
     ReduceLogSumExpOperands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "ReduceMax", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"",
     "ReduceMax",
     18,
     Reduction,
     ReduceMaxOperands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"",
     "ReduceMean",
     1,
     Reduction,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "ReduceMean",
     18,
     Reduction,
     ReduceMeanOperands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "ReduceMin", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"",
     "ReduceMin",
     18,
     Reduction,
     ReduceMinOperands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"",
     "ReduceProd",
     1,
     Reduction,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "ReduceProd",
     18,
     Reduction,
     ReduceProdOperands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "ReduceSum", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"",
     "ReduceSum",
     13,
     Reduction,
     ReduceSumOperands13,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"",
     "ReduceSumSquare",
     1,
     Reduction,
     {},
     {AxesSource::Attribute, 0, "axes"},
     -1},
    {"",
     "ReduceSumSquare",
     18,
     Reduction,
     ReduceSumSquareOperands18,
     {AxesSource::Input, 1, "axes"},
     -1},
    {"", "Relu", 1, ShapePreserving, {}, {}, -1},
    {"", "Round", 1, ShapePreserving, {}, {}, -1},
    {"", "Selu", 1, ShapePreserving, {}, {}, -1},
    {"", "Shrink", 1, ShapePreserving, {}, {}, -1},
    {"", "Sigmoid", 1, ShapePreserving, {}, {}, -1},
    {"", "Sign", 1, ShapePreserving, {}, {}, -1},
    {"", "Sin", 1, ShapePreserving, {}, {}, -1},
    {"", "Sinh", 1, ShapePreserving, {}, {}, -1},
    {"", "Softplus", 1, ShapePreserving, {}, {}, -1},
    {"", "Softsign", 1, ShapePreserving, {}, {}, -1},
    {"", "Sqrt", 1, ShapePreserving, {}, {}, -1},
    {"",
     "Sub",
     1,
     ElementwiseBroadcasting | ShapeArithmetic | Arithmetic,
     {},
     {},
     -1},
    {"", "Sum", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Tan", 1, ShapePreserving, {}, {}, -1},
    {"", "Tanh", 1, ShapePreserving, {}, {}, -1},
    {"", "ThresholdedRelu", 1, ShapePreserving, {}, {}, -1},
    {"", "Xor", 1, ElementwiseBroadcasting, {}, {}, -1},
};

} // namespace

//===----------------------------------------------------------------------===//
// Run-time preconditions
//===----------------------------------------------------------------------===//

namespace {

/// Gemm multiplies matrices, and ONNX 1.12's inference reads the dims of
/// both inputs without checking their ranks.
LogicalResult checkGemmRanks(const Node &N, DiagnosticEngine &Diags) {
  for (unsigned I = 0; I < 2 && I < N.getNumOperands(); ++I) {
    int64_t R = precondition::knownRank(N.getOperand(I));
    if (R >= 0 && R != 2)
      return emitError(Diags, N) << "input " << I << " of Gemm has rank " << R
                                 << " (a matrix expected)";
  }
  return success();
}

constexpr PreconditionRule PreconditionRows[] = {
    {"", "Gemm", 1, checkGemmRanks},
};

llvm::ArrayRef<PreconditionRule> preconditionRules() {
  return PreconditionRows;
}

} // namespace

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

// Inference functions (onnx::InferenceContext) of the versions ONNX 1.12
// has no schema for, and refinements on top of its schemas (InferRules.h).

namespace {

using namespace onnxopt::infer;

constexpr const char *ReduceAttrs = "keepdims:i noop_with_empty_axes:i";

/// DFT-20: axis (input 2, default -2) and dft_length (input 1) as inputs;
/// the last dim of the output is 2 (real, imaginary).
void inferDFT20(InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasInputShape(Ctx, 0))
    return;
  const TensorShapeProto &In = onnx::getInputShape(Ctx, 0);
  int64_t Rank = In.dim_size();
  if (Rank < 2)
    fail_shape_inference("input must have rank >= 2");
  int64_t Axis = -2;
  if (hasInput(Ctx, 2)) {
    std::optional<std::vector<int64_t>> A = intInput(Ctx, 2);
    if (!A || A->size() != 1) {
      TensorShapeProto &Out = *outputShape(Ctx, 0);
      for (int64_t K = 0; K + 1 < Rank; ++K)
        addUnknownDim(Out);
      addDim(Out, 2);
      return;
    }
    Axis = A->front();
  }
  // Negative axes count from the back of the whole input; the last dim
  // (real, imaginary) cannot be transformed.
  Axis = normalizeAxis(Axis, Rank, "axis");
  if (Axis == Rank - 1)
    fail_shape_inference("axis ", Axis, " is the last (complex) dim");
  bool Onesided = onnx::getAttribute(Ctx, "onesided", 0) != 0;
  bool Inverse = onnx::getAttribute(Ctx, "inverse", 0) != 0;
  if (Onesided && Inverse)
    fail_shape_inference("onesided and inverse cannot both be set");
  std::optional<int64_t> Length = known(In.dim(Axis));
  bool LengthKnown = true;
  if (hasInput(Ctx, 1)) {
    std::optional<std::vector<int64_t>> L = intInput(Ctx, 1);
    LengthKnown = L && L->size() == 1;
    Length = LengthKnown ? std::optional<int64_t>(L->front()) : std::nullopt;
  }
  TensorShapeProto &Out = *outputShape(Ctx, 0);
  for (int64_t K = 0; K + 1 < Rank; ++K) {
    if (K != Axis)
      addDim(Out, In.dim(K));
    else if (Length)
      addDim(Out, Onesided ? *Length / 2 + 1 : *Length);
    else if (!Onesided && LengthKnown)
      addDim(Out, In.dim(K));
    else
      addUnknownDim(Out);
  }
  addDim(Out, 2);
}

// Sorted by domain, op and version.
constexpr InferRule InferRows[] = {
    // Versions 7-13 broadcast as 14 does, which changed only types: they
    // run 14's data propagation (ONNX 1.12 gave these ops one only from 14).
    propagatesAs("Add", 7, 14),
    newVersion("", "BitwiseAnd", 18, inferBroadcast, {false, 2, 2, 1, 1, ""}),
    newVersion("", "BitwiseNot", 18, inferSameAsFirstInput,
               {false, 1, 1, 1, 1, ""}),
    newVersion("", "BitwiseOr", 18, inferBroadcast, {false, 2, 2, 1, 1, ""}),
    newVersion("", "BitwiseXor", 18, inferBroadcast, {false, 2, 2, 1, 1, ""}),
    newVersion("", "DFT", 20, inferDFT20,
               {false, 1, 3, 1, 1, "inverse:i onesided:i"}),
    // Integer division of shape values (ONNX 1.12 propagates none).
    onSchema("Div", 1, nullptr, detail::propagateIntegerDiv),
    onSchema("Einsum", 12, detail::refineEinsum),
    onSchema("Equal", 1, nullptr, detail::propagateEqual),
    newVersion("", "Gelu", 20, inferSameAsFirstInput,
               {false, 1, 1, 1, 1, "approximate:s"}),
    newVersion("", "Mish", 18, inferSameAsFirstInput, {false, 1, 1, 1, 1, ""}),
    propagatesAs("Mul", 7, 14),
    // Reduce*-18 take axes as an input with ReduceSum-13's rules.
    newVersionReusing("", "ReduceL1", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceL2", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceLogSum", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceLogSumExp", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceMax", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceMean", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceMin", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceProd", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    newVersionReusing("", "ReduceSumSquare", 18, "ReduceSum", 13,
                      {false, 1, 2, 1, 1, ReduceAttrs}),
    propagatesAs("Sub", 7, 14),
};

llvm::ArrayRef<InferRule> inferRules() { return InferRows; }

} // namespace

//===----------------------------------------------------------------------===//
// Dim transfer
//===----------------------------------------------------------------------===//

namespace {
using namespace onnxopt::dims;

enum class Arithmetic { Add, Sub, Mul, Div, Mod };

/// \p L / \p D where D is a factor of L (Swin's x.size(0) // num_windows):
/// exact wherever D is not 0, and a D of 0 stops the model.
std::optional<DimExpr> quotientByFactor(const DimExpr &L, const DimExpr &D) {
  std::optional<DimExpr> Q = L.divExact(D);
  if (Q && *Q * D == L)
    return Q;
  return std::nullopt;
}

/// Shape arithmetic on the data of Add, Sub, Mul, Div and Mod.
std::optional<DimList> arithmeticData(DimContext &C, Arithmetic Op) {
  const Node &N = C.getNode();
  if (N.getNumOperands() != 2)
    return std::nullopt;
  const DimList *A = C.data(0), *B = C.data(1);
  if (!A || !B || A->empty() || B->empty())
    return std::nullopt;
  if (A->size() != B->size() && A->size() != 1 && B->size() != 1)
    return std::nullopt;
  // Integer division truncates; a float Div of dims cast to float (torch's
  // `x.size(1) / 2` before a Range) does not: 5 / 2 is 2.5, and a Range to
  // it has 3 elements, not floor(5/2) = 2.
  bool IntegerDiv = false;
  bool Divides = Op == Arithmetic::Div || Op == Arithmetic::Mod;
  const Type *XT = Divides ? C.operandType(0) : nullptr;
  if (XT) {
    auto E = static_cast<ElementType>(XT->getElemType());
    IntegerDiv = E == ElementType::Int64 || E == ElementType::Int32 ||
                 E == ElementType::Int16 || E == ElementType::Int8 ||
                 E == ElementType::UInt64 || E == ElementType::UInt32 ||
                 E == ElementType::UInt16 || E == ElementType::UInt8;
  }
  size_t Len = std::max(A->size(), B->size());
  DimList R;
  for (size_t I = 0; I < Len; ++I) {
    const DimExpr &L = elementAt(*A, I);
    const DimExpr &Rt = elementAt(*B, I);
    if (Op == Arithmetic::Add)
      R.push_back(L + Rt);
    else if (Op == Arithmetic::Sub)
      R.push_back(L - Rt);
    else if (Op == Arithmetic::Mul)
      R.push_back(L * Rt);
    else if (Op == Arithmetic::Div && IntegerDiv && Rt.isConstant() &&
             Rt.getConstant() > 0 &&
             C.holdsWhereRuns(DimCondition::AtLeast, L, DimExpr::constant(0)))
      // Truncation is floor where the dividend is not negative; shape
      // arithmetic can go below 0 (H - 10 at H = 4: -6 / 4 is -1, and
      // floor(-6/4) is -2).
      R.push_back(L.floorDiv(Rt.getConstant()));
    else if (Op == Arithmetic::Div && IntegerDiv && !Rt.isConstant()) {
      std::optional<DimExpr> Q = quotientByFactor(L, Rt);
      if (!Q)
        return std::nullopt;
      R.push_back(*Q);
    } else if (Op == Arithmetic::Mod && IntegerDiv && Rt.isConstant() &&
               Rt.getConstant() > 0 && !N.getAttrInt("fmod", 0))
      // Mod with fmod = 0 takes the divisor's sign: L - K*floor(L/K) for
      // every L, negative ones too (Swin's (7 - W % 7) % 7).
      R.push_back(L.mod(Rt.getConstant()));
    else
      return std::nullopt;
  }
  return R;
}

/// An index table shifted or scaled by a constant (positions + 2 looking
/// up BART's position table, a rebuilt grid base + i * step) keeps a
/// bound on its greatest element, so a Gather further on still requires
/// its indices inside the table. Only constants that are not negative:
/// the bound is then the greatest element plus the greatest constant, or
/// times the one scale.
void boundShiftedIndices(DimContext &C, Arithmetic Op) {
  if (C.getNode().getNumOperands() != 2)
    return;
  for (unsigned I = 0; I < 2; ++I) {
    const DimExpr *Max = C.getMaxElement(I);
    if (!Max)
      continue;
    auto B = C.constantBounds(1 - I);
    if (!B || B->front().first < 0)
      return;
    auto [Lo, Hi] = B->front();
    if (Op == Arithmetic::Add)
      C.setMaxElement(0, *Max + DimExpr::constant(Hi));
    else if (Op == Arithmetic::Mul && Lo == Hi)
      C.setMaxElement(0, *Max * DimExpr::constant(Hi));
    return;
  }
}

template <Arithmetic Op>
void transferArithmetic(DimContext &C, const DimList *X) {
  if (!broadcastOperands(C))
    return;
  if (std::optional<DimList> D = arithmeticData(C, Op))
    C.setData(0, std::move(*D));
  boundShiftedIndices(C, Op);
}

/// Sum, Max, Min and Mean before opset 8 take operands of one shape, no
/// broadcasting (ONNX Runtime checks it): the result is that shape, and
/// every operand's dims must equal the first's.
void transferSameShapes(DimContext &C, const DimList *X) {
  const Node &N = C.getNode();
  for (unsigned I = 1; I < N.getNumOperands(); ++I) {
    const DimList *D = C.dims(I);
    if (!D || D->size() != X->size())
      continue;
    for (size_t K = 0; K < X->size(); ++K)
      C.require(DimCondition::Equal, (*D)[K], (*X)[K],
                "operands of one shape (no broadcasting before opset 8)");
  }
  C.setDims(0, full(*X));
}

/// Equal on two elements of shape data: 1, 0, or undecided.
std::optional<int64_t> equalElements(const DimExpr &A, const DimExpr &B) {
  if (A == B)
    return 1;
  if (A.isConstant() && B.isConstant())
    return 0;
  // `s == -1` on a dim expression (torch's Expand target check) is false:
  // the expression is never negative.
  if (B.isConstant() && B.getConstant() < 0 && nonNegativeEverywhere(A))
    return 0;
  if (A.isConstant() && A.getConstant() < 0 && nonNegativeEverywhere(B))
    return 0;
  return std::nullopt;
}

/// Equal on shape data, element by element, when every element is
/// decided: with Where (TensorOps) it carries torch's Expand target check.
std::optional<DimList> equalData(DimContext &C) {
  if (C.getNode().getNumOperands() != 2)
    return std::nullopt;
  const DimList *A = C.data(0), *B = C.data(1);
  if (!A || !B)
    return std::nullopt;
  size_t Len = broadcastLength({A->size(), B->size()});
  if (!Len)
    return std::nullopt;
  DimList R;
  for (size_t I = 0; I < Len; ++I) {
    std::optional<int64_t> E =
        equalElements(elementAt(*A, I), elementAt(*B, I));
    if (!E)
      return std::nullopt;
    R.push_back(DimExpr::constant(*E));
  }
  return R;
}

void transferEqual(DimContext &C, const DimList *X) {
  if (!broadcastOperands(C))
    return;
  if (std::optional<DimList> D = equalData(C))
    C.setData(0, std::move(*D));
}

/// numpy matmul: the inner dims are equal, the batch dims broadcast.
std::optional<PartialDimList> matMul(DimContext &C, const DimList &A,
                                     const DimList &B) {
  if (A.empty() || B.empty())
    return std::nullopt;
  if (A.size() == 1 && B.size() == 1) {
    C.unite(A[0], B[0]);
    return PartialDimList{};
  }
  if (A.size() == 1) {
    C.unite(A[0], B[B.size() - 2]);
    PartialDimList R(B.begin(), B.end() - 2);
    R.push_back(B.back());
    return R;
  }
  if (B.size() == 1) {
    C.unite(A.back(), B[0]);
    return PartialDimList(A.begin(), A.end() - 1);
  }
  C.unite(A.back(), B[B.size() - 2]);
  DimList BatchA(A.begin(), A.end() - 2), BatchB(B.begin(), B.end() - 2);
  PartialDimList R = broadcast({&BatchA, &BatchB});
  requireBroadcast(C, {&BatchA, &BatchB});
  R.push_back(A[A.size() - 2]);
  R.push_back(B.back());
  return R;
}

void transferMatMul(DimContext &C, const DimList *X) {
  if (const DimList *B = C.dims(1))
    C.setDims(0, matMul(C, *X, *B));
}

void transferGemm(DimContext &C, const DimList *X) {
  const DimList *BDims = C.dims(1);
  if (X->size() != 2 || !BDims || BDims->size() != 2)
    return;
  const DimList &B = *BDims;
  const Node &N = C.getNode();
  bool TA = N.getAttrInt("transA", 0), TB = N.getAttrInt("transB", 0);
  C.unite((*X)[TA ? 0 : 1], B[TB ? 1 : 0]);
  C.setDims(0, PartialDimList{(*X)[TA ? 1 : 0], B[TB ? 0 : 1]});
  // C broadcasts to [M, N] (one way: C's dims are the output's or 1).
  if (const DimList *Bias = C.dims(2)) {
    DimList Y{(*X)[TA ? 1 : 0], B[TB ? 0 : 1]};
    requireBroadcast(C, {&Y, Bias});
  }
}

void transferArgMinMax(DimContext &C, const DimList *X) {
  const Node &N = C.getNode();
  std::optional<size_t> Axis = normAxis(N.getAttrInt("axis", 0), X->size());
  if (!Axis)
    return;
  PartialDimList R = full(*X);
  if (N.getAttrInt("keepdims", 1))
    R[*Axis] = DimExpr::constant(1);
  else
    R.erase(R.begin() + *Axis);
  C.setDims(0, std::move(R));
}

/// PRelu: X's shape; the slope broadcasts to X.
void transferPRelu(DimContext &C, const DimList *X) {
  transferShapePreserving(C, X);
  if (!X)
    return;
  if (const DimList *Slope = C.dims(1); Slope && Slope->size() <= X->size())
    requireBroadcast(C, {X, Slope});
}

constexpr bool NeedsX = true;

/// Einsum: a letter's dims broadcast as numpy's do (each is the others' or
/// 1, as ONNX Runtime checks), and so do the dims the inputs' ellipses
/// stand for, right-aligned; a letter repeated in one input (a diagonal)
/// needs its dims equal. Each output letter is its broadcast dim, the
/// ellipsis the broadcast ellipsis dims.
void transferEinsum(DimContext &C, const DimList *) {
  detail::EinsumTerms Terms;
  const Node &N = C.getNode();
  if (!detail::parseEinsum(N.getAttrString("equation", ""), Terms) ||
      Terms.Inputs.size() != N.getNumOperands())
    return;
  std::map<char, DimList> Letter;
  std::vector<DimList> Ellipses;
  for (unsigned I = 0; I < Terms.Inputs.size(); ++I) {
    const DimList *D = C.dims(I);
    const std::string &Term = Terms.Inputs[I];
    bool HasEllipsis = Term.find('.') != std::string::npos;
    if (!D)
      return;
    int Rest = int(D->size()) - int(Term.size()) + (HasEllipsis ? 1 : 0);
    if (Rest < 0 || (Rest > 0 && !HasEllipsis))
      return;
    std::map<char, DimExpr> Own;
    size_t K = 0;
    for (char Ch : Term) {
      if (Ch == '.') {
        Ellipses.emplace_back(D->begin() + K, D->begin() + K + Rest);
        K += Rest;
        continue;
      }
      const DimExpr &E = (*D)[K++];
      if (auto [It, New] = Own.insert({Ch, E}); !New)
        C.require(DimCondition::Equal, It->second, E,
                  "a repeated letter takes a diagonal");
      Letter[Ch].push_back(E);
    }
  }
  auto Broadcast = [&](llvm::ArrayRef<DimList> Lists) {
    std::vector<const DimList *> In;
    for (const DimList &L : Lists)
      In.push_back(&L);
    requireBroadcast(C, In);
    return broadcast(In);
  };
  std::map<char, std::optional<DimExpr>> Joined;
  for (const auto &[Ch, Dims] : Letter) {
    std::vector<DimList> Each;
    for (const DimExpr &E : Dims)
      Each.push_back(DimList{E});
    Joined[Ch] = Broadcast(Each).front();
  }
  PartialDimList Dots = Broadcast(Ellipses);
  PartialDimList Out;
  for (char Ch : Terms.Output) {
    if (Ch == '.') {
      Out.insert(Out.end(), Dots.begin(), Dots.end());
      continue;
    }
    auto It = Joined.find(Ch);
    if (It == Joined.end())
      return; // a letter no input has: the node fails
    Out.push_back(It->second);
  }
  C.setDims(0, std::move(Out));
}

constexpr DimRule DimRules[] = {
    {"", "Add", 1, transferArithmetic<Arithmetic::Add>},
    {"", "ArgMax", 1, transferArgMinMax, NeedsX},
    {"", "ArgMin", 1, transferArgMinMax, NeedsX},
    // The random ops below: no result dims modelled, and no condition on
    // dims beyond their recorded types (a shape that is the input's or an
    // attribute).
    {"", "Bernoulli", 1, nullptr},
    {"", "Div", 1, transferArithmetic<Arithmetic::Div>},
    {"", "Einsum", 12, transferEinsum},
    {"", "Equal", 1, transferEqual},
    {"", "Gemm", 1, transferGemm, NeedsX},
    {"", "MatMul", 1, transferMatMul, NeedsX},
    {"", "Max", 1, transferSameShapes, NeedsX},
    {"", "Max", 8, transferBroadcast},
    {"", "Mean", 1, transferSameShapes, NeedsX},
    {"", "Mean", 8, transferBroadcast},
    {"", "Min", 1, transferSameShapes, NeedsX},
    {"", "Min", 8, transferBroadcast},
    {"", "Mod", 10, transferArithmetic<Arithmetic::Mod>},
    {"", "Mul", 1, transferArithmetic<Arithmetic::Mul>},
    {"", "Multinomial", 1, nullptr},
    {"", "PRelu", 1, transferPRelu},
    {"", "RandomNormalLike", 1, nullptr},
    {"", "RandomUniformLike", 1, nullptr},
    {"", "Sub", 1, transferArithmetic<Arithmetic::Sub>},
    {"", "Sum", 1, transferSameShapes, NeedsX},
    {"", "Sum", 8, transferBroadcast},
};

llvm::ArrayRef<DimRule> dimRules() { return DimRules; }
} // namespace

//===----------------------------------------------------------------------===//
// Constant evaluation
//===----------------------------------------------------------------------===//

// Each rule computes its op's results from constant operands (EvalRules.h);
// the helpers they share are in EvalSupport.h. Arithmetic converts operands
// to Literals (int64 or double), computes, and rounds back once.

namespace {
using namespace onnxopt::eval;

/// The operation of an elementwise op. Ops that differ only by it share one
/// evaluator; each row instantiates it with its own operation.
enum class Elementwise {
  // Binary (and, for Min, Max and Sum, variadic) arithmetic.
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Min,
  Max,
  Sum,
  // Comparisons: bool results.
  Equal,
  Less,
  Greater,
  LessOrEqual,
  GreaterOrEqual,
  // Logic on bools.
  And,
  Or,
  Xor,
  // Unary.
  Neg,
  Abs,
  Not,
  Floor,
  Ceil,
  Sqrt,
};

bool isComparison(Elementwise Op) {
  switch (Op) {
  case Elementwise::Equal:
  case Elementwise::Less:
  case Elementwise::Greater:
  case Elementwise::LessOrEqual:
  case Elementwise::GreaterOrEqual:
    return true;
  default:
    return false;
  }
}

bool isLogical(Elementwise Op) {
  return Op == Elementwise::And || Op == Elementwise::Or ||
         Op == Elementwise::Xor;
}

/// The ops whose uint64 results are exact in an int64 bit pattern.
bool takesUInt64(Elementwise Op) {
  return Op == Elementwise::Add || Op == Elementwise::Sub ||
         Op == Elementwise::Mul || Op == Elementwise::Sum ||
         Op == Elementwise::Equal;
}

/// How an elementwise op version lines its operands up.
enum class Broadcast {
  /// Binary ops before opset 7: the `broadcast` and `axis` attributes.
  Legacy,
  /// Min, Max and Sum before opset 8: equal shapes only.
  None,
  /// Numpy's multidirectional broadcasting.
  Numpy,
};

/// Checks the element types op \p Op (named \p Name) accepts.
bool checkOperandTypes(Elementwise Op, llvm::StringRef Name, int32_t ET,
                       std::string &Err) {
  if (isLogical(Op) || Op == Elementwise::Not) {
    if (ET != TP::BOOL)
      Err = Name.str() + " needs bool operands";
  } else if (Op == Elementwise::Equal) {
    if (!isNumericType(ET) && ET != TP::BOOL)
      Err = "unsupported element type " + typeName(ET);
  } else if (!isNumericType(ET)) {
    Err = Name.str() + " does not take " + typeName(ET) + " operands";
  }
  if (Err.empty() && ET == TP::UINT64 && !takesUInt64(Op))
    Err = "uint64 is not supported by " + Name.str();
  return Err.empty();
}

/// Unary \p Op (Neg, Abs, Not, Floor, Ceil, Sqrt), the row's.
template <Elementwise Op> EvalResults evalUnary(EvalContext &Ctx) {
  llvm::StringRef Name = Ctx.getNode().getOpType();
  std::optional<Literal> A = literalOperand(Ctx, 0);
  if (!A)
    return std::nullopt;
  std::string Err;
  if (!checkOperandTypes(Op, Name, A->ET, Err))
    return Ctx.fail(Err);
  if (!Ctx.fitsBudget(A->ET, static_cast<int64_t>(A->size())))
    return std::nullopt;
  bool RealOnly = Op == Elementwise::Floor || Op == Elementwise::Ceil ||
                  Op == Elementwise::Sqrt;
  if (RealOnly && !A->isReal())
    return Ctx.fail(Name + " needs floating operands");
  Literal Out = Literal::make(A->ET, A->Dims);
  for (size_t I = 0; I < A->size(); ++I) {
    if (A->isReal()) {
      double X = A->Reals[I];
      double R = Op == Elementwise::Neg     ? -X
                 : Op == Elementwise::Abs   ? std::fabs(X)
                 : Op == Elementwise::Floor ? std::floor(X)
                 : Op == Elementwise::Ceil  ? std::ceil(X)
                                            : std::sqrt(X);
      Out.Reals.push_back(R);
      continue;
    }
    int64_t X = A->Ints[I];
    if (Op == Elementwise::Not)
      Out.Ints.push_back(!X);
    else if (Op == Elementwise::Neg)
      Out.Ints.push_back(wrapInt(A->ET, 0 - static_cast<uint64_t>(X)));
    else
      Out.Ints.push_back(
          wrapInt(A->ET, X < 0 ? 0 - static_cast<uint64_t>(X) : X));
  }
  return oneLiteral(Ctx, Out);
}

/// Cos and Sin, for reading a baked table only: a runtime's cos and sin
/// are not correctly rounded, so the bits may differ from these.
template <bool IsSin> EvalResults evalTrig(EvalContext &Ctx) {
  llvm::StringRef Name = Ctx.getNode().getOpType();
  if (!Ctx.allowsInexact())
    return Ctx.fail(Name + " is not correctly rounded in every runtime: "
                           "not folded");
  std::optional<Literal> A = literalOperand(Ctx, 0);
  if (!A)
    return std::nullopt;
  if (!A->isReal())
    return Ctx.fail(Name + " needs floating operands");
  if (!Ctx.fitsBudget(A->ET, static_cast<int64_t>(A->size())))
    return std::nullopt;
  Literal Out = Literal::make(A->ET, A->Dims);
  for (double X : A->Reals)
    Out.Reals.push_back(IsSin ? std::sin(X) : std::cos(X));
  return oneLiteral(Ctx, Out);
}

/// MatMul of floating operands (numpy's matmul: 1-D operands gain and lose
/// a dim, the batch dims broadcast), for reading a baked table only: a
/// runtime sums in another order, so the bits may differ.
EvalResults evalMatMul(EvalContext &Ctx) {
  if (!Ctx.allowsInexact())
    return Ctx.fail("a float MatMul's sums depend on the runtime's order: "
                    "not folded");
  std::optional<Literal> A = literalOperand(Ctx, 0);
  std::optional<Literal> B = A ? literalOperand(Ctx, 1) : std::nullopt;
  if (!A || !B)
    return std::nullopt;
  if (!A->isReal() || !B->isReal() || A->ET != B->ET)
    return Ctx.fail("MatMul is read only for floating operands of one type");
  std::vector<int64_t> AD = A->Dims, BD = B->Dims;
  if (AD.empty() || BD.empty())
    return Ctx.fail("MatMul of a scalar");
  bool AVec = AD.size() == 1, BVec = BD.size() == 1;
  if (AVec)
    AD.insert(AD.begin(), 1);
  if (BVec)
    BD.push_back(1);
  int64_t M = AD[AD.size() - 2], K = AD.back(), N = BD.back();
  if (BD[BD.size() - 2] != K)
    return Ctx.fail("MatMul's inner dims differ");
  std::vector<int64_t> ABatch(AD.begin(), AD.end() - 2),
      BBatch(BD.begin(), BD.end() - 2), Batch;
  if (!broadcastDims({ABatch, BBatch}, Batch))
    return Ctx.fail("MatMul's batch dims do not broadcast");
  int64_t Count = 1;
  for (int64_t D : Batch)
    Count *= D;
  // Bounded work: a table is a few thousand products.
  if (Count * M * N * std::max<int64_t>(K, 1) > (int64_t(1) << 24))
    return Ctx.fail("MatMul too large to read");
  std::vector<int64_t> OutDims = Batch;
  if (!AVec)
    OutDims.push_back(M);
  if (!BVec)
    OutDims.push_back(N);
  if (!Ctx.fitsBudget(A->ET, Count * M * N))
    return std::nullopt;
  // The offset of batch index I in an operand of batch dims \p Own
  // (right-aligned, size-1 dims repeating).
  auto Offset = [&](const std::vector<int64_t> &Own, int64_t I) {
    int64_t Off = 0, Stride = 1;
    for (size_t K2 = Batch.size(); K2-- > 0;) {
      int64_t Idx = I % Batch[K2];
      I /= Batch[K2];
      size_t From = Batch.size() - K2;
      if (From <= Own.size()) {
        int64_t Dim = Own[Own.size() - From];
        Off += (Dim == 1 ? 0 : Idx) * Stride;
        Stride *= Dim;
      }
    }
    return Off;
  };
  Literal Out = Literal::make(A->ET, OutDims);
  for (int64_t I = 0; I < Count; ++I) {
    const double *PA = A->Reals.data() + Offset(ABatch, I) * M * K;
    const double *PB = B->Reals.data() + Offset(BBatch, I) * K * N;
    for (int64_t R = 0; R < M; ++R)
      for (int64_t C = 0; C < N; ++C) {
        double Sum = 0;
        for (int64_t J = 0; J < K; ++J)
          Sum += PA[R * K + J] * PB[J * N + C];
        Out.Reals.push_back(Sum);
      }
  }
  return oneLiteral(Ctx, Out);
}

/// Clip to [min, max]: attributes (Clip-1 to Clip-6) or optional scalar
/// operands (from Clip-11). NaN stays NaN, as in runtimes.
template <From Bounds> EvalResults evalClip(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  std::optional<Literal> A = literalOperand(Ctx, 0);
  if (!A)
    return std::nullopt;
  if (!isNumericType(A->ET))
    return Ctx.fail("Clip needs a numeric operand");
  std::optional<double> Lo, Hi;
  if (Bounds == From::Attribute) {
    if (N.hasAttr("min"))
      Lo = N.getAttrFloat("min", 0);
    if (N.hasAttr("max"))
      Hi = N.getAttrFloat("max", 0);
  } else {
    for (unsigned I = 1; I <= 2; ++I) {
      if (!Ctx.hasOperand(I))
        continue;
      std::optional<Literal> B = literalOperand(Ctx, I);
      if (!B)
        return std::nullopt;
      if (B->size() != 1 || B->ET != A->ET)
        return Ctx.fail("Clip's bounds must be scalars of the input's type");
      (I == 1 ? Lo : Hi) = B->real(0);
    }
  }
  Literal Out = *A;
  for (size_t I = 0; I < Out.size(); ++I) {
    if (Out.isReal()) {
      double &X = Out.Reals[I];
      if (std::isnan(X))
        continue;
      if (Lo && X < *Lo)
        X = *Lo;
      if (Hi && X > *Hi)
        X = *Hi;
      continue;
    }
    int64_t &X = Out.Ints[I];
    if (Lo && double(X) < *Lo)
      X = static_cast<int64_t>(*Lo);
    if (Hi && double(X) > *Hi)
      X = static_cast<int64_t>(*Hi);
  }
  return oneLiteral(Ctx, Out);
}

/// Broadcasts \p A and \p B for a binary op as \p How says.
bool binaryDims(EvalContext &Ctx, Broadcast How, Literal &A, Literal &B,
                std::vector<int64_t> &Out) {
  const Node &N = Ctx.getNode();
  if (How == Broadcast::Legacy) {
    if (N.getAttrInt("broadcast", 0) == 0) {
      if (A.Dims != B.Dims)
        return Ctx.error("shapes " + formatDims(A.Dims) + " and " +
                         formatDims(B.Dims) + " differ (broadcast=0)");
      Out = A.Dims;
      return true;
    }
    // Legacy broadcasting: B's dims match a contiguous run of A's, starting
    // at `axis` (suffix by default).
    int64_t RA = A.Dims.size(), RB = B.Dims.size();
    int64_t Axis = N.getAttrInt("axis", RA - RB);
    if (Axis < 0)
      Axis += RA;
    if (Axis < 0 || Axis + RB > RA)
      return Ctx.error("axis does not place B inside A");
    std::vector<int64_t> Padded(Axis, 1);
    Padded.insert(Padded.end(), B.Dims.begin(), B.Dims.end());
    Padded.resize(RA, 1);
    B.Dims = Padded;
    if (!broadcastDims({A.Dims, B.Dims}, Out) || Out != A.Dims)
      return Ctx.error("B does not broadcast to A");
    return true;
  }
  if (!broadcastDims({A.Dims, B.Dims}, Out))
    return Ctx.error("shapes " + formatDims(A.Dims) + " and " +
                     formatDims(B.Dims) + " do not broadcast");
  return true;
}

/// Elementwise \p F over broadcast operands.
bool combine(EvalContext &Ctx, const Literal &A, const Literal &B,
             llvm::ArrayRef<int64_t> OutDims, Literal &Out,
             const std::function<bool(size_t, size_t)> &F) {
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return Ctx.error("result too large");
  if (!Ctx.fitsBudget(Out.ET, *Num))
    return false;
  std::vector<int64_t> IA = broadcastIndices(A.Dims, OutDims);
  std::vector<int64_t> IB = broadcastIndices(B.Dims, OutDims);
  for (int64_t K = 0; K < *Num; ++K)
    if (!F(IA[K], IB[K]))
      return false;
  return true;
}

/// Integer semantics of the binary ops. Returns false with \p Err on
/// division by zero or overflow.
bool intBinary(Elementwise Op, int32_t ET, int64_t A, int64_t B, bool FMod,
               int64_t &R, std::string &Err) {
  uint64_t UA = A, UB = B;
  switch (Op) {
  case Elementwise::Add:
  case Elementwise::Sum:
    R = wrapInt(ET, UA + UB);
    return true;
  case Elementwise::Sub:
    R = wrapInt(ET, UA - UB);
    return true;
  case Elementwise::Mul:
    R = wrapInt(ET, UA * UB);
    return true;
  case Elementwise::Div:
  case Elementwise::Mod:
    if (B == 0) {
      Err = "integer division by zero";
      return false;
    }
    if (A == std::numeric_limits<int64_t>::min() && B == -1) {
      Err = "integer division overflows";
      return false;
    }
    if (Op == Elementwise::Div) {
      R = wrapInt(ET, static_cast<uint64_t>(A / B));
    } else {
      R = A % B;
      if (!FMod && R != 0 && ((R < 0) != (B < 0)))
        R += B;
    }
    return true;
  case Elementwise::Min:
    R = std::min(A, B);
    return true;
  case Elementwise::Max:
    R = std::max(A, B);
    return true;
  case Elementwise::Equal:
    R = A == B;
    return true;
  case Elementwise::Less:
    R = A < B;
    return true;
  case Elementwise::Greater:
    R = A > B;
    return true;
  case Elementwise::LessOrEqual:
    R = A <= B;
    return true;
  case Elementwise::GreaterOrEqual:
    R = A >= B;
    return true;
  case Elementwise::And:
    R = A && B;
    return true;
  case Elementwise::Or:
    R = A || B;
    return true;
  case Elementwise::Xor:
    R = (A != 0) != (B != 0);
    return true;
  default:
    Err = "unsupported op";
    return false;
  }
}

/// Floating semantics of the binary ops.
bool realBinary(Elementwise Op, double X, double Y, bool FMod, double &R,
                std::string &Err) {
  switch (Op) {
  case Elementwise::Add:
  case Elementwise::Sum:
    R = X + Y;
    return true;
  case Elementwise::Sub:
    R = X - Y;
    return true;
  case Elementwise::Mul:
    R = X * Y;
    return true;
  case Elementwise::Div:
    R = X / Y;
    return true;
  case Elementwise::Mod:
    if (!FMod) {
      Err = "Mod of floating types requires fmod=1";
      return false;
    }
    R = std::fmod(X, Y);
    return true;
  case Elementwise::Min:
  case Elementwise::Max:
    if (std::isnan(X) || std::isnan(Y)) {
      Err = "NaN operand";
      return false;
    }
    R = Op == Elementwise::Min ? std::min(X, Y) : std::max(X, Y);
    return true;
  default:
    Err = "unsupported op";
    return false;
  }
}

/// Combines elements \p IA of \p A and \p IB of \p B into \p Out for \p Op
/// (shared by the binary and variadic ops).
bool evalBinaryOp(Elementwise Op, const Literal &A, const Literal &B, bool FMod,
                  Literal &Out, size_t IA, size_t IB, std::string &Err) {
  if (A.isReal()) {
    double X = A.Reals[IA], Y = B.Reals[IB];
    if (isComparison(Op)) {
      bool R = Op == Elementwise::Equal         ? X == Y
               : Op == Elementwise::Less        ? X < Y
               : Op == Elementwise::Greater     ? X > Y
               : Op == Elementwise::LessOrEqual ? X <= Y
                                                : X >= Y;
      Out.Ints.push_back(R);
      return true;
    }
    double R;
    if (!realBinary(Op, X, Y, FMod, R, Err))
      return false;
    Out.Reals.push_back(R);
    return true;
  }
  int64_t R;
  if (!intBinary(Op, A.ET, A.Ints[IA], B.Ints[IB], FMod, R, Err))
    return false;
  Out.Ints.push_back(R);
  return true;
}

/// Binary \p Op (arithmetic, comparison, logic), the row's, with its
/// version's broadcasting.
template <Elementwise Op, Broadcast How>
EvalResults evalBinary(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  std::optional<Literal> A = literalOperand(Ctx, 0), B = literalOperand(Ctx, 1);
  if (!A || !B)
    return std::nullopt;
  if (A->ET != B->ET)
    return Ctx.fail("operands differ in element type");
  std::string Err;
  if (!checkOperandTypes(Op, N.getOpType(), A->ET, Err))
    return Ctx.fail(Err);
  std::vector<int64_t> OutDims;
  if (!binaryDims(Ctx, How, *A, *B, OutDims))
    return std::nullopt;
  bool FMod = N.getAttrInt("fmod", 0) != 0;
  int32_t OutET = isComparison(Op) || isLogical(Op) ? int32_t(TP::BOOL) : A->ET;
  Literal Out = Literal::make(OutET, OutDims);
  if (!combine(Ctx, *A, *B, OutDims, Out, [&](size_t IA, size_t IB) {
        return evalBinaryOp(Op, *A, *B, FMod, Out, IA, IB, Err);
      }))
    return Err.empty() ? std::nullopt : Ctx.fail(Err);
  return oneLiteral(Ctx, Out);
}

/// Pow of floating operands, only where the result is a whole number that
/// the element type holds exactly (the TorchScript exporter's
/// `int(N ** 0.5)` of a position table, Pow(16.0, 0.5)): there every
/// correctly rounded pow, ONNX Runtime's included, gives the same bits;
/// elsewhere pow differs between libraries by an ulp, and nothing is folded.
template <Broadcast How> EvalResults evalPow(EvalContext &Ctx) {
  std::optional<Literal> A = literalOperand(Ctx, 0), B = literalOperand(Ctx, 1);
  if (!A || !B)
    return std::nullopt;
  if (A->ET != B->ET || !A->isReal())
    return Ctx.fail("only floating operands of one type are evaluated");
  std::vector<int64_t> OutDims;
  if (!binaryDims(Ctx, How, *A, *B, OutDims))
    return std::nullopt;
  // Whole numbers up to 2^11 are exact in float16 and bfloat16's 8 bits
  // hold up to 2^8: stay below both.
  constexpr double Limit = 256;
  Literal Out = Literal::make(A->ET, OutDims);
  bool Exact = true;
  if (!combine(Ctx, *A, *B, OutDims, Out, [&](size_t IA, size_t IB) {
        double R = std::pow(A->Reals[IA], B->Reals[IB]);
        Exact &= std::isfinite(R) && std::floor(R) == R && std::fabs(R) <= Limit;
        Out.Reals.push_back(R);
        return Exact;
      }))
    return Exact ? std::nullopt
                 : Ctx.fail("the result is not a small whole number");
  return oneLiteral(Ctx, Out);
}

/// Min, Max and Sum over any number of operands: \p Op is the row's,
/// \p How None before opset 8, Numpy from then on.
template <Elementwise Op, Broadcast How>
EvalResults evalVariadic(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  if (N.getNumOperands() == 0)
    return Ctx.fail("no operands");
  std::optional<Literal> Acc = literalOperand(Ctx, 0);
  if (!Acc)
    return std::nullopt;
  std::string Err;
  if (!checkOperandTypes(Op, N.getOpType(), Acc->ET, Err))
    return Ctx.fail(Err);
  for (unsigned I = 1; I < N.getNumOperands(); ++I) {
    std::optional<Literal> B = literalOperand(Ctx, I);
    if (!B)
      return std::nullopt;
    if (B->ET != Acc->ET)
      return Ctx.fail("operands differ in element type");
    std::vector<int64_t> OutDims;
    if (How == Broadcast::None ? Acc->Dims != B->Dims
                               : !broadcastDims({Acc->Dims, B->Dims}, OutDims))
      return Ctx.fail("operand shapes do not broadcast");
    if (How == Broadcast::None)
      OutDims = Acc->Dims;
    Literal Out = Literal::make(Acc->ET, OutDims);
    if (!combine(Ctx, *Acc, *B, OutDims, Out, [&](size_t IA, size_t IB) {
          return evalBinaryOp(Op, *Acc, *B, false, Out, IA, IB, Err);
        }))
      return Err.empty() ? std::nullopt : Ctx.fail(Err);
    Acc = std::move(Out);
  }
  return oneLiteral(Ctx, *Acc);
}

/// The reduction of a Reduce* op.
enum class ReduceOp { Sum, Prod, Min, Max };

/// ReduceSum, ReduceProd, ReduceMin, ReduceMax: \p Op is the row's. The
/// axes are where the definition reads them (attribute, or operand from
/// ReduceSum-13 and the others' version 18).
template <ReduceOp Op> EvalResults evalReduce(EvalContext &Ctx) {
  const Node &N = Ctx.getNode();
  std::optional<Literal> A = literalOperand(Ctx, 0);
  if (!A)
    return std::nullopt;
  llvm::StringRef Name = N.getOpType();
  if (!isNumericType(A->ET))
    return Ctx.fail(Name + " does not take " + typeName(A->ET) + " operands");
  if (A->ET == TP::UINT64 && Op != ReduceOp::Sum && Op != ReduceOp::Prod)
    return Ctx.fail("uint64 is not supported by " + Name);
  int64_t Rank = A->Dims.size();
  std::optional<std::vector<int64_t>> Axes;
  if (!Ctx.getAxes(Axes))
    return std::nullopt;
  bool KeepDims = N.getAttrInt("keepdims", 1) != 0;
  if ((!Axes || Axes->empty()) && N.getAttrInt("noop_with_empty_axes", 0))
    return oneLiteral(Ctx, *A);
  std::vector<bool> Reduced(Rank, !Axes || Axes->empty());
  if (Axes && !Axes->empty()) {
    if (!Ctx.normalizeAxes(*Axes, Rank))
      return std::nullopt;
    for (int64_t X : *Axes)
      Reduced[X] = true;
  }
  std::vector<int64_t> OutDims, KeptDims;
  for (int64_t I = 0; I < Rank; ++I) {
    KeptDims.push_back(Reduced[I] ? 1 : A->Dims[I]);
    if (!Reduced[I] || KeepDims)
      OutDims.push_back(KeptDims.back());
  }
  int64_t Num = *numElements(OutDims);
  if (!Ctx.fitsBudget(A->ET, Num))
    return std::nullopt;
  if (A->size() == 0 && (Op == ReduceOp::Min || Op == ReduceOp::Max))
    return Ctx.fail(Name + " of an empty tensor");
  // Each input element lands in the output element of its kept dims.
  std::vector<int64_t> KeptStrides = stridesOf(KeptDims), Strides(Rank, 0);
  for (int64_t I = 0; I < Rank; ++I)
    if (!Reduced[I])
      Strides[I] = KeptStrides[I];
  std::vector<int64_t> Dst = stridedIndices(A->Dims, Strides);
  Literal Out = Literal::make(A->ET, OutDims);
  std::vector<bool> Seen(Num, false);
  if (A->isReal()) {
    Out.Reals.assign(Num, Op == ReduceOp::Prod ? 1.0 : 0.0);
    for (size_t K = 0; K < Dst.size(); ++K) {
      double &R = Out.Reals[Dst[K]];
      double X = A->Reals[K];
      if (Op == ReduceOp::Sum)
        R += X;
      else if (Op == ReduceOp::Prod)
        R *= X;
      else if (!Seen[Dst[K]] || std::isnan(X))
        R = X;
      else if (!std::isnan(R))
        R = Op == ReduceOp::Min ? std::min(R, X) : std::max(R, X);
      Seen[Dst[K]] = true;
    }
  } else {
    Out.Ints.assign(Num, Op == ReduceOp::Prod ? 1 : 0);
    for (size_t K = 0; K < Dst.size(); ++K) {
      int64_t &R = Out.Ints[Dst[K]];
      int64_t X = A->Ints[K];
      if (Op == ReduceOp::Sum)
        R = wrapInt(A->ET, uint64_t(R) + uint64_t(X));
      else if (Op == ReduceOp::Prod)
        R = wrapInt(A->ET, uint64_t(R) * uint64_t(X));
      else if (!Seen[Dst[K]])
        R = X;
      else
        R = Op == ReduceOp::Min ? std::min(R, X) : std::max(R, X);
      Seen[Dst[K]] = true;
    }
  }
  return oneLiteral(Ctx, Out);
}

using EW = Elementwise;
using BC = Broadcast;

constexpr EvalRule EvalRows[] = {
    {"", "Abs", 1, evalUnary<EW::Abs>},
    {"", "Add", 1, evalBinary<EW::Add, BC::Legacy>},
    {"", "Add", 7, evalBinary<EW::Add, BC::Numpy>},
    {"", "And", 1, evalBinary<EW::And, BC::Legacy>},
    {"", "And", 7, evalBinary<EW::And, BC::Numpy>},
    {"", "Ceil", 1, evalUnary<EW::Ceil>},
    {"", "Clip", 1, evalClip<From::Attribute>},
    {"", "Clip", 11, evalClip<From::Input>},
    {"", "Cos", 7, evalTrig<false>},
    {"", "Div", 1, evalBinary<EW::Div, BC::Legacy>},
    {"", "Div", 7, evalBinary<EW::Div, BC::Numpy>},
    {"", "Equal", 1, evalBinary<EW::Equal, BC::Legacy>},
    {"", "Equal", 7, evalBinary<EW::Equal, BC::Numpy>},
    {"", "Floor", 1, evalUnary<EW::Floor>},
    {"", "Greater", 1, evalBinary<EW::Greater, BC::Legacy>},
    {"", "Greater", 7, evalBinary<EW::Greater, BC::Numpy>},
    {"", "GreaterOrEqual", 1, evalBinary<EW::GreaterOrEqual, BC::Legacy>},
    {"", "GreaterOrEqual", 7, evalBinary<EW::GreaterOrEqual, BC::Numpy>},
    {"", "Less", 1, evalBinary<EW::Less, BC::Legacy>},
    {"", "Less", 7, evalBinary<EW::Less, BC::Numpy>},
    {"", "LessOrEqual", 1, evalBinary<EW::LessOrEqual, BC::Legacy>},
    {"", "LessOrEqual", 7, evalBinary<EW::LessOrEqual, BC::Numpy>},
    {"", "Max", 1, evalVariadic<EW::Max, BC::None>},
    {"", "Max", 8, evalVariadic<EW::Max, BC::Numpy>},
    {"", "MatMul", 1, evalMatMul},
    {"", "Min", 1, evalVariadic<EW::Min, BC::None>},
    {"", "Min", 8, evalVariadic<EW::Min, BC::Numpy>},
    // Mod (opset 10) never had the legacy attributes.
    {"", "Mod", 1, evalBinary<EW::Mod, BC::Numpy>},
    {"", "Mul", 1, evalBinary<EW::Mul, BC::Legacy>},
    {"", "Mul", 7, evalBinary<EW::Mul, BC::Numpy>},
    {"", "Neg", 1, evalUnary<EW::Neg>},
    {"", "Not", 1, evalUnary<EW::Not>},
    {"", "Or", 1, evalBinary<EW::Or, BC::Legacy>},
    {"", "Or", 7, evalBinary<EW::Or, BC::Numpy>},
    {"", "Pow", 1, evalPow<BC::Legacy>},
    {"", "Pow", 7, evalPow<BC::Numpy>},
    {"", "ReduceMax", 1, evalReduce<ReduceOp::Max>},
    {"", "ReduceMin", 1, evalReduce<ReduceOp::Min>},
    {"", "ReduceProd", 1, evalReduce<ReduceOp::Prod>},
    {"", "ReduceSum", 1, evalReduce<ReduceOp::Sum>},
    {"", "Sin", 7, evalTrig<true>},
    {"", "Sqrt", 1, evalUnary<EW::Sqrt>},
    {"", "Sub", 1, evalBinary<EW::Sub, BC::Legacy>},
    {"", "Sub", 7, evalBinary<EW::Sub, BC::Numpy>},
    {"", "Sum", 1, evalVariadic<EW::Sum, BC::None>},
    {"", "Sum", 8, evalVariadic<EW::Sum, BC::Numpy>},
    {"", "Xor", 1, evalBinary<EW::Xor, BC::Legacy>},
    {"", "Xor", 7, evalBinary<EW::Xor, BC::Numpy>},
};

llvm::ArrayRef<EvalRule> evalRules() { return EvalRows; }
} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Local patterns (PatternRules.h): arithmetic by its identity element
//===----------------------------------------------------------------------===//
//
// Before:  Y = Mul(X, ONE)     # ONE: a constant of ones, float[1] or [C,1,1]
// After:   users of Y read X
//
// Mul and Div by 1, Add and Sub of 0, Pow by 1 (the identity on the right;
// Mul by 1 and Add of 0 on either side). x*1, x/1, x-0 and x^1 are x
// exactly; x+0 is x but for the sign of a zero x (-0 + 0 = +0), which no
// comparison can tell apart. Each fires only where the constant cannot
// broadcast X to a bigger shape (broadcastKeepsShape: X's rank known, every
// dim of the constant 1 or equal to X's known dim), so Y's shape is X's at
// every shape X's symbols allow.

namespace {

/// Forwards operand \p XIndex of the binary \p N when the other operand is
/// a constant of \p Identity that keeps X's shape.
LogicalResult forwardIfIdentity(Node &N, Rewriter &R, unsigned XIndex,
                                double Identity) {
  if (N.getNumOperands() != 2)
    return R.notifyMatchFailure(N, "expected two operands");
  Value *X = pattern::operandOrNull(N, XIndex);
  Value *C = pattern::operandOrNull(N, 1 - XIndex);
  if (!X || !C)
    return R.notifyMatchFailure(N, "operand omitted");
  if (!pattern::isSplatConstant(C, Identity))
    return R.notifyMatchFailure(N, "operand is not a constant identity");
  Tensor CT = getConstantValue(*C);
  if (!pattern::broadcastKeepsShape(X->getType(), CT.getDimsRef()))
    return R.notifyMatchFailure(N,
                                "the constant may broadcast to a bigger shape");
  return pattern::forwardOperand(N, X, R);
}

LogicalResult eraseRightIdentity1(Node &N, Rewriter &R) {
  return forwardIfIdentity(N, R, 0, 1.0);
}
LogicalResult eraseLeftIdentity1(Node &N, Rewriter &R) {
  return forwardIfIdentity(N, R, 1, 1.0);
}
LogicalResult eraseRightIdentity0(Node &N, Rewriter &R) {
  return forwardIfIdentity(N, R, 0, 0.0);
}
LogicalResult eraseLeftIdentity0(Node &N, Rewriter &R) {
  return forwardIfIdentity(N, R, 1, 0.0);
}

const LocalPattern MulPatterns[] = {{"erase-mul-by-one", eraseRightIdentity1},
                                    {"erase-one-mul", eraseLeftIdentity1},
                                    {"fuse-conv-mul", pattern::fuseConvMul}};
const LocalPattern DivPatterns[] = {{"erase-div-by-one", eraseRightIdentity1}};
const LocalPattern PowPatterns[] = {{"erase-pow-one", eraseRightIdentity1}};
const LocalPattern AddPatterns[] = {{"erase-add-zero", eraseRightIdentity0},
                                    {"erase-zero-add", eraseLeftIdentity0},
                                    {"fuse-conv-add", pattern::fuseConvAdd}};
const LocalPattern SubPatterns[] = {{"erase-sub-zero", eraseRightIdentity0}};

// From opset 7: before it, these ops broadcast only with `broadcast=1`
// and an `axis`, which these patterns do not read.
const PatternRule PatternRows[] = {
    {"", "Add", 7, AddPatterns}, {"", "Sub", 7, SubPatterns},
    {"", "Mul", 7, MulPatterns}, {"", "Div", 7, DivPatterns},
    {"", "Pow", 7, PowPatterns},
};

} // namespace

void ops::registerMathOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
  B.addPatterns(PatternRows);
}
