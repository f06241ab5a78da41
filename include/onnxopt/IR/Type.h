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
#include "llvm/ADT/None.h"
#include "llvm/ADT/PointerIntPair.h"
#include "llvm/ADT/StringMapEntry.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace onnxopt {

/// The largest tensor rank onnx-opt takes in (NumPy's limit; real models
/// stay far below). Shapes are copied per value and per node, so an
/// unbounded rank lets a small file (a shape tensor of 20k entries feeding
/// hundreds of nodes) demand gigabytes; such models are refused instead.
constexpr size_t MaxTensorRank = 64;

/// A string kept once per process: equal texts share one entry, which stays
/// valid until exit. For the texts that repeat across hundreds of thousands
/// of objects but have few distinct values (dim symbols and denotations, op
/// types and domains): a pointer instead of a std::string each.
using InternedString = llvm::StringMapEntry<llvm::NoneType>;
/// The entry of \p S in the process-wide pool (added if new; thread-safe).
const InternedString *internString(llvm::StringRef S);

/// One dimension of a tensor shape. 16 bytes and no heap part: a tensor
/// type is about its dims, and after shape inference every value has one.
class Dim {
public:
  enum class Kind : uint8_t { Unknown, Known, Symbol };

  Dim() = default;
  static Dim unknown() { return Dim(); }
  static Dim known(int64_t V) {
    Dim D;
    D.DenotationAndKind.setInt(Kind::Known);
    D.Val = V;
    return D;
  }
  static Dim symbol(llvm::StringRef Name) {
    Dim D;
    D.DenotationAndKind.setInt(Kind::Symbol);
    D.Sym = internString(Name);
    return D;
  }

  Kind getKind() const { return DenotationAndKind.getInt(); }
  bool isKnown() const { return getKind() == Kind::Known; }
  bool isSymbol() const { return getKind() == Kind::Symbol; }
  bool isUnknown() const { return getKind() == Kind::Unknown; }
  /// The value of a known dim; 0 for the others.
  int64_t getValue() const { return isKnown() ? Val : 0; }
  /// The symbol of a symbolic dim; "" for the others. The text lives as
  /// long as the process.
  llvm::StringRef getSymbol() const {
    return isSymbol() ? Sym->getKey() : llvm::StringRef();
  }

  /// The optional dim denotation (e.g. "DATA_BATCH"); carried, not modeled.
  llvm::StringRef getDenotation() const {
    const InternedString *D = DenotationAndKind.getPointer();
    return D ? D->getKey() : llvm::StringRef();
  }
  void setDenotation(llvm::StringRef D) {
    DenotationAndKind.setPointer(D.empty() ? nullptr : internString(D));
  }

  bool operator==(const Dim &O) const {
    // Interned texts are equal exactly when their entries are.
    if (DenotationAndKind != O.DenotationAndKind)
      return false;
    switch (getKind()) {
    case Kind::Known:
      return Val == O.Val;
    case Kind::Symbol:
      return Sym == O.Sym;
    case Kind::Unknown:
      return true;
    }
    return true;
  }
  bool operator!=(const Dim &O) const { return !(*this == O); }

private:
  union {
    int64_t Val = 0;           ///< Kind::Known
    const InternedString *Sym; ///< Kind::Symbol
  };
  /// The denotation (null when empty) and the kind in its spare low bits.
  llvm::PointerIntPair<const InternedString *, 2, Kind> DenotationAndKind;
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
  Type(const Type &O);
  Type(Type &&) noexcept = default;
  Type &operator=(const Type &O);
  Type &operator=(Type &&) noexcept = default;
  ~Type();
  /// A tensor of \p ElemType (onnx::TensorProto_DataType value). Without
  /// \p Shape the rank is unknown.
  static Type tensor(int32_t ElemType,
                     std::optional<std::vector<Dim>> Shape = std::nullopt);
  static Type
  sparseTensor(int32_t ElemType,
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
  bool hasShape() const { return HasShape; }
  /// A copy of the shape (getDims reads it in place).
  std::optional<std::vector<Dim>> getShape() const {
    return HasShape ? std::optional<std::vector<Dim>>(Dims) : std::nullopt;
  }
  llvm::ArrayRef<Dim> getDims() const { return Dims; }
  size_t getRank() const { return Dims.size(); }
  void setShape(std::optional<std::vector<Dim>> S) {
    HasShape = S.has_value();
    Dims = S ? std::move(*S) : std::vector<Dim>();
  }
  /// The dims of a type that has a shape.
  std::vector<Dim> &getMutableDims() { return Dims; }

  /// True when this is a tensor whose every dim is known.
  bool isStatic() const;

  /// Sequence/optional element type or map value type.
  const Type &getElementType() const;
  Type &getMutableElementType();

  llvm::StringRef getOpaqueDomain() const;
  llvm::StringRef getOpaqueName() const;

  /// The type denotation (TypeProto.denotation); carried, not modeled.
  llvm::StringRef getDenotation() const;
  void setDenotation(llvm::StringRef D);

  bool operator==(const Type &O) const;
  bool operator!=(const Type &O) const { return !(*this == O); }

  /// Prints in ONNX text syntax, e.g. `float[N,3,224,224]`, `seq(float[])`.
  void print(llvm::raw_ostream &OS) const;
  std::string str() const;

private:
  /// What few types have, out of line so that a tensor type is 48 bytes.
  struct Rare;
  const Rare &rare() const;
  Rare &getOrCreateRare();

  // 40 bytes: a big model has a Type per value. No shape is HasShape false
  // (and no dims); a scalar is HasShape true and no dims.
  Kind K = Kind::None;
  bool HasShape = false;
  int32_t ElemType = 0;
  std::vector<Dim> Dims;
  /// Null when every field of Rare would be empty.
  std::unique_ptr<Rare> Extra;
};

struct Type::Rare {
  Type Elem; ///< sequence/optional element, map value
  std::string OpaqueDomain, OpaqueName;
  std::string Denotation;
};

inline Type::~Type() = default;

inline const Type &Type::getElementType() const { return rare().Elem; }
inline Type &Type::getMutableElementType() { return getOrCreateRare().Elem; }
inline llvm::StringRef Type::getOpaqueDomain() const {
  return rare().OpaqueDomain;
}
inline llvm::StringRef Type::getOpaqueName() const { return rare().OpaqueName; }
inline llvm::StringRef Type::getDenotation() const { return rare().Denotation; }

/// Name of an onnx::TensorProto_DataType as used in ONNX text ("float",
/// "int64", ...); empty for unknown codes.
llvm::StringRef getElemTypeName(int32_t ElemType);
/// Byte size of one element of a fixed-size type; 0 for string/undefined.
size_t getElemTypeSize(int32_t ElemType);

} // namespace onnxopt

#endif // ONNXOPT_IR_TYPE_H
