//===- NNOps.cpp - Convolutions, pools, normalizations, resampling, recurrent layers
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

constexpr ShapeOperand MaxUnpoolOperands1[] = {{2, "output_shape"}};
constexpr ShapeOperand ResizeOperands1[] = {{1, "scales"}};
constexpr ShapeOperand ResizeOperands11[] = {{2, "scales"}, {3, "sizes"}};
constexpr ShapeOperand UpsampleOperands9[] = {{1, "scales"}};

constexpr TraitRow Traits[] = {
    {"", "AveragePool", 1, KernelOp, {}, {}, -1},
    {"", "BatchNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "Conv", 1, KernelOp, {}, {}, -1},
    {"", "ConvInteger", 1, KernelOp, {}, {}, -1},
    {"", "ConvTranspose", 1, KernelOp, {}, {}, -1},
    {"", "DeformConv", 1, KernelOp, {}, {}, -1},
    {"", "DequantizeLinear", 1, ShapePreserving, {}, {}, -1},
    {"", "Dropout", 1, ShapePreserving | Nondeterministic, {}, {}, -1},
    {"", "GRU", 1, Recurrent, {}, {}, -1},
    {"", "Hardmax", 1, ShapePreserving, {}, {}, -1},
    {"", "InstanceNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "LRN", 1, ShapePreserving, {}, {}, -1},
    {"", "LSTM", 1, Recurrent, {}, {}, -1},
    {"", "LayerNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "LogSoftmax", 1, ShapePreserving, {}, {}, -1},
    {"", "LpNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "LpPool", 1, KernelOp, {}, {}, -1},
    {"", "MaxPool", 1, KernelOp, {}, {}, -1},
    {"", "MaxUnpool", 1, KernelOp, MaxUnpoolOperands1, {}, -1},
    {"", "MeanVarianceNormalization", 1, ShapePreserving, {}, {}, -1},
    {"", "NonMaxSuppression", 1, ValueDependentShape, {}, {}, -1},
    {"", "QLinearConv", 1, KernelOp, {}, {}, -1},
    {"", "QuantizeLinear", 1, ShapePreserving, {}, {}, -1},
    {"", "RNN", 1, Recurrent, {}, {}, -1},
    {"", "Resize", 1, Resampling, ResizeOperands1, {}, -1},
    {"", "Resize", 11, Resampling, ResizeOperands11, {}, -1},
    {"", "Softmax", 1, ShapePreserving, {}, {}, -1},
    {"", "Upsample", 1, Resampling, {}, {}, -1},
    {"", "Upsample", 9, Resampling, UpsampleOperands9, {}, -1},
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

void ops::registerNNOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
