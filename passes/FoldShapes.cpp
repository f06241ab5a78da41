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
// dims are symbolic. An abstract interpretation follows the small integer
// tensors that shape arithmetic is made of (Shape, Gather, Slice, Concat,
// Unsqueeze, Squeeze, Cast, Add, Sub, Mul, Div, ...): each element is a
// known number, "dim i of value V", or unknown. Types come from ONNX's
// inference, run first. Then:
//  - a shape tensor whose elements are all known becomes a constant
//    (Gather(Shape(X[N,64,7,7]), 1) -> 64; Shape of a static value);
//  - a Reshape target becomes a constant when each element is known, or is
//    "dim j of the Reshape's own input" at position j (-> 0, only with
//    allowzero=0), or is the single remaining element and the others are
//    provably nonzero (-> -1, as the original Reshape was valid);
//  - where those elements do not explain a target, the dim analysis
//    (DimAnalysis, one run per sweep, built on first need) does: its
//    expressions for the target's contents and the data's dims turn an
//    entry into a number, a 0 (the same dim at the same position), the -1,
//    or a product of the data's dims read from one `Shape` of the data
//    itself. So `q.view(b, s, h, d)` with b, s taken from `x.size()` gets
//    `[0, 0, h, d]` although q = MatMul(x, W) is not x's shape; a target
//    that reads only the data's own shape already is left alone;
//  - an Expand whose shape the analysis knows gets a constant shape (1
//    where X's dim is meant), and is removed when it copies X;
//  - a Reshape that provably keeps its input's shape is removed; one whose
//    input comes from Reshape/Flatten/Squeeze/Unsqueeze and whose constant
//    target has no 0 reads that op's input instead; a dynamic Reshape to
//    [0, -1] or [-1, product of a known tail] becomes Flatten;
//  - Squeeze(Unsqueeze(X, a), a) and Unsqueeze(Squeeze(X, a), a) become X;
//  - the chains that no longer feed anything are erased.
// "Dim j of V" matches the Reshape's input when both are the same value, or
// values related by ops that keep the shape (Relu, Cast, Softmax, ...:
// isShapePreserving in OpFacts.h).
//
// One forward sweep in topological order: each node is inferred from the
// final types of its operands just before it is interpreted and rewritten,
// and re-inferred after a rewrite changed its operands, so a folded Reshape
// hands its better type to the next Shape in the same sweep. Nothing a
// later node does can enable a rewrite of an earlier one (rewrites only
// look upstream, and uses only go away), so one sweep is the fixed point.
// Bodies of If/Loop/Scan are swept when their holder is reached, after the
// holder's inference gave them their input types; only the nodes a rewrite
// re-queued (users of a changed value) are re-inferred there, and a body
// that changed has its holder re-inferred. Linear in the model. Types
// recorded in the model are left as they were.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/IR/ShapeVectorBuilder.h"
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

/// One element of a small integer tensor.
struct ShapeElem {
  enum Kind : uint8_t { Unknown, Known, DimOf };
  Kind K = Unknown;
  int64_t C = 0;
  const Value *Of = nullptr;
  unsigned Index = 0;

  static ShapeElem known(int64_t V) {
    ShapeElem E;
    E.K = Known;
    E.C = V;
    return E;
  }
  /// Dim \p I of \p V; a known number when V's type says so.
  static ShapeElem dimOf(const Value *V, unsigned I) {
    const Type &T = V->getType();
    if (T.isTensor() && I < T.getRank() && T.getDims()[I].isKnown())
      return known(T.getDims()[I].getValue());
    ShapeElem E;
    E.K = DimOf;
    E.Of = V;
    E.Index = I;
    return E;
  }
  bool isKnown() const { return K == Known; }
};

/// The abstract contents of an integer tensor of rank 0 or 1.
struct ShapeValue {
  bool Scalar = false;
  std::vector<ShapeElem> Elems;
  bool allKnown() const {
    for (const ShapeElem &E : Elems)
      if (!E.isKnown())
        return false;
    return true;
  }
};

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

