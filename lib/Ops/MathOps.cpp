//===- MathOps.cpp - Elementwise math, comparisons, logic, reductions, MatMul and Gemm
//
// The op definitions of this family (OpDef.h), one section per concern.
// Everything onnx-opt knows about one of these ops is in this file: add a
// version by adding rows here and its row in OpTable.cpp.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/Preconditions.h"

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
    {"", "Add", 1, ElementwiseBroadcasting, {}, {}, -1},
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
    {"", "Div", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Elu", 1, ShapePreserving, {}, {}, -1},
    {"", "Equal", 1, ElementwiseBroadcasting | Comparison, {}, {}, -1},
    {"", "Erf", 1, ShapePreserving, {}, {}, -1},
    {"", "Exp", 1, ShapePreserving, {}, {}, -1},
    {"", "Floor", 1, ShapePreserving, {}, {}, -1},
    {"", "Gelu", 1, ShapePreserving, {}, {}, -1},
    {"", "Gemm", 1, 0, {}, {}, -1},
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
    {"", "MatMul", 1, 0, {}, {}, -1},
    {"", "Max", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Mean", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Min", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Mish", 1, ShapePreserving, {}, {}, -1},
    {"", "Mod", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Mul", 1, ElementwiseBroadcasting, {}, {}, -1},
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
    {"", "ReduceL1", 18, Reduction, ReduceL1Operands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceL2", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceL2", 18, Reduction, ReduceL2Operands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceLogSum", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceLogSum", 18, Reduction, ReduceLogSumOperands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceLogSumExp", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceLogSumExp", 18, Reduction, ReduceLogSumExpOperands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceMax", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceMax", 18, Reduction, ReduceMaxOperands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceMean", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceMean", 18, Reduction, ReduceMeanOperands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceMin", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceMin", 18, Reduction, ReduceMinOperands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceProd", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceProd", 18, Reduction, ReduceProdOperands18, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceSum", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceSum", 13, Reduction, ReduceSumOperands13, {AxesSource::Input, 1, "axes"}, -1},
    {"", "ReduceSumSquare", 1, Reduction, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "ReduceSumSquare", 18, Reduction, ReduceSumSquareOperands18, {AxesSource::Input, 1, "axes"}, -1},
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
    {"", "Sub", 1, ElementwiseBroadcasting, {}, {}, -1},
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
llvm::ArrayRef<PreconditionRule> preconditionRules() { return {}; }
} // namespace

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

namespace {
llvm::ArrayRef<InferRule> inferRules() { return {}; }
} // namespace

//===----------------------------------------------------------------------===//
// Dim transfer
//===----------------------------------------------------------------------===//

#include "DimSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/IndexRules.h"

namespace {
using namespace onnxopt::dims;

enum class Arithmetic { Add, Sub, Mul, Div };

/// Shape arithmetic on the data of Add, Sub, Mul and Div.
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
  if (Op == Arithmetic::Div && N.getOperand(0)) {
    auto E = static_cast<ElementType>(N.getOperand(0)->getType().getElemType());
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
    else if (IntegerDiv && Rt.isConstant() && Rt.getConstant() > 0 &&
             (!L.isConstant() || L.getConstant() >= 0))
      // Truncation is floor here: shape values are not negative.
      R.push_back(L.floorDiv(Rt.getConstant()));
    else
      return std::nullopt;
  }
  return R;
}

template <Arithmetic Op>
void transferArithmetic(DimContext &C, const DimList *X) {
  if (!broadcastOperands(C))
    return;
  if (std::optional<DimList> D = arithmeticData(C, Op))
    C.setData(0, std::move(*D));
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

constexpr DimRule DimRules[] = {
    {"", "Add", 1, transferArithmetic<Arithmetic::Add>},
    {"", "ArgMax", 1, transferArgMinMax, NeedsX},
    {"", "ArgMin", 1, transferArgMinMax, NeedsX},
    // The random ops below: no result dims modelled, and no condition on
    // dims beyond their recorded types (a shape that is the input's or an
    // attribute).
    {"", "Bernoulli", 1, nullptr},
    {"", "Div", 1, transferArithmetic<Arithmetic::Div>},
    {"", "Equal", 1, transferEqual},
    {"", "Gemm", 1, transferGemm, NeedsX},
    {"", "MatMul", 1, transferMatMul, NeedsX},
    {"", "Mul", 1, transferArithmetic<Arithmetic::Mul>},
    {"", "Multinomial", 1, nullptr},
    {"", "PRelu", 1, transferPRelu},
    {"", "RandomNormalLike", 1, nullptr},
    {"", "RandomUniformLike", 1, nullptr},
    {"", "Sub", 1, transferArithmetic<Arithmetic::Sub>},
};

llvm::ArrayRef<DimRule> dimRules() { return DimRules; }
} // namespace

//===----------------------------------------------------------------------===//
// Constant evaluation
//===----------------------------------------------------------------------===//

namespace {
llvm::ArrayRef<EvalRule> evalRules() { return {}; }
} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void ops::registerMathOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
