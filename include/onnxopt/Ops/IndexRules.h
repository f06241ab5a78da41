//===- IndexRules.h - ONNX's rules for axes and Slice indices --*- C++ -*-===//
//
// ONNX's index rules, written once for every layer: how an axis attribute or
// input counts from the back, how Slice clamps its bounds, and the range of
// dims Shape-15 returns. The op definitions (lib/Ops) use them as much as
// the analyses and passes do (OpFacts.h includes this header).
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_INDEXRULES_H
#define ONNXOPT_OPS_INDEXRULES_H

#include <cstdint>
#include <optional>
#include <utility>

namespace onnxopt {

/// An axis attribute or input on a value of rank \p Rank: in [-Rank, Rank-1],
/// negative counting from the back; std::nullopt when out of range.
std::optional<int64_t> resolveAxis(int64_t Axis, int64_t Rank);

/// ONNX Slice's rule for one start or end index on an axis of length \p Len
/// (>= 0): a negative index counts from the back (Len is added once), then
/// it is clamped to [0, Len] for a positive \p Step; for a negative step
/// starts clamp to [0, Len-1] and ends to [-1, Len-1] (-1: up to and
/// including element 0). On an empty axis with a negative step both are -1.
int64_t clampSliceIndex(int64_t Index, int64_t Len, int64_t Step, bool IsEnd);

/// One axis of a Slice after ONNX's rules: the first element taken, the
/// step, and how many elements are taken.
struct SliceAxis {
  int64_t Start = 0;
  int64_t Step = 1;
  int64_t Count = 0;
  /// Index of the \p I-th element taken (I < Count).
  int64_t at(int64_t I) const { return Start + I * Step; }
};

/// Slice from \p Start to \p End by \p Step on an axis of length \p Len;
/// std::nullopt for a zero step or a negative length (invalid models).
/// Steps of any size, INT64_MIN and INT64_MAX included, do not overflow.
std::optional<SliceAxis> resolveSliceAxis(int64_t Len, int64_t Start,
                                          int64_t End, int64_t Step);

/// A Slice end that takes an axis whole from a start of 0 whatever the
/// axis' length: exporters write INT32_MAX or INT64_MAX for `x[a:]`, and
/// no dim of a model is that long (the ONNX legacy IR even truncates dims
/// above 2^31).
bool isSliceEndPastAnyDim(int64_t End);

/// Shape-15's start and end attributes on a value of rank \p Rank: the
/// half-open range [first, second) of dims it returns (second >= first).
std::pair<int64_t, int64_t> resolveShapeRange(int64_t Rank, int64_t Start,
                                              int64_t End);

} // namespace onnxopt

#endif // ONNXOPT_OPS_INDEXRULES_H
