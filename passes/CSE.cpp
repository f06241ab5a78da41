//===- CSE.cpp - Merge identical nodes and identical constants ------------===//
//
// Before:  S1 = Shape(X)          S2 = Shape(X)
//          G1 = Gather(S1, I0)    G2 = Gather(S2, I0b)     # I0b == I0
//          U1 = Unsqueeze(G1, A)  U2 = Unsqueeze(G2, A)
//          Y  = Concat(U1, U2)
// After:   S1 = Shape(X)
//          G1 = Gather(S1, I0)
//          U1 = Unsqueeze(G1, A)
//          Y  = Concat(U1, U1)
//
// Two nodes are merged when they have the same op type, domain, operands
// (after earlier merges), attributes and result layout. Nodes are visited
// once in topological order with a hash map keyed on exactly that, so a
// duplicated chain folds in one linear sweep: once the heads merge, their
// users have equal operands when they are reached. Constants (initializers
// that are not graph inputs) with equal type and contents are merged first;
// Constant nodes merge like any node (their value attributes compare by
// content).
//
// Never merged: nodes with graph attributes (If/Loop/Scan), random ops,
// ops listed in skip-ops, nodes of domains not known to be pure (a custom op
// may be random or stateful; `pure-domains` lists the ones that are: the
// ONNX domains always are), and a node whose results cannot take the place of
// the other's (both are graph outputs: the interface is kept). Each graph
// has its own map: equal nodes of one subgraph merge, nothing is hoisted
// across graphs. The first node (and its name) is kept. On input that is
// not topologically sorted, merges can be missed but are never wrong.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/OpFacts.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include <cstring>
#include <vector>

using namespace onnxopt;

namespace {

unsigned hashNode(const Node &N) {
  llvm::ArrayRef<Value *> Ops = N.getOperands();
  return llvm::hash_combine(N.getOpType(), N.getDomain(), N.getNumResults(),
                            llvm::hash_combine_range(Ops.begin(), Ops.end()),
                            N.hashAttrs());
}

bool isEquivalent(const Node &A, const Node &B) {
  if (A.getOpType() != B.getOpType() || A.getDomain() != B.getDomain() ||
      A.getOperands() != B.getOperands() ||
      A.getNumResults() != B.getNumResults())
    return false;
  for (unsigned I = 0; I < A.getNumResults(); ++I)
    if (!A.getResult(I) != !B.getResult(I))
      return false;
  return A.hasSameAttrs(B);
}

/// A node in the CSE table with its structural hash computed once.
struct NodeKey {
  Node *N;
  unsigned Hash;
};

struct NodeKeyInfo {
  static NodeKey getEmptyKey() {
    return {llvm::DenseMapInfo<Node *>::getEmptyKey(), 0};
  }
  static NodeKey getTombstoneKey() {
    return {llvm::DenseMapInfo<Node *>::getTombstoneKey(), 0};
  }
  static unsigned getHashValue(const NodeKey &K) { return K.Hash; }
  static bool isEqual(const NodeKey &L, const NodeKey &R) {
    if (L.N == R.N)
      return true;
    if (L.N == getEmptyKey().N || L.N == getTombstoneKey().N ||
        R.N == getEmptyKey().N || R.N == getTombstoneKey().N)
      return false;
    return L.Hash == R.Hash && isEquivalent(*L.N, *R.N);
  }
};

class CSEPass : public GraphPass {
public:
  llvm::StringRef getArgument() const override { return "cse"; }
  llvm::StringRef getDescription() const override {
    return "merge structurally identical nodes and identical constants "
           "within each graph";
  }

  /// Parent first: outer constants and nodes are merged before the bodies
  /// that read them, so body nodes reading two merged copies become equal.
  Order getOrder() const override { return Order::ParentFirst; }

  LogicalResult runOnGraph(Graph &G, Model &M, PassContext &Ctx) override {
    Filter F;
    for (const std::string &Op : SkipOps)
      F.SkipOps.insert(Op);
    for (const std::string &D : PureDomains)
      F.PureDomains.insert(D);
    Rewriter R(M, Ctx.getDiags());
    mergeGraph(G, F, R, Ctx.Changed);
    return success();
  }

private:
  ListOption<std::string> SkipOps{
      *this, "skip-ops",
      "op types never merged, in addition to the random ops"};
  ListOption<std::string> PureDomains{
      *this, "pure-domains",
      "custom domains whose ops are pure and may be merged (the ONNX "
      "domains always are)"};

  /// What may not be merged.
  struct Filter {
    llvm::StringSet<> SkipOps;
    llvm::StringSet<> PureDomains;
  };

  static void mergeGraph(Graph &G, const Filter &F, Rewriter &R,
                         bool &Changed) {
    mergeConstants(G, R, Changed);

    llvm::DenseSet<NodeKey, NodeKeyInfo> Known;
    std::vector<Node *> Merged;
    for (Node &N : G.getNodes()) {
      if (!isCandidate(N, F))
        continue;
      auto Inserted = Known.insert(NodeKey{&N, hashNode(N)});
      if (!Inserted.second && replaceUses(N, *Inserted.first->N, R))
        Merged.push_back(&N);
    }
    // Erase newest first: a value read by many merged nodes (the input of
    // every duplicated Shape) then drops each use from the back of its use
    // list, which keeps the whole sweep linear.
    for (Node *N : llvm::reverse(Merged))
      R.eraseNode(N);
    if (!Merged.empty())
      Changed = true;
  }

