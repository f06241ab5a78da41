//===- ConstantPatterns.cpp - Recognise how a constant depends on indices -===//
//
// Every matcher reads the tensor's bytes once and compares exactly; none of
// them samples. Byte comparison is used where the form only needs "the same
// value" (collapse, Toeplitz, prefix), so it works for every element type
// including bool; the affine form needs arithmetic and recomputes each
// element with the rounding of the graph that will replace it.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantPatterns.h"
#include "onnx/onnx_pb.h"
#include "onnxopt/IR/Type.h"
#include <algorithm>
#include <cmath>
#include <cstring>

using namespace onnxopt;
using onnx::TensorProto;

namespace {

/// Row-major strides, in elements.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> Dims) {
  std::vector<int64_t> S(Dims.size(), 1);
  for (size_t I = Dims.size(); I-- > 1;)
    S[I - 1] = S[I] * Dims[I];
  return S;
}

/// The tensor's bytes and the size of one element, or nothing (strings,
/// negative dims, a payload of the wrong length).
struct Bytes {
  std::string Storage;
  llvm::StringRef Data;
  size_t ElemSize = 0;
};

bool readBytes(const Tensor &T, Bytes &B) {
  if (!T || T.getElemType() == TensorProto::STRING)
    return false;
  B.ElemSize = getElemTypeSize(T.getElemType());
  if (!B.ElemSize || T.getNumElements() < 0)
    return false;
  std::optional<llvm::StringRef> Raw = T.getRawBytes(B.Storage);
  if (!Raw || Raw->size() != uint64_t(T.getNumElements()) * B.ElemSize)
    return false;
  B.Data = *Raw;
  return true;
}

bool sameElement(const Bytes &B, int64_t I, int64_t J) {
  return !std::memcmp(B.Data.data() + I * B.ElemSize,
                      B.Data.data() + J * B.ElemSize, B.ElemSize);
}

/// The flat index of the element with index 0 on \p Axes and the
/// coordinates of \p Flat elsewhere.
int64_t zeroOn(int64_t Flat, llvm::ArrayRef<int64_t> Dims,
               llvm::ArrayRef<int64_t> Strides, llvm::ArrayRef<unsigned> Axes) {
  for (unsigned A : Axes)
    Flat -= (Flat / Strides[A]) % Dims[A] * Strides[A];
  return Flat;
}

/// The number of elements before and after \p Axis in row-major order:
/// slice K along the axis is Outer chunks of Inner elements.
std::pair<int64_t, int64_t> outerInner(llvm::ArrayRef<int64_t> Dims,
                                       unsigned Axis) {
  int64_t Outer = 1, Inner = 1;
  for (unsigned D = 0; D < Axis; ++D)
    Outer *= Dims[D];
  for (unsigned D = Axis + 1; D < Dims.size(); ++D)
    Inner *= Dims[D];
  return {Outer, Inner};
}

/// Dims with 1 on \p Axes.
std::vector<int64_t> cutDims(std::vector<int64_t> Dims,
                             llvm::ArrayRef<unsigned> Axes) {
  for (unsigned A : Axes)
    Dims[A] = 1;
  return Dims;
}

/// Position of an element of the full tensor in a tensor of cutDims().
int64_t indexInCut(int64_t Flat, llvm::ArrayRef<int64_t> Dims,
                   llvm::ArrayRef<int64_t> Strides,
                   llvm::ArrayRef<int64_t> CutStrides,
                   llvm::ArrayRef<unsigned> Axes) {
  int64_t Out = 0;
  for (size_t D = 0; D < Dims.size(); ++D) {
    if (llvm::is_contained(Axes, unsigned(D)))
      continue;
    Out += (Flat / Strides[D]) % Dims[D] * CutStrides[D];
  }
  return Out;
}

/// One element rounded as the element type stores it: float32 and int32
/// results of the rebuilt graph's arithmetic are rounded at every step.
double roundTo(int32_t ET, double V) {
  if (ET == TensorProto::FLOAT)
    return static_cast<float>(V);
  return V;
}

