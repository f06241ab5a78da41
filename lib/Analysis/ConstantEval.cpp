//===- ConstantEval.cpp - Evaluate ONNX ops on constant inputs ------------===//
//
// The evaluator dispatches through the op registry: each op's evaluation is
// the EvalRule of its definition (lib/Ops, "Constant evaluation" sections),
// run on an EvalContext built here. What is left here is what no op owns:
// the checks every evaluation makes, following a value's cone of constants,
// and folding a node of a model (the path constant-fold and the pattern
// driver's fold hook share).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "llvm/ADT/Twine.h"
#include <algorithm>
#include <climits>

using namespace onnxopt;

namespace {

using Results = std::optional<std::vector<Tensor>>;

/// The definition of \p OpType of the default domain at \p Opset when it
/// can be evaluated, else null. Opsets below 1 (a model that imports none)
/// read the oldest definitions.
const OpDef *lookupEvaluable(llvm::StringRef OpType, int64_t Opset) {
  const OpDef *Def = lookupOp("", OpType, std::max<int64_t>(Opset, 1));
  return Def && Def->Eval ? Def : nullptr;
}

/// evaluateNode once \p N's definition \p Def (null: none that evaluates)
/// is known.
Results evaluateWith(const Node &N, const OpDef *Def,
                     llvm::ArrayRef<Tensor> Operands, int64_t Opset,
                     const ConstantEvalOptions &Opts, std::string &Why) {
  Why.clear();
  if (!N.isOnnxDomain()) {
    Why = ("op of domain '" + N.getDomain() + "'").str();
    return std::nullopt;
  }
  if (!Def) {
    Why = ("op " + N.getOpType() + " is not supported").str();
    return std::nullopt;
  }
  if (N.getNumResults() == 0) {
    Why = "node has no results";
    return std::nullopt;
  }
  EvalContext Ctx(N, *Def, Operands, Opset, Opts.MaxResultBytes, Why,
                  Opts.AllowInexact);
  Results R = Def->Eval->Eval(Ctx);
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

} // namespace

std::optional<std::vector<Tensor>>
onnxopt::evaluateNode(const Node &N, llvm::ArrayRef<Tensor> Operands,
                      int64_t Opset, const ConstantEvalOptions &Opts,
                      std::string &Why) {
  const OpDef *Def =
      N.isOnnxDomain() ? lookupEvaluable(N.getOpType(), Opset) : nullptr;
  return evaluateWith(N, Def, Operands, Opset, Opts, Why);
}

bool onnxopt::isEvaluableOp(llvm::StringRef OpType) {
  // Every evaluated op has a rule from its first version on: ask the newest.
  return lookupEvaluable(OpType, INT32_MAX - 1) != nullptr;
}

//===----------------------------------------------------------------------===//
// Folding a node of a model
//===----------------------------------------------------------------------===//

namespace {

/// The definition of \p N when it is a candidate for folding at \p Opset:
/// a default-domain op with an evaluation, a function of its inputs, and
/// without subgraphs.
const OpDef *getFoldableDef(const Node &N, int64_t Opset) {
  if (!N.isOnnxDomain() || !N.getSubgraphs().empty())
    return nullptr;
  const OpDef *Def = lookupEvaluable(N.getOpType(), Opset);
  return Def && !Def->has(Nondeterministic) ? Def : nullptr;
}

/// Checks a folded value against the declared type of its result; warns on
/// \p Diags when they contradict.
bool agreesWithDeclared(const Node &N, const Value &V, const Tensor &T,
                        DiagnosticEngine &Diags, std::string &Why) {
  const Type &Declared = V.getType();
  if (Declared.isNone())
    return true;
  std::vector<Dim> Dims;
  for (int64_t D : T.getDims())
    Dims.push_back(Dim::known(D));
  Type Folded = Type::tensor(T.getElemType(), Dims);
  Type Merged = Declared;
  std::string Conflict;
  if (mergeInferredType(Merged, Folded, Conflict))
    return true;
  emitWarning(Diags, N) << "not folded: the value of '" << V.getName()
                        << "' is " << Folded.str()
                        << ", which contradicts its declared type "
                        << Declared.str() << " (" << Conflict << ")";
  Why =
      "the value contradicts the declared type of '" + V.getName().str() + "'";
  return false;
}

} // namespace

std::optional<std::vector<Tensor>>
onnxopt::foldNode(const Node &N, const ConstantEvalOptions &Opts,
                  DiagnosticEngine &Diags, std::string &Why) {
  Why.clear();
  const Graph *G = N.getParentGraph();
  int64_t Opset =
      G ? G->getModel().getOpsetVersion(N.getDomain()) : getNodeOpset(N);
  const OpDef *Def = getFoldableDef(N, Opset);
  if (!Def)
    return std::nullopt;
  // Shape and Size read only the type of their operand.
  bool TypeOnly = Def->has(ReadsTypeOnly);
  std::vector<Tensor> Operands;
  for (const Value *V : N.getOperands()) {
    // A value rewrite: a default the caller may override is no constant.
    Operands.push_back(V ? getFoldableConstantValue(*V) : Tensor());
    if (V && Operands.back().isNull() && !TypeOnly)
      return std::nullopt;
  }
  std::optional<std::vector<Tensor>> Results =
      evaluateWith(N, Def, Operands, Opset, Opts, Why);
  if (!Results)
    return std::nullopt;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    const Value *V = N.getResult(I);
    if (V && !V->use_empty() &&
        !agreesWithDeclared(N, *V, (*Results)[I], Diags, Why))
      return std::nullopt;
  }
  return Results;
}

//===----------------------------------------------------------------------===//
// Cones of constants
//===----------------------------------------------------------------------===//

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
    const OpDef *Op = Def ? getFoldableDef(*Def, Opset) : nullptr;
    if (!Op || ++Evaluated > Opts.MaxNodes)
      return Tensor();
    Memo[&V] = Tensor(); // a cycle (invalid graph) ends here
    std::vector<Tensor> Operands;
    // Shape and Size read their operand's type, not its value.
    bool ReadsType = Op->has(ReadsTypeOnly);
    for (unsigned I = 0; I < Def->getNumOperands(); ++I) {
      const Value *Operand = Def->getOperand(I);
      Operands.push_back(Operand && !ReadsType ? evaluate(*Operand) : Tensor());
      if (Operand && !ReadsType && !Operands.back())
        return Tensor();
    }
    std::string Why;
    std::optional<std::vector<Tensor>> R =
        evaluateWith(*Def, Op, Operands, Opset, Opts.Eval, Why);
    if (!R)
      return Tensor();
    for (unsigned I = 0; I < Def->getNumResults() && I < R->size(); ++I)
      if (const Value *Res = Def->getResult(I))
        Memo[Res] = (*R)[I];
    return Memo[&V];
  }

private:
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
