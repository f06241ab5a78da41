//===- FoldShapes.cpp - Fold shape computations with partly symbolic dims -===//
//
// Before:  (float[N,64,H,W] X) => (float[N,?,4] Y) {
//            T = Transpose<perm=[0,2,3,1]>(X)         # float[N,H,W,64]
//            S = Shape(T)
//            B = Gather<axis=0>(S, 0)                 # N: only T knows it
//            C = Gather<axis=0>(S, 3)                 # 64
//            U = Unsqueeze(B, [0])
//            P = Concat<axis=0>(U, [-1], [4])
//            Y = Reshape(T, P)
//          }
// After:   <int64[3] P = {0, -1, 4}, int64 C = {64}> { T = ...; Y = Reshape(T,
// P) }
//
// Folds what is statically known in shape computations even when other
// dims are symbolic. What a shape tensor holds and what dims a value has
// come from the one dim analysis (DimAnalysis, DimAlgebra.h): each element
// or dim is an expression over the input symbols and unknown dims (a dim
// nothing knows is equal only to itself, and flows unchanged through ops
// that keep the shape). Then:
//  - a small integer tensor whose contents are all numbers becomes a
//    constant (Gather(Shape(X[N,64,7,7]), 1) -> 64; Shape of a static value);
//  - each entry of a computed Reshape target becomes a number, 0 (the
//    data's dim at the same position, only with allowzero=0), or -1 (the
//    one entry left when the others are provably nonzero: the original
//    Reshape was valid); so `q.view(b, s, h, d)` with b, s taken from
//    `x.size()` gets `[0, 0, h, d]` although q = MatMul(x, W) is not x's
//    shape. Entries that are products of the data's dims, and no -1 can
//    stand for, are read from one `Shape` of the data itself (never of
//    another tensor); a target that reads only the data's own shape
//    already is left alone;
//  - an Expand whose shape is known gets a constant shape (1 where X's dim
//    is meant), and is removed when it copies X;
//  - a Reshape that provably keeps its input's shape is removed; one whose
//    input comes from Reshape/Flatten/Squeeze/Unsqueeze and whose constant
//    target has no 0 reads that op's input instead; a dynamic Reshape to
//    [0, -1] or [-1, product of a known tail] becomes Flatten;
//  - Squeeze(Unsqueeze(X, a), a) and Unsqueeze(Squeeze(X, a), a) become X;
//  - the chains that no longer feed anything are erased.
// The analysis only uses what the ops imply (equal inner dims of a MatMul,
// equal non-axis dims of a Concat, ...), not the dims the model declares:
// ONNX Runtime does not enforce those, so they prove nothing at run time.
//
// Every node is inferred (ONNX's per-node inference) in topological order,
// the analysis reads those types once, then one forward sweep rewrites.
// A rewrite never changes what a value holds, so the analysis' answers
// stay true after it and nothing is analysed twice; the rewritten node is
// re-inferred and its users re-queued, so types stay current. Nothing a
// later node does can enable a rewrite of an earlier one (rewrites only
// look upstream, and uses only go away), so one sweep is the fixed point.
// Bodies of If/Loop/Scan are swept when their holder is reached; a body
// that changed has its holder re-inferred. Linear in the model. Types
// recorded in the model are left as they were.
// In a pipeline, after infer-shapes (and unify-dims) with no change since,
// the types are already what inference gives: the sweep takes the cached
// inference engine instead of inferring every node again, and unify-dims'
// dim analysis when recorded dims added nothing to it (see
// DimAnalysis::unitedRecordedDims).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/IR/ShapeVectorBuilder.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include <memory>
#include <set>
#include <tuple>
#include <vector>

using namespace onnxopt;

namespace {

constexpr size_t MaxShapeLength = 64;

bool isShapeElemType(int32_t ET) {
  return ET == static_cast<int32_t>(ElementType::Int64) ||
         ET == static_cast<int32_t>(ElementType::Int32);
}

struct FoldShapesOptions {
  bool AssumeNonzeroDims = false;
  bool Flatten = true;
};

/// What one entry of a new Reshape target is.
struct TargetEntry {
  enum Kind : uint8_t {
    Open,      ///< nothing explains it (at most one may become -1)
    Literal,   ///< the number Value (0 copies a dim, -1 is inferred)
    Copy,      ///< the data's dim at this position (written 0)
    FromShape, ///< Factor times the product of the data's dims Of
  };
  Kind K = Open;
  int64_t Value = 0;
  int64_t Factor = 1;
  std::vector<unsigned> Of;
};

/// A Reshape target as fold-shapes would write it.
struct TargetPlan {
  std::vector<TargetEntry> Entries;
  /// Some entries are read from the data's Shape at run time.
  bool FromShape = false;
};

/// Nodes, and Shape ops among them, that a rewrite makes or frees.
struct NodeCount {
  unsigned Nodes = 0;
  unsigned ShapeOps = 0;
};

/// The nodes that die when operand \p Operand of \p User stops reading
/// \p V: V's producer and, transitively, every producer whose results are
/// read only by nodes that die (the exclusive cone of that use). A node
/// that holds a subgraph, is outside the ONNX domain or makes a graph
/// output stays, as eraseDeadChains leaves it. The walk stops counting
/// after \p Limit nodes: fewer freed nodes is the cautious answer.
static NodeCount exclusiveCone(const Value *V, const Node &User,
                               unsigned Operand, unsigned Limit = 256) {
  llvm::DenseSet<const Node *> Dying;
  NodeCount Freed;
  auto Dies = [&](const Node &Def) {
    if (!Def.isOnnxDomain() || !Def.getSubgraphs().empty())
      return false;
    for (unsigned I = 0; I < Def.getNumResults(); ++I) {
      const Value *R = Def.getResult(I);
      if (!R)
        continue;
      for (const Use &U : R->getUses()) {
        if (U.isGraphOutput())
          return false;
        bool TheUse = U.User == &User && U.Index == Operand && R == V;
        if (!TheUse && !Dying.count(U.User))
          return false;
      }
    }
    return true;
  };
  // A node whose other users die later is looked at again then: each death
  // queues the producers of the dead node's operands.
  std::vector<const Value *> Work{V};
  while (!Work.empty() && Freed.Nodes < Limit) {
    const Value *W = Work.back();
    Work.pop_back();
    const Node *Def = W ? W->getDefiningNode() : nullptr;
    if (!Def || Dying.count(Def) || !Dies(*Def))
      continue;
    Dying.insert(Def);
    ++Freed.Nodes;
    // Shape (and Size: both read a shape at run time).
    Freed.ShapeOps += hasTrait(*Def, ReadsTypeOnly);
    for (const Value *O : Def->getOperands())
      Work.push_back(O);
  }
  return Freed;
}

/// What a sweep can take from the pipeline instead of computing it.
struct SharedAnalyses {
  /// The types recorded in the model are what \p SI's engine inferred, and
  /// it holds what data propagation found: the sweep need not infer first.
  bool TypesInferred = false;
  /// A dim analysis of the model as it is that, for the folder, answers as
  /// one with setUniteRecorded(false) would; null to build one.
  const DimAnalysis *Dims = nullptr;
};

/// One sweep of inference, analysis and rewriting over the whole model.
class ShapeFolder {
public:
  /// \p Undo, if given, is \p SI's change log (it saves the types the
  /// sweep changes) and listens to the rewrites.
  ShapeFolder(Model &M, DiagnosticEngine &Diags, ShapeInference &SI,
              FoldShapesOptions Opts, TypeChangeLog *Undo,
              SharedAnalyses Shared)
      : M(M), R(M, Diags, Undo), SI(SI), Opts(Opts), Undo(Undo),
        Shared(Shared) {}

