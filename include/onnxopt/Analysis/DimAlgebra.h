//===- DimAlgebra.h - Symbolic dims and their equalities -------*- C++ -*-===//
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

// DimExpr lives in the op layer (the dim rules compute with it).
#include "onnxopt/Ops/DimAlgebra.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

struct DimConstraint;
class Model;
class ShapeInfo;
class Type;
class Value;

/// The dims of every value of a model as expressions, and the equalities
/// between dims that the model's nodes imply. Reads the types recorded in
/// the IR, or with \p Types the ones inference found (ShapeInfo, which
/// leaves the IR as it is), and refines them.
class DimAnalysis {
public:
  explicit DimAnalysis(Model &M, const ShapeInfo *Types = nullptr);
  ~DimAnalysis();

  /// Computes everything; linear in the model size (a few sweeps at most).
  /// Later calls do nothing.
  void run();

  /// Dims of \p V (null when its rank is unknown).
  const std::vector<DimExpr> *getDims(const Value &V) const;
  /// Keep the dims and data of the first sweep (call before run()): each
  /// value's dims computed from its operands, before the equalities found
  /// further down the graph are applied. make-dynamic reads them where a baked
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
  /// The first sweep's contents of the shape tensor \p V (null unless kept
  /// and known), as getForwardDims for dims.
  const std::vector<DimExpr> *getForwardData(const Value &V) const;
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

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_DIMALGEBRA_H
