//===- Node.h - Operator nodes ---------------------------------*- C++ -*-===//
#ifndef ONNXOPT_IR_NODE_H
#define ONNXOPT_IR_NODE_H

#include "onnxopt/IR/Attribute.h"
#include "onnxopt/IR/Value.h"
#include "onnxopt/Support/ColdString.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/ilist_node.h"
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace onnxopt {

class Graph;

/// An operator invocation. Operands may be null (an omitted optional input,
/// written "" in ONNX); results may be null (an omitted optional output).
/// Nodes live in their graph's list in topological order.
///
/// Kept small (168 bytes, no heap part for up to two operands and one
/// result): op type and domain are interned, the name is stored in the
/// model's arena.
class Node : public llvm::ilist_node<Node> {
public:
  ~Node();

  llvm::StringRef getOpType() const { return OpType->getKey(); }
  /// The domain, "" for the default ONNX domain ("ai.onnx" is normalized
  /// only for lookups; the original spelling is kept for export).
  llvm::StringRef getDomain() const { return Domain->getKey(); }
  bool isOnnxDomain() const {
    llvm::StringRef D = getDomain();
    return D.empty() || D == "ai.onnx";
  }
  /// (op type, domain) by identity: both are interned, so equal pairs are
  /// equal ops. A cheap key for per-op caches (schemas, resolutions).
  using OpKey = std::pair<const InternedString *, const InternedString *>;
  OpKey getOpKey() const { return {OpType, Domain}; }

  /// True for an op of the default domain with the given type.
  bool is(llvm::StringRef Op) const {
    return isOnnxDomain() && getOpType() == Op;
  }

  llvm::StringRef getName() const { return llvm::StringRef(NameData, NameSize); }
  void setName(llvm::StringRef N);

  Graph *getParentGraph() const { return Parent; }

  // Operands.
  unsigned getNumOperands() const { return Operands.size(); }
  Value *getOperand(unsigned I) const { return Operands[I]; }
  llvm::ArrayRef<Value *> getOperands() const { return Operands; }
  /// Where operand \p I's entry is in its value's use list (the verifier
  /// checks the two agree without counting uses in a map).
  unsigned getOperandUseSlot(unsigned I) const { return OperandUseSlots[I]; }
  /// Sets operand \p I (null = omitted), keeping use lists exact.
  void setOperand(unsigned I, Value *V);
  void addOperand(Value *V);
  /// Drops trailing operands so that only \p N remain.
  void truncateOperands(unsigned N);
  void dropAllOperands() { truncateOperands(0); }

  // Results.
  unsigned getNumResults() const { return Results.size(); }
  Value *getResult(unsigned I) const { return Results[I].get(); }
  /// Adds a result named \p Name (the caller ensures uniqueness). An empty
  /// name adds an omitted optional output.
  Value *addResult(llvm::StringRef Name);

  // Attributes, in their original order.
  llvm::ArrayRef<Attribute> getAttrs() const { return Attrs; }
  /// The attributes themselves. Until recheckSubgraphs() is called, the
  /// node counts as one that may hold a subgraph (getSubgraphs looks).
  std::vector<Attribute> &getMutableAttrs() {
    GraphFree = false;
    return Attrs;
  }
  /// Notes whether any attribute holds a graph, after getMutableAttrs().
  void recheckSubgraphs();
  const Attribute *getAttr(llvm::StringRef Name) const;
  /// The same attributes as \p O, by name (order does not matter) and by
  /// Attribute::equals (so never when one holds a graph).
  bool hasSameAttrs(const Node &O) const;
  /// A hash consistent with hasSameAttrs (so independent of their order).
  uint64_t hashAttrs() const;
  /// Mutable: the node then counts as one that may hold a subgraph.
  Attribute *getAttr(llvm::StringRef Name);
  bool hasAttr(llvm::StringRef Name) const { return getAttr(Name); }
  /// Replaces an attribute of the same name or appends it.
  void setAttr(Attribute A);
  int64_t getAttrInt(llvm::StringRef Name, int64_t Default) const;
  float getAttrFloat(llvm::StringRef Name, float Default) const;
  llvm::StringRef getAttrString(llvm::StringRef Name,
                                llvm::StringRef Default = "") const;
  std::optional<std::vector<int64_t>> getAttrInts(llvm::StringRef Name) const;

  /// Every subgraph held by a graph or graphs attribute, in attribute order.
  std::vector<Graph *> getSubgraphs() const;

  /// Serialized NodeProto minus the modeled fields (doc_string, unknown
  /// fields).
  ColdString Residual;

private:
  friend class Graph;
  friend class Value;
  Node(llvm::StringRef OpType, llvm::StringRef Domain, llvm::StringRef Name,
       Graph *G);

  const InternedString *OpType, *Domain;
  /// In the model's arena (Model::saveString). The size is 32 bits so that
  /// GraphFree fits beside it.
  const char *NameData = nullptr;
  uint32_t NameSize = 0;
  /// No attribute holds a graph: getSubgraphs, which every walk calls on
  /// every node, answers without reading the attributes (a cache miss per
  /// node that has any: 3.5% of the 1M-node pipeline). Cleared by every
  /// mutable access to the attributes that could add a graph.
  bool GraphFree = true;
  Graph *Parent;
  llvm::SmallVector<Value *, 2> Operands;
  /// For each operand, the slot of its Use in the operand's use list.
  llvm::SmallVector<unsigned, 2> OperandUseSlots;
  llvm::SmallVector<std::unique_ptr<Value>, 1> Results;
  std::vector<Attribute> Attrs;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_NODE_H