  /// Returns true if the model changed.
  bool run();
  /// Rewrites made so far.
  uint64_t getNumRewrites() const { return Rewrites; }
  /// True if inference found a contradiction (the sweep stopped there).
  bool inferenceFailed() const { return InferenceFailed; }
  /// Values erased by this round (their types are not to be restored).
  const llvm::DenseSet<const Value *> &getErasedValues() const {
    return ErasedValues;
  }

private:
  /// Sweeps \p G in order. With \p InferAll every node is inferred when
  /// reached (the main graph: nothing was inferred before); else only the
  /// nodes re-queued by a rewrite (a body its holder's inference just
  /// inferred).
  void visitGraph(Graph &G, bool InferAll);
  void visitNode(Node &N);
  void infer(Node &N);
  /// Re-infers \p N after a rewrite changed its operands and re-queues the
  /// users of its results.
  void reinfer(Node &N);
  /// Queues the users of \p V for re-inference (in a body, the holder in
  /// the graph being swept stands for a user nested deeper).
  void requeueUsers(const Value *V);

  // What the dim analysis knows.
  /// The value the analysis knows \p V by: \p V, or the value a rewrite's
  /// new value stands for.
  const Value *analyzed(const Value *V) const;
  /// The contents of the integer tensor \p V, if known.
  const std::vector<DimExpr> *dataOf(const Value *V);
  /// The dims of \p V, if its rank is known.
  const std::vector<DimExpr> *dimsOf(const Value *V);
  std::optional<std::vector<int64_t>> constInts(const Value *V);
  /// \p N's axes at its opset (\p D is its definition), if constant.
  std::optional<std::vector<int64_t>> axesOf(const Node &N, const OpDef *D);

  // Equivalences.
  const Value *canonical(const Value *V) const;
  /// The value whose shape \p V provably has, through shape-keeping ops.
  const Value *shapeRoot(const Value *V) const;

  // Rewrites.
  /// A rewrite rooted at one op, as a Pattern is anchored on its op; \p D
  /// is the node's definition.
  using RewriteFn = bool (ShapeFolder::*)(Node &N, const OpDef *D);
  /// The rewrite rooted at \p N's op, or null.
  static RewriteFn findRewrite(const Node &N);
  bool materialize(Node &N, const OpDef *D);
  bool simplifyReshape(Node &N, const OpDef *D);
  bool foldReshapeTarget(Node &N, const Value *Data, bool AllowZero);
  /// Each entry of \p Target in terms of \p Data's dims (empty when the
  /// analysis does not know the target's contents). With \p Copies an
  /// entry equal to the data's dim at its position is a Copy (written 0).
  std::vector<TargetEntry> explainTarget(const Value *Data, const Value *Target,
                                         bool Copies);
  /// The new target of a Reshape of \p Data: its entries, with at most one
  /// Open (written -1), or std::nullopt.
  std::optional<TargetPlan> planTarget(const Value *Data, const Value *Target,
                                       bool Copies);
  /// Replaces \p N's target by the constant \p Entries spell.
  bool writeConstantTarget(Node &N, llvm::ArrayRef<TargetEntry> Entries);
  /// True if writeTargetFromShape(N, Entries) would add no node and no
  /// Shape op, counting the nodes that die with \p N's current target.
  bool rebuildIsSmaller(const Node &N, llvm::ArrayRef<TargetEntry> Entries);
  bool readsOnlyShapeOf(const Value *Target, const Value *Data) const;
  bool writeTargetFromShape(Node &N, llvm::ArrayRef<TargetEntry> Entries);
  /// The dim analysis of the model, built when the first Reshape needs
  /// it (the element lattice folds most targets alone).
  const DimAnalysis &dims();
  bool eraseNoOpReshape(Node &N, const Value *Data, bool AllowZero);
  bool bypassReshapeInput(Node &N, bool AllowZero);
  bool reshapeToFlatten(Node &N, bool AllowZero);
  bool cancelSqueezePair(Node &N, const OpDef *D);
  bool simplifyExpand(Node &N, const OpDef *D);
  bool shapeOfConstantOfShape(Node &N, const OpDef *D);
  /// Shape rewrites: of a ConstantOfShape's fill, or the same dims read
  /// earlier in the graph.
  bool simplifyShape(Node &N, const OpDef *D);
  bool shareEarlierShape(Node &N);
  bool replaceWith(Value *Old, Value *New);
  void noteChange() {
    Changed = true;
    ++Rewrites;
  }
  void setOperand(Node &N, unsigned I, Value *V);
  /// setOperand for a folded shape operand: \p New takes the old operand's
  /// name if the old computation dies.
  void replaceShapeOperand(Node &N, unsigned I, Value *New);
  /// A new constant (an initializer; a Constant node before \p Before in
  /// models before IR 4), or null when the model cannot hold one.
  Value *makeConstant(Node &Before, llvm::ArrayRef<int64_t> Values, bool Scalar,
                      int32_t ElemType, llvm::StringRef Hint);
  /// Erases a constant made by makeConstant that is not used.
  void dropConstant(Value *C);
  void eraseDeadChains();

