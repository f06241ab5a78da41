//===- DimRules.h - Op registry hooks: dim transfer ------------*- C++ -*-===//
//
// The DimRule hook of an op definition (OpDef.h): dim transfer for the dim
// analysis (lib/Analysis/DimAnalysis.cpp). A rule computes an op's result
// dims as expressions of its operands' dims, the integer contents ("shape
// data") its results carry, and states what its operands' dims must satisfy
// for the op to run. It asks and tells the analysis through a DimContext,
// which the analysis implements (the op layer never sees the engine, as an
// MLIR op sees only the interfaces it is given).
//
// An op with the ShapePreserving, ElementwiseBroadcasting or Reduction trait
// and no rule of its own gets its trait's rule (getDimRule); the rows of the
// family files (lib/Ops/*Ops.cpp, section "Dim transfer") are the rest.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_DIMRULES_H
#define ONNXOPT_OPS_DIMRULES_H

#include "onnxopt/Ops/DimAlgebra.h"
#include "onnxopt/Ops/OpDef.h"
#include "llvm/ADT/SmallVector.h"
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace onnxopt {

class Type;

/// Dims, or the contents of a shape tensor, as expressions.
using DimList = std::vector<DimExpr>;
/// A computed shape; a missing dim falls back to the recorded type.
using PartialDimList = std::vector<std::optional<DimExpr>>;

/// The longest shape data (and the most elements of a constant) the rules
/// and the analysis track: shapes, indices and Slice bounds are short.
constexpr size_t kMaxDimDataLength = 64;

/// What a rule can require of dims (the analysis lists each as a
/// DimConstraint of the same name, with the node and the reason).
enum class DimCondition : uint8_t {
  Equal,     ///< Lhs = Rhs
  Broadcast, ///< Lhs = Rhs, or one of them is 1
  AtLeast,   ///< Lhs >= Rhs
  AtMost,    ///< Lhs <= Rhs
  Divisible, ///< Lhs is a multiple of Rhs (a constant > 0)
};

/// The analysis as a rule sees it while it visits one node: what is known
/// of the operands, and where the rule puts its results, equalities and
/// conditions. Operand indices out of range or naming an absent
/// (optional) operand give null / std::nullopt.
class DimContext {
public:
  using ResultDims = llvm::SmallVector<std::optional<PartialDimList>, 1>;
  using ResultData = llvm::SmallVector<std::optional<DimList>, 1>;

  DimContext(const Node &N, const OpDef *Def);
  virtual ~DimContext();
  DimContext(const DimContext &) = delete;
  DimContext &operator=(const DimContext &) = delete;

  const Node &getNode() const { return N; }
  /// The node's definition at its opset (null when the registry has none).
  const OpDef *getDef() const { return Def; }
  unsigned getNumResults() const { return Out.size(); }

  //===--- What is known of the operands ---------------------------------===//

  /// Operand \p I's dims (null when its rank is unknown).
  virtual const DimList *dims(unsigned I) = 0;
  /// Operand \p I's contents as expressions in row-major order, whatever
  /// its rank, when it is a short integer tensor whose elements the
  /// analysis tracks (shape data) or a constant. For rules that move the
  /// elements without reading their positions (Reshape, Cast) or that read
  /// positions through the operand's dims.
  virtual const DimList *flatData(unsigned I) = 0;
  /// flatData() of an operand of rank 0 or 1 (or of unknown rank), for
  /// rules that read element K as position K: a [4,2] tensor's element 1 is
  /// not its row 1, and [2,1] + [1,2] is not an element-wise sum.
  const DimList *data(unsigned I);
  /// Operand \p I's contents when it is a numeric constant of at most
  /// kMaxDimDataLength elements (Resize's scales).
  virtual std::optional<std::vector<double>> floatData(unsigned I) = 0;
  /// Operand \p I's type as the analysis reads it: the recorded one, or
  /// the one inference found when the analysis reads those (null when the
  /// operand is absent).
  virtual const Type *operandType(unsigned I);
  /// Result \p I's contents when the node fixes them (a Constant's short
  /// integer value).
  virtual std::optional<DimList> constantResultData(unsigned I) = 0;
  /// The greatest element of operand \p I, when it is an index table
  /// whose greatest element is known (a Range, moved by reshapes, shifted
  /// or scaled by constants that are not negative: then a bound on it).
  virtual const DimExpr *getMaxElement(unsigned I) = 0;
  /// The least and greatest element of operand \p I at each position
  /// modulo \p Period (element E counts for E % Period), when it is an
  /// int32 or int64 constant of any rank and size; std::nullopt otherwise.
  /// For index tables that data() does not hold (more than
  /// kMaxDimDataLength elements, or a rank above 1).
  std::optional<std::vector<std::pair<int64_t, int64_t>>>
  constantBounds(unsigned I, size_t Period = 1) const;
  /// True when `Lhs K Rhs` holds whatever values the symbols take.
  virtual bool holdsAlways(DimCondition K, const DimExpr &Lhs,
                           const DimExpr &Rhs) = 0;
  /// True when `Lhs K Rhs` holds wherever the model can run: at every
  /// value of the symbols that meets the bounds the main graph's nodes
  /// before this one require (a Conv's input at least its kernel). For
  /// choosing which form a result dim takes (a Slice's clamp), never for
  /// leaving out a requirement: each node still states all of its own.
  virtual bool holdsWhereRuns(DimCondition K, const DimExpr &Lhs,
                              const DimExpr &Rhs) {
    return holdsAlways(K, Lhs, Rhs);
  }

  /// The node's axes at its opset, as its definition says (OpDef::Axes):
  /// the attribute, or the operand's constant data; std::nullopt when
  /// absent or not known.
  std::optional<std::vector<int64_t>> axes();
  /// True when the node gives axes at all at its opset (the attribute is
  /// present, or the operand is), known or not.
  bool givesAxes() const;

  //===--- What the rule tells the analysis -------------------------------===//

  /// The node implies \p A = \p B (Concat's non-axis dims, MatMul's inner
  /// dims).
  virtual void unite(const DimExpr &A, const DimExpr &B) = 0;
  /// The node runs only where `Lhs K Rhs` holds; \p Why in a few words.
  virtual void require(DimCondition K, const DimExpr &Lhs, const DimExpr &Rhs,
                       const char *Why) = 0;
  /// Result \p I is an index table whose greatest element is \p Max.
  virtual void setMaxElement(unsigned I, DimExpr Max) = 0;

  /// Result \p I's dims (std::nullopt: not computed; the recorded type
  /// stands).
  void setDims(unsigned I, std::optional<PartialDimList> D) {
    Out[I] = std::move(D);
  }
  const std::optional<PartialDimList> &getDims(unsigned I) const {
    return Out[I];
  }
  /// Result \p I's contents as expressions.
  void setData(unsigned I, DimList D) { OutData[I] = std::move(D); }

protected:
  const Node &N;
  const OpDef *Def;
  /// One entry per result, filled by the rule.
  ResultDims Out;
  ResultData OutData;
};

/// A transfer function: fills \p C's results and states the node's
/// conditions. \p X is operand 0's dims (null when unknown).
using DimTransferFn = void (*)(DimContext &C, const DimList *X);

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder).
struct DimRule {
  const char *Domain;
  const char *OpType;
  int Since;
  /// Called once per visit of a node that has results. Null: the op's
  /// results are not modelled (the recorded types stand); the row then
  /// only says that the op has no condition on dims beyond the ones its
  /// traits give (a data-dependent result).
  DimTransferFn Transfer = nullptr;
  /// Transfer reads operand 0's dims: it is not called when they are
  /// unknown (X is then never null).
  bool NeedsFirstOperandDims = false;
  /// Transfer requires every condition on dims the op has, so that a
  /// model whose dims satisfy what the analysis lists runs (make-dynamic
  /// relies on it: dimRulesCover).
  bool StatesAllConditions = true;
  /// When set, narrows StatesAllConditions to the nodes it accepts: a rule
  /// that states every condition of one form of its op and not of another
  /// (RotaryEmbedding without position_ids, whose rows are data).
  bool (*StatesAllConditionsFor)(const Node &N) = nullptr;
};

/// The numbers in \p D when every entry is a constant; std::nullopt when one
/// is not, or for null.
std::optional<std::vector<int64_t>> getConstantDims(const DimList *D);

/// \p D's dim rule: its own row, else the rule of its ShapePreserving,
/// ElementwiseBroadcasting or Reduction trait; null when it has none (or
/// \p D is null).
const DimRule *getDimRule(const OpDef *D);

} // namespace onnxopt

#endif // ONNXOPT_OPS_DIMRULES_H
