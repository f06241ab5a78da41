//===- IndexRules.cpp - ONNX's rules for axes and Slice indices -----------===//
#include "onnxopt/Ops/IndexRules.h"
#include <algorithm>
#include <climits>

using namespace onnxopt;

std::optional<int64_t> onnxopt::resolveAxis(int64_t Axis, int64_t Rank) {
  if (Axis < -Rank || Axis >= Rank)
    return std::nullopt;
  return Axis < 0 ? Axis + Rank : Axis;
}

int64_t onnxopt::clampSliceIndex(int64_t Index, int64_t Len, int64_t Step,
                                 bool IsEnd) {
  // Len >= 0, so adding it to a negative index cannot overflow.
  if (Index < 0)
    Index += Len;
  int64_t Lo = Step < 0 && IsEnd ? -1 : 0;
  int64_t Hi = Step < 0 ? Len - 1 : Len;
  // Lo first: on an empty axis with a negative step Hi is -1 < Lo = 0, and
  // ONNX takes Hi there (std::clamp would be undefined).
  if (Index < Lo)
    Index = Lo;
  if (Index > Hi)
    Index = Hi;
  return Index;
}

std::optional<SliceAxis> onnxopt::resolveSliceAxis(int64_t Len, int64_t Start,
                                                   int64_t End, int64_t Step) {
  if (Step == 0 || Len < 0)
    return std::nullopt;
  SliceAxis A;
  A.Step = Step;
  A.Start = clampSliceIndex(Start, Len, Step, /*IsEnd=*/false);
  int64_t E = clampSliceIndex(End, Len, Step, /*IsEnd=*/true);
  // The distance is at most Len + 1; counting by (distance - 1) / |step| + 1
  // never adds to the step, and |INT64_MIN| is taken as INT64_MAX (either
  // is longer than any axis).
  int64_t Distance = Step > 0 ? E - A.Start : A.Start - E;
  int64_t Magnitude = Step > 0 ? Step : Step == INT64_MIN ? INT64_MAX : -Step;
  A.Count = Distance > 0 ? (Distance - 1) / Magnitude + 1 : 0;
  return A;
}

bool onnxopt::isSliceEndPastAnyDim(int64_t End) { return End >= INT32_MAX; }

std::pair<int64_t, int64_t>
onnxopt::resolveShapeRange(int64_t Rank, int64_t Start, int64_t End) {
  if (Start < 0)
    Start += Rank;
  if (End < 0)
    End += Rank;
  Start = std::clamp<int64_t>(Start, 0, Rank);
  End = std::clamp<int64_t>(End, Start, Rank);
  return {Start, End};
}
