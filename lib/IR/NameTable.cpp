//===- NameTable.cpp - The model's value names, hashed once ---------------===//
#include "onnxopt/IR/NameTable.h"
#include <cstring>

using namespace onnxopt;

/// A 64-bit finalizer (MurmurHash3's fmix64 constants): every input bit
/// reaches every output bit, so linear probing on the low bits spreads.
static uint64_t finalize(uint64_t X) {
  X ^= X >> 33;
  X *= 0xff51afd7ed558ccdULL;
  X ^= X >> 33;
  X *= 0xc4ceb9fe1a85ec53ULL;
  X ^= X >> 33;
  return X;
}

uint64_t NameTable::hash(llvm::StringRef Name) {
  const char *P = Name.data();
  size_t N = Name.size();
  uint64_t H = 0x9e3779b97f4a7c15ULL * (N + 1);
  for (; N >= 8; P += 8, N -= 8) {
    uint64_t W;
    std::memcpy(&W, P, 8);
    H = (H ^ W) * 0x87c37b91114253d5ULL;
    H = (H << 31) | (H >> 33);
  }
  if (N) {
    uint64_t W = 0;
    std::memcpy(&W, P, N);
    H = (H ^ W) * 0x87c37b91114253d5ULL;
  }
  return finalize(H);
}

size_t NameTable::probe(llvm::StringRef Name, uint64_t H) const {
  size_t Mask = Buckets.size() - 1;
  for (size_t I = H & Mask;; I = (I + 1) & Mask) {
    const Bucket &B = Buckets[I];
    if (!B.Entry || (B.Hash == H && B.Entry->getKey() == Name))
      return I;
  }
}

NameEntry *NameTable::find(llvm::StringRef Name) const {
  if (Buckets.empty())
    return nullptr;
  return Buckets[probe(Name, hash(Name))].Entry;
}

NameEntry &NameTable::intern(llvm::StringRef Name) {
  if ((Count + 1) * 4 > Buckets.size() * 3)
    grow();
  uint64_t H = hash(Name);
  Bucket &B = Buckets[probe(Name, H)];
  if (!B.Entry) {
    B.Hash = H;
    B.Entry = NameEntry::Create(Name, Alloc);
    ++Count;
  }
  return *B.Entry;
}

void NameTable::grow() { rehash(Buckets.empty() ? 64 : Buckets.size() * 2); }

void NameTable::reserve(size_t N) {
  size_t NumBuckets = Buckets.empty() ? 64 : Buckets.size();
  while (N * 4 > NumBuckets * 3)
    NumBuckets *= 2;
  if (NumBuckets != Buckets.size())
    rehash(NumBuckets);
}

void NameTable::prefetch(llvm::StringRef Name) const {
  if (!Buckets.empty())
    __builtin_prefetch(&Buckets[hash(Name) & (Buckets.size() - 1)]);
}

void NameTable::rehash(size_t NumBuckets) {
  std::vector<Bucket> Old(NumBuckets, Bucket{0, nullptr});
  Old.swap(Buckets);
  size_t Mask = Buckets.size() - 1;
  // The full hash is kept: no name is hashed again.
  for (const Bucket &B : Old) {
    if (!B.Entry)
      continue;
    size_t I = B.Hash & Mask;
    while (Buckets[I].Entry)
      I = (I + 1) & Mask;
    Buckets[I] = B;
  }
}
