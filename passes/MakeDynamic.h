//===- MakeDynamic.h - make-dynamic's state, shared by its files -*- C++
//-*-===//
//
// make-dynamic is one pass in three files: MakeDynamic.cpp (the pass, the
// driver, the checks and most repairs), ReshapeTargets.cpp (baked Reshape
// targets) and BakedConstants.cpp (baked tensors). This header holds what
// they share: the state of one run and a builder for shape vectors.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_PASSES_MAKEDYNAMIC_H
#define ONNXOPT_PASSES_MAKEDYNAMIC_H

#include "BakedConstants.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/IR/ShapeVectorBuilder.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Pass/PassOptions.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace onnxopt {
namespace makedynamic {

using OldValues = std::map<std::string, int64_t>;

/// `[1,2,3]`.
std::string printInts(llvm::ArrayRef<int64_t> V);

/// Where axis \p FromRight (counted from the right) of a gather's indices
/// is in the gather's result (BakedConstants.cpp).
std::optional<unsigned> gatheredAxis(const Node &M, unsigned Operand,
                                     unsigned FromRight, const DimAnalysis &DA);

/// The dims as computed over the input symbols. A computed expression is
/// kept over the best one of its class: while baked constants remain, the
/// algebra may have merged a symbol with an old size (N with 1).
/// A dim whose recorded type is one of the new symbols is that symbol.
std::vector<DimExpr> expressInInputs(const DimAnalysis &DA, const Value &V,
                                     llvm::ArrayRef<DimExpr> Dims,
                                     const OldValues &Old);

/// One thing make-dynamic could not repair.
struct Problem {
  const Node *N = nullptr;
  std::string Message;
  /// New symbols that cannot take every value because of it.
  std::set<std::string> Pins;
};

/// The axes a Slice cuts, resolved against \p Rank (ReshapeTargets.cpp).
std::set<unsigned> slicedAxes(const Node &N, size_t Rank);
/// The operand dim that dim \p Dim of a Transpose's result (rank \p Rank)
/// is: `perm`'s entry, or the reversal without it; none where `perm` is too
/// short.
std::optional<unsigned> permutedFrom(const Node &N, unsigned Dim, size_t Rank);

/// True if \p E is an integer at a spread of sizes, each symbol with its
/// own values (see MakeDynamic.cpp).
bool isIntegralAtSamples(const DimExpr &E);

/// The state of one run of make-dynamic (the pass object holds only its
/// options, so it can run on two models at once).
class DynamicRewrite {
public:
  /// Settles the dims that \p Specs name and that are already dynamic, and
  /// the symbols they would clash with, before applyShape: a symbol named
  /// at an already symbolic dim renames that symbol everywhere, a symbol
  /// named at an unknown dim names it, and a symbol of the model that a new
  /// name would take is renamed to a fresh one (N_1). Fails, naming the
  /// dims, where one name would stand for a dynamic and a static dim.
  LogicalResult nameDynamicDims(Model &M, llvm::ArrayRef<ShapeSpec> Specs,
                                PassContext &Ctx);
  /// The symbols shapes= names at dims that were already dynamic (they
  /// have no old value, and nothing is repaired for them).
  std::set<std::string> Named;
  LogicalResult applyShape(Model &M, const ShapeSpec &Spec,
                           DiagnosticEngine &Diags);
  /// The main graph's non-constant inputs by name, for applyShape (built on
  /// its first call: one search per shapes= entry was quadratic).
  std::optional<llvm::StringMap<Value *>> InputsByName;
  LogicalResult reinfer(Model &M, DiagnosticEngine &Diags);
  std::optional<int64_t> oldValue(const DimExpr &E) const;
  /// The new input symbols \p E mentions, added to \p Out.
  void addNewSymbols(const DimExpr &E, std::set<std::string> &Out) const;
  std::set<std::string> newSymbols(const DimExpr &E) const {
    std::set<std::string> Out;
    addNewSymbols(E, Out);
    return Out;
  }
  bool startsAlike(llvm::ArrayRef<DimExpr> In, llvm::ArrayRef<int64_t> Target,
                   unsigned I) const;
  /// For reading a baked target over its data: the value at the old
  /// sizes, each symbol the static model already had (a batch exported
  /// dynamic beside a baked length) at a stand-in size no literal takes,
  /// so that only the target's -1 or a copy (0) can meet it.
  std::optional<int64_t> readingValue(const DimExpr &E) const;
  bool resolveCopies(const Node &N, llvm::ArrayRef<DimExpr> In,
                     llvm::ArrayRef<int64_t> Target,
                     std::vector<int64_t> &Resolved) const;
  mutable std::vector<std::string> StandInOrder;
  /// Runs the repair for \p N's op, if there is one: per op, rooted at
  /// the op as a pattern is, or for every elementwise broadcasting op.
  void repair(Node &N, DimAnalysis &DA, Rewriter &RW,
              const llvm::DenseMap<const Node *, size_t> &Order);
  /// Values an elementwise op reads that the model computes from
  /// constants and the sizes of dims it keeps dynamic only, read as the
  /// constants they are along those dims (KeptCones.cpp). True if one was.
  bool readKeptCones(Model &M, DiagnosticEngine &Diags);
  /// The Shape and Size nodes of the model as it came, before any repair.
  llvm::DenseSet<const Node *> OriginalTypeReaders;
  void repairReshape(Node &N, DimAnalysis &DA, Rewriter &RW);
  /// A Reshape whose target is a Concat of computed and baked pieces.
  void repairReshapePieces(Node &N, DimAnalysis &DA, Rewriter &RW);
  /// One entry of such a target: its value as the dim algebra reads it,
  /// and whether a constant piece holds it as a literal.
  struct JoinedEntry {
    DimExpr Value;
    bool Literal;
  };
  void copyUnitEntries(Node &N, const Node &Joined,
                       llvm::ArrayRef<JoinedEntry> Entries,
                       llvm::ArrayRef<DimExpr> In, DimAnalysis &DA,
                       Rewriter &RW);
  std::vector<bool> entriesOfStaticGroups(llvm::ArrayRef<DimExpr> In,
                                          llvm::ArrayRef<int64_t> Target) const;
  std::optional<unsigned>
  literalAtMergedDim(Node &N, llvm::ArrayRef<JoinedEntry> Entries,
                     llvm::ArrayRef<DimExpr> In, const DimAnalysis &DA);
  bool readAsConstantTarget(Node &N, llvm::ArrayRef<JoinedEntry> Entries,
                            llvm::ArrayRef<DimExpr> In, DimAnalysis &DA,
                            Rewriter &RW, bool BakedComputed = false);
  /// A recurrent layer's \p NumStates initial states (operands 5 on).
  void repairRecurrentState(Node &N, DimAnalysis &DA, Rewriter &RW,
                            unsigned NumStates);
  /// torch's in-place slice assignment (SliceWrites.cpp).
  void repairSliceWrite(Node &N, DimAnalysis &DA, Rewriter &RW);
  void repairTupleRows(Node &N, DimAnalysis &DA, Rewriter &RW);
  void repairSliceEnds(Node &N, DimAnalysis &DA, Rewriter &RW);
  void repairExpand(Node &N, DimAnalysis &DA, Rewriter &RW);
  bool freeExpandEntries(const Node &N, DimAnalysis &DA,
                         std::vector<std::optional<int64_t>> &Entries);
  /// An Expand whose shape is a Concat of computed and constant pieces.
  void repairExpandPieces(Node &N, DimAnalysis &DA, Rewriter &RW);
  /// A Concat of \p Joined's 1-D pieces, made before \p N for N alone, in
  /// which entry K of a constant piece (old value Was) is NewEntry(K, Was)
  /// (a new constant where one changed); computed pieces stay.
  Value *rejoin(Node &N, const Node &Joined, DimAnalysis &DA,
                llvm::function_ref<int64_t(size_t, int64_t)> NewEntry,
                llvm::StringRef Hint, Rewriter &RW);
  /// A GatherND whose constant index tuples enumerate the data's dims
  /// (BakedConstants.cpp).
  void repairGatherND(Node &N, DimAnalysis &DA, Rewriter &RW);
  /// The same where the tuples are computed in the graph (a batch exported
  /// dynamic beside a baked length).
  void repairComputedGatherND(Node &N, DimAnalysis &DA,
                              llvm::ArrayRef<DimExpr> In, Rewriter &RW);
  bool gatherAsUnsqueeze(Node &N, llvm::ArrayRef<int64_t> NewAxes,
                         Rewriter &RW);
  /// A Gather of constant indices 0..n-1 in order over a dim that became
  /// dynamic: a view of its data (MakeDynamic.cpp).
  void repairGatherInOrder(Node &N, DimAnalysis &DA, Rewriter &RW);
  /// The same with indices computed in the graph (`b*S + j` beside a batch
  /// the export kept dynamic).
  void repairComputedGatherInOrder(Node &N, DimAnalysis &DA, Rewriter &RW);
  void repairRowOffsets(Node &N, DimAnalysis &DA, Rewriter &RW);
  void repairIndexSizes(Node &N, unsigned FirstDim, unsigned NumDims,
                        DimAnalysis &DA, Rewriter &RW);
  /// The results of the gathers whose row offsets repairRowOffsets rebuilt:
  /// they still pick along a dim that merges a unit symbol, as they should.
  std::set<std::string> RowOffsetGathers;
  bool gatherAsView(Node &N, llvm::ArrayRef<int64_t> Target, Rewriter &RW);
  bool gatherAsView(Node &N, Value *Shape, Rewriter &RW);
  bool countsUnitRows(const DimExpr &Gathered, const DimExpr &Count,
                      llvm::ArrayRef<DimExpr> IdxIn) const;
  bool gatherAsRowsView(Node &N, DimAnalysis &DA, llvm::ArrayRef<DimExpr> IdxIn,
                        int64_t Axis, Rewriter &RW);
  /// A GatherElements table baked at the old size of an index dim along
  /// which it is the same (MakeDynamic.cpp).
  void repairGatherElements(Node &N, DimAnalysis &DA, Rewriter &RW);
  /// Where a baked constant's axis that no other operand of its user sizes
  /// meets a new input symbol further on (BakedConstants.cpp).
  std::optional<BakedAxis> downstreamAxis(const Node &User, unsigned Axis,
                                          unsigned Rank, int64_t Size,
                                          const DimAnalysis &DA);
  /// Axis \p Axis of a baked constant that \p M's operand \p Operand
  /// must have at a partner's size exactly (exactDimPartner), when that
  /// size is a new input symbol of old size \p Size (BakedConstants.cpp).
  std::optional<BakedAxis> exactAxis(const Node &M, unsigned Operand,
                                     unsigned FromRight, unsigned Axis,
                                     int64_t Size, const DimAnalysis &DA);
  bool minusOneStoodForOne(const Node &N, llvm::ArrayRef<DimExpr> In,
                           llvm::ArrayRef<int64_t> Target) const;
  bool readAsRoundTrip(Node &N, llvm::ArrayRef<DimExpr> In,
                       llvm::ArrayRef<int64_t> Target, DimAnalysis &DA,
                       Rewriter &RW);
  bool tryShapeDerived(Node &N, llvm::ArrayRef<DimExpr> In,
                       llvm::ArrayRef<int64_t> Target, Rewriter &RW);
  /// A baked target read off the operand its result meets in an
  /// elementwise op, where the reading \p Planned would not match it
  /// (ReshapeTargets.cpp).
  bool readByFallbacks(Node &N, llvm::ArrayRef<DimExpr> In,
                       llvm::ArrayRef<int64_t> Target, DimAnalysis &DA,
                       Rewriter &RW, std::string &Why);
  bool readPartnerTarget(Node &N, llvm::ArrayRef<DimExpr> In,
                         llvm::ArrayRef<int64_t> Target,
                         llvm::ArrayRef<DimExpr> Planned, DimAnalysis &DA,
                         Rewriter &RW);
  std::optional<unsigned> copyTakingRest(llvm::ArrayRef<DimExpr> In,
                                         llvm::ArrayRef<int64_t> New,
                                         llvm::ArrayRef<unsigned> Pinned) const;
  bool alignReshape(Node &N, llvm::ArrayRef<DimExpr> In,
                    llvm::ArrayRef<int64_t> Target, Rewriter &RW,
                    const std::vector<int64_t> *Planned = nullptr);
  /// The fallback for a baked target that the others cannot read: entries
  /// grouped with input dims where their running products meet
  /// (ReshapeTargets.cpp). \p Why, if given and empty, is set to why the
  /// first group that could not be read was refused.
  bool groupReshape(Node &N, llvm::ArrayRef<DimExpr> In,
                    llvm::ArrayRef<int64_t> Target, Rewriter &RW,
                    std::string *Why = nullptr);
  /// The spans of the running products at the old sizes
  /// (ReshapeTargets.cpp).
  void spansAtOldSizes(
      llvm::ArrayRef<DimExpr> In, llvm::ArrayRef<int64_t> Target,
      std::optional<std::vector<std::pair<int64_t, int64_t>>> &InSpans,
      std::optional<std::vector<std::pair<int64_t, int64_t>>> &TSpans) const;
  /// A dim of a value computed before a Reshape that a split takes.
  struct FactorSource {
    Value *V;
    unsigned Dim;
    DimExpr Expr; ///< the dim
    DimExpr Rest; ///< what is left of the split dim
  };
  std::optional<FactorSource> findFactorSource(const Node &N,
                                               const DimExpr &Dim,
                                               int64_t OldSize);
  /// The dims an earlier view merged into dim \p D of \p V, each as a dim
  /// of the view's operand; empty when there is no such merge.
  std::vector<std::pair<Value *, unsigned>>
  mergedFrom(Value *V, unsigned D, const DimAnalysis &DA);
  /// The operands of a Concat along dim \p D of \p V further up, each with
  /// the dim that holds its piece; empty when there is none.
  std::vector<std::pair<Value *, unsigned>>
  concatenatedFrom(Value *V, unsigned D, const DimAnalysis &DA);
  std::vector<BakedAxis::Piece> concatPieces(Value *V, unsigned D,
                                             const DimAnalysis &DA);
  std::vector<std::pair<Value *, unsigned>>
  traceDim(Value *V, unsigned D, const DimAnalysis &DA, bool ToConcat);
  /// An in-order gather's view whose index dims are the dims the gathered
  /// dim merged, in order (MakeDynamic.cpp).
  bool gatherAsMergedView(Node &N, DimAnalysis &DA,
                          llvm::ArrayRef<int64_t> IdxDims, int64_t Axis,
                          Rewriter &RW);
  /// A dim of a Reshape's data input, with each merged dim spread out
  /// into the dims it was made of.
  struct SpreadDim {
    DimExpr E;
    Value *V; ///< the value and dim that hold it
    unsigned Dim;
  };
  std::optional<std::vector<SpreadDim>> spreadMergedDims(Node &N,
                                                         llvm::ArrayRef<DimExpr> In);
  /// A baked target that splits such a merged dim back, entry for entry:
  /// rewritten, already right (Kept), or not read so (None).
  enum class SplitResult { None, Kept, Rewritten };
  SplitResult splitMergedDims(Node &N, llvm::ArrayRef<DimExpr> In,
                              llvm::ArrayRef<int64_t> Target, Rewriter &RW);
  /// The dim analysis of the Reshape under repair (repairReshape).
  const DimAnalysis *CurrentDA = nullptr;
  /// The graph input and dim that new symbol \p S is, if any.
  std::pair<Value *, unsigned> inputDimOf(llvm::StringRef S) const;
  std::optional<BakedAxis> earlierDimAxis(const Node &User, unsigned Axis,
                                          const DimExpr &E, int64_t Size,
                                          const DimAnalysis &DA);
  std::optional<BakedAxis> inputSymbolAxis(unsigned Axis, const DimExpr &E,
                                           int64_t Size) const;
  void repairResize(Node &N, DimAnalysis &DA, Rewriter &RW,
                    const llvm::DenseMap<const Node *, size_t> &Order);
  bool resizeToPartner(Node &N, llvm::ArrayRef<DimExpr> Sizes,
                       llvm::ArrayRef<int64_t> Baked, DimAnalysis &DA,
                       Rewriter &RW,
                       const llvm::DenseMap<const Node *, size_t> &Order);
  bool resizeToInputs(Node &N, llvm::ArrayRef<DimExpr> In,
                      llvm::ArrayRef<DimExpr> Sizes,
                      llvm::ArrayRef<int64_t> Baked, Rewriter &RW);
  bool resizeToConcatPartner(Node &N, llvm::ArrayRef<DimExpr> In,
                             llvm::ArrayRef<DimExpr> Sizes,
                             llvm::ArrayRef<int64_t> Baked, DimAnalysis &DA,
                             Rewriter &RW,
                             const llvm::DenseMap<const Node *, size_t> &Order);
  /// The constant operands of an elementwise node, or of a Concat
  /// (\p IsConcat: no broadcasting, other dims must be equal), or the
  /// constant data of an Expand (\p ExpandData: no partner beside it, the
  /// size is found further on), or of a MatMul (\p BatchDimsOnly: the dims
  /// before the last two broadcast as an elementwise op's, the matrix dims
  /// do not).
  void repairBakedConstants(Node &N, DimAnalysis &DA, Rewriter &RW,
                            bool IsConcat, bool ExpandData = false,
                            bool BatchDimsOnly = false);
  /// Rebuilds \p B's axes of more than one element and expands it to its
  /// partners' dims on every baked axis; \p Why ends the remark (what the
  /// dims are); \p Rule counts it. With \p Positions, the constant is
  /// first rebuilt as each row's position along that axis (\p Said tells
  /// why). Returns a problem whose Message is empty on success.
  Problem expandBakedOperand(const BakedConstant &B, Rewriter &RW,
                             llvm::StringRef Why, llvm::StringRef Rule,
                             std::optional<unsigned> Positions = std::nullopt,
                             llvm::StringRef Said = "");
  /// The constant operands of an op that needs some of their dims to equal
  /// another operand's exactly (exactDimPartner: an Attention's mask,
  /// RotaryEmbedding's caches), expanded to them (BakedConstants.cpp).
  void repairExactOperands(Node &N, DimAnalysis &DA, Rewriter &RW);
  /// True if a repair already reported why \p N pins every one of \p New.
  bool alreadyReported(const Node *N, const std::set<std::string> &New) const;

