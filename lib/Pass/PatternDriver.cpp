//===- PatternDriver.cpp - Greedy pattern rewriting -----------------------===//
//
// A worklist driver in the spirit of MLIR's GreedyPatternRewriteDriver. Each
// iteration seeds the worklist with every node in graph order (subgraph
// nodes after their parent node), then pops nodes until the worklist is
// empty: a dead node is erased, otherwise the patterns rooted at its op are
// tried by decreasing benefit. Every change re-queues the nodes it may have
// enabled (users of changed values, producers of released operands), which
// the Rewriter reports through a RewriteListener. Iterations repeat until
// one changes nothing, or the iteration cap is hit, which is an error.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Pass/PatternDriver.h"
#include "onnxopt/IR/IR.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <algorithm>
#include <cassert>

using namespace onnxopt;

Pattern::~Pattern() = default;

namespace {

/// The nodes left to visit. A stack (the most recently affected node is
/// visited first, which keeps rewrites local), with O(1) membership tests
/// and removal. Iteration order depends only on push order, never on
/// pointer values: the map is used for lookups only.
class Worklist {
public:
  /// Restricts the worklist to nodes of \p G (null = every graph).
  void setOnlyGraph(Graph *G) { OnlyGraph = G; }
  void push(Node *N) {
    if (!N || Index.count(N))
      return;
    if (OnlyGraph && N->getParentGraph() != OnlyGraph)
      return;
    Index[N] = List.size();
    List.push_back(N);
  }
  /// Returns the next node, or null when empty.
  Node *pop() {
    while (!List.empty()) {
      Node *N = List.back();
      List.pop_back();
      if (!N)
        continue;
      Index.erase(N);
      return N;
    }
    return nullptr;
  }
  void remove(Node *N) {
    auto It = Index.find(N);
    if (It == Index.end())
      return;
    List[It->second] = nullptr;
    Index.erase(It);
  }
  void clear() {
    List.clear();
    Index.clear();
  }

private:
  std::vector<Node *> List;
  llvm::DenseMap<Node *, size_t> Index;
  Graph *OnlyGraph = nullptr;
};

/// Pushes the nodes reading \p V.
static void pushUsers(Worklist &WL, const Value *V) {
  if (!V)
    return;
  for (const Use &U : V->getUses())
    if (U.User)
      WL.push(U.User);
}

static void pushUsersOfResults(Worklist &WL, const Node &N) {
  for (unsigned I = 0, E = N.getNumResults(); I < E; ++I)
    pushUsers(WL, N.getResult(I));
}

static void pushProducersOfOperands(Worklist &WL, const Node &N) {
  for (Value *Op : N.getOperands())
    if (Op)
      WL.push(Op->getDefiningNode());
}

/// Keeps the worklist in step with the rewrites and tells the driver whether
/// the node being processed is gone.
class WorklistListener : public RewriteListener {
public:
  explicit WorklistListener(Worklist &WL) : WL(WL) {}

  /// Starts watching \p N (the node being matched).
  void setCurrent(Node *N) {
    Current = N;
    CurrentErased = false;
    NumChanges = 0;
  }
  bool isCurrentErased() const { return CurrentErased; }
  /// Notifications since setCurrent.
  unsigned getNumChanges() const { return NumChanges; }

  void notifyNodeInserted(Node *N) override {
    ++NumChanges;
    WL.push(N);
  }

  void notifyNodeModified(Node *N) override {
    ++NumChanges;
    WL.push(N);
    pushUsersOfResults(WL, *N);
  }

  void notifyValueReplaced(Value *From, Value *To) override {
    ++NumChanges;
    // Whichever of the two holds the uses at this point, its users changed.
    pushUsers(WL, From);
    pushUsers(WL, To);
    if (From)
      WL.push(From->getDefiningNode());
  }

  void notifyNodeErased(Node *N) override {
    ++NumChanges;
    // Called before the node goes away. The nodes of its subgraphs die with
    // it; the producers of what they all read (outer-scope values included)
    // may now be dead.
    std::vector<Node *> Dying{N};
    for (Graph *G : N->getSubgraphs())
      G->walk([&](Node &Inner) { Dying.push_back(&Inner); });
    for (Node *D : Dying)
      pushProducersOfOperands(WL, *D);
    for (Node *D : Dying)
      forget(D);
  }

private:
  void forget(Node *N) {
    WL.remove(N);
    if (N == Current)
      CurrentErased = true;
  }

  Worklist &WL;
  Node *Current = nullptr;
  bool CurrentErased = false;
  unsigned NumChanges = 0;
};

/// Patterns grouped by the op they are rooted at; each group also holds the
/// patterns rooted at any op, ordered by decreasing benefit (stable).
class PatternSet {
public:
  explicit PatternSet(llvm::ArrayRef<std::unique_ptr<Pattern>> Patterns) {
    for (const auto &P : Patterns)
      if (!P->getRootOp().empty())
        ByOp.try_emplace(P->getRootOp());
    for (auto &Entry : ByOp)
      Entry.second = collect(Patterns, Entry.first());
    AnyOp = collect(Patterns, "");
  }

  llvm::ArrayRef<const Pattern *> lookup(const Node &N) const {
    if (N.isOnnxDomain()) {
      auto It = ByOp.find(N.getOpType());
      if (It != ByOp.end())
        return It->second;
    }
    return AnyOp;
  }

private:
  static std::vector<const Pattern *>
  collect(llvm::ArrayRef<std::unique_ptr<Pattern>> Patterns,
          llvm::StringRef Op) {
    std::vector<const Pattern *> Out;
    for (const auto &P : Patterns)
      if (P->getRootOp().empty() || P->getRootOp() == Op)
        Out.push_back(P.get());
    std::stable_sort(Out.begin(), Out.end(),
                     [](const Pattern *A, const Pattern *B) {
                       return A->getBenefit() > B->getBenefit();
                     });
    return Out;
  }

