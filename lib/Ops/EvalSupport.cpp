//===- EvalSupport.cpp - What the constant evaluation rules share ---------===//
//
// Moved from lib/Analysis/ConstantEval.cpp, behaviour unchanged: the element
// type and literal helpers, and EvalContext's operand and result helpers.
//
//===----------------------------------------------------------------------===//
#include "EvalSupport.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/Semantics.h"
#include "llvm/ADT/StringSwitch.h"
#include <algorithm>
#include <cmath>
#include <cstring>

using namespace onnxopt;

namespace onnxopt {
namespace eval {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

bool isRealType(int32_t ET) {
  return ET == TP::FLOAT || ET == TP::DOUBLE || ET == TP::FLOAT16 ||
         ET == TP::BFLOAT16;
}

bool isIntType(int32_t ET) {
  switch (ET) {
  case TP::INT8:
  case TP::INT16:
  case TP::INT32:
  case TP::INT64:
  case TP::UINT8:
  case TP::UINT16:
  case TP::UINT32:
  case TP::UINT64:
    return true;
  default:
    return false;
  }
}

std::string typeName(int32_t ET) {
  llvm::StringRef Name = getElemTypeName(ET);
  return Name.empty() ? "type " + std::to_string(ET) : Name.str();
}

/// Truncates \p V to the width of integer type \p ET (two's complement, as
/// runtimes do); bools become 0 or 1.
int64_t wrapInt(int32_t ET, uint64_t V) {
  switch (ET) {
  case TP::INT8:
    return static_cast<int8_t>(V);
  case TP::UINT8:
    return static_cast<uint8_t>(V);
  case TP::INT16:
    return static_cast<int16_t>(V);
  case TP::UINT16:
    return static_cast<uint16_t>(V);
  case TP::INT32:
    return static_cast<int32_t>(V);
  case TP::UINT32:
    return static_cast<uint32_t>(V);
  case TP::BOOL:
    return V != 0;
  default:
    return static_cast<int64_t>(V);
  }
}

namespace {

/// Rounds a float to IEEE half precision, to nearest even.
uint16_t floatToHalf(float F) {
  uint32_t X;
  std::memcpy(&X, &F, 4);
  uint32_t Sign = (X >> 16) & 0x8000;
  uint32_t Exp = (X >> 23) & 0xff;
  uint32_t Man = X & 0x7fffff;
  if (Exp == 0xff) // inf or nan
    return Sign | 0x7c00 | (Man ? 0x200 : 0);
  int32_t E = static_cast<int32_t>(Exp) - 127 + 15;
  if (E >= 0x1f)
    return Sign | 0x7c00;
  if (E <= 0) {
    if (E < -10)
      return Sign;
    // Subnormal: shift the implicit bit in and round.
    Man |= 0x800000;
    uint32_t Shift = 14 - E;
    uint32_t Half = Man >> Shift;
    uint32_t Rest = Man & ((1u << Shift) - 1);
    uint32_t Mid = 1u << (Shift - 1);
    if (Rest > Mid || (Rest == Mid && (Half & 1)))
      ++Half;
    return Sign | Half;
  }
  uint32_t Half = (static_cast<uint32_t>(E) << 10) | (Man >> 13);
  uint32_t Rest = Man & 0x1fff;
  if (Rest > 0x1000 || (Rest == 0x1000 && (Half & 1)))
    ++Half; // may carry into the exponent, up to infinity: correct
  return Sign | Half;
}

uint16_t floatToBFloat16(float F) {
  uint32_t X;
  std::memcpy(&X, &F, 4);
  if (std::isnan(F))
    return static_cast<uint16_t>((X >> 16) | 0x40);
  uint32_t Rounding = 0x7fff + ((X >> 16) & 1);
  return static_cast<uint16_t>((X + Rounding) >> 16);
}

void appendLE(std::string &Out, uint64_t V, size_t Size) {
  for (size_t I = 0; I < Size; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}

} // namespace

//===----------------------------------------------------------------------===//
// Dims and index maps
//===----------------------------------------------------------------------===//

/// Checked product of dims; std::nullopt for negative dims or above 2^62.
std::optional<int64_t> numElements(llvm::ArrayRef<int64_t> Dims) {
  int64_t N = 1;
  for (int64_t D : Dims) {
    if (D < 0)
      return std::nullopt;
    if (D != 0 && N > (int64_t(1) << 62) / D)
      return std::nullopt;
    N *= D;
  }
  return N;
}

std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> Dims) {
  std::vector<int64_t> S(Dims.size(), 1);
  for (size_t I = Dims.size(); I-- > 1;)
    S[I - 1] = S[I] * Dims[I];
  return S;
}

/// For every element of a row-major tensor of \p Dims, in order,
/// Offset + sum(index[d] * Strides[d]).
std::vector<int64_t> stridedIndices(llvm::ArrayRef<int64_t> Dims,
                                    llvm::ArrayRef<int64_t> Strides,
                                    int64_t Offset) {
  int64_t N = *numElements(Dims);
  std::vector<int64_t> Out;
  Out.reserve(N);
  if (N == 0)
    return Out;
  size_t R = Dims.size();
  std::vector<int64_t> Idx(R, 0);
  int64_t Cur = Offset;
  for (int64_t K = 0; K < N; ++K) {
    Out.push_back(Cur);
    for (size_t D = R; D-- > 0;) {
      if (++Idx[D] < Dims[D]) {
        Cur += Strides[D];
        break;
      }
      Cur -= Strides[D] * (Dims[D] - 1);
      Idx[D] = 0;
    }
  }
  return Out;
}

/// Numpy (multidirectional) broadcasting of several shapes.
bool broadcastDims(llvm::ArrayRef<std::vector<int64_t>> Shapes,
                   std::vector<int64_t> &Out) {
  size_t R = 0;
  for (const auto &S : Shapes)
    R = std::max(R, S.size());
  Out.assign(R, 1);
  for (const auto &S : Shapes)
    for (size_t I = 0; I < S.size(); ++I) {
      int64_t &O = Out[R - S.size() + I];
      int64_t D = S[I];
      if (D == O || D == 1)
        continue;
      if (O != 1)
        return false;
      O = D;
    }
  return true;
}

/// Index map reading a tensor of \p In broadcast to \p Out.
std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> In,
                                      llvm::ArrayRef<int64_t> Out) {
  std::vector<int64_t> InStrides = stridesOf(In);
  std::vector<int64_t> Strides(Out.size(), 0);
  size_t Lead = Out.size() - In.size();
  for (size_t I = 0; I < In.size(); ++I)
    if (In[I] != 1)
      Strides[Lead + I] = InStrides[I];
  return stridedIndices(Out, Strides);
}

std::string formatDims(llvm::ArrayRef<int64_t> Dims) {
  std::string S = "[";
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "," : "") + std::to_string(Dims[I]);
  return S + "]";
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

Literal Literal::make(int32_t ET, std::vector<int64_t> Dims) {
  Literal L;
  L.ET = ET;
  L.Dims = std::move(Dims);
  size_t N = static_cast<size_t>(*numElements(L.Dims));
  if (L.isReal())
    L.Reals.reserve(N);
  else
    L.Ints.reserve(N);
  return L;
}

std::optional<Literal> toLiteral(const Tensor &T) {
  Literal L;
  L.ET = T.getElemType();
  L.Dims = T.getDims();
  std::optional<int64_t> N = numElements(L.Dims);
  if (!N)
    return std::nullopt;
  if (isRealType(L.ET)) {
    std::optional<std::vector<double>> V = T.toDoubles();
    if (!V || static_cast<int64_t>(V->size()) != *N)
      return std::nullopt;
    L.Reals = std::move(*V);
    return L;
  }
  if (!isIntType(L.ET) && L.ET != TP::BOOL)
    return std::nullopt;
  std::optional<std::vector<int64_t>> V = T.toInt64s();
  if (!V || static_cast<int64_t>(V->size()) != *N)
    return std::nullopt;
  L.Ints = std::move(*V);
  return L;
}

Tensor fromLiteral(const Literal &L, llvm::StringRef Name) {
  size_t Size = getElemTypeSize(L.ET);
  std::string Bytes;
  Bytes.reserve(L.size() * Size);
  if (!L.isReal()) {
    for (int64_t V : L.Ints)
      appendLE(Bytes, static_cast<uint64_t>(wrapInt(L.ET, V)), Size);
    return Tensor::fromRaw(Name, L.ET, L.Dims, Bytes);
  }
  for (double D : L.Reals) {
    switch (L.ET) {
    case TP::DOUBLE: {
      uint64_t Bits;
      std::memcpy(&Bits, &D, 8);
      appendLE(Bytes, Bits, 8);
      break;
    }
    case TP::FLOAT: {
      float F = static_cast<float>(D);
      uint32_t Bits;
      std::memcpy(&Bits, &F, 4);
      appendLE(Bytes, Bits, 4);
      break;
    }
    case TP::FLOAT16:
      appendLE(Bytes, floatToHalf(static_cast<float>(D)), 2);
      break;
    default:
      appendLE(Bytes, floatToBFloat16(static_cast<float>(D)), 2);
      break;
    }
  }
  return Tensor::fromRaw(Name, L.ET, L.Dims, Bytes);
}

int32_t castTargetFromName(llvm::StringRef Name) {
  return llvm::StringSwitch<int32_t>(Name.upper())
      .Case("FLOAT", TP::FLOAT)
      .Case("UINT8", TP::UINT8)
      .Case("INT8", TP::INT8)
      .Case("UINT16", TP::UINT16)
      .Case("INT16", TP::INT16)
      .Case("INT32", TP::INT32)
      .Case("INT64", TP::INT64)
      .Case("BOOL", TP::BOOL)
      .Case("FLOAT16", TP::FLOAT16)
      .Case("DOUBLE", TP::DOUBLE)
      .Case("UINT32", TP::UINT32)
      .Case("UINT64", TP::UINT64)
      .Default(0);
}

/// Converts one element to integer type \p To; false if not representable
/// (NaN, infinity, out of range: runtimes disagree there).
bool realToInt(double D, int32_t To, int64_t &Out) {
  if (To == TP::BOOL) {
    Out = D != 0;
    return true;
  }
  if (!std::isfinite(D))
    return false;
  double T = std::trunc(D);
  if (To == TP::UINT64) {
    if (T < 0 || T >= 18446744073709551616.0)
      return false;
    Out = static_cast<int64_t>(static_cast<uint64_t>(T));
    return true;
  }
  if (T < -9223372036854775808.0 || T >= 9223372036854775808.0)
    return false;
  int64_t V = static_cast<int64_t>(T);
  if (wrapInt(To, static_cast<uint64_t>(V)) != V)
    return false;
  Out = V;
  return true;
}

double intToReal(int64_t V, int32_t From, int32_t To) {
  // Convert straight to the target width so that large integers round once.
  if (To == TP::DOUBLE)
    return From == TP::UINT64 ? double(static_cast<uint64_t>(V)) : double(V);
  float F = From == TP::UINT64 ? float(static_cast<uint64_t>(V)) : float(V);
  return F;
}

} // namespace eval
} // namespace onnxopt