  /// Old value of each new symbol.
  OldValues Old;
  /// relations= (W=H, H%32=0): assumed when the conditions the dynamic
  /// model needs are decided, and stored with the model's dim ranges.
  DimRelations Relations;
  /// The values the symbols may take: >= 1, the stored ranges, Relations.
  SymbolDomain Domain;
  /// isIntegralAtSamples over the values Domain allows: with H%32=0, H/32
  /// is an integer. Member functions call this one.
  bool isIntegralAtSamples(const DimExpr &E) const;
  /// Checks relations= against the symbols and their old sizes, and sets
  /// Relations and Domain.
  LogicalResult readRelations(Model &M, llvm::ArrayRef<std::string> Texts,
                              DiagnosticEngine &Diags);
  /// Adds Relations to those stored in the model (as set-dim-range does);
  /// a relation about a symbol allow-partial kept static is dropped.
  LogicalResult storeRelations(Model &M, DiagnosticEngine &Diags);
  /// Output hints: `shapes=` entries that name graph outputs, saying which
  /// output dims are which new symbols (as torch's dynamic_axes does).
  std::vector<std::pair<Value *, ShapeSpec>> Hints;
  /// The new symbols in the order the hints name them.
  std::vector<std::string> HintOrder;
  LogicalResult addHint(Model &M, const ShapeSpec &Spec,
                        DiagnosticEngine &Diags);
  void checkHints(Model &M);
  std::vector<std::pair<Value *, std::vector<Dim>>> NewShapes;
  /// The dims of NewShapes that pin() made static again ((input, dim)):
  /// they are no static dims of the user's shapes.
  std::set<std::pair<const Value *, size_t>> PinnedDims;
  std::vector<Problem> Problems;
  bool Repaired = false;
  /// How often each node was repaired in this attempt: a node repaired
  /// more than MaxRepairsOfNode times ends the rounds (attempt).
  llvm::DenseMap<const Node *, int> TimesRepaired;
  static constexpr int MaxRepairsOfNode = 8;
  /// A safety net only: progress ends the rounds before.
  static constexpr int MaxRepairRounds = 4096;
  /// What was repaired, by kind (for the closing remark).
  std::map<std::string, int> RepairCounts;
  /// The model's own name of each shape operand this pass has rewritten,
  /// by the rewrite's name: a later round's report names what the user
  /// has (DeiT's 'val_39', not the 'val_39_dynamic' an earlier round made).
  std::map<std::string, std::string> ShapeOrigin;
  /// Sets \p N's shape operand \p I to \p New, recording its origin.
  void setShapeOperand(Node &N, unsigned I, Value *New, Rewriter &RW);
  /// How a report names \p N's shape operand \p I: its own name, or the
  /// model's original and what this pass made of it.
  std::string shapeOperandName(const Node &N, unsigned I) const;
  /// Values of constant subgraphs seen this round (evaluateBaked).
  llvm::DenseMap<const Value *, Tensor> BakedValues;
  /// Per graph, this round: each node's place, and for each dim expression
  /// earlierDimAxis looked for, the first value (place, value, dim) with it.
  struct EarlierDims {
    llvm::DenseMap<const Node *, unsigned> Place;
    std::map<std::string,
             std::optional<std::tuple<unsigned, Value *, unsigned>>>
        First;
  };
  std::map<const Graph *, EarlierDims> EarlierDimsOf;
  /// Results downstream of this round's repairs, whose dims are stale until
  /// the model is inferred again (repair).
  llvm::DenseSet<const Value *> Stale;
  /// Resizes whose sizes this pass rebuilt (repairResize): they follow the
  /// new sizes, whatever a round's stale dims say.
  llvm::DenseSet<const Node *> SizesRebuilt;
  /// A baked constant waited for the other repairs this round; Settled:
  /// none is left, it is repaired with the axes it has (repairBakedConstants).
  bool HeldBack = false, Settled = false;
  /// Dim \p K of \p V in the input symbols, or as computed from the inputs
  /// where a baked size further on merged a new symbol with its old size
  /// (the sequence read as 10, the flattened batch*seq as 10*batch).
  DimExpr computedDim(const DimAnalysis &DA, const Value &V,
                      llvm::ArrayRef<DimExpr> Dims, unsigned K);
  /// Bounds the model implies on new symbols (stored as dim ranges when
  /// both ends are known).
  std::map<std::string, SymbolBound> Bounds;
  /// Baked tables this attempt rebuilt as rows of positions along a new
  /// symbol (kept and sliced, or an affine or sinusoid table): the symbol
  /// and the remark that said so (examineSlicedTables). With FromZero the
  /// rows start at position 0: only a symbol of old size 0 may offset them.
  /// With OffsetBy they start at that symbol's size, read at run time: it
  /// must be laid end to end with Along (the past before the new tokens).
  struct RowsTable {
    std::string Along, Said;
    bool FromZero = false;
    std::string OffsetBy;
  };
  std::vector<RowsTable> SlicedTables;
  /// Each new symbol that is an input's dim, as a table's rows may start at
  /// its size (rebuildBakedConstant).
  std::vector<RowOffset> rowOffsets() const;
  void examineSlicedTables(Model &M, const DimAnalysis &DA);
  void forEachResultDims(
      Model &M, const DimAnalysis &DA,
      llvm::function_ref<void(Node &, const Value &, llvm::ArrayRef<DimExpr>)>
          F);
  void examineUnitSymbols();
  /// The entries of the static model's constant view targets (Reshape's
  /// [6,2,1,2]), read before the first attempt rewrites them.
  std::set<int64_t> TargetLiterals;
  void collectTargetLiterals(Model &M);
  void examineUnitDims(Model &M, const DimAnalysis &DA);
  void examineBroadcastData(Model &M, const DimAnalysis &DA);
  void examineFixedRows(
      Node &N,
      llvm::function_ref<std::vector<DimExpr>(const Value *)> DimsOf,
      llvm::function_ref<bool(const Value *, const std::string &)> ReadsSized,
      const std::set<std::string> &Units, std::set<std::string> &Reported);
  void examineFixedWrites(Model &M, const DimAnalysis &DA);
  /// The new symbols that are the first new dim of some input (a batch).
  std::set<std::string> leadingSymbols() const;

