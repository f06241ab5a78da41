//===- EvalSupport.h - What the constant evaluation rules share -*- C++ -*-===//
//
// Private to lib/Ops: the helpers of the "Constant evaluation" sections of
// the family files. Two representations, chosen per op:
//  - data movement (Gather, Slice, Concat, Transpose, Expand, Tile, Split,
//    and the reshaping ops) works on raw little-endian bytes through index
//    maps (EvalContext::take), so any fixed-size element type moves and
//    nothing is converted;
//  - arithmetic, comparison, Cast and reductions convert their operands to
//    a Literal (integers and bools widened to int64, floating types to
//    double), compute, and round back to the result type when the tensor is
//    built. For float/float16 one +,-,*,/ or sqrt in double followed by one
//    rounding is exactly the correctly rounded result.
// Integer arithmetic wraps to the element width, as runtimes do; division by
// zero and float-to-integer casts out of range are refused instead.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_OPS_EVALSUPPORT_H
#define ONNXOPT_LIB_OPS_EVALSUPPORT_H

#include "onnxopt/IR/ElementType.h"
#include "onnxopt/Ops/EvalRules.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {
namespace eval {

/// ONNX's element type numbers, spelled as TensorProto spells them, without
/// the protobuf header.
struct TP {
  static constexpr int32_t FLOAT = int32_t(ElementType::Float);
  static constexpr int32_t UINT8 = int32_t(ElementType::UInt8);
  static constexpr int32_t INT8 = int32_t(ElementType::Int8);
  static constexpr int32_t UINT16 = int32_t(ElementType::UInt16);
  static constexpr int32_t INT16 = int32_t(ElementType::Int16);
  static constexpr int32_t INT32 = int32_t(ElementType::Int32);
  static constexpr int32_t INT64 = int32_t(ElementType::Int64);
  static constexpr int32_t BOOL = int32_t(ElementType::Bool);
  static constexpr int32_t FLOAT16 = int32_t(ElementType::Float16);
  static constexpr int32_t DOUBLE = int32_t(ElementType::Double);
  static constexpr int32_t UINT32 = int32_t(ElementType::UInt32);
  static constexpr int32_t UINT64 = int32_t(ElementType::UInt64);
  static constexpr int32_t BFLOAT16 = int32_t(ElementType::BFloat16);
};

/// Where an op version reads a parameter from (Slice's bounds, Reshape's
/// shape, Clip's bounds, ...): rows of different versions instantiate one
/// evaluator with different sources.
enum class From { Attribute, Input };

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

bool isRealType(int32_t ET);
bool isIntType(int32_t ET);
inline bool isNumericType(int32_t ET) {
  return isRealType(ET) || isIntType(ET);
}
/// The type's name for messages ("type N" when it has none).
std::string typeName(int32_t ET);

/// Truncates \p V to the width of integer type \p ET (two's complement, as
/// runtimes do); bools become 0 or 1.
int64_t wrapInt(int32_t ET, uint64_t V);

/// Cast-1 names its target type with a string; 0 when unknown.
int32_t castTargetFromName(llvm::StringRef Name);
/// Converts one element to integer type \p To; false if not representable
/// (NaN, infinity, out of range: runtimes disagree there).
bool realToInt(double D, int32_t To, int64_t &Out);
/// Converts an integer of type \p From to floating type \p To, rounding once.
double intToReal(int64_t V, int32_t From, int32_t To);

//===----------------------------------------------------------------------===//
// Dims and index maps
//===----------------------------------------------------------------------===//

/// Checked product of dims; std::nullopt for negative dims or above 2^62.
std::optional<int64_t> numElements(llvm::ArrayRef<int64_t> Dims);
/// Row-major strides of \p Dims.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> Dims);
/// For every element of a row-major tensor of \p Dims, in order,
/// Offset + sum(index[d] * Strides[d]).
std::vector<int64_t> stridedIndices(llvm::ArrayRef<int64_t> Dims,
                                    llvm::ArrayRef<int64_t> Strides,
                                    int64_t Offset = 0);
/// Numpy (multidirectional) broadcasting of several shapes.
bool broadcastDims(llvm::ArrayRef<std::vector<int64_t>> Shapes,
                   std::vector<int64_t> &Out);
/// Index map reading a tensor of \p In broadcast to \p Out.
std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> In,
                                      llvm::ArrayRef<int64_t> Out);
/// "[2,3]".
std::string formatDims(llvm::ArrayRef<int64_t> Dims);

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
  static Literal make(int32_t ET, std::vector<int64_t> Dims);
};

/// \p T as numbers; std::nullopt for element types a Literal cannot hold.
std::optional<Literal> toLiteral(const Tensor &T);
/// \p L rounded to its element type, named \p Name.
Tensor fromLiteral(const Literal &L, llvm::StringRef Name);

/// Operand \p I of the node as a Literal, or std::nullopt with the reason.
std::optional<Literal> literalOperand(EvalContext &Ctx, unsigned I);
/// \p L as the node's single result (within the budget).
EvalResults oneLiteral(EvalContext &Ctx, const Literal &L);

} // namespace eval
} // namespace onnxopt

#endif // ONNXOPT_LIB_OPS_EVALSUPPORT_H
