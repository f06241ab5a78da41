//===- Attribute.h - Node attributes ---------------------------*- C++ -*-===//
//
// Attributes of a node. Scalars, lists, tensors and subgraphs are modeled;
// sparse tensors, type protos, ref_attr_name and doc_string travel in the
// residual (a serialized AttributeProto with the modeled fields cleared).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_ATTRIBUTE_H
#define ONNXOPT_IR_ATTRIBUTE_H

#include "onnxopt/IR/Tensor.h"
#include "onnxopt/Support/ColdString.h"
#include "onnxopt/Support/ColdVector.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>
#include <vector>

namespace onnxopt {

class Graph;

/// Values match onnx::AttributeProto_AttributeType.
enum class AttrKind : uint8_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  SparseTensor = 11,
  TypeProto = 13,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensors = 12,
  TypeProtos = 14,
};

class Attribute {
public:
  Attribute() = default;
  Attribute(Attribute &&) = default;
  Attribute &operator=(Attribute &&) = default;
  ~Attribute();

  static Attribute getInt(llvm::StringRef Name, int64_t V);
  static Attribute getFloat(llvm::StringRef Name, float V);
  static Attribute getString(llvm::StringRef Name, llvm::StringRef V);
  static Attribute getInts(llvm::StringRef Name, std::vector<int64_t> V);
  static Attribute getFloats(llvm::StringRef Name, std::vector<float> V);
  static Attribute getStrings(llvm::StringRef Name, std::vector<std::string> V);
  static Attribute getTensor(llvm::StringRef Name, onnxopt::Tensor V);

  // One payload field is used, the one of Kind: the others cost a pointer
  // each (120 bytes in all, against 216 with a std::vector per kind).
  std::string Name;
  int64_t I = 0;
  float F = 0;
  AttrKind Kind = AttrKind::Undefined;
  ColdString S;
  ColdVector<int64_t> Ints;
  ColdVector<float> Floats;
  ColdVector<std::string> Strings;
  /// Kind::Tensor uses Tensors[0]. A plain vector: a Constant's value is
  /// one heap block, not two.
  std::vector<onnxopt::Tensor> Tensors;
  /// Kind::Graph uses Graphs[0]. Owned; their ParentNode is the node.
  ColdVector<std::unique_ptr<onnxopt::Graph>> Graphs;
  /// Serialized AttributeProto holding everything not modeled above
  /// (doc_string, ref_attr_name, sparse_tensor(s), tp/type_protos, unknown
  /// fields). Empty when there is nothing to carry (nearly always).
  ColdString Residual;

  bool isGraph() const {
    return Kind == AttrKind::Graph || Kind == AttrKind::Graphs;
  }
  /// Structural equality for scalars/lists/tensors (by content) and the
  /// residual. Attributes holding graphs never compare equal.
  bool equals(const Attribute &O) const;
  /// A hash consistent with equals.
  uint64_t hash() const;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_ATTRIBUTE_H