  /// Sets the new input shapes, infers, repairs, and collects what is
  /// left (Problems).
  LogicalResult attempt(Model &M, PassContext &Ctx);
  /// Gives \p Symbols their old sizes back in the new input shapes.
  void pin(const std::set<std::string> &Symbols);
  void examineConstraints(const DimAnalysis &DA);
  DimRelations relationsFor(const DimConstraint &C,
                            const std::set<std::string> &New) const;
  LogicalResult assumeRelations(Model &M, const DimRelations &Added,
                                DiagnosticEngine &Diags);
  LogicalResult rebuildDomain(Model &M, DiagnosticEngine &Diags);
  std::string relationHint(const DimConstraint &C,
                           const std::set<std::string> &New) const;
  void examineResizes(Model &M, const DimAnalysis &DA);
  void examinePads(Model &M, const DimAnalysis &DA, DiagnosticEngine &Diags);
  std::string samePadConflict(Model &M, DiagnosticEngine &Diags, const Node &N,
                              const Node &W,
                              llvm::ArrayRef<DimExpr> In,
                              llvm::ArrayRef<std::pair<int64_t, int64_t>> Pads,
                              const DimAnalysis &DA);
  void examineUncovered(Model &M, const DimAnalysis &DA);
  /// Adds the new symbols \p V's dims depend on to \p Out.
  void addNewSymbols(const DimAnalysis &DA, const Value *V,
                     std::set<std::string> &Out) const;
  void examineDataOperands(Model &M, const DimAnalysis &DA);
  bool examineValueOperandDims(Node &N, const DimAnalysis &DA);
  void examineMergedSymbols(Model &M, const DimAnalysis &DA);
  void examineVanishedSymbols(Model &M, const DimAnalysis &DA);
  void examineBakedPositions(Model &M, const DimAnalysis &DA);
  void examineAdaptiveWindows(Model &M, const DimAnalysis &DA);
  std::optional<std::vector<int64_t>> componentValues(const Value &V, int64_t D,
                                                      const DimAnalysis &DA);
  void examineCountScales(Model &M, const DimAnalysis &DA);
  bool reportCountScale(const Node &N, double C, const Value *X,
                        const DimAnalysis &DA);
  bool reportGrowingDim(const Node &N, const DimExpr &E,
                        const std::string &Why);
  bool reportMergedRows(const Node &N, int64_t D, const DimExpr &Merged,
                        const std::string &X);
  bool reportVanished(const Value *V, unsigned K, const std::string &S,
                      int64_t OldSize, const DimAnalysis &DA);
  /// A component of GatherND's index tuples that a Concat operand holds:
  /// its index in the tuple and in the operand, and the data dim it picks.
  struct TuplePick {
    const Node *User;
    int64_t OwnComponent, Component, DataDim;
    DimExpr Dim;
  };
  std::vector<TuplePick> tuplePicks(Node &N, const BakedConstant &B,
                                    DimAnalysis &DA);
  std::optional<unsigned> positionInTuples(Node &N, const BakedConstant &B,
                                           DimAnalysis &DA, std::string &Said);
  std::string indicesPastData(Node &N, const BakedConstant &B,
                              DimAnalysis &DA);
  bool notPlaceOf(const DimAnalysis &DA, const Node &N,
                  llvm::ArrayRef<DimExpr> Out, size_t K,
                  const DimExpr &Sym) const;
  LogicalResult storeBounds(Model &M, DiagnosticEngine &Diags);
};

} // namespace makedynamic
} // namespace onnxopt

#endif // ONNXOPT_PASSES_MAKEDYNAMIC_H
