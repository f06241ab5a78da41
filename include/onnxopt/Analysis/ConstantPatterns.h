//===- ConstantPatterns.h - Recognise how a constant depends on indices -*- C++
//-*-===//
//
// A static export bakes tensors that the model computed from its input
// sizes: YOLO's grids (affine in the cell index), anchor grids (the same in
// every cell), causal masks (a function of i - j), positional tables (a
// prefix of a longer table). make-dynamic rebuilds them at the new sizes,
// but only after checking, element by element and exactly, that the
// constant has that form; these are the checks. They read the bytes of the
// tensor and never guess: a constant that is almost affine or almost
// triangular does not match.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_CONSTANTPATTERNS_H
#define ONNXOPT_ANALYSIS_CONSTANTPATTERNS_H

#include "onnxopt/IR/Tensor.h"
#include "llvm/ADT/ArrayRef.h"
#include <optional>
#include <vector>

namespace onnxopt {

/// The elements of \p T with index 0 on each of \p Axes (those dims become
/// 1), or a null Tensor when the bytes cannot be read (strings).
Tensor sliceAtZero(const Tensor &T, llvm::ArrayRef<unsigned> Axes,
                   llvm::StringRef Name);

/// The elements of \p T at [Begin, Begin + product of \p Dims) along
/// \p Axis, that axis split into \p Dims (row-major): one piece of a
/// constant concatenated from flattened grids, as its grid. Null when out
/// of range or the bytes cannot be read.
Tensor pieceAlong(const Tensor &T, unsigned Axis, int64_t Begin,
                  llvm::ArrayRef<int64_t> Dims, llvm::StringRef Name);

/// \p T's elements under \p Dims (of the same element count), or null.
Tensor withDims(const Tensor &T, llvm::ArrayRef<int64_t> Dims,
                llvm::StringRef Name);

/// True if every slice of \p T along \p Axis holds the same bytes as the
/// first one: cutting the axis to 1 broadcasts to the same tensor.
bool isConstantAlong(const Tensor &T, unsigned Axis);

/// T = Base + sum over k of i_k * Slopes[k], where i_k is the index along
/// Axes[k], Base is T with index 0 on every one of Axes, and each slope is
/// a tensor of Base's dims (it may vary along the other axes: a grid's x
/// and y channels have different slopes). Axes whose slope is zero
/// everywhere are left out of Terms.
struct AffineForm {
  Tensor Base;
  struct Term {
    unsigned Axis;
    Tensor Slope;
  };
  std::vector<Term> Terms;
};

/// Matches \p T against the affine form over \p Axes (each of size >= 2).
/// The check recomputes every element exactly as the rebuilt graph will,
/// in the element type (float32 rounding for float: Base + i*Slope, terms
/// added in axis order), and compares bit for bit. Only float, double,
/// int32 and int64 tensors of at most \p MaxElements elements are matched.
std::optional<AffineForm> matchAffine(const Tensor &T,
                                      llvm::ArrayRef<unsigned> Axes,
                                      llvm::StringRef Name,
                                      int64_t MaxElements = 1 << 22);

/// A constant whose element at (i along Row, j along Col) depends only on
/// d = i - j, and is the same for every d <= -Below and for every
/// d >= Above: T = Table[clamp(i - j, -Below, Above) + Below]. Causal masks
/// (0 on and below the diagonal, -inf above) and banded masks have this
/// form. Every other axis must have size 1.
struct ToeplitzForm {
  int64_t Below = 0;
  int64_t Above = 0;
  /// Below + Above + 1 elements, of T's element type.
  Tensor Table;
  /// How many diagonals each saturated end covers in the constant, and
  /// how many distinct values the table holds (3 stands for 3 or more): a
  /// mask holds two, a learned bias by distance (T5's buckets) more, and
  /// its ends may only pause where the constant ends.
  int64_t SaturatedBelow = 0, SaturatedAbove = 0;
  unsigned Distinct = 0;
};

/// Matches \p T (rank >= 2, Row < Col). The saturated ends must each be
/// seen on at least two diagonals, so the value a larger size adds is
/// determined by the constant, not assumed.
std::optional<ToeplitzForm> matchToeplitz(const Tensor &T, unsigned Row,
                                          unsigned Col, llvm::StringRef Name);

/// A float32 table of sinusoids along one axis, as rotary position tables
/// are: T = Amp * cos(i * Freq) or T = Amp * sin(i * Freq), i the index
/// along Axis, Amp and Freq float32 tensors of T's dims with 1 at Axis
/// (one sinusoid per column), the angle i * Freq rounded to float32 as the
/// rebuilt graph (Range, Cast, Mul) and the exporter round it.
struct SinusoidForm {
  bool IsSin = false;
  Tensor Amp;
  Tensor Freq;
  /// Every amplitude is 1: the rebuilt graph needs no Mul by Amp.
  bool UnitAmp = true;
};

/// Matches \p T (float32, at least 3 entries along \p Axis) against one
/// kind of sinusoid. Unlike the exact matchers, cos and sin are not
/// reproducible bit for bit across runtimes: every element must be within
/// 4e-6 * max(1, |Amp|) of the form. The frequencies come from the angles,
/// unwrapped along the axis: atan2 of \p T and \p Partner when a partner
/// table (the sin of a cos table or the cos of a sin table, T^2 + P^2 =
/// Amp^2 everywhere) is given, else the arccos / arcsin of \p T alone,
/// which must then determine each frequency to 1e-9 (a short cos table of
/// a low frequency does not: its angles stay near 0).
/// The other function of \p Angles (the sine where \p IsSin is false, the
/// cosine otherwise) times \p Scale, as float of shape \p Dims (the same element count:
/// the table was a view of its angles): the partner that fixes a rotary
/// table's low frequencies when the model computes the table (matchSinusoid).
/// A null Tensor when \p Angles is not float or the counts differ.
Tensor otherSinusoid(const Tensor &Angles, bool IsSin,
                     llvm::ArrayRef<int64_t> Dims, llvm::StringRef Name,
                     double Scale = 1.0);

/// With \p Offset > 0 the rows are the positions Offset, Offset + 1, ...
/// (a KV-cache decoder's rotary rows, baked at its old past): the angle of
/// row i is (Offset + i) * Freq. Then a partner is needed, and both kinds
/// are tried.
std::optional<SinusoidForm> matchSinusoid(const Tensor &T, unsigned Axis,
                                          const Tensor *Partner,
                                          llvm::StringRef Name,
                                          int64_t Offset = 0);

/// True if \p Small equals the first elements of \p Big along \p Axis:
/// same element type and rank, every other dim equal, Small's dim at Axis
/// not larger than Big's.
bool isPrefixAlong(const Tensor &Small, const Tensor &Big, unsigned Axis);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_CONSTANTPATTERNS_H