bool representable(int32_t ET, double V) {
  if (!std::isfinite(V))
    return false;
  switch (ET) {
  case TensorProto::FLOAT:
    return double(static_cast<float>(V)) == V;
  case TensorProto::INT32:
    return V == std::floor(V) && std::fabs(V) <= 2147483647.0;
  case TensorProto::INT64:
    // Exact in a double, so the recomputation below is exact too.
    return V == std::floor(V) && std::fabs(V) <= 9007199254740992.0;
  default:
    return true;
  }
}

/// Same value and the same sign of zero (a -0.0 slope is not a 0.0 one for
/// a later division).
bool identical(double A, double B) {
  return A == B && std::signbit(A) == std::signbit(B);
}

Tensor fromDoubles(llvm::StringRef Name, int32_t ET,
                   llvm::ArrayRef<int64_t> Dims, llvm::ArrayRef<double> V) {
  std::string Raw;
  auto Put = [&](const void *P, size_t N) {
    Raw.append(static_cast<const char *>(P), N);
  };
  for (double X : V) {
    switch (ET) {
    case TensorProto::FLOAT: {
      float F = static_cast<float>(X);
      Put(&F, 4);
      break;
    }
    case TensorProto::DOUBLE:
      Put(&X, 8);
      break;
    case TensorProto::INT32: {
      int32_t I = static_cast<int32_t>(X);
      Put(&I, 4);
      break;
    }
    default: {
      int64_t I = static_cast<int64_t>(X);
      Put(&I, 8);
      break;
    }
    }
  }
  return Tensor::fromRaw(Name, ET, Dims, Raw);
}

} // namespace

Tensor onnxopt::sliceAtZero(const Tensor &T, llvm::ArrayRef<unsigned> Axes,
                            llvm::StringRef Name) {
  Bytes B;
  if (!readBytes(T, B))
    return Tensor();
  std::vector<int64_t> Dims = T.getDims();
  std::vector<int64_t> Strides = stridesOf(Dims);
  std::vector<int64_t> Cut = cutDims(Dims, Axes);
  std::string Out;
  int64_t N = T.getNumElements();
  for (int64_t I = 0; I < N; ++I)
    if (zeroOn(I, Dims, Strides, Axes) == I)
      Out.append(B.Data.data() + I * B.ElemSize, B.ElemSize);
  return Tensor::fromRaw(Name, T.getElemType(), Cut, Out);
}

Tensor onnxopt::pieceAlong(const Tensor &T, unsigned Axis, int64_t Begin,
                           llvm::ArrayRef<int64_t> Dims, llvm::StringRef Name) {
  Bytes B;
  std::vector<int64_t> TD = T.getDims();
  int64_t Count = 1;
  for (int64_t D : Dims)
    Count *= D;
  if (Axis >= TD.size() || Begin < 0 || Count < 1 || Begin + Count > TD[Axis] ||
      !readBytes(T, B))
    return Tensor();
  // Outer: the dims before Axis; Inner: the elements of one index there.
  int64_t Outer = 1, Inner = B.ElemSize;
  for (unsigned A = 0; A < Axis; ++A)
    Outer *= TD[A];
  for (unsigned A = Axis + 1; A < TD.size(); ++A)
    Inner *= TD[A];
  std::string Out;
  for (int64_t O = 0; O < Outer; ++O)
    Out.append(B.Data.data() + (O * TD[Axis] + Begin) * Inner, Count * Inner);
  std::vector<int64_t> OutDims(TD.begin(), TD.begin() + Axis);
  OutDims.insert(OutDims.end(), Dims.begin(), Dims.end());
  OutDims.insert(OutDims.end(), TD.begin() + Axis + 1, TD.end());
  return Tensor::fromRaw(Name, T.getElemType(), OutDims, Out);
}

Tensor onnxopt::withDims(const Tensor &T, llvm::ArrayRef<int64_t> Dims,
                         llvm::StringRef Name) {
  Bytes B;
  int64_t Count = 1;
  for (int64_t D : Dims)
    Count *= D;
  if (Count != T.getNumElements() || !readBytes(T, B))
    return Tensor();
  return Tensor::fromRaw(Name, T.getElemType(), Dims,
                         std::string(B.Data.data(), Count * B.ElemSize));
}

