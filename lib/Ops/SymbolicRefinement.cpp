//===- SymbolicRefinement.cpp - Symbolic rules on top of ONNX's inference -===//
//
// Dims here are ONNX's: a number, a symbol or unknown. A product of dims is
// kept as a monomial (a coefficient times a multiset of symbols), which is
// all Reshape's element count needs: [batch,4,4] holds 16*batch elements,
// [batch,-1,8] fixes 8*batch of them, so -1 is 2 wherever the Reshape runs.
//
//===----------------------------------------------------------------------===//
#include "SymbolicRefinement.h"
#include "onnxopt/IR/ElementType.h"
#include "onnxopt/Ops/OpFacts.h"
#include "llvm/ADT/SmallVector.h"
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <onnx/defs/tensor_proto_util.h>
#include <optional>
#include <string>
#include <vector>

using namespace onnxopt;
using onnx::TensorProto;
using onnx::TensorShapeProto;
using Dimension = onnx::TensorShapeProto_Dimension;

namespace {

/// Coef * product of Syms (a multiset, sorted).
struct Monomial {
  int64_t Coef = 1;
  std::vector<std::string> Syms;
};

/// Multiplies \p M by \p D; false when D is unknown, negative, or the
/// coefficient overflows.
bool multiply(Monomial &M, const Dimension &D) {
  if (D.has_dim_value()) {
    int64_t V = D.dim_value();
    return V >= 0 && !__builtin_mul_overflow(M.Coef, V, &M.Coef);
  }
  if (!D.has_dim_param() || D.dim_param().empty())
    return false;
  M.Syms.insert(std::upper_bound(M.Syms.begin(), M.Syms.end(), D.dim_param()),
                D.dim_param());
  return true;
}

/// \p Num / \p Den as a single dim when the division is exact as
/// polynomials and the quotient is a number or one symbol.
std::optional<Dimension> divide(const Monomial &Num, const Monomial &Den) {
  // A zero denominator: the Reshape fails at run time, nothing to claim.
  if (Den.Coef == 0 || Num.Coef % Den.Coef != 0)
    return std::nullopt;
  std::vector<std::string> Rest;
  if (!std::includes(Num.Syms.begin(), Num.Syms.end(), Den.Syms.begin(),
                     Den.Syms.end()))
    return std::nullopt;
  std::set_difference(Num.Syms.begin(), Num.Syms.end(), Den.Syms.begin(),
                      Den.Syms.end(), std::back_inserter(Rest));
  int64_t Coef = Num.Coef / Den.Coef;
  Dimension D;
  if (Coef == 0 || Rest.empty()) {
    D.set_dim_value(Coef);
    return D;
  }
  if (Coef != 1 || Rest.size() != 1)
    return std::nullopt;
  D.set_dim_param(Rest.front());
  return D;
}

bool isIntegerType(const onnx::TypeProto *T) {
  if (!T || !T->has_tensor_type())
    return false;
  int32_t E = T->tensor_type().elem_type();
  return E == TensorProto::INT64 || E == TensorProto::INT32;
}

std::optional<TensorShapeProto> targetContents(onnx::InferenceContext &Ctx);

/// Targets longer than this are left to ONNX (no tensor has such a rank;
/// a malformed model must not make us build millions of dims).
constexpr int64_t kMaxTargetLength = 64;

/// The contents of Reshape's target as dims: constant, propagated, or
/// (length known, contents not) unknown entries.
std::optional<TensorShapeProto> targetOf(onnx::InferenceContext &Ctx) {
  std::optional<TensorShapeProto> S = targetContents(Ctx);
  if (!S || S->dim_size() > kMaxTargetLength)
    return std::nullopt;
  return S;
}

std::optional<TensorShapeProto> targetContents(onnx::InferenceContext &Ctx) {
  if (const TensorProto *T = Ctx.getInputData(1)) {
    if (T->dims_size() != 1)
      return std::nullopt;
    TensorShapeProto S;
    if (T->data_type() == TensorProto::INT64) {
      for (int64_t V : onnx::ParseData<int64_t>(T))
        S.add_dim()->set_dim_value(V);
    } else {
      return std::nullopt;
    }
    return S;
  }
  if (const TensorShapeProto *P = Ctx.getSymbolicInput(1))
    return *P;
  const onnx::TypeProto *T = Ctx.getInputType(1);
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape() ||
      T->tensor_type().shape().dim_size() != 1 ||
      !T->tensor_type().shape().dim(0).has_dim_value() ||
      T->tensor_type().shape().dim(0).dim_value() > kMaxTargetLength)
    return std::nullopt;
  TensorShapeProto S;
  for (int64_t I = 0, E = T->tensor_type().shape().dim(0).dim_value(); I < E;
       ++I)
    S.add_dim();
  return S;
}

