//===- Rewriter.cpp - The only way passes mutate the IR -------------------===//
#include "onnxopt/IR/Rewriter.h"
#include "llvm/Support/Debug.h"
#include <cassert>

#define DEBUG_TYPE "rewriter"

using namespace onnxopt;

RewriteListener::~RewriteListener() = default;

Node *Rewriter::createNode(llvm::StringRef OpType,
                           llvm::ArrayRef<Value *> Operands,
                           unsigned NumResults, llvm::StringRef Domain,
                           llvm::StringRef NameHint) {
  assert(InsertGraph && "no insertion point set");
  llvm::StringRef Hint = NameHint.empty() ? OpType : NameHint;
  std::vector<std::string> ResultNames;
  for (unsigned I = 0; I < NumResults; ++I)
    ResultNames.push_back(M.makeUniqueName(Hint.str() + "_out"));
  Node *N = InsertGraph->createNode(OpType, Domain, M.makeUniqueName(Hint),
                                    Operands, ResultNames, InsertBefore);
  if (Listener)
    Listener->notifyNodeInserted(N);
  return N;
}

Value *Rewriter::createConstant(Graph &G, Tensor T) {
  std::string Name =
      M.makeUniqueName(T.getName().empty() ? "const" : T.getName());
  if (T.getName() != Name)
    T = T.withName(Name);
  Type Ty = Type::tensor(T.getElemType(), std::vector<Dim>());
  for (int64_t D : T.getDims())
    Ty.getMutableDims().push_back(Dim::known(D));
  Value *V = G.addConstant(Name, std::move(T));
  V->setType(std::move(Ty));
  return V;
}

void Rewriter::eraseNode(Node *N) {
  if (Listener)
    Listener->notifyNodeErased(N);
  N->getParentGraph()->eraseNode(N);
}

bool onnxopt::canReplaceAllUsesWith(const Value *From, const Value *To) {
  if (From == To || !From->isGraphOutput())
    return true;
  // A graph output keeps its name; only an ordinary node result of the same
  // graph, not already an output anywhere, can take it over.
  if (To->getOrigin() != Value::Origin::NodeResult || To->isGraphOutput())
    return false;
  for (const Use &U : From->getUses())
    if (U.isGraphOutput() && U.OutputOf != To->getOwningGraph())
      return false;
  return true;
}

LogicalResult Rewriter::replaceAllUsesWith(Value *From, Value *To) {
  if (From == To)
    return success();
  if (!canReplaceAllUsesWith(From, To))
    return failure();
  if (From->isGraphOutput()) {
    // Swapping keeps names unique and the graph interface unchanged.
    std::string FromName = From->getName().str();
    From->setName(To->getName());
    To->setName(FromName);
    if (To->getType().isNone() ||
        (From->getType().isTensor() && To->getType().isTensor() &&
         !To->getType().hasShape()))
      To->setType(From->getType());
    To->HadValueInfo |= From->HadValueInfo;
    if (To->Residual.empty())
      To->Residual = From->Residual;
  }
  std::vector<Use> Uses(From->getUses().begin(), From->getUses().end());
  for (const Use &U : Uses) {
    if (U.isGraphOutput()) {
      U.OutputOf->setOutput(U.Index, To);
      continue;
    }
    U.User->setOperand(U.Index, To);
    if (Listener)
      Listener->notifyNodeModified(U.User);
  }
  if (Listener)
    Listener->notifyValueReplaced(From, To);
  return success();
}

LogicalResult Rewriter::replaceNode(Node *N, llvm::ArrayRef<Value *> NewValues) {
  assert(NewValues.size() == N->getNumResults() && "result count mismatch");
  for (unsigned I = 0; I < N->getNumResults(); ++I) {
    Value *Old = N->getResult(I);
    if (Old && !Old->use_empty() &&
        (!NewValues[I] || !canReplaceAllUsesWith(Old, NewValues[I])))
      return failure();
  }
  for (unsigned I = 0; I < N->getNumResults(); ++I) {
    Value *Old = N->getResult(I);
    if (Old && !Old->use_empty())
      (void)replaceAllUsesWith(Old, NewValues[I]);
  }
  eraseNode(N);
  return success();
}

void Rewriter::setOperand(Node *N, unsigned I, Value *V) {
  N->setOperand(I, V);
  notifyModified(N);
}

void Rewriter::setType(Value *V, Type T) {
  V->setType(std::move(T));
  if (Node *Def = V->getDefiningNode())
    notifyModified(Def);
}

void Rewriter::notifyModified(Node *N) {
  if (Listener)
    Listener->notifyNodeModified(N);
}

LogicalResult Rewriter::notifyMatchFailure(const Node &N,
                                           llvm::StringRef Reason) {
  LLVM_DEBUG(llvm::dbgs() << describe(N) << ": no match: " << Reason << "\n");
  (void)Reason;
  return failure();
}