bool onnxopt::isConstantAlong(const Tensor &T, unsigned Axis) {
  Bytes B;
  if (!readBytes(T, B))
    return false;
  std::vector<int64_t> Dims = T.getDims();
  if (Axis >= Dims.size())
    return false;
  auto [Outer, Inner] = outerInner(Dims, Axis);
  size_t Chunk = Inner * B.ElemSize;
  for (int64_t O = 0; O < Outer; ++O) {
    const char *First = B.Data.data() + O * Dims[Axis] * Chunk;
    for (int64_t I = 1; I < Dims[Axis]; ++I)
      if (std::memcmp(First, First + I * Chunk, Chunk))
        return false;
  }
  return true;
}

std::optional<AffineForm> onnxopt::matchAffine(const Tensor &T,
                                               llvm::ArrayRef<unsigned> Axes,
                                               llvm::StringRef Name,
                                               int64_t MaxElements) {
  int32_t ET = T ? T.getElemType() : 0;
  if (ET != TensorProto::FLOAT && ET != TensorProto::DOUBLE &&
      ET != TensorProto::INT32 && ET != TensorProto::INT64)
    return std::nullopt;
  std::vector<int64_t> Dims = T.getDims();
  int64_t N = T.getNumElements();
  if (Axes.empty() || N > MaxElements)
    return std::nullopt;
  for (unsigned A : Axes)
    if (A >= Dims.size() || Dims[A] < 2)
      return std::nullopt;
  std::optional<std::vector<double>> V = T.toDoubles();
  if (!V || int64_t(V->size()) != N)
    return std::nullopt;
  for (double X : *V)
    if (!representable(ET, X))
      return std::nullopt;

  std::vector<int64_t> Strides = stridesOf(Dims);
  std::vector<int64_t> Cut = cutDims(Dims, Axes);
  std::vector<int64_t> CutStrides = stridesOf(Cut);
  int64_t NumBase = 1;
  for (int64_t D : Cut)
    NumBase *= D;
  std::vector<double> Base(NumBase);
  std::vector<std::vector<double>> Slopes(Axes.size(),
                                          std::vector<double>(NumBase));
  for (int64_t I = 0; I < N; ++I) {
    if (zeroOn(I, Dims, Strides, Axes) != I)
      continue;
    int64_t C = indexInCut(I, Dims, Strides, CutStrides, Axes);
    Base[C] = (*V)[I];
    for (size_t K = 0; K < Axes.size(); ++K) {
      double S = (*V)[I + Strides[Axes[K]]] - (*V)[I];
      if (!representable(ET, S))
        return std::nullopt;
      Slopes[K][C] = S;
    }
  }
  // A term whose slope is +0 everywhere is left out of the graph (the
  // constant does not vary along that axis); the others are in it for
  // every element, zeros included (-0.0 + 0.0 is +0.0).
  std::vector<bool> Keep(Axes.size());
  for (size_t K = 0; K < Axes.size(); ++K)
    Keep[K] = llvm::any_of(Slopes[K],
                           [](double S) { return S != 0 || std::signbit(S); });
  // Recompute every element as Base + i0*S0 + i1*S1 ... with the element
  // type's rounding after each operation, as the rebuilt graph does.
  for (int64_t I = 0; I < N; ++I) {
    int64_t C = indexInCut(I, Dims, Strides, CutStrides, Axes);
    double Acc = Base[C];
    for (size_t K = 0; K < Axes.size(); ++K) {
      if (!Keep[K])
        continue;
      int64_t Index = (I / Strides[Axes[K]]) % Dims[Axes[K]];
      Acc = roundTo(ET, Acc + roundTo(ET, double(Index) * Slopes[K][C]));
    }
    if (!identical(Acc, (*V)[I]))
      return std::nullopt;
  }
  AffineForm F;
  F.Base = fromDoubles(Name.str() + "_base", ET, Cut, Base);
  for (size_t K = 0; K < Axes.size(); ++K) {
    if (!Keep[K])
      continue;
    F.Terms.push_back(
        {Axes[K], fromDoubles(Name.str() + "_step" + std::to_string(Axes[K]),
                              ET, Cut, Slopes[K])});
  }
  return F;
}

