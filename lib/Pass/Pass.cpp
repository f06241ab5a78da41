//===- Pass.cpp - The pass base class -------------------------------------===//
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/IR/IR.h"
#include <cassert>

using namespace onnxopt;

Pass::~Pass() = default;

Statistic::Statistic(Pass *Owner, const char *Name, const char *Description)
    : Name(Name), Description(Description) {
  assert(Owner && "a statistic belongs to a pass");
  Owner->Statistics.push_back(this);
}

OptionBase *Pass::findOption(llvm::StringRef Name) const {
  for (OptionBase *O : Options)
    if (O->getName() == Name)
      return O;
  return nullptr;
}

void Pass::printAsTextualPipeline(llvm::raw_ostream &OS) const {
  OS << getArgument();
  bool First = true;
  for (const OptionBase *O : Options) {
    if (!O->hasValue())
      continue;
    OS << (First ? "{" : " ") << O->getName() << '=';
    O->printValue(OS);
    First = false;
  }
  if (!First)
    OS << '}';
}

std::vector<Graph *> onnxopt::collectGraphs(Model &M, GraphPass::Order O) {
  // Iterative: nesting depth comes from the input and must not become C++
  // stack depth. Pre-order lists a graph before its bodies; reversing the
  // pre-order of the mirror traversal would not keep sibling order, so
  // post-order is built with an explicit (graph, children done) stack.
  std::vector<Graph *> Out;
  auto ChildrenOf = [](Graph &G) {
    std::vector<Graph *> Kids;
    for (Node &N : G.getNodes())
      for (Graph *Sub : N.getSubgraphs())
        Kids.push_back(Sub);
    return Kids;
  };
  if (O == GraphPass::Order::ParentFirst) {
    std::vector<Graph *> Stack{&M.getGraph()};
    while (!Stack.empty()) {
      Graph *G = Stack.back();
      Stack.pop_back();
      Out.push_back(G);
      std::vector<Graph *> Kids = ChildrenOf(*G);
      Stack.insert(Stack.end(), Kids.rbegin(), Kids.rend());
    }
    return Out;
  }
  struct Frame {
    Graph *G;
    std::vector<Graph *> Kids;
    size_t Next = 0;
  };
  std::vector<Frame> Stack;
  Stack.push_back({&M.getGraph(), ChildrenOf(M.getGraph())});
  while (!Stack.empty()) {
    Frame &F = Stack.back();
    if (F.Next < F.Kids.size()) {
      Graph *Kid = F.Kids[F.Next++];
      Stack.push_back({Kid, ChildrenOf(*Kid)});
      continue;
    }
    Out.push_back(F.G);
    Stack.pop_back();
  }
  return Out;
}

LogicalResult GraphPass::run(Model &M, PassContext &Ctx) {
  for (Graph *G : collectGraphs(M, getOrder()))
    if (failed(runOnGraph(*G, M, Ctx)))
      return failure();
  return finishModel(M, Ctx);
}
