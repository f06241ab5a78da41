//===- ShapeOperands.cpp - Operands whose values decide result shapes -----===//
#include "onnxopt/Analysis/ShapeOperands.h"
#include "onnxopt/IR/IR.h"

using namespace onnxopt;

std::vector<ShapeOperand> onnxopt::getShapeOperands(const Node &N,
                                                   int64_t Opset) {
  llvm::StringRef Op = N.getOpType();
  if (Op == "Reshape" && Opset >= 5)
    return {{1, "shape"}};
  if (Op == "Expand")
    return {{1, "shape"}};
  if (Op == "Tile")
    return Opset >= 6 ? std::vector<ShapeOperand>{{1, "repeats"}}
                      : std::vector<ShapeOperand>{{1, "tiles"}, {2, "axis"}};
  if (Op == "Slice" && Opset >= 10)
    return {{1, "starts"}, {2, "ends"}, {3, "axes"}, {4, "steps"}};
  if (Op == "Resize")
    return Opset >= 11 ? std::vector<ShapeOperand>{{2, "scales"}, {3, "sizes"}}
                       : std::vector<ShapeOperand>{{1, "scales"}};
  if (Op == "Upsample" && Opset >= 9)
    return {{1, "scales"}};
  if (Op == "ConstantOfShape")
    return {{0, "shape"}};
  if (Op == "Range")
    return {{0, "start"}, {1, "limit"}, {2, "delta"}};
  if (Op == "Pad" && Opset >= 11)
    return {{1, "pads"}, {3, "axes"}};
  if (Op == "TopK" && Opset >= 10)
    return {{1, "k"}};
  if (Op == "OneHot")
    return {{1, "depth"}};
  if ((Op == "Squeeze" || Op == "Unsqueeze") && Opset >= 13)
    return {{1, "axes"}};
  if (Op == "ReduceSum" && Opset >= 13)
    return {{1, "axes"}};
  if (Op.startswith("Reduce") && Opset >= 18)
    return {{1, "axes"}};
  if (Op == "Split" && (Opset >= 13 || Opset < 2))
    return {{1, "split"}};
  if (Op == "CenterCropPad")
    return {{1, "shape"}};
  if (Op == "MaxUnpool")
    return {{2, "output_shape"}};
  return {};
}

