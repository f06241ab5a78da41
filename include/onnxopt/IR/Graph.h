//===- Graph.h - Graphs and subgraphs --------------------------*- C++ -*-===//
#ifndef ONNXOPT_IR_GRAPH_H
#define ONNXOPT_IR_GRAPH_H

#include "onnxopt/IR/Node.h"
#include "onnxopt/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/simple_ilist.h"
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace onnxopt {

class Model;

/// A graph: inputs, initializers, nodes in topological order, outputs. A
/// subgraph (If/Loop/Scan body) has a parent node and may use values of
/// enclosing graphs directly (the use is recorded on the outer value).
class Graph {
public:
  using NodeList = llvm::simple_ilist<Node>;

  Graph(Model *M, std::string Name, Node *ParentNode = nullptr)
      : M(M), Name(std::move(Name)), ParentNode(ParentNode) {}
  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  Model &getModel() const { return *M; }
  llvm::StringRef getName() const { return Name; }
  void setName(llvm::StringRef N) { Name = N.str(); }
  /// The node holding this graph as an attribute; null for the main graph.
  Node *getParentNode() const { return ParentNode; }
  Graph *getParentGraph() const;
  /// Slash-separated path from the main graph, e.g. "main/body".
  std::string getPath() const;

  // Inputs, in order. An input with an initializer has a default value.
  llvm::ArrayRef<std::unique_ptr<Value>> getInputs() const { return Inputs; }
  Value *getInput(unsigned I) const { return Inputs[I].get(); }
  unsigned getNumInputs() const { return Inputs.size(); }
  Value *addInput(llvm::StringRef Name, Type T);

  // Initializers that are not graph inputs (constants), in order.
  llvm::ArrayRef<std::unique_ptr<Value>> getConstants() const {
    return Constants;
  }
  Value *addConstant(llvm::StringRef Name, Tensor T);
  /// Removes an unused constant. Asserts if it has uses. Linear in the
  /// number of constants after it: to remove many, use
  /// eraseUnusedConstants.
  void eraseConstant(Value *V);
  /// Removes, in one sweep, every unused constant for which \p Pred holds
  /// (all unused ones without a predicate). Returns how many were removed.
  size_t eraseUnusedConstants(
      const std::function<bool(const Value &)> &Pred = nullptr);

  // Outputs.
  llvm::ArrayRef<Value *> getOutputs() const { return Outputs; }
  Value *getOutput(unsigned I) const { return Outputs[I]; }
  unsigned getNumOutputs() const { return Outputs.size(); }
  /// Where output \p I's entry is in its value's use list.
  unsigned getOutputUseSlot(unsigned I) const { return OutputUseSlots[I]; }
  void addOutput(Value *V);
  void setOutput(unsigned I, Value *V);
  void eraseOutput(unsigned I);

  // Nodes.
  NodeList &getNodes() { return Nodes; }
  const NodeList &getNodes() const { return Nodes; }
  size_t getNumNodes() const { return Nodes.size(); }
  /// Creates a node before \p InsertBefore (or at the end when null). The
  /// results are named by the caller (Model::makeUniqueName).
  Node *createNode(llvm::StringRef OpType, llvm::StringRef Domain,
                   llvm::StringRef Name, llvm::ArrayRef<Value *> Operands,
                   llvm::ArrayRef<std::string> ResultNames,
                   Node *InsertBefore = nullptr);
  /// Unlinks and deletes \p N. Its results must be unused; its operands are
  /// released.
  void eraseNode(Node *N);
  /// Moves \p N before \p Before (or to the end when null).
  void moveNode(Node *N, Node *Before);

  /// Value-infos that name no value of this graph, serialized; carried so
  /// nothing is lost (dce removes them).
  std::vector<std::string> OrphanValueInfos;
  /// Serialized GraphProto minus modeled fields (doc_string,
  /// sparse_initializer, quantization_annotation, unknown fields).
  std::string Residual;

  /// Calls \p F on every node of this graph and, recursively, its subgraphs
  /// (pre-order: a node before the nodes of its subgraphs).
  void walk(const std::function<void(Node &)> &F);

private:
  friend class Value;
  Model *M;
  std::string Name;
  Node *ParentNode;
  std::vector<std::unique_ptr<Value>> Inputs;
  std::vector<std::unique_ptr<Value>> Constants;
  std::vector<Value *> Outputs;
  /// For each output, the slot of its Use in the value's use list.
  std::vector<unsigned> OutputUseSlots;
  NodeList Nodes;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_GRAPH_H
