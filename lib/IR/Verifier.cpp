//===- Verifier.cpp - IR invariants ---------------------------------------===//
//
// Checks what every pass must preserve. The walk is linear: each graph keeps
// the values defined so far (by name), and subgraphs see the chain of their
// ancestors' as they were at the node that holds them.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/IR/AllocationOrder.h"
#include "onnxopt/IR/IR.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"
#include <algorithm>

using namespace onnxopt;

namespace {

class Verifier {
public:
  Verifier(DiagnosticEngine &Diags, VerifyOptions Opts)
      : Diags(Diags), Opts(Opts) {}

  /// Names of a graph's values, keyed by where the text of each is stored:
  /// a value's name is its model's interned entry (Model::internName), so
  /// equal names are the same storage, and no name is hashed or compared.
  /// The map is also the set of values defined so far: a value is visible
  /// where its graph's map (or an ancestor's) has it under its name. The
  /// entries are allocated in the order the import met the names, so the
  /// map is hashed in address order (AllocationOrder.h).
  using NameMap = llvm::DenseMap<const char *, const Value *,
                                 AllocationOrderInfo<const char>>;
  bool verifyGraph(const Graph &G, std::vector<const NameMap *> &Chain);
  bool checkUseLists(const Graph &Main);

private:
  bool isVisible(const Value *V, const std::vector<const NameMap *> &Chain);
  void define(const Graph &G, const Value *V, NameMap &Names);
  /// The reference to \p V at operand \p I of \p User, or else at output
  /// \p I of \p OutputOf, must be the entry at \p Slot of \p V's use list
  /// (the slot the IR recorded for it). With every use entry exact and the
  /// counts equal, the use lists are then exactly the references (see
  /// checkUseLists), and no per-value count is kept.
  void checkUseAt(const Node *User, const Graph *OutputOf, unsigned I,
                  const Value *V, unsigned Slot);
  template <typename T> InFlightDiagnostic fail(const T &Where) {
    Ok = false;
    return emitError(Diags, Where);
  }

  /// Without the order requirement: whether \p V, read at operand \p I of
  /// \p N and not (yet) visible, is produced later in its graph (or an
  /// enclosing one); it is then checked when that graph's walk ends.
  bool deferLateUse(const Node &N, unsigned I, const Value *V,
                    const std::vector<const NameMap *> &Chain);
  void checkDeferred(const Graph &G, const std::vector<const NameMap *> &Chain);

  DiagnosticEngine &Diags;
  VerifyOptions Opts;
  /// Graphs being walked, innermost last (parallel to the name chain).
  std::vector<const Graph *> Walking;
  /// Reads of values produced later, to check at their graph's end.
  struct LateUse {
    const Node *User;
    unsigned Operand;
    const Value *V;
  };
  std::vector<LateUse> Deferred;
  /// The node whose late reads were counted last (one count per node).
  const Node *LastLate = nullptr;
  /// Values whose name another value of their graph took first (already an
  /// error): defined all the same, so that their uses are not also
  /// reported as undefined.
  llvm::DenseSet<const Value *> Shadowed;
  /// References found by the walk, to compare with the use lists' sizes.
  size_t NumRefs = 0;
  std::vector<const Value *> AllValues;
  bool Ok = true;
};

/// How often the graphs reference each value (operands and outputs); only
/// for the message when the use lists and the references disagree.
void countReferences(const Graph &G,
                     llvm::DenseMap<const Value *, unsigned> &Refs) {
  for (const Node &N : G.getNodes()) {
    for (const Value *V : N.getOperands())
      if (V)
        ++Refs[V];
    for (const Graph *Sub : N.getSubgraphs())
      countReferences(*Sub, Refs);
  }
  for (const Value *V : G.getOutputs())
    ++Refs[V];
}

} // namespace

bool Verifier::isVisible(const Value *V,
                         const std::vector<const NameMap *> &Chain) {
  for (const NameMap *Names : Chain) {
    auto It = Names->find(V->getName().data());
    if (It != Names->end() && It->second == V)
      return true;
  }
  return !Shadowed.empty() && Shadowed.count(V);
}

void Verifier::define(const Graph &G, const Value *V, NameMap &Names) {
  if (V->getName().empty()) {
    fail(G) << "a value has an empty name";
    return;
  }
  if (V->getOwningGraph() != &G) {
    fail(*V) << "is listed in " << describe(G) << " but owned by another graph";
  }
  auto Ins = Names.try_emplace(V->getName().data(), V);
  if (!Ins.second) {
    fail(G) << "name '" << V->getName() << "' is defined more than once";
    Shadowed.insert(V);
  }
  AllValues.push_back(V);
}

void Verifier::checkUseAt(const Node *User, const Graph *OutputOf, unsigned I,
                          const Value *V, unsigned Slot) {
  ++NumRefs;
  llvm::ArrayRef<Use> Uses = V->getUses();
  if (Slot < Uses.size() && Uses[Slot].User == User &&
      Uses[Slot].OutputOf == OutputOf && Uses[Slot].Index == I)
    return;
  InFlightDiagnostic D = User ? fail(*User) : fail(*OutputOf);
  D << (User ? "operand " : "output ") << I << " '" << V->getName()
    << "' is missing from its value's use list";
}

bool Verifier::deferLateUse(const Node &N, unsigned I, const Value *V,
                            const std::vector<const NameMap *> &) {
  if (Opts.RequireTopologicalOrder || !V->getDefiningNode())
    return false;
  const Graph *Owner = V->getOwningGraph();
  if (std::find(Walking.begin(), Walking.end(), Owner) == Walking.end())
    return false;
  Deferred.push_back({&N, I, V});
  if (Opts.Order) {
    Opts.Order->AnyLateUse = true;
    if (Owner == N.getParentGraph() && LastLate != &N) {
      LastLate = &N;
      ++Opts.Order->LateNodes;
    }
  }
  return true;
}