/// The integer contents of input \p I: a constant (int64 or int32, rank 0
/// or 1) or what data propagation computed (numbers, symbols, unknowns).
std::optional<TensorShapeProto> dataOf(onnx::InferenceContext &Ctx, size_t I) {
  if (I >= Ctx.getNumInputs())
    return std::nullopt;
  if (const TensorProto *T = Ctx.getInputData(I)) {
    if (T->dims_size() > 1)
      return std::nullopt;
    TensorShapeProto S;
    if (T->data_type() == TensorProto::INT64)
      for (int64_t V : onnx::ParseData<int64_t>(T))
        S.add_dim()->set_dim_value(V);
    else if (T->data_type() == TensorProto::INT32)
      for (int32_t V : onnx::ParseData<int32_t>(T))
        S.add_dim()->set_dim_value(V);
    else
      return std::nullopt;
    return S;
  }
  if (const TensorShapeProto *P = Ctx.getSymbolicInput(I))
    return *P;
  return std::nullopt;
}

/// The numbers of input \p I, when every element is one.
std::optional<std::vector<int64_t>> numbersOf(onnx::InferenceContext &Ctx,
                                              size_t I) {
  std::optional<TensorShapeProto> S = dataOf(Ctx, I);
  if (!S)
    return std::nullopt;
  std::vector<int64_t> V;
  for (const Dimension &D : S->dim()) {
    if (!D.has_dim_value())
      return std::nullopt;
    V.push_back(D.dim_value());
  }
  return V;
}

bool sameSymbol(const Dimension &A, const Dimension &B);

bool isUnknown(const Dimension &D) {
  return !D.has_dim_value() && (!D.has_dim_param() || D.dim_param().empty());
}

/// The length of Slice's result along an axis of length \p D, from \p Start
/// to \p End by \p Step, when it is proven at every value of the symbols.
std::optional<Dimension> sliceLength(const Dimension &D, const Dimension &Start,
                                     const Dimension &End, int64_t Step) {
  if (Step == 0 || !Start.has_dim_value())
    return std::nullopt;
  int64_t S = Start.dim_value();
  if (D.has_dim_value() && End.has_dim_value()) {
    std::optional<SliceAxis> Taken =
        resolveSliceAxis(D.dim_value(), S, End.dim_value(), Step);
    if (!Taken)
      return std::nullopt;
    Dimension R;
    R.set_dim_value(Taken->Count);
    return R;
  }
  if (S != 0 || Step != 1)
    return std::nullopt;
  // From 0 to an end that is the dim itself, or past any dim a tensor can
  // have (torch writes INT64_MAX for `x[:, a:]`): the whole dim.
  if (sameSymbol(End, D) ||
      (End.has_dim_value() && isSliceEndPastAnyDim(End.dim_value())))
    return D;
  // `table[:, :n]` with n a symbol and the dim a number C: the length is
  // min(n, C), which a single dim cannot say. Inference leaves it unknown
  // (a fresh symbol); the dim algebra gives it n together with the
  // condition n <= C (DimAnalysis' Slice rule, DimConstraints.h), so
  // unify-dims names it n and the shape passes check the bound.
  return std::nullopt;
}

bool sameSymbol(const Dimension &A, const Dimension &B) {
  return A.has_dim_param() && B.has_dim_param() && !A.dim_param().empty() &&
         A.dim_param() == B.dim_param();
}

/// The entry at \p I of the target as the output dim it certainly is, for
/// the element count: a positive number; a 0 copying the input's dim; a
/// symbol with allowzero (it is the dim); without allowzero a symbol only
/// when the input has the same symbol there (a 0 would copy that same dim)
/// or has no dim there (a 0 would fail).
/// ONNX itself writes every symbol of the target as the dim; a symbol that
/// may be 0 and copy another dim is not built upon here.
std::optional<Dimension> provenEntry(const Dimension &T, const Dimension *In,
                                     bool AllowZero) {
  if (T.has_dim_value()) {
    if (T.dim_value() > 0 || (T.dim_value() == 0 && AllowZero))
      return T;
    if (T.dim_value() == 0 && In)
      return *In;
    return std::nullopt;
  }
  if (!T.has_dim_param() || T.dim_param().empty())
    return std::nullopt;
  // Past the input's rank a 0 has no dim to copy and the Reshape fails:
  // where it runs, the symbol there is the dim.
  if (AllowZero || !In || sameSymbol(T, *In))
    return T;
  return std::nullopt;
}

} // namespace

