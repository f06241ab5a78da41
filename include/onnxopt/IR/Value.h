//===- Value.h - SSA values and their uses ---------------------*- C++ -*-===//
#ifndef ONNXOPT_IR_VALUE_H
#define ONNXOPT_IR_VALUE_H

#include "onnxopt/IR/Tensor.h"
#include "onnxopt/IR/Type.h"
#include "onnxopt/Support/ColdString.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMapEntry.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <optional>
#include <string>

namespace onnxopt {

class Node;
class Graph;
class Value;

/// One use of a value: operand \c Index of \c User, or, when User is null,
/// output \c Index of graph \c OutputOf.
struct Use {
  Node *User = nullptr;
  Graph *OutputOf = nullptr;
  unsigned Index = 0;
  bool isGraphOutput() const { return User == nullptr; }
  bool operator==(const Use &O) const {
    return User == O.User && OutputOf == O.OutputOf && Index == O.Index;
  }
};

/// What a model keeps for each name (Model's name table): whether a value
/// or a caller reserved it, and, only while a graph is being imported, the
/// value the name resolves to there. The importer resolves an operand with
/// the one lookup that finds the name's entry, and defines a value through
/// the entry the value already holds, instead of keeping a map of its own
/// (a 50 MB table at 1M nodes, a third of the load's time). One word: the
/// reserved flag is the low bit of the value's address.
class NameSlot {
public:
  bool isReserved() const { return Bits & 1; }
  void setReserved(bool R) { Bits = (Bits & ~uintptr_t(1)) | uintptr_t(R); }
  /// Null outside an import (the importer clears what it set).
  Value *getImportDef() const {
    return reinterpret_cast<Value *>(Bits & ~uintptr_t(1));
  }
  void setImportDef(Value *V) {
    Bits = reinterpret_cast<uintptr_t>(V) | (Bits & 1);
  }

private:
  uintptr_t Bits = 0;
};
using NameEntry = llvm::StringMapEntry<NameSlot>;

/// An SSA value: a graph input, an initializer (possibly also an input), or
/// a node result. Use lists are exact and are maintained by Node::setOperand
/// and Graph output setters; never edit them directly.
///
/// A big model has a Value per tensor, so the layout is kept small (136
/// bytes): the name is the model's entry for it (Model::internName), and
/// what few values have (an initializer, residual proto bytes, more than one
/// use) is out of line.
class Value {
public:
  enum class Origin : uint8_t { GraphInput, Initializer, NodeResult };

  llvm::StringRef getName() const { return Name->getKey(); }
  /// Renames the value. Callers must keep names unique (Model::makeUniqueName).
  void setName(llvm::StringRef N);

  const Type &getType() const { return Ty; }
  Type &getMutableType() { return Ty; }
  void setType(Type T) { Ty = std::move(T); }

  Origin getOrigin() const { return Orig; }
  /// True for graph inputs (including inputs that also have an initializer).
  bool isGraphInput() const { return Orig == Origin::GraphInput; }
  /// True when the value has an initializer (constant or default value).
  bool hasInitializer() const { return Init && !Init->isNull(); }
  /// True for an initializer that is not also a graph input: a constant.
  bool isConstant() const { return hasInitializer() && !isGraphInput(); }
  /// A null tensor when there is none.
  const Tensor &getInitializer() const;
  void setInitializer(Tensor T);

  /// Producer of a NodeResult, else null.
  Node *getDefiningNode() const { return Def; }
  unsigned getResultIndex() const { return ResultIndex; }
  /// The graph in which the value is defined.
  Graph *getOwningGraph() const { return Owner; }

  llvm::ArrayRef<Use> getUses() const { return Uses; }
  bool use_empty() const { return Uses.empty(); }
  size_t getNumUses() const { return Uses.size(); }
  /// True if some graph (the owner or a subgraph) lists it as output.
  bool isGraphOutput() const;
  /// True if the owning graph lists this value among its outputs.
  bool isOutputOf(const Graph &G) const;

  /// Serialized ValueInfoProto minus name/type (doc_string, unknown fields).
  ColdString Residual;
  /// Set when the model had a value_info entry for this intermediate value.
  bool HadValueInfo = false;

private:
  // Orig and ResultIndex sit among the public flag and orders so that no
  // padding is left: a Value is 136 bytes, 144 with malloc's header (at 144
  // it took 160: 19 MB more at 1M nodes).
  Origin Orig;

public:
  /// Import order of the value_info / initializer entry, to keep export order
  /// (protobuf's 2 GiB limit keeps indices far below 2^32).
  uint32_t InfoOrder = UINT32_MAX;
  uint32_t InitOrder = UINT32_MAX;

private:
  unsigned ResultIndex = 0;
  friend class Node;
  friend class Graph;
  friend class Model;
  Value(llvm::StringRef Name, Origin O, Graph *Owner);
  /// Appends a use; returns its slot, which the user remembers so that
  /// removal is O(1) (swap with the last use, then fix that use's slot).
  unsigned addUse(Use U) {
    Uses.push_back(U);
    return Uses.size() - 1;
  }
  void removeUseAt(unsigned Slot);

  /// The model's entry for the name (see NameSlot).
  const NameEntry *Name;
  Type Ty;
  Graph *Owner;
  Node *Def = nullptr;
  /// Null for the many values that have no initializer.
  std::unique_ptr<Tensor> Init;
  /// Most values have one use (93% of those of bench/gen_torch_style.py).
  llvm::SmallVector<Use, 1> Uses;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_VALUE_H
