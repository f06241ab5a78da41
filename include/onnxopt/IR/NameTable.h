//===- NameTable.h - The model's value names, hashed once ------*- C++ -*-===//
//
// Every name a value of a model has had or that was reserved, each stored
// once as a StringMapEntry (the name's text and its NameSlot) that values
// point at. An open-addressing index over those entries, instead of
// llvm::StringMap: LLVM 14's StringMap hashes a byte at a time and keeps
// the hashes apart from the entry pointers (a lookup touched three cache
// lines: the bucket, its hash and the entry; the import does one per
// definition and one per operand). Here a bucket is the full hash and the
// entry, and the hash reads eight bytes at a time.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_NAMETABLE_H
#define ONNXOPT_IR_NAMETABLE_H

#include "onnxopt/IR/Value.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include <cstdint>
#include <type_traits>
#include <vector>

namespace onnxopt {

class NameTable {
public:
  NameTable() = default;
  NameTable(const NameTable &) = delete;
  NameTable &operator=(const NameTable &) = delete;

  /// The entry of \p Name, or null.
  NameEntry *find(llvm::StringRef Name) const;
  /// The entry of \p Name, added (not reserved) if new.
  NameEntry &intern(llvm::StringRef Name);
  size_t size() const { return Count; }
  /// Makes room for \p N names in all, so that adding them rehashes
  /// nothing.
  void reserve(size_t N);
  /// Starts loading the bucket that a lookup of \p Name reads, so that the
  /// lookup, made a little later, does not wait for memory: the buckets of
  /// a large model's table are read in no order, each one a cache miss.
  void prefetch(llvm::StringRef Name) const;

  static uint64_t hash(llvm::StringRef Name);

private:
  struct Bucket {
    uint64_t Hash;
    NameEntry *Entry; ///< null: empty
  };
  /// The bucket of \p Name (of hash \p H): its entry's, or the empty one
  /// where it would go.
  size_t probe(llvm::StringRef Name, uint64_t H) const;
  void grow();
  /// Rehashes every entry into \p NumBuckets buckets (a power of two).
  void rehash(size_t NumBuckets);

  /// A power of two, at most 3/4 full; empty until the first name.
  std::vector<Bucket> Buckets;
  size_t Count = 0;
  /// The entries, freed with the table: a NameSlot needs no destructor.
  llvm::BumpPtrAllocator Alloc;
  static_assert(std::is_trivially_destructible<NameSlot>::value,
                "entries are freed without being destroyed");
};

} // namespace onnxopt

#endif // ONNXOPT_IR_NAMETABLE_H
