//===- Type.cpp - Value types and symbolic dims ---------------------------===//
#include "onnxopt/IR/Type.h"
#include "llvm/Support/raw_ostream.h"

using namespace onnxopt;

Type Type::tensor(int32_t ElemType, std::optional<std::vector<Dim>> Shape) {
  Type T;
  T.K = Kind::Tensor;
  T.ElemType = ElemType;
  T.Shape = std::move(Shape);
  return T;
}

Type Type::sparseTensor(int32_t ElemType,
                        std::optional<std::vector<Dim>> Shape) {
  Type T = tensor(ElemType, std::move(Shape));
  T.K = Kind::SparseTensor;
  return T;
}

Type Type::sequence(Type Elem) {
  Type T;
  T.K = Kind::Sequence;
  T.Inner.push_back(std::move(Elem));
  return T;
}

Type Type::optional(Type Elem) {
  Type T;
  T.K = Kind::Optional;
  T.Inner.push_back(std::move(Elem));
  return T;
}

Type Type::map(int32_t KeyType, Type ValueType) {
  Type T;
  T.K = Kind::Map;
  T.ElemType = KeyType;
  T.Inner.push_back(std::move(ValueType));
  return T;
}

Type Type::opaque(llvm::StringRef Domain, llvm::StringRef Name) {
  Type T;
  T.K = Kind::Opaque;
  T.OpaqueDomain = Domain.str();
  T.OpaqueName = Name.str();
  return T;
}

bool Type::isStatic() const {
  if (K != Kind::Tensor || !Shape)
    return false;
  for (const Dim &D : *Shape)
    if (!D.isKnown())
      return false;
  return true;
}

bool Type::operator==(const Type &O) const {
  return K == O.K && ElemType == O.ElemType && Shape == O.Shape &&
         Inner == O.Inner && OpaqueDomain == O.OpaqueDomain &&
         OpaqueName == O.OpaqueName && Denotation == O.Denotation;
}

// ONNX text spells a scalar `float` and an unknown rank `float[]`.
static void printDims(llvm::raw_ostream &OS, const Type &T) {
  if (!T.hasShape()) {
    OS << "[]";
    return;
  }
  if (T.getDims().empty())
    return;
  OS << '[';
  llvm::ArrayRef<Dim> Dims = T.getDims();
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (I)
      OS << ',';
    const Dim &D = Dims[I];
    if (D.isKnown())
      OS << D.getValue();
    else if (D.isSymbol())
      OS << D.getSymbol();
    else
      OS << '?';
  }
  OS << ']';
}

void Type::print(llvm::raw_ostream &OS) const {
  switch (K) {
  case Kind::None:
    OS << "<none>";
    return;
  case Kind::Tensor:
  case Kind::SparseTensor: {
    if (K == Kind::SparseTensor)
      OS << "sparse_tensor(";
    llvm::StringRef Name = getElemTypeName(ElemType);
    if (Name.empty())
      OS << "elem" << ElemType;
    else
      OS << Name;
    printDims(OS, *this);
    if (K == Kind::SparseTensor)
      OS << ')';
    return;
  }
  case Kind::Sequence:
    OS << "seq(";
    getElementType().print(OS);
    OS << ')';
    return;
  case Kind::Optional:
    OS << "optional(";
    getElementType().print(OS);
    OS << ')';
    return;
  case Kind::Map:
    OS << "map(" << getElemTypeName(ElemType) << ", ";
    getElementType().print(OS);
    OS << ')';
    return;
  case Kind::Opaque:
    OS << "opaque(" << OpaqueDomain << ", " << OpaqueName << ')';
    return;
  }
}

std::string Type::str() const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  print(OS);
  return OS.str();
}

namespace {
struct ElemTypeInfo {
  int32_t Code;
  const char *Name;
  size_t Size;
};
} // namespace

// Codes are onnx::TensorProto_DataType; names are ONNX text spellings.
static const ElemTypeInfo ElemTypes[] = {
    {1, "float", 4},       {2, "uint8", 1},     {3, "int8", 1},
    {4, "uint16", 2},      {5, "int16", 2},     {6, "int32", 4},
    {7, "int64", 8},       {8, "string", 0},    {9, "bool", 1},
    {10, "float16", 2},    {11, "double", 8},   {12, "uint32", 4},
    {13, "uint64", 8},     {14, "complex64", 8}, {15, "complex128", 16},
    {16, "bfloat16", 2},   {17, "float8e4m3fn", 1}, {18, "float8e4m3fnuz", 1},
    {19, "float8e5m2", 1}, {20, "float8e5m2fnuz", 1}, {21, "uint4", 0},
    {22, "int4", 0},
};

llvm::StringRef onnxopt::getElemTypeName(int32_t ElemType) {
  for (const ElemTypeInfo &I : ElemTypes)
    if (I.Code == ElemType)
      return I.Name;
  return "";
}

int32_t onnxopt::getElemTypeFromName(llvm::StringRef Name) {
  for (const ElemTypeInfo &I : ElemTypes)
    if (Name == I.Name)
      return I.Code;
  return 0;
}

size_t onnxopt::getElemTypeSize(int32_t ElemType) {
  for (const ElemTypeInfo &I : ElemTypes)
    if (I.Code == ElemType)
      return I.Size;
  return 0;
}
