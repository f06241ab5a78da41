//===- DCE.cpp - Remove nodes and constants nobody uses -------------------===//
//
// Before:  A = Relu(X)        # A is used by nobody
//          B = Add(A, W)      # B is used by nobody
//          Y = Sigmoid(X)     # Y is a graph output
//          initializer W, initializer Unused
// After:   Y = Sigmoid(X)
//
// A GraphPass, bodies first. In each graph, liveness starts at the graph's
// outputs and flows backwards through operands; a live node also needs the
// values of this graph that its subgraphs read (outer-scope captures), so a
// node used only from an If/Loop/Scan body survives. Bodies are cleaned
// before the graph holding them, so a capture that a body stopped reading
// no longer keeps its producer alive. Each graph is linear in its size plus
// the size of the bodies of its live nodes.
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

class DCEPass : public GraphPass {
public:
  llvm::StringRef getArgument() const override { return "dce"; }
  llvm::StringRef getDescription() const override {
    return "remove nodes whose results are unused, unused constants and "
           "orphan value-infos, in every graph";
  }

  LogicalResult runOnGraph(Graph &G, Model &M, PassContext &Ctx) override {
    llvm::DenseSet<Node *> Live;
    llvm::SmallVector<Node *, 64> Worklist;
    auto MarkNode = [&](Node *N) {
      if (N && Live.insert(N).second)
        Worklist.push_back(N);
    };
    // Only producers in G: values of outer graphs are their graph's business.
    auto MarkValue = [&](Value *V) {
      if (Node *Def = V ? V->getDefiningNode() : nullptr)
        if (Def->getParentGraph() == &G)
          MarkNode(Def);
    };

    for (Value *V : G.getOutputs())
      MarkValue(V);
    if (KeepCustomOps)
      for (Node &N : G.getNodes())
        if (hasSideEffectRoot(N))
          MarkNode(&N);
    while (!Worklist.empty()) {
      Node *N = Worklist.pop_back_val();
      for (Value *V : N->getOperands())
        MarkValue(V);
      for (Graph *Sub : N->getSubgraphs()) {
        for (Value *V : Sub->getOutputs())
          MarkValue(V);
        Sub->walk([&](Node &Inner) {
          for (Value *V : Inner.getOperands())
            MarkValue(V);
        });
      }
    }

    std::vector<Node *> Dead;
    for (Node &N : G.getNodes())
      if (!Live.count(&N))
        Dead.push_back(&N);
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

    if (G.eraseUnusedConstants() || !G.OrphanValueInfos.empty())
      Ctx.Changed = true;
    G.OrphanValueInfos.clear();
    return success();
  }

private:
  Option<bool> KeepCustomOps{
      *this, "keep-custom-ops",
      "treat nodes of non-ONNX domains as having side effects (keep them)",
      false};

  static bool isSideEffectRoot(const Node &N) {
    return !N.isOnnxDomain() && !N.getDomain().startswith("ai.onnx.");
  }
  /// \p N is a custom node, or holds one somewhere in its subgraphs.
  static bool hasSideEffectRoot(Node &N) {
    if (isSideEffectRoot(N))
      return true;
    bool Found = false;
    for (Graph *Sub : N.getSubgraphs())
      Sub->walk([&](Node &Inner) { Found |= isSideEffectRoot(Inner); });
    return Found;
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
};

} // namespace

std::unique_ptr<Pass> onnxopt::createDCEPass() {
  return std::make_unique<DCEPass>();
}