void detail::refineReshape(onnx::InferenceContext &Ctx, bool AllowZero) {
  if (Ctx.getNumInputs() < 2 || Ctx.getNumOutputs() < 1)
    return;
  std::optional<TensorShapeProto> Target = targetOf(Ctx);
  if (!Target)
    return;
  onnx::TypeProto_Tensor &Out = *Ctx.getOutputType(0)->mutable_tensor_type();
  if (Out.has_shape() && Out.shape().dim_size() != Target->dim_size())
    return; // ONNX said otherwise; not ours to overrule
  if (!Out.has_shape()) {
    // The rank is the target's length, whatever its contents.
    TensorShapeProto &S = *Out.mutable_shape();
    for (int I = 0; I < Target->dim_size(); ++I)
      S.add_dim();
  }
  TensorShapeProto &OutShape = *Out.mutable_shape();

  const onnx::TypeProto *InType = Ctx.getInputType(0);
  if (!InType || !InType->has_tensor_type() ||
      !InType->tensor_type().has_shape())
    return;
  const TensorShapeProto &In = InType->tensor_type().shape();
  int Infer = -1;
  Monomial Others;
  for (int I = 0; I < Target->dim_size(); ++I) {
    const Dimension &T = Target->dim(I);
    if (T.has_dim_value() && T.dim_value() == -1) {
      if (Infer >= 0)
        return;
      Infer = I;
      continue;
    }
    std::optional<Dimension> D =
        provenEntry(T, I < In.dim_size() ? &In.dim(I) : nullptr, AllowZero);
    if (!D)
      return;
    // A proven entry is the output dim, whether or not ONNX wrote it.
    if (isUnknown(OutShape.dim(I)))
      *OutShape.mutable_dim(I) = *D;
    if (!multiply(Others, *D))
      return;
  }
  if (Infer < 0)
    return;
  const Dimension &Slot = OutShape.dim(Infer);
  if (Slot.has_dim_value() ||
      (Slot.has_dim_param() && !Slot.dim_param().empty()))
    return;
  Monomial Total;
  for (const Dimension &D : In.dim())
    if (!multiply(Total, D))
      return;
  // Total = Q * Others as polynomials; the runtime computes the -1 entry
  // as Total / Others, and fails when Others is 0: the entry is Q wherever
  // the Reshape runs.
  if (std::optional<Dimension> Q = divide(Total, Others))
    *OutShape.mutable_dim(Infer) = *Q;
}

void detail::refineSlice(onnx::InferenceContext &Ctx) {
  if (Ctx.getNumInputs() < 3 || Ctx.getNumOutputs() < 1)
    return;
  const onnx::TypeProto *InType = Ctx.getInputType(0);
  if (!InType || !InType->has_tensor_type() ||
      !InType->tensor_type().has_shape())
    return;
  const TensorShapeProto &In = InType->tensor_type().shape();
  int Rank = In.dim_size();
  onnx::TypeProto_Tensor &Out = *Ctx.getOutputType(0)->mutable_tensor_type();
  if (Out.has_shape() && Out.shape().dim_size() != Rank)
    return;
  // Slice keeps the rank, whatever its starts and ends.
  bool Fresh = !Out.has_shape();
  TensorShapeProto &OutShape = *Out.mutable_shape();
  if (Fresh)
    for (int I = 0; I < Rank; ++I)
      OutShape.add_dim();

  std::optional<TensorShapeProto> Starts = dataOf(Ctx, 1),
                                  Ends = dataOf(Ctx, 2);
  bool HasAxes = Ctx.getNumInputs() > 3 && Ctx.getInputType(3);
  bool HasSteps = Ctx.getNumInputs() > 4 && Ctx.getInputType(4);
  std::optional<std::vector<int64_t>> Axes, Steps;
  if (HasAxes && !(Axes = numbersOf(Ctx, 3)))
    return; // which axes are cut is unknown
  if (HasSteps && !(Steps = numbersOf(Ctx, 4)))
    Steps.reset();
  size_t Count = Starts ? Starts->dim_size() : Axes ? Axes->size() : 0;
  if (!Axes) {
    if (!Starts)
      return;
    Axes.emplace();
    for (size_t I = 0; I < Count; ++I)
      Axes->push_back(I);
  }
  std::vector<bool> Cut(Rank, false);
  for (size_t I = 0; I < Axes->size(); ++I) {
    int64_t A = (*Axes)[I];
    if (A < -Rank || A >= Rank)
      return;
    A = A < 0 ? A + Rank : A;
    Cut[A] = true;
    if (!isUnknown(OutShape.dim(A)) || !Starts || !Ends ||
        Starts->dim_size() != Ends->dim_size() ||
        I >= static_cast<size_t>(Starts->dim_size()) ||
        (HasSteps && (!Steps || I >= Steps->size())))
      continue;
    int64_t Step = HasSteps ? (*Steps)[I] : 1;
    if (std::optional<Dimension> L =
            sliceLength(In.dim(A), Starts->dim(I), Ends->dim(I), Step))
      *OutShape.mutable_dim(A) = *L;
  }
  // The axes not cut keep their dims.
  for (int A = 0; A < Rank; ++A)
    if (!Cut[A] && isUnknown(OutShape.dim(A)))
      *OutShape.mutable_dim(A) = In.dim(A);
}

