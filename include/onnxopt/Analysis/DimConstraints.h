//===- DimConstraints.h - Conditions on dims under which a model runs -*- C++ -*-===//
//
// A shape the dim algebra derives holds only where the nodes can run: a
// Gemm needs equal inner dims, a broadcast needs equal dims or a 1, a Conv
// needs an input at least as large as its kernel, a Gather needs its
// indices inside the table, a Reshape needs the element count to match.
// DimAnalysis records each such condition with the node that implies it
// (DimAnalysis::getConstraints); this header decides them, evaluates them
// at chosen values, derives the bounds they imply and prints them in user
// terms:
//   height, width: 32*floor((height+3)/8)*floor((width+3)/8) = 25088
//     (node '/fc/Gemm' (Gemm): inner dims of the product)
//
// Deciding is exact integer reasoning over the DimExpr forms (or, over a
// small box of stored ranges, every point of it), never sampling: a
// constraint "holds" only when it holds at every value of its symbols
// inside their domains (each symbol >= 1, or its stored range).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_DIMCONSTRAINTS_H
#define ONNXOPT_ANALYSIS_DIMCONSTRAINTS_H

#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

class Node;

struct DimConstraint {
  enum Kind {
    Equal,         ///< Lhs = Rhs
    Broadcast,     ///< Lhs = Rhs, or one of them is 1
    AtLeast,       ///< Lhs >= Rhs
    AtMost,        ///< Lhs <= Rhs
    Divisible,     ///< Lhs is a multiple of Rhs (a constant > 0)
    DataDependent, ///< the node's output dims depend on tensor values
  };
  Kind K = Equal;
  DimExpr Lhs, Rhs;
  /// The node that needs the condition (null: the model's declared types).
  const Node *N = nullptr;
  /// What the op needs, in a few words ("inner dims of the product").
  std::string Why;

  /// The symbols mentioned, sorted, without repeats.
  std::vector<std::string> symbols() const;
  /// `seq_len <= 128`, `H = W or one of them is 1`.
  std::string condition() const;
  /// `seq_len: seq_len <= 128 (node 'n' (Gather): indices inside the table)`.
  std::string str() const;
};

/// The values each symbol may take: >= 1 by default, or a stored range;
/// and the relations the user asserts (W = H, H a multiple of 32), which
/// decide() applies by rewriting expressions: W becomes H, H becomes
/// 32 * `H%32` (a fresh symbol with H's range divided by 32).
class SymbolDomain {
public:
  SymbolDomain() = default;
  explicit SymbolDomain(DimRangeMap Ranges, DimRelations Relations = {});
  int64_t min(llvm::StringRef Symbol) const;
  std::optional<int64_t> max(llvm::StringRef Symbol) const;
  /// \p E with the relations applied.
  DimExpr normalize(const DimExpr &E) const;
  bool hasRelations() const { return !Rewrite.empty() || !SumBounds.empty(); }
  /// True if a relation asserts \p E <= \p Bound (E a sum of symbols it
  /// bounds by at most Bound).
  bool assertsAtMost(const DimExpr &E, int64_t Bound) const;
  /// Raises the least value of \p Symbol to \p Min (a bound the model
  /// implies: it runs at no smaller value). No upper bound comes with it.
  void assumeAtLeast(llvm::StringRef Symbol, int64_t Min);

private:
  DimRangeMap Ranges;
  /// Least values assumed beyond Ranges (assumeAtLeast).
  std::map<std::string, int64_t> Least;
  /// The AtMost relations: sum of terms, bound.
  std::vector<std::pair<DimExpr, int64_t>> SumBounds;
  /// Symbol -> what it is rewritten to.
  std::map<std::string, DimExpr> Rewrite;
};

enum class Verdict {
  Holds,   ///< at every value of the domain
  Fails,   ///< at every value of the domain
  Depends, ///< at some values, or not decided
};

/// Decides \p C over \p D. Never "Holds" or "Fails" by guess: what the
/// reasoning cannot settle is "Depends".
Verdict decide(const DimConstraint &C, const SymbolDomain &D);

using SymbolValues = std::function<std::optional<int64_t>(llvm::StringRef)>;

/// \p C at the given values; std::nullopt when a symbol has no value (or
/// the expression has an unknown).
std::optional<bool> holdsAt(const DimConstraint &C, const SymbolValues &V);

/// \p C as a relation on a sum of several symbols (`past+seq<=64`), when it
/// is an upper bound whose left side is a sum of symbols with positive
/// coefficients (plus a constant) and whose right side is a number: the
/// bounds no range of one symbol can store. std::nullopt otherwise.
std::optional<DimRelation> asSumBound(const DimConstraint &C);

/// The interval one symbol must lie in for \p C to hold, when \p C mentions
/// only that symbol and is monotone in it (`seq_len <= 128`,
/// `height >= 32`). Min and Max are within \p D; std::nullopt otherwise.
struct SymbolBound {
  std::string Symbol;
  int64_t Min = 1;
  std::optional<int64_t> Max;
};
std::optional<SymbolBound> impliedBound(const DimConstraint &C,
                                        const SymbolDomain &D);

/// The constraints of \p DA (run) that speak about the main graph's input
/// symbols only (no unknowns, no inner symbols), and the data-dependent
/// nodes: what a user can act on.
std::vector<DimConstraint> getInputConstraints(const DimAnalysis &DA);

/// True if DimAnalysis requires every condition on dims that \p N's op has
/// (or the op has none). For other ops (GridSample, Einsum, ScatterND,
/// custom domains, ...) nothing is known: a pass that needs the model to
/// run at new sizes must not assume they do.
bool dimRulesCover(const Node &N);

/// True if \p C pins the symbols it mentions to finitely many values (an
/// equality or a broadcast against a number) rather than bounding them.
bool pinsSymbols(const DimConstraint &C);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_DIMCONSTRAINTS_H
