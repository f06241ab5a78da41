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
// entries `symbol=min:max[:opt]` sorted by symbol, separated by ';'. Dims
// may also carry relations the user asserts (set-dim-range{relations=...}),
// the aspect lock of deployment guides: `W=H` (always equal) and `H%32=0`
// (a multiple), or that the model implies: `past+seq<=64` (a bound on a
// sum). A model with relations stores version 2, with the relations after
// the ranges:
//
//   v2;H=256:1024;W=256:1024;rel:W=H;rel:H%32=0
//
// Besides ranges, a model may carry gears: the few fixed shapes it will be
// run at (Ascend ATC's dynamic dims, RKNN-Toolkit2's dynamic_input), each
// gear one shape per input that has a non-static dim, in graph input order.
// They are stored under "onnx_opt.dim_gears", gears separated by ';', the
// shapes of a gear by ',':
//
//   v1;ids[1,10],feats[1,10,8];ids[2,20],feats[2,20,8]
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_DIMRANGES_H
#define ONNXOPT_ANALYSIS_DIMRANGES_H

#include "onnxopt/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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

/// A relation between symbols the user asserts or the model implies:
/// Lhs = Rhs (two symbols), Lhs a multiple of Divisor, or a bound on a sum
/// of several symbols, sum(coefficient * symbol) <= Bound (`past+seq<=64`:
/// a position table of 64 rows read at past..past+seq), which no range of
/// one symbol can say.
struct DimRelation {
  enum Kind { Equal, Multiple, AtMost, AtLeast };
  Kind K = Equal;
  std::string Lhs, Rhs;
  int64_t Divisor = 1;
  /// AtMost: (symbol, coefficient >= 1), sorted by symbol, and the bound.
  /// AtLeast: Lhs >= Bound (`H>=7`: a least value the model needs, where
  /// nothing bounds the symbol from above, so no range can hold it).
  std::vector<std::pair<std::string, int64_t>> Terms;
  int64_t Bound = 0;
  /// `Symbol>=Least`.
  static DimRelation atLeast(std::string Symbol, int64_t Least) {
    DimRelation R;
    R.K = AtLeast;
    R.Lhs = std::move(Symbol);
    R.Bound = Least;
    return R;
  }
  bool operator==(const DimRelation &O) const {
    return K == O.K && Lhs == O.Lhs && Rhs == O.Rhs && Divisor == O.Divisor &&
           Terms == O.Terms && Bound == O.Bound;
  }
  bool operator<(const DimRelation &O) const {
    return std::tie(K, Lhs, Rhs, Divisor, Terms, Bound) <
           std::tie(O.K, O.Lhs, O.Rhs, O.Divisor, O.Terms, O.Bound);
  }
  /// The symbols the relation names, sorted.
  std::vector<std::string> symbols() const;
  /// The relation with symbols renamed (two may become one).
  DimRelation
  renamed(const std::function<std::string(const std::string &)> &NewName) const;
  /// True if the relation holds at the values (false if one is missing).
  bool holds(const std::map<std::string, int64_t> &Values) const;
  /// True if \p Values give every symbol the relation names.
  bool isDecidedBy(const std::map<std::string, int64_t> &Values) const;
};
using DimRelations = std::vector<DimRelation>;

/// `W=H`, `H%32=0`, `H>=7` or `past+seq<=64` (`2*H+W<=100`: coefficients
/// >= 1).
bool parseDimRelation(llvm::StringRef Text, DimRelation &Out,
                      std::string &Error);
std::string printDimRelation(const DimRelation &R);
/// `W=H (W=96, H=64)`: the relation with the values it was checked at.
std::string printDimRelationAt(const DimRelation &R,
                               const std::map<std::string, int64_t> &Values);

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
/// Replaces the ranges stored in \p M (with no ranges and no relations the
/// key goes); the stored relations stay; other metadata_props keep their
/// order. Fails, setting \p Error, when the stored value or the model's
/// residual cannot be parsed.
bool setDimRanges(Model &M, const DimRangeMap &Ranges, std::string &Error);
/// The relations stored in \p M.
bool getDimRelations(const Model &M, DimRelations &Out, std::string &Error);
/// Replaces the stored relations (sorted, without repeats); the ranges stay.
bool setDimRelations(Model &M, const DimRelations &Relations,
                     std::string &Error);

/// The metadata_props key that holds the gears.
inline constexpr const char *DimGearsKey = "onnx_opt.dim_gears";

/// One input's shape in a gear: every dim a number.
struct GearShape {
  std::string Input;
  std::vector<int64_t> Dims;
  bool operator==(const GearShape &O) const {
    return Input == O.Input && Dims == O.Dims;
  }
};
/// A gear: one shape per input, in graph input order once stored.
using DimGear = std::vector<GearShape>;
using DimGears = std::vector<DimGear>;

/// Parses `x[1,3];x[2,3]` or `a[1,8],b[1,8,4];a[2,16],b[2,16,4]`: gears
/// separated by ';', the shapes of a gear by ','. A shape is `name[d,...]`,
/// or trtexec's `name:1x3x640x640`, or polygraphy's `name:[1,3,640,640]`;
/// every dim a non-negative number. On failure sets \p Error.
bool parseDimGears(llvm::StringRef Text, DimGears &Out, std::string &Error);
/// `x[1,3];x[2,3]` (the form parseDimGears reads, without the version).
std::string printDimGears(const DimGears &Gears);
/// `x[1,3]` or `a[1,8],b[1,8,4]`.
std::string printDimGear(const DimGear &Gear);
/// Checks \p Gear against the main graph's inputs (those without a
/// default value): every input with a non-static dim gets a shape, of its
/// rank, equal to it at every static dim, and a symbol gets one value across
/// the gear. \p Normalized gets the shapes of the inputs with a non-static
/// dim in graph input order, \p Values each symbol's value. On failure sets
/// \p Error, naming the gear, the input and the dim.
bool resolveDimGear(const Model &M, const DimGear &Gear, DimGear &Normalized,
                    std::map<std::string, int64_t> &Values, std::string &Error);
/// The gears stored in \p M (empty when there are none).
bool getDimGears(const Model &M, DimGears &Out, std::string &Error);
/// Replaces the stored gears (none: the key goes); other keys keep their
/// order.
bool setDimGears(Model &M, const DimGears &Gears, std::string &Error);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_DIMRANGES_H
