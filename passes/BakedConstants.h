//===- BakedConstants.h - Rebuild constants a static export baked -*- C++
//-*-===//
//
// make-dynamic's repairs of whole tensors: a constant operand of an
// elementwise node whose dims are the old sizes of dims that are now
// dynamic in the operand it meets. The rules (ConstantPatterns.h checks the
// values) rebuild it at the new sizes, read from the Shape of that operand:
//  - constant along the axis: cut to 1, broadcasting does the rest;
//  - affine in the indices (grids): Base + Range * Slope per axis;
//  - a function of i - j (causal and banded masks): a Gather from the
//    diagonal table at the clamped i - j;
//  - along one axis whose size is an input symbol: a prefix of a longer
//    initializer of the model (the full table); a sinusoid per column
//    (rotary tables: Cos/Sin of Range * frequencies); or the constant
//    itself, sliced to the new size (which bounds the symbol by the old
//    size).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_PASSES_BAKEDCONSTANTS_H
#define ONNXOPT_PASSES_BAKEDCONSTANTS_H

#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "llvm/ADT/DenseMap.h"
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

/// An axis of the constant whose size is the old size of \p PartnerAxis of
/// \p Partner, a dim that is now dynamic.
struct BakedAxis {
  unsigned Axis = 0;
  Value *Partner = nullptr;
  unsigned PartnerAxis = 0;
  /// The partner's dim is one of the new input symbols itself (a sequence
  /// length), not a size computed from them.
  bool IsInputSymbol = false;
  /// The partner's dim, as an expression over the input symbols.
  std::string DimText;
  DimExpr Expr;
  /// A user further on needs the dim at the partner's size exactly, not
  /// broadcast from 1 (an Attention's mask rows): the rebuilt constant is
  /// expanded to it.
  bool Exact = false;
  /// One operand of a Concat along the partner's dim further up (the
  /// levels of a detector's anchors): the value and dim that hold it, and
  /// the dims it is a row-major flattening of (itself when no view merged
  /// it), each with its old size and whether it grows with the symbols.
  struct Piece {
    Value *V = nullptr;
    unsigned Dim = 0;
    DimExpr Size; ///< dim Dim of V

    struct Factor {
      Value *V = nullptr;
      unsigned Dim = 0;
      int64_t Old = 0;
      bool Grows = false;
    };
    std::vector<Factor> Factors;
  };
  /// The pieces in order, when the partner's dim is such a concatenation.
  std::vector<Piece> Pieces;
};

struct BakedConstant {
  Node *User = nullptr;
  unsigned Operand = 0;
  Tensor T;
  std::vector<BakedAxis> Axes;
};

/// What a rebuild did: the rule that fired and a sentence for the remark,
/// or (Rule empty) why no rule applies.
struct RebuildResult {
  std::string Rule;
  std::string Message;
  /// The rule slices the constant itself: the symbol stays within the old
  /// size (the dim analysis derives the bound from the Slice).
  bool Bounds = false;
  /// With Bounds: the new symbol the constant is sliced along.
  std::string Along;
  /// A new input symbol along which the rebuilt rows are positions from
  /// the old offset on: another symbol laid end to end with it may be that
  /// offset (MakeDynamic.cpp pins it). With RowsFromZero the rows start at
  /// position 0 (a sinusoid, an affine table from 0), which only a symbol
  /// of old size 0 may have offset.
  std::string OffsetAlong;
  bool RowsFromZero = false;
  /// The new symbol whose size the rebuilt rows start at (a rotary table
  /// baked from the old past on), read at run time: make-dynamic checks it
  /// is laid end to end with OffsetAlong rather than pinning it.
  std::string OffsetBy;
};

/// A new symbol that a table's rows may start at, as rebuildBakedConstant
/// reads it: its old size and the graph input dim that holds it.
struct RowOffset {
  std::string Symbol;
  int64_t Old = 0;
  Value *Input = nullptr;
  unsigned Dim = 0;
};

/// How make-dynamic evaluates a value computed from constants to read what
/// was baked: cones of up to 256 nodes, results up to 16 MiB, and the ops a
/// runtime rounds its own way (Cos, a float MatMul) included, as the
/// repairs only read these values and rebuild what they recognise.
ConstantConeOptions bakedConeOptions();

/// The value of \p V when it is computed from constants only (a grid that
/// torch built with Expand and Cast, a mask made by Trilu of a constant):
/// the exporter left the subgraph, its value is what was baked. Results
/// are memoized per round in \p Memo.
Tensor evaluateBaked(const Value &V, int64_t Opset,
                     llvm::DenseMap<const Value *, Tensor> &Memo);

