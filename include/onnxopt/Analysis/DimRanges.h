//===- DimRanges.h - Value ranges of symbolic dims -------------*- C++ -*-===//
//
// A symbolic dim may carry a range: the smallest and largest value it will
// take at run time and, optionally, the value to optimize for (TensorRT's
// min/opt/max profile). Ranges are stored in the model itself, in the
// model-level metadata_props under the key "onnx_opt.dim_ranges", so that
// they travel with the file through binary and text round trips and through
// any tool that keeps metadata_props. The value is versioned text:
//
//   v1;H=256:1024:640;N=1:16;W=256:1024:640
//
// entries `symbol=min:max[:opt]` sorted by symbol, separated by ';'.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_DIMRANGES_H
#define ONNXOPT_ANALYSIS_DIMRANGES_H

#include "onnxopt/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace onnxopt {

class Model;

/// The metadata_props key that holds the ranges.
inline constexpr const char *DimRangesKey = "onnx_opt.dim_ranges";

/// The values a symbolic dim may take: Min <= Opt <= Max, Min >= 0.
struct DimRange {
  int64_t Min = 0;
  int64_t Max = 0;
  std::optional<int64_t> Opt;

  /// Opt when given, else Max (what a profile optimizes for by default).
  int64_t getOpt() const { return Opt ? *Opt : Max; }
  bool contains(int64_t V) const { return Min <= V && V <= Max; }
  bool operator==(const DimRange &O) const {
    return Min == O.Min && Max == O.Max && Opt == O.Opt;
  }
};

using DimRangeMap = std::map<std::string, DimRange>;

/// Parses `min:max[:opt]`; on failure sets \p Error (lowercase, no trailing
/// period). Checks 0 <= min <= opt <= max.
bool parseDimRange(llvm::StringRef Text, DimRange &Out, std::string &Error);
/// Prints `min:max[:opt]`.
std::string printDimRange(const DimRange &R);

/// Parses the stored form (`v1;S=min:max[:opt];...`).
bool parseDimRanges(llvm::StringRef Text, DimRangeMap &Out, std::string &Error);
/// Prints the stored form, sorted by symbol.
std::string printDimRanges(const DimRangeMap &Ranges);

/// The ranges stored in \p M (empty when there are none). Fails, setting
/// \p Error, when the residual or the stored value cannot be parsed.
bool getDimRanges(const Model &M, DimRangeMap &Out, std::string &Error);
/// Replaces the ranges stored in \p M (an empty map removes the key); other
/// metadata_props keep their order. Fails, setting \p Error, only when the
/// model's residual cannot be parsed.
bool setDimRanges(Model &M, const DimRangeMap &Ranges, std::string &Error);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_DIMRANGES_H
