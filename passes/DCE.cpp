//===- DCE.cpp - Remove nodes and constants nobody uses -------------------===//
//
// Before:  A = Relu(X)        # A is used by nobody
//          B = Add(A, W)      # B is used by nobody
//          Y = Sigmoid(X)     # Y is a graph output
//          initializer W, initializer Unused
// After:   Y = Sigmoid(X)
//
// Liveness starts at the main graph's outputs and flows backwards through
// operands. A live node makes the outputs of its subgraphs live, and a node
// inside a subgraph makes the outer values it reads live, so a main-graph
// node used only from an If/Loop/Scan body survives. Every node is visited
// once and every operand is followed once: linear in the size of the model.
//
// Nodes are pure: nodes of custom domains too, unless keep-custom-ops is set
// (then they, and the nodes holding the subgraphs they live in, are roots).
// Graph inputs are the interface and are never removed, not even from
// subgraphs; constants (initializers that are not inputs) are removed when
// unused. Value-infos of removed values go with them, and value-infos that
// name no value at all (Graph::OrphanValueInfos) are dropped.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <vector>

using namespace onnxopt;

namespace {

class DCEPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "dce"; }
  llvm::StringRef getDescription() const override {
    return "remove nodes whose results are unused, unused constants and "
           "orphan value-infos, in every graph";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    Graph &Main = M.getGraph();
    markLive(Main);

    std::vector<Node *> Dead;
    collectDead(Main, Dead);
    if (!Dead.empty())
      Ctx.Changed = true;
    // Dead nodes may use each other in any order (and from inside their
    // subgraphs); release all their uses first so that each erase finds its
    // results unused. Newest first: a value read by many dead nodes then
    // loses each use from the back of its use list (linear, not quadratic).
    for (Node *N : llvm::reverse(Dead))
      dropReferences(*N);
    Rewriter R(M, Ctx.getDiags());
    for (Node *N : llvm::reverse(Dead))
      R.eraseNode(N);

    sweepGraphs(Main, Ctx.Changed);
    return success();
  }

private:
  Option<bool> KeepCustomOps{
      *this, "keep-custom-ops",
      "treat nodes of non-ONNX domains as having side effects (keep them)",
      false};

  llvm::DenseSet<Node *> Live;
  llvm::SmallVector<Node *, 64> Worklist;

  void markNode(Node *N) {
    if (N && Live.insert(N).second)
      Worklist.push_back(N);
  }
  void markValue(Value *V) {
    if (V)
      markNode(V->getDefiningNode());
  }

  /// Marks everything the main graph's outputs (and, optionally, custom
  /// nodes) need.
  void markLive(Graph &Main) {
    Live.clear();
    for (Value *V : Main.getOutputs())
      markValue(V);
    if (KeepCustomOps)
      Main.walk([&](Node &N) {
        if (!N.isOnnxDomain() && !N.getDomain().startswith("ai.onnx."))
          markNode(&N);
      });

    while (!Worklist.empty()) {
      Node *N = Worklist.pop_back_val();
      for (Value *V : N->getOperands())
        markValue(V);
      for (Graph *Sub : N->getSubgraphs())
        for (Value *V : Sub->getOutputs())
          markValue(V);
      // A live node inside a subgraph needs its holder; this only matters
      // for side-effect roots, a use from the body already implies it.
      if (Graph *G = N->getParentGraph())
        markNode(G->getParentNode());
    }
  }

  /// Releases every use held by \p N and by the nodes and outputs of its
  /// subgraphs.
  static void dropReferences(Node &N) {
    N.dropAllOperands();
    for (Graph *Sub : N.getSubgraphs()) {
      for (Node &Inner : Sub->getNodes())
        dropReferences(Inner);
      while (Sub->getNumOutputs())
        Sub->eraseOutput(Sub->getNumOutputs() - 1);
    }
  }

  /// Dead nodes of \p G and of the subgraphs of its live nodes (the bodies
  /// of dead nodes go away with them).
  void collectDead(Graph &G, std::vector<Node *> &Dead) {
    for (Node &N : G.getNodes()) {
      if (!Live.count(&N)) {
        Dead.push_back(&N);
        continue;
      }
      for (Graph *Sub : N.getSubgraphs())
        collectDead(*Sub, Dead);
    }
  }

  /// Removes unused constants and orphan value-infos from \p G and its
  /// subgraphs (only live nodes remain at this point).
  void sweepGraphs(Graph &G, bool &Changed) {
    size_t Removed = G.eraseUnusedConstants();
    if (Removed || !G.OrphanValueInfos.empty())
      Changed = true;
    G.OrphanValueInfos.clear();

    for (Node &N : G.getNodes())
      for (Graph *Sub : N.getSubgraphs())
        sweepGraphs(*Sub, Changed);
  }
};

} // namespace

std::unique_ptr<Pass> onnxopt::createDCEPass() {
  return std::make_unique<DCEPass>();
}
