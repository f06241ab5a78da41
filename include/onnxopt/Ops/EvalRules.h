//===- EvalRules.h - Op registry hooks: EvalRule ----------------*- C++ -*-===//
//
// The EvalRule hook of an op definition (OpDef.h): constant evaluation. Each
// rule computes an op's results from its constant operands through an
// EvalContext, which lib/Analysis/ConstantEval.cpp (evaluateNode) builds per
// node, much as MLIR's fold hook reads constant operands from its adaptor.
// The context's helpers (reading integer operands, the op's axes, checking
// the size budget, building results) are implemented in
// lib/Ops/EvalSupport.cpp, beside the numeric helpers the rules share.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_EVALRULES_H
#define ONNXOPT_OPS_EVALRULES_H

#include "onnxopt/IR/Tensor.h"
#include "onnxopt/Ops/OpDef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

/// One tensor per result of the node (a null Tensor for an omitted one), or
/// std::nullopt when the rule refused (the reason is in the context).
using EvalResults = std::optional<std::vector<Tensor>>;

/// What a rule evaluates: one node, the constant values of its operands, the
/// opset it is evaluated at and the size budget of its results. A rule that
/// refuses says why (lowercase, no trailing period) through fail or error.
class EvalContext {
public:
  /// \p Operands holds, per operand of \p N, its constant value or a null
  /// Tensor (not constant, or omitted). \p Def is \p N's definition at
  /// \p Opset. Results over \p MaxResultBytes (0: no limit) are refused.
  /// \p AllowInexact: the caller reads values, it does not fold them
  /// (ConstantEvalOptions::AllowInexact).
  EvalContext(const Node &N, const OpDef &Def, llvm::ArrayRef<Tensor> Operands,
              int64_t Opset, uint64_t MaxResultBytes, std::string &Why,
              bool AllowInexact = false)
      : N(N), Def(Def), Operands(Operands), Opset(Opset),
        MaxResultBytes(MaxResultBytes), Why(Why), AllowInexact(AllowInexact) {}

  const Node &getNode() const { return N; }
  /// True when results that may differ from a runtime's in the last bits
  /// are wanted (see ConstantEvalOptions::AllowInexact).
  bool allowsInexact() const { return AllowInexact; }
  const OpDef &getDef() const { return Def; }
  int64_t getOpset() const { return Opset; }

  /// Records why the rule refused; `return Ctx.fail(...)` in a rule.
  std::nullopt_t fail(const llvm::Twine &Msg) {
    Why = Msg.str();
    return std::nullopt;
  }
  /// Records why the rule refused; for helpers that return a bool.
  bool error(const llvm::Twine &Msg) {
    Why = Msg.str();
    return false;
  }

  //===--------------------------------------------------------------------===//
  // Operands
  //===--------------------------------------------------------------------===//

  /// True when the node has operand \p I and it is not omitted.
  bool hasOperand(unsigned I) const;
  /// The constant value of operand \p I, or null with the reason recorded.
  const Tensor *constOperand(unsigned I);
  /// The integer contents of operand \p I.
  std::optional<std::vector<int64_t>> intOperand(unsigned I);
  /// A single integer (a scalar or a one-element tensor).
  std::optional<int64_t> scalarIntOperand(unsigned I);
  /// The node's axes, where its definition reads them at this opset
  /// (OpDef::Axes: the attribute, or an operand read by intOperand).
  /// \p Axes is std::nullopt when the node has none; false when an axes
  /// operand is there but unreadable.
  bool getAxes(std::optional<std::vector<int64_t>> &Axes);
  /// Resolves a negative \p Axis against \p Rank; false when out of range
  /// (\p What names the axis in the reason).
  bool normalizeAxis(int64_t &Axis, int64_t Rank, llvm::StringRef What);
  /// normalizeAxis on each of \p Axes, which must not repeat an axis.
  bool normalizeAxes(std::vector<int64_t> &Axes, int64_t Rank);

  //===--------------------------------------------------------------------===//
  // Results
  //===--------------------------------------------------------------------===//

  /// False (with the reason) when \p NumElements of type \p ET exceed the
  /// size budget or the type has no fixed size.
  bool fitsBudget(int32_t ET, int64_t NumElements);
  /// The name of result \p I (empty when omitted).
  llvm::StringRef resultName(unsigned I) const;
  /// A single result.
  EvalResults one(Tensor T) { return std::vector<Tensor>{std::move(T)}; }
  /// A tensor named after result \p Result whose element K is element
  /// Src[K] of \p In, of dims \p Dims.
  std::optional<Tensor> take(const Tensor &In, llvm::ArrayRef<int64_t> Dims,
                             llvm::ArrayRef<int64_t> Src, unsigned Result = 0);
  /// \p In with other dims and the same elements, as the single result.
  EvalResults reshaped(const Tensor &In, llvm::ArrayRef<int64_t> Dims);
  /// The little-endian element bytes of \p T (in \p Storage when they had
  /// to be unpacked); false when \p T has no fixed-size elements or a wrong
  /// byte count.
  bool rawBytes(const Tensor &T, std::string &Storage, llvm::StringRef &Out);

private:
  const Node &N;
  const OpDef &Def;
  llvm::ArrayRef<Tensor> Operands;
  int64_t Opset;
  uint64_t MaxResultBytes;
  std::string &Why;
  bool AllowInexact;
};

/// Computes a node's results from its constant operands, or refuses
/// through Ctx.fail.
using EvalFn = EvalResults (*)(EvalContext &Ctx);

/// One row: (domain, op) from Since on. The first three fields are the
/// registry's key (OpRegistryBuilder). Ops that differ only by their
/// operation (Add and Sub, Equal and Less, ...) share one evaluator, a
/// template instantiated per operation: the row names the operation.
struct EvalRule {
  const char *Domain;
  const char *OpType;
  int Since;
  EvalFn Eval;
};

} // namespace onnxopt

#endif // ONNXOPT_OPS_EVALRULES_H