  Model &M;
  Rewriter R;
  ShapeInference &SI;
  FoldShapesOptions Opts;
  TypeChangeLog *Undo;
  SharedAnalyses Shared;
  bool Changed = false;
  bool InferenceFailed = false;
  /// Rewrites so far: a body whose sweep changed it re-infers its holder.
  uint64_t Rewrites = 0;
  /// Nodes to re-infer when the sweep reaches them.
  llvm::DenseSet<const Node *> Requeued;
  /// New values (a Flatten for a Reshape) -> the value they stand for.
  llvm::DenseMap<const Value *, const Value *> StandsFor;
  /// Integer contents of constants made by this sweep.
  llvm::DenseMap<const Value *, std::vector<DimExpr>> NewData;
  /// Values replaced by an equal one (no-op Reshape, cancelled pairs).
  llvm::DenseMap<const Value *, const Value *> Same;
  /// Values that lost uses: their producers may be dead.
  std::vector<Value *> Released;
  /// New constants and the names of the values they replaced.
  struct Rename {
    Value *Constant;
    std::string Name;
    const Node *Def;
  };
  std::vector<Rename> Renames;
  llvm::DenseSet<const Value *> ErasedValues;
  std::unique_ptr<DimAnalysis> DA;
  /// The first Shape result of each graph per (start, end, dims) key: a
  /// later Shape of provably equal dims reads it instead.
  std::map<std::pair<const Graph *, std::string>, Value *> FirstShapes;
};

//===----------------------------------------------------------------------===//
// Abstract interpretation
//===----------------------------------------------------------------------===//

std::optional<std::vector<int64_t>> ShapeFolder::constInts(const Value *V) {
  std::optional<ConstantInts> C =
      V ? getConstantInts(*V, MaxShapeLength) : std::nullopt;
  if (!C)
    return std::nullopt;
  return std::move(C->Values);
}

std::optional<std::vector<int64_t>> ShapeFolder::axesOf(const Node &N,
                                                        const OpDef *D) {
  return readAxes(N, D, [&](unsigned I) -> std::optional<std::vector<int64_t>> {
    if (N.getNumOperands() <= I || !N.getOperand(I))
      return std::nullopt;
    return constInts(N.getOperand(I));
  });
}

const Value *ShapeFolder::analyzed(const Value *V) const {
  for (auto It = StandsFor.find(V); It != StandsFor.end();
       It = StandsFor.find(V))
    V = It->second;
  return V;
}

const std::vector<DimExpr> *ShapeFolder::dataOf(const Value *V) {
  if (!V)
    return nullptr;
  if (const std::vector<DimExpr> *D = dims().getData(*analyzed(V)))
    return D;
  // Constants made by this sweep are not in the analysis.
  auto It = NewData.find(V);
  if (It != NewData.end())
    return &It->second;
  std::optional<ConstantInts> C = getConstantInts(*V, MaxShapeLength);
  if (!C)
    return nullptr;
  std::vector<DimExpr> D;
  for (int64_t X : C->Values)
    D.push_back(DimExpr::constant(X));
  return &(NewData[V] = std::move(D));
}

const std::vector<DimExpr> *ShapeFolder::dimsOf(const Value *V) {
  return V ? dims().getDims(*analyzed(V)) : nullptr;
}

const Value *ShapeFolder::canonical(const Value *V) const {
  for (auto It = Same.find(V); It != Same.end(); It = Same.find(V))
    V = It->second;
  return V;
}

const Value *ShapeFolder::shapeRoot(const Value *V) const {
  V = canonical(V);
  while (const Node *Def = V->getDefiningNode()) {
    if (!isShapePreserving(*Def) || V != Def->getResult(0))
      break;
    V = canonical(Def->getOperand(0));
  }
  return V;
}

//===----------------------------------------------------------------------===//
// Rewrites
//===----------------------------------------------------------------------===//

Value *ShapeFolder::makeConstant(Node &Before, llvm::ArrayRef<int64_t> Values,
                                 bool Scalar, int32_t ElemType,
                                 llvm::StringRef Hint) {
  std::vector<int64_t> Dims;
  if (!Scalar)
    Dims.push_back(Values.size());
  Tensor T = Tensor::fromInt64s(Hint, Dims, Values);
  if (ElemType == static_cast<int32_t>(ElementType::Int32)) {
    std::string Bytes;
    for (int64_t V : Values)
      for (int B = 0; B < 4; ++B)
        Bytes.push_back(
            static_cast<char>((static_cast<uint64_t>(V) >> (8 * B)) & 0xff));
    T = Tensor::fromRaw(Hint, ElemType, Dims, Bytes);
  }
  if (M.getIrVersion() >= 4)
    return R.createConstant(*Before.getParentGraph(), std::move(T));
  // Before IR 4 every initializer is a graph input: use a Constant node,
  // which takes integers from opset 9 only.
  if (M.getOpsetVersion("") < 9)
    return nullptr;
  R.setInsertionPointBefore(&Before);
  Node *C = R.createNode("Constant", {}, 1, "", Hint);
  std::vector<Dim> TypeDims;
  for (int64_t D : Dims)
    TypeDims.push_back(Dim::known(D));
  C->getResult(0)->setType(Type::tensor(ElemType, TypeDims));
  C->setAttr(Attribute::getTensor("value", T.withName("")));
  return C->getResult(0);
}

void ShapeFolder::dropConstant(Value *C) {
  if (Node *Def = C->getDefiningNode())
    R.eraseNode(Def);
  else
    C->getOwningGraph()->eraseConstant(C);
}

void ShapeFolder::setOperand(Node &N, unsigned I, Value *V) {
  Released.push_back(N.getOperand(I));
  R.setOperand(&N, I, V);
  noteChange();
  // The rewrites that follow, and the users, see the type the new operand
  // gives.
  reinfer(N);
}

void ShapeFolder::replaceShapeOperand(Node &N, unsigned I, Value *New) {
  Value *Old = N.getOperand(I);
  // If the old operand's computation dies, the new value takes its name.
  if (const Node *Def = Old->getDefiningNode())
    if (Def->getNumResults() == 1)
      Renames.push_back({New, Old->getName().str(), Def});
  setOperand(N, I, New);
}

bool ShapeFolder::replaceWith(Value *Old, Value *New) {
  bool WasOutput = Old->isGraphOutput();
  if (!canReplaceAllUsesWith(Old, New) ||
      failed(R.replaceAllUsesWith(Old, New)))
    return false;
  // A graph output keeps its declared type under its new producer.
  if (WasOutput && Undo)
    Undo->transfer(New, Old);
  Released.push_back(Old);
  Same[Old] = New;
  requeueUsers(New);
  noteChange();
  return true;
}

bool ShapeFolder::materialize(Node &N, const OpDef *Def) {
  if ((Def && Def->has(ConstantProducer)) || N.getNumResults() != 1 ||
      !N.getResult(0))
    return false;
  Value *V = N.getResult(0);
  if (V->use_empty() || V->isGraphOutput())
    return false;
  const Type &T = V->getType();
  if (!T.isTensor() || !isShapeElemType(T.getElemType()) || !T.hasShape() ||
      T.getRank() > 1)
    return false;
  const std::vector<DimExpr> *D = dataOf(V);
  bool Scalar = T.getRank() == 0;
  if (!D || D->size() > MaxShapeLength ||
      D->size() != (Scalar ? 1
                           : static_cast<size_t>(T.getDims()[0].isKnown()
                                                     ? T.getDims()[0].getValue()
                                                     : -1)))
    return false;
  std::vector<int64_t> Values;
  for (const DimExpr &E : *D) {
    if (!E.isConstant())
      return false;
    Values.push_back(E.getConstant());
  }
  Value *C = makeConstant(N, Values, Scalar, T.getElemType(), V->getName());
  if (!C)
    return false;
  if (failed(R.replaceAllUsesWith(V, C))) {
    dropConstant(C);
    return false;
  }
  Released.push_back(V);
  Renames.push_back({C, V->getName().str(), &N});
  requeueUsers(C);
  noteChange();
  return true;
}

/// \p E as Factor times a product of distinct entries of \p Dims (none of
/// them constant), or std::nullopt.
static std::optional<TargetEntry> factorOverDims(DimExpr E,
                                                 llvm::ArrayRef<DimExpr> Dims) {
  TargetEntry T;
  T.K = TargetEntry::FromShape;
  std::vector<bool> Used(Dims.size());
  while (!E.isConstant()) {
    bool Found = false;
    for (size_t K = 0; K < Dims.size() && !Found; ++K) {
      if (Used[K] || Dims[K].isConstant())
        continue;
      // divExact trusts the caller; the product check makes it a proof.
      std::optional<DimExpr> Q = E.divExact(Dims[K]);
      if (!Q || *Q * Dims[K] != E)
        continue;
      E = *Q;
      Used[K] = true;
      T.Of.push_back(K);
      Found = true;
    }
    if (!Found)
      return std::nullopt;
  }
  if (E.getConstant() < 1 || T.Of.empty())
    return std::nullopt;
  T.Factor = E.getConstant();
  return T;
}

const DimAnalysis &ShapeFolder::dims() {
  if (Shared.Dims)
    return *Shared.Dims;
  if (!DA) {
    DA = std::make_unique<DimAnalysis>(M);
    // Only what the ops imply: a declared dim is not enforced at run time.
    DA->setUniteRecorded(false);
    DA->run();
  }
  return *DA;
}

std::vector<TargetEntry> ShapeFolder::explainTarget(const Value *Data,
                                                    const Value *Target,
                                                    bool Copies) {
  const DimAnalysis &A = dims();
  const std::vector<DimExpr> *TE = dataOf(Target);
  const std::vector<DimExpr> *DD = dimsOf(Data);
  if (!TE || !DD || TE->size() > MaxShapeLength)
    return {};
  std::vector<TargetEntry> Entries(TE->size());
  // Best forms: two dims the model proves equal compare equal.
  std::vector<DimExpr> Dims;
  for (const DimExpr &D : *DD)
    Dims.push_back(A.getBest(D));
  for (size_t J = 0; J < Entries.size(); ++J) {
    DimExpr E = A.getBest((*TE)[J]);
    if (E.isConstant()) {
      Entries[J].K = TargetEntry::Literal;
      Entries[J].Value = E.getConstant();
    } else if (Copies && J < Dims.size() && E == Dims[J]) {
      Entries[J].K = TargetEntry::Copy;
    } else if (std::optional<TargetEntry> F = factorOverDims(E, Dims)) {
      Entries[J] = std::move(*F);
    }
  }
  return Entries;
}

bool ShapeFolder::readsOnlyShapeOf(const Value *Target,
                                   const Value *Data) const {
  const Value *Root = shapeRoot(Data);
  llvm::SmallVector<const Value *, 8> Work{Target};
  llvm::DenseSet<const Value *> Seen;
  while (!Work.empty()) {
    const Value *V = Work.pop_back_val();
    if (!Seen.insert(V).second)
      continue;
    if (Seen.size() > MaxShapeLength)
      return false;
    if (isConstant(*V))
      continue;
    const Node *Def = V->getDefiningNode();
    const OpDef *D = Def ? lookupOp(*Def) : nullptr;
    if (!D)
      return false;
    if (D->has(ShapeArithmetic)) {
      for (const Value *O : Def->getOperands())
        if (O)
          Work.push_back(O);
      continue;
    }
    // A Shape (Size is arithmetic: its operand is followed) must read the
    // data's own shape.
    if (!D->has(ReadsTypeOnly) || !Def->getOperand(0) ||
        shapeRoot(Def->getOperand(0)) != Root)
      return false;
  }
  return true;
}

bool ShapeFolder::writeTargetFromShape(Node &N,
                                       llvm::ArrayRef<TargetEntry> Entries) {
  // Initializers for the literal runs; Mul on int64 from opset 7.
  if (M.getIrVersion() < 4 || M.getOpsetVersion("") < 7)
    return false;
  Value *Data = N.getOperand(0), *Target = N.getOperand(1);
  std::string Hint = Target->getName().str() + "_dims";
  ShapeVectorBuilder B(R, N, Target->getName().str() + "_part", Hint);
  Graph &G = *N.getParentGraph();
  for (const TargetEntry &E : Entries) {
    if (E.K == TargetEntry::Open) {
      B.literal(-1);
    } else if (E.K == TargetEntry::Copy) {
      B.literal(0);
    } else if (E.K == TargetEntry::Literal) {
      B.literal(E.Value);
    } else {
      Value *P = B.dimOf(Data, E.Of.front());
      for (size_t I = 1; I < E.Of.size(); ++I)
        P = B.mul(P, B.dimOf(Data, E.Of[I]));
      if (E.Factor != 1)
        P = B.mul(P, R.createConstant(
                         G, Tensor::fromInt64s("factor", {1}, {E.Factor})));
      B.piece(P);
    }
  }
  Value *New = B.finish(Target->getName());
  for (Node *C : B.getCreatedNodes())
    infer(*C);
  replaceShapeOperand(N, 1, New);
  return true;
}

std::optional<TargetPlan>
ShapeFolder::planTarget(const Value *Data, const Value *Target, bool Copies) {
  TargetPlan Plan;
  Plan.Entries = explainTarget(Data, Target, Copies);
  std::vector<TargetEntry> &Entries = Plan.Entries;
  if (Entries.empty())
    return std::nullopt;
  const Type &DT = Data->getType();
  // Candidates for the one -1: entries nothing explains and entries read
  // from the data's shape at run time (a constant target beats those).
  std::vector<size_t> Candidates;
  int64_t MinusOnes = 0;
  bool OthersNonzero = true;
  for (size_t J = 0; J < Entries.size(); ++J) {
    const TargetEntry &E = Entries[J];
    if (E.K == TargetEntry::Open || E.K == TargetEntry::FromShape) {
      Candidates.push_back(J);
    } else if (E.K == TargetEntry::Literal) {
      MinusOnes += E.Value == -1;
      // A literal 0 copies (allowzero=0) or is a zero dim: either way the
      // product of the other entries may be 0.
      OthersNonzero &= E.Value != 0;
    } else {
      const Dim &D = J < DT.getRank() ? DT.getDims()[J] : Dim();
      OthersNonzero &=
          (D.isKnown() && D.getValue() > 0) || Opts.AssumeNonzeroDims;
    }
  }
  // One entry left can be inferred (-1) when no -1 is there already and
  // the others cannot multiply to 0 (the original Reshape was valid).
  bool CanInfer = MinusOnes == 0 && OthersNonzero;
  if (Candidates.size() == 1 && CanInfer) {
    Entries[Candidates[0]].K = TargetEntry::Open;
    return Plan;
  }
  size_t Open = 0;
  for (size_t J : Candidates) {
    if (Entries[J].K == TargetEntry::Open)
      ++Open;
    else
      Plan.FromShape = true;
  }
  // With dims read at run time among the others, -1 needs them nonzero.
  if (Open > 1 ||
      (Open == 1 && !(CanInfer && (!Plan.FromShape || Opts.AssumeNonzeroDims))))
    return std::nullopt;
  return Plan;
}

bool ShapeFolder::writeConstantTarget(Node &N,
                                      llvm::ArrayRef<TargetEntry> Entries) {
  std::vector<int64_t> NewTarget;
  for (const TargetEntry &E : Entries)
    NewTarget.push_back(E.K == TargetEntry::Open   ? -1
                        : E.K == TargetEntry::Copy ? 0
                                                   : E.Value);
  Value *Target = N.getOperand(1);
  Value *C =
      makeConstant(N, NewTarget, false,
                   static_cast<int32_t>(ElementType::Int64), Target->getName());
  if (!C)
    return false;
  replaceShapeOperand(N, 1, C);
  return true;
}

bool ShapeFolder::rebuildIsSmaller(const Node &N,
                                   llvm::ArrayRef<TargetEntry> Entries) {
  // What writeTargetFromShape makes: one Shape of the data, a Gather per
  // dim read, a Mul per further dim and per factor, and the Concat
  // (literal runs are initializers, not nodes).
  NodeCount Made;
  for (const TargetEntry &E : Entries)
    if (E.K == TargetEntry::FromShape)
      Made.Nodes += 2 * E.Of.size() - 1 + (E.Factor != 1);
  if (!Made.Nodes)
    return true;
  Made.Nodes += 2;
  Made.ShapeOps = 1;
  // A target shared with other nodes stays for them: rebuilding it for
  // this Reshape alone would only add a private copy.
  NodeCount Freed = exclusiveCone(N.getOperand(1), N, 1);
  return Made.Nodes <= Freed.Nodes && Made.ShapeOps <= Freed.ShapeOps;
}

/// Drops allowzero=1 from a Reshape whose new constant target is
/// \p Entries, when that keeps its meaning. Under allowzero=1 an entry is
/// taken as it is; under allowzero=0 a 0 copies the data's dim at its
/// position. An entry the analysis proves equal to that dim (a Copy) is
/// the same number either way, 0 included: written 0 under allowzero=0 it
/// copies exactly that dim. -1 and nonzero literals mean the same under
/// both. So when every entry is a Copy, the -1, or a nonzero literal, the
/// shape a Reshape asks for, and its failure when -1 meets a zero product
/// (ONNX Runtime refuses that under either setting), is the same at every
/// shape. A literal 0, an explicit zero dim under allowzero=1, would copy
/// under allowzero=0: such a target keeps allowzero=1.
static bool canDropAllowZero(llvm::ArrayRef<TargetEntry> Entries) {
  bool AnyCopy = false;
  for (const TargetEntry &E : Entries) {
    if (E.K == TargetEntry::FromShape ||
        (E.K == TargetEntry::Literal && E.Value == 0))
      return false;
    AnyCopy |= E.K == TargetEntry::Copy;
  }
  return AnyCopy;
}

bool ShapeFolder::foldReshapeTarget(Node &N, const Value *Data,
                                    bool AllowZero) {
  Value *Target = N.getOperand(1);
  if (!getConstantValue(*Target).isNull())
    return false;
  if (Target->getType().isTensor() && Target->getType().hasShape() &&
      Target->getType().getRank() != 1)
    return false;
  // Copies are written 0 only under allowzero=0 ...
  std::optional<TargetPlan> Plan = planTarget(Data, Target, !AllowZero);
  if (Plan && !Plan->FromShape)
    return writeConstantTarget(N, Plan->Entries);
  // ... or when the Reshape can drop allowzero=1 for a constant target
  // with them: dynamo's x.view(b, s, -1, 12) with allowzero=1 becomes
  // [0, 0, -1, 12].
  if (AllowZero)
    if (std::optional<TargetPlan> Copying =
            planTarget(Data, Target, /*Copies=*/true);
        Copying && !Copying->FromShape && canDropAllowZero(Copying->Entries)) {
      // The attribute goes first: writing the target re-infers the node,
      // and [0, 0, -1, 12] under allowzero=1 is a zero product with -1.
      llvm::erase_if(N.getMutableAttrs(),
                     [](const Attribute &A) { return A.Name == "allowzero"; });
      N.recheckSubgraphs();
      if (writeConstantTarget(N, Copying->Entries))
        return true;
      N.setAttr(Attribute::getInt("allowzero", 1));
    }
  if (!Plan)
    return false;
  // Dims read at run time: worth it only when the target reads other
  // tensors' shapes today (else it is already as local as it gets), and
  // only when the rebuilt target is no bigger than what it replaces.
  if (readsOnlyShapeOf(Target, Data) || !rebuildIsSmaller(N, Plan->Entries))
    return false;
  return writeTargetFromShape(N, Plan->Entries);
}

bool ShapeFolder::eraseNoOpReshape(Node &N, const Value *Data, bool AllowZero) {
  Value *Out = N.getResult(0);
  const Type &DT = Data->getType(), &OT = Out->getType();
  bool NoOp = false;
  // By types: equal shapes (known numbers or the same symbols).
  if (DT.isTensor() && OT.isTensor() && DT.hasShape() && OT.hasShape() &&
      DT.getRank() == OT.getRank()) {
    NoOp = true;
    for (unsigned I = 0; I < DT.getRank() && NoOp; ++I) {
      const Dim &A = DT.getDims()[I], &B = OT.getDims()[I];
      NoOp = (A.isKnown() && B.isKnown() && A.getValue() == B.getValue()) ||
             (A.isSymbol() && B.isSymbol() && A.getSymbol() == B.getSymbol());
    }
  }
  // By the target: every entry is the input's dim at its position (a
  // copy, the same expression), except at most one -1, which then is that
  // dim too.
  const std::vector<DimExpr> *TE = dataOf(N.getOperand(1));
  const std::vector<DimExpr> *DD = dimsOf(Data);
  if (!NoOp && TE && DD && TE->size() == DD->size()) {
    const DimAnalysis &A = dims();
    NoOp = true;
    int MinusOnes = 0;
    for (size_t J = 0; J < TE->size() && NoOp; ++J) {
      DimExpr E = A.getBest((*TE)[J]), D = A.getBest((*DD)[J]);
      if (E.isConstant() && E.getConstant() == -1)
        NoOp = ++MinusOnes == 1;
      else if (E.isConstant() && E.getConstant() == 0)
        NoOp = !AllowZero || (D.isConstant() && D.getConstant() == 0);
      else
        NoOp = E == D;
    }
  }
  if (!NoOp)
    return false;
  return replaceWith(Out, const_cast<Value *>(Data));
}

bool ShapeFolder::bypassReshapeInput(Node &N, bool AllowZero) {
  Value *Data = N.getOperand(0);
  Node *Def = Data->getDefiningNode();
  if (!Def || Def->getNumOperands() == 0 || !Def->getOperand(0) ||
      !hasTrait(*Def, ViewLike))
    return false;
  // Reshape reads only the element count of its input, unless its target
  // copies dims (0 with allowzero=0).
  std::optional<std::vector<int64_t>> Target = constInts(N.getOperand(1));
  if (!Target)
    return false;
  if (!AllowZero)
    for (int64_t T : *Target)
      if (T == 0)
        return false;
  setOperand(N, 0, Def->getOperand(0));
  return true;
}

bool ShapeFolder::reshapeToFlatten(Node &N, bool AllowZero) {
  if (!Opts.Flatten)
    return false;
  Value *Data = N.getOperand(0);
  std::optional<std::vector<int64_t>> Target = constInts(N.getOperand(1));
  const Type &DT = Data->getType();
  if (!Target || Target->size() != 2 || !DT.isTensor() || !DT.hasShape() ||
      DT.getRank() < 3)
    return false;
  int64_t Opset = M.getOpsetVersion(N.getDomain());
  int32_t ET = DT.getElemType();
  if (Opset < 9 && ET != static_cast<int32_t>(ElementType::Float) &&
      ET != static_cast<int32_t>(ElementType::Double) &&
      ET != static_cast<int32_t>(ElementType::Float16))
    return false;
  int64_t Axis = -1;
  llvm::ArrayRef<Dim> Dims = DT.getDims();
  if ((*Target)[0] == 0 && (*Target)[1] == -1 && !AllowZero) {
    Axis = 1; // [copy dim 0, the rest]
  } else if ((*Target)[0] == -1 && (*Target)[1] > 0) {
    // [the rest, product of a known tail]
    int64_t P = 1;
    for (int64_t A = Dims.size() - 1; A >= 1 && Dims[A].isKnown(); --A) {
      P *= Dims[A].getValue();
      if (P == (*Target)[1]) {
        Axis = A;
        break;
      }
      if (P > (*Target)[1])
        break;
    }
  }
  // Static Reshapes stay as they are: only a Reshape that folds a dynamic
  // leading part is worth a Flatten.
  if (Axis < 0 || llvm::all_of(Dims.take_front(Axis),
                               [](const Dim &D) { return D.isKnown(); }))
    return false;
  Value *Out = N.getResult(0);
  R.setInsertionPointBefore(&N);
  Node *F = R.createNode("Flatten", {Data}, 1, "", N.getName());
  F->setAttr(Attribute::getInt("axis", Axis));
  F->getResult(0)->setType(Out->getType());
  if (failed(R.replaceAllUsesWith(Out, F->getResult(0)))) {
    R.eraseNode(F);
    return false;
  }
  if (Undo)
    Undo->transfer(F->getResult(0), Out);
  StandsFor[F->getResult(0)] = Out;
  Released.push_back(Out);
  requeueUsers(F->getResult(0));
  noteChange();
  return true;
}

bool ShapeFolder::simplifyReshape(Node &N, const OpDef *) {
  if (M.getOpsetVersion(N.getDomain()) < 5 || N.getNumOperands() != 2 ||
      !N.getOperand(0) || !N.getOperand(1) || !N.getResult(0) ||
      N.getResult(0)->use_empty())
    return false;
  auto AllowsZero = [&] {
    return M.getOpsetVersion(N.getDomain()) >= 14 &&
           N.getAttrInt("allowzero", 0) != 0;
  };
  bool Did = foldReshapeTarget(N, N.getOperand(0), AllowsZero());
  // Folding the target may have dropped allowzero.
  bool AllowZero = AllowsZero();
  if (eraseNoOpReshape(N, N.getOperand(0), AllowZero))
    return true;
  Did |= bypassReshapeInput(N, AllowZero);
  if (eraseNoOpReshape(N, N.getOperand(0), AllowZero))
    return true;
  return reshapeToFlatten(N, AllowZero) || Did;
}

bool ShapeFolder::cancelSqueezePair(Node &N, const OpDef *D) {
  // Squeeze(Unsqueeze(X, a), a) or Unsqueeze(Squeeze(X, a), a).
  bool IsSqueeze = D && D->has(RemovesUnitDims);
  Value *In = N.getNumOperands() ? N.getOperand(0) : nullptr;
  Node *Def = In ? In->getDefiningNode() : nullptr;
  const OpDef *InnerD = Def ? lookupOp(*Def) : nullptr;
  if (!InnerD || !N.getResult(0) ||
      !InnerD->has(IsSqueeze ? InsertsUnitDims : RemovesUnitDims) ||
      !Def->getNumOperands() || !Def->getOperand(0))
    return false;
  Value *X = Def->getOperand(0);
  std::optional<std::vector<int64_t>> Outer = axesOf(N, D),
                                      Inner = axesOf(*Def, InnerD);
  if (!Outer || !Inner)
    return false;
  // Both lists index the tensor with the inserted (or not yet removed) 1s:
  // the Unsqueeze's result or the Squeeze's input.
  const Type &Wide = IsSqueeze ? In->getType() : X->getType();
  auto Normalize =
      [&](std::vector<int64_t> Axes) -> std::optional<std::set<int64_t>> {
    std::set<int64_t> S;
    for (int64_t A : Axes) {
      if (A < 0) {
        if (!Wide.hasShape())
          return std::nullopt;
        A += Wide.getRank();
      }
      if (A < 0 || !S.insert(A).second)
        return std::nullopt;
    }
    return S;
  };
  std::optional<std::set<int64_t>> A = Normalize(*Outer), B = Normalize(*Inner);
  if (!A || !B || *A != *B)
    return false;
  return replaceWith(N.getResult(0), X);
}

bool ShapeFolder::simplifyExpand(Node &N, const OpDef *) {
  if (M.getOpsetVersion(N.getDomain()) < 8 || N.getNumOperands() != 2 ||
      !N.getOperand(0) || !N.getOperand(1) || !N.getResult(0) ||
      N.getResult(0)->use_empty() ||
      !getConstantValue(*N.getOperand(1)).isNull())
    return false;
  Value *X = N.getOperand(0), *Shape = N.getOperand(1);
  const DimAnalysis &A = dims();
  const std::vector<DimExpr> *TE = A.getData(*Shape);
  const std::vector<DimExpr> *XD = A.getDims(*X);
  if (!TE || !XD)
    return false;
  // Entry J meets dim K of X (aligned from the right). A number stays;
  // X's own dim there is what 1 gives too (broadcasting keeps it).
  size_t Len = TE->size(), Rank = XD->size();
  std::vector<int64_t> NewShape;
  bool Keeps = Len <= Rank;
  for (size_t J = 0; J < Len; ++J) {
    DimExpr E = A.getBest((*TE)[J]);
    bool Aligned = J + Rank >= Len;
    DimExpr XDim = Aligned ? A.getBest((*XD)[J + Rank - Len]) : DimExpr();
    if (Aligned && E == XDim) {
      NewShape.push_back(1);
    } else if (E.isConstant()) {
      NewShape.push_back(E.getConstant());
      Keeps &= E.getConstant() == 1;
    } else {
      return false;
    }
  }
  // Every entry keeps X's dim: the Expand copies X.
  if (Keeps)
    return replaceWith(N.getResult(0), X);
  Value *C =
      makeConstant(N, NewShape, false, static_cast<int32_t>(ElementType::Int64),
                   Shape->getName());
  if (!C)
    return false;
  replaceShapeOperand(N, 1, C);
  return true;
}

/// Shape(ConstantOfShape(S)) is S: the masks of torch exports take the
/// shape of a tensor they just filled.
bool ShapeFolder::shapeOfConstantOfShape(Node &N, const OpDef *) {
  if (N.getNumOperands() != 1 || !N.getOperand(0) || !N.getResult(0) ||
      N.hasAttr("start") || N.hasAttr("end"))
    return false;
  Node *Def = N.getOperand(0)->getDefiningNode();
  if (!Def || !hasTrait(*Def, FillsShape) || Def->getNumOperands() != 1 ||
      !Def->getOperand(0))
    return false;
  Value *S = Def->getOperand(0);
  const Type &T = S->getType();
  // ConstantOfShape takes int64 only; a rank-1 S is exactly the shape.
  if (!T.isTensor() ||
      T.getElemType() != static_cast<int32_t>(ElementType::Int64) ||
      !T.hasShape() || T.getRank() != 1)
    return false;
  return replaceWith(N.getResult(0), S);
}

/// A Shape whose operand's dims are provably those of a value an earlier
/// Shape in the same graph reads gives the same tensor: it is replaced by
/// that result (one Shape op less), and CSE then merges the computations
/// that each copy fed (Swin's blocks each read their own input's shape to
/// compute the same window pads).
bool ShapeFolder::shareEarlierShape(Node &N) {
  if (N.getNumOperands() != 1 || !N.getOperand(0) || !N.getResult(0))
    return false;
  const std::vector<DimExpr> *D = dimsOf(N.getOperand(0));
  if (!D)
    return false;
  std::string Key = std::to_string(N.getAttrInt("start", 0)) + ":" +
                    (N.hasAttr("end") ? std::to_string(N.getAttrInt("end", 0))
                                      : std::string("all")) +
                    ":";
  for (const DimExpr &E : *D)
    Key += E.key() + ";";
  auto [It, First] =
      FirstShapes.try_emplace({N.getParentGraph(), Key}, N.getResult(0));
  return !First && replaceWith(N.getResult(0), It->second);
}

bool ShapeFolder::simplifyShape(Node &N, const OpDef *D) {
  return shapeOfConstantOfShape(N, D) || shareEarlierShape(N);
}

void ShapeFolder::infer(Node &N) {
  // The engine saves what it changes into Undo (its change log).
  if (failed(SI.inferNode(N)))
    InferenceFailed = true;
}

void ShapeFolder::reinfer(Node &N) {
  infer(N);
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (Value *V = N.getResult(I))
      requeueUsers(V);
}

void ShapeFolder::requeueUsers(const Value *V) {
  for (const Use &U : V->getUses())
    for (const Node *User = U.User; User;
         User = User->getParentGraph()->getParentNode())
      if (!Requeued.insert(User).second)
        break; // its holders are queued already
}

ShapeFolder::RewriteFn ShapeFolder::findRewrite(const Node &N) {
  // Built on first use: no static constructor.
  static const llvm::StringMap<RewriteFn> ByRootOp = [] {
    struct Rooted {
      const char *RootOp;
      RewriteFn Rewrite;
    };
    const Rooted Rewrites[] = {
        {"Reshape", &ShapeFolder::simplifyReshape},
        {"Expand", &ShapeFolder::simplifyExpand},
        {"Shape", &ShapeFolder::simplifyShape},
        {"Squeeze", &ShapeFolder::cancelSqueezePair},
        {"Unsqueeze", &ShapeFolder::cancelSqueezePair},
    };
    llvm::StringMap<RewriteFn> Map;
    for (const Rooted &R : Rewrites)
      Map[R.RootOp] = R.Rewrite;
    return Map;
  }();
  return ByRootOp.lookup(N.getOpType());
}

void ShapeFolder::visitNode(Node &N) {
  if (!N.isOnnxDomain())
    return;
  const OpDef *D = lookupOp(N);
  if (materialize(N, D))
    return;
  if (RewriteFn Rewrite = findRewrite(N))
    (this->*Rewrite)(N, D);
}

void ShapeFolder::visitGraph(Graph &G, bool InferAll) {
  // Nodes made by rewrites (Flatten, Constant) are typed when made and
  // are not visited.
  std::vector<Node *> Nodes;
  for (Node &N : G.getNodes())
    Nodes.push_back(&N);
  for (Node *N : Nodes) {
    if (Requeued.erase(N) || InferAll)
      infer(*N);
    if (InferenceFailed)
      return;
    // A body is swept once its holder's inference gave it the input types
    // (and inferred it); if the sweep changed it, the holder's results may
    // now be known better.
    uint64_t Before = Rewrites;
    for (Graph *Sub : N->getSubgraphs())
      visitGraph(*Sub, /*InferAll=*/false);
    if (Rewrites != Before)
      reinfer(*N);
    if (InferenceFailed)
      return;
    visitNode(*N);
  }
}

void ShapeFolder::eraseDeadChains() {
  llvm::DenseSet<const Node *> Erased;
  std::vector<Node *> Work;
  DeadConstantSweep DeadConstants;
  auto Consider = [&](Value *V) {
    if (!V || ErasedValues.count(V) || !V->use_empty())
      return;
    if (V->isConstant()) {
      ErasedValues.insert(V);
      DeadConstants.add(V);
      return;
    }
    Node *Def = V->getDefiningNode();
    if (Def && Def->isOnnxDomain() && Def->getSubgraphs().empty() &&
        !Erased.count(Def))
      Work.push_back(Def);
  };
  for (Value *V : Released)
    Consider(V);
  while (!Work.empty()) {
    Node *N = Work.back();
    Work.pop_back();
    if (Erased.count(N))
      continue;
    bool Dead = true;
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (N->getResult(I) && !N->getResult(I)->use_empty())
        Dead = false;
    if (!Dead)
      continue;
    // Each operand once: a node may use one value twice (Concat(C, C)), and
    // the first visit may erase it.
    llvm::SetVector<Value *> Operands(N->getOperands().begin(),
                                      N->getOperands().end());
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      ErasedValues.insert(N->getResult(I));
    Erased.insert(N);
    R.eraseNode(N);
    for (Value *V : Operands)
      Consider(V);
  }
  // Constants take the names of the values they replaced once those are
  // gone; Reshapes sharing one target make several candidates for a name.
  std::set<std::string> Given;
  for (const Rename &Ren : Renames)
    if (Erased.count(Ren.Def) && !ErasedValues.count(Ren.Constant) &&
        Given.insert(Ren.Name).second)
      Ren.Constant->setName(Ren.Name);
  DeadConstants.run();
}

bool ShapeFolder::run() {
  // Types first: every node inferred in order (bodies by their holders'
  // inference), unless the pipeline's inference just did it; then the dim
  // analysis reads them once.
  if (!Shared.TypesInferred)
    for (Node &N : M.getGraph().getNodes()) {
      infer(N);
      if (InferenceFailed)
        return false;
    }
  dims();
  // Then the rewrites, in order. A rewrite re-infers the node it changed
  // and re-queues the users; the analysis' answers stay true (a rewrite
  // never changes what a value holds), so nothing is analysed twice.
  // Bodies are swept at their holders, after the outer values they read:
  // nodes holding subgraphs are never erased before the end.
  visitGraph(M.getGraph(), /*InferAll=*/false);
  eraseDeadChains();
  return Changed;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

class FoldShapesPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "fold-shapes"; }
  llvm::StringRef getDescription() const override {
    return "fold shape computations with what is statically known, even "
           "next to symbolic dims; simplify Reshape, Squeeze and Unsqueeze";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    FoldShapesOptions Opts;
    Opts.AssumeNonzeroDims = AssumeNonzeroDims;
    Opts.Flatten = UseFlatten;
    DeduplicatingDiagnostics Quiet(Ctx.getDiags());

    // Types are inferred for the analysis and restored afterwards: every
    // engine of the pass saves the types it changes into one log.
    TypeChangeLog Undo;
    TypeChangeLog *Saved = KeepInferredTypes ? nullptr : &Undo;

    // One sweep reaches the fixed point; further sweeps (max-rounds > 1)
    // only check that, and a change there is reported as a bug.
    LogicalResult Result = success();
    for (int64_t Sweep = 0; Sweep < MaxRounds; ++Sweep) {
      // The first sweep takes the pipeline's inference when it is cached
      // (after infer-shapes, or unify-dims, with nothing changed since):
      // the model's types are then what inference gives, and inferring
      // every node again would only repeat it. Later sweeps run after a
      // change and infer afresh.
      ShapeInfo *Cached = Sweep == 0 ? findCachedInference(Ctx) : nullptr;
      std::unique_ptr<ShapeInference> Own;
      if (!Cached)
        Own = std::make_unique<ShapeInference>(M, Quiet.get());
      ShapeInference &SI = Cached ? Cached->getEngine() : *Own;
      SharedAnalyses Shared;
      Shared.TypesInferred = Cached != nullptr;
      if (Cached)
        Shared.Dims = findReusableDims(Ctx);
      ShapeFolder Folder(M, Ctx.getDiags(), SI, Opts, Saved, Shared);
      SI.setTypeChangeLog(Saved);
      bool Changed = Folder.run();
      // The cached engine outlives the pass and its log.
      SI.setTypeChangeLog(nullptr);
      NumRewrites += Folder.getNumRewrites();
      // Remarks about nodes without a schema would repeat infer-shapes'
      // (Quiet drops them; the shared engine's are not asked for).
      if (Own)
        Own->emitRemarks();
      if (Saved)
        for (const Value *V : Folder.getErasedValues())
          Saved->forget(V);
      if (Folder.inferenceFailed()) {
        Result = emitError(Ctx.getDiags())
                 << "shape inference found a contradiction";
        break;
      }
      if (!Changed)
        break;
      Ctx.Changed = true;
      if (Sweep > 0)
        emitWarning(Ctx.getDiags())
            << "sweep " << Sweep + 1
            << " still changed the model (one sweep should reach the "
               "fixed point)";
    }
    if (Saved)
      Saved->restore();
    return Result;
  }

private:
  /// The pipeline's inference, when it is cached, succeeded and was
  /// recorded in the IR (by infer-shapes or unify-dims). A change to the
  /// model since would have invalidated it, so the recorded types are its
  /// results.
  static ShapeInfo *findCachedInference(PassContext &Ctx) {
    ShapeInfo *SI = Ctx.getAnalysisManager().getCachedAnalysis<ShapeInfo>();
    return SI && SI->isCommitted() && succeeded(SI->getResult()) ? SI
                                                                 : nullptr;
  }

