//===- Node.cpp - Operator nodes ------------------------------------------===//
#include "onnxopt/IR/Node.h"
#include "onnxopt/IR/Graph.h"
#include "onnxopt/IR/Model.h"
#include "llvm/ADT/STLExtras.h"
#include <cassert>

using namespace onnxopt;

// A big model has a Node per operator: 8 more bytes were 16 more per node
// in malloc's 16-byte steps (measured: +16 MB at 1M nodes).
static_assert(sizeof(void *) != 8 || sizeof(Node) <= 168,
              "Node grew past 168 bytes");

Node::Node(llvm::StringRef OpType, llvm::StringRef Domain,
           llvm::StringRef NodeName, Graph *G)
    : OpType(internString(OpType)), Domain(internString(Domain)), Parent(G) {
  setName(NodeName);
}

void Node::setName(llvm::StringRef N) {
  // A rename leaves the old text in the arena: nodes are renamed rarely.
  // Names come from protobuf strings, which are below 2 GiB.
  llvm::StringRef Saved =
      N.empty() ? llvm::StringRef() : Parent->getModel().saveString(N);
  NameData = Saved.data();
  NameSize = static_cast<uint32_t>(Saved.size());
}

Node::~Node() {
  // Results must be unused by now (Graph::eraseNode checks); operands are
  // released so that use lists stay exact.
  dropAllOperands();
}

void Node::setOperand(unsigned I, Value *V) {
  assert(I < Operands.size() && "operand index out of range");
  if (Operands[I] == V)
    return;
  if (Operands[I])
    Operands[I]->removeUseAt(OperandUseSlots[I]);
  Operands[I] = V;
  if (V)
    OperandUseSlots[I] = V->addUse(Use{this, nullptr, I});
}

void Node::addOperand(Value *V) {
  Operands.push_back(nullptr);
  OperandUseSlots.push_back(0);
  setOperand(Operands.size() - 1, V);
}

void Node::truncateOperands(unsigned N) {
  while (Operands.size() > N) {
    setOperand(Operands.size() - 1, nullptr);
    Operands.pop_back();
    OperandUseSlots.pop_back();
  }
}

Value *Node::addResult(llvm::StringRef ResultName) {
  if (ResultName.empty()) {
    Results.push_back(nullptr);
    return nullptr;
  }
  std::unique_ptr<Value> V(
      new Value(ResultName, Value::Origin::NodeResult, Parent));
  V->Def = this;
  V->ResultIndex = Results.size();
  Results.push_back(std::move(V));
  return Results.back().get();
}

bool Node::hasSameAttrs(const Node &O) const {
  if (Attrs.size() != O.Attrs.size())
    return false;
  for (const Attribute &A : Attrs) {
    const Attribute *Other = O.getAttr(A.Name);
    if (!Other || !A.equals(*Other))
      return false;
  }
  return true;
}

uint64_t Node::hashAttrs() const {
  // hasSameAttrs matches attributes by name: a sum does not see the order.
  uint64_t H = 0;
  for (const Attribute &A : Attrs)
    H += A.hash();
  return H;
}

const Attribute *Node::getAttr(llvm::StringRef AttrName) const {
  for (const Attribute &A : Attrs)
    if (A.Name == AttrName)
      return &A;
  return nullptr;
}

Attribute *Node::getAttr(llvm::StringRef AttrName) {
  for (Attribute &A : Attrs)
    if (A.Name == AttrName) {
      GraphFree = false;
      return &A;
    }
  return nullptr;
}

/// What getSubgraphs would find in \p A.
static bool holdsGraph(const Attribute &A) {
  return A.isGraph() || !A.Graphs.empty();
}

void Node::setAttr(Attribute A) {
  if (holdsGraph(A))
    GraphFree = false;
  for (Attribute &Old : Attrs)
    if (Old.Name == A.Name) {
      Old = std::move(A);
      return;
    }
  Attrs.push_back(std::move(A));
}

void Node::recheckSubgraphs() {
  GraphFree = llvm::none_of(Attrs, holdsGraph);
}

int64_t Node::getAttrInt(llvm::StringRef AttrName, int64_t Default) const {
  const Attribute *A = getAttr(AttrName);
  return A && A->Kind == AttrKind::Int ? A->I : Default;
}

float Node::getAttrFloat(llvm::StringRef AttrName, float Default) const {
  const Attribute *A = getAttr(AttrName);
  return A && A->Kind == AttrKind::Float ? A->F : Default;
}

llvm::StringRef Node::getAttrString(llvm::StringRef AttrName,
                                    llvm::StringRef Default) const {
  const Attribute *A = getAttr(AttrName);
  return A && A->Kind == AttrKind::String ? llvm::StringRef(A->S) : Default;
}

std::optional<std::vector<int64_t>>
Node::getAttrInts(llvm::StringRef AttrName) const {
  const Attribute *A = getAttr(AttrName);
  if (!A || A->Kind != AttrKind::Ints)
    return std::nullopt;
  return A->Ints;
}

std::vector<Graph *> Node::getSubgraphs() const {
  std::vector<Graph *> Result;
  if (GraphFree)
    return Result;
  for (const Attribute &A : Attrs)
    for (const std::unique_ptr<Graph> &G : A.Graphs)
      Result.push_back(G.get());
  return Result;
}
