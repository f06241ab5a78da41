//===- DimAlgebra.h - Symbolic dim expressions and equalities --*- C++ -*-===//
//
// ONNX 1.12's inference cannot do arithmetic on symbols: a Conv over
// float[N,3,H,W] yields fresh `unk__` dims, a Concat of symbolic pieces too.
// This analysis computes each dim as an expression over the model's symbols
// (sums, products, floor/ceil division by constants: what Conv, Pool,
// Resize, Reshape, Concat, Flatten, Split produce), tracks the integer
// contents of shape tensors (Shape -> Gather -> Concat -> Reshape), and
// collects equalities between dims, each with the node that implies it.
//
// Soundness: two dims are made equal only when the semantics of a node force
// it (the output of a node equals the expression its op computes; the
// non-axis dims of a Concat; the contracted dims of a MatMul). Broadcasting
// with two different symbols proves nothing (either could be 1).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_DIMALGEBRA_H
#define ONNXOPT_ANALYSIS_DIMALGEBRA_H

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

struct DimConstraint;
class Model;
class Node;
class Value;

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
  /// this / D where the caller knows the division is exact (Reshape's -1,
  /// an equal Split). std::nullopt when it cannot be expressed (D is a sum).
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
  static void addTerm(TermList &Terms, Term T);
  DimExpr exactDivConstant(int64_t K) const;
  friend struct DimExprAccess;
};

/// The dims of every value of a model as expressions, and the equalities
/// between dims that the model's nodes imply. Reads the types recorded in
/// the IR (run shape inference first) and refines them.
class DimAnalysis {
public:
  explicit DimAnalysis(Model &M);
  ~DimAnalysis();

  /// Computes everything; linear in the model size (a few sweeps at most).
  /// Later calls do nothing.
  void run();

  /// Dims of \p V (null when its rank is unknown).
  const std::vector<DimExpr> *getDims(const Value &V) const;
  /// Keep the dims of the first sweep (call before run()): each value's
  /// dims computed from its operands, before the equalities found further
  /// down the graph are applied. make-dynamic reads them where a baked
  /// constant downstream proves a new dim equal to its old size.
  void setKeepForwardDims(bool Keep);
  /// Whether a dim an op computes is united with the dim its result's
  /// recorded type declares (call before run(); default true). Rewrites
  /// that must hold at every shape the inputs allow turn it off: ONNX
  /// Runtime does not enforce a declared dim (an output declared [1,10]
  /// runs at batch 4 with a warning), so uniting batch with 1 there would
  /// fold a wrong constant. Dims are still read from the recorded type
  /// where the op computes none.
  void setUniteRecorded(bool Unite);
  /// True if uniting computed dims with recorded ones changed anything: a
  /// recorded dim merged two classes or contradicted a computed number.
  /// When false, every union came from what the ops imply, so the dims,
  /// data and best forms are those setUniteRecorded(false) gives on the
  /// same types (the ids of unknown dims aside, which are only ever equal
  /// to themselves): fold-shapes reuses such an analysis.
  bool unitedRecordedDims() const;
  /// The first sweep's dims of \p V (null unless kept and of known rank).
  const std::vector<DimExpr> *getForwardDims(const Value &V) const;
  /// Integer contents of a shape tensor, if known.
  const std::vector<DimExpr> *getData(const Value &V) const;

  /// The simplest expression known equal to \p E: a constant, else one over
  /// the main graph's input symbols, else the simplest member.
  DimExpr getBest(const DimExpr &E) const;
  /// True if \p A and \p B were proven equal.
  bool provenEqual(const DimExpr &A, const DimExpr &B) const;
  /// The class \p E belongs to (an id shared by the expressions proven
  /// equal to it), or nullopt when the analysis has not seen \p E. Two
  /// different expressions are provenEqual exactly when both have a class
  /// and it is the same.
  std::optional<unsigned> getClassId(const DimExpr &E) const;

  /// Places where an op's computed dim and the recorded one are different
  /// numbers (a wrong declared type, or a bug here); never merged.
  llvm::ArrayRef<std::string> getConflicts() const;
  /// True if \p E's class took part in a conflict.
  bool isConflicted(const DimExpr &E) const;

  /// Symbols of the main graph's inputs, in order of first appearance.
  const std::vector<std::string> &getInputSymbols() const;
  /// True if \p E mentions only input symbols (and no unknown).
  bool isInputExpressible(const DimExpr &E) const;

  /// One class of equal dims: its members, best expression and the nodes
  /// that imply the equalities.
  struct Class {
    DimExpr Best;
    std::vector<DimExpr> Members;     ///< sorted by key
    std::vector<std::string> Reasons; ///< "a = b (node 'n' (Op))"
  };
  /// Every class with at least two members, in a deterministic order.
  std::vector<Class> getClasses() const;
  /// Prints the classes with their proofs.
  void explain(llvm::raw_ostream &OS) const;
  /// The conditions on dims under which the nodes can run, each with its
  /// node (see DimConstraints.h): those the transfer functions require, and
  /// one equality per member of a class of equal dims that is expressed in
  /// input symbols differently from the class's best form. Expressions are
  /// in their simplest known form; duplicates and conditions that hold
  /// whatever the symbols are dropped. Deterministic order.
  std::vector<DimConstraint> getConstraints() const;

  class Impl;

private:
  std::unique_ptr<Impl> P;
  bool Ran = false;
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

#endif // ONNXOPT_ANALYSIS_DIMALGEBRA_H
