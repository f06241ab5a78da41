//===- OpDef.h - One definition per (domain, op, version range) -*- C++ -*-===//
//
// The op registry: everything onnx-opt knows about an op version, in one
// place. An OpDef gathers, for one (domain, op type, version range):
//
//   - its traits (elementwise, broadcasting, reduction, data-dependent
//     result shape, not a function of its inputs, ...);
//   - the operands whose *values* decide its result shapes;
//   - where its `axes` come from at this version (attribute or input);
//   - hooks, each owned by one engine and declared in its own header:
//     run-time preconditions (Preconditions.h), type inference where ONNX
//     1.12 has none or where we refine it (InferRules.h), dim transfer for
//     the dim analysis (DimRules.h), constant evaluation (EvalRules.h) and
//     local rewrites (PatternRules.h).
//
// The engines (dim analysis, constant evaluator, inference adapter,
// validation, fold-shapes, make-dynamic, simplify's patterns) ask here and
// never compare op type strings. Definitions live in lib/Ops/, one file per
// family (TensorOps, MathOps, NNOps, ControlFlowOps, LateOps for ops newer
// than ONNX 1.12, MicrosoftOps); OpTable.cpp stays the version table in the
// order of ONNX's changelog.
//
// Each family file contributes rows per concern, each row keyed by (domain,
// op, since version). The registry merges them: an op's versions are cut at
// every `since` any concern names, and in each range every concern's row is
// its newest row at or below the range's start. A concern that changed at
// opset 13 (axes became an input) and one that did not are both written
// once.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_OPDEF_H
#define ONNXOPT_OPS_OPDEF_H

#include "onnxopt/IR/Node.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <vector>

