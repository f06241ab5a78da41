//===- BakedConstants.cpp - Rebuild constants a static export baked -------===//
//
// Before:  (float[N,3,H,W] x) ... S = Sigmoid(...)      # float[N,3,H/8,W/8,2]
//            A = Add(S, grid)  <float[1,3,8,8,2] grid = {0,0, 1,0, 2,0, ...}>
// After:   D = Shape(S); I = Range(0, D[3], 1) reshaped to [1,1,1,-1,1]; ...
//            A = Add(S, Add(Add(grid_base, I * grid_step3), J * grid_step2))
//
// Each rule first proves, on every element, that the constant has its form
// (ConstantPatterns.cpp), then builds the same tensor from the partner's
// Shape, so the result equals the constant at the old sizes and follows
// the partner at every other size.
//
//===----------------------------------------------------------------------===//
#include "BakedConstants.h"
#include "MakeDynamic.h"
#include "onnx/onnx_pb.h"
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/ConstantPatterns.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/Ops/Semantics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace onnxopt;
using namespace onnxopt::makedynamic;

namespace {

std::string describeTensor(const Tensor &T) {
  std::string S = getElemTypeName(T.getElemType()).str() + "[";
  std::vector<int64_t> Dims = T.getDims();
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "," : "") + std::to_string(Dims[I]);
  return S + "]";
}

std::string axesText(llvm::ArrayRef<unsigned> Axes) {
  std::vector<std::string> S;
  for (unsigned A : Axes)
    S.push_back(std::to_string(A));
  return (Axes.size() > 1 ? "dims " : "dim ") + llvm::join(S, ", ");
}

/// Builds the nodes of one rebuild right before the node that reads it.
class Builder {
public:
  Builder(Model &M, Rewriter &RW, Node &User)
      : RW(RW), G(*User.getParentGraph()), Opset(M.getOpsetVersion("")) {
    RW.setInsertionPointBefore(&User);
  }

  int64_t getOpset() const { return Opset; }

  Value *constant(Tensor T) { return RW.createConstant(G, std::move(T)); }
  Value *ints(llvm::StringRef Name, llvm::ArrayRef<int64_t> Dims,
              llvm::ArrayRef<int64_t> V) {
    return constant(Tensor::fromInt64s(Name, Dims, V));
  }
  Value *op(llvm::StringRef Type, llvm::ArrayRef<Value *> Operands,
            llvm::StringRef Hint) {
    return RW.createNode(Type, Operands, 1, "", Hint)->getResult(0);
  }

  Value *shapeOf(Value *P) {
    Value *&S = Shapes[P];
    if (!S)
      S = op("Shape", {P}, "baked_shape");
    return S;
  }
  Value *gather(Value *Data, Value *Indices, unsigned Axis,
                llvm::StringRef Hint = "baked_piece") {
    Node *N = RW.createNode("Gather", {Data, Indices}, 1, "", Hint);
    N->setAttr(Attribute::getInt("axis", Axis));
    return N->getResult(0);
  }
  /// Dim \p A of \p P as a scalar (Range's bounds are scalars).
  Value *dimScalar(Value *P, unsigned A) {
    Value *S = shapeOf(P); // before the index: names in creation order
    return gather(S, ints("dim_index", {}, {A}), 0, "baked_dim");
  }
  /// Dim \p A of \p P as a one-element vector (Slice's ends).
  Value *dimVector(Value *P, unsigned A) {
    Value *S = shapeOf(P);
    return gather(S, ints("dim_index", {1}, {A}), 0, "baked_dim");
  }
  /// 0, 1, ..., n-1 (int64), n being dim \p PA of \p P.
  Value *positions(Value *P, unsigned PA,
                   llvm::StringRef Hint = "baked_index") {
    if (!Zero) {
      Zero = ints("zero", {}, {0});
      One = ints("one", {}, {1});
    }
    return op("Range", {Zero, dimScalar(P, PA), One}, Hint);
  }
  /// The vector \p V as a rank-\p Rank tensor along \p Axis (1 on the
  /// other axes).
  Value *along(Value *V, unsigned Axis, unsigned Rank) {
    std::vector<int64_t> Shape(Rank, 1);
    Shape[Axis] = -1;
    return op("Reshape", {V, ints("index_shape", {int64_t(Rank)}, Shape)},
              "baked_index");
  }
  /// 0, 1, ..., n-1 along \p Axis of a rank-\p Rank int64 tensor (1 on the
  /// other axes), n being dim \p PA of \p P.
  Value *indicesAlong(Value *P, unsigned PA, unsigned Axis, unsigned Rank) {
    return along(positions(P, PA), Axis, Rank);
  }
  /// The same as indicesAlong, built with Unsqueeze: no literal 1 that a
  /// later round of make-dynamic could take for an old size of 1.
  Value *positionsAlong(Value *P, unsigned PA, unsigned Axis, unsigned Rank) {
    Value *R = positions(P, PA, "tuple_position");
    std::vector<int64_t> Axes;
    for (unsigned I = 0; I < Rank; ++I)
      if (I != Axis)
        Axes.push_back(I);
    if (Axes.empty())
      return R;
    if (Opset >= 13)
      return op("Unsqueeze", {R, ints("axes", {int64_t(Axes.size())}, Axes)},
                "tuple_position");
    Node *N = RW.createNode("Unsqueeze", {R}, 1, "", "tuple_position");
    N->setAttr(Attribute::getInts("axes", Axes));
    return N->getResult(0);
  }
  Value *castTo(Value *V, int32_t ET) {
    if (ET == onnx::TensorProto::INT64)
      return V;
    Node *N = RW.createNode("Cast", {V}, 1, "", "baked_index");
    N->setAttr(Attribute::getInt("to", ET));
    return N->getResult(0);
  }
  /// \p V with \p Count new leading axes of size 1.
  Value *unsqueezeLeading(Value *V, unsigned Count) {
    std::vector<int64_t> Axes;
    for (unsigned I = 0; I < Count; ++I)
      Axes.push_back(I);
    if (Opset >= 13)
      return op("Unsqueeze", {V, ints("axes", {int64_t(Count)}, Axes)},
                "baked_table");
    Node *N = RW.createNode("Unsqueeze", {V}, 1, "", "baked_table");
    N->setAttr(Attribute::getInts("axes", Axes));
    return N->getResult(0);
  }
  Value *concat(llvm::ArrayRef<Value *> Parts, unsigned Axis,
                llvm::StringRef Hint) {
    Node *N = RW.createNode("Concat", Parts, 1, "", Hint);
    N->setAttr(Attribute::getInt("axis", Axis));
    return N->getResult(0);
  }
  /// \p Data[0 : dim PA of P] along \p Axis.
  Value *prefix(Value *Data, unsigned Axis, Value *P, unsigned PA) {
    return op("Slice",
              {Data, ints("starts", {1}, {0}), dimVector(P, PA),
               ints("axes", {1}, {int64_t(Axis)})},
              "baked_table");
  }

private:
  Rewriter &RW;
  Graph &G;
  int64_t Opset;
  llvm::DenseMap<Value *, Value *> Shapes;
  Value *Zero = nullptr, *One = nullptr;
};

const BakedAxis &axisInfo(const BakedConstant &B, unsigned Axis) {
  for (const BakedAxis &A : B.Axes)
    if (A.Axis == Axis)
      return A;
  llvm_unreachable("not a baked axis");
}

std::string sizesText(const BakedConstant &B, llvm::ArrayRef<unsigned> Axes) {
  std::vector<std::string> S;
  for (unsigned A : Axes) {
    const BakedAxis &I = axisInfo(B, A);
    S.push_back(I.DimText + " (dim " + std::to_string(I.PartnerAxis) + " of '" +
                I.Partner->getName().str() + "')");
  }
  return llvm::join(S, ", ");
}

/// The input symbol an affine form counts along, or "": positions
/// past..past+S-1 baked at the old past read as a Range from that number
/// (from 0 where the past was 0), and make-dynamic checks that no symbol
/// may be the offset. \p FromZero: the form counts from 0.
std::string offsetAlong(const BakedConstant &B, const AffineForm &F,
                        bool &FromZero) {
  std::optional<std::vector<double>> Base = F.Base.toDoubles();
  FromZero = Base && llvm::all_of(*Base, [](double X) { return X == 0; });
  for (const AffineForm::Term &Term : F.Terms)
    if (const BakedAxis &A = axisInfo(B, Term.Axis); A.IsInputSymbol)
      return A.DimText;
  return "";
}

Value *buildAffine(const BakedConstant &B, const AffineForm &F, Builder &Bld) {
  unsigned Rank = B.T.getDims().size();
  int32_t ET = B.T.getElemType();
  Value *Acc = Bld.constant(F.Base);
  for (const AffineForm::Term &Term : F.Terms) {
    const BakedAxis &A = axisInfo(B, Term.Axis);
    Value *Index = Bld.castTo(
        Bld.indicesAlong(A.Partner, A.PartnerAxis, Term.Axis, Rank), ET);
    Value *Step =
        Bld.op("Mul", {Index, Bld.constant(Term.Slope)}, "baked_grid");
    Acc = Bld.op("Add", {Acc, Step}, "baked_grid");
  }
  return Acc;
}

/// How the diagonals of an i - j table over \p Row and \p Col lie at other
/// sizes. Where the columns have other sizes than the rows by symbols
/// (X = cols - rows), the columns must be joined from earlier pieces of X
/// and then the rows' own (a KV cache's keys `[P+S]`, past before the new
/// tokens, against the queries `[S]`: query i is key i + P): the diagonal
/// then moves with X. Anything else is not known.
enum class DiagonalOffset { Fixed, MovesWithColumns, Unknown };
DiagonalOffset diagonalOffset(const BakedAxis &Row, const BakedAxis &Col) {
  DimExpr X = Col.Expr - Row.Expr;
  if (X.isConstant())
    return DiagonalOffset::Fixed;
  if (Col.Pieces.size() < 2 || Col.Pieces.back().Size != Row.Expr)
    return DiagonalOffset::Unknown;
  DimExpr Before;
  for (size_t K = 0; K + 1 < Col.Pieces.size(); ++K)
    Before = Before + Col.Pieces[K].Size;
  return Before == X ? DiagonalOffset::MovesWithColumns
                     : DiagonalOffset::Unknown;
}