bool detail::propagateIntegerDiv(onnx::DataPropagationContext &Ctx) {
  if (Ctx.getNumInputs() != 2 || Ctx.getNumOutputs() != 1 ||
      !isIntegerType(Ctx.getInputType(0)) ||
      !isIntegerType(Ctx.getInputType(1)))
    return false;
  const TensorShapeProto *A = Ctx.getInputData(0);
  const TensorShapeProto *B = Ctx.getInputData(1);
  if (!A || !B)
    return false;
  int LA = A->dim_size(), LB = B->dim_size();
  if (LA != LB && LA != 1 && LB != 1)
    return false;
  TensorShapeProto R;
  bool Any = false;
  for (int I = 0, E = std::max(LA, LB); I < E; ++I) {
    const Dimension &X = A->dim(LA == 1 ? 0 : I);
    const Dimension &Y = B->dim(LB == 1 ? 0 : I);
    Dimension *D = R.add_dim();
    if (Y.has_dim_value() && Y.dim_value() == 1) {
      *D = X;
      Any |= X.has_dim_value() || X.has_dim_param();
    } else if (X.has_dim_value() && Y.has_dim_value() && X.dim_value() >= 0 &&
               Y.dim_value() > 0) {
      D->set_dim_value(X.dim_value() / Y.dim_value());
      Any = true;
    }
  }
  if (!Any)
    return false;
  Ctx.addOutputData(0, std::move(R));
  return true;
}

//===----------------------------------------------------------------------===//
// Data propagation ONNX 1.12 lacks
//===----------------------------------------------------------------------===//
//
// Shape data holds numbers, symbols and unknowns. Its symbols all come from
// Shape (dims, passed on by Gather, Concat, Cast, ...; no rule here or in
// ONNX turns arithmetic on a symbol into a symbol), so a symbol is >= 0.
// Booleans (Equal's results) are held as the numbers 0 and 1.

namespace {

/// Limits the vectors built here: shape data is a tensor's rank long.
constexpr int kMaxDataLength = 64;

bool isKnown(const Dimension &D) {
  return D.has_dim_value() || (D.has_dim_param() && !D.dim_param().empty());
}

/// The length numpy broadcasting of 1-D data of lengths \p Lens gives, or
/// -1 when they do not broadcast.
int broadcastLength(std::initializer_list<int> Lens) {
  int Len = 1;
  for (int L : Lens) {
    if (L == 1 || L == Len)
      continue;
    if (Len != 1)
      return -1;
    Len = L;
  }
  return Len;
}

const Dimension &elementAt(const TensorShapeProto &S, int I) {
  return S.dim(S.dim_size() == 1 ? 0 : I);
}

/// Equal on two elements: 1, 0, or unknown (std::nullopt).
std::optional<int64_t> equalElements(const Dimension &A, const Dimension &B) {
  if (A.has_dim_value() && B.has_dim_value())
    return A.dim_value() == B.dim_value();
  if (sameSymbol(A, B))
    return 1;
  // A symbol is a dim, never negative: `shape == -1` (torch's Expand
  // target check) is false for it.
  if (A.has_dim_param() && !A.dim_param().empty() && B.has_dim_value() &&
      B.dim_value() < 0)
    return 0;
  if (B.has_dim_param() && !B.dim_param().empty() && A.has_dim_value() &&
      A.dim_value() < 0)
    return 0;
  return std::nullopt;
}

/// The rank and dims of output \p I as inferred, when it has a shape.
const TensorShapeProto *inferredShape(onnx::DataPropagationContext &Ctx,
                                      size_t I) {
  const onnx::TypeProto *T = Ctx.getOutputType(I);
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
    return nullptr;
  return &T->tensor_type().shape();
}

} // namespace