/// One sweep of inference, analysis and rewriting over the whole model.
class ShapeFolder {
public:
  ShapeFolder(Model &M, DiagnosticEngine &Diags, ShapeInference &SI,
              FoldShapesOptions Opts)
      : M(M), R(M, Diags), SI(SI), Opts(Opts) {}

  /// Returns true if the model changed.
  bool run();
  /// True if inference found a contradiction (the sweep stopped there).
  bool inferenceFailed() const { return InferenceFailed; }
  /// Values erased by this round (their types are not to be restored).
  const llvm::DenseSet<const Value *> &getErasedValues() const {
    return ErasedValues;
  }
  /// (new, old): new values that stand for old ones and take their
  /// recorded types.
  llvm::ArrayRef<std::pair<Value *, Value *>> getTypeDonors() const {
    return TypeDonors;
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

  // The abstract interpretation.
  const ShapeValue *get(const Value *V);
  using TransferFn = std::optional<ShapeValue> (ShapeFolder::*)(const Node &);
  /// Op type -> what the op does to the abstract contents of its operands.
  static const llvm::StringMap<TransferFn> &getTransferTable();
  static const Value *operand(const Node &N, unsigned I);
  std::optional<ShapeValue> transfer(const Node &N);
  std::optional<ShapeValue> transferShape(const Node &N);
  std::optional<ShapeValue> transferSize(const Node &N);
  std::optional<ShapeValue> transferIdentity(const Node &N);
  std::optional<ShapeValue> transferCast(const Node &N);
  std::optional<ShapeValue> transferConcat(const Node &N);
  std::optional<ShapeValue> transferUnsqueeze(const Node &N);
  std::optional<ShapeValue> transferSqueeze(const Node &N);
  std::optional<ShapeValue> transferScalarVectorSwitch(const Node &N,
                                                       bool ToVector);
  std::optional<std::vector<int64_t>> constInts(const Value *V);
  std::optional<std::vector<int64_t>> axesOf(const Node &N);
  std::optional<ShapeValue> transferGather(const Node &N);
  std::optional<ShapeValue> transferSlice(const Node &N);
  std::optional<ShapeValue> transferArith(const Node &N);

  // Equivalences.
  const Value *canonical(const Value *V) const;
  /// The value whose shape \p V provably has, through shape-keeping ops.
  const Value *shapeRoot(const Value *V) const;

  // Rewrites.
  bool materialize(Node &N);
  bool simplifyReshape(Node &N);
  bool foldReshapeTarget(Node &N, const Value *Data, bool AllowZero);
  void explainByAnalysis(const Value *Data, const Value *Target,
                         bool AllowZero, std::vector<TargetEntry> &Entries);
  bool readsOnlyShapeOf(const Value *Target, const Value *Data) const;
  bool writeTargetFromShape(Node &N, llvm::ArrayRef<TargetEntry> Entries);
  /// The dim analysis of the model, built when the first Reshape needs
  /// it (the element lattice folds most targets alone).
  const DimAnalysis &dims();
  bool eraseNoOpReshape(Node &N, const Value *Data, bool AllowZero);
  bool bypassReshapeInput(Node &N, bool AllowZero);
  bool reshapeToFlatten(Node &N, bool AllowZero);
  bool cancelSqueezePair(Node &N);
  bool simplifyExpand(Node &N);
  bool replaceWith(Value *Old, Value *New);
  void noteChange() {
    Changed = true;
    ++Rewrites;
  }
  void setOperand(Node &N, unsigned I, Value *V);
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
  bool Changed = false;
  bool InferenceFailed = false;
  /// Rewrites so far: a body whose sweep changed it re-infers its holder.
  uint64_t Rewrites = 0;
  /// Nodes to re-infer when the sweep reaches them.
  llvm::DenseSet<const Node *> Requeued;
  llvm::DenseMap<const Value *, ShapeValue> Shapes;
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
  std::vector<std::pair<Value *, Value *>> TypeDonors;
  std::unique_ptr<DimAnalysis> DA;
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

const ShapeValue *ShapeFolder::get(const Value *V) {
  if (!V)
    return nullptr;
  auto It = Shapes.find(V);
  if (It != Shapes.end())
    return &It->second;
  ShapeValue SV;
  const Type &Ty = V->getType();
  if (isConstant(*V)) {
    std::optional<ConstantInts> C = getConstantInts(*V, MaxShapeLength);
    if (!C)
      return nullptr;
    SV.Scalar = C->Scalar;
    for (int64_t X : C->Values)
      SV.Elems.push_back(ShapeElem::known(X));
  } else if (Ty.isTensor() && isShapeElemType(Ty.getElemType()) &&
             Ty.hasShape() && Ty.getRank() <= 1 &&
             (Ty.getRank() == 0 ||
              (Ty.getDims()[0].isKnown() &&
               Ty.getDims()[0].getValue() <=
                   static_cast<int64_t>(MaxShapeLength)))) {
    // A shape tensor of known length whose contents nothing explains.
    SV.Scalar = Ty.getRank() == 0;
    SV.Elems.resize(SV.Scalar ? 1 : Ty.getDims()[0].getValue());
  } else {
    return nullptr;
  }
  return &(Shapes[V] = std::move(SV));
}

std::optional<std::vector<int64_t>> ShapeFolder::axesOf(const Node &N) {
  if (M.getOpsetVersion(N.getDomain()) < 13)
    return N.getAttrInts("axes");
  if (N.getNumOperands() < 2 || !N.getOperand(1))
    return std::nullopt;
  return constInts(N.getOperand(1));
}

std::optional<ShapeValue> ShapeFolder::transferGather(const Node &N) {
  if (N.getNumOperands() != 2 || !N.getOperand(0) || !N.getOperand(1))
    return std::nullopt;
  const ShapeValue *Data = get(N.getOperand(0));
  std::optional<ConstantInts> Indices =
      getConstantInts(*N.getOperand(1), MaxShapeLength);
  if (!Data || Data->Scalar || !Indices)
    return std::nullopt;
  int64_t Axis = N.getAttrInt("axis", 0);
  if (Axis != 0 && Axis != -1)
    return std::nullopt;
  ShapeValue Out;
  Out.Scalar = Indices->Scalar;
  int64_t Len = Data->Elems.size();
  for (int64_t I : Indices->Values) {
    if (I < -Len || I >= Len)
      return std::nullopt;
    Out.Elems.push_back(Data->Elems[I < 0 ? I + Len : I]);
  }
  return Out;
}

std::optional<ShapeValue> ShapeFolder::transferSlice(const Node &N) {
  if (N.getNumOperands() < 1)
    return std::nullopt;
  const ShapeValue *Data = get(N.getOperand(0));
  if (!Data || Data->Scalar)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
  if (M.getOpsetVersion(N.getDomain()) < 10) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
    Axes = N.getAttrInts("axes");
  } else {
    auto Opt = [&](unsigned I) -> std::optional<std::vector<int64_t>> {
      if (I >= N.getNumOperands() || !N.getOperand(I))
        return std::vector<int64_t>();
      return constInts(N.getOperand(I));
    };
    Starts = Opt(1);
    Ends = Opt(2);
    Axes = Opt(3);
    Steps = Opt(4);
    if (!Axes || !Steps)
      return std::nullopt;
    if (Axes->empty())
      Axes.reset();
    if (Steps->empty())
      Steps.reset();
  }
  if (!Starts || !Ends || Starts->size() != 1 || Ends->size() != 1 ||
      (Axes && (Axes->size() != 1 || ((*Axes)[0] != 0 && (*Axes)[0] != -1))) ||
      (Steps && Steps->size() != 1))
    return std::nullopt;
  int64_t Step = Steps ? (*Steps)[0] : 1;
  std::optional<SliceAxis> Taken = resolveSliceAxis(
      static_cast<int64_t>(Data->Elems.size()), (*Starts)[0], (*Ends)[0], Step);
  if (!Taken)
    return std::nullopt;
  ShapeValue Out;
  for (int64_t I = 0; I < Taken->Count; ++I)
    Out.Elems.push_back(Data->Elems[Taken->at(I)]);
  return Out;
}

std::optional<ShapeValue> ShapeFolder::transferArith(const Node &N) {
  if (N.getNumOperands() != 2)
    return std::nullopt;
  // A copy: get() may insert into Shapes, which moves its entries.
  std::optional<ShapeValue> A;
  if (const ShapeValue *P = get(N.getOperand(0)))
    A = *P;
  const ShapeValue *B = get(N.getOperand(1));
  if (!A || !B)
    return std::nullopt;
  size_t LA = A->Elems.size(), LB = B->Elems.size();
  if (LA != LB && LA != 1 && LB != 1)
    return std::nullopt;
  llvm::StringRef Op = N.getOpType();
  ShapeValue Out;
  Out.Scalar = A->Scalar && B->Scalar;
  size_t Len = std::max(LA, LB);
  for (size_t I = 0; I < Len; ++I) {
    const ShapeElem &X = A->Elems[LA == 1 ? 0 : I];
    const ShapeElem &Y = B->Elems[LB == 1 ? 0 : I];
    // x*1, x+0, x-0, x/1 keep what x is.
    if (Y.isKnown() && ((Y.C == 1 && (Op == "Mul" || Op == "Div")) ||
                        (Y.C == 0 && (Op == "Add" || Op == "Sub")))) {
      Out.Elems.push_back(X);
      continue;
    }
    if (X.isKnown() &&
        ((X.C == 1 && Op == "Mul") || (X.C == 0 && Op == "Add"))) {
      Out.Elems.push_back(Y);
      continue;
    }
    if (!X.isKnown() || !Y.isKnown()) {
      Out.Elems.emplace_back();
      continue;
    }
    int64_t V;
    // Overflow is no value (the runtime would wrap; a shape never does).
    bool Overflow = false;
    if (Op == "Add")
      Overflow = __builtin_add_overflow(X.C, Y.C, &V);
    else if (Op == "Sub")
      Overflow = __builtin_sub_overflow(X.C, Y.C, &V);
    else if (Op == "Mul")
      Overflow = __builtin_mul_overflow(X.C, Y.C, &V);
    else if (Op == "Div" && Y.C != 0 && !(X.C == INT64_MIN && Y.C == -1))
      V = X.C / Y.C;
    else if (Op == "Min")
      V = std::min(X.C, Y.C);
    else if (Op == "Max")
      V = std::max(X.C, Y.C);
    else
      Overflow = true;
    if (Overflow) {
      Out.Elems.emplace_back();
      continue;
    }
    Out.Elems.push_back(ShapeElem::known(V));
  }
  return Out;
}

const Value *ShapeFolder::operand(const Node &N, unsigned I) {
  return I < N.getNumOperands() ? N.getOperand(I) : nullptr;
}

const llvm::StringMap<ShapeFolder::TransferFn> &
ShapeFolder::getTransferTable() {
  // Built on first use: no static constructor.
  static const llvm::StringMap<TransferFn> Table = {
      {"Shape", &ShapeFolder::transferShape},
      {"Size", &ShapeFolder::transferSize},
      {"Identity", &ShapeFolder::transferIdentity},
      {"Cast", &ShapeFolder::transferCast},
      {"Gather", &ShapeFolder::transferGather},
      {"Slice", &ShapeFolder::transferSlice},
      {"Concat", &ShapeFolder::transferConcat},
      {"Unsqueeze", &ShapeFolder::transferUnsqueeze},
      {"Squeeze", &ShapeFolder::transferSqueeze},
      {"Add", &ShapeFolder::transferArith},
      {"Sub", &ShapeFolder::transferArith},
      {"Mul", &ShapeFolder::transferArith},
      {"Div", &ShapeFolder::transferArith},
      {"Min", &ShapeFolder::transferArith},
      {"Max", &ShapeFolder::transferArith},
  };
  return Table;
}

std::optional<ShapeValue> ShapeFolder::transfer(const Node &N) {
  if (!N.isOnnxDomain() || N.getNumResults() == 0 || !N.getResult(0))
    return std::nullopt;
  const llvm::StringMap<TransferFn> &Table = getTransferTable();
  auto It = Table.find(N.getOpType());
  if (It == Table.end())
    return std::nullopt;
  return (this->*It->second)(N);
}

std::optional<ShapeValue> ShapeFolder::transferShape(const Node &N) {
  const Value *X = operand(N, 0);
  if (!X || !X->getType().isTensor() || !X->getType().hasShape())
    return std::nullopt;
  int64_t Rank = X->getType().getRank(), Start = 0, End = Rank;
  if (M.getOpsetVersion(N.getDomain()) >= 15)
    std::tie(Start, End) = resolveShapeRange(Rank, N.getAttrInt("start", 0),
                                             N.getAttrInt("end", Rank));
  ShapeValue Out;
  for (int64_t I = Start; I < End; ++I)
    Out.Elems.push_back(ShapeElem::dimOf(X, I));
  return Out;
}

std::optional<ShapeValue> ShapeFolder::transferSize(const Node &N) {
  const Type &T = operand(N, 0) ? operand(N, 0)->getType() : Type();
  if (!T.isStatic())
    return std::nullopt;
  int64_t P = 1;
  for (const Dim &D : T.getDims())
    P *= D.getValue();
  ShapeValue Out;
  Out.Scalar = true;
  Out.Elems.push_back(ShapeElem::known(P));
  return Out;
}

std::optional<ShapeValue> ShapeFolder::transferIdentity(const Node &N) {
  const ShapeValue *In = get(operand(N, 0));
  return In ? std::optional<ShapeValue>(*In) : std::nullopt;
}

std::optional<ShapeValue> ShapeFolder::transferCast(const Node &N) {
  const ShapeValue *In = get(operand(N, 0));
  if (!In || !isShapeElemType(N.getAttrInt("to", 0)))
    return std::nullopt;
  return *In;
}

std::optional<ShapeValue> ShapeFolder::transferConcat(const Node &N) {
  int64_t Axis = N.getAttrInt("axis", 0);
  if (Axis != 0 && Axis != -1)
    return std::nullopt;
  ShapeValue Out;
  for (const Value *V : N.getOperands()) {
    const ShapeValue *In = get(V);
    if (!In || In->Scalar)
      return std::nullopt;
    Out.Elems.insert(Out.Elems.end(), In->Elems.begin(), In->Elems.end());
  }
  if (Out.Elems.size() > MaxShapeLength)
    return std::nullopt;
  return Out;
}

std::optional<ShapeValue> ShapeFolder::transferUnsqueeze(const Node &N) {
  return transferScalarVectorSwitch(N, /*ToVector=*/true);
}

std::optional<ShapeValue> ShapeFolder::transferSqueeze(const Node &N) {
  return transferScalarVectorSwitch(N, /*ToVector=*/false);
}

std::optional<ShapeValue>
ShapeFolder::transferScalarVectorSwitch(const Node &N, bool ToVector) {
  const ShapeValue *In = get(operand(N, 0));
  if (!In)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Axes = axesOf(N);
  // Only the scalar <-> one-element vector forms of shape arithmetic.
  if (ToVector ? !In->Scalar : (In->Scalar || In->Elems.size() != 1))
    return std::nullopt;
  if (Axes && !(Axes->size() == 1 && ((*Axes)[0] == 0 || (*Axes)[0] == -1)))
    return std::nullopt;
  if (ToVector && !Axes)
    return std::nullopt;
  ShapeValue Out = *In;
  Out.Scalar = !ToVector;
  return Out;
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

bool ShapeFolder::replaceWith(Value *Old, Value *New) {
  bool WasOutput = Old->isGraphOutput();
  if (!canReplaceAllUsesWith(Old, New) ||
      failed(R.replaceAllUsesWith(Old, New)))
    return false;
  // A graph output keeps its declared type under its new producer.
  if (WasOutput)
    TypeDonors.emplace_back(New, Old);
  Released.push_back(Old);
  Same[Old] = New;
  requeueUsers(New);
  noteChange();
  return true;
}

bool ShapeFolder::materialize(Node &N) {
  if (N.getNumResults() != 1 || !N.getResult(0))
    return false;
  Value *V = N.getResult(0);
  auto It = Shapes.find(V);
  if (N.is("Constant") || N.getNumResults() != 1 || It == Shapes.end() ||
      !It->second.allKnown() || V->use_empty() || V->isGraphOutput())
    return false;
  const Type &T = V->getType();
  if (!T.isTensor() || !isShapeElemType(T.getElemType()) || !T.hasShape() ||
      T.getRank() != (It->second.Scalar ? 0u : 1u))
    return false;
  std::vector<int64_t> Values;
  for (const ShapeElem &E : It->second.Elems)
    Values.push_back(E.C);
  Value *C =
      makeConstant(N, Values, It->second.Scalar, T.getElemType(), V->getName());
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

/// The entries of a Reshape target the element lattice explains: known
/// numbers, and dim J of the data at position J (-> 0 with allowzero=0).
static std::vector<TargetEntry>
explainByLattice(const ShapeValue &TV, const Value *Root, bool AllowZero,
                 const std::function<const Value *(const Value *)> &RootOf) {
  std::vector<TargetEntry> Entries(TV.Elems.size());
  for (size_t J = 0; J < TV.Elems.size(); ++J) {
    const ShapeElem &E = TV.Elems[J];
    if (E.isKnown()) {
      Entries[J].K = TargetEntry::Literal;
      Entries[J].Value = E.C;
    } else if (E.K == ShapeElem::DimOf && !AllowZero && E.Index == J &&
               RootOf(E.Of) == Root) {
      Entries[J].K = TargetEntry::Copy; // exactly what 0 does
    }
  }
  return Entries;
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
  if (!DA) {
    DA = std::make_unique<DimAnalysis>(M);
    DA->run();
  }
  return *DA;
}

void ShapeFolder::explainByAnalysis(const Value *Data, const Value *Target,
                                    bool AllowZero,
                                    std::vector<TargetEntry> &Entries) {
  const DimAnalysis &A = dims();
  const std::vector<DimExpr> *TE = A.getData(*Target);
  const std::vector<DimExpr> *DD = A.getDims(*Data);
  if (!TE || !DD)
    return;
  if (Entries.empty())
    Entries.resize(TE->size());
  if (Entries.size() != TE->size())
    return;
  // Best forms: two dims the model proves equal compare equal.
  std::vector<DimExpr> Dims;
  for (const DimExpr &D : *DD)
    Dims.push_back(A.getBest(D));
  for (size_t J = 0; J < Entries.size(); ++J) {
    if (Entries[J].K != TargetEntry::Open)
      continue;
    DimExpr E = A.getBest((*TE)[J]);
    if (E.isConstant()) {
      Entries[J].K = TargetEntry::Literal;
      Entries[J].Value = E.getConstant();
    } else if (!AllowZero && J < Dims.size() && E == Dims[J]) {
      Entries[J].K = TargetEntry::Copy;
    } else if (std::optional<TargetEntry> F = factorOverDims(E, Dims)) {
      Entries[J] = std::move(*F);
    }
  }
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
    if (!Def || !Def->isOnnxDomain())
      return false;
    if (Def->is("Shape")) {
      if (!Def->getOperand(0) || shapeRoot(Def->getOperand(0)) != Root)
        return false;
      continue;
    }
    if (!getTransferTable().count(Def->getOpType()))
      return false;
    for (const Value *O : Def->getOperands())
      if (O)
        Work.push_back(O);
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
        P = B.mul(P, R.createConstant(G, Tensor::fromInt64s(
                                             "factor", {1}, {E.Factor})));
      B.piece(P);
    }
  }
  Value *New = B.finish(Target->getName());
  for (Node *C : B.getCreatedNodes())
    infer(*C);
  if (const Node *Def = Target->getDefiningNode())
    if (Def->getNumResults() == 1)
      Renames.push_back({New, Target->getName().str(), Def});
  setOperand(N, 1, New);
  return true;
}

bool ShapeFolder::foldReshapeTarget(Node &N, const Value *Data,
                                    bool AllowZero) {
  Value *Target = N.getOperand(1);
  if (!getConstantValue(*Target).isNull())
    return false;
  const ShapeValue *TV = get(Target);
  if (TV && TV->Scalar)
    return false;
  std::vector<TargetEntry> Entries;
  if (TV)
    Entries = explainByLattice(*TV, shapeRoot(Data), AllowZero,
                               [&](const Value *V) { return shapeRoot(V); });
  auto IsOpen = [](const TargetEntry &E) { return E.K == TargetEntry::Open; };
  if (Entries.empty() || llvm::any_of(Entries, IsOpen))
    explainByAnalysis(Data, Target, AllowZero, Entries);
  if (Entries.empty())
    return false;
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
  bool FromShape = false;
  if (Candidates.size() == 1 && CanInfer) {
    Entries[Candidates[0]].K = TargetEntry::Open;
  } else {
    size_t Open = 0;
    for (size_t J : Candidates) {
      if (Entries[J].K == TargetEntry::Open)
        ++Open;
      else
        FromShape = true;
    }
    // With dims read at run time among the others, -1 needs them nonzero.
    if (Open > 1 ||
        (Open == 1 && !(CanInfer && (!FromShape || Opts.AssumeNonzeroDims))))
      return false;
  }
  if (FromShape) {
    // Dims read at run time: worth it only when the target reads other
    // tensors' shapes today (else it is already as local as it gets).
    if (readsOnlyShapeOf(Target, Data))
      return false;
    return writeTargetFromShape(N, Entries);
  }
  std::vector<int64_t> NewTarget;
  for (const TargetEntry &E : Entries)
    NewTarget.push_back(E.K == TargetEntry::Open   ? -1
                        : E.K == TargetEntry::Copy ? 0
                                                   : E.Value);
  Value *C =
      makeConstant(N, NewTarget, false,
                   static_cast<int32_t>(ElementType::Int64), Target->getName());
  if (!C)
    return false;
  // If the old target's computation dies, the constant takes its name.
  if (const Node *Def = Target->getDefiningNode())
    if (Def->getNumResults() == 1)
      Renames.push_back({C, Target->getName().str(), Def});
  setOperand(N, 1, C);
  return true;
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
  // By the target: every entry copies the input's dim at its position,
  // except at most one -1, which then is that dim too.
  const ShapeValue *TV = get(N.getOperand(1));
  if (!NoOp && TV && !TV->Scalar && DT.hasShape() &&
      TV->Elems.size() == DT.getRank()) {
    NoOp = true;
    int MinusOnes = 0;
    const Value *Root = shapeRoot(Data);
    for (size_t J = 0; J < TV->Elems.size() && NoOp; ++J) {
      const ShapeElem &E = TV->Elems[J];
      const Dim &D = DT.getDims()[J];
      if (E.isKnown() && E.C == -1)
        NoOp = ++MinusOnes == 1;
      else if (E.isKnown() && E.C == 0)
        NoOp = !AllowZero || (D.isKnown() && D.getValue() == 0);
      else if (E.isKnown())
        NoOp = D.isKnown() && D.getValue() == E.C;
      else
        NoOp =
            E.K == ShapeElem::DimOf && E.Index == J && shapeRoot(E.Of) == Root;
    }
  }
  if (!NoOp)
    return false;
  return replaceWith(Out, const_cast<Value *>(Data));
}

bool ShapeFolder::bypassReshapeInput(Node &N, bool AllowZero) {
  Value *Data = N.getOperand(0);
  Node *Def = Data->getDefiningNode();
  if (!Def || !Def->isOnnxDomain() || Def->getNumOperands() == 0 ||
      !Def->getOperand(0) ||
      !(Def->is("Reshape") || Def->is("Flatten") || Def->is("Squeeze") ||
        Def->is("Unsqueeze")))
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
  TypeDonors.emplace_back(F->getResult(0), Out);
  Released.push_back(Out);
  requeueUsers(F->getResult(0));
  noteChange();
  return true;
}

bool ShapeFolder::simplifyReshape(Node &N) {
  if (M.getOpsetVersion(N.getDomain()) < 5 || N.getNumOperands() != 2 ||
      !N.getOperand(0) || !N.getOperand(1) || !N.getResult(0) ||
      N.getResult(0)->use_empty())
    return false;
  bool AllowZero = M.getOpsetVersion(N.getDomain()) >= 14 &&
                   N.getAttrInt("allowzero", 0) != 0;
  bool Did = foldReshapeTarget(N, N.getOperand(0), AllowZero);
  if (eraseNoOpReshape(N, N.getOperand(0), AllowZero))
    return true;
  Did |= bypassReshapeInput(N, AllowZero);
  if (eraseNoOpReshape(N, N.getOperand(0), AllowZero))
    return true;
  return reshapeToFlatten(N, AllowZero) || Did;
}

bool ShapeFolder::cancelSqueezePair(Node &N) {
  bool IsSqueeze = N.is("Squeeze");
  Value *In = N.getNumOperands() ? N.getOperand(0) : nullptr;
  Node *Def = In ? In->getDefiningNode() : nullptr;
  if (!Def || !N.getResult(0) ||
      !Def->is(IsSqueeze ? "Unsqueeze" : "Squeeze") || !Def->getNumOperands() ||
      !Def->getOperand(0))
    return false;
  Value *X = Def->getOperand(0);
  std::optional<std::vector<int64_t>> Outer = axesOf(N), Inner = axesOf(*Def);
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

bool ShapeFolder::simplifyExpand(Node &N) {
  if (M.getOpsetVersion(N.getDomain()) < 8 || N.getNumOperands() != 2 ||
      !N.getOperand(0) || !N.getOperand(1) || !N.getResult(0) ||
      N.getResult(0)->use_empty() || !getConstantValue(*N.getOperand(1)).isNull())
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
  Value *C = makeConstant(N, NewShape, false,
                          static_cast<int32_t>(ElementType::Int64),
                          Shape->getName());
  if (!C)
    return false;
  if (const Node *Def = Shape->getDefiningNode())
    if (Def->getNumResults() == 1)
      Renames.push_back({C, Shape->getName().str(), Def});
  setOperand(N, 1, C);
  return true;
}

void ShapeFolder::infer(Node &N) {
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

void ShapeFolder::visitNode(Node &N) {
  if (std::optional<ShapeValue> SV = transfer(N))
    Shapes[N.getResult(0)] = std::move(*SV);
  if (!N.isOnnxDomain())
    return;
  if (materialize(N))
    return;
  if (N.is("Reshape")) {
    simplifyReshape(N);
    return;
  }
  if (N.is("Expand")) {
    simplifyExpand(N);
    return;
  }
  if (N.is("Squeeze") || N.is("Unsqueeze"))
    cancelSqueezePair(N);
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
  auto Consider = [&](Value *V) {
    if (!V || ErasedValues.count(V) || !V->use_empty())
      return;
    if (V->isConstant()) {
      ErasedValues.insert(V);
      V->getOwningGraph()->eraseConstant(V);
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
}

bool ShapeFolder::run() {
  // Bodies are swept at their holders, after the outer values they read:
  // nodes holding subgraphs are never erased before the end.
  visitGraph(M.getGraph(), /*InferAll=*/true);
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

    // Types are inferred for the analysis and restored afterwards.
    TypeSnapshot Saved(M);

    // One sweep reaches the fixed point; further sweeps (max-rounds > 1)
    // only check that, and a change there is reported as a bug.
    LogicalResult Result = success();
    for (int64_t Sweep = 0; Sweep < MaxRounds; ++Sweep) {
      ShapeInference SI(M, Quiet.get());
      ShapeFolder Folder(M, Ctx.getDiags(), SI, Opts);
      bool Changed = Folder.run();
      SI.emitRemarks();
      for (auto [New, Old] : Folder.getTypeDonors())
        Saved.transfer(New, Old);
      for (const Value *V : Folder.getErasedValues())
        Saved.forget(V);
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
    if (KeepInferredTypes)
      return Result;
    Saved.restore();
    return Result;
  }

private:
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
