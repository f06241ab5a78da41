//===- InferSupport.h - Helpers of the inference rules ---------*- C++ -*-===//
//
// What the inference functions of several family files (lib/Ops/*Ops.cpp,
// "Type inference" sections) share: reading operands, attributes and shapes
// off an onnx::InferenceContext, and the two rules many ops follow (the
// first input's type, numpy broadcasting). Errors are thrown with
// fail_shape_inference, as ONNX's own functions do: the engine turns them
// into diagnostics naming the node.
//
// Private to lib/Ops: includes ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_OPS_INFERSUPPORT_H
#define ONNXOPT_LIB_OPS_INFERSUPPORT_H

#include <cstdint>
#include <onnx/defs/shape_inference.h>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {
namespace infer {

using onnx::InferenceContext;
using onnx::TensorProto;
using onnx::TensorShapeProto;

bool hasInput(InferenceContext &Ctx, size_t I);

/// The integer contents of constant input \p I (int64 or int32), if known.
std::optional<std::vector<int64_t>> intInput(InferenceContext &Ctx, size_t I);

/// The float contents of constant input \p I, if known.
std::optional<std::vector<float>> floatInput(InferenceContext &Ctx, size_t I);

/// The contents of input \p I as dims: constant values or what data
/// propagation knows (symbols included).
std::optional<TensorShapeProto> shapeInput(InferenceContext &Ctx, size_t I);

std::vector<int64_t> intsAttr(InferenceContext &Ctx, const char *Name);
std::string stringAttr(InferenceContext &Ctx, const char *Name,
                       const std::string &Default);

/// \p Axis resolved against \p Rank; throws naming \p What when out of
/// range.
int64_t normalizeAxis(int64_t Axis, int64_t Rank, const char *What);

void setElemType(InferenceContext &Ctx, size_t Out, int32_t ElemType);
int32_t inputElemType(InferenceContext &Ctx, size_t I);

/// A copy of input \p I's type (element type and shape) for output \p Out.
void sameAsInput(InferenceContext &Ctx, size_t I, size_t Out);

TensorShapeProto *outputShape(InferenceContext &Ctx, size_t Out);

void addDim(TensorShapeProto &S, const TensorShapeProto::Dimension &D);
void addDim(TensorShapeProto &S, int64_t V);
void addUnknownDim(TensorShapeProto &S);

std::optional<int64_t> known(const TensorShapeProto::Dimension &D);

/// The output has the type and shape of the first input (Mish, Gelu,
/// BitwiseNot, GroupNormalization, RMSNormalization, RotaryEmbedding).
void inferSameAsFirstInput(InferenceContext &Ctx);

/// Numpy broadcasting of two inputs (BitwiseAnd/Or/Xor-18, StringConcat).
void inferBroadcast(InferenceContext &Ctx);

} // namespace infer
} // namespace onnxopt

#endif // ONNXOPT_LIB_OPS_INFERSUPPORT_H