bool detail::propagateReshape(onnx::DataPropagationContext &Ctx) {
  if (Ctx.getNumInputs() < 2 || Ctx.getNumOutputs() != 1)
    return false;
  const TensorShapeProto *In = Ctx.getInputData(0);
  const TensorShapeProto *Out = inferredShape(Ctx, 0);
  if (!In || !Out || Out->dim_size() > 1)
    return false;
  // Reshape keeps the elements and their order: data of rank <= 1 reshaped
  // to rank <= 1 (`shape.reshape(-1)`) holds the same values.
  if (Out->dim_size() == 1 && Out->dim(0).has_dim_value() &&
      Out->dim(0).dim_value() != In->dim_size())
    return false;
  if (Out->dim_size() == 0 && In->dim_size() != 1)
    return false;
  Ctx.addOutputData(0, TensorShapeProto(*In));
  return true;
}

bool detail::propagateConstantOfShape(onnx::DataPropagationContext &Ctx) {
  if (Ctx.getNumInputs() != 1 || Ctx.getNumOutputs() != 1)
    return false;
  const TensorShapeProto *Shape = Ctx.getInputData(0);
  if (!Shape || Shape->dim_size() > 1)
    return false;
  int64_t Count = 1;
  if (Shape->dim_size() == 1) {
    if (!Shape->dim(0).has_dim_value() || Shape->dim(0).dim_value() < 0 ||
        Shape->dim(0).dim_value() > kMaxDataLength)
      return false;
    Count = Shape->dim(0).dim_value();
  }
  // The fill value is an int64 or int32 one-element tensor; the default
  // (float 0) is not shape data.
  const onnx::AttributeProto *A = Ctx.getAttribute("value");
  if (!A || !A->has_t())
    return false;
  const TensorProto &T = A->t();
  int64_t Fill;
  if (T.data_type() == TensorProto::INT64) {
    std::vector<int64_t> V = onnx::ParseData<int64_t>(&T);
    if (V.size() != 1)
      return false;
    Fill = V.front();
  } else if (T.data_type() == TensorProto::INT32) {
    std::vector<int32_t> V = onnx::ParseData<int32_t>(&T);
    if (V.size() != 1)
      return false;
    Fill = V.front();
  } else {
    return false;
  }
  TensorShapeProto R;
  for (int64_t I = 0; I < Count; ++I)
    R.add_dim()->set_dim_value(Fill);
  Ctx.addOutputData(0, std::move(R));
  return true;
}

bool detail::propagateEqual(onnx::DataPropagationContext &Ctx) {
  if (Ctx.getNumInputs() != 2 || Ctx.getNumOutputs() != 1)
    return false;
  const TensorShapeProto *A = Ctx.getInputData(0);
  const TensorShapeProto *B = Ctx.getInputData(1);
  if (!A || !B)
    return false;
  int Len = broadcastLength({A->dim_size(), B->dim_size()});
  if (Len < 0 || Len > kMaxDataLength)
    return false;
  TensorShapeProto R;
  bool Any = false;
  for (int I = 0; I < Len; ++I) {
    Dimension *D = R.add_dim();
    if (std::optional<int64_t> E =
            equalElements(elementAt(*A, I), elementAt(*B, I))) {
      D->set_dim_value(*E);
      Any = true;
    }
  }
  if (!Any)
    return false;
  Ctx.addOutputData(0, std::move(R));
  return true;
}

detail::CastValues detail::castValues(int64_t To) {
  switch (static_cast<ElementType>(To)) {
  case ElementType::Int32:
  case ElementType::Int64:
  case ElementType::Float:
  case ElementType::Double:
    return CastValues::Kept;
  case ElementType::UInt32:
  case ElementType::UInt64:
    return CastValues::KeptIfNotNegative;
  case ElementType::Bool:
    return CastValues::AsBool;
  default:
    return CastValues::Lost;
  }
}

