//===- ConstantFold.cpp - Fold nodes whose inputs are all constants -------===//
//
// Before:  (float[2,3] X) => (float[6] Y) {
//            S = Shape(X)                     # X is static: S = [2,3]
//            P = ReduceProd<keepdims=1>(S)    # [6]
//            Y = Reshape(X, P)
//          }
// After:   (float[2,3] X) => (float[6] Y) <int64[1] P = {6}> {
//            Y = Reshape(X, P)
//          }
//
// Evaluates, in every graph and in topological order, each node of the
// default domain whose operands are all constants (initializers that are
// not graph inputs, `Constant` nodes, results folded before), plus Shape and
// Size of values whose recorded type is static, and replaces its results by
// initializers named like them. A result that is a graph output cannot become
// an initializer without changing the interface: it becomes a `Constant`
// node with the same name instead (so does every result in models before
// IR 4, where initializers must be graph inputs). Results over `size-limit`
// bytes, random ops, ops with subgraphs and ops the evaluator does not know
// stay as they are. `Constant` nodes become initializers too
// (`keep-constant-nodes` keeps them). The folded nodes and what only they used
// (producers, Constant nodes, initializers) are erased; other dead code is left
// to dce.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"
#include <memory>
#include <vector>

#define DEBUG_TYPE "constant-fold"

using namespace onnxopt;

namespace {

class ConstantFolder {
public:
  ConstantFolder(Model &M, DiagnosticEngine &Diags, ConstantEvalOptions Opts,
                 bool KeepConstantNodes)
      : M(M), Diags(Diags), R(M, Diags), Opts(Opts),
        KeepConstantNodes(KeepConstantNodes),
        UseConstantNodes(M.getIrVersion() < 4) {}

  /// Folds the nodes of \p G (not of its subgraphs: the pass manager
  /// visits those) and erases what folding left dead.
  void run(Graph &G) {
    foldGraph(G);
    eraseDeadChains();
  }
  unsigned getNumFolded() const { return NumFolded; }
  unsigned getNumOverBudget() const { return NumOverBudget; }

private:
  void foldGraph(Graph &G);
  bool foldNode(Node &N);
  bool replaceResult(Node &N, Value *Result, Tensor T);
  void eraseDeadChains();

  Model &M;
  DiagnosticEngine &Diags;
  Rewriter R;
  ConstantEvalOptions Opts;
  bool KeepConstantNodes;
  /// Before IR 4 every initializer is a graph input: fold into Constant
  /// nodes instead.
  bool UseConstantNodes;
  unsigned NumFolded = 0, NumOverBudget = 0;
  /// Folded nodes, in folding order; erased at the end when dead.
  std::vector<Node *> Folded;
};

bool hasUsedResult(const Node &N) {
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (const Value *V = N.getResult(I))
      if (!V->use_empty())
        return true;
  return false;
}

void ConstantFolder::foldGraph(Graph &G) {
  std::vector<Node *> Nodes;
  for (Node &N : G.getNodes())
    Nodes.push_back(&N);
  for (Node *N : Nodes) {
    if (foldNode(*N)) {
      ++NumFolded;
      Folded.push_back(N);
    }
  }
}

bool ConstantFolder::foldNode(Node &N) {
  if (!hasUsedResult(N))
    return false;
  const OpDef *D = lookupOp(N);
  bool IsConstant = D && D->has(ConstantProducer);
  if (IsConstant && (KeepConstantNodes || UseConstantNodes ||
                     N.getResult(0)->isGraphOutput()))
    return false;

  // The fold path the pattern driver's fold hook takes too: evaluation,
  // then the check against the declared types.
  std::string Why;
  std::optional<std::vector<Tensor>> Results =
      onnxopt::foldNode(N, Opts, Diags, Why);
  if (!Results) {
    if (!Why.empty())
      LLVM_DEBUG(llvm::dbgs()
                 << describe(N) << ": not folded: " << Why << "\n");
    if (llvm::StringRef(Why).contains("exceeds the size limit"))
      ++NumOverBudget;
    return false;
  }
  bool Changed = false;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *V = N.getResult(I);
    if (V && !V->use_empty())
      Changed |= replaceResult(N, V, std::move((*Results)[I]));
  }
  return Changed;
}

bool ConstantFolder::replaceResult(Node &N, Value *Result, Tensor T) {
  return R.replaceWithConstant(*Result, std::move(T)) != nullptr;
}

void ConstantFolder::eraseDeadChains() {
  // The folded nodes, then whatever only they kept alive.
  R.eraseDeadChains(Folded);
}

class ConstantFoldPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "constant-fold"; }
  llvm::StringRef getDescription() const override {
    return "evaluate nodes whose inputs are all constants and replace their "
           "results by initializers, in every graph";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    if (SizeLimit < 0)
      return emitError(Ctx.getDiags()) << "size-limit must not be negative";
    ConstantEvalOptions Opts;
    Opts.MaxResultBytes = static_cast<uint64_t>(SizeLimit.getValue());
    // Every graph, parent first: a body reads the outer values already
    // folded (the framework's walk).
    uint64_t OverBudget = 0;
    for (Graph *G : collectGraphs(M, GraphPass::Order::ParentFirst)) {
      ConstantFolder Folder(M, Ctx.getDiags(), Opts, KeepConstantNodes);
      Folder.run(*G);
      if (Folder.getNumFolded())
        Ctx.Changed = true;
      NumFolded += Folder.getNumFolded();
      OverBudget += Folder.getNumOverBudget();
    }
    NumOverBudget += OverBudget;
    if (OverBudget)
      emitRemark(Ctx.getDiags())
          << OverBudget << " node(s) not folded: result over size-limit ("
          << SizeLimit << " bytes)";
    return success();
  }

private:
  Statistic NumFolded{this, "num-folded", "Nodes folded to constants"};
  Statistic NumOverBudget{this, "num-over-budget",
                          "Nodes not folded: result over size-limit"};
  Option<int64_t> SizeLimit{*this, "size-limit",
                            "largest result to fold, in bytes (0: no limit)",
                            1 << 20, atLeast(0)};
  Option<bool> KeepConstantNodes{
      *this, "keep-constant-nodes",
      "leave Constant nodes as they are instead of making them initializers",
      false};
};

} // namespace

std::unique_ptr<Pass> onnxopt::createConstantFoldPass() {
  return std::make_unique<ConstantFoldPass>();
}