std::optional<ToeplitzForm> onnxopt::matchToeplitz(const Tensor &T,
                                                   unsigned Row, unsigned Col,
                                                   llvm::StringRef Name) {
  Bytes B;
  if (!readBytes(T, B))
    return std::nullopt;
  std::vector<int64_t> Dims = T.getDims();
  if (Row >= Col || Col >= Dims.size())
    return std::nullopt;
  for (unsigned D = 0; D < Dims.size(); ++D)
    if (D != Row && D != Col && Dims[D] != 1)
      return std::nullopt;
  int64_t R = Dims[Row], C = Dims[Col];
  if (R < 2 || C < 2)
    return std::nullopt;
  std::vector<int64_t> Strides = stridesOf(Dims);
  int64_t SR = Strides[Row], SC = Strides[Col];
  // The element standing for diagonal d: (d, 0) below, (0, -d) above.
  auto Rep = [&](int64_t D) { return D >= 0 ? D * SR : -D * SC; };
  for (int64_t I = 0; I < R; ++I)
    for (int64_t J = 0; J < C; ++J)
      if (!sameElement(B, I * SR + J * SC, Rep(I - J)))
        return std::nullopt;
  int64_t Below = C - 1;
  while (Below > 0 && sameElement(B, Rep(-(Below - 1)), Rep(-(C - 1))))
    --Below;
  int64_t Above = R - 1;
  while (Above > 0 && sameElement(B, Rep(Above - 1), Rep(R - 1)))
    --Above;
  // Each saturated end must cover two diagonals: otherwise what lies
  // beyond the old size is not shown by the constant.
  if (Below >= C - 1 || Above >= R - 1)
    return std::nullopt;
  std::string Table;
  for (int64_t D = -Below; D <= Above; ++D)
    Table.append(B.Data.data() + Rep(D) * B.ElemSize, B.ElemSize);
  ToeplitzForm F;
  F.Below = Below;
  F.Above = Above;
  F.SaturatedBelow = C - Below;
  F.SaturatedAbove = R - Above;
  std::vector<int64_t> Seen;
  for (int64_t D = -Below; D <= Above && Seen.size() < 3; ++D)
    if (llvm::none_of(Seen,
                      [&](int64_t E) { return sameElement(B, Rep(D), E); }))
      Seen.push_back(Rep(D));
  F.Distinct = Seen.size();
  F.Table = Tensor::fromRaw(Name.str() + "_table", T.getElemType(),
                            {Below + Above + 1}, Table);
  return F;
}

