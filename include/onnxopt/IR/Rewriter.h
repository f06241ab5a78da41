//===- Rewriter.h - The only way passes mutate the IR ----------*- C++ -*-===//
//
// Passes and patterns change the IR through a Rewriter so that listeners
// (the greedy driver's worklist) hear about every change, and so that the
// invariants (exact use lists, unique names, stable graph interface) hold.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_REWRITER_H
#define ONNXOPT_IR_REWRITER_H

#include "onnxopt/IR/IR.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringRef.h"

namespace onnxopt {

/// Constants that became unused, erased together at the end: one sweep per
/// graph (Graph::eraseUnusedConstants). One Graph::eraseConstant each
/// searched the graph's constants, quadratic when folding leaves thousands.
class DeadConstantSweep {
public:
  void add(Value *C) { Dead[C->getOwningGraph()].insert(C); }
  /// Erases every constant added (each must be unused by then).
  void run();

private:
  llvm::MapVector<Graph *, llvm::DenseSet<const Value *>> Dead;
};

/// Hears about rewrites (used by the greedy pattern driver).
class RewriteListener {
public:
  virtual ~RewriteListener();
  virtual void notifyNodeInserted(Node *N) {}
  virtual void notifyNodeErased(Node *N) {}
  /// \p N's operands, attributes or result types changed.
  virtual void notifyNodeModified(Node *N) {}
  /// \p From's uses now read \p To.
  virtual void notifyValueReplaced(Value *From, Value *To) {}
};

class Rewriter {
public:
  Rewriter(Model &M, DiagnosticEngine &Diags,
           RewriteListener *Listener = nullptr)
      : M(M), Diags(Diags), Listener(Listener) {}

  Model &getModel() { return M; }
  DiagnosticEngine &getDiags() { return Diags; }

  /// New nodes go before this node (or at the end of Graph when null).
  void setInsertionPoint(Graph &G, Node *Before) {
    InsertGraph = &G;
    InsertBefore = Before;
  }
  void setInsertionPointBefore(Node *N) {
    setInsertionPoint(*N->getParentGraph(), N);
  }

  /// Creates a node at the insertion point with \p NumResults results named
  /// uniquely after \p NameHint (default: the op type).
  Node *createNode(llvm::StringRef OpType, llvm::ArrayRef<Value *> Operands,
                   unsigned NumResults = 1, llvm::StringRef Domain = "",
                   llvm::StringRef NameHint = "");
  /// Adds a constant (initializer) to \p G named uniquely after the tensor.
  Value *createConstant(Graph &G, Tensor T);

  /// Erases \p N; its results must be unused.
  void eraseNode(Node *N);
  /// Replaces every use of \p From (node operands, graph outputs) with \p To.
  /// A graph output keeps its name: if \p From is a graph output, \p To takes
  /// over the name when it is an ordinary node result. Refuses (failure,
  /// no change, no diagnostic) when that would change the graph interface:
  /// \p To is a graph input, an initializer, an outer-scope value or itself a
  /// graph output of the same graph.
  LogicalResult replaceAllUsesWith(Value *From, Value *To);
  /// Replaces all results of \p N with \p NewValues, then erases \p N.
  LogicalResult replaceNode(Node *N, llvm::ArrayRef<Value *> NewValues);
  /// Replaces every use of the node result \p V by a new constant holding
  /// \p T, which takes over \p V's name (so a folded value keeps the name
  /// users and tools know it by; \p V is left with the constant's fresh
  /// name until its node dies). The constant is an initializer, or a
  /// `Constant` node right before \p V's producer when an initializer cannot
  /// do: \p V is a graph output (initializers cannot be outputs without
  /// changing the interface), or the model is older than IR 4 (initializers
  /// must be graph inputs there). Returns the constant, or null with no
  /// change when the model cannot hold it (a Constant node before opset 9
  /// holds floats only) or the graph interface forbids the replacement.
  Value *replaceWithConstant(Value &V, Tensor T);
  /// Erases \p N if none of its results is used, then, transitively, every
  /// producer and constant initializer that only the erased nodes kept
  /// alive: producers of the default domain without subgraphs (custom nodes
  /// may have side effects; a node holding a body is left to dce). A node
  /// reading one value twice is handled. Returns the number of nodes erased.
  unsigned eraseDeadChain(Node &N) { return eraseDeadChains({&N}); }
  /// The same from several roots at once (a root may lie on another root's
  /// chain: each node is erased once).
  unsigned eraseDeadChains(llvm::ArrayRef<Node *> Roots);

  /// Sets an operand and notifies.
  void setOperand(Node *N, unsigned I, Value *V);
  /// Sets a value's type and notifies its producer as modified.
  void setType(Value *V, Type T);
  void notifyModified(Node *N);

  /// For patterns: records why a match failed (shown in debug output) and
  /// returns failure().
  LogicalResult notifyMatchFailure(const Node &N, llvm::StringRef Reason);

private:
  Model &M;
  DiagnosticEngine &Diags;
  RewriteListener *Listener;
  Graph *InsertGraph = nullptr;
  Node *InsertBefore = nullptr;
};

/// True if replacing \p From by \p To is allowed by replaceAllUsesWith.
bool canReplaceAllUsesWith(const Value *From, const Value *To);

} // namespace onnxopt

#endif // ONNXOPT_IR_REWRITER_H
