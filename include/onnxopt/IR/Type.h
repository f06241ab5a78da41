//===- Type.h - Value types and symbolic dims ------------------*- C++ -*-===//
//
// Mirrors onnx.TypeProto without depending on protobuf: tensors with dims
// that are known, symbolic or unknown; sparse tensors; sequence, optional and
// map types; opaque types. Everything is carried so that export is lossless.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_TYPE_H
#define ONNXOPT_IR_TYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace onnxopt {

/// One dimension of a tensor shape.
class Dim {
public:
  enum class Kind : uint8_t { Unknown, Known, Symbol };

  Dim() = default;
  static Dim unknown() { return Dim(); }
  static Dim known(int64_t V) {
    Dim D;
    D.K = Kind::Known;
    D.Val = V;
    return D;
  }
  static Dim symbol(llvm::StringRef Name) {
    Dim D;
    D.K = Kind::Symbol;
    D.Sym = Name.str();
    return D;
  }

  Kind getKind() const { return K; }
  bool isKnown() const { return K == Kind::Known; }
  bool isSymbol() const { return K == Kind::Symbol; }
  bool isUnknown() const { return K == Kind::Unknown; }
  int64_t getValue() const { return Val; }
  llvm::StringRef getSymbol() const { return Sym; }

  /// The optional dim denotation (e.g. "DATA_BATCH"); carried, not modeled.
  llvm::StringRef getDenotation() const { return Denotation; }
  void setDenotation(llvm::StringRef D) { Denotation = D.str(); }

  bool operator==(const Dim &O) const {
    return K == O.K && Val == O.Val && Sym == O.Sym &&
           Denotation == O.Denotation;
  }
  bool operator!=(const Dim &O) const { return !(*this == O); }

private:
  Kind K = Kind::Unknown;
  int64_t Val = 0;
  std::string Sym;
  std::string Denotation;
};

/// A value type. Kind::None means "no type recorded" (e.g. an intermediate
/// value without value_info).
class Type {
public:
  enum class Kind : uint8_t {
    None,
    Tensor,
    SparseTensor,
    Sequence,
    Optional,
    Map,
    Opaque
  };

  Type() = default;
  /// A tensor of \p ElemType (onnx::TensorProto_DataType value). Without
  /// \p Shape the rank is unknown.
  static Type tensor(int32_t ElemType,
                     std::optional<std::vector<Dim>> Shape = std::nullopt);
  static Type sparseTensor(int32_t ElemType,
                           std::optional<std::vector<Dim>> Shape = std::nullopt);
  static Type sequence(Type Elem);
  static Type optional(Type Elem);
  static Type map(int32_t KeyType, Type ValueType);
  static Type opaque(llvm::StringRef Domain, llvm::StringRef Name);

  Kind getKind() const { return K; }
  bool isNone() const { return K == Kind::None; }
  bool isTensor() const { return K == Kind::Tensor; }

  /// Tensor/sparse element type; map key type. 0 = undefined.
  int32_t getElemType() const { return ElemType; }
  void setElemType(int32_t T) { ElemType = T; }

  /// Tensor/sparse shape; std::nullopt when the rank is unknown.
  bool hasShape() const { return Shape.has_value(); }
  const std::optional<std::vector<Dim>> &getShape() const { return Shape; }
  llvm::ArrayRef<Dim> getDims() const {
    return Shape ? llvm::ArrayRef<Dim>(*Shape) : llvm::ArrayRef<Dim>();
  }
  size_t getRank() const { return Shape ? Shape->size() : 0; }
  void setShape(std::optional<std::vector<Dim>> S) { Shape = std::move(S); }
  std::vector<Dim> &getMutableDims() { return *Shape; }

  /// True when this is a tensor whose every dim is known.
  bool isStatic() const;

  /// Sequence/optional element type or map value type.
  const Type &getElementType() const { return Inner.front(); }
  Type &getMutableElementType() { return Inner.front(); }

  llvm::StringRef getOpaqueDomain() const { return OpaqueDomain; }
  llvm::StringRef getOpaqueName() const { return OpaqueName; }

  /// The type denotation (TypeProto.denotation); carried, not modeled.
  llvm::StringRef getDenotation() const { return Denotation; }
  void setDenotation(llvm::StringRef D) { Denotation = D.str(); }

  bool operator==(const Type &O) const;
  bool operator!=(const Type &O) const { return !(*this == O); }

  /// Prints in ONNX text syntax, e.g. `float[N,3,224,224]`, `seq(float[])`.
  void print(llvm::raw_ostream &OS) const;
  std::string str() const;

private:
  Kind K = Kind::None;
  int32_t ElemType = 0;
  std::optional<std::vector<Dim>> Shape;
  std::vector<Type> Inner; // one element for sequence/optional/map value
  std::string OpaqueDomain, OpaqueName;
  std::string Denotation;
};

/// Name of an onnx::TensorProto_DataType as used in ONNX text ("float",
/// "int64", ...); empty for unknown codes.
llvm::StringRef getElemTypeName(int32_t ElemType);
/// Inverse of getElemTypeName; 0 if unknown.
int32_t getElemTypeFromName(llvm::StringRef Name);
/// Byte size of one element of a fixed-size type; 0 for string/undefined.
size_t getElemTypeSize(int32_t ElemType);

} // namespace onnxopt

#endif // ONNXOPT_IR_TYPE_H