Value *buildToeplitz(const BakedConstant &B, const ToeplitzForm &F,
                     unsigned Row, unsigned Col, DiagonalOffset Offset,
                     Builder &Bld) {
  unsigned Rank = B.T.getDims().size();
  const BakedAxis &R = axisInfo(B, Row), &C = axisInfo(B, Col);
  Value *I = Bld.indicesAlong(R.Partner, R.PartnerAxis, Row, Rank);
  Value *J = Bld.indicesAlong(C.Partner, C.PartnerAxis, Col, Rank);
  Value *D = Bld.op("Sub", {I, J}, "baked_mask");
  // Queries that are the last rows of the keys: i - j shifts by how much
  // the columns' lead over the rows grew since the export.
  if (Offset == DiagonalOffset::MovesWithColumns) {
    int64_t Lead = B.T.getDims()[Col] - B.T.getDims()[Row];
    Value *Grown = Bld.op("Sub",
                          {Bld.dimScalar(C.Partner, C.PartnerAxis),
                           Bld.dimScalar(R.Partner, R.PartnerAxis)},
                          "baked_mask");
    Grown = Bld.op("Sub", {Grown, Bld.ints("lead", {}, {Lead})}, "baked_mask");
    D = Bld.op("Add", {D, Grown}, "baked_mask");
  }
  D = Bld.op("Max", {D, Bld.ints("below", {}, {-F.Below})}, "baked_mask");
  D = Bld.op("Min", {D, Bld.ints("above", {}, {F.Above})}, "baked_mask");
  D = Bld.op("Add", {D, Bld.ints("offset", {}, {F.Below})}, "baked_mask");
  Value *Table = Bld.constant(F.Table);
  return Bld.op("Gather", {Table, D}, "baked_mask");
}

/// A constant initializer of \p G or an enclosing graph that \p T is a
/// prefix of along \p Axis, after dropping T's leading dims of size 1 that
/// the candidate does not have. Sets \p Dropped to their number.
Value *findLongerTable(const Tensor &T, unsigned Axis, Graph &G,
                       unsigned &Dropped) {
  std::vector<int64_t> Dims = T.getDims();
  std::string Storage;
  std::optional<llvm::StringRef> Bytes = T.getRawBytes(Storage);
  if (!Bytes)
    return nullptr;
  for (Graph *Scope = &G; Scope;) {
    for (const std::unique_ptr<Value> &V : Scope->getConstants()) {
      const Tensor &Big = V->getInitializer();
      if (Big.getElemType() != T.getElemType())
        continue;
      size_t BigRank = Big.getDims().size();
      if (BigRank > Dims.size() || Dims.size() - BigRank > Axis)
        continue;
      unsigned Lead = Dims.size() - BigRank;
      if (!std::all_of(Dims.begin(), Dims.begin() + Lead,
                       [](int64_t D) { return D == 1; }))
        continue;
      if (Big.getDims()[Axis - Lead] <= Dims[Axis])
        continue;
      Tensor Small =
          Lead ? Tensor::fromRaw("table", T.getElemType(),
                                 llvm::ArrayRef<int64_t>(Dims).drop_front(Lead),
                                 *Bytes)
               : T;
      if (!isPrefixAlong(Small, Big, Axis - Lead))
        continue;
      Dropped = Lead;
      return V.get();
    }
    Node *Parent = Scope->getParentNode();
    Scope = Parent ? Parent->getParentGraph() : nullptr;
  }
  return nullptr;
}

/// Matches \p T as a sinusoid along \p Axis, with a partner table from
/// the model's constants when one fits (the sin of a cos table: rotary
/// tables come in pairs, and the pair fixes low frequencies that a short
/// cos table alone cannot).
std::optional<SinusoidForm> matchRotary(const Tensor &T, unsigned Axis,
                                        const Value *Self, Graph &G,
                                        llvm::StringRef Name, bool &WithPartner,
                                        const Tensor *FromAngles,
                                        int64_t Offset = 0) {
  WithPartner = false;
  if (T.getElemType() != onnx::TensorProto::FLOAT)
    return std::nullopt;
  if (FromAngles)
    if (std::optional<SinusoidForm> F =
            matchSinusoid(T, Axis, FromAngles, Name, Offset)) {
      WithPartner = true;
      return F;
    }
  for (Graph *Scope = &G; Scope;) {
    for (const std::unique_ptr<Value> &V : Scope->getConstants()) {
      const Tensor &P = V->getInitializer();
      if (V.get() == Self || P.getElemType() != onnx::TensorProto::FLOAT ||
          P.getDims() != T.getDims())
        continue;
      if (std::optional<SinusoidForm> F =
              matchSinusoid(T, Axis, &P, Name, Offset)) {
        WithPartner = true;
        return F;
      }
    }
    Node *Parent = Scope->getParentNode();
    Scope = Parent ? Parent->getParentGraph() : nullptr;
  }
  return matchSinusoid(T, Axis, nullptr, Name, Offset);
}

/// The one symbol of \p Offsets (other than \p Along) whose old size the
/// sinusoid rows of \p T start at, matched into \p F; null if none, or if
/// that size is the old size of several symbols (a batch of 3 beside a past
/// of 3: either may offset the rows, and the table is kept and sliced, the
/// symbols laid end to end with Along pinned, as for any other table).
const RowOffset *offsetRows(const Tensor &T, unsigned Axis, const Value *Self,
                            Graph &G, llvm::StringRef Name,
                            const Tensor &FromAngles, llvm::StringRef Along,
                            llvm::ArrayRef<RowOffset> Offsets,
                            std::optional<SinusoidForm> &F, bool &WithPartner) {
  std::set<int64_t> Tried;
  for (const RowOffset &O : Offsets) {
    if (O.Symbol == Along || O.Old <= 0 || !Tried.insert(O.Old).second)
      continue;
    F = matchRotary(T, Axis, Self, G, Name, WithPartner,
                    FromAngles ? &FromAngles : nullptr, O.Old);
    if (!F)
      continue;
    if (llvm::count_if(Offsets, [&](const RowOffset &Q) {
          return Q.Symbol != Along && Q.Old == O.Old;
        }) == 1)
      return &O;
    F.reset();
    return nullptr;
  }
  return nullptr;
}

/// The partner of a table the model computes as the cosine or sine of
/// angles it computes from constants (a rotary table the exporter left
/// unfolded: cos(inv_freq @ positions)): the other function of the same
/// angles, in the table's shape, cut like the table at \p Still. Null when
/// the table is no such function.
Tensor partnerFromAngles(const Value &Operand, const Tensor &T,
                         llvm::ArrayRef<unsigned> Still, const Model &M,
                         llvm::StringRef Name) {
  bool IsSin = false;
  double Scale = 1.0;
  const Value *A = trigAngles(Operand, IsSin, Scale);
  if (!A)
    return Tensor();
  llvm::DenseMap<const Value *, Tensor> Memo;
  Tensor Angles =
      evaluateFromConstants(*A, M.getOpsetVersion(""), bakedConeOptions(), Memo);
  if (!Angles)
    return Tensor();
  Tensor P = otherSinusoid(Angles, IsSin, T.getDims(), Name.str() + "_partner",
                           Scale);
  return !P || Still.empty() ? P : sliceAtZero(P, Still, Name);
}

/// Why a float \p Step below 1 along \p Axis (of old size \p N) reads as
/// positions scaled to the size: it takes n - 1 or n steps to 1 or 2,
/// within \p Tolerance relative. None for other steps.
std::optional<std::string> stepToSpan(double Step, int64_t N, unsigned Axis,
                                      double Tolerance) {
  double A = std::fabs(Step);
  if (A == 0 || A >= 1)
    return std::nullopt;
  for (int64_t Count : {N - 1, N})
    for (double Span : {1.0, 2.0})
      if (Count > 0 && std::fabs(A * double(Count) - Span) <= Tolerance * Span)
        return "its step along dim " + std::to_string(Axis) + " takes " +
               std::to_string(Count) + " steps of " +
               llvm::formatv("{0}", A).str() + " to " +
               std::to_string(int64_t(Span)) + " over the old size " +
               std::to_string(N);
  return std::nullopt;
}

/// Why the affine form \p F of \p T reads as positions scaled to the
/// size of their axis: a float step below 1 that takes n - 1 or n steps
/// (n the axis's old size) to 1 or 2 exactly (`linspace(0, 1, n)`,
/// `linspace(-1, 1, n)`, `arange(n) / n`). At another size such a step is
/// another one. None for other steps (a grid's 1, a stride's 8).
std::optional<std::string> normalizedStep(const Tensor &T,
                                          const AffineForm &F) {
  if (T.getElemType() != onnx::TensorProto::FLOAT &&
      T.getElemType() != onnx::TensorProto::DOUBLE &&
      T.getElemType() != onnx::TensorProto::FLOAT16)
    return std::nullopt;
  for (const AffineForm::Term &Term : F.Terms) {
    int64_t N = T.getDims()[Term.Axis];
    std::optional<std::vector<double>> Steps = Term.Slope.toDoubles();
    if (!Steps)
      continue;
    for (double Step : *Steps)
      if (std::optional<std::string> Why =
              stepToSpan(Step, N, Term.Axis, /*Tolerance=*/1e-6))
        return Why;
  }
  return std::nullopt;
}

