//===- Type.cpp - Value types and symbolic dims ---------------------------===//
#include "onnxopt/IR/Type.h"
#include "onnxopt/IR/ElementType.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Allocator.h"
#include <cstring>
#include <mutex>

using namespace onnxopt;

/// Which slot of the per-thread cache \p S goes to: from its size and its
/// first and last eight bytes, without reading the rest.
static unsigned cacheSlot(llvm::StringRef S) {
  uint64_t Head = 0, Tail = 0;
  size_t N = S.size();
  if (N)
    std::memcpy(&Head, S.data(), N < 8 ? N : 8);
  if (N > 8)
    std::memcpy(&Tail, S.data() + N - 8, 8);
  uint64_t H = (Head * 0x9e3779b97f4a7c15ULL) ^ (Tail * 0xc2b2ae3d27d4eb4fULL) ^
               (N * 0x165667b19e3779f9ULL);
  return unsigned(H >> 56);
}

const InternedString *onnxopt::internString(llvm::StringRef S) {
  // The texts repeat (a node's op type and domain, the symbols of its
  // dims): a small per-thread cache of recent entries answers most calls
  // without the lock and the pool's byte-by-byte hash (a million-node
  // import interns two million texts).
  static thread_local const InternedString *Recent[256];
  const InternedString *&Slot = Recent[cacheSlot(S)];
  if (Slot && Slot->getKey() == S)
    return Slot;
  // Never freed before exit: interned texts outlive every model, so a Dim
  // or Node may be copied out of one model and outlive it. The lock keeps
  // the pool usable by a program that processes models on several threads.
  static std::mutex Lock;
  static llvm::StringSet<llvm::BumpPtrAllocator> Pool;
  std::lock_guard<std::mutex> Guard(Lock);
  Slot = &*Pool.insert(S).first;
  return Slot;
}

Type::Type(const Type &O)
    : K(O.K), HasShape(O.HasShape), ElemType(O.ElemType), Dims(O.Dims),
      Extra(O.Extra ? std::make_unique<Rare>(*O.Extra) : nullptr) {}

Type &Type::operator=(const Type &O) {
  if (this != &O)
    *this = Type(O);
  return *this;
}

const Type::Rare &Type::rare() const {
  static const Rare Empty;
  return Extra ? *Extra : Empty;
}

Type::Rare &Type::getOrCreateRare() {
  if (!Extra)
    Extra = std::make_unique<Rare>();
  return *Extra;
}

void Type::setDenotation(llvm::StringRef D) {
  if (!D.empty() || Extra)
    getOrCreateRare().Denotation = D.str();
}

Type Type::tensor(int32_t ElemType, std::optional<std::vector<Dim>> Shape) {
  Type T;
  T.K = Kind::Tensor;
  T.ElemType = ElemType;
  T.setShape(std::move(Shape));
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
  T.getOrCreateRare().Elem = std::move(Elem);
  return T;
}

Type Type::optional(Type Elem) {
  Type T;
  T.K = Kind::Optional;
  T.getOrCreateRare().Elem = std::move(Elem);
  return T;
}

Type Type::map(int32_t KeyType, Type ValueType) {
  Type T;
  T.K = Kind::Map;
  T.ElemType = KeyType;
  T.getOrCreateRare().Elem = std::move(ValueType);
  return T;
}

Type Type::opaque(llvm::StringRef Domain, llvm::StringRef Name) {
  Type T;
  T.K = Kind::Opaque;
  Rare &R = T.getOrCreateRare();
  R.OpaqueDomain = Domain.str();
  R.OpaqueName = Name.str();
  return T;
}

bool Type::isStatic() const {
  if (K != Kind::Tensor || !HasShape)
    return false;
  for (const Dim &D : Dims)
    if (!D.isKnown())
      return false;
  return true;
}

bool Type::operator==(const Type &O) const {
  if (K != O.K || ElemType != O.ElemType || HasShape != O.HasShape ||
      Dims != O.Dims)
    return false;
  // A missing Rare equals one whose fields are all empty (and ends the
  // recursion through Elem: the empty Rare's Elem has none).
  if (!Extra && !O.Extra)
    return true;
  const Rare &A = rare(), &B = O.rare();
  return A.Elem == B.Elem && A.OpaqueDomain == B.OpaqueDomain &&
         A.OpaqueName == B.OpaqueName && A.Denotation == B.Denotation;
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
    OS << "opaque(" << getOpaqueDomain() << ", " << getOpaqueName() << ')';
    return;
  }
}

std::string Type::str() const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  print(OS);
  return OS.str();
}

// One table of element types: include/onnxopt/IR/ElementType.h.
llvm::StringRef onnxopt::getElemTypeName(int32_t ElemType) {
  return getElementTypeName(static_cast<ElementType>(ElemType));
}

size_t onnxopt::getElemTypeSize(int32_t ElemType) {
  // Sub-byte types (int4, uint4, float4e2m1) have no whole-byte size.
  unsigned Bits = getElementTypeBits(static_cast<ElementType>(ElemType));
  return Bits % 8 ? 0 : Bits / 8;
}
