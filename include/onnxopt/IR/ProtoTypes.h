//===- ProtoTypes.h - TypeProto <-> Type conversion ------------*- C++ -*-===//
//
// The one TypeProto <-> Type mapping, shared by the binary importer and
// exporter, the text importer (through a ModelProto) and the analysis layer's
// shape-inference adapter, which talks to ONNX in protos. It includes ONNX's
// protobuf headers, so include it only from .cpp files that talk to ONNX.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_PROTOTYPES_H
#define ONNXOPT_IR_PROTOTYPES_H

#include "onnxopt/IR/Type.h"
#include <onnx/onnx_pb.h>

namespace onnxopt {
namespace detail {

/// Converts one dim (value, param or unknown, with its denotation).
Dim importDim(const onnx::TensorShapeProto::Dimension &D);

/// Converts a TypeProto; an empty TypeProto becomes Type::Kind::None.
Type importType(const onnx::TypeProto &TP);

/// The shape of the tensor type in \p TP, through sequence, optional and map
/// types (a type holds one kind, so there is at most one), or null.
const onnx::TensorShapeProto *innerShapeOf(const onnx::TypeProto &TP);

/// The rank of innerShapeOf(\p TP); 0 without a shape.
size_t maxRankOf(const onnx::TypeProto &TP);

/// Writes \p T into \p TP (merging into what is there). Type::Kind::None
/// writes nothing.
void exportType(const Type &T, onnx::TypeProto &TP);

/// Unknown-field number marking a dense TensorProto that the importer made
/// from a sparse initializer; the sparse form stays in the graph residual.
constexpr int DensifiedSparseMarker = 536870000;

/// True when \p TP carries DensifiedSparseMarker.
bool isDensifiedSparse(const onnx::TensorProto &TP);

/// Moves \p From into \p To (on the heap): \p From may be on an arena, and
/// its raw_data is moved, never copied (typed payloads are copied; exporters
/// write large tensors as raw_data).
void moveTensorProto(onnx::TensorProto &From, onnx::TensorProto &To);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_IR_PROTOTYPES_H
