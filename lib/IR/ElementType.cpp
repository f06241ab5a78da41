//===- ElementType.cpp - Tensor element types -----------------------------===//
#include "onnxopt/IR/ElementType.h"
#include "llvm/ADT/STLExtras.h"

using namespace onnxopt;

namespace {
struct ElementTypeInfo {
  ElementType T;
  const char *Name;
  unsigned Bits;
  int64_t MinIr;
};

/// Names are the ONNX text spellings (onnx/defs/parser.h in newer ONNX).
const ElementTypeInfo Infos[] = {
    {ElementType::Float, "float", 32, 3},
    {ElementType::UInt8, "uint8", 8, 3},
    {ElementType::Int8, "int8", 8, 3},
    {ElementType::UInt16, "uint16", 16, 3},
    {ElementType::Int16, "int16", 16, 3},
    {ElementType::Int32, "int32", 32, 3},
    {ElementType::Int64, "int64", 64, 3},
    {ElementType::String, "string", 0, 3},
    {ElementType::Bool, "bool", 8, 3},
    {ElementType::Float16, "float16", 16, 3},
    {ElementType::Double, "double", 64, 3},
    {ElementType::UInt32, "uint32", 32, 3},
    {ElementType::UInt64, "uint64", 64, 3},
    {ElementType::Complex64, "complex64", 64, 3},
    {ElementType::Complex128, "complex128", 128, 3},
    {ElementType::BFloat16, "bfloat16", 16, 3},
    {ElementType::Float8E4M3FN, "float8e4m3fn", 8, 9},
    {ElementType::Float8E4M3FNUZ, "float8e4m3fnuz", 8, 9},
    {ElementType::Float8E5M2, "float8e5m2", 8, 9},
    {ElementType::Float8E5M2FNUZ, "float8e5m2fnuz", 8, 9},
    {ElementType::UInt4, "uint4", 4, 10},
    {ElementType::Int4, "int4", 4, 10},
    {ElementType::Float4E2M1, "float4e2m1", 4, 11},
};

const ElementTypeInfo *find(ElementType T) {
  for (const ElementTypeInfo &I : Infos)
    if (I.T == T)
      return &I;
  return nullptr;
}
} // namespace

llvm::StringRef onnxopt::getElementTypeName(ElementType T) {
  const ElementTypeInfo *I = find(T);
  return I ? I->Name : "";
}

ElementType onnxopt::getElementTypeFromName(llvm::StringRef Name) {
  for (const ElementTypeInfo &I : Infos)
    if (Name == I.Name)
      return I.T;
  return ElementType::Undefined;
}

unsigned onnxopt::getElementTypeBits(ElementType T) {
  const ElementTypeInfo *I = find(T);
  return I ? I->Bits : 0;
}

int64_t onnxopt::getElementTypeMinIrVersion(ElementType T) {
  const ElementTypeInfo *I = find(T);
  return I ? I->MinIr : 0;
}
