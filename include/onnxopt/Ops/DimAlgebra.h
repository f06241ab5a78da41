//===- DimAlgebra.h - Symbolic dim expressions ------------------*- C++ -*-===//
//
// A dim as an expression over a model's symbols: sums, products, floor and
// ceil division by constants (what Conv, Pool, Resize, Reshape, Concat,
// Flatten, Split produce), in a canonical form so that equal expressions
// compare equal. The op layer's dim rules (DimRules.h) compute with them;
// the dim analysis (Analysis/DimAlgebra.h) relates them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_DIMALGEBRA_H
#define ONNXOPT_OPS_DIMALGEBRA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnxopt {

/// A dim as an integer polynomial over atoms. An atom is a symbol, an
/// unknown (a dim nothing is known about, equal only to itself), or the
/// floor division of a polynomial by a constant. Canonical: equal expressions
/// have the same key and print the same.
class DimExpr {
public:
  struct Atom;
  using AtomRef = std::shared_ptr<const Atom>;

  DimExpr() = default; ///< the constant 0
  static DimExpr constant(int64_t C);
  static DimExpr symbol(llvm::StringRef Name);
  /// A fresh unknown, distinct from every other one.
  static DimExpr unknown();
  /// How many unknowns unknown() has made so far (in this process).
  static uint64_t getNumUnknownsMade();

  bool isConstant() const;
  /// The value of a constant (0 for the zero expression).
  int64_t getConstant() const;
  /// True for a single symbol with coefficient 1.
  bool isSymbol() const;
  llvm::StringRef getSymbol() const;
  /// True when an unknown occurs anywhere in the expression.
  bool hasUnknown() const;
  /// Calls \p F on every symbol mentioned (also inside divisions).
  void forEachSymbol(const std::function<void(llvm::StringRef)> &F) const;
  /// A size for choosing the simplest of equal expressions.
  size_t complexity() const;

  DimExpr operator+(const DimExpr &O) const;
  /// The sum of \p Parts, built once: adding n parts one at a time copies
  /// the growing sum n times (a Concat of 20k inputs: quadratic).
  static DimExpr sum(llvm::ArrayRef<DimExpr> Parts);
  DimExpr operator-(const DimExpr &O) const;
  DimExpr operator*(const DimExpr &O) const;
  /// floor(this / K) for K > 0.
  DimExpr floorDiv(int64_t K) const;
  /// ceil(this / K) for K > 0.
  DimExpr ceilDiv(int64_t K) const;
  /// this mod K for K > 0, with K's sign (ONNX's Mod with fmod = 0,
  /// Python's %): this - K*floor(this/K).
  DimExpr mod(int64_t K) const;
  /// this / D where the caller knows the division is exact (Reshape's -1,
  /// an equal Split). std::nullopt when it cannot be expressed (D is a sum
  /// and the quotient is not one term).
  std::optional<DimExpr> divExact(const DimExpr &D) const;

  /// The value of the expression when every symbol has the value \p Lookup
  /// gives; std::nullopt when a symbol has none, for unknowns, and for an
  /// "exact" division that does not divide.
  std::optional<int64_t>
  evaluate(const std::function<std::optional<int64_t>(llvm::StringRef)> &Lookup)
      const;
  /// True if the expression never decreases when a symbol grows, over
  /// symbols at or above the (non-negative) values \p Min gives: every
  /// term has a positive coefficient, and in products of several factors
  /// each division is non-negative at \p Min. False for unknowns.
  bool isNondecreasing(
      const std::function<std::optional<int64_t>(llvm::StringRef)> &Min) const;
  /// A lower bound without the outer floor divisions: B and a scale L > 0
  /// with L*this >= B at every integer value of the symbols, each term
  /// c*floor(P/K) read as c*(P-K+1)/K when c > 0 and c*P/K when c < 0.
  /// std::nullopt when a floor sits in a product with another factor.
  std::optional<std::pair<DimExpr, int64_t>> relaxFloors() const;
  /// The expression with symbols replaced where \p F gives a replacement.
  DimExpr substitute(
      const std::function<std::optional<DimExpr>(llvm::StringRef)> &F) const;
  /// The gcd of the coefficients of the non-constant terms (0 if none), and
  /// the constant term: every value is Constant plus a multiple of Gcd.
  std::pair<int64_t, int64_t> coefficientGcd() const;

  /// The canonical key: equal keys mean equal expressions.
  const std::string &key() const { return R ? R->Key : ZeroKey; }
  bool operator==(const DimExpr &O) const {
    return R == O.R || key() == O.key();
  }
  bool operator!=(const DimExpr &O) const { return !(*this == O); }
  bool operator<(const DimExpr &O) const { return key() < O.key(); }

  /// Readable form, e.g. `2*ceil(H/8)*ceil(W/8)+4`, `N*C`, `(H*W)/3`.
  std::string str() const;
  void print(llvm::raw_ostream &OS) const { OS << str(); }

  struct Term {
    /// Sorted by key; repeats are powers. Inline: most terms are a
    /// constant or one symbol, and dims are copied a lot.
    llvm::SmallVector<AtomRef, 1> Factors;
    int64_t Coef = 0;
  };

private:
  /// (monomial key ("" for the constant term), term), sorted by key. A
  /// sorted vector with one inline entry rather than a std::map: constants
  /// and single symbols, the common dims, then cost no allocation (the
  /// keys are short), and the order is the one a map by key has.
  using TermList = llvm::SmallVector<std::pair<std::string, Term>, 1>;
  /// The terms and key of a non-zero expression, shared by its copies and
  /// never changed once made. A large model holds a few dims per value and
  /// copies them between values all the time: one pointer per dim (with
  /// the common small constants made once) rather than the terms and key
  /// inline (about 120 bytes) keeps the analyses' per-value dims small.
  struct Rep : llvm::ThreadSafeRefCountedBase<Rep> {
    TermList Terms;
    std::string Key;
  };
  /// Null for the constant 0.
  llvm::IntrusiveRefCntPtr<const Rep> R;
  inline static const std::string ZeroKey = "0";

  const TermList &terms() const;
  /// The expression with these (canonical, sorted) terms.
  static DimExpr make(TermList Terms);
  /// \p Terms with a floor and a half of it merged by Hermite's identity,
  /// when they hold such a pair (see the definition).
  static std::optional<DimExpr> mergeHalves(const TermList &Terms);
  /// Adds \p T to \p Terms; false when a coefficient overflows 64 bits
  /// (the caller's result is then an unknown: no value, not a wrong one).
  [[nodiscard]] static bool addTerm(TermList &Terms, Term T);
  DimExpr exactDivConstant(int64_t K) const;
  std::optional<DimExpr> monomialQuotient(const DimExpr &D) const;
  friend struct DimExprAccess;
};

/// True for symbol names that tools make up rather than people choose:
/// `unk__12` (ONNX inference, tf2onnx), `Concatboxes_dim_1` (torch.onnx's
/// `<Op><output>_dim_K`), `dim3`, `s0` (torch.export), `input_dynamic_axes_1`
/// (torch.onnx with dynamic_axes as a list), `p2o.DynamicDimension.4`
/// (paddle2onnx), and expressions used as names (`2*ceil(H/8)`, from
/// onnxruntime's symbolic shape inference or unify-dims{derived=expr}).
/// unify-dims replaces these; docs/shape-inference.md lists them.
bool isExporterMadeSymbol(llvm::StringRef Name);

} // namespace onnxopt

#endif // ONNXOPT_OPS_DIMALGEBRA_H
