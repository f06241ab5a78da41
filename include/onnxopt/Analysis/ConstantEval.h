//===- ConstantEval.h - Evaluate ONNX ops on constant inputs ---*- C++ -*-===//
//
// A small interpreter for the ops that shape arithmetic is made of (Shape,
// Gather, Slice, Concat, Unsqueeze, Cast, Add, Range, Reshape, ...), used by
// constant-fold, fold-shapes, freeze-dims and the pattern driver's fold
// hook. It evaluates one node of the default domain whose operands are
// constants, following the node's opset version (axes as attribute or
// input, Slice with attributes before opset 10, numpy or legacy
// broadcasting, ...), and refuses with a reason instead of guessing: unknown
// ops, unsupported element types, invalid operands and results over the
// size budget all say why. Each op's evaluation is the EvalRule of its
// definition in the op registry (onnxopt/Ops/EvalRules.h).
//
// What counts as a constant (getConstantValue) is in OpFacts.h, which this
// header includes; ops with the Nondeterministic trait are never folded.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_CONSTANTEVAL_H
#define ONNXOPT_ANALYSIS_CONSTANTEVAL_H

#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/IR/Tensor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

class DiagnosticEngine;
class Node;
class Value;

struct ConstantEvalOptions {
  /// Refuse to produce a result of more than this many bytes (0: no limit).
  /// A folded Expand or ConstantOfShape can be megabytes. `Constant` nodes
  /// are exempt: evaluating one only moves its tensor.
  uint64_t MaxResultBytes = 1 << 20;
  /// Also evaluate ops whose float results a runtime may compute
  /// differently in the last bits (Cos, Sin, a float MatMul's sums): for
  /// reading what a baked constant is (make-dynamic), never for folding.
  bool AllowInexact = false;
};

/// Evaluates \p N, an op of the default domain, at opset \p Opset.
/// \p Operands holds, for each operand of \p N, its constant value or a null
/// Tensor (not constant, or omitted). Shape and Size need no value: they read
/// the operand's recorded type. Returns one tensor per result of \p N (a null
/// Tensor for an omitted result), each named after its result value, or
/// std::nullopt with the reason in \p Why (lowercase, no trailing period).
std::optional<std::vector<Tensor>>
evaluateNode(const Node &N, llvm::ArrayRef<Tensor> Operands, int64_t Opset,
             const ConstantEvalOptions &Opts, std::string &Why);

/// True if evaluateNode knows ops of type \p OpType (default domain).
bool isEvaluableOp(llvm::StringRef OpType);

/// The one fold path, shared by constant-fold and the pattern driver's fold
/// hook (GreedyRewriteConfig::Fold): evaluates \p N, at the opset its model
/// imports, from the constant values of its operands (getConstantValue;
/// Shape and Size read their operand's recorded type), then checks each
/// used result against the declared type of its value. Returns one tensor
/// per result, or std::nullopt: \p Why stays empty when \p N is no
/// candidate (another domain, no evaluation, random, holds subgraphs, an
/// operand is not constant) and says why the evaluation refused otherwise;
/// a result that contradicts its declared type is also warned about on
/// \p Diags.
std::optional<std::vector<Tensor>> foldNode(const Node &N,
                                            const ConstantEvalOptions &Opts,
                                            DiagnosticEngine &Diags,
                                            std::string &Why);

/// Limits of evaluateFromConstants.
struct ConstantConeOptions {
  ConstantEvalOptions Eval;
  /// Give up after evaluating this many nodes for one value: the values
  /// asked for are small shape tensors, whose cones are small.
  unsigned MaxNodes = 64;
};

/// The value of \p V when the model computes it from constants only, with
/// default-domain ops evaluateNode knows, at opset \p Opset; a null Tensor
/// otherwise. Shape and Size are evaluated from their operand's recorded
/// type, so only when the dims they read are numbers (never the sizes of a
/// dynamic value); random ops (the Nondeterministic trait) are never
/// evaluated.
/// \p Memo keeps the results (null: not constant, or over the budget) for
/// later calls on the same graph with the same types.
Tensor evaluateFromConstants(const Value &V, int64_t Opset,
                             const ConstantConeOptions &Opts,
                             llvm::DenseMap<const Value *, Tensor> &Memo);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_CONSTANTEVAL_H