/// One piece of index tuples that a Concat joins along their last dim: the
/// value, the component it starts at and how many components it holds.
struct TuplePiece {
  Value *V = nullptr;
  int64_t Component = 0, Width = 0;
};

/// The pieces of \p Tuples where the graph joins them along their last dim
/// (torch writes `Concat(Unsqueeze(Expand(arange, shape), -1), ...)`, one
/// piece per component); none otherwise or where a width is unknown.
std::optional<std::vector<TuplePiece>> joinedTuplePieces(const Value &Tuples,
                                                         const DimAnalysis &DA);

/// The constant a value repeats through Unsqueeze, Expand and Identity
/// (the values stay; only their shape changes), with the node that reads
/// it as its first operand (null where the value is itself the constant).
struct RepeatedConstant {
  Tensor T;
  Node *Reader = nullptr;
};
std::optional<RepeatedConstant>
repeatedConstant(Value &V, int64_t Opset,
                 llvm::DenseMap<const Value *, Tensor> &Memo);

/// Rebuilds \p B's constant at the partner's sizes and makes the user read
/// the rebuilt value. Changes nothing when no rule applies. A sinusoid
/// whose rows start at the old size of one of \p Offsets (and of no other
/// new symbol) is rebuilt from that symbol's size at run time.
RebuildResult rebuildBakedConstant(const BakedConstant &B, Model &M,
                                   Rewriter &RW,
                                   llvm::ArrayRef<RowOffset> Offsets = {});
/// 0, 1, ..., n-1 along \p Axis of \p B's constant (1 on its other axes),
/// n being the partner's dim of that baked axis, in the constant's element
/// type: a tuple component that is each row's own position. Built before
/// B's user; the user is left as it is.
Value *buildPositions(const BakedConstant &B, unsigned Axis, Model &M,
                      Rewriter &RW);

/// Dim \p Dim of \p Input read at run time, with the dims and element
/// type of the one-element constant \p Like it stands for; built before
/// \p User.
Value *buildInputDim(Node &User, Value *Input, unsigned Dim, const Tensor &Like,
                     Model &M, Rewriter &RW);

/// An integer tensor whose elements are affine in their own position:
/// `V[p] == Offset + sum of Coef[a] * p[a]`, the numbers dim expressions
/// (a row stride may be a size the model reads with Shape).
struct IndexForm {
  std::vector<DimExpr> Coef;
  DimExpr Offset;
  /// The axis A where `V[p] == p[A]`, if the form is that.
  std::optional<unsigned> positionAxis() const;
  /// Every element 0.
  bool isZero() const;
};

/// Reads, through the nodes torch lowers advanced indexing to
/// (`mask[arange(B)[:, None], arange(S)]`, or the flattened `b*S + j`),
/// whether a computed index tensor is affine in its positions: a Range of
/// constant start and step, a constant (checked on every element; baked at
/// the old sizes, which is what make-dynamic's repairs rebuild), a size
/// the analysis knows (a dim read with Shape), and the
/// Unsqueezes, Transposes, Expands, Adds and scalings by a number over
/// them. A broadcast keeps the form only where it leaves each counting
/// axis as it is (the dims equal, as the analysis proves them), so the
/// form holds at every size the analysis allows. Null when any step is
/// not one of these.
class IndexFormReader {
public:
  IndexFormReader(const DimAnalysis &DA, int64_t Opset,
                  llvm::DenseMap<const Value *, Tensor> &Memo)
      : DA(DA), Opset(Opset), Memo(Memo) {}
  std::optional<IndexForm> read(const Value &V, unsigned Depth = 0);

private:
  const DimAnalysis &DA;
  int64_t Opset;
  llvm::DenseMap<const Value *, Tensor> &Memo;

  Tensor exact(const Value &V);
  std::optional<std::vector<int64_t>> ints(const Value *V);
  std::optional<IndexForm> readConstant(const Value &V);
  std::optional<IndexForm> readShapeNumber(const Value &V);
  std::optional<IndexForm> readRange(const Node &N);
  std::optional<IndexForm> unsqueezed(const Node &N, const IndexForm &In);
  std::optional<IndexForm> transposed(const Node &N, const IndexForm &In);
  std::optional<IndexForm> broadcast(const Value &X, const Value &R,
                                     const IndexForm &In);
  std::optional<IndexForm> combined(const Node &N, unsigned Depth);
};

} // namespace onnxopt

#endif // ONNXOPT_PASSES_BAKEDCONSTANTS_H