  static bool isCandidate(const Node &N, const Filter &F) {
    if (isNondeterministic(N) || F.SkipOps.count(N.getOpType()))
      return false;
    bool OnnxDomain = N.isOnnxDomain() || N.getDomain().startswith("ai.onnx.");
    if (!OnnxDomain && !F.PureDomains.count(N.getDomain()))
      return false;
    for (const Attribute &A : N.getAttrs())
      if (A.isGraph())
        return false;
    // A node without results has nothing to share.
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (N.getResult(I))
        return true;
    return false;
  }

  /// Redirects the uses of \p Dup's results to \p Keep's. Does nothing and
  /// returns false when the graph interface forbids the replacement.
  static bool replaceUses(Node &Dup, Node &Keep, Rewriter &R) {
    for (unsigned I = 0; I < Dup.getNumResults(); ++I) {
      Value *From = Dup.getResult(I);
      if (From && !canReplaceAllUsesWith(From, Keep.getResult(I)))
        return false;
    }
    for (unsigned I = 0; I < Dup.getNumResults(); ++I)
      if (Value *From = Dup.getResult(I))
        (void)R.replaceAllUsesWith(From, Keep.getResult(I));
    return true;
  }

  /// Refines \p Keys (one per constant) by \p Hash, for the constants
  /// whose key another constant shares: a unique key already proves a
  /// constant distinct, and its bytes are not read.
  template <typename HashFn>
  static void refineShared(llvm::ArrayRef<std::unique_ptr<Value>> Constants,
                           std::vector<uint64_t> &Keys, HashFn Hash) {
    llvm::DenseMap<uint64_t, unsigned> Count;
    for (uint64_t K : Keys)
      ++Count[K];
    for (size_t I = 0; I < Constants.size(); ++I)
      if (Count[Keys[I]] >= 2)
        Keys[I] =
            llvm::hash_combine(Keys[I], Hash(Constants[I]->getInitializer()));
  }

  /// Merges constants of \p G with equal type and contents into the first
  /// one. Weights are read only as far as needed, in three rounds, each on
  /// the constants that the previous one could not tell apart: type and
  /// dims (no bytes read), a hash of the first 64 KiB, then a hash of the
  /// whole payload in bounded chunks; bytes are compared only on equal
  /// hashes. Mapped pages are released as they are read (Tensor's
  /// forEachChunk), so a model with gigabytes of external weights of few
  /// distinct shapes is deduplicated in a few megabytes of memory.
  static void mergeConstants(Graph &G, Rewriter &R, bool &Changed) {
    // Each round's key once per constant. The list does not change before
    // eraseUnusedConstants.
    llvm::ArrayRef<std::unique_ptr<Value>> Constants = G.getConstants();
    std::vector<uint64_t> Keys;
    Keys.reserve(Constants.size());
    for (const std::unique_ptr<Value> &C : Constants) {
      const Tensor &T = C->getInitializer();
      llvm::ArrayRef<int64_t> Dims = T.getDimsRef();
      Keys.push_back(llvm::hash_combine(
          T.getElemType(), llvm::hash_combine_range(Dims.begin(), Dims.end())));
    }
    refineShared(Constants, Keys, [](const Tensor &T) {
      return T.prefixHash(uint64_t(64) << 10);
    });
    refineShared(Constants, Keys,
                 [](const Tensor &T) { return T.contentHash(); });

    llvm::DenseMap<uint64_t, unsigned> KeyCount;
    for (uint64_t K : Keys)
      ++KeyCount[K];
    llvm::DenseMap<uint64_t, llvm::SmallVector<Value *, 1>> Reps;
    llvm::SmallVector<Value *, 8> Merged;
    for (size_t I = 0; I < Constants.size(); ++I) {
      const std::unique_ptr<Value> &C = Constants[I];
      if (KeyCount[Keys[I]] < 2)
        continue;
      const Tensor &T = C->getInitializer();
      llvm::SmallVector<Value *, 1> &Bucket = Reps[Keys[I]];
      Value *Rep = nullptr;
      for (Value *Cand : Bucket)
        if (Cand->getType() == C->getType() &&
            Cand->getInitializer().contentEquals(T)) {
          Rep = Cand;
          break;
        }
      if (!Rep) {
        Bucket.push_back(C.get());
        continue;
      }
      if (succeeded(R.replaceAllUsesWith(C.get(), Rep)) && C->use_empty())
        Merged.push_back(C.get());
    }
    llvm::SmallPtrSet<const Value *, 16> MergedSet(Merged.begin(),
                                                   Merged.end());
    G.eraseUnusedConstants(
        [&](const Value &V) { return MergedSet.count(&V) != 0; });
    if (!Merged.empty())
      Changed = true;
  }
};

} // namespace

std::unique_ptr<Pass> onnxopt::createCSEPass() {
  return std::make_unique<CSEPass>();
}