bool detail::propagateCast(onnx::DataPropagationContext &Ctx) {
  if (Ctx.getNumInputs() != 1 || Ctx.getNumOutputs() != 1)
    return false;
  const TensorShapeProto *X = Ctx.getInputData(0);
  const onnx::AttributeProto *To = Ctx.getAttribute("to");
  if (!X || !To)
    return false;
  TensorShapeProto R = *X;
  switch (castValues(To->i())) {
  case CastValues::Kept:
    break;
  case CastValues::KeptIfNotNegative:
    for (const Dimension &D : X->dim())
      if (D.has_dim_value() && D.dim_value() < 0)
        return false;
    break;
  case CastValues::AsBool:
    for (Dimension &D : *R.mutable_dim()) {
      if (D.has_dim_value())
        D.set_dim_value(D.dim_value() != 0);
      else
        D.Clear(); // a symbol above 0 is 1, one of 0 is 0: not known
    }
    break;
  case CastValues::Lost:
    return false;
  }
  Ctx.addOutputData(0, std::move(R));
  return true;
}

bool detail::propagateWhere(onnx::DataPropagationContext &Ctx) {
  if (Ctx.getNumInputs() != 3 || Ctx.getNumOutputs() != 1)
    return false;
  const TensorShapeProto *C = Ctx.getInputData(0);
  const TensorShapeProto *X = Ctx.getInputData(1);
  const TensorShapeProto *Y = Ctx.getInputData(2);
  if (!C || !X || !Y)
    return false;
  int Len = broadcastLength({C->dim_size(), X->dim_size(), Y->dim_size()});
  if (Len < 0 || Len > kMaxDataLength)
    return false;
  TensorShapeProto R;
  bool Any = false;
  for (int I = 0; I < Len; ++I) {
    const Dimension &Cond = elementAt(*C, I);
    const Dimension &XI = elementAt(*X, I);
    const Dimension &YI = elementAt(*Y, I);
    Dimension *D = R.add_dim();
    if (Cond.has_dim_value())
      *D = Cond.dim_value() != 0 ? XI : YI;
    else if (equalElements(XI, YI).value_or(0) == 1)
      *D = XI; // either way the same element
    Any |= isKnown(*D);
  }
  if (!Any)
    return false;
  Ctx.addOutputData(0, std::move(R));
  return true;
}

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

namespace {

/// A Range operand: an integral number (constant or propagated), a symbol
/// (propagated), or neither.
struct RangeOperand {
  std::optional<int64_t> Number;
  std::string Symbol;
};

/// A scalar constant of a numeric type as an integral number, when it is
/// one (0.0 and 1.0 are; 0.5 is not).
std::optional<int64_t> integralScalar(const TensorProto &T) {
  double X;
  switch (T.data_type()) {
  case TensorProto::INT64: {
    std::vector<int64_t> V = onnx::ParseData<int64_t>(&T);
    if (V.size() != 1)
      return std::nullopt;
    return V.front();
  }
  case TensorProto::INT32: {
    std::vector<int32_t> V = onnx::ParseData<int32_t>(&T);
    if (V.size() != 1)
      return std::nullopt;
    return V.front();
  }
  case TensorProto::FLOAT: {
    std::vector<float> V = onnx::ParseData<float>(&T);
    if (V.size() != 1)
      return std::nullopt;
    X = V.front();
    break;
  }
  case TensorProto::DOUBLE: {
    std::vector<double> V = onnx::ParseData<double>(&T);
    if (V.size() != 1)
      return std::nullopt;
    X = V.front();
    break;
  }
  default:
    return std::nullopt;
  }
  // Within +-2^24 every integer is exact in float, and so are the
  // differences and unit steps Range computes with it.
  if (!(X >= -16777216.0 && X <= 16777216.0) || X != static_cast<int64_t>(X))
    return std::nullopt;
  return static_cast<int64_t>(X);
}

RangeOperand rangeOperand(onnx::InferenceContext &Ctx, size_t I) {
  RangeOperand R;
  if (const TensorProto *T = Ctx.getInputData(I)) {
    R.Number = integralScalar(*T);
    return R;
  }
  const TensorShapeProto *P = Ctx.getSymbolicInput(I);
  if (!P || P->dim_size() != 1)
    return R;
  if (P->dim(0).has_dim_value())
    R.Number = P->dim(0).dim_value();
  else if (P->dim(0).has_dim_param())
    R.Symbol = P->dim(0).dim_param();
  return R;
}

} // namespace

