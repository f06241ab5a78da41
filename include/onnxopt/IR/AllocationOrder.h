//===- AllocationOrder.h - Pointer keys hashed in address order -*- C++ -*-===//
//
// Key info for llvm::DenseMap/DenseSet over IR pointers (Value, Node) that
// hashes a pointer to its address / 16 instead of mixing its bits. The IR
// allocates values and nodes in graph order, so a walk in graph order reads
// and writes such a table nearly in order, a few buckets apart, instead of
// at random: on a 100k-node model the dim analysis's tables are 8 MB, and
// with LLVM's mixing hash 26% of unify-dims was the first load of a bucket
// (a cache and TLB miss). Lookups and iteration order are a DenseMap's as
// ever (pointer order is never an output order here); only the probe
// sequence changes.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_ALLOCATIONORDER_H
#define ONNXOPT_IR_ALLOCATIONORDER_H

#include "llvm/ADT/DenseMapInfo.h"
#include <cstdint>

namespace onnxopt {

/// DenseMapInfo for `T *` (T = const Value, Node, ...) in address order.
template <typename T> struct AllocationOrderInfo : llvm::DenseMapInfo<T *> {
  static unsigned getHashValue(const T *P) {
    // malloc's blocks are 16-byte aligned: the low bits carry nothing.
    return static_cast<unsigned>(reinterpret_cast<uintptr_t>(P) >> 4);
  }
};

} // namespace onnxopt

#endif // ONNXOPT_IR_ALLOCATIONORDER_H