  llvm::StringMap<std::vector<const Pattern *>> ByOp;
  std::vector<const Pattern *> AnyOp;
};

class GreedyDriver {
public:
  GreedyDriver(Model &M, llvm::ArrayRef<std::unique_ptr<Pattern>> Patterns,
               DiagnosticEngine &Diags, const GreedyRewriteConfig &Config)
      : M(M), Patterns(Patterns), Config(Config), Listener(WL),
        R(M, Diags, &Listener) {
    if (!Config.RecurseIntoSubgraphs)
      WL.setOnlyGraph(&M.getGraph());
  }

  /// Runs one iteration; returns true if anything changed.
  bool runIteration();

private:
  void seed();
  static bool isDead(const Node &N);
  /// Replaces \p N's results by the constants Config.Fold computes.
  bool tryFold(Node *N);
  /// Visits one node; returns true if it changed the IR.
  bool processNode(Node *N);

  Model &M;
  PatternSet Patterns;
  const GreedyRewriteConfig &Config;
  Worklist WL;
  WorklistListener Listener;
  Rewriter R;
};

} // namespace

void GreedyDriver::seed() {
  // Collect in graph order, then push in reverse so that pops come out in
  // graph order.
  // Without recursion the worklist drops subgraph nodes itself.
  std::vector<Node *> Order;
  M.getGraph().walk([&](Node &N) { Order.push_back(&N); });
  WL.clear();
  for (auto It = Order.rbegin(), E = Order.rend(); It != E; ++It)
    WL.push(*It);
}

bool GreedyDriver::isDead(const Node &N) {
  // Graph outputs are uses, so use_empty also protects them.
  bool HasResult = false;
  for (unsigned I = 0, E = N.getNumResults(); I < E; ++I)
    if (const Value *V = N.getResult(I)) {
      HasResult = true;
      if (!V->use_empty())
        return false;
    }
  // A node of a domain we do not know that produces nothing exists for its
  // effect (a print, a write, a collective): never dead.
  if (!HasResult && !N.isOnnxDomain() && !N.getDomain().startswith("ai.onnx"))
    return false;
  return true;
}

bool GreedyDriver::tryFold(Node *N) {
  if (!Config.Fold || !N->getSubgraphs().empty())
    return false;
  std::optional<std::vector<Tensor>> Results = Config.Fold(*N);
  if (!Results || Results->size() != N->getNumResults())
    return false;
  // All or nothing: check first that every used result can be replaced.
  bool Changed = false;
  for (unsigned I = 0, E = N->getNumResults(); I < E; ++I) {
    Value *V = N->getResult(I);
    if (!V || V->use_empty())
      continue;
    if (!R.replaceWithConstant(*V, std::move((*Results)[I])))
      return Changed;
    Changed = true;
  }
  if (Changed && isDead(*N))
    R.eraseNode(N);
  return Changed;
}

bool GreedyDriver::processNode(Node *N) {
  Listener.setCurrent(N);
  if (Config.EraseDeadNodes && isDead(*N)) {
    R.eraseNode(N);
    return true;
  }
  if (tryFold(N))
    return true;

  for (const Pattern *P : Patterns.lookup(*N)) {
    R.setInsertionPointBefore(N);
    bool Matched = succeeded(P->matchAndRewrite(*N, R));
    // A pattern that failed must not have touched the IR: a bug in the
    // pattern. Release builds count the change rather than miss it.
    assert((Matched || Listener.getNumChanges() == 0) &&
           "pattern changed the IR and returned failure");
    bool Changed = Matched || Listener.getNumChanges() > 0;
    if (!Changed)
      continue;
    if (!Listener.isCurrentErased()) {
      pushUsersOfResults(WL, *N);
      pushProducersOfOperands(WL, *N);
    }
    return true;
  }
  return false;
}

bool GreedyDriver::runIteration() {
  seed();
  // An iteration normally ends when the worklist drains; patterns that keep
  // rewriting each other's output would never let it, so bound the number of
  // changes per iteration and let the iteration cap report the loop.
  size_t Budget = 1024;
  M.getGraph().walk([&](Node &) { Budget += 16; });
  bool Changed = false;
  while (Node *N = WL.pop()) {
    if (!processNode(N))
      continue;
    Changed = true;
    if (--Budget == 0)
      break;
  }
  Listener.setCurrent(nullptr);
  return Changed;
}

LogicalResult onnxopt::applyPatternsGreedily(
    Model &M, llvm::ArrayRef<std::unique_ptr<Pattern>> Patterns,
    DiagnosticEngine &Diags, GreedyRewriteConfig Config, bool *Changed) {
  GreedyDriver Driver(M, Patterns, Diags, Config);
  bool Any = false;
  bool LastChanged = false;
  for (unsigned I = 0; I < Config.MaxIterations; ++I) {
    LastChanged = Driver.runIteration();
    Any |= LastChanged;
    if (!LastChanged)
      break;
  }
  if (Changed)
    *Changed = Any;
  if (LastChanged)
    return emitError(Diags) << "greedy pattern rewrite did not converge after "
                            << Config.MaxIterations << " iterations";
  return success();
}