namespace onnxopt {

struct DimRule;
struct EvalRule;
struct InferRule;
struct PatternRule;
struct PreconditionRule;

/// What an op is, as the engines need to know it. A bit set.
enum OpTrait : uint64_t {
  /// The first result has exactly the first operand's shape (unary math and
  /// activations, casts, the normalizations' first result, ...).
  ShapePreserving = 1ull << 0,
  /// The result is the operands broadcast numpy-style.
  ElementwiseBroadcasting = 1ull << 1,
  /// A Reduce* op (axes as attribute or input).
  Reduction = 1ull << 2,
  /// Not a function of its inputs (random ops, Dropout): never folded or
  /// merged. Matched in every domain: a custom op of the same name is not
  /// trusted to be pure either.
  Nondeterministic = 1ull << 3,
  /// Its result dims depend on the values of its operands (NonZero, NMS).
  ValueDependentShape = 1ull << 4,
  /// Its result dims may depend on operand values unless some operand is a
  /// constant (TopK's k, Loop's trip count): see DataOperand.
  ValueDependentUnlessConstant = 1ull << 5,
  /// Computes a shape tensor from a tensor's type alone (Shape, Size).
  ReadsTypeOnly = 1ull << 6,
  /// Moves or picks elements without changing them (Reshape, Slice, ...):
  /// the greatest element of an index table survives it.
  MovesElements = 1ull << 7,
  /// A Constant: its value is an attribute.
  ConstantProducer = 1ull << 8,
  /// Its result is its first operand (Identity).
  IdentityOp = 1ull << 9,
  /// Holds subgraphs that run once or not at all (If).
  Conditional = 1ull << 10,
  /// Holds a subgraph that runs a data-dependent number of times (Loop, Scan).
  Looping = 1ull << 11,
  /// A comparison (Equal, Less, ...): bool result from numeric operands.
  Comparison = 1ull << 12,
  /// Conv-like: spatial dims from a kernel (Conv, pools, ...).
  KernelOp = 1ull << 13,
  /// A recurrent layer (LSTM, GRU, RNN).
  Recurrent = 1ull << 14,
  /// Resize-like: output dims from scales or sizes (Resize, Upsample).
  Resampling = 1ull << 15,
  /// One of the ops shape computations are made of between a Shape and
  /// the Reshape that reads it (Cast, Concat, Gather, Identity, Slice,
  /// Squeeze, Unsqueeze, Add, Sub, Mul, Div, Min, Max, Size): fold-shapes
  /// follows a target through them to see which shapes it reads.
  ShapeArithmetic = 1ull << 16,
  /// Its result holds its first operand's elements in the same order under
  /// another shape (Reshape, Flatten, Squeeze, Unsqueeze): a Reshape of its
  /// result may read its operand instead.
  ViewLike = 1ull << 17,
  /// Inserts dims of 1 at its axes (Unsqueeze).
  InsertsUnitDims = 1ull << 18,
  /// Removes the dims of 1 at its axes (Squeeze).
  RemovesUnitDims = 1ull << 19,
  /// Its result has exactly the shape its first operand holds
  /// (ConstantOfShape).
  FillsShape = 1ull << 20,
  /// Add, Sub, Mul, Div: the arithmetic the dim algebra reads as +, -, *
  /// and /.
  Arithmetic = 1ull << 21,
  /// Concat: the operands joined along the `axis` attribute, their other
  /// dims equal.
  Concatenates = 1ull << 22,
  /// Result dim i is operand dim perm[i] (the `perm` attribute, the dims
  /// reversed without it): Transpose.
  PermutesDims = 1ull << 23,
  /// A matrix product over the last two dims; the dims before them
  /// broadcast as an elementwise op's do (MatMul).
  BatchedMatrixProduct = 1ull << 24,
  /// The result is the first operand broadcast with the shape the second
  /// holds, dims aligned from the right as an elementwise op's (Expand).
  BroadcastsToShape = 1ull << 25,
  /// Each result element depends on other elements of the operand along
  /// some dims (softmax, the normalizations, cumulative sums, LRN, Trilu's
  /// positions, ReverseSequence): a dim cut to 1 changes the values, even
  /// where the operand is the same along it.
  MixesAlongDims = 1ull << 26,
  /// Its results are consecutive slices of its first operand along the
  /// `axis` attribute (0 without it); every other dim is the operand's,
  /// element for element (Split).
  SplitsAlongAxis = 1ull << 27,
  /// Its second operand's last dim holds index tuples whose component c
  /// picks along dim batch_dims + c of its first operand (GatherND).
  GathersTuples = 1ull << 28,
  /// Its result is its first operand with amounts added before and after
  /// dims (the `pads` attribute, or operand 1 along operand 3's axes): Pad.
  PadsEdges = 1ull << 29,
  /// Each result position reads a window of its first operand, strides
  /// apart, over that operand padded by its own `pads` (Conv, ConvInteger,
  /// the pools): the dims shrink by the stride. Not ConvTranspose or
  /// MaxUnpool, whose dims grow by it.
  StridedWindow = 1ull << 30,
  /// Its second operand's values pick positions along dim `axis` (0
  /// without it) of its first operand (Gather, GatherElements).
  GathersAlongAxis = 1ull << 31,
  /// Its result counts from its first operand below its second in steps of
  /// its third (Range): with 0 and 1, each element is its own position.
  CountsUp = 1ull << 32,
  /// Its result is the sum of its two operands, broadcast (Add).
  Sums = 1ull << 33,
  /// Its result is the product of its two operands, broadcast (Mul).
  Multiplies = 1ull << 34,
  /// A product of two matrices, each read transposed where its `transA`
  /// or `transB` attribute says so (Gemm): operand 0's dim 1 (dim 0 when
  /// transposed) meets operand 1's dim 0 (dim 1).
  TransposableMatrixProduct = 1ull << 35,
  /// Its result is its first operand cut along the axes it names (Slice:
  /// the `axes` attribute before opset 10, operand 3 after, every axis
  /// when absent); along every other dim the result is the operand,
  /// position for position.
  CutsAlongAxes = 1ull << 36,
  /// Its results are the k largest or smallest elements along `axis` (-1
  /// without it) and their positions, k its second operand from opset 10
  /// (TopK).
  KeepsTopK = 1ull << 37,
  /// Its second operand's last dim holds index tuples whose component c
  /// writes along dim c of its first operand, whose shape the result has
  /// (ScatterND).
  ScattersTuples = 1ull << 38,
};
using OpTraits = uint64_t;

/// An operand whose contents (not only its shape) decide result shapes.
struct ShapeOperand {
  unsigned Index;
  const char *Name;
};

/// Where an op version reads an axes-like list from.
struct AxesSource {
  enum Kind : uint8_t { None, Attribute, Input } K = None;
  /// The operand index (Input) .
  unsigned Index = 0;
  /// The attribute name (Attribute).
  const char *Name = "axes";
};

/// One row of the traits concern: traits, shape operands and where axes
/// come from, for (domain, op) from \p Since on.
struct TraitRow {
  const char *Domain;
  const char *OpType;
  int Since;
  OpTraits Traits;
  llvm::ArrayRef<ShapeOperand> ShapeOperands;
  AxesSource Axes;
  /// For ValueDependentUnlessConstant: the operand that must be constant.
  int DataOperand = -1;
};

/// Everything known about one (domain, op) over [Since, Until).
struct OpDef {
  llvm::StringRef Domain; // "" for ai.onnx
  llvm::StringRef OpType;
  int Since = 1;
  /// One past the last opset this definition covers (INT32_MAX: open).
  int Until = 0;
  OpTraits Traits = 0;
  llvm::ArrayRef<ShapeOperand> ShapeOperands;
  AxesSource Axes;
  int DataOperand = -1;
  const DimRule *Dims = nullptr;
  const EvalRule *Eval = nullptr;
  const InferRule *Infer = nullptr;
  const PreconditionRule *Preconditions = nullptr;
  /// Local rewrites rooted at this op (PatternRules.h), or null.
  const PatternRule *Patterns = nullptr;

