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
    {"", "Add", 1, ElementwiseBroadcasting | ShapeArithmetic | Arithmetic, {}, {}, -1},
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
    {"", "Div", 1, ElementwiseBroadcasting | ShapeArithmetic | Arithmetic, {}, {}, -1},
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
    {"", "Max", 1, ElementwiseBroadcasting | ShapeArithmetic, {}, {}, -1},
    {"", "Mean", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Min", 1, ElementwiseBroadcasting | ShapeArithmetic, {}, {}, -1},
    {"", "Mish", 1, ShapePreserving, {}, {}, -1},
    {"", "Mod", 1, ElementwiseBroadcasting, {}, {}, -1},
    {"", "Mul", 1, ElementwiseBroadcasting | ShapeArithmetic | Arithmetic, {}, {}, -1},
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
    {"", "Sub", 1, ElementwiseBroadcasting | ShapeArithmetic | Arithmetic, {}, {}, -1},
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

namespace {
llvm::ArrayRef<DimRule> dimRules() { return {}; }
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