void Verifier::checkDeferred(const Graph &G,
                             const std::vector<const NameMap *> &Chain) {
  // G's results are all defined now: a read deferred to G's end that is
  // still not visible names a value G does not hold.
  auto Owned = [&G](const LateUse &U) { return U.V->getOwningGraph() == &G; };
  auto Mine = std::stable_partition(Deferred.begin(), Deferred.end(),
                                    [&](const LateUse &U) { return !Owned(U); });
  for (auto It = Mine; It != Deferred.end(); ++It)
    if (!isVisible(It->V, Chain))
      fail(*It->User) << "operand " << It->Operand << " '"
                      << It->V->getName() << "' "
                      << (It->User->getParentGraph() == &G
                              ? "is used before its definition (the graph "
                                "is not in topological order; run "
                                "--topo-sort)"
                              : "is not defined in this scope");
  Deferred.erase(Mine, Deferred.end());
}

bool Verifier::verifyGraph(const Graph &G,
                           std::vector<const NameMap *> &Chain) {
  // Sized up front: growing the map value by value cost as much as the
  // checks on large graphs.
  size_t NumValues = G.getInputs().size() + G.getConstants().size();
  for (const Node &N : G.getNodes())
    NumValues += N.getNumResults();
  NameMap Names;
  Names.reserve(NumValues);
  Chain.push_back(&Names);
  Walking.push_back(&G);
  AllValues.reserve(AllValues.size() + NumValues);
  for (const auto &V : G.getInputs())
    define(G, V.get(), Names);
  for (const auto &V : G.getConstants()) {
    if (!V->hasInitializer())
      fail(*V) << "constant without initializer";
    define(G, V.get(), Names);
  }
  // Results are defined as the walk reaches them. Without the order
  // requirement, a read of a result produced later is checked at the end
  // of its graph instead (deferLateUse), which also tells the caller
  // whether the input is in order.
  for (const Node &N : G.getNodes()) {
    if (N.getParentGraph() != &G)
      fail(N) << "has a wrong parent graph";
    for (unsigned I = 0; I < N.getNumOperands(); ++I) {
      const Value *V = N.getOperand(I);
      if (!V)
        continue;
      checkUseAt(&N, nullptr, I, V, N.getOperandUseSlot(I));
      if (!isVisible(V, Chain) && !deferLateUse(N, I, V, Chain)) {
        bool Later = V->getOwningGraph() == &G && V->getDefiningNode();
        fail(N) << "operand " << I << " '" << V->getName() << "' "
                << (Later ? "is used before its definition (the graph is "
                            "not in topological order; run --topo-sort)"
                          : "is not defined in this scope");
      }
    }
    for (const Graph *Sub : N.getSubgraphs()) {
      if (Sub->getParentNode() != &N)
        fail(N) << "subgraph '" << Sub->getName()
                << "' has a wrong parent node";
      verifyGraph(*Sub, Chain);
    }
    for (unsigned I = 0; I < N.getNumResults(); ++I) {
      const Value *R = N.getResult(I);
      if (!R)
        continue;
      if (R->getDefiningNode() != &N || R->getResultIndex() != I)
        fail(N) << "result " << I << " does not point back to its node";
      define(G, R, Names);
    }
  }
  checkDeferred(G, Chain);
  for (unsigned I = 0; I < G.getNumOutputs(); ++I) {
    const Value *V = G.getOutput(I);
    checkUseAt(nullptr, &G, I, V, G.getOutputUseSlot(I));
    if (!isVisible(V, Chain))
      fail(G) << "output " << I << " '" << V->getName() << "' is not defined";
  }
  Chain.pop_back();
  Walking.pop_back();
  return Ok;
}

bool Verifier::checkUseLists(const Graph &Main) {
  // Every reference has its entry (checkOperandUse), distinct references
  // have distinct entries (an entry names one operand), and every entry is
  // a reference (below). So when the entries are as many as the
  // references, each use list is exactly its value's references.
  size_t NumUses = 0;
  for (const Value *V : AllValues) {
    NumUses += V->getNumUses();
    for (const Use &U : V->getUses()) {
      bool Exact = U.isGraphOutput() ? U.Index < U.OutputOf->getNumOutputs() &&
                                           U.OutputOf->getOutput(U.Index) == V
                                     : U.Index < U.User->getNumOperands() &&
                                           U.User->getOperand(U.Index) == V;
      if (!Exact)
        fail(*V) << "use list has a stale entry";
    }
  }
  if (NumUses == NumRefs)
    return Ok;
  // A duplicate entry, or one for a node outside the graphs: find whose.
  llvm::DenseMap<const Value *, unsigned> Refs;
  countReferences(Main, Refs);
  for (const Value *V : AllValues) {
    unsigned Found = Refs.lookup(V);
    if (Found != V->getNumUses())
      fail(*V) << "use list records " << V->getNumUses()
               << " uses but the graph has " << Found;
  }
  return Ok;
}

LogicalResult onnxopt::verifyModel(const Model &M, DiagnosticEngine &Diags,
                                   VerifyOptions Opts) {
  Verifier V(Diags, Opts);
  std::vector<const Verifier::NameMap *> Chain;
  bool Ok = V.verifyGraph(M.getGraph(), Chain);
  Ok &= V.checkUseLists(M.getGraph());
  return success(Ok);
}