/// Why \p T reads, along \p Axis, as positions scaled to the size where
/// it is not bit for bit a Range's multiples (`arange(n) / n` divides
/// where a Range multiplies): every line along the axis is affine to 1e-5
/// of its largest value, and a step takes n - 1 or n steps (n the axis's
/// size) to 1 or 2. None otherwise.
std::optional<std::string> nearlyNormalized(const Tensor &T, unsigned Axis) {
  int32_t ET = T.getElemType();
  std::vector<int64_t> Dims = T.getDims();
  if ((ET != onnx::TensorProto::FLOAT && ET != onnx::TensorProto::DOUBLE &&
       ET != onnx::TensorProto::FLOAT16) ||
      Axis >= Dims.size() || Dims[Axis] < 3)
    return std::nullopt;
  std::optional<std::vector<double>> V = T.toDoubles();
  if (!V || V->empty())
    return std::nullopt;
  int64_t N = Dims[Axis], Inner = 1;
  for (size_t D = Axis + 1; D < Dims.size(); ++D)
    Inner *= Dims[D];
  std::optional<std::string> Why;
  for (int64_t I = 0; I < int64_t(V->size()); ++I) {
    if ((I / Inner) % N != 0)
      continue; // not the start of a line along the axis
    double Start = (*V)[I], Step = (*V)[I + Inner] - Start, Largest = 0;
    for (int64_t K = 0; K < N; ++K)
      Largest = std::max(Largest, std::fabs((*V)[I + K * Inner]));
    for (int64_t K = 0; K < N; ++K)
      if (std::fabs((*V)[I + K * Inner] - (Start + double(K) * Step)) >
          1e-5 * std::max(Largest, 1e-30))
        return std::nullopt;
    if (!Why)
      Why = stepToSpan(Step, N, Axis, /*Tolerance=*/1e-5);
  }
  return Why;
}

/// True if the piece \p F of \p Grid is affine in its flat position as
/// well (a slope along a grid dim is the next varying dim's slope times
/// the sizes between: `arange(h*w)` per level): at other sizes the two
/// readings differ, and nothing says which one the model means.
bool flatAsWell(const Tensor &Grid, const AffineForm &F) {
  std::vector<int64_t> Dims = Grid.getDims();
  for (size_t K = 0; K + 1 < F.Terms.size(); ++K) {
    unsigned Outer = F.Terms[K].Axis, Inner = F.Terms[K + 1].Axis;
    double Stride = 1;
    for (unsigned A = Outer + 1; A <= Inner; ++A)
      Stride *= double(Dims[A]);
    std::optional<std::vector<double>> SO = F.Terms[K].Slope.toDoubles(),
                                       SI = F.Terms[K + 1].Slope.toDoubles();
    if (!SO || !SI || SO->size() != SI->size())
      continue;
    bool Same = true;
    for (size_t I = 0; I < SO->size() && Same; ++I)
      Same = (*SO)[I] == (*SI)[I] * Stride;
    if (Same)
      return true;
  }
  return false;
}

/// One piece of a concatenated constant as its grid's affine form: the
/// terms' axes are the positions of the growing grid dims among the
/// piece's factors (0 the outermost); the base and slopes have the
/// constant's rank, and at its axis the product of the grid dims that keep
/// their size (a detector's anchors per cell), along which they hold any
/// values.
struct PieceForm {
  AffineForm F;
  /// A piece whose size no symbol changes: its values, kept.
  Tensor Kept;
};

/// Each piece of \p T along \p Axis (the operands of the Concat \p A's
/// partner dim was joined by), seen as the grid it flattens, as an affine
/// form in the indices of the grid dims that grow. Sets \p Why when a
/// piece has no such form.
std::optional<std::vector<PieceForm>>
matchPieces(const Tensor &T, unsigned Axis, const BakedAxis &A,
            llvm::StringRef Name, std::string &Why) {
  std::vector<PieceForm> Forms;
  int64_t Begin = 0;
  for (size_t L = 0; L < A.Pieces.size(); ++L) {
    const BakedAxis::Piece &P = A.Pieces[L];
    std::string Which = "piece " + std::to_string(L) + " ('" +
                        P.V->getName().str() + "', from index " +
                        std::to_string(Begin) + ")";
    std::vector<int64_t> Sizes;
    std::vector<unsigned> Growing;
    int64_t Count = 1, Fixed = 1;
    for (size_t K = 0; K < P.Factors.size(); ++K) {
      const BakedAxis::Piece::Factor &F = P.Factors[K];
      if (F.Grows && F.Old == 1) {
        Why = Which + " spans a dim of old size 1 (dim " +
              std::to_string(F.Dim) + " of '" + F.V->getName().str() +
              "') that grows: its values along it are not shown";
        return std::nullopt;
      }
      Sizes.push_back(F.Old);
      Count *= F.Old;
      if (F.Grows)
        Growing.push_back(Axis + unsigned(K));
      else
        Fixed *= F.Old;
    }
    std::string GridText =
        "[" +
        llvm::join(
            llvm::map_range(Sizes, [](int64_t S) { return std::to_string(S); }),
            ",") +
        "]";
    Tensor Grid = pieceAlong(T, Axis, Begin, Sizes,
                             Name.str() + "_piece" + std::to_string(L));
    Begin += Count;
    if (!Grid) {
      Why = "its pieces do not span it as the Concat's operands do (" + Which +
            ", grid " + GridText + ")";
      return std::nullopt;
    }
    // A piece of a size no symbol changes (a class token's row beside the
    // patches) keeps its values.
    if (Growing.empty()) {
      std::vector<int64_t> Dims = T.getDims();
      Dims[Axis] = Count;
      PieceForm Kept;
      Kept.Kept = withDims(Grid, Dims, Grid.getName());
      Forms.push_back(std::move(Kept));
      continue;
    }
    std::optional<AffineForm> F = matchAffine(Grid, Growing, Grid.getName());
    if (!F) {
      Why = Which + " is not affine in the indices of the grid " + GridText +
            " it flattens";
      return std::nullopt;
    }
    if (std::optional<std::string> Step = normalizedStep(Grid, *F)) {
      Why = Which + " is affine in the indices of its grid " + GridText +
            ", but " + *Step +
            ": positions scaled to the size, which a Range with that step "
            "would not follow";
      return std::nullopt;
    }
    if (flatAsWell(Grid, *F)) {
      Why = Which +
            " is affine in its position along the dim as well as "
            "in the indices of its grid " +
            GridText + ": which one it follows at other sizes is not shown";
      return std::nullopt;
    }
    // The grid dims back to one at Axis: the growing ones are 1 in the
    // base and slopes, the fixed ones keep their values in order.
    std::vector<int64_t> Dims = T.getDims();
    Dims[Axis] = Fixed;
    F->Base = withDims(F->Base, Dims, F->Base.getName());
    for (AffineForm::Term &Term : F->Terms) {
      Term.Slope = withDims(Term.Slope, Dims, Term.Slope.getName());
      Term.Axis -= Axis;
    }
    Forms.push_back({std::move(*F)});
  }
  if (Begin != T.getDims()[Axis]) {
    Why = "its pieces hold " + std::to_string(Begin) + " of its " +
          std::to_string(T.getDims()[Axis]) + " entries there";
    return std::nullopt;
  }
  if (llvm::all_of(Forms, [](const PieceForm &F) { return bool(F.Kept); })) {
    Why = "none of its pieces grows";
    return std::nullopt;
  }
  return Forms;
}

/// The pieces of \p Forms at the sizes the model computes, concatenated
/// along \p Axis. Piece by piece, from the position p along the dim: a
/// grid dim's index is (p / the sizes of the dims inside it) mod its size;
/// the base and slopes are gathered at the fixed dims' indices, and the
/// growing dims' indices times their slopes added.
Value *buildPieces(const BakedConstant &B, unsigned Axis,
                   llvm::ArrayRef<PieceForm> Forms, Builder &Bld) {
  const BakedAxis &A = axisInfo(B, Axis);
  unsigned Rank = B.T.getDims().size();
  int32_t ET = B.T.getElemType();
  std::vector<Value *> Parts;
  for (size_t L = 0; L < Forms.size(); ++L) {
    const BakedAxis::Piece &P = A.Pieces[L];
    const AffineForm &F = Forms[L].F;
    if (Forms[L].Kept) {
      Parts.push_back(Bld.constant(Forms[L].Kept));
      continue;
    }
    Value *Pos = Bld.positions(P.V, P.Dim);
    auto IndexOf = [&](size_t K) {
      Value *Index = Pos, *Inside = nullptr;
      for (size_t M = K + 1; M < P.Factors.size(); ++M) {
        Value *D = Bld.dimScalar(P.Factors[M].V, P.Factors[M].Dim);
        Inside = Inside ? Bld.op("Mul", {Inside, D}, "baked_piece") : D;
      }
      if (Inside)
        Index = Bld.op("Div", {Index, Inside}, "baked_piece");
      if (K > 0)
        Index = Bld.op("Mod",
                       {Index, Bld.dimScalar(P.Factors[K].V, P.Factors[K].Dim)},
                       "baked_piece");
      return Index;
    };
    // The fixed dims' combined index, row-major over their old sizes.
    Value *FixedIndex = nullptr;
    int64_t Stride = 1;
    for (size_t K = P.Factors.size(); K-- > 0;) {
      if (P.Factors[K].Grows || P.Factors[K].Old == 1)
        continue;
      Value *I = IndexOf(K);
      if (Stride != 1)
        I = Bld.op("Mul", {I, Bld.ints("fixed_stride", {}, {Stride})},
                   "baked_piece");
      FixedIndex =
          FixedIndex ? Bld.op("Add", {FixedIndex, I}, "baked_piece") : I;
      Stride *= P.Factors[K].Old;
    }
    auto AtFixed = [&](const Tensor &T) {
      Value *V = Bld.constant(T);
      return FixedIndex ? Bld.gather(V, FixedIndex, Axis) : V;
    };
    Value *Acc = AtFixed(F.Base);
    for (const AffineForm::Term &Term : F.Terms) {
      Value *Index = Bld.castTo(Bld.along(IndexOf(Term.Axis), Axis, Rank), ET);
      Value *Step = Bld.op("Mul", {Index, AtFixed(Term.Slope)}, "baked_piece");
      Acc = Bld.op("Add", {Acc, Step}, "baked_piece");
    }
    // A piece the same at every position still takes its own size.
    if (F.Terms.empty() && !FixedIndex)
      Acc = Bld.op("Expand", {Acc, Bld.shapeOf(Bld.along(Pos, Axis, Rank))},
                   "baked_piece");
    Parts.push_back(Acc);
  }
  return Bld.concat(Parts, Axis, "baked_pieces");
}

