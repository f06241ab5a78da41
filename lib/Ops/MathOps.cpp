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

#include "PreconditionSupport.h"
#include "onnxopt/IR/IR.h"

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
#include "InferSupport.h"
#include "SymbolicRefinement.h"
#include "onnxopt/Ops/OpFacts.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <onnx/defs/tensor_proto_util.h>

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
