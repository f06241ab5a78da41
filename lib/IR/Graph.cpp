//===- Graph.cpp - Graphs and subgraphs -----------------------------------===//
#include "onnxopt/IR/Graph.h"
#include "onnxopt/IR/Model.h"
#include "llvm/ADT/STLExtras.h"
#include <cassert>

using namespace onnxopt;

/// Drops every operand and output reference held by \p G and its subgraphs,
/// so values can then be freed in any order.
static void dropAllReferences(Graph &G) {
  for (Node &N : G.getNodes()) {
    N.dropAllOperands();
    for (Graph *Sub : N.getSubgraphs())
      dropAllReferences(*Sub);
  }
  while (G.getNumOutputs())
    G.eraseOutput(G.getNumOutputs() - 1);
}

Graph::~Graph() {
  dropAllReferences(*this);
  while (!Nodes.empty()) {
    Node &N = Nodes.back();
    Nodes.remove(N);
    delete &N;
  }
}

Graph *Graph::getParentGraph() const {
  return ParentNode ? ParentNode->getParentGraph() : nullptr;
}

std::string Graph::getPath() const {
  std::string Own = Name.empty() ? std::string("<unnamed>") : Name;
  if (const Graph *P = getParentGraph())
    return P->getPath() + "/" + Own;
  return Own;
}

Value *Graph::addInput(llvm::StringRef InputName, Type T) {
  std::unique_ptr<Value> V(
      new Value(InputName, Value::Origin::GraphInput, this));
  V->setType(std::move(T));
  Inputs.push_back(std::move(V));
  return Inputs.back().get();
}

Value *Graph::addConstant(llvm::StringRef ConstName, Tensor T) {
  std::unique_ptr<Value> V(
      new Value(ConstName, Value::Origin::Initializer, this));
  V->setInitializer(std::move(T));
  Constants.push_back(std::move(V));
  return Constants.back().get();
}

void Graph::eraseConstant(Value *V) {
  assert(V->use_empty() && "erasing a constant that is still used");
  // From the end: the constant erased is most often one just added.
  for (auto It = Constants.rbegin(); It != Constants.rend(); ++It) {
    if (It->get() == V) {
      Constants.erase(std::next(It).base());
      return;
    }
  }
  assert(false && "not a constant of this graph");
}

size_t Graph::eraseUnusedConstants(
    const std::function<bool(const Value &)> &Pred) {
  size_t Before = Constants.size();
  llvm::erase_if(Constants, [&](const std::unique_ptr<Value> &V) {
    return V->use_empty() && (!Pred || Pred(*V));
  });
  return Before - Constants.size();
}

void Graph::addOutput(Value *V) {
  Outputs.push_back(V);
  OutputUseSlots.push_back(
      V->addUse(Use{nullptr, this, unsigned(Outputs.size() - 1)}));
}

void Graph::setOutput(unsigned I, Value *V) {
  assert(I < Outputs.size() && "output index out of range");
  if (Outputs[I] == V)
    return;
  Outputs[I]->removeUseAt(OutputUseSlots[I]);
  Outputs[I] = V;
  OutputUseSlots[I] = V->addUse(Use{nullptr, this, I});
}

void Graph::eraseOutput(unsigned I) {
  assert(I < Outputs.size() && "output index out of range");
  // Later outputs shift down by one; their recorded uses follow. Removing
  // from the back keeps each removal O(1) and the slots valid.
  for (unsigned K = Outputs.size(); K-- > I;)
    Outputs[K]->removeUseAt(OutputUseSlots[K]);
  Outputs.erase(Outputs.begin() + I);
  OutputUseSlots.resize(Outputs.size());
  for (unsigned K = I; K < Outputs.size(); ++K)
    OutputUseSlots[K] = Outputs[K]->addUse(Use{nullptr, this, K});
}

Node *Graph::createNode(llvm::StringRef OpType, llvm::StringRef Domain,
                        llvm::StringRef NodeName,
                        llvm::ArrayRef<Value *> Operands,
                        llvm::ArrayRef<std::string> ResultNames,
                        Node *InsertBefore) {
  Node *N = new Node(OpType, Domain, NodeName, this);
  for (Value *V : Operands)
    N->addOperand(V);
  for (const std::string &R : ResultNames)
    N->addResult(R);
  if (InsertBefore)
    Nodes.insert(InsertBefore->getIterator(), *N);
  else
    Nodes.push_back(*N);
  return N;
}

void Graph::eraseNode(Node *N) {
  assert(N->getParentGraph() == this && "node is not in this graph");
#ifndef NDEBUG
  for (unsigned I = 0; I < N->getNumResults(); ++I)
    assert((!N->getResult(I) || N->getResult(I)->use_empty()) &&
           "erasing a node whose results are still used");
#endif
  // Subgraphs may reference outer values; release those uses first.
  for (Graph *Sub : N->getSubgraphs())
    dropAllReferences(*Sub);
  N->dropAllOperands();
  Nodes.remove(*N);
  delete N;
}

void Graph::moveNode(Node *N, Node *Before) {
  Nodes.remove(*N);
  if (Before)
    Nodes.insert(Before->getIterator(), *N);
  else
    Nodes.push_back(*N);
}

void Graph::walk(const std::function<void(Node &)> &F) {
  for (Node &N : Nodes) {
    F(N);
    for (Graph *Sub : N.getSubgraphs())
      Sub->walk(F);
  }
}