  bool has(OpTrait T) const { return (Traits & T) != 0; }
};

/// The definition of \p OpType in \p Domain ("" or "ai.onnx" for the
/// default domain) at \p Opset, or null when the registry has none.
const OpDef *lookupOp(llvm::StringRef Domain, llvm::StringRef OpType,
                      int64_t Opset);

/// The definition of \p N at the opset its model imports for its domain
/// (ai.onnx's when the node is in no model), or null.
const OpDef *lookupOp(const Node &N);

/// The opset \p N's model imports for \p N's domain (the newest known when
/// the node is in no model or the model imports none).
int64_t getNodeOpset(const Node &N);

/// True when \p N's definition has trait \p T.
bool hasTrait(const Node &N, OpTrait T);

/// Every definition, sorted by domain, op type and version (for docs and
/// tests).
std::vector<const OpDef *> getAllOpDefs();

/// \p N's axes at its opset, as its definition says: the `axes` attribute
/// until the version that moved them to an input, the operand after (read
/// by \p ReadInput, the engine's own view of constant operands);
/// std::nullopt when absent or not known.
template <typename ReadInputFn>
std::optional<std::vector<int64_t>> readAxes(const Node &N, const OpDef *D,
                                             ReadInputFn ReadInput) {
  if (!D || D->Axes.K == AxesSource::None)
    return std::nullopt;
  if (D->Axes.K == AxesSource::Attribute)
    return N.getAttrInts(D->Axes.Name);
  return ReadInput(D->Axes.Index);
}

//===----------------------------------------------------------------------===//
// Building the registry (lib/Ops only)
//===----------------------------------------------------------------------===//

/// Collects the rows of every family; the registry merges them once.
class OpRegistryBuilder {
public:
  void addTraits(llvm::ArrayRef<TraitRow> Rows);
  void addDims(llvm::ArrayRef<DimRule> Rows);
  void addEval(llvm::ArrayRef<EvalRule> Rows);
  void addInfer(llvm::ArrayRef<InferRule> Rows);
  void addPreconditions(llvm::ArrayRef<PreconditionRule> Rows);
  void addPatterns(llvm::ArrayRef<PatternRule> Rows);

  struct Key {
    llvm::StringRef Domain, OpType;
    int Since;
  };
  std::vector<std::pair<Key, const TraitRow *>> Traits;
  std::vector<std::pair<Key, const DimRule *>> Dims;
  std::vector<std::pair<Key, const EvalRule *>> Evals;
  std::vector<std::pair<Key, const InferRule *>> Infers;
  std::vector<std::pair<Key, const PreconditionRule *>> Preconditions;
  std::vector<std::pair<Key, const PatternRule *>> Patterns;
};

namespace ops {
// One per family file (lib/Ops/<Family>.cpp).
void registerTensorOps(OpRegistryBuilder &B);
void registerMathOps(OpRegistryBuilder &B);
void registerNNOps(OpRegistryBuilder &B);
void registerControlFlowOps(OpRegistryBuilder &B);
void registerLateOps(OpRegistryBuilder &B);
void registerMicrosoftOps(OpRegistryBuilder &B);
} // namespace ops

} // namespace onnxopt

#endif // ONNXOPT_OPS_OPDEF_H