bool onnxopt::isPrefixAlong(const Tensor &Small, const Tensor &Big,
                            unsigned Axis) {
  if (!Small || !Big || Small.getElemType() != Big.getElemType())
    return false;
  std::vector<int64_t> SD = Small.getDims(), BD = Big.getDims();
  if (SD.size() != BD.size() || Axis >= SD.size() || SD[Axis] > BD[Axis])
    return false;
  for (size_t D = 0; D < SD.size(); ++D)
    if (D != Axis && SD[D] != BD[D])
      return false;
  Bytes S, L;
  if (!readBytes(Small, S) || !readBytes(Big, L))
    return false;
  auto [Outer, Inner] = outerInner(SD, Axis);
  size_t SmallChunk = SD[Axis] * Inner * S.ElemSize;
  size_t BigChunk = BD[Axis] * Inner * S.ElemSize;
  for (int64_t O = 0; O < Outer; ++O)
    if (std::memcmp(S.Data.data() + O * SmallChunk,
                    L.Data.data() + O * BigChunk, SmallChunk))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Sinusoids (rotary tables)
//===----------------------------------------------------------------------===//

namespace {

/// The floats of a float32 tensor, or nothing.
std::optional<std::vector<float>> readFloats(const Tensor &T) {
  Bytes B;
  if (!T || T.getElemType() != TensorProto::FLOAT || !readBytes(T, B))
    return std::nullopt;
  std::vector<float> F(size_t(T.getNumElements()));
  std::memcpy(F.data(), B.Data.data(), F.size() * sizeof(float));
  return F;
}

/// One column of a sinusoid table: its values at i = 0, 1, ..., and the
/// partner's values (or empty).
struct Column {
  std::vector<double> V, P;
};

/// The angle at index \p I whose value is nearest \p Predicted among
/// those the column allows: atan2 with the partner, else both branches of
/// arccos (cos) or arcsin (sin), each up to multiples of 2 pi.
double nearestAngle(const Column &C, size_t I, double Amp, bool IsSin,
                    double Predicted) {
  double Candidates[2];
  unsigned N = 0;
  if (!C.P.empty()) {
    double Y = IsSin ? C.V[I] : C.P[I], X = IsSin ? C.P[I] : C.V[I];
    Candidates[N++] = std::atan2(Y, X);
  } else {
    double R = std::clamp(C.V[I] / Amp, -1.0, 1.0);
    double T = IsSin ? std::asin(R) : std::acos(R);
    Candidates[N++] = T;
    Candidates[N++] = IsSin ? M_PI - T : -T;
  }
  double Best = 0, BestDist = INFINITY;
  for (unsigned K = 0; K < N; ++K) {
    double T = Candidates[K] +
               2 * M_PI * std::round((Predicted - Candidates[K]) / (2 * M_PI));
    if (std::fabs(T - Predicted) < BestDist) {
      BestDist = std::fabs(T - Predicted);
      Best = T;
    }
  }
  return Best;
}

/// The column's frequency, unwrapping its angle at 1, 2, 4, ..., and the
/// last index; std::nullopt when it is not determined to 1e-9 (relative to
/// 1) by the last angle.
std::optional<double> columnFrequency(const Column &C, double Amp, bool IsSin,
                                      int64_t Offset) {
  size_t Last = C.V.size() - 1;
  double F = 0;
  if (Offset == 0) {
    for (size_t I = 1;; I = std::min(2 * I, Last)) {
      F = nearestAngle(C, I, Amp, IsSin, double(I) * F) / double(I);
      if (I == Last)
        break;
    }
  } else {
    // Rows from position Offset: the steps from row 0 first (a frequency
    // below pi per row), then the angle at the last row, (Offset + Last)
    // times the frequency, which the steps predict to well within pi.
    double First = nearestAngle(C, 0, Amp, IsSin, 0.0);
    for (size_t I = 1;; I = std::min(2 * I, Last)) {
      F = (nearestAngle(C, I, Amp, IsSin, First + double(I) * F) - First) /
          double(I);
      if (I == Last)
        break;
    }
    double End = double(Offset) + double(Last);
    F = nearestAngle(C, Last, Amp, IsSin, End * F) / End;
  }
  if (C.P.empty()) {
    // d(angle) = d(value) / |Amp * derivative|: arccos is blind near
    // angles of k pi, arcsin near pi/2 + k pi.
    double Angle = F * double(Offset + int64_t(Last));
    double Slope = std::fabs(Amp * (IsSin ? std::cos(Angle) : std::sin(Angle)));
    double Err = 1.2e-7 * std::max(1.0, std::fabs(Amp)) / std::max(Slope, 1e-30);
    if (Err / double(Offset + int64_t(Last)) > 1e-9)
      return std::nullopt;
  }
  return F;
}

} // namespace

Tensor onnxopt::otherSinusoid(const Tensor &Angles, bool IsSin,
                              llvm::ArrayRef<int64_t> Dims,
                              llvm::StringRef Name, double Scale) {
  std::optional<std::vector<float>> A = readFloats(Angles);
  int64_t Count = 1;
  for (int64_t D : Dims)
    Count *= D;
  if (!A || int64_t(A->size()) != Count)
    return Tensor();
  std::vector<float> Out;
  Out.reserve(A->size());
  for (float X : *A)
    Out.push_back(
        float(Scale * (IsSin ? std::cos(double(X)) : std::sin(double(X)))));
  return Tensor::fromFloats(Name, Dims, Out);
}

static std::optional<SinusoidForm>
matchSinusoidAs(const Tensor &T, unsigned Axis, const Tensor *Partner,
                llvm::StringRef Name, int64_t Offset, std::optional<bool> Kind);

std::optional<SinusoidForm>
onnxopt::matchSinusoid(const Tensor &T, unsigned Axis, const Tensor *Partner,
                       llvm::StringRef Name, int64_t Offset) {
  if (Offset < 0 || Offset > (int64_t(1) << 24))
    return std::nullopt;
  // From a position other than 0 no row tells the kind: each is tried, and
  // the amplitude is the partner's radius (needed, so a partner is).
  if (Offset > 0) {
    if (!Partner)
      return std::nullopt;
    for (bool IsSin : {false, true})
      if (std::optional<SinusoidForm> F =
              matchSinusoidAs(T, Axis, Partner, Name, Offset, IsSin))
        return F;
    return std::nullopt;
  }
  return matchSinusoidAs(T, Axis, Partner, Name, 0, std::nullopt);
}

/// matchSinusoid of one kind (sin when \p Kind is true), or of the kind
/// row 0 shows when \p Kind is empty (Offset 0 only).
static std::optional<SinusoidForm>
matchSinusoidAs(const Tensor &T, unsigned Axis, const Tensor *Partner,
                llvm::StringRef Name, int64_t Offset,
                std::optional<bool> Kind) {
  std::vector<int64_t> Dims = T.getDims();
  if (Axis >= Dims.size() || Dims[Axis] < 3)
    return std::nullopt;
  std::optional<std::vector<float>> V = readFloats(T), P;
  if (!V)
    return std::nullopt;
  if (Partner) {
    if (Partner->getDims() != Dims || !(P = readFloats(*Partner)))
      return std::nullopt;
  }
  auto [Outer, Inner] = outerInner(Dims, Axis);
  int64_t Len = Dims[Axis];
  // The kind: a sin table is 0 at i = 0 everywhere.
  bool IsSin = true;
  for (int64_t O = 0; O < Outer && IsSin && !Kind; ++O)
    for (int64_t K = 0; K < Inner; ++K)
      if ((*V)[O * Len * Inner + K] != 0.0f) {
        IsSin = false;
        break;
      }
  if (Kind)
    IsSin = *Kind;
  SinusoidForm Form;
  Form.IsSin = IsSin;
  std::vector<float> Amp(Outer * Inner), Freq(Outer * Inner);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t K = 0; K < Inner; ++K) {
      Column C;
      for (int64_t I = 0; I < Len; ++I) {
        int64_t At = (O * Len + I) * Inner + K;
        C.V.push_back((*V)[At]);
        if (P)
          C.P.push_back((*P)[At]);
      }
      // The amplitude: cos at 0, else the partner's cos at 0; a sin table
      // without a partner is taken at amplitude 1 (the check below
      // rejects any other).
      double A = IsSin ? (P ? C.P[0] : 1.0) : C.V[0];
      if (Offset > 0) {
        // The radius of rounded floats: 1 to a few ulps is 1.
        A = std::hypot(C.V[0], C.P[0]);
        if (std::fabs(A - 1.0) <= 1e-6)
          A = 1.0;
      } else if (P && !IsSin && C.P[0] != 0.0)
        return std::nullopt;
      bool Zero = std::all_of(C.V.begin(), C.V.end(),
                              [](double X) { return X == 0.0; });
      std::optional<double> F = Zero || A == 0.0
                                    ? std::optional<double>(0.0)
                                    : columnFrequency(C, A, IsSin, Offset);
      if (!F)
        return std::nullopt;
      float Af = Zero ? 1.0f : float(A), Ff = float(*F);
      // Recompute every element as the rebuilt graph will.
      double Tol = 4e-6 * std::max(1.0, std::fabs(double(Af)));
      for (int64_t I = 0; I < Len; ++I) {
        float Angle = float(Offset + I) * Ff;
        double Want = double(Af) * (IsSin ? std::sin(double(Angle))
                                          : std::cos(double(Angle)));
        if (std::fabs(Want - C.V[I]) > Tol)
          return std::nullopt;
        if (P && std::fabs(double(Af) * (IsSin ? std::cos(double(Angle))
                                               : std::sin(double(Angle))) -
                           C.P[I]) > Tol)
          return std::nullopt;
      }
      Amp[O * Inner + K] = Af;
      Freq[O * Inner + K] = Ff;
      Form.UnitAmp &= Af == 1.0f;
    }
  std::vector<int64_t> Cut = cutDims(Dims, {Axis});
  Form.Amp = Tensor::fromFloats(Name.str() + "_amplitude", Cut, Amp);
  Form.Freq = Tensor::fromFloats(Name.str() + "_frequency", Cut, Freq);
  return Form;
}
