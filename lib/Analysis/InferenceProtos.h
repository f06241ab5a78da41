//===- InferenceProtos.h - IR pieces as inference functions see them -*- C++ -*-===//
//
// The conversions an onnx::InferenceContext over our IR needs, shared by the
// inference engine (ShapeInference.cpp) and save-time verification
// (lib/Export/StrictInference.cpp).
//
// Private to lib/Analysis and lib/Export: includes ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_ANALYSIS_INFERENCEPROTOS_H
#define ONNXOPT_LIB_ANALYSIS_INFERENCEPROTOS_H

#include "onnxopt/IR/Attribute.h"
#include "onnxopt/IR/Tensor.h"
#include <onnx/onnx_pb.h>

namespace onnxopt {
namespace detail {

/// The type of a tensor initializer, for constants that carry no type.
void tensorToTypeProto(const Tensor &T, onnx::TypeProto &P);

/// Converts an attribute for an inference function. Graph attributes keep
/// only their name and type: inference reaches subgraphs through
/// getGraphAttributeInferencer. Tensors above 64 KiB keep only their type
/// and dims (inference reads nothing else of them).
void attributeToProto(const Attribute &A, onnx::AttributeProto &P);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_ANALYSIS_INFERENCEPROTOS_H
