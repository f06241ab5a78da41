//===- ShapeOperands.h - Operands whose values decide result shapes -*- C++ -*-===//
//
// Reshape's shape, Expand's shape, Slice's starts and ends, Resize's sizes,
// ...: the operands whose contents (not their shapes) decide the shape of a
// node's results, by op and opset. check-static wants them constant;
// make-dynamic wants them computed from shapes, not given as data.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_SHAPEOPERANDS_H
#define ONNXOPT_ANALYSIS_SHAPEOPERANDS_H

#include "onnxopt/Ops/OpDef.h" // ShapeOperand
#include <cstdint>
#include <vector>

namespace onnxopt {

class Node;

/// The shape-deciding operands of an op of the default domain at \p Opset.
std::vector<ShapeOperand> getShapeOperands(const Node &N, int64_t Opset);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_SHAPEOPERANDS_H