/// True if a frequency of \p F times the old size \p N is pi or 2*pi
/// (to 1e-6): positions scaled to the size before the sinusoid (a sine
/// embedding of `arange(n) / n * 2*pi`), at another size another
/// frequency. A rotary table's frequencies (10000^(-2k/d)) are not.
bool turnsOverSize(const SinusoidForm &F, int64_t N) {
  std::optional<std::vector<double>> Freqs = F.Freq.toDoubles();
  if (!Freqs)
    return false;
  for (double Freq : *Freqs)
    for (double Turn : {M_PI, 2 * M_PI})
      if (std::fabs(std::fabs(Freq) * double(N) - Turn) <= 1e-6 * Turn)
        return true;
  return false;
}

Value *buildSinusoid(const BakedConstant &B, const SinusoidForm &F,
                     unsigned Axis, Builder &Bld,
                     const RowOffset *From = nullptr) {
  unsigned Rank = B.T.getDims().size();
  const BakedAxis &A = axisInfo(B, Axis);
  Value *Positions = Bld.positions(A.Partner, A.PartnerAxis);
  if (From)
    Positions =
        Bld.op("Add", {Positions, Bld.dimScalar(From->Input, From->Dim)},
               "baked_index");
  Value *Index =
      Bld.castTo(Bld.along(Positions, Axis, Rank), onnx::TensorProto::FLOAT);
  Value *Angle = Bld.op("Mul", {Index, Bld.constant(F.Freq)}, "baked_angle");
  Value *V = Bld.op(F.IsSin ? "Sin" : "Cos", {Angle}, "baked_rotary");
  if (!F.UnitAmp)
    V = Bld.op("Mul", {V, Bld.constant(F.Amp)}, "baked_rotary");
  return V;
}

} // namespace

ConstantConeOptions onnxopt::bakedConeOptions() {
  ConstantConeOptions Opts;
  Opts.Eval.MaxResultBytes = 16 << 20;
  Opts.Eval.AllowInexact = true;
  Opts.MaxNodes = 256;
  return Opts;
}

Tensor onnxopt::evaluateBaked(const Value &V, int64_t Opset,
                              llvm::DenseMap<const Value *, Tensor> &Memo) {
  return evaluateFromConstants(V, Opset, bakedConeOptions(), Memo);
}

Value *onnxopt::buildPositions(const BakedConstant &B, unsigned Axis,
                              Model &M, Rewriter &RW) {
  Builder Bld(M, RW, *B.User);
  const BakedAxis &A = axisInfo(B, Axis);
  return Bld.castTo(Bld.positionsAlong(A.Partner, A.PartnerAxis, Axis,
                                       B.T.getDims().size()),
                    B.T.getElemType());
}

Value *onnxopt::buildInputDim(Node &User, Value *Input, unsigned Dim,
                              const Tensor &Like, Model &M, Rewriter &RW) {
  Builder Bld(M, RW, User);
  std::vector<int64_t> Dims = Like.getDims();
  Value *Index = Bld.ints("dim_index", Dims, {int64_t(Dim)});
  return Bld.castTo(Bld.gather(Bld.shapeOf(Input), Index, 0, "baked_dim"),
                    Like.getElemType());
}

RebuildResult onnxopt::rebuildBakedConstant(const BakedConstant &B, Model &M,
                                            Rewriter &RW,
                                            llvm::ArrayRef<RowOffset> Offsets) {
  Node &User = *B.User;
  Value *Operand = User.getOperand(B.Operand);
  std::string Name = Operand->getName().str();
  std::string What = "constant '" + Name + "' " + describeTensor(B.T);
  std::vector<unsigned> Axes, Varying;
  for (const BakedAxis &A : B.Axes) {
    Axes.push_back(A.Axis);
    if (!isConstantAlong(B.T, A.Axis))
      Varying.push_back(A.Axis);
  }
  RebuildResult Result;
  auto Use = [&](Value *V, std::string Rule, std::string Message) {
    RW.setOperand(&User, B.Operand, V);
    Result.Rule = std::move(Rule);
    Result.Message = std::move(Message);
    return Result;
  };

  if (Varying.empty()) {
    Tensor Cut = sliceAtZero(B.T, Axes, Name + "_collapsed");
    if (!Cut)
      return Result;
    Builder Bld(M, RW, User);
    return Use(Bld.constant(Cut), "collapsed constant",
               What + " is the same along " + axesText(Axes) +
                   ": cut to 1 there, so it broadcasts to " +
                   sizesText(B, Axes));
  }
  if (M.getOpsetVersion("") < 11) {
    Result.Message = What + " varies along " + axesText(Varying) +
                     ", and rebuilding it needs Range (opset 11; the model "
                     "has " +
                     std::to_string(M.getOpsetVersion("")) + ")";
    return Result;
  }
  if (std::optional<AffineForm> F = matchAffine(B.T, Axes, Name)) {
    if (std::optional<std::string> Why = normalizedStep(B.T, *F)) {
      Result.Message = What + " is affine in its indices along " +
                       axesText(Varying) + ", but " + *Why +
                       ": positions scaled to the size (linspace, or "
                       "arange(n)/n), which a Range with that step would "
                       "not follow";
      return Result;
    }
    Builder Bld(M, RW, User);
    Result = Use(buildAffine(B, *F, Bld), "affine constant",
                 What + " is affine in its indices along " + axesText(Varying) +
                     ": rebuilt with Range at " + sizesText(B, Axes));
    Result.OffsetAlong = offsetAlong(B, *F, Result.RowsFromZero);
    return Result;
  }
  std::vector<unsigned> Still;
  for (unsigned A : Axes)
    if (!llvm::is_contained(Varying, A))
      Still.push_back(A);
  Tensor Reduced = Still.empty() ? B.T : sliceAtZero(B.T, Still, Name);
  if (Varying.size() == 2 && Reduced) {
    std::optional<ToeplitzForm> F =
        matchToeplitz(Reduced, Varying[0], Varying[1], Name);
    if (F && M.getOpsetVersion("") < 12) {
      Result.Message = What +
                       " is a function of i - j (a mask), and "
                       "rebuilding it needs Max and Min of int64 (opset 12)";
      return Result;
    }
    // A table of more than two values whose ends saturate on only a few
    // diagonals (T5's distance buckets, exported at a length below their
    // max distance) may go on changing past the old size: the constant is
    // then kept and its top-left block sliced, as exact at every size up
    // to the old one, which bounds the dim there.
    const BakedAxis &RowAxis = axisInfo(B, Varying[0]),
                    &ColAxis = axisInfo(B, Varying[1]);
    if (F && F->Distinct > 2 &&
        (2 * F->SaturatedBelow < Reduced.getDims()[Varying[1]] ||
         2 * F->SaturatedAbove < Reduced.getDims()[Varying[0]])) {
      if (RowAxis.DimText != ColAxis.DimText) {
        Result.Message = What + " depends only on i - j along " +
                         axesText(Varying) +
                         ", but holds more than two values and its ends "
                         "repeat on a few diagonals only: what larger sizes "
                         "add is not shown";
        return Result;
      }
      Builder Bld(M, RW, User);
      Value *Data = Still.empty() ? Operand : Bld.constant(Reduced);
      Value *V =
          Bld.prefix(Data, Varying[0], RowAxis.Partner, RowAxis.PartnerAxis);
      V = Bld.prefix(V, Varying[1], ColAxis.Partner, ColAxis.PartnerAxis);
      Result = Use(V, "bounded i - j table",
                   What + " depends only on i - j along " + axesText(Varying) +
                       ", but holds more than two values and its ends "
                       "repeat on a few diagonals only: kept and sliced to " +
                       sizesText(B, Varying) + ", so " + RowAxis.DimText +
                       " <= " + std::to_string(B.T.getDims()[Varying[0]]));
      Result.Bounds = true;
      Result.Along = RowAxis.DimText;
      return Result;
    }
    DiagonalOffset Offset = diagonalOffset(RowAxis, ColAxis);
    if (F && Offset == DiagonalOffset::Unknown) {
      Result.Message = What + " depends only on i - j along " +
                       axesText(Varying) + ", but its columns (" +
                       ColAxis.DimText + ") differ from its rows (" +
                       RowAxis.DimText +
                       ") by new symbols and are not joined from pieces "
                       "that end with the rows: where its diagonal lies "
                       "at other sizes is not shown";
      return Result;
    }
    if (F) {
      Builder Bld(M, RW, User);
      return Use(
          buildToeplitz(B, *F, Varying[0], Varying[1], Offset, Bld),
          "i - j mask",
          What + " depends only on i - j along " + axesText(Varying) + " (" +
              std::to_string(F->Below + F->Above + 1) +
              " distinct diagonals): rebuilt at " + sizesText(B, Varying) +
              (Offset == DiagonalOffset::MovesWithColumns
                   ? ", its diagonal moved by what the columns' lead over "
                     "the rows grew (the rows are the last of the columns "
                     "the Concat joins)"
                   : ""));
    }
  }
  if (Varying.size() == 1 && Reduced && axisInfo(B, Varying[0]).IsInputSymbol) {
    unsigned Axis = Varying[0];
    const BakedAxis &A = axisInfo(B, Axis);
    Builder Bld(M, RW, User);
    unsigned Dropped = 0;
    if (Value *Big =
            findLongerTable(Reduced, Axis, *User.getParentGraph(), Dropped)) {
      Value *V = Bld.prefix(Big, Axis - Dropped, A.Partner, A.PartnerAxis);
      if (Dropped)
        V = Bld.unsqueezeLeading(V, Dropped);
      return Use(V, "longer-table slice",
                 What + " is the first rows of '" + Big->getName().str() +
                     "' " + describeTensor(Big->getInitializer()) +
                     ": sliced from it to " + sizesText(B, Varying));
    }
    bool WithPartner = false;
    Tensor FromAngles = partnerFromAngles(*Operand, B.T, Still, M, Name);
    std::optional<SinusoidForm> F =
        matchRotary(Reduced, Axis, Still.empty() ? Operand : nullptr,
                    *User.getParentGraph(), Name, WithPartner,
                    FromAngles ? &FromAngles : nullptr);
    if (F && turnsOverSize(*F, B.T.getDims()[Axis])) {
      Result.Message = What + " is " + (F->IsSin ? "sin" : "cos") +
                       "(i * f) along " + axesText(Varying) +
                       ", but a frequency turns a whole or half circle over "
                       "the old size " +
                       std::to_string(B.T.getDims()[Axis]) +
                       ": angles scaled to the size, which a Range with that "
                       "frequency would not follow";
      return Result;
    }
    const RowOffset *From = nullptr;
    if (!F)
      From = offsetRows(Reduced, Axis, Still.empty() ? Operand : nullptr,
                        *User.getParentGraph(), Name, FromAngles, A.DimText,
                        Offsets, F, WithPartner);
    if (F && From) {
      // Rows from the old size of From on: rows From..From+S-1 at run time.
      Result.OffsetAlong = A.DimText;
      Result.OffsetBy = From->Symbol;
      return Use(buildSinusoid(B, *F, Axis, Bld, From), "sinusoid table",
                 What + " is " + (F->UnitAmp ? "" : "a * ") +
                     (F->IsSin ? "sin" : "cos") + "((" + From->Symbol +
                     " + i) * f) along " + axesText(Varying) +
                     ", its rows the positions from " + From->Symbol + "=" +
                     std::to_string(From->Old) +
                     " on (read with its partner table, every element "
                     "within 4e-6): rebuilt with Range at " +
                     sizesText(B, Varying) + " plus " + From->Symbol);
    }
    if (F) {
      // Angles from position 0: rows past..past+S-1 only if the past was 0.
      Result.OffsetAlong = A.DimText;
      Result.RowsFromZero = true;
      return Use(buildSinusoid(B, *F, Axis, Bld), "sinusoid table",
                 What + " is " + (F->UnitAmp ? "" : "a * ") +
                     (F->IsSin ? "sin" : "cos") + "(i * f) along " +
                     axesText(Varying) + ", one frequency per column (" +
                     (!WithPartner ? "read from its own angles"
                      : FromAngles ? "read with the other function of the "
                                     "angles the model computes it from"
                                   : "read with its partner table") +
                     ", every element within 4e-6): rebuilt with Range at " +
                     sizesText(B, Varying));
    }
    // Positions scaled to the size whose rounding no Range reproduces:
    // its first rows are the positions of the old size, not of a smaller.
    if (std::optional<std::string> Why = nearlyNormalized(Reduced, Axis)) {
      Result.Message = What + " is affine in its indices along " +
                       axesText(Varying) + " to 1e-5, but " + *Why +
                       ": positions scaled to the size (linspace, or "
                       "arange(n)/n), whose first rows a smaller size would "
                       "not read";
      return Result;
    }
    Value *Data = Still.empty() ? Operand : Bld.constant(Reduced);
    Result = Use(Bld.prefix(Data, Axis, A.Partner, A.PartnerAxis),
                 "baked-table slice",
                 What +
                     " is no prefix of a longer table in the model: kept "
                     "and sliced to " +
                     sizesText(B, Varying) + ", so " + A.DimText +
                     " <= " + std::to_string(B.T.getDims()[Axis]));
    Result.Bounds = true;
    Result.Along = A.DimText;
    return Result;
  }
  if (Varying.size() == 1 && Reduced &&
      !axisInfo(B, Varying[0]).Pieces.empty()) {
    const BakedAxis &A = axisInfo(B, Varying[0]);
    std::string Why;
    std::optional<std::vector<PieceForm>> Forms =
        matchPieces(Reduced, Varying[0], A, Name, Why);
    std::string Joined = What + " has at " + axesText(Varying) +
                         " the old size of " + sizesText(B, Varying) +
                         ", which a Concat joins from " +
                         std::to_string(A.Pieces.size()) + " pieces";
    if (!Forms) {
      Result.Message =
          Joined + ", and " + Why + ", so nothing rebuilds it at other sizes";
      return Result;
    }
    Builder Bld(M, RW, User);
    return Use(buildPieces(B, Varying[0], *Forms, Bld),
               "piecewise affine constant",
               Joined + ": each piece that grows, as the grid its view "
                        "flattened, is affine in the indices of the grid "
                        "dims that grow, rebuilt with Range at its size (the "
                        "others kept) and concatenated");
  }
  Result.Message =
      What + " has at " + axesText(Varying) + " the old size of " +
      sizesText(B, Varying) +
      ", and its values there are neither the same along the dim, affine "
      "in the index, a function of i - j, nor a table indexed by an input "
      "symbol: nothing rebuilds it at other sizes";
  return Result;
}