void detail::refineRange(onnx::InferenceContext &Ctx) {
  if (Ctx.getNumInputs() != 3 || Ctx.getNumOutputs() != 1)
    return;
  onnx::TypeProto_Tensor &Out = *Ctx.getOutputType(0)->mutable_tensor_type();
  if (Out.has_shape() &&
      (Out.shape().dim_size() != 1 || isKnown(Out.shape().dim(0))))
    return;
  RangeOperand Start = rangeOperand(Ctx, 0), Limit = rangeOperand(Ctx, 1),
               Delta = rangeOperand(Ctx, 2);
  // Only unit steps: the count is then limit - start, exactly, in every
  // element type (for a float limit that is a dim cast to float, up to
  // 2^24, as the Cast that made it assumed).
  if (!Start.Number || Delta.Number != 1)
    return;
  Dimension Len;
  int64_t Count;
  if (Limit.Number) {
    if (__builtin_sub_overflow(*Limit.Number, *Start.Number, &Count))
      return;
    Len.set_dim_value(std::max<int64_t>(Count, 0));
  } else if (!Limit.Symbol.empty() && *Start.Number == 0)
    Len.set_dim_param(Limit.Symbol); // a dim, >= 0: max(dim - 0, 0) = dim
  else
    return;
  TensorShapeProto &S = *Out.mutable_shape();
  if (S.dim_size() == 0)
    S.add_dim();
  *S.mutable_dim(0) = Len;
}

//===----------------------------------------------------------------------===//
// Expand
//===----------------------------------------------------------------------===//

namespace {

/// One dim of a bidirectional (numpy) broadcast of \p A and \p B, when it
/// is certain: 1 gives way to the other; equal dims stay; a number other
/// than 1 wins over a symbol (the symbol is 1 or that number, or the node
/// fails). Two different symbols, or an unknown against anything but 1,
/// are undecided.
std::optional<Dimension> broadcastDim(const Dimension &A, const Dimension &B) {
  auto IsOne = [](const Dimension &D) {
    return D.has_dim_value() && D.dim_value() == 1;
  };
  if (IsOne(A))
    return B;
  if (IsOne(B) || equalElements(A, B).value_or(0) == 1)
    return A;
  if (A.has_dim_value() && B.has_dim_value())
    return std::nullopt; // different numbers: the node fails
  if (A.has_dim_value() && B.has_dim_param() && !B.dim_param().empty())
    return A;
  if (B.has_dim_value() && A.has_dim_param() && !A.dim_param().empty())
    return B;
  return std::nullopt;
}

} // namespace

