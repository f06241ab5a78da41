//===- ElementType.h - Tensor element types -----------------------*- C++
//-*-===//
//
// The element types of ONNX tensors, numbered as onnx::TensorProto_DataType
// (including the types newer than ONNX 1.12's proto: float8, int4/uint4,
// float4e2m1), with their ONNX text names and sizes. The IR stores element
// types as these int32 codes, so a code this enum does not name still
// round-trips.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_ELEMENTTYPE_H
#define ONNXOPT_IR_ELEMENTTYPE_H

#include "llvm/ADT/StringRef.h"
#include <cstddef>
#include <cstdint>

namespace onnxopt {

enum class ElementType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  // IR 9 (ONNX 1.14).
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  // IR 10 (ONNX 1.16).
  UInt4 = 21,
  Int4 = 22,
  // IR 11 (ONNX 1.18).
  Float4E2M1 = 23,
};

/// The ONNX text name ("float", "float8e4m3fn", ...), or "" if unknown.
llvm::StringRef getElementTypeName(ElementType T);
/// Inverse of getElementTypeName; Undefined if unknown.
ElementType getElementTypeFromName(llvm::StringRef Name);
/// Bits per element: 4 for int4/uint4/float4e2m1, 0 for string/undefined.
unsigned getElementTypeBits(ElementType T);
/// True for the types ONNX 1.12's proto and parser know (codes 1-16).
inline bool isOnnx112ElementType(int32_t Code) {
  return Code >= 1 && Code <= 16;
}
/// True for float8, int4/uint4 and float4e2m1.
inline bool isPostOnnx112ElementType(int32_t Code) {
  return Code >= 17 && Code <= 23;
}
/// The IR version that introduced the type (3 for the ONNX 1.12 types).
int64_t getElementTypeMinIrVersion(ElementType T);

} // namespace onnxopt

#endif // ONNXOPT_IR_ELEMENTTYPE_H
