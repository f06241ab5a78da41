//===- TensorOps.cpp - Shape and data-movement ops: Shape, Reshape, Slice, Gather, Concat, Split, ...
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

constexpr ShapeOperand CenterCropPadOperands1[] = {{1, "shape"}};
constexpr ShapeOperand ExpandOperands1[] = {{1, "shape"}};
constexpr ShapeOperand OneHotOperands1[] = {{1, "depth"}};
constexpr ShapeOperand ReshapeOperands5[] = {{1, "shape"}};
constexpr ShapeOperand SliceOperands10[] = {{1, "starts"}, {2, "ends"}, {3, "axes"}, {4, "steps"}};
constexpr ShapeOperand SqueezeOperands13[] = {{1, "axes"}};
constexpr ShapeOperand TileOperands1[] = {{1, "tiles"}, {2, "axis"}};
constexpr ShapeOperand TileOperands6[] = {{1, "repeats"}};
constexpr ShapeOperand TopKOperands10[] = {{1, "k"}};
constexpr ShapeOperand UnsqueezeOperands13[] = {{1, "axes"}};

constexpr TraitRow Traits[] = {
    {"", "Cast", 1, ShapePreserving | MovesElements | ShapeArithmetic, {}, {}, -1},
    {"", "CastLike", 1, ShapePreserving, {}, {}, -1},
    {"", "CenterCropPad", 1, 0, CenterCropPadOperands1, {}, -1},
    {"", "Compress", 1, ValueDependentShape, {}, {}, -1},
    {"", "Concat", 1, ShapeArithmetic, {}, {}, -1},
    {"", "Constant", 1, ConstantProducer, {}, {}, -1},
    {"", "ConstantOfShape", 1, FillsShape, {}, {}, -1},
    {"", "CumSum", 1, ShapePreserving, {}, {}, -1},
    {"", "Expand", 1, MovesElements, ExpandOperands1, {}, -1},
    {"", "Flatten", 1, MovesElements | ViewLike, {}, {}, -1},
    {"", "Gather", 1, ShapeArithmetic, {}, {}, -1},
    {"", "Identity", 1, ShapePreserving | MovesElements | IdentityOp | ShapeArithmetic, {}, {}, -1},
    {"", "NonZero", 1, ValueDependentShape, {}, {}, -1},
    {"", "OneHot", 1, 0, OneHotOperands1, {}, -1},
    {"", "Reshape", 1, MovesElements | ViewLike, {}, {}, -1},
    {"", "Reshape", 5, MovesElements | ViewLike, ReshapeOperands5, {}, -1},
    {"", "ReverseSequence", 1, ShapePreserving, {}, {}, -1},
    {"", "Shape", 1, ReadsTypeOnly, {}, {}, -1},
    {"", "Size", 1, ReadsTypeOnly | ShapeArithmetic, {}, {}, -1},
    {"", "Slice", 1, MovesElements | ShapeArithmetic, {}, {}, -1},
    {"", "Slice", 10, MovesElements | ShapeArithmetic, SliceOperands10, {}, -1},
    {"", "Squeeze", 1, MovesElements | ShapeArithmetic | ViewLike | RemovesUnitDims, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "Squeeze", 13, MovesElements | ShapeArithmetic | ViewLike | RemovesUnitDims, SqueezeOperands13, {AxesSource::Input, 1, "axes"}, -1},
    {"", "Tile", 1, MovesElements, TileOperands1, {}, -1},
    {"", "Tile", 6, MovesElements, TileOperands6, {}, -1},
    {"", "TopK", 1, 0, {}, {}, -1},
    {"", "TopK", 10, ValueDependentUnlessConstant, TopKOperands10, {}, 1},
    {"", "Transpose", 1, MovesElements, {}, {}, -1},
    {"", "Trilu", 1, ShapePreserving, {}, {}, -1},
    {"", "Unique", 1, ValueDependentShape, {}, {}, -1},
    {"", "Unsqueeze", 1, MovesElements | ShapeArithmetic | ViewLike | InsertsUnitDims, {}, {AxesSource::Attribute, 0, "axes"}, -1},
    {"", "Unsqueeze", 13, MovesElements | ShapeArithmetic | ViewLike | InsertsUnitDims, UnsqueezeOperands13, {AxesSource::Input, 1, "axes"}, -1},
    {"", "Where", 1, ElementwiseBroadcasting, {}, {}, -1},
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

void ops::registerTensorOps(OpRegistryBuilder &B) {
  B.addTraits(Traits);
  B.addPreconditions(preconditionRules());
  B.addInfer(inferRules());
  B.addDims(dimRules());
  B.addEval(evalRules());
}