  /// The pipeline's dim analysis (unify-dims'), when it is cached and
  /// answers as the folder's own would. The folder must not unite recorded
  /// dims with computed ones (a declared dim proves nothing at run time),
  /// so an analysis where such a union changed a class is not taken.
  static const DimAnalysis *findReusableDims(PassContext &Ctx) {
    DimAnalysis *DA = Ctx.getAnalysisManager().getCachedAnalysis<DimAnalysis>();
    if (!DA)
      return nullptr;
    DA->run(); // nothing when it ran already
    return DA->unitedRecordedDims() ? nullptr : DA;
  }

  Statistic NumRewrites{this, "num-rewrites",
                        "Shape computations folded, targets rewritten and "
                        "nodes bypassed"};
  Option<bool> AssumeNonzeroDims{
      *this, "assume-nonzero-dims",
      "treat symbolic dims as nonzero when turning a Reshape entry into -1",
      false};
  Option<bool> UseFlatten{
      *this, "flatten", "turn Flatten-equivalent Reshapes into Flatten", true};
  Option<bool> KeepInferredTypes{
      *this, "keep-inferred-types",
      "record the types inference found (as infer-shapes does)", false};
  Option<int64_t> MaxRounds{
      *this, "max-rounds",
      "sweeps at most; one reaches the fixed point, more check it", 1,
      atLeast(1)};
};

} // namespace

std::unique_ptr<Pass> onnxopt::createFoldShapesPass() {
  return std::make_unique<FoldShapesPass>();
}