//===----------------------------------------------------------------------===//
// Baked index tuples and masks that meet their partner downstream
//===----------------------------------------------------------------------===//

/// The axis \p A of the index tuples \p Idx (dims \p TD, the tuple last)
/// such that component \p K of every tuple is the tuple's own position
/// along A, and A has \p Size elements: `T[p..., K] == p[A]`, checked on
/// every element.
static std::optional<unsigned> positionAxis(llvm::ArrayRef<int64_t> Idx,
                                            llvm::ArrayRef<int64_t> TD,
                                            unsigned K, int64_t Size) {
  unsigned Rank = TD.size() - 1;
  int64_t Tuples = 1;
  for (unsigned A = 0; A < Rank; ++A)
    Tuples *= TD[A];
  for (unsigned A = 0; A < Rank; ++A) {
    if (TD[A] != Size)
      continue;
    // The stride of axis A in tuples: the position along A of tuple T is
    // (T / Stride) % TD[A].
    int64_t Stride = 1;
    for (unsigned B = A + 1; B < Rank; ++B)
      Stride *= TD[B];
    bool Matches = true;
    for (int64_t T = 0; T < Tuples && Matches; ++T)
      Matches = Idx[T * TD.back() + K] == (T / Stride) % TD[A];
    if (Matches)
      return A;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Index tables computed in the graph
//===----------------------------------------------------------------------===//

static bool isNumber(const DimExpr &E, int64_t V) {
  return E.isConstant() && E.getConstant() == V;
}

bool IndexForm::isZero() const {
  return isNumber(Offset, 0) &&
         llvm::all_of(Coef, [](const DimExpr &C) { return isNumber(C, 0); });
}

std::optional<unsigned> IndexForm::positionAxis() const {
  std::optional<unsigned> Axis;
  for (unsigned A = 0; A < Coef.size(); ++A) {
    if (isNumber(Coef[A], 0))
      continue;
    if (!isNumber(Coef[A], 1) || Axis)
      return std::nullopt;
    Axis = A;
  }
  if (!isNumber(Offset, 0))
    return std::nullopt;
  return Axis;
}

std::optional<IndexForm> IndexFormReader::read(const Value &V, unsigned Depth) {
  if (Depth > 32)
    return std::nullopt;
  if (std::optional<IndexForm> F = readConstant(V))
    return F;
  if (std::optional<IndexForm> F = readShapeNumber(V))
    return F;
  Node *N = V.getDefiningNode();
  if (!N || N->getNumOperands() == 0 || !N->getOperand(0) ||
      N->getNumResults() != 1)
    return std::nullopt;
  if (hasTrait(*N, CountsUp))
    return readRange(*N);
  if (hasTrait(*N, Arithmetic))
    return combined(*N, Depth);
  std::optional<IndexForm> In = read(*N->getOperand(0), Depth + 1);
  if (!In)
    return std::nullopt;
  if (hasTrait(*N, IdentityOp))
    return In;
  if (hasTrait(*N, InsertsUnitDims))
    return unsqueezed(*N, *In);
  if (hasTrait(*N, PermutesDims))
    return transposed(*N, *In);
  if (hasTrait(*N, BroadcastsToShape))
    return broadcast(*N->getOperand(0), *N->getResult(0), *In);
  return std::nullopt;
}

/// \p V's value where the model computes it from constants, integers
/// compared exactly.
Tensor IndexFormReader::exact(const Value &V) {
  ConstantConeOptions Opts = bakedConeOptions();
  Opts.Eval.AllowInexact = false;
  return evaluateFromConstants(V, Opset, Opts, Memo);
}

std::optional<std::vector<int64_t>> IndexFormReader::ints(const Value *V) {
  Tensor T = V ? exact(*V) : Tensor();
  return T ? T.toInt64s() : std::nullopt;
}

/// A constant, checked on every element: `T[p] == T[0] + sum of
/// (T[e_a] - T[0]) * p[a]` over its axes of more than one element.
std::optional<IndexForm> IndexFormReader::readConstant(const Value &V) {
  Tensor T = exact(V);
  std::optional<std::vector<int64_t>> Vals = T ? T.toInt64s() : std::nullopt;
  std::vector<int64_t> TD = T ? T.getDims() : std::vector<int64_t>();
  if (!Vals || Vals->empty())
    return std::nullopt;
  int64_t Offset = (*Vals)[0];
  std::vector<int64_t> Coef(TD.size(), 0), Stride(TD.size(), 1);
  for (int A = int(TD.size()) - 2; A >= 0; --A)
    Stride[A] = Stride[A + 1] * TD[A + 1];
  for (unsigned A = 0; A < TD.size(); ++A)
    if (TD[A] > 1)
      Coef[A] = (*Vals)[Stride[A]] - Offset;
  for (int64_t E = 0; E < int64_t(Vals->size()); ++E) {
    int64_t Want = Offset;
    for (unsigned A = 0; A < TD.size(); ++A)
      Want += Coef[A] * ((E / Stride[A]) % TD[A]);
    if ((*Vals)[E] != Want)
      return std::nullopt;
  }
  IndexForm F{{}, DimExpr::constant(Offset)};
  for (int64_t C : Coef)
    F.Coef.push_back(DimExpr::constant(C));
  return F;
}

/// One number the analysis knows as a dim expression (a size read with
/// Shape and Gather: the rows of a flattened [B, S] are S apart).
std::optional<IndexForm> IndexFormReader::readShapeNumber(const Value &V) {
  const std::vector<DimExpr> *Data = DA.getData(V);
  const std::vector<DimExpr> *Dims = DA.getDims(V);
  if (!Data || !Dims || Data->size() != 1 || Dims->size() > 1 ||
      (*Data)[0].hasUnknown())
    return std::nullopt;
  return IndexForm{std::vector<DimExpr>(Dims->size(), DimExpr::constant(0)),
                   (*Data)[0]};
}

std::optional<IndexForm> IndexFormReader::readRange(const Node &N) {
  if (N.getNumOperands() != 3)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Start = ints(N.getOperand(0));
  std::optional<std::vector<int64_t>> Step = ints(N.getOperand(2));
  if (!Start || !Step || Start->size() != 1 || Step->size() != 1)
    return std::nullopt;
  return IndexForm{{DimExpr::constant((*Step)[0])},
                   DimExpr::constant((*Start)[0])};
}

std::optional<IndexForm> IndexFormReader::unsqueezed(const Node &N,
                                                     const IndexForm &In) {
  std::optional<std::vector<int64_t>> Axes =
      N.getNumOperands() > 1 ? ints(N.getOperand(1)) : N.getAttrInts("axes");
  if (!Axes)
    return std::nullopt;
  unsigned Rank = In.Coef.size() + Axes->size();
  std::vector<bool> Inserted(Rank, false);
  for (int64_t A : *Axes) {
    int64_t Norm = A < 0 ? A + Rank : A;
    if (Norm < 0 || Norm >= int64_t(Rank) || Inserted[Norm])
      return std::nullopt;
    Inserted[Norm] = true;
  }
  IndexForm Out{{}, In.Offset};
  for (unsigned A = 0, Kept = 0; A < Rank; ++A)
    Out.Coef.push_back(Inserted[A] ? DimExpr::constant(0) : In.Coef[Kept++]);
  return Out;
}

std::optional<IndexForm> IndexFormReader::transposed(const Node &N,
                                                     const IndexForm &In) {
  unsigned Rank = In.Coef.size();
  std::optional<std::vector<int64_t>> Perm = N.getAttrInts("perm");
  if (Perm && Perm->size() != Rank)
    return std::nullopt;
  IndexForm Out{{}, In.Offset};
  for (unsigned I = 0; I < Rank; ++I) {
    int64_t From = Perm ? (*Perm)[I] : int64_t(Rank - 1 - I);
    if (From < 0 || From >= int64_t(Rank))
      return std::nullopt;
    Out.Coef.push_back(In.Coef[From]);
  }
  return Out;
}

/// \p X's form in \p R, \p X broadcast to it (dims aligned from the right):
/// an axis that counts must keep its dim (the analysis proves them equal),
/// as one broadcast from 1 would repeat position 0.
std::optional<IndexForm> IndexFormReader::broadcast(const Value &X,
                                                    const Value &R,
                                                    const IndexForm &In) {
  const std::vector<DimExpr> *XD = DA.getDims(X);
  const std::vector<DimExpr> *RD = DA.getDims(R);
  if (!XD || !RD || XD->size() != In.Coef.size() || RD->size() < XD->size())
    return std::nullopt;
  unsigned Offset = RD->size() - XD->size();
  IndexForm Out{std::vector<DimExpr>(Offset, DimExpr::constant(0)),
                In.Offset};
  for (unsigned A = 0; A < XD->size(); ++A) {
    const DimExpr &D = (*XD)[A];
    bool Unit = isNumber(D, 1);
    if (!isNumber(In.Coef[A], 0) && !Unit &&
        (D.hasUnknown() || D != (*RD)[A + Offset]))
      return std::nullopt;
    Out.Coef.push_back(Unit ? DimExpr::constant(0) : In.Coef[A]);
  }
  return Out;
}

/// Add and Mul of two forms broadcast to the result: a sum adds them, a
/// product needs one side to be one number (a scale). Sub and Div read
/// nothing.
std::optional<IndexForm> IndexFormReader::combined(const Node &N,
                                                   unsigned Depth) {
  if (N.getNumOperands() != 2 || !N.getOperand(1))
    return std::nullopt;
  std::optional<IndexForm> Parts[2];
  for (unsigned I = 0; I < 2; ++I) {
    std::optional<IndexForm> F = read(*N.getOperand(I), Depth + 1);
    if (!F)
      return std::nullopt;
    Parts[I] = broadcast(*N.getOperand(I), *N.getResult(0), *F);
    if (!Parts[I])
      return std::nullopt;
  }
  const IndexForm &A = *Parts[0], &B = *Parts[1];
  auto IsNumber = [](const IndexForm &F) {
    return llvm::all_of(F.Coef,
                        [](const DimExpr &C) { return isNumber(C, 0); });
  };
  IndexForm Out{std::vector<DimExpr>(A.Coef.size(), DimExpr::constant(0)),
                DimExpr::constant(0)};
  if (hasTrait(N, Sums)) {
    Out.Offset = A.Offset + B.Offset;
    for (unsigned K = 0; K < Out.Coef.size(); ++K)
      Out.Coef[K] = A.Coef[K] + B.Coef[K];
    return Out;
  }
  if (hasTrait(N, Multiplies) && (IsNumber(A) || IsNumber(B))) {
    const IndexForm &Scale = IsNumber(A) ? A : B, &F = IsNumber(A) ? B : A;
    Out.Offset = F.Offset * Scale.Offset;
    for (unsigned K = 0; K < Out.Coef.size(); ++K)
      Out.Coef[K] = F.Coef[K] * Scale.Offset;
    return Out;
  }
  return std::nullopt;
}

/// Before:  G = GatherND(D, C)   D: bool[B,S], C: int64[3,1,1,10,2] with
///            C[b,0,0,s] = (b, s)  (torch's mask[:, None, None, :])
/// After:   G = Unsqueeze(D, [1, 2])
///
/// Index tuples baked at the old sizes that are each position's own
/// coordinates along axes of the old sizes of the data's dims, in the
/// data's order, with every other axis of size 1, read the data as it is:
/// the gather is an Unsqueeze, equal to it at the old sizes (checked on
/// every tuple) and at every other size. Other baked tuples are refused
/// naming the node and the constant.
std::optional<std::vector<TuplePiece>>
onnxopt::joinedTuplePieces(const Value &Tuples, const DimAnalysis &DA) {
  const Node *Join = Tuples.getDefiningNode();
  const std::vector<DimExpr> *TD = DA.getDims(Tuples);
  if (!Join || !hasTrait(*Join, Concatenates) || !TD || TD->empty() ||
      resolveAxis(Join->getAttrInt("axis", 0), int64_t(TD->size())) !=
          int64_t(TD->size()) - 1)
    return std::nullopt;
  std::vector<TuplePiece> Pieces;
  int64_t Component = 0;
  for (Value *Piece : Join->getOperands()) {
    const std::vector<DimExpr> *PD = Piece ? DA.getDims(*Piece) : nullptr;
    if (!PD || PD->empty() || !PD->back().isConstant())
      return std::nullopt;
    Pieces.push_back({Piece, Component, PD->back().getConstant()});
    Component += Pieces.back().Width;
  }
  return Pieces;
}

std::optional<RepeatedConstant>
onnxopt::repeatedConstant(Value &V, int64_t Opset,
                          llvm::DenseMap<const Value *, Tensor> &Memo) {
  Value *X = &V;
  Node *Reader = nullptr;
  for (int Step = 0; X && Step < 6; ++Step) {
    if (Tensor T = evaluateBaked(*X, Opset, Memo))
      return RepeatedConstant{T, Reader};
    Node *P = X->getDefiningNode();
    if (!P || P->getNumOperands() == 0 ||
        !(hasTrait(*P, InsertsUnitDims) || hasTrait(*P, BroadcastsToShape) ||
          hasTrait(*P, IdentityOp)))
      return std::nullopt;
    Reader = P;
    X = P->getOperand(0);
  }
  return std::nullopt;
}

/// Index tuples the graph joins along their last dim from pieces, some
/// computed from sizes, one of which repeats a constant counting 0..n-1
/// along one axis (torch's arange(n) at the traced size, expanded to the
/// grid): where n is the old size of the data dim its component picks and
/// that dim grows, the constant becomes Range(0, that dim) along the same
/// axis. A model frozen in its batch only and simplified keeps arange(1) =
/// [0] as the batch component of YOLOv5's in-place box decoding while its
/// rows and columns stay computed; read as every row, each row writes its
/// own boxes. The axis of a count of one is the one whose expanded dim is
/// the data's dim.
void DynamicRewrite::repairTupleRows(Node &N, DimAnalysis &DA, Rewriter &RW) {
  Value *Data = N.getOperand(0), *Tuples = N.getOperand(1);
  const std::vector<DimExpr> *DD = Data ? DA.getDims(*Data) : nullptr;
  std::optional<std::vector<TuplePiece>> Pieces =
      Tuples ? joinedTuplePieces(*Tuples, DA) : std::nullopt;
  if (!DD || !Pieces)
    return;
  std::vector<DimExpr> In = expressInInputs(DA, *Data, *DD, Old);
  int64_t Opset = RW.getModel().getOpsetVersion("");
  for (const TuplePiece &P : *Pieces) {
    int64_t Component = P.Component;
    if (P.Width != 1 || Component >= int64_t(In.size()) ||
        newSymbols(In[Component]).empty())
      continue;
    std::optional<int64_t> Rows = oldValue(In[Component]);
    std::optional<RepeatedConstant> Repeat =
        repeatedConstant(*P.V, Opset, BakedValues);
    if (!Rows || !Repeat || !Repeat->Reader)
      continue;
    const Tensor &C = Repeat->T;
    std::optional<std::vector<int64_t>> V = C.toInt64s();
    llvm::ArrayRef<int64_t> CD = C.getDimsRef();
    if (C.getElemType() != onnx::TensorProto::INT64 || !V ||
        int64_t(V->size()) != *Rows)
      continue;
    // The axis that holds the count: the one dim of C above 1, or for a
    // count of one the axis the grid expands to the data's dim.
    std::optional<unsigned> Axis;
    for (unsigned A = 0; A < CD.size(); ++A)
      if (CD[A] != 1)
        Axis = A;
    if (!Axis && *Rows == 1) {
      // The piece is the grid with the component's axis of 1 last; C
      // broadcasts to the grid aligned from the right.
      std::vector<DimExpr> Grid =
          expressInInputs(DA, *P.V, *DA.getDims(*P.V), Old);
      size_t G = Grid.size() - 1;
      int Matches = 0;
      for (unsigned A = 0; A < CD.size() && CD.size() <= G; ++A)
        if (Grid[G - CD.size() + A] == In[Component]) {
          Axis = A;
          ++Matches;
        }
      if (Matches != 1)
        Axis.reset();
    }
    if (!Axis)
      continue;
    unsigned Along = *Axis;
    bool Counts = true;
    for (int64_t K = 0; K < int64_t(V->size()) && Counts; ++K)
      Counts = (*V)[K] == K;
    if (!Counts)
      continue;
    Builder Bld(RW.getModel(), RW, *Repeat->Reader);
    RW.setOperand(Repeat->Reader, 0,
                  Bld.positionsAlong(Data, unsigned(Component), Along,
                                     unsigned(CD.size())));
    emitRemark(RW.getDiags(), N)
        << "component " << Component << " of the index tuples '"
        << Tuples->getName() << "' repeats arange(" << *Rows
        << "), the old size of " << In[Component].str()
        << ": rebuilt with Range, every row at every size";
    ++RepairCounts["counted tuple component"];
    Repaired = true;
  }
}

void DynamicRewrite::repairGatherND(Node &N, DimAnalysis &DA, Rewriter &RW) {
  if (N.getNumOperands() < 2 || !N.getOperand(0) || !N.getOperand(1))
    return;
  Value *Data = N.getOperand(0);
  const std::vector<DimExpr> *DD = DA.getDims(*Data);
  if (!DD)
    return;
  std::vector<DimExpr> In = expressInInputs(DA, *Data, *DD, Old);
  ConstantConeOptions Opts = bakedConeOptions();
  Opts.Eval.AllowInexact = false; // integer tuples, compared exactly
  Tensor T = evaluateFromConstants(
      *N.getOperand(1), RW.getModel().getOpsetVersion(""), Opts, BakedValues);
  if (!T) {
    if (const std::vector<DimExpr> *ID = DA.getDims(*N.getOperand(1));
        ID && !ID->empty() && ID->back().isConstant() &&
        ID->back().getConstant() >= 1 && N.getAttrInt("batch_dims", 0) >= 0 &&
        N.getAttrInt("batch_dims", 0) + ID->back().getConstant() <=
            int64_t(In.size()))
      repairIndexSizes(N, N.getAttrInt("batch_dims", 0),
                       ID->back().getConstant(), DA, RW);
    repairComputedGatherND(N, DA, In, RW);
    return;
  }
  std::optional<std::vector<int64_t>> Idx = T.toInt64s();
  std::vector<int64_t> TD = T.getDims();
  if (!Idx || TD.empty() || TD.back() < 1 ||
      TD.back() > static_cast<int64_t>(In.size()))
    return; // not valid indices
  unsigned K = TD.back(), Rank = TD.size() - 1;
  std::set<std::string> New;
  for (unsigned D = 0; D < K; ++D)
    addNewSymbols(In[D], New);
  if (New.empty())
    return;
  std::string What = "constant indices '" + N.getOperand(1)->getName().str() +
                     "' " + printInts(TD);
  auto Refuse = [&](const std::string &Why) {
    Problems.push_back({&N,
                        What + " " + Why +
                            ": nothing rebuilds them at other sizes; "
                            "re-export with dynamic axes, or keep " +
                            llvm::join(New, ", ") +
                            " static with allow-partial=true",
                        New});
  };
  if (N.getAttrInt("batch_dims", 0) != 0) {
    Refuse("index data with batch_dims != 0");
    return;
  }
  std::vector<unsigned> Axes;
  for (unsigned D = 0; D < K; ++D) {
    std::optional<int64_t> Size = oldValue(In[D]);
    std::optional<unsigned> A =
        Size ? positionAxis(*Idx, TD, D, *Size) : std::nullopt;
    if (!A || (!Axes.empty() && *A <= Axes.back())) {
      Refuse("are not, in component " + std::to_string(D) +
             ", each tuple's position along an axis of the old size of "
             "dim " +
             std::to_string(D) + " of '" + Data->getName().str() +
             "' (after the axes of the components before it)");
      return;
    }
    Axes.push_back(*A);
  }
  std::vector<int64_t> NewAxes;
  for (unsigned A = 0; A < Rank; ++A) {
    if (llvm::is_contained(Axes, A))
      continue;
    if (TD[A] != 1) {
      Refuse("repeat the data along axis " + std::to_string(A) + " (size " +
             std::to_string(TD[A]) + ")");
      return;
    }
    NewAxes.push_back(A);
  }
  if (!gatherAsUnsqueeze(N, NewAxes, RW)) {
    Refuse("gather the data as it is, but the result cannot replace the "
           "graph output");
    return;
  }
  emitRemark(RW.getDiags(), N)
      << What << " are the positions of '" << Data->getName()
      << "' in order: the gather is an Unsqueeze of it";
}

/// Replaces the GatherND \p N by its data with dims of 1 inserted at
/// \p NewAxes. False where the result cannot take its place.
bool DynamicRewrite::gatherAsUnsqueeze(Node &N, llvm::ArrayRef<int64_t> NewAxes,
                                       Rewriter &RW) {
  Value *Data = N.getOperand(0);
  RW.setInsertionPointBefore(&N);
  Value *R = Data;
  if (!NewAxes.empty()) {
    Graph &G = *N.getParentGraph();
    Node *U;
    if (RW.getModel().getOpsetVersion("") >= 13) {
      Value *AxesV = RW.createConstant(
          G, Tensor::fromInt64s("gather_axes", {int64_t(NewAxes.size())},
                                NewAxes));
      U = RW.createNode("Unsqueeze", {Data, AxesV}, 1, "", "gathered");
    } else {
      U = RW.createNode("Unsqueeze", {Data}, 1, "", "gathered");
      U->setAttr(Attribute::getInts("axes", NewAxes));
    }
    R = U->getResult(0);
    Stale.insert(R);
  }
  if (failed(RW.replaceAllUsesWith(N.getResult(0), R)))
    return false;
  ++RepairCounts["baked-position gather"];
  Repaired = true;
  return true;
}

/// Before:  I = Range(0, Squeeze(Shape<0,1>(M)), 1) unsqueezed to [B,1,1,1]
///          J = <int64[1,1,1,5] {0,1,2,3,4}>
///          C = Concat<axis=-1>(Unsqueeze(Expand(I, {1,1,1,5}), -1),
///                              Unsqueeze(Expand(J, ...), -1))
///          G = GatherND(M, C)                 M: bool[B,S], S was 5
/// After:   G = Unsqueeze(M, [1, 2])
///
/// The tuples of a static export whose batch stayed dynamic are computed in
/// the graph: torch's `mask[arange(B)[:, None, None, None], arange(S)]`,
/// the batch's positions counted by a Range and the length's baked. Each
/// component must hold its tuple's own position along an axis
/// (IndexFormReader: proved through the graph for the Range, checked on
/// every element for the constant), in the data's order, the axis the
/// size of the data's dim (equal dims, or equal at the old sizes), every
/// other axis of size 1. Anything else is left to the checks after the
/// repairs, as before.
void DynamicRewrite::repairComputedGatherND(Node &N, DimAnalysis &DA,
                                            llvm::ArrayRef<DimExpr> In,
                                            Rewriter &RW) {
  Value *IdxV = N.getOperand(1);
  const std::vector<DimExpr> *ID = DA.getDims(*IdxV);
  if (N.getAttrInt("batch_dims", 0) != 0 || !ID || ID->size() < 2 ||
      !ID->back().isConstant() || ID->back().getConstant() < 1 ||
      ID->back().getConstant() > int64_t(In.size()))
    return;
  unsigned K = ID->back().getConstant(), Rank = ID->size() - 1;
  std::vector<const Value *> Components;
  const Node *Joined = IdxV->getDefiningNode();
  if (Joined && hasTrait(*Joined, Concatenates) &&
      (Joined->getAttrInt("axis", 0) == -1 ||
       Joined->getAttrInt("axis", 0) == int64_t(Rank))) {
    for (unsigned I = 0; I < Joined->getNumOperands(); ++I)
      Components.push_back(Joined->getOperand(I));
  } else {
    Components.push_back(IdxV);
  }
  if (Components.size() != K)
    return;
  IndexFormReader Reader(DA, RW.getModel().getOpsetVersion(""), BakedValues);
  std::vector<DimExpr> IdxIn = expressInInputs(DA, *IdxV, *ID, Old);
  std::vector<unsigned> Axes;
  bool Grows = false;
  for (unsigned D = 0; D < K; ++D) {
    std::optional<IndexForm> F =
        Components[D] ? Reader.read(*Components[D]) : std::nullopt;
    std::optional<unsigned> A =
        F && F->Coef.size() == Rank + 1 ? F->positionAxis() : std::nullopt;
    // All zeros along a dim of old size 1 (arange(B) folded to [0] at batch
    // 1): the position along a unit axis, as constant tuples read it.
    if (!A && F && F->Coef.size() == Rank + 1 && F->isZero() &&
        oldValue(In[D]) == 1)
      for (unsigned X = Axes.empty() ? 0 : Axes.back() + 1; X < Rank && !A; ++X)
        if (isNumber(IdxIn[X], 1))
          A = X;
    if (!A || *A >= Rank || (!Axes.empty() && *A <= Axes.back()))
      return;
    const DimExpr &Counted = IdxIn[*A];
    std::optional<int64_t> Was = oldValue(In[D]);
    if (Counted.hasUnknown() ||
        (Counted != In[D] && (!Was || oldValue(Counted) != Was)))
      return;
    Grows |= Counted != In[D];
    Axes.push_back(*A);
  }
  std::vector<int64_t> NewAxes;
  for (unsigned A = 0; A < Rank; ++A) {
    if (llvm::is_contained(Axes, A))
      continue;
    if (!isNumber(IdxIn[A], 1))
      return;
    NewAxes.push_back(A);
  }
  if (!Grows || !gatherAsUnsqueeze(N, NewAxes, RW))
    return;
  emitRemark(RW.getDiags(), N)
      << "indices '" << IdxV->getName() << "' computed in the graph are the "
      << "positions of '" << N.getOperand(0)->getName()
      << "' in order: the gather is an Unsqueeze of it";
}

/// Axis \p Axis of a baked constant (dim \p FromRight from the right of
/// operand \p Operand of \p M) when \p M needs it at a partner's size
/// exactly and that partner's dim is a new input symbol of old size
/// \p Size; the input dim is read from the graph input.
std::optional<BakedAxis>
DynamicRewrite::exactAxis(const Node &M, unsigned Operand, unsigned FromRight,
                          unsigned Axis, int64_t Size, const DimAnalysis &DA) {
  std::optional<std::pair<unsigned, unsigned>> P =
      exactDimPartner(M, Operand, FromRight);
  if (!P || P->first >= M.getNumOperands() || !M.getOperand(P->first))
    return std::nullopt;
  const Value &Partner = *M.getOperand(P->first);
  const std::vector<DimExpr> *PD = DA.getDims(Partner);
  if (!PD || P->second >= PD->size())
    return std::nullopt;
  std::optional<BakedAxis> BA =
      inputSymbolAxis(Axis, computedDim(DA, Partner, *PD, P->second), Size);
  if (BA)
    BA->Exact = true;
  return BA;
}

/// Axis \p Axis of a baked constant sized by \p E where \p E is a new
/// input symbol of old size \p Size, its partner the graph input's dim.
std::optional<BakedAxis> DynamicRewrite::inputSymbolAxis(unsigned Axis,
                                                         const DimExpr &E,
                                                         int64_t Size) const {
  if (!E.isSymbol() || oldValue(E) != Size)
    return std::nullopt;
  auto [Input, Dim] = inputDimOf(E.getSymbol());
  if (!Input)
    return std::nullopt;
  BakedAxis BA;
  BA.Axis = Axis;
  BA.Partner = Input;
  BA.PartnerAxis = Dim;
  BA.IsInputSymbol = true;
  BA.DimText = E.getSymbol().str();
  BA.Expr = E;
  return BA;
}

/// The constant operands of \p N whose dims \p N needs at another
/// operand's size exactly: each axis whose partner is a new input symbol
/// at the axis's old size is rebuilt and expanded to it. RotaryEmbedding's
/// caches at batch 1 ([1,S,d], computed from constants) become [B,S,d];
/// an Attention's constant causal mask [1,1,S,S] is rebuilt in S.
void DynamicRewrite::repairExactOperands(Node &N, DimAnalysis &DA,
                                         Rewriter &RW) {
  int Opset = RW.getModel().getOpsetVersion("");
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    Value *C = N.getOperand(I);
    Tensor T = C ? evaluateBaked(*C, Opset, BakedValues) : Tensor();
    if (!T)
      continue;
    const std::vector<int64_t> &Dims = T.getDims();
    BakedConstant B;
    B.User = &N;
    B.Operand = I;
    B.T = T;
    std::set<std::string> New;
    for (unsigned A = 0; A < Dims.size(); ++A)
      if (std::optional<BakedAxis> BA =
              exactAxis(N, I, Dims.size() - A, A, Dims[A], DA)) {
        New.insert(BA->DimText);
        B.Axes.push_back(*BA);
      }
    if (B.Axes.empty())
      continue;
    if (Problem P = expandBakedOperand(
            B, RW, "the dims " + N.getOpType().str() + " needs exactly",
            "expanded constant");
        !P.Message.empty())
      Problems.push_back({&N,
                          P.Message + "; re-export with dynamic axes, or keep " +
                              llvm::join(New, ", ") +
                              " static with allow-partial=true",
                          New});
  }
}

/// The size an axis of a baked constant must have where its user's result
/// meets other operands further on: `And(mask[1,1,10,10], pad[B,1,1,S])`
/// says nothing about axis 2, the `Add(scores[B,H,S,S], ...)` after a Where
/// does. Follows the result through elementwise and shape-preserving nodes
/// (axes aligned from the right, as broadcasting aligns them) to the first
/// operand whose dim there is a new input symbol with the axis's size at
/// the old sizes; that input dim is read from the graph input, which every
/// node can see.
std::optional<BakedAxis>
DynamicRewrite::downstreamAxis(const Node &User, unsigned Axis, unsigned Rank,
                               int64_t Size, const DimAnalysis &DA) {
  // Each value with the place of the axis in it, counted from the right.
  std::vector<std::pair<const Value *, unsigned>> Work{
      {User.getResult(0), Rank - Axis}};
  llvm::DenseSet<const Value *> Seen{User.getResult(0)};
  for (size_t I = 0; I < Work.size() && I < 64; ++I) {
    unsigned FromRight = Work[I].second;
    for (const Use &U : Work[I].first->getUses()) {
      const Node *M = U.User;
      // Indices of a gather (position ids looking up their table): the
      // axis goes on in the result, before the table's dims after `axis`.
      if (std::optional<unsigned> Shifted =
              M ? gatheredAxis(*M, U.Index, FromRight, DA) : std::nullopt) {
        const Value *R = M->getResult(0);
        if (Seen.insert(R).second)
          Work.push_back({R, *Shifted});
        continue;
      }
      // An op that needs the dim at its partner's size exactly (an
      // Attention's mask rows are Q's sequence): the search ends there.
      if (M && exactDimPartner(*M, U.Index, FromRight)) {
        if (std::optional<BakedAxis> BA =
                exactAxis(*M, U.Index, FromRight, Axis, Size, DA))
          return BA;
        continue;
      }
      // Expand broadcasts its data as an elementwise op does (the padding
      // mask and-ed with a constant, then expanded to [B,1,S,S]).
      // A softmax or a cumulative sum along the cut dim would see one
      // element instead of many: only ops that read element by element.
      if (!M || !M->isOnnxDomain() || M->getNumResults() != 1 ||
          hasTrait(*M, MixesAlongDims) ||
          !(hasTrait(*M, ElementwiseBroadcasting) ||
            hasTrait(*M, ShapePreserving) ||
            (hasTrait(*M, BroadcastsToShape) && U.Index == 0)))
        continue;
      for (const Value *P : M->getOperands()) {
        const std::vector<DimExpr> *PD = P ? DA.getDims(*P) : nullptr;
        if (!PD || P == Work[I].first || PD->size() < FromRight)
          continue;
        DimExpr E = computedDim(DA, *P, *PD, PD->size() - FromRight);
        if (std::optional<BakedAxis> BA = inputSymbolAxis(Axis, E, Size))
          return BA;
        if (std::optional<BakedAxis> BA =
                earlierDimAxis(User, Axis, E, Size, DA))
          return BA;
      }
      const Value *R = M->getResult(0);
      if (R && Seen.insert(R).second)
        Work.push_back({R, FromRight});
    }
  }
  return std::nullopt;
}

/// Axis \p Axis of a baked constant read by \p User where further on it
/// meets a dim \p E computed from the new symbols (not one of them: the
/// frames of an audio front-end, floor(samples/320)-1) of old size \p Size:
/// a value computed before \p User with that dim is the partner, its dim
/// read where the rebuild needs it. None where no earlier value has it.
std::optional<BakedAxis> DynamicRewrite::earlierDimAxis(const Node &User,
                                                        unsigned Axis,
                                                        const DimExpr &E,
                                                        int64_t Size,
                                                        const DimAnalysis &DA) {
  if (E.isConstant() || E.isSymbol() || E.hasUnknown() ||
      !DA.isInputExpressible(E) || oldValue(E) != Size)
    return std::nullopt;
  // One walk of the graph per expression and round: a static model's
  // masks may each ask for the same frames.
  const Graph *G = User.getParentGraph();
  EarlierDims &Index = EarlierDimsOf[G];
  if (Index.Place.empty()) {
    unsigned Place = 0;
    for (const Node &N : G->getNodes())
      Index.Place[&N] = Place++;
  }
  auto [It, New] = Index.First.try_emplace(E.str());
  for (const Node &N : G->getNodes()) {
    if (!New || It->second)
      break;
    auto Place = Index.Place.find(&N);
    if (Place == Index.Place.end())
      continue; // added since: its place is unknown
    for (unsigned R = 0; R < N.getNumResults() && !It->second; ++R) {
      Value *V = N.getResult(R);
      const std::vector<DimExpr> *Dims = V ? DA.getDims(*V) : nullptr;
      for (unsigned K = 0; Dims && K < Dims->size() && !It->second; ++K)
        if (computedDim(DA, *V, *Dims, K) == E)
          It->second = std::make_tuple(Place->second, V, K);
    }
  }
  // Nodes a repair added this round have no place: nothing is before them.
  auto At = Index.Place.find(&User);
  if (!It->second || At == Index.Place.end() ||
      std::get<0>(*It->second) >= At->second)
    return std::nullopt;
  BakedAxis BA;
  BA.Axis = Axis;
  BA.Partner = std::get<1>(*It->second);
  BA.PartnerAxis = std::get<2>(*It->second);
  BA.DimText = E.str();
  BA.Expr = E;
  return BA;
}

/// Where axis \p FromRight (from the right) of the indices (operand
/// \p Operand) of a Gather or GatherElements \p M is in its result: a
/// Gather puts the indices' dims in place of the data's dim `axis`, a
/// GatherElements keeps them. Null for any other use.
std::optional<unsigned>
onnxopt::makedynamic::gatheredAxis(const Node &M, unsigned Operand,
                                   unsigned FromRight, const DimAnalysis &DA) {
  if (Operand != 1 || !hasTrait(M, GathersAlongAxis) ||
      M.getNumResults() != 1 || !M.getOperand(0) || !M.getOperand(1) ||
      !M.getResult(0))
    return std::nullopt;
  const std::vector<DimExpr> *Data = DA.getDims(*M.getOperand(0));
  const std::vector<DimExpr> *Idx = DA.getDims(*M.getOperand(1));
  const std::vector<DimExpr> *Res = DA.getDims(*M.getResult(0));
  if (!Data || !Idx || !Res || Data->empty() || FromRight > Idx->size())
    return std::nullopt;
  int64_t Rank = Data->size();
  std::optional<int64_t> At = resolveAxis(M.getAttrInt("axis", 0), Rank);
  if (!At)
    return std::nullopt;
  if (Res->size() == Data->size() - 1 + Idx->size())
    return FromRight + unsigned(Rank - *At - 1);
  if (Res->size() == Idx->size() && Data->size() == Idx->size())
    return FromRight;
  return std::nullopt;
}
