//===- ConstantEval.cpp - Evaluate ONNX ops on constant inputs ------------===//
//
// Two representations, chosen per op:
//  - data movement (Gather, Slice, Concat, Transpose, Expand, Tile, Split,
//    and the reshaping ops) works on raw little-endian bytes through index
//    maps, so any fixed-size element type moves and nothing is converted;
//  - arithmetic, comparison, Cast and reductions convert their operands to
//    a Literal (integers and bools widened to int64, floating types to
//    double), compute, and round back to the result type when the tensor is
//    built. For float/float16 one +,-,*,/ or sqrt in double followed by one
//    rounding is exactly the correctly rounded result.
// Integer arithmetic wraps to the element width, as runtimes do; division by
// zero and float-to-integer casts out of range are refused instead.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/IR/IR.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <onnx/onnx_pb.h>
#include <tuple>

using namespace onnxopt;

namespace {

using TP = onnx::TensorProto;

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

bool isNumericType(int32_t ET) { return isRealType(ET) || isIntType(ET); }

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
                                    int64_t Offset = 0) {
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
// Literals: tensors as numbers
//===----------------------------------------------------------------------===//

struct Literal {
  int32_t ET = 0;
  std::vector<int64_t> Dims;
  /// Integer and bool elements (uint64 as its bit pattern).
  std::vector<int64_t> Ints;
  /// Floating elements.
  std::vector<double> Reals;

  bool isReal() const { return isRealType(ET); }
  size_t size() const { return isReal() ? Reals.size() : Ints.size(); }
  double real(size_t I) const {
    if (isReal())
      return Reals[I];
    if (ET == TP::UINT64)
      return static_cast<double>(static_cast<uint64_t>(Ints[I]));
    return static_cast<double>(Ints[I]);
  }
  /// An empty literal of type \p ET and \p Dims, with room for its elements.
  static Literal make(int32_t ET, std::vector<int64_t> Dims) {
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
};

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

/// Cast-1 names its target type with a string.
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

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

using Results = std::optional<std::vector<Tensor>>;

class Evaluator {
public:
  Evaluator(const Node &N, llvm::ArrayRef<Tensor> Operands, int64_t Opset,
            const ConstantEvalOptions &Opts, std::string &Why)
      : N(N), Operands(Operands), Opset(Opset), Opts(Opts), Why(Why) {}

  Results run();

private:
  Results fail(const llvm::Twine &Msg) {
    Why = Msg.str();
    return std::nullopt;
  }
  bool error(const llvm::Twine &Msg) {
    Why = Msg.str();
    return false;
  }

  // Operands.
  bool hasOperand(unsigned I) const {
    return I < N.getNumOperands() && N.getOperand(I);
  }
  /// The constant value of operand \p I, or null with Why set.
  const Tensor *constOperand(unsigned I);
  /// The integer contents of operand \p I.
  std::optional<std::vector<int64_t>> intOperand(unsigned I);
  std::optional<Literal> literalOperand(unsigned I);
  /// A single integer (a scalar or a one-element tensor).
  std::optional<int64_t> scalarIntOperand(unsigned I);
  /// Axes from attribute `axes` before opset \p InputSince, from operand
  /// \p Index afterwards; std::nullopt (with Why empty) when absent.
  bool getAxes(int64_t InputSince, unsigned Index,
               std::optional<std::vector<int64_t>> &Axes);
  bool normalizeAxis(int64_t &Axis, int64_t Rank, llvm::StringRef What);
  bool normalizeAxes(std::vector<int64_t> &Axes, int64_t Rank);

  // Results.
  bool fitsBudget(int32_t ET, int64_t NumElements);
  llvm::StringRef resultName(unsigned I) const {
    return I < N.getNumResults() && N.getResult(I) ? N.getResult(I)->getName()
                                                   : llvm::StringRef();
  }
  Results one(Tensor T) { return std::vector<Tensor>{std::move(T)}; }
  Results oneLiteral(const Literal &L) {
    // ONNX 1.12's reference truncates to bfloat16, runtimes round to
    // nearest even: a computed bfloat16 could disagree with either.
    if (L.ET == TP::BFLOAT16)
      return fail("computed bfloat16 results are not folded (rounding "
                  "differs between ONNX versions and runtimes)");
    if (!fitsBudget(L.ET, static_cast<int64_t>(L.size())))
      return std::nullopt;
    return one(fromLiteral(L, resultName(0)));
  }
  /// A tensor whose element K is element Src[K] of \p In.
  std::optional<Tensor> take(const Tensor &In, llvm::ArrayRef<int64_t> Dims,
                             llvm::ArrayRef<int64_t> Src, unsigned Result = 0);
  /// \p In with other dims and the same elements.
  Results reshaped(const Tensor &In, llvm::ArrayRef<int64_t> Dims);
  bool rawBytes(const Tensor &T, std::string &Storage, llvm::StringRef &Out);

  // Ops.
  Results evalConstant();
  Results evalTrilu();
  Results evalClip();
  Results evalShape();
  Results evalSize();
  Results evalGather();
  Results evalSlice();
  Results evalConcat();
  Results evalSqueeze(bool Unsqueeze);
  Results evalReshape();
  Results evalFlatten();
  Results evalTranspose();
  Results evalExpand();
  Results evalTile();
  Results evalSplit();
  Results evalCast();
  Results evalRange();
  Results evalConstantOfShape();
  Results evalWhere();
  Results evalUnary();
  Results evalBinary();
  Results evalVariadic();
  Results evalReduce();

  /// Broadcasts \p A and \p B for a binary op, numpy style, or with the
  /// legacy `broadcast`/`axis` attributes before opset 7.
  bool binaryDims(Literal &A, Literal &B, std::vector<int64_t> &Out);
  /// Elementwise \p F over broadcast operands.
  bool combine(const Literal &A, const Literal &B,
               llvm::ArrayRef<int64_t> OutDims, Literal &Out,
               const std::function<bool(size_t, size_t)> &F);

  const Node &N;
  llvm::ArrayRef<Tensor> Operands;
  int64_t Opset;
  const ConstantEvalOptions &Opts;
  std::string &Why;
};

const Tensor *Evaluator::constOperand(unsigned I) {
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

std::optional<std::vector<int64_t>> Evaluator::intOperand(unsigned I) {
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

std::optional<Literal> Evaluator::literalOperand(unsigned I) {
  const Tensor *T = constOperand(I);
  if (!T)
    return std::nullopt;
  std::optional<Literal> L = toLiteral(*T);
  if (!L)
    error("element type " + typeName(T->getElemType()) + " of operand " +
          llvm::Twine(I) + " is not supported");
  return L;
}

std::optional<int64_t> Evaluator::scalarIntOperand(unsigned I) {
  std::optional<std::vector<int64_t>> V = intOperand(I);
  if (!V)
    return std::nullopt;
  if (V->size() != 1) {
    error("operand " + llvm::Twine(I) + " must hold one element");
    return std::nullopt;
  }
  return V->front();
}

bool Evaluator::getAxes(int64_t InputSince, unsigned Index,
                        std::optional<std::vector<int64_t>> &Axes) {
  Axes.reset();
  if (Opset < InputSince) {
    Axes = N.getAttrInts("axes");
    return true;
  }
  if (!hasOperand(Index))
    return true;
  Axes = intOperand(Index);
  return Axes.has_value();
}

bool Evaluator::normalizeAxis(int64_t &Axis, int64_t Rank,
                              llvm::StringRef What) {
  std::optional<int64_t> A = resolveAxis(Axis, Rank);
  if (!A)
    return error(What + " " + llvm::Twine(Axis) + " is out of range for rank " +
                 llvm::Twine(Rank));
  Axis = *A;
  return true;
}

bool Evaluator::normalizeAxes(std::vector<int64_t> &Axes, int64_t Rank) {
  for (int64_t &A : Axes)
    if (!normalizeAxis(A, Rank, "axis"))
      return false;
  std::vector<int64_t> Sorted = Axes;
  std::sort(Sorted.begin(), Sorted.end());
  if (std::adjacent_find(Sorted.begin(), Sorted.end()) != Sorted.end())
    return error("axes repeat an axis");
  return true;
}

bool Evaluator::fitsBudget(int32_t ET, int64_t NumElements) {
  size_t Size = getElemTypeSize(ET);
  if (Size == 0)
    return error("element type " + typeName(ET) + " is not supported");
  if (Opts.MaxResultBytes == 0)
    return true;
  if (static_cast<uint64_t>(NumElements) > Opts.MaxResultBytes / Size)
    return error("result of " + llvm::Twine(NumElements) + " x " +
                 llvm::Twine(Size) + " bytes exceeds the size limit of " +
                 llvm::Twine(Opts.MaxResultBytes) + " bytes");
  return true;
}

bool Evaluator::rawBytes(const Tensor &T, std::string &Storage,
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

std::optional<Tensor> Evaluator::take(const Tensor &In,
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

Results Evaluator::reshaped(const Tensor &In, llvm::ArrayRef<int64_t> Dims) {
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

//===----------------------------------------------------------------------===//
// Ops that move data
//===----------------------------------------------------------------------===//

Results Evaluator::evalConstant() {
  Tensor T = getConstantNodeValue(N);
  if (T.isNull())
    return fail("only tensor, int and float values are supported");
  return one(T);
}

Results Evaluator::evalShape() {
  const Type &Ty = N.getOperand(0)->getType();
  if (!Ty.isTensor() || !Ty.hasShape())
    return fail("the rank of the input is unknown");
  int64_t Rank = Ty.getRank();
  int64_t Start = 0, End = Rank;
  if (Opset >= 15) {
    Start = N.getAttrInt("start", 0);
    End = N.getAttrInt("end", Rank);
  }
  std::tie(Start, End) = resolveShapeRange(Rank, Start, End);
  std::vector<int64_t> Dims;
  for (int64_t I = Start; I < End; ++I) {
    const Dim &D = Ty.getDims()[I];
    if (!D.isKnown())
      return fail("dim " + llvm::Twine(I) + " of the input is not known");
    Dims.push_back(D.getValue());
  }
  return one(Tensor::fromInt64s(resultName(0), {int64_t(Dims.size())}, Dims));
}

Results Evaluator::evalSize() {
  const Type &Ty = N.getOperand(0)->getType();
  if (!Ty.isTensor() || !Ty.isStatic())
    return fail("the shape of the input is not static");
  std::vector<int64_t> Dims;
  for (const Dim &D : Ty.getDims())
    Dims.push_back(D.getValue());
  std::optional<int64_t> Num = numElements(Dims);
  if (!Num)
    return fail("the size of the input overflows");
  return one(Tensor::fromInt64s(resultName(0), {}, {*Num}));
}

Results Evaluator::evalGather() {
  const Tensor *Data = constOperand(0);
  std::optional<std::vector<int64_t>> Indices = intOperand(1);
  if (!Data || !Indices)
    return std::nullopt;
  std::vector<int64_t> DDims = Data->getDims();
  int64_t Rank = DDims.size();
  if (Rank == 0)
    return fail("cannot gather from a scalar");
  int64_t Axis = N.getAttrInt("axis", 0);
  if (!normalizeAxis(Axis, Rank, "axis"))
    return std::nullopt;
  int64_t Extent = DDims[Axis];
  for (int64_t &I : *Indices) {
    if (I < -Extent || I >= Extent)
      return fail("index " + llvm::Twine(I) + " is out of range for dim " +
                  llvm::Twine(Extent));
    if (I < 0)
      I += Extent;
  }
  std::vector<int64_t> IDims = Operands[1].getDims();
  std::vector<int64_t> OutDims(DDims.begin(), DDims.begin() + Axis);
  OutDims.insert(OutDims.end(), IDims.begin(), IDims.end());
  OutDims.insert(OutDims.end(), DDims.begin() + Axis + 1, DDims.end());
  int64_t Outer = *numElements(llvm::makeArrayRef(DDims).take_front(Axis));
  int64_t Inner = *numElements(llvm::makeArrayRef(DDims).drop_front(Axis + 1));
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num || !fitsBudget(Data->getElemType(), *Num))
    return Num ? std::nullopt : fail("result too large");
  std::vector<int64_t> Src;
  Src.reserve(*Num);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I : *Indices)
      for (int64_t K = 0; K < Inner; ++K)
        Src.push_back((O * Extent + I) * Inner + K);
  std::optional<Tensor> T = take(*Data, OutDims, Src);
  return T ? one(std::move(*T)) : std::nullopt;
}

Results Evaluator::evalSlice() {
  const Tensor *Data = constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  std::optional<std::vector<int64_t>> Starts, Ends, Axes, Steps;
  if (Opset < 10) {
    Starts = N.getAttrInts("starts");
    Ends = N.getAttrInts("ends");
    Axes = N.getAttrInts("axes");
    if (!Starts || !Ends)
      return fail("attributes starts and ends are required");
  } else {
    Starts = intOperand(1);
    Ends = intOperand(2);
    if (!Starts || !Ends)
      return std::nullopt;
    if (hasOperand(3) && !(Axes = intOperand(3)))
      return std::nullopt;
    if (hasOperand(4) && !(Steps = intOperand(4)))
      return std::nullopt;
  }
  size_t Count = Starts->size();
  if (Ends->size() != Count || (Axes && Axes->size() != Count) ||
      (Steps && Steps->size() != Count))
    return fail("starts, ends, axes and steps differ in length");
  if (!Axes) {
    Axes.emplace();
    for (size_t I = 0; I < Count; ++I)
      Axes->push_back(I);
  }
  if (!normalizeAxes(*Axes, Rank))
    return std::nullopt;
  std::vector<int64_t> Begin(Rank, 0), Step(Rank, 1), OutDims = Dims;
  for (size_t I = 0; I < Count; ++I) {
    int64_t A = (*Axes)[I], D = Dims[A];
    int64_t S = Steps ? (*Steps)[I] : 1;
    if (S == 0)
      return fail("slice step is 0");
    std::optional<SliceAxis> Taken =
        resolveSliceAxis(D, (*Starts)[I], (*Ends)[I], S);
    if (!Taken)
      return fail("the sliced dim is negative");
    // Nothing taken: any in-range begin does (it is never read).
    Begin[A] = Taken->Count ? Taken->Start : 0;
    Step[A] = S;
    OutDims[A] = Taken->Count;
  }
  std::vector<int64_t> InStrides = stridesOf(Dims);
  std::vector<int64_t> Strides(Rank);
  int64_t Offset = 0;
  for (int64_t A = 0; A < Rank; ++A) {
    Strides[A] = InStrides[A] * Step[A];
    Offset += Begin[A] * InStrides[A];
  }
  if (!fitsBudget(Data->getElemType(), *numElements(OutDims)))
    return std::nullopt;
  std::vector<int64_t> Src = stridedIndices(OutDims, Strides, Offset);
  std::optional<Tensor> T = take(*Data, OutDims, Src);
  return T ? one(std::move(*T)) : std::nullopt;
}

Results Evaluator::evalConcat() {
  if (N.getNumOperands() == 0)
    return fail("no operands");
  std::vector<const Tensor *> Ins;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Tensor *T = constOperand(I);
    if (!T)
      return std::nullopt;
    Ins.push_back(T);
  }
  std::vector<int64_t> OutDims = Ins[0]->getDims();
  int64_t Rank = OutDims.size();
  int32_t ET = Ins[0]->getElemType();
  if (!N.hasAttr("axis") && Opset >= 4)
    return fail("attribute axis is required");
  int64_t Axis = N.getAttrInt("axis", 1);
  if (!normalizeAxis(Axis, Rank, "axis"))
    return std::nullopt;
  OutDims[Axis] = 0;
  for (const Tensor *T : Ins) {
    std::vector<int64_t> D = T->getDims();
    if (T->getElemType() != ET || static_cast<int64_t>(D.size()) != Rank)
      return fail("operands differ in element type or rank");
    for (int64_t I = 0; I < Rank; ++I)
      if (I != Axis && D[I] != OutDims[I])
        return fail("operands differ in dim " + llvm::Twine(I));
    OutDims[Axis] += D[Axis];
  }
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num || !fitsBudget(ET, *Num))
    return Num ? std::nullopt : fail("result too large");
  size_t Size = getElemTypeSize(ET);
  int64_t Outer = *numElements(llvm::makeArrayRef(OutDims).take_front(Axis));
  int64_t Inner =
      *numElements(llvm::makeArrayRef(OutDims).drop_front(Axis + 1));
  std::vector<std::string> Storage(Ins.size());
  std::vector<llvm::StringRef> Bytes(Ins.size());
  for (size_t K = 0; K < Ins.size(); ++K)
    if (!rawBytes(*Ins[K], Storage[K], Bytes[K]))
      return std::nullopt;
  std::string Out;
  Out.reserve(*Num * Size);
  for (int64_t O = 0; O < Outer; ++O)
    for (size_t K = 0; K < Ins.size(); ++K) {
      size_t Block = Ins[K]->getDims()[Axis] * Inner * Size;
      Out.append(Bytes[K].data() + O * Block, Block);
    }
  return one(Tensor::fromRaw(resultName(0), ET, OutDims, Out));
}

Results Evaluator::evalSqueeze(bool Unsqueeze) {
  const Tensor *Data = constOperand(0);
  if (!Data)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Axes;
  if (!getAxes(13, 1, Axes))
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  if (Unsqueeze) {
    if (!Axes)
      return fail("axes are required");
    int64_t OutRank = Rank + Axes->size();
    if (!normalizeAxes(*Axes, OutRank))
      return std::nullopt;
    std::vector<int64_t> Out;
    std::vector<bool> IsNew(OutRank, false);
    for (int64_t A : *Axes)
      IsNew[A] = true;
    size_t Next = 0;
    for (int64_t I = 0; I < OutRank; ++I)
      Out.push_back(IsNew[I] ? 1 : Dims[Next++]);
    return reshaped(*Data, Out);
  }
  std::vector<bool> Drop(Rank, false);
  if (Axes) {
    if (!normalizeAxes(*Axes, Rank))
      return std::nullopt;
    for (int64_t A : *Axes) {
      if (Dims[A] != 1)
        return fail("cannot squeeze dim " + llvm::Twine(A) + " of size " +
                    llvm::Twine(Dims[A]));
      Drop[A] = true;
    }
  } else {
    for (int64_t I = 0; I < Rank; ++I)
      Drop[I] = Dims[I] == 1;
  }
  std::vector<int64_t> Out;
  for (int64_t I = 0; I < Rank; ++I)
    if (!Drop[I])
      Out.push_back(Dims[I]);
  return reshaped(*Data, Out);
}

Results Evaluator::evalReshape() {
  const Tensor *Data = constOperand(0);
  if (!Data)
    return std::nullopt;
  std::optional<std::vector<int64_t>> Shape;
  if (Opset < 5) {
    Shape = N.getAttrInts("shape");
    if (!Shape)
      return fail("attribute shape is required");
  } else if (!(Shape = intOperand(1))) {
    return std::nullopt;
  }
  bool AllowZero = Opset >= 14 && N.getAttrInt("allowzero", 0) != 0;
  std::vector<int64_t> In = Data->getDims();
  std::vector<int64_t> Out = *Shape;
  int64_t Infer = -1, Known = 1;
  for (size_t I = 0; I < Out.size(); ++I) {
    if (Out[I] == 0 && !AllowZero) {
      if (I >= In.size())
        return fail("shape copies dim " + llvm::Twine(I) +
                    " that the input does not have");
      Out[I] = In[I];
    }
    if (Out[I] == -1) {
      if (Infer >= 0)
        return fail("shape has more than one -1");
      Infer = I;
      continue;
    }
    if (Out[I] < 0)
      return fail("shape has a negative dim");
    Known *= Out[I];
  }
  if (Infer >= 0) {
    if (Known == 0 || Data->getNumElements() % Known != 0)
      return fail("cannot infer the -1 dim of " + formatDims(*Shape));
    Out[Infer] = Data->getNumElements() / Known;
  }
  return reshaped(*Data, Out);
}

Results Evaluator::evalFlatten() {
  const Tensor *Data = constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  int64_t Axis = N.getAttrInt("axis", 1);
  if (Axis < 0)
    Axis += Rank;
  if (Axis < 0 || Axis > Rank)
    return fail("axis is out of range");
  int64_t Outer = *numElements(llvm::makeArrayRef(Dims).take_front(Axis));
  int64_t Inner = *numElements(llvm::makeArrayRef(Dims).drop_front(Axis));
  return reshaped(*Data, {Outer, Inner});
}

Results Evaluator::evalTranspose() {
  const Tensor *Data = constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  std::vector<int64_t> Perm;
  if (std::optional<std::vector<int64_t>> P = N.getAttrInts("perm")) {
    Perm = *P;
  } else {
    for (int64_t I = Rank; I-- > 0;)
      Perm.push_back(I);
  }
  if (static_cast<int64_t>(Perm.size()) != Rank)
    return fail("perm does not match the rank");
  std::vector<int64_t> Check = Perm;
  if (!normalizeAxes(Check, Rank))
    return std::nullopt;
  std::vector<int64_t> InStrides = stridesOf(Dims), OutDims, Strides;
  for (int64_t P : Check) {
    OutDims.push_back(Dims[P]);
    Strides.push_back(InStrides[P]);
  }
  if (!fitsBudget(Data->getElemType(), *numElements(OutDims)))
    return std::nullopt;
  std::optional<Tensor> T =
      take(*Data, OutDims, stridedIndices(OutDims, Strides));
  return T ? one(std::move(*T)) : std::nullopt;
}

Results Evaluator::evalExpand() {
  const Tensor *Data = constOperand(0);
  std::optional<std::vector<int64_t>> Shape = intOperand(1);
  if (!Data || !Shape)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims(), OutDims;
  if (!broadcastDims({Dims, *Shape}, OutDims))
    return fail("cannot expand " + formatDims(Dims) + " to " +
                formatDims(*Shape));
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return fail("result too large");
  if (!fitsBudget(Data->getElemType(), *Num))
    return std::nullopt;
  std::optional<Tensor> T =
      take(*Data, OutDims, broadcastIndices(Dims, OutDims));
  return T ? one(std::move(*T)) : std::nullopt;
}

Results Evaluator::evalTile() {
  const Tensor *Data = constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  std::vector<int64_t> Repeats(Rank, 1);
  if (Opset < 6) {
    // Tile-1: (input, tiles, axis), both scalars.
    std::optional<int64_t> Tiles = scalarIntOperand(1);
    std::optional<int64_t> Axis = scalarIntOperand(2);
    if (!Tiles || !Axis)
      return std::nullopt;
    int64_t A = *Axis;
    if (!normalizeAxis(A, Rank, "axis"))
      return std::nullopt;
    Repeats[A] = *Tiles;
  } else {
    std::optional<std::vector<int64_t>> R = intOperand(1);
    if (!R)
      return std::nullopt;
    if (static_cast<int64_t>(R->size()) != Rank)
      return fail("repeats do not match the rank");
    Repeats = *R;
  }
  std::vector<int64_t> OutDims;
  for (int64_t I = 0; I < Rank; ++I) {
    if (Repeats[I] < 0)
      return fail("negative repeat");
    OutDims.push_back(Dims[I] * Repeats[I]);
  }
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return fail("result too large");
  if (!fitsBudget(Data->getElemType(), *Num))
    return std::nullopt;
  std::vector<int64_t> InStrides = stridesOf(Dims), Src;
  Src.reserve(*Num);
  std::vector<int64_t> Idx(Rank, 0);
  for (int64_t K = 0; K < *Num; ++K) {
    int64_t S = 0;
    for (int64_t D = 0; D < Rank; ++D)
      S += (Idx[D] % Dims[D]) * InStrides[D];
    Src.push_back(S);
    for (int64_t D = Rank; D-- > 0;) {
      if (++Idx[D] < OutDims[D])
        break;
      Idx[D] = 0;
    }
  }
  std::optional<Tensor> T = take(*Data, OutDims, Src);
  return T ? one(std::move(*T)) : std::nullopt;
}

Results Evaluator::evalSplit() {
  const Tensor *Data = constOperand(0);
  if (!Data)
    return std::nullopt;
  std::vector<int64_t> Dims = Data->getDims();
  int64_t Rank = Dims.size();
  int64_t Axis = N.getAttrInt("axis", 0);
  if (!normalizeAxis(Axis, Rank, "axis"))
    return std::nullopt;
  unsigned Outs = N.getNumResults();
  std::optional<std::vector<int64_t>> Split;
  if (Opset >= 13 || (Opset < 2 && hasOperand(1))) {
    if (hasOperand(1) && !(Split = intOperand(1)))
      return std::nullopt;
  } else {
    Split = N.getAttrInts("split");
  }
  if (!Split && Opset >= 18 && N.hasAttr("num_outputs")) {
    // Split-18: num_outputs chunks of ceil(dim / n), the last one smaller.
    int64_t Num = N.getAttrInt("num_outputs", 0);
    if (Num != int64_t(Outs))
      return fail("num_outputs is " + llvm::Twine(Num) + " but the node has " +
                  llvm::Twine(Outs) + " results");
    int64_t Chunk = (Dims[Axis] + Num - 1) / Num;
    if (Num > 1 && Chunk * (Num - 1) >= Dims[Axis] && Dims[Axis] % Num != 0)
      return fail("dim " + llvm::Twine(Dims[Axis]) + " cannot be split into " +
                  llvm::Twine(Num) + " parts");
    Split = std::vector<int64_t>(Outs, Chunk);
    Split->back() = Dims[Axis] - Chunk * (Num - 1);
  }
  if (!Split) {
    if (Outs == 0 || Dims[Axis] % Outs != 0)
      return fail("dim " + llvm::Twine(Dims[Axis]) +
                  " does not split evenly into " + llvm::Twine(Outs));
    Split = std::vector<int64_t>(Outs, Dims[Axis] / Outs);
  }
  if (Split->size() != Outs)
    return fail("split has " + llvm::Twine(Split->size()) + " parts for " +
                llvm::Twine(Outs) + " results");
  int64_t Sum = 0;
  for (int64_t S : *Split) {
    if (S < 0)
      return fail("negative split");
    Sum += S;
  }
  if (Sum != Dims[Axis])
    return fail("split sums to " + llvm::Twine(Sum) + ", dim is " +
                llvm::Twine(Dims[Axis]));
  std::vector<int64_t> InStrides = stridesOf(Dims);
  std::vector<Tensor> Out;
  int64_t Begin = 0;
  for (unsigned K = 0; K < Outs; ++K) {
    std::vector<int64_t> OutDims = Dims;
    OutDims[Axis] = (*Split)[K];
    if (!N.getResult(K)) {
      Out.emplace_back();
    } else {
      std::vector<int64_t> Src =
          stridedIndices(OutDims, InStrides, Begin * InStrides[Axis]);
      std::optional<Tensor> T = take(*Data, OutDims, Src, K);
      if (!T)
        return std::nullopt;
      Out.push_back(std::move(*T));
    }
    Begin += (*Split)[K];
  }
  return Out;
}

Results Evaluator::evalConstantOfShape() {
  std::optional<std::vector<int64_t>> Shape = intOperand(0);
  if (!Shape)
    return std::nullopt;
  Tensor Fill;
  if (const Attribute *A = N.getAttr("value")) {
    if (A->Kind != AttrKind::Tensor || A->Tensors.empty())
      return fail("attribute value must be a tensor");
    Fill = A->Tensors.front();
    if (Fill.getNumElements() != 1)
      return fail("attribute value must hold one element");
  } else {
    Fill = Tensor::fromFloats("", {1}, {0.0f});
  }
  std::optional<int64_t> Num = numElements(*Shape);
  if (!Num)
    return fail("shape " + formatDims(*Shape) + " is invalid");
  if (!fitsBudget(Fill.getElemType(), *Num))
    return std::nullopt;
  std::optional<Tensor> T = take(Fill, *Shape, std::vector<int64_t>(*Num, 0));
  return T ? one(std::move(*T)) : std::nullopt;
}

//===----------------------------------------------------------------------===//
// Ops that compute
//===----------------------------------------------------------------------===//

Results Evaluator::evalCast() {
  std::optional<Literal> In = literalOperand(0);
  if (!In)
    return std::nullopt;
  int32_t To;
  if (N.is("CastLike")) {
    const Type &Ty = N.getOperand(1)->getType();
    To = Ty.isTensor() ? Ty.getElemType() : 0;
    if (!hasOperand(1) || To == 0)
      return fail("element type of the target is unknown");
  } else if (const Attribute *A = N.getAttr("to");
             A && A->Kind == AttrKind::String) {
    To = castTargetFromName(A->S.str());
  } else {
    To = N.getAttrInt("to", 0);
  }
  if (!isNumericType(To) && To != TP::BOOL)
    return fail("cast to " + typeName(To) + " is not supported");
  if (!fitsBudget(To, static_cast<int64_t>(In->size())))
    return std::nullopt;
  Literal Out = Literal::make(To, In->Dims);
  for (size_t I = 0; I < In->size(); ++I) {
    if (In->isReal()) {
      if (Out.isReal()) {
        Out.Reals.push_back(In->Reals[I]);
        continue;
      }
      int64_t V;
      if (!realToInt(In->Reals[I], To, V))
        return fail("value " + std::to_string(In->Reals[I]) +
                    " does not fit in " + typeName(To));
      Out.Ints.push_back(V);
    } else if (Out.isReal()) {
      Out.Reals.push_back(intToReal(In->Ints[I], In->ET, To));
    } else {
      Out.Ints.push_back(wrapInt(To, static_cast<uint64_t>(In->Ints[I])));
    }
  }
  return oneLiteral(Out);
}

Results Evaluator::evalRange() {
  std::optional<Literal> Start = literalOperand(0), Limit = literalOperand(1),
                         Delta = literalOperand(2);
  if (!Start || !Limit || !Delta)
    return std::nullopt;
  int32_t ET = Start->ET;
  if (Limit->ET != ET || Delta->ET != ET || !isNumericType(ET))
    return fail("operands must have one numeric element type");
  if (Start->size() != 1 || Limit->size() != 1 || Delta->size() != 1)
    return fail("operands must be scalars");
  Literal Out;
  if (Start->isReal()) {
    // As runtimes do: the count from the difference in the element type,
    // then repeated addition in the element type.
    double D = Delta->Reals[0];
    if (D == 0)
      return fail("delta is 0");
    bool IsFloat = ET != TP::DOUBLE;
    double Diff = Limit->Reals[0] - Start->Reals[0];
    if (IsFloat)
      Diff = static_cast<float>(Diff);
    double Count = std::max(std::ceil(Diff / D), 0.0);
    if (!(Count < double(int64_t(1) << 62)))
      return fail("range is too long");
    Out = Literal::make(ET, {static_cast<int64_t>(Count)});
    if (!fitsBudget(ET, static_cast<int64_t>(Count)))
      return std::nullopt;
    double V = Start->Reals[0];
    for (int64_t I = 0; I < static_cast<int64_t>(Count); ++I) {
      Out.Reals.push_back(V);
      V += D;
      if (IsFloat)
        V = static_cast<float>(V);
    }
  } else {
    if (ET == TP::UINT64)
      return fail("uint64 ranges are not supported");
    int64_t S = Start->Ints[0], L = Limit->Ints[0], D = Delta->Ints[0];
    if (D == 0)
      return fail("delta is 0");
    // Exact ceil((L - S) / D) in 128 bits: L - S can overflow int64.
    __int128 Diff = static_cast<__int128>(L) - S;
    __int128 Count = D > 0 ? (Diff + D - 1) / D : (Diff + D + 1) / D;
    if (Diff == 0 || (Diff > 0) != (D > 0))
      Count = 0;
    if (Count > (static_cast<__int128>(1) << 62))
      return fail("range is too long");
    if (!fitsBudget(ET, static_cast<int64_t>(Count)))
      return std::nullopt;
    Out = Literal::make(ET, {static_cast<int64_t>(Count)});
    for (int64_t I = 0; I < static_cast<int64_t>(Count); ++I)
      Out.Ints.push_back(S + I * D);
  }
  return oneLiteral(Out);
}

bool Evaluator::binaryDims(Literal &A, Literal &B, std::vector<int64_t> &Out) {
  if (Opset < 7 && !N.is("Where") && !N.is("Mod")) {
    if (N.getAttrInt("broadcast", 0) == 0) {
      if (A.Dims != B.Dims)
        return error("shapes " + formatDims(A.Dims) + " and " +
                     formatDims(B.Dims) + " differ (broadcast=0)");
      Out = A.Dims;
      return true;
    }
    // Legacy broadcasting: B's dims match a contiguous run of A's, starting
    // at `axis` (suffix by default).
    int64_t RA = A.Dims.size(), RB = B.Dims.size();
    int64_t Axis = N.getAttrInt("axis", RA - RB);
    if (Axis < 0)
      Axis += RA;
    if (Axis < 0 || Axis + RB > RA)
      return error("axis does not place B inside A");
    std::vector<int64_t> Padded(Axis, 1);
    Padded.insert(Padded.end(), B.Dims.begin(), B.Dims.end());
    Padded.resize(RA, 1);
    B.Dims = Padded;
    if (!broadcastDims({A.Dims, B.Dims}, Out) || Out != A.Dims)
      return error("B does not broadcast to A");
    return true;
  }
  if (!broadcastDims({A.Dims, B.Dims}, Out))
    return error("shapes " + formatDims(A.Dims) + " and " + formatDims(B.Dims) +
                 " do not broadcast");
  return true;
}

bool Evaluator::combine(const Literal &A, const Literal &B,
                        llvm::ArrayRef<int64_t> OutDims, Literal &Out,
                        const std::function<bool(size_t, size_t)> &F) {
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return error("result too large");
  if (!fitsBudget(Out.ET, *Num))
    return false;
  std::vector<int64_t> IA = broadcastIndices(A.Dims, OutDims);
  std::vector<int64_t> IB = broadcastIndices(B.Dims, OutDims);
  for (int64_t K = 0; K < *Num; ++K)
    if (!F(IA[K], IB[K]))
      return false;
  return true;
}

/// Integer semantics of the binary ops. Returns false with \p Err on
/// division by zero or overflow.
bool intBinary(llvm::StringRef Op, int32_t ET, int64_t A, int64_t B, bool FMod,
               int64_t &R, std::string &Err) {
  uint64_t UA = A, UB = B;
  if (Op == "Add")
    R = wrapInt(ET, UA + UB);
  else if (Op == "Sub")
    R = wrapInt(ET, UA - UB);
  else if (Op == "Mul")
    R = wrapInt(ET, UA * UB);
  else if (Op == "Div" || Op == "Mod") {
    if (B == 0) {
      Err = "integer division by zero";
      return false;
    }
    if (A == std::numeric_limits<int64_t>::min() && B == -1) {
      Err = "integer division overflows";
      return false;
    }
    if (Op == "Div") {
      R = wrapInt(ET, static_cast<uint64_t>(A / B));
    } else {
      R = A % B;
      if (!FMod && R != 0 && ((R < 0) != (B < 0)))
        R += B;
    }
  } else if (Op == "Min")
    R = std::min(A, B);
  else if (Op == "Max")
    R = std::max(A, B);
  else if (Op == "Sum")
    R = wrapInt(ET, UA + UB);
  else if (Op == "Equal")
    R = A == B;
  else if (Op == "Less")
    R = A < B;
  else if (Op == "Greater")
    R = A > B;
  else if (Op == "LessOrEqual")
    R = A <= B;
  else if (Op == "GreaterOrEqual")
    R = A >= B;
  else if (Op == "And")
    R = A && B;
  else if (Op == "Or")
    R = A || B;
  else if (Op == "Xor")
    R = (A != 0) != (B != 0);
  else {
    Err = "unsupported op";
    return false;
  }
  return true;
}

bool isComparison(llvm::StringRef Op) {
  return Op == "Equal" || Op == "Less" || Op == "Greater" ||
         Op == "LessOrEqual" || Op == "GreaterOrEqual";
}

bool isLogical(llvm::StringRef Op) {
  return Op == "And" || Op == "Or" || Op == "Xor";
}

/// Combines \p A and \p B into \p Out for op \p Op (shared by the binary and
/// variadic ops).
bool evalBinaryOp(llvm::StringRef Op, const Literal &A, const Literal &B,
                  bool FMod, Literal &Out, size_t IA, size_t IB,
                  std::string &Err) {
  if (A.isReal()) {
    double X = A.Reals[IA], Y = B.Reals[IB];
    if (isComparison(Op)) {
      bool R = Op == "Equal"         ? X == Y
               : Op == "Less"        ? X < Y
               : Op == "Greater"     ? X > Y
               : Op == "LessOrEqual" ? X <= Y
                                     : X >= Y;
      Out.Ints.push_back(R);
      return true;
    }
    double R;
    if (Op == "Add" || Op == "Sum")
      R = X + Y;
    else if (Op == "Sub")
      R = X - Y;
    else if (Op == "Mul")
      R = X * Y;
    else if (Op == "Div")
      R = X / Y;
    else if (Op == "Mod") {
      if (!FMod) {
        Err = "Mod of floating types requires fmod=1";
        return false;
      }
      R = std::fmod(X, Y);
    } else if (Op == "Min" || Op == "Max") {
      if (std::isnan(X) || std::isnan(Y)) {
        Err = "NaN operand";
        return false;
      }
      R = Op == "Min" ? std::min(X, Y) : std::max(X, Y);
    } else {
      Err = "unsupported op";
      return false;
    }
    Out.Reals.push_back(R);
    return true;
  }
  int64_t R;
  if (!intBinary(Op, A.ET, A.Ints[IA], B.Ints[IB], FMod, R, Err))
    return false;
  Out.Ints.push_back(R);
  return true;
}

/// Checks the element types an op accepts.
bool checkOperandTypes(llvm::StringRef Op, int32_t ET, std::string &Err) {
  if (isLogical(Op) || Op == "Not") {
    if (ET != TP::BOOL)
      Err = Op.str() + " needs bool operands";
  } else if (Op == "Equal") {
    if (!isNumericType(ET) && ET != TP::BOOL)
      Err = "unsupported element type " + typeName(ET);
  } else if (!isNumericType(ET)) {
    Err = Op.str() + " does not take " + typeName(ET) + " operands";
  }
  if (Err.empty() && ET == TP::UINT64 && Op != "Add" && Op != "Sub" &&
      Op != "Mul" && Op != "Sum" && Op != "Equal")
    Err = "uint64 is not supported by " + Op.str();
  return Err.empty();
}

Results Evaluator::evalBinary() {
  std::optional<Literal> A = literalOperand(0), B = literalOperand(1);
  if (!A || !B)
    return std::nullopt;
  llvm::StringRef Op = N.getOpType();
  if (A->ET != B->ET)
    return fail("operands differ in element type");
  std::string Err;
  if (!checkOperandTypes(Op, A->ET, Err))
    return fail(Err);
  std::vector<int64_t> OutDims;
  if (!binaryDims(*A, *B, OutDims))
    return std::nullopt;
  bool FMod = N.getAttrInt("fmod", 0) != 0;
  int32_t OutET = isComparison(Op) || isLogical(Op) ? int32_t(TP::BOOL) : A->ET;
  Literal Out = Literal::make(OutET, OutDims);
  if (!combine(*A, *B, OutDims, Out, [&](size_t IA, size_t IB) {
        return evalBinaryOp(Op, *A, *B, FMod, Out, IA, IB, Err);
      }))
    return Err.empty() ? std::nullopt : fail(Err);
  return oneLiteral(Out);
}

Results Evaluator::evalVariadic() {
  llvm::StringRef Op = N.getOpType();
  if (N.getNumOperands() == 0)
    return fail("no operands");
  std::optional<Literal> Acc = literalOperand(0);
  if (!Acc)
    return std::nullopt;
  std::string Err;
  if (!checkOperandTypes(Op, Acc->ET, Err))
    return fail(Err);
  for (unsigned I = 1; I < N.getNumOperands(); ++I) {
    std::optional<Literal> B = literalOperand(I);
    if (!B)
      return std::nullopt;
    if (B->ET != Acc->ET)
      return fail("operands differ in element type");
    std::vector<int64_t> OutDims;
    if (Opset < 8 ? Acc->Dims != B->Dims
                  : !broadcastDims({Acc->Dims, B->Dims}, OutDims))
      return fail("operand shapes do not broadcast");
    if (Opset < 8)
      OutDims = Acc->Dims;
    Literal Out = Literal::make(Acc->ET, OutDims);
    if (!combine(*Acc, *B, OutDims, Out, [&](size_t IA, size_t IB) {
          return evalBinaryOp(Op, *Acc, *B, false, Out, IA, IB, Err);
        }))
      return Err.empty() ? std::nullopt : fail(Err);
    Acc = std::move(Out);
  }
  return oneLiteral(*Acc);
}

Results Evaluator::evalUnary() {
  std::optional<Literal> A = literalOperand(0);
  if (!A)
    return std::nullopt;
  llvm::StringRef Op = N.getOpType();
  std::string Err;
  if (!checkOperandTypes(Op, A->ET, Err))
    return fail(Err);
  if (!fitsBudget(A->ET, static_cast<int64_t>(A->size())))
    return std::nullopt;
  bool RealOnly = Op == "Floor" || Op == "Ceil" || Op == "Sqrt";
  if (RealOnly && !A->isReal())
    return fail(Op + " needs floating operands");
  Literal Out = Literal::make(A->ET, A->Dims);
  for (size_t I = 0; I < A->size(); ++I) {
    if (A->isReal()) {
      double X = A->Reals[I];
      double R = Op == "Neg"     ? -X
                 : Op == "Abs"   ? std::fabs(X)
                 : Op == "Floor" ? std::floor(X)
                 : Op == "Ceil"  ? std::ceil(X)
                                 : std::sqrt(X);
      Out.Reals.push_back(R);
      continue;
    }
    int64_t X = A->Ints[I];
    if (Op == "Not")
      Out.Ints.push_back(!X);
    else if (Op == "Neg")
      Out.Ints.push_back(wrapInt(A->ET, 0 - static_cast<uint64_t>(X)));
    else
      Out.Ints.push_back(
          wrapInt(A->ET, X < 0 ? 0 - static_cast<uint64_t>(X) : X));
  }
  return oneLiteral(Out);
}

/// Trilu keeps the elements on and above (upper=1) or on and below the
/// k-th diagonal of the last two axes and zeroes the rest. Static exports
/// compute causal masks this way from a constant of the old length.
Results Evaluator::evalTrilu() {
  std::optional<Literal> A = literalOperand(0);
  if (!A)
    return std::nullopt;
  if (A->Dims.size() < 2)
    return fail("Trilu needs rank >= 2");
  int64_t K = 0;
  if (hasOperand(1)) {
    std::optional<int64_t> V = scalarIntOperand(1);
    if (!V)
      return std::nullopt;
    K = *V;
  }
  bool Upper = N.getAttrInt("upper", 1) != 0;
  int64_t Rows = A->Dims[A->Dims.size() - 2], Cols = A->Dims.back();
  Literal Out = *A;
  for (size_t I = 0; I < Out.size(); ++I) {
    int64_t Row = (int64_t(I) / Cols) % Rows, Col = int64_t(I) % Cols;
    bool Keep = Upper ? Col - Row >= K : Col - Row <= K;
    if (Keep)
      continue;
    if (Out.isReal())
      Out.Reals[I] = 0;
    else
      Out.Ints[I] = 0;
  }
  return oneLiteral(Out);
}

/// Clip to [min, max]: attributes before opset 11, optional scalar inputs
/// from then on. NaN stays NaN, as in runtimes.
Results Evaluator::evalClip() {
  std::optional<Literal> A = literalOperand(0);
  if (!A)
    return std::nullopt;
  if (!isNumericType(A->ET))
    return fail("Clip needs a numeric operand");
  std::optional<double> Lo, Hi;
  if (Opset < 11) {
    if (N.hasAttr("min"))
      Lo = N.getAttrFloat("min", 0);
    if (N.hasAttr("max"))
      Hi = N.getAttrFloat("max", 0);
  } else {
    for (unsigned I = 1; I <= 2; ++I) {
      if (!hasOperand(I))
        continue;
      std::optional<Literal> B = literalOperand(I);
      if (!B)
        return std::nullopt;
      if (B->size() != 1 || B->ET != A->ET)
        return fail("Clip's bounds must be scalars of the input's type");
      (I == 1 ? Lo : Hi) = B->real(0);
    }
  }
  Literal Out = *A;
  for (size_t I = 0; I < Out.size(); ++I) {
    if (Out.isReal()) {
      double &X = Out.Reals[I];
      if (std::isnan(X))
        continue;
      if (Lo && X < *Lo)
        X = *Lo;
      if (Hi && X > *Hi)
        X = *Hi;
      continue;
    }
    int64_t &X = Out.Ints[I];
    if (Lo && double(X) < *Lo)
      X = static_cast<int64_t>(*Lo);
    if (Hi && double(X) > *Hi)
      X = static_cast<int64_t>(*Hi);
  }
  return oneLiteral(Out);
}

Results Evaluator::evalWhere() {
  std::optional<Literal> C = literalOperand(0), X = literalOperand(1),
                         Y = literalOperand(2);
  if (!C || !X || !Y)
    return std::nullopt;
  if (C->ET != TP::BOOL)
    return fail("condition must be bool");
  if (X->ET != Y->ET)
    return fail("operands differ in element type");
  std::vector<int64_t> OutDims;
  if (!broadcastDims({C->Dims, X->Dims, Y->Dims}, OutDims))
    return fail("operand shapes do not broadcast");
  std::optional<int64_t> Num = numElements(OutDims);
  if (!Num)
    return fail("result too large");
  if (!fitsBudget(X->ET, *Num))
    return std::nullopt;
  std::vector<int64_t> IC = broadcastIndices(C->Dims, OutDims);
  std::vector<int64_t> IX = broadcastIndices(X->Dims, OutDims);
  std::vector<int64_t> IY = broadcastIndices(Y->Dims, OutDims);
  Literal Out = Literal::make(X->ET, OutDims);
  for (int64_t K = 0; K < *Num; ++K) {
    const Literal &Src = C->Ints[IC[K]] ? *X : *Y;
    size_t I = C->Ints[IC[K]] ? IX[K] : IY[K];
    if (Out.isReal())
      Out.Reals.push_back(Src.Reals[I]);
    else
      Out.Ints.push_back(Src.Ints[I]);
  }
  return oneLiteral(Out);
}

Results Evaluator::evalReduce() {
  std::optional<Literal> A = literalOperand(0);
  if (!A)
    return std::nullopt;
  llvm::StringRef Op = N.getOpType();
  if (!isNumericType(A->ET))
    return fail(Op + " does not take " + typeName(A->ET) + " operands");
  if (A->ET == TP::UINT64 && Op != "ReduceSum" && Op != "ReduceProd")
    return fail("uint64 is not supported by " + Op);
  int64_t Rank = A->Dims.size();
  std::optional<std::vector<int64_t>> Axes;
  // ReduceSum takes axes as an input from opset 13, the others from 18.
  if (!getAxes(Op == "ReduceSum" ? 13 : 18, 1, Axes))
    return std::nullopt;
  bool KeepDims = N.getAttrInt("keepdims", 1) != 0;
  if ((!Axes || Axes->empty()) && N.getAttrInt("noop_with_empty_axes", 0))
    return oneLiteral(*A);
  std::vector<bool> Reduced(Rank, !Axes || Axes->empty());
  if (Axes && !Axes->empty()) {
    if (!normalizeAxes(*Axes, Rank))
      return std::nullopt;
    for (int64_t X : *Axes)
      Reduced[X] = true;
  }
  std::vector<int64_t> OutDims, KeptDims;
  for (int64_t I = 0; I < Rank; ++I) {
    KeptDims.push_back(Reduced[I] ? 1 : A->Dims[I]);
    if (!Reduced[I] || KeepDims)
      OutDims.push_back(KeptDims.back());
  }
  int64_t Num = *numElements(OutDims);
  if (!fitsBudget(A->ET, Num))
    return std::nullopt;
  if (A->size() == 0 && (Op == "ReduceMin" || Op == "ReduceMax"))
    return fail(Op + " of an empty tensor");
  // Each input element lands in the output element of its kept dims.
  std::vector<int64_t> KeptStrides = stridesOf(KeptDims), Strides(Rank, 0);
  for (int64_t I = 0; I < Rank; ++I)
    if (!Reduced[I])
      Strides[I] = KeptStrides[I];
  std::vector<int64_t> Dst = stridedIndices(A->Dims, Strides);
  Literal Out = Literal::make(A->ET, OutDims);
  std::vector<bool> Seen(Num, false);
  if (A->isReal()) {
    Out.Reals.assign(Num, Op == "ReduceProd" ? 1.0 : 0.0);
    for (size_t K = 0; K < Dst.size(); ++K) {
      double &R = Out.Reals[Dst[K]];
      double X = A->Reals[K];
      if (Op == "ReduceSum")
        R += X;
      else if (Op == "ReduceProd")
        R *= X;
      else if (!Seen[Dst[K]] || std::isnan(X))
        R = X;
      else if (!std::isnan(R))
        R = Op == "ReduceMin" ? std::min(R, X) : std::max(R, X);
      Seen[Dst[K]] = true;
    }
  } else {
    Out.Ints.assign(Num, Op == "ReduceProd" ? 1 : 0);
    for (size_t K = 0; K < Dst.size(); ++K) {
      int64_t &R = Out.Ints[Dst[K]];
      int64_t X = A->Ints[K];
      if (Op == "ReduceSum")
        R = wrapInt(A->ET, uint64_t(R) + uint64_t(X));
      else if (Op == "ReduceProd")
        R = wrapInt(A->ET, uint64_t(R) * uint64_t(X));
      else if (!Seen[Dst[K]])
        R = X;
      else
        R = Op == "ReduceMin" ? std::min(R, X) : std::max(R, X);
      Seen[Dst[K]] = true;
    }
  }
  return oneLiteral(Out);
}

enum class OpKind {
  Unknown,
  Constant,
  Identity,
  Shape,
  Size,
  Gather,
  Slice,
  Concat,
  Squeeze,
  Unsqueeze,
  Reshape,
  Flatten,
  Transpose,
  Expand,
  Tile,
  Split,
  Cast,
  Range,
  ConstantOfShape,
  Where,
  Unary,
  Binary,
  Variadic,
  Reduce,
  Trilu,
  Clip
};

OpKind classify(llvm::StringRef Op) {
  return llvm::StringSwitch<OpKind>(Op)
      .Case("Constant", OpKind::Constant)
      .Case("Identity", OpKind::Identity)
      .Case("Shape", OpKind::Shape)
      .Case("Size", OpKind::Size)
      .Case("Gather", OpKind::Gather)
      .Case("Slice", OpKind::Slice)
      .Case("Concat", OpKind::Concat)
      .Case("Squeeze", OpKind::Squeeze)
      .Case("Unsqueeze", OpKind::Unsqueeze)
      .Case("Reshape", OpKind::Reshape)
      .Case("Flatten", OpKind::Flatten)
      .Case("Transpose", OpKind::Transpose)
      .Case("Expand", OpKind::Expand)
      .Case("Tile", OpKind::Tile)
      .Case("Split", OpKind::Split)
      .Cases("Cast", "CastLike", OpKind::Cast)
      .Case("Range", OpKind::Range)
      .Case("ConstantOfShape", OpKind::ConstantOfShape)
      .Case("Where", OpKind::Where)
      .Cases("Neg", "Abs", "Not", "Floor", "Ceil", "Sqrt", OpKind::Unary)
      .Case("Trilu", OpKind::Trilu)
      .Case("Clip", OpKind::Clip)
      .Cases("Add", "Sub", "Mul", "Div", "Mod", OpKind::Binary)
      .Cases("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
             OpKind::Binary)
      .Cases("And", "Or", "Xor", OpKind::Binary)
      .Cases("Min", "Max", "Sum", OpKind::Variadic)
      .Cases("ReduceSum", "ReduceProd", "ReduceMin", "ReduceMax",
             OpKind::Reduce)
      .Default(OpKind::Unknown);
}

Results Evaluator::run() {
  if (!N.isOnnxDomain())
    return fail("op of domain '" + N.getDomain() + "'");
  OpKind Kind = classify(N.getOpType());
  if (Kind == OpKind::Unknown)
    return fail("op " + N.getOpType() + " is not supported");
  if (N.getNumResults() == 0)
    return fail("node has no results");
  if ((Kind == OpKind::Shape || Kind == OpKind::Size) && !hasOperand(0))
    return fail("operand 0 is missing");
  switch (Kind) {
  case OpKind::Constant:
    return evalConstant();
  case OpKind::Identity: {
    const Tensor *T = constOperand(0);
    return T ? one(*T) : std::nullopt;
  }
  case OpKind::Shape:
    return evalShape();
  case OpKind::Size:
    return evalSize();
  case OpKind::Gather:
    return evalGather();
  case OpKind::Slice:
    return evalSlice();
  case OpKind::Concat:
    return evalConcat();
  case OpKind::Squeeze:
    return evalSqueeze(false);
  case OpKind::Unsqueeze:
    return evalSqueeze(true);
  case OpKind::Reshape:
    return evalReshape();
  case OpKind::Flatten:
    return evalFlatten();
  case OpKind::Transpose:
    return evalTranspose();
  case OpKind::Expand:
    return evalExpand();
  case OpKind::Tile:
    return evalTile();
  case OpKind::Split:
    return evalSplit();
  case OpKind::Cast:
    return evalCast();
  case OpKind::Range:
    return evalRange();
  case OpKind::ConstantOfShape:
    return evalConstantOfShape();
  case OpKind::Where:
    return evalWhere();
  case OpKind::Unary:
    return evalUnary();
  case OpKind::Binary:
    return evalBinary();
  case OpKind::Variadic:
    return evalVariadic();
  case OpKind::Reduce:
    return evalReduce();
  case OpKind::Trilu:
    return evalTrilu();
  case OpKind::Clip:
    return evalClip();
  case OpKind::Unknown:
    break;
  }
  return fail("op " + N.getOpType() + " is not supported");
}

} // namespace

std::optional<std::vector<Tensor>>
onnxopt::evaluateNode(const Node &N, llvm::ArrayRef<Tensor> Operands,
                      int64_t Opset, const ConstantEvalOptions &Opts,
                      std::string &Why) {
  Why.clear();
  Evaluator E(N, Operands, Opset, Opts, Why);
  Results R = E.run();
  if (!R)
    return std::nullopt;
  // Ops with one evaluated result may have trailing optional results (none
  // of the supported ops do today); keep one entry per result.
  R->resize(N.getNumResults());
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (!N.getResult(I))
      (*R)[I] = Tensor();
  return R;
}

bool onnxopt::isEvaluableOp(llvm::StringRef OpType) {
  return classify(OpType) != OpKind::Unknown;
}

namespace {

/// evaluateFromConstants with the count of nodes evaluated so far.
class ConeEvaluator {
public:
  ConeEvaluator(int64_t Opset, const ConstantConeOptions &Opts,
                llvm::DenseMap<const Value *, Tensor> &Memo)
      : Opset(Opset), Opts(Opts), Memo(Memo) {}

  Tensor evaluate(const Value &V) {
    if (Tensor T = getConstantValue(V))
      return T;
    auto It = Memo.find(&V);
    if (It != Memo.end())
      return It->second;
    const Node *Def = V.getDefiningNode();
    // Over the budget, the values waiting for this one are memoized as
    // not constant.
    if (!Def || !isFollowed(*Def) || ++Evaluated > Opts.MaxNodes)
      return Tensor();
    Memo[&V] = Tensor(); // a cycle (invalid graph) ends here
    std::vector<Tensor> Operands;
    // Shape and Size read their operand's type, not its value.
    bool ReadsType = Def->is("Shape") || Def->is("Size");
    for (unsigned I = 0; I < Def->getNumOperands(); ++I) {
      const Value *Op = Def->getOperand(I);
      Operands.push_back(Op && !ReadsType ? evaluate(*Op) : Tensor());
      if (Op && !ReadsType && !Operands.back())
        return Tensor();
    }
    std::string Why;
    std::optional<std::vector<Tensor>> R =
        evaluateNode(*Def, Operands, Opset, Opts.Eval, Why);
    if (!R)
      return Tensor();
    for (unsigned I = 0; I < Def->getNumResults() && I < R->size(); ++I)
      if (const Value *Res = Def->getResult(I))
        Memo[Res] = (*R)[I];
    return Memo[&V];
  }

private:
  static bool isFollowed(const Node &N) {
    return N.isOnnxDomain() && !isNondeterministic(N) &&
           isEvaluableOp(N.getOpType()) && N.getSubgraphs().empty();
  }

  int64_t Opset;
  const ConstantConeOptions &Opts;
  llvm::DenseMap<const Value *, Tensor> &Memo;
  unsigned Evaluated = 0;
};

} // namespace

Tensor
onnxopt::evaluateFromConstants(const Value &V, int64_t Opset,
                               const ConstantConeOptions &Opts,
                               llvm::DenseMap<const Value *, Tensor> &Memo) {
  return ConeEvaluator(Opset, Opts, Memo).evaluate(V);
}