using namespace onnxopt::eval;

std::optional<Literal> eval::literalOperand(EvalContext &Ctx, unsigned I) {
  const Tensor *T = Ctx.constOperand(I);
  if (!T)
    return std::nullopt;
  std::optional<Literal> L = toLiteral(*T);
  if (!L)
    Ctx.error("element type " + typeName(T->getElemType()) + " of operand " +
              llvm::Twine(I) + " is not supported");
  return L;
}

EvalResults eval::oneLiteral(EvalContext &Ctx, const Literal &L) {
  // ONNX 1.12's reference truncates to bfloat16, runtimes round to
  // nearest even: a computed bfloat16 could disagree with either.
  if (L.ET == TP::BFLOAT16)
    return Ctx.fail("computed bfloat16 results are not folded (rounding "
                    "differs between ONNX versions and runtimes)");
  if (!Ctx.fitsBudget(L.ET, static_cast<int64_t>(L.size())))
    return std::nullopt;
  return Ctx.one(fromLiteral(L, Ctx.resultName(0)));
}

//===----------------------------------------------------------------------===//
// EvalContext
//===----------------------------------------------------------------------===//

bool EvalContext::hasOperand(unsigned I) const {
  return I < N.getNumOperands() && N.getOperand(I);
}

const Tensor *EvalContext::constOperand(unsigned I) {
  if (!hasOperand(I)) {
    error("operand " + llvm::Twine(I) + " is missing");
    return nullptr;
  }
  if (I >= Operands.size() || Operands[I].isNull()) {
    error("operand " + llvm::Twine(I) + " ('" + N.getOperand(I)->getName() +
          "') is not a constant");
    return nullptr;
  }
  return &Operands[I];
}