void detail::refineExpand(onnx::InferenceContext &Ctx) {
  if (Ctx.getNumInputs() != 2 || Ctx.getNumOutputs() != 1)
    return;
  const onnx::TypeProto *InType = Ctx.getInputType(0);
  if (!InType || !InType->has_tensor_type() ||
      !InType->tensor_type().has_shape())
    return;
  std::optional<TensorShapeProto> Target = dataOf(Ctx, 1);
  if (!Target || Target->dim_size() > kMaxDataLength)
    return;
  // A negative entry makes the node fail; no dim to claim.
  for (const Dimension &D : Target->dim())
    if (D.has_dim_value() && D.dim_value() < 0)
      return;
  const TensorShapeProto &In = InType->tensor_type().shape();
  int Rank = std::max(In.dim_size(), Target->dim_size());
  onnx::TypeProto_Tensor &Out = *Ctx.getOutputType(0)->mutable_tensor_type();
  if (Out.has_shape() && Out.shape().dim_size() != Rank)
    return; // ONNX said otherwise; not ours to overrule
  // The rank is the longer of the two, whatever their contents.
  TensorShapeProto &OutShape = *Out.mutable_shape();
  if (OutShape.dim_size() == 0)
    for (int I = 0; I < Rank; ++I)
      OutShape.add_dim();
  for (int I = 0; I < Rank; ++I) {
    if (isKnown(OutShape.dim(I)))
      continue;
    int IA = I - (Rank - In.dim_size()), IB = I - (Rank - Target->dim_size());
    Dimension One;
    One.set_dim_value(1);
    std::optional<Dimension> D = broadcastDim(IA >= 0 ? In.dim(IA) : One,
                                              IB >= 0 ? Target->dim(IB) : One);
    if (D)
      *OutShape.mutable_dim(I) = *D;
  }
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

bool detail::parseEinsum(llvm::StringRef Equation, EinsumTerms &Terms) {
  std::string Eq;
  for (char C : Equation)
    if (C != ' ')
      Eq += C;
  llvm::StringRef Rest(Eq);
  auto [Lhs, Rhs] = Rest.split("->");
  Terms.Explicit = Rest.contains("->");
  auto ParseTerm = [](llvm::StringRef T, std::string &Out) {
    for (size_t I = 0; I < T.size(); ++I) {
      if (T.substr(I).startswith("...")) {
        if (Out.find('.') != std::string::npos)
          return false; // two ellipses
        Out += '.';
        I += 2;
      } else if (std::isalpha(static_cast<unsigned char>(T[I]))) {
        Out += T[I];
      } else {
        return false;
      }
    }
    return true;
  };
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  Lhs.split(Parts, ',');
  Terms.Inputs.clear();
  for (llvm::StringRef P : Parts) {
    Terms.Inputs.emplace_back();
    if (!ParseTerm(P, Terms.Inputs.back()))
      return false;
  }
  Terms.Output.clear();
  if (Terms.Explicit)
    return ParseTerm(Rhs, Terms.Output);
  // Implicit: the ellipsis, then the letters seen once, in order.
  std::map<char, int> Count;
  bool Ellipsis = false;
  for (const std::string &T : Terms.Inputs)
    for (char C : T)
      C == '.' ? (void)(Ellipsis = true) : (void)++Count[C];
  if (Ellipsis)
    Terms.Output += '.';
  for (const auto &[C, N] : Count)
    if (N == 1)
      Terms.Output += C;
  return true;
}

void detail::refineEinsum(onnx::InferenceContext &Ctx) {
  const onnx::AttributeProto *Attr = Ctx.getAttribute("equation");
  EinsumTerms Terms;
  if (!Attr || !parseEinsum(Attr->s(), Terms) ||
      Terms.Inputs.size() != Ctx.getNumInputs() || Ctx.getNumOutputs() != 1)
    return;
  std::map<char, Dimension> Letter;
  std::vector<Dimension> Ellipsis; // right-aligned broadcast of every '...'
  bool EllipsisKnown = true;
  for (size_t I = 0; I < Terms.Inputs.size(); ++I) {
    const onnx::TypeProto *T = Ctx.getInputType(I);
    if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
      return;
    const TensorShapeProto &Shape = T->tensor_type().shape();
    const std::string &Term = Terms.Inputs[I];
    int Letters = static_cast<int>(Term.size()) -
                  (Term.find('.') != std::string::npos ? 1 : 0);
    int EllipsisRank = Shape.dim_size() - Letters;
    if (EllipsisRank < 0 || (EllipsisRank > 0 && Term.find('.') == std::string::npos))
      return; // the node fails
    int D = 0;
    for (char C : Term) {
      if (C == '.') {
        std::vector<Dimension> Own(Shape.dim().begin() + D,
                                   Shape.dim().begin() + D + EllipsisRank);
        // Broadcast with what earlier inputs had, right-aligned.
        size_t R = std::max(Own.size(), Ellipsis.size());
        std::vector<Dimension> Joined(R);
        Dimension One;
        One.set_dim_value(1);
        for (size_t K = 0; K < R; ++K) {
          size_t A = K + Own.size(), B = K + Ellipsis.size();
          const Dimension &X = A >= R ? Own[A - R] : One;
          const Dimension &Y = B >= R ? Ellipsis[B - R] : One;
          std::optional<Dimension> J = broadcastDim(X, Y);
          if (!J)
            EllipsisKnown = false;
          else
            Joined[K] = *J;
        }
        Ellipsis = std::move(Joined);
        D += EllipsisRank;
        continue;
      }
      const Dimension &Dim = Shape.dim(D++);
      auto [It, New] = Letter.insert({C, Dim});
      // A letter of size 1 broadcasts against the others' size.
      if (!New && !isKnown(It->second))
        It->second = Dim;
      else if (!New && It->second.has_dim_value() &&
               It->second.dim_value() == 1)
        It->second = Dim;
    }
  }
  std::vector<std::optional<Dimension>> Out;
  for (char C : Terms.Output) {
    if (C == '.') {
      for (const Dimension &E : Ellipsis)
        Out.push_back(EllipsisKnown && isKnown(E) ? std::optional(E)
                                                  : std::nullopt);
      continue;
    }
    auto It = Letter.find(C);
    if (It == Letter.end())
      return; // a letter no input has: the node fails
    Out.push_back(isKnown(It->second) ? std::optional(It->second)
                                      : std::nullopt);
  }
  onnx::TypeProto_Tensor &OutT = *Ctx.getOutputType(0)->mutable_tensor_type();
  if (OutT.has_shape() && OutT.shape().dim_size() != int(Out.size()))
    return; // ONNX said otherwise; not ours to overrule
  TensorShapeProto &OutShape = *OutT.mutable_shape();
  while (OutShape.dim_size() < int(Out.size()))
    OutShape.add_dim();
  for (size_t I = 0; I < Out.size(); ++I)
    if (Out[I] && !isKnown(OutShape.dim(I)))
      *OutShape.mutable_dim(I) = *Out[I];
}
