//===- TopoSort.cpp - Order nodes so that producers come first ------------===//
//
// Before:  Y = Relu(T)
//          T = Add(X, X)
// After:   T = Add(X, X)
//          Y = Relu(T)
//
// Every graph and subgraph is sorted on its own. A node depends on the
// producers of its operands and, when it holds subgraphs, on the producers
// (in its own graph) of every outer value read anywhere inside them.
//
// The sort is stable: nodes are taken in their original order and each is
// emitted right after its not yet emitted dependencies (a depth-first,
// post-order form of Kahn's algorithm). A sorted graph therefore comes out
// unchanged, which a FIFO Kahn queue does not guarantee (with A; C(A); B it
// emits A; B; C). Dependencies are found from the exact use lists in one
// sweep, so the cost is linear in the uses (times the nesting depth for
// uses from inside subgraphs). A cycle is an error naming a node on it.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <cassert>
#include <optional>
#include <utility>
#include <vector>

using namespace onnxopt;

namespace {

/// The node of \p G that holds the user of \p U: the user itself, or the
/// node of \p G whose subgraphs (transitively) contain it. Null for an
/// output of \p G itself.
Node *getHolderIn(const Use &U, const Graph &G) {
  Node *Holder = U.User;
  const Graph *Cur = U.isGraphOutput() ? U.OutputOf : U.User->getParentGraph();
  while (Cur && Cur != &G) {
    Holder = Cur->getParentNode();
    Cur = Holder ? Holder->getParentGraph() : nullptr;
  }
  return Cur ? Holder : nullptr;
}

/// Fills \p Order with a stable topological order of the nodes described
/// by \p Deps, iteratively (exported chains can be very long). On a cycle,
/// returns the index of a node on it instead.
std::optional<unsigned>
stableOrder(const std::vector<llvm::SmallVector<unsigned, 2>> &Deps,
            std::vector<unsigned> &Order) {
  enum State : uint8_t { Unvisited, OnStack, Done };
  std::vector<State> States(Deps.size(), Unvisited);
  std::vector<std::pair<unsigned, unsigned>> Stack; // node, next dep
  Order.reserve(Deps.size());
  for (unsigned Root = 0; Root < Deps.size(); ++Root) {
    if (States[Root] != Unvisited)
      continue;
    States[Root] = OnStack;
    Stack.push_back({Root, 0});
    while (!Stack.empty()) {
      unsigned N = Stack.back().first;
      unsigned &Next = Stack.back().second;
      if (Next == Deps[N].size()) {
        States[N] = Done;
        Order.push_back(N);
        Stack.pop_back();
        continue;
      }
      unsigned D = Deps[N][Next++];
      if (States[D] == OnStack)
        return D;
      if (States[D] == Unvisited) {
        States[D] = OnStack;
        Stack.push_back({D, 0});
      }
    }
  }
  return std::nullopt;
}

class TopoSortPass : public GraphPass {
public:
  llvm::StringRef getArgument() const override { return "topo-sort"; }
  llvm::StringRef getDescription() const override {
    return "order the nodes of every graph topologically, keeping the "
           "existing order where it is valid";
  }

  /// Each graph sorts independently; parent first only so that a cycle in
  /// the main graph is reported before one in a body.
  Order getOrder() const override { return Order::ParentFirst; }

  LogicalResult runOnGraph(Graph &G, Model &, PassContext &Ctx) override {
    return sortGraph(G, Ctx);
  }

private:
  /// Sorts the nodes of \p G.
  LogicalResult sortGraph(Graph &G, PassContext &Ctx) {
    std::vector<Node *> Nodes;
    llvm::DenseMap<const Node *, unsigned> Index;
    for (Node &N : G.getNodes()) {
      Index[&N] = Nodes.size();
      Nodes.push_back(&N);
    }

    // Deps[I] lists the producers node I waits for, in original order.
    std::vector<llvm::SmallVector<unsigned, 2>> Deps(Nodes.size());
    for (unsigned P = 0; P < Nodes.size(); ++P)
      for (unsigned R = 0; R < Nodes[P]->getNumResults(); ++R)
        if (Value *V = Nodes[P]->getResult(R))
          for (const Use &U : V->getUses())
            if (Node *Holder = getHolderIn(U, G)) {
              assert(Index.count(Holder) && "holder is not a node of G");
              Deps[Index.lookup(Holder)].push_back(P);
            }

    std::vector<unsigned> NewOrder;
    if (std::optional<unsigned> OnCycle = stableOrder(Deps, NewOrder))
      return emitError(Ctx.getDiags(), *Nodes[*OnCycle])
             << "graph has a cycle through this node";

    bool Moved = false;
    for (unsigned I = 0; I < NewOrder.size(); ++I)
      Moved |= NewOrder[I] != I;
    if (Moved) {
      for (unsigned I : NewOrder)
        G.moveNode(Nodes[I], nullptr);
      Ctx.Changed = true;
    }
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> onnxopt::createTopoSortPass() {
  return std::make_unique<TopoSortPass>();
}