std::optional<std::vector<int64_t>> EvalContext::intOperand(unsigned I) {
  const Tensor *T = constOperand(I);
  if (!T)
    return std::nullopt;
  if (!isIntType(T->getElemType())) {
    error("operand " + llvm::Twine(I) + " must be an integer tensor, not " +
          typeName(T->getElemType()));
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> V = T->toInt64s();
  if (!V)
    error("cannot read operand " + llvm::Twine(I));
  return V;
}

std::optional<int64_t> EvalContext::scalarIntOperand(unsigned I) {
  std::optional<std::vector<int64_t>> V = intOperand(I);
  if (!V)
    return std::nullopt;
  if (V->size() != 1) {
    error("operand " + llvm::Twine(I) + " must hold one element");
    return std::nullopt;
  }
  return V->front();
}

bool EvalContext::getAxes(std::optional<std::vector<int64_t>> &Axes) {
  bool Readable = true;
  Axes =
      readAxes(N, &Def, [&](unsigned I) -> std::optional<std::vector<int64_t>> {
        if (!hasOperand(I))
          return std::nullopt;
        std::optional<std::vector<int64_t>> V = intOperand(I);
        Readable = V.has_value();
        return V;
      });
  return Readable;
}

bool EvalContext::normalizeAxis(int64_t &Axis, int64_t Rank,
                                llvm::StringRef What) {
  std::optional<int64_t> A = resolveAxis(Axis, Rank);
  if (!A)
    return error(What + " " + llvm::Twine(Axis) + " is out of range for rank " +
                 llvm::Twine(Rank));
  Axis = *A;
  return true;
}

bool EvalContext::normalizeAxes(std::vector<int64_t> &Axes, int64_t Rank) {
  for (int64_t &A : Axes)
    if (!normalizeAxis(A, Rank, "axis"))
      return false;
  std::vector<int64_t> Sorted = Axes;
  std::sort(Sorted.begin(), Sorted.end());
  if (std::adjacent_find(Sorted.begin(), Sorted.end()) != Sorted.end())
    return error("axes repeat an axis");
  return true;
}

bool EvalContext::fitsBudget(int32_t ET, int64_t NumElements) {
  size_t Size = getElemTypeSize(ET);
  if (Size == 0)
    return error("element type " + typeName(ET) + " is not supported");
  if (MaxResultBytes == 0)
    return true;
  if (static_cast<uint64_t>(NumElements) > MaxResultBytes / Size)
    return error("result of " + llvm::Twine(NumElements) + " x " +
                 llvm::Twine(Size) + " bytes exceeds the size limit of " +
                 llvm::Twine(MaxResultBytes) + " bytes");
  return true;
}

llvm::StringRef EvalContext::resultName(unsigned I) const {
  return I < N.getNumResults() && N.getResult(I) ? N.getResult(I)->getName()
                                                 : llvm::StringRef();
}

bool EvalContext::rawBytes(const Tensor &T, std::string &Storage,
                           llvm::StringRef &Out) {
  std::optional<llvm::StringRef> Bytes = T.getRawBytes(Storage);
  size_t Size = getElemTypeSize(T.getElemType());
  std::optional<int64_t> Num = numElements(T.getDims());
  if (!Bytes || Size == 0 || !Num)
    return error("element type " + typeName(T.getElemType()) +
                 " is not supported");
  if (Bytes->size() != static_cast<uint64_t>(*Num) * Size)
    return error("tensor '" + T.getName() + "' has " +
                 llvm::Twine(Bytes->size()) + " bytes, expected " +
                 llvm::Twine(*Num * Size));
  Out = *Bytes;
  return true;
}

std::optional<Tensor> EvalContext::take(const Tensor &In,
                                        llvm::ArrayRef<int64_t> Dims,
                                        llvm::ArrayRef<int64_t> Src,
                                        unsigned Result) {
  int32_t ET = In.getElemType();
  if (!fitsBudget(ET, static_cast<int64_t>(Src.size())))
    return std::nullopt;
  std::string Storage;
  llvm::StringRef Bytes;
  if (!rawBytes(In, Storage, Bytes))
    return std::nullopt;
  size_t Size = getElemTypeSize(ET);
  std::string Out;
  Out.resize(Src.size() * Size);
  for (size_t K = 0; K < Src.size(); ++K)
    std::memcpy(&Out[K * Size], Bytes.data() + Src[K] * Size, Size);
  return Tensor::fromRaw(resultName(Result), ET, Dims, Out);
}

EvalResults EvalContext::reshaped(const Tensor &In,
                                  llvm::ArrayRef<int64_t> Dims) {
  std::optional<int64_t> Num = numElements(Dims);
  if (!Num || *Num != In.getNumElements())
    return fail("cannot reshape " + formatDims(In.getDims()) + " to " +
                formatDims(Dims));
  if (!fitsBudget(In.getElemType(), *Num))
    return std::nullopt;
  std::string Storage;
  llvm::StringRef Bytes;
  if (!rawBytes(In, Storage, Bytes))
    return std::nullopt;
  return one(Tensor::fromRaw(resultName(0), In.getElemType(), Dims, Bytes));
}
