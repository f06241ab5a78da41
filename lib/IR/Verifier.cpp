//===- Verifier.cpp - IR invariants ---------------------------------------===//
//
// Checks what every pass must preserve. The walk is linear: each graph keeps
// the set of values defined so far, and subgraphs see the chain of their
// ancestors' sets as they were at the node that holds them.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/IR/IR.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"
#include <unordered_map>

using namespace onnxopt;

namespace {

class Verifier {
public:
  Verifier(DiagnosticEngine &Diags, VerifyOptions Opts)
      : Diags(Diags), Opts(Opts) {}

  bool verifyGraph(const Graph &G, std::vector<const Graph *> &Chain);
  bool checkUseCounts();

private:
  bool isVisible(const Value *V, const std::vector<const Graph *> &Chain);
  /// Names of a graph's values, keyed by where the text of each is stored:
  /// a value's name is its model's interned entry (Model::internName), so
  /// equal names are the same storage, and no name is hashed or compared.
  using NameMap = llvm::DenseMap<const char *, const Value *>;
  void define(const Graph &G, const Value *V, NameMap &Names,
              llvm::DenseSet<const Value *> &Set);
  void countRef(const Value *V) { ++Refs[V]; }
  template <typename T> InFlightDiagnostic fail(const T &Where) {
    Ok = false;
    return emitError(Diags, Where);
  }

  DiagnosticEngine &Diags;
  VerifyOptions Opts;
  /// Values defined so far, per graph being walked. Node-based, so that a
  /// graph's set stays put while its subgraphs add theirs.
  std::unordered_map<const Graph *, llvm::DenseSet<const Value *>> Defined;
  /// References found by the walk, to compare with the recorded use lists.
  llvm::DenseMap<const Value *, unsigned> Refs;
  std::vector<const Value *> AllValues;
  bool Ok = true;
};

} // namespace

bool Verifier::isVisible(const Value *V,
                         const std::vector<const Graph *> &Chain) {
  for (const Graph *G : Chain)
    if (Defined[G].count(V))
      return true;
  return false;
}

void Verifier::define(const Graph &G, const Value *V, NameMap &Names,
                      llvm::DenseSet<const Value *> &Set) {
  if (V->getName().empty()) {
    fail(G) << "a value has an empty name";
    return;
  }
  if (V->getOwningGraph() != &G) {
    fail(*V) << "is listed in " << describe(G)
                              << " but owned by another graph";
  }
  auto Ins = Names.try_emplace(V->getName().data(), V);
  if (!Ins.second)
    fail(G) << "name '" << V->getName()
                             << "' is defined more than once";
  Set.insert(V);
  AllValues.push_back(V);
}

bool Verifier::verifyGraph(const Graph &G, std::vector<const Graph *> &Chain) {
  Chain.push_back(&G);
  // Sized up front: growing the maps value by value cost as much as the
  // checks on large graphs.
  size_t NumValues = G.getInputs().size() + G.getConstants().size();
  for (const Node &N : G.getNodes())
    NumValues += N.getNumResults();
  NameMap Names;
  Names.reserve(NumValues);
  llvm::DenseSet<const Value *> &Set = Defined[&G];
  Set.reserve(NumValues);
  AllValues.reserve(AllValues.size() + NumValues);
  Refs.reserve(Refs.size() + NumValues);
  for (const auto &V : G.getInputs())
    define(G, V.get(), Names, Set);
  for (const auto &V : G.getConstants()) {
    if (!V->hasInitializer())
      fail(*V) << "constant without initializer";
    define(G, V.get(), Names, Set);
  }
  // Without the order requirement every result of the graph is visible
  // everywhere in it; the check is only that the producer exists.
  if (!Opts.RequireTopologicalOrder)
    for (const Node &N : G.getNodes())
      for (unsigned I = 0; I < N.getNumResults(); ++I)
        if (const Value *R = N.getResult(I))
          define(G, R, Names, Set);

  for (const Node &N : G.getNodes()) {
    if (N.getParentGraph() != &G)
      fail(N) << "has a wrong parent graph";
    for (unsigned I = 0; I < N.getNumOperands(); ++I) {
      const Value *V = N.getOperand(I);
      if (!V)
        continue;
      countRef(V);
      if (!isVisible(V, Chain)) {
        bool Later = V->getOwningGraph() == &G && V->getDefiningNode();
        fail(N)
                 << "operand " << I << " '" << V->getName() << "' "
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
        fail(N) << "result " << I
                                 << " does not point back to its node";
      if (Opts.RequireTopologicalOrder)
        define(G, R, Names, Set);
    }
  }
  for (unsigned I = 0; I < G.getNumOutputs(); ++I) {
    const Value *V = G.getOutput(I);
    countRef(V);
    if (!isVisible(V, Chain))
      fail(G) << "output " << I << " '" << V->getName()
                               << "' is not defined";
  }
  Chain.pop_back();
  Defined.erase(&G);
  return Ok;
}

bool Verifier::checkUseCounts() {
  for (const Value *V : AllValues) {
    unsigned Found = Refs.lookup(V);
    if (Found != V->getNumUses()) {
      fail(*V) << "use list records " << V->getNumUses()
                                << " uses but the graph has " << Found;
      continue;
    }
    for (const Use &U : V->getUses()) {
      bool Exact = U.isGraphOutput()
                       ? U.Index < U.OutputOf->getNumOutputs() &&
                             U.OutputOf->getOutput(U.Index) == V
                       : U.Index < U.User->getNumOperands() &&
                             U.User->getOperand(U.Index) == V;
      if (!Exact)
        fail(*V) << "use list has a stale entry";
    }
  }
  return Ok;
}

LogicalResult onnxopt::verifyModel(const Model &M, DiagnosticEngine &Diags,
                                   VerifyOptions Opts) {
  Verifier V(Diags, Opts);
  std::vector<const Graph *> Chain;
  bool Ok = V.verifyGraph(M.getGraph(), Chain);
  Ok &= V.checkUseCounts();
  return success(Ok);
}
