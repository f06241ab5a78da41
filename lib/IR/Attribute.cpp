//===- Attribute.cpp - Node attributes ------------------------------------===//
#include "onnxopt/IR/Attribute.h"
#include "onnxopt/IR/Graph.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"
#include <cstring>

using namespace onnxopt;

Attribute::~Attribute() = default;

Attribute Attribute::getInt(llvm::StringRef Name, int64_t V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Int;
  A.I = V;
  return A;
}

Attribute Attribute::getFloat(llvm::StringRef Name, float V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Float;
  A.F = V;
  return A;
}

Attribute Attribute::getString(llvm::StringRef Name, llvm::StringRef V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::String;
  A.S = V.str();
  return A;
}

Attribute Attribute::getInts(llvm::StringRef Name, std::vector<int64_t> V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Ints;
  A.Ints = std::move(V);
  return A;
}

Attribute Attribute::getFloats(llvm::StringRef Name, std::vector<float> V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Floats;
  A.Floats = std::move(V);
  return A;
}

Attribute Attribute::getStrings(llvm::StringRef Name,
                                std::vector<std::string> V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Strings;
  A.Strings = std::move(V);
  return A;
}

Attribute Attribute::getTensor(llvm::StringRef Name, onnxopt::Tensor V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Tensor;
  A.Tensors.push_back(std::move(V));
  return A;
}

// Floats compare bitwise so that NaN attributes are equal to themselves and
// -0.0 differs from 0.0 (they can behave differently).
static bool sameBits(float A, float B) {
  return std::memcmp(&A, &B, sizeof(float)) == 0;
}

bool Attribute::equals(const Attribute &O) const {
  if (isGraph() || O.isGraph())
    return false;
  if (Name != O.Name || Kind != O.Kind || I != O.I || !sameBits(F, O.F) ||
      S != O.S || Ints != O.Ints || Strings != O.Strings ||
      Residual != O.Residual || Floats.size() != O.Floats.size() ||
      Tensors.size() != O.Tensors.size())
    return false;
  for (size_t K = 0; K < Floats.size(); ++K)
    if (!sameBits(Floats[K], O.Floats[K]))
      return false;
  for (size_t K = 0; K < Tensors.size(); ++K)
    if (!Tensors[K].contentEquals(O.Tensors[K]))
      return false;
  return true;
}

static uint32_t floatBits(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, sizeof(Bits));
  return Bits;
}

uint64_t Attribute::hash() const {
  // Floats by their bits, as equals compares them.
  llvm::SmallVector<uint32_t, 8> FloatBits;
  for (float X : Floats)
    FloatBits.push_back(floatBits(X));
  llvm::hash_code H = llvm::hash_combine(
      llvm::StringRef(Name), static_cast<uint8_t>(Kind), I, floatBits(F),
      llvm::StringRef(S), llvm::hash_combine_range(Ints.begin(), Ints.end()),
      llvm::hash_combine_range(FloatBits.begin(), FloatBits.end()),
      llvm::StringRef(Residual));
  for (const std::string &Str : Strings)
    H = llvm::hash_combine(H, llvm::StringRef(Str));
  for (const Tensor &T : Tensors)
    H = llvm::hash_combine(H, T.contentHash());
  return H;
}
