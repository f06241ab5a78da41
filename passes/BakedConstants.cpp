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
#include "onnx/onnx_pb.h"
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/ConstantPatterns.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

using namespace onnxopt;

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
  /// Dim \p A of \p P as a scalar (Range's bounds are scalars).
  Value *dimScalar(Value *P, unsigned A) {
    Node *N = RW.createNode("Gather", {shapeOf(P), ints("dim_index", {}, {A})},
                            1, "", "baked_dim");
    N->setAttr(Attribute::getInt("axis", 0));
    return N->getResult(0);
  }
  /// Dim \p A of \p P as a one-element vector (Slice's ends).
  Value *dimVector(Value *P, unsigned A) {
    Node *N = RW.createNode("Gather", {shapeOf(P), ints("dim_index", {1}, {A})},
                            1, "", "baked_dim");
    N->setAttr(Attribute::getInt("axis", 0));
    return N->getResult(0);
  }
  /// 0, 1, ..., n-1 along \p Axis of a rank-\p Rank int64 tensor (1 on the
  /// other axes), n being dim \p PA of \p P.
  Value *indicesAlong(Value *P, unsigned PA, unsigned Axis, unsigned Rank) {
    if (!Zero) {
      Zero = ints("zero", {}, {0});
      One = ints("one", {}, {1});
    }
    Value *R = op("Range", {Zero, dimScalar(P, PA), One}, "baked_index");
    std::vector<int64_t> Shape(Rank, 1);
    Shape[Axis] = -1;
    return op("Reshape", {R, ints("index_shape", {int64_t(Rank)}, Shape)},
              "baked_index");
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

Value *buildToeplitz(const BakedConstant &B, const ToeplitzForm &F,
                     unsigned Row, unsigned Col, Builder &Bld) {
  unsigned Rank = B.T.getDims().size();
  const BakedAxis &R = axisInfo(B, Row), &C = axisInfo(B, Col);
  Value *I = Bld.indicesAlong(R.Partner, R.PartnerAxis, Row, Rank);
  Value *J = Bld.indicesAlong(C.Partner, C.PartnerAxis, Col, Rank);
  Value *D = Bld.op("Sub", {I, J}, "baked_mask");
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

} // namespace

RebuildResult onnxopt::rebuildBakedConstant(const BakedConstant &B, Model &M,
                                            Rewriter &RW) {
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
    Builder Bld(M, RW, User);
    return Use(buildAffine(B, *F, Bld), "affine constant",
               What + " is affine in its indices along " + axesText(Varying) +
                   ": rebuilt with Range at " + sizesText(B, Axes));
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
    if (F) {
      Builder Bld(M, RW, User);
      return Use(
          buildToeplitz(B, *F, Varying[0], Varying[1], Bld), "mask of i - j",
          What + " depends only on i - j along " + axesText(Varying) + " (" +
              std::to_string(F->Below + F->Above + 1) +
              " distinct diagonals): rebuilt at " + sizesText(B, Varying));
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
      return Use(V, "slice of a longer table",
                 What + " is the first rows of '" + Big->getName().str() +
                     "' " + describeTensor(Big->getInitializer()) +
                     ": sliced from it to " + sizesText(B, Varying));
    }
    Value *Data = Still.empty() ? Operand : Bld.constant(Reduced);
    Result = Use(Bld.prefix(Data, Axis, A.Partner, A.PartnerAxis),
                 "slice of a baked table",
                 What +
                     " is no prefix of a longer table in the model: kept "
                     "and sliced to " +
                     sizesText(B, Varying) + ", so " + A.DimText +
                     " <= " + std::to_string(B.T.getDims()[Axis]));
    Result.Bounds = true;
    return Result;
  }
  Result.Message =
      What + " has at " + axesText(Varying) + " the old size of " +
      sizesText(B, Varying) +
      ", and its values there are neither the same along the dim, affine "
      "in the index, a function of i - j, nor a table indexed by an input "
      "symbol: nothing rebuilds it at other sizes";
  return Result;
}
