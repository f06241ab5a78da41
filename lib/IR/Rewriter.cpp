//===- Rewriter.cpp - The only way passes mutate the IR -------------------===//
#include "onnxopt/IR/Rewriter.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
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

LogicalResult Rewriter::replaceNode(Node *N,
                                    llvm::ArrayRef<Value *> NewValues) {
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

/// True if a Constant node of \p M's default-domain opset can hold
/// elements of \p ElemType: before opset 9 its value must be a float type.
static bool constantNodeHolds(const Model &M, int32_t ElemType) {
  return M.getOpsetVersion("") >= 9 ||
         ElemType == static_cast<int32_t>(ElementType::Float) ||
         ElemType == static_cast<int32_t>(ElementType::Float16) ||
         ElemType == static_cast<int32_t>(ElementType::Double);
}

static Type typeOfTensor(const Tensor &T) {
  std::vector<Dim> Dims;
  for (int64_t D : T.getDims())
    Dims.push_back(Dim::known(D));
  return Type::tensor(T.getElemType(), Dims);
}

Value *Rewriter::replaceWithConstant(Value &V, Tensor T) {
  Node *Def = V.getDefiningNode();
  if (!Def)
    return nullptr;
  Graph &G = *Def->getParentGraph();
  bool IsOutput = V.isGraphOutput();
  Value *C = nullptr;
  if (IsOutput || M.getIrVersion() < 4) {
    if (!constantNodeHolds(M, T.getElemType()))
      return nullptr;
    Graph *SavedGraph = InsertGraph;
    Node *SavedBefore = InsertBefore;
    setInsertionPointBefore(Def);
    Node *CN = createNode("Constant", {}, 1, "", Def->getName());
    // Restore as it was (possibly unset: no graph yet).
    InsertGraph = SavedGraph;
    InsertBefore = SavedBefore;
    C = CN->getResult(0);
    // An output keeps the type the interface declares.
    C->setType(IsOutput ? V.getType() : typeOfTensor(T));
    CN->setAttr(Attribute::getTensor("value", T.withName("")));
    if (failed(replaceAllUsesWith(&V, C))) {
      eraseNode(CN);
      return nullptr;
    }
    // replaceAllUsesWith already gave an output's name to the constant.
    if (IsOutput)
      return C;
  } else {
    C = createConstant(G, std::move(T));
    if (failed(replaceAllUsesWith(&V, C))) {
      G.eraseConstant(C);
      return nullptr;
    }
  }
  // Both names are reserved in the model: swapping keeps them unique.
  std::string Name = V.getName().str();
  V.setName(C->getName());
  C->setName(Name);
  return C;
}

unsigned Rewriter::eraseDeadChains(llvm::ArrayRef<Node *> Roots) {
  unsigned NumErased = 0;
  llvm::DenseSet<const Node *> Erased;
  DeadConstantSweep DeadConstants;
  // Last root first: the order callers collected them in is kept.
  std::vector<Node *> Work(Roots.rbegin(), Roots.rend());
  auto HasUsedResult = [](const Node &N) {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (const Value *V = N.getResult(I))
        if (!V->use_empty())
          return true;
    return false;
  };
  while (!Work.empty()) {
    Node *N = Work.back();
    Work.pop_back();
    // A node can be reached through two operands: never touch it twice.
    if (Erased.count(N) || HasUsedResult(*N))
      continue;
    // Each operand once, even if N reads it twice (Concat(C, C)).
    llvm::SmallSetVector<Value *, 4> Operands;
    for (Value *V : N->getOperands())
      if (V)
        Operands.insert(V);
    Erased.insert(N);
    eraseNode(N);
    ++NumErased;
    for (Value *V : Operands) {
      if (!V->use_empty())
        continue;
      if (V->isConstant() && !V->isGraphOutput()) {
        DeadConstants.add(V);
        continue;
      }
      Node *Def = V->getDefiningNode();
      if (Def && Def->isOnnxDomain() && Def->getSubgraphs().empty())
        Work.push_back(Def);
    }
  }
  DeadConstants.run();
  return NumErased;
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

void DeadConstantSweep::run() {
  for (auto &Entry : Dead) {
    const llvm::DenseSet<const Value *> &Set = Entry.second;
    Entry.first->eraseUnusedConstants(
        [&Set](const Value &V) { return Set.count(&V) != 0; });
  }
  Dead.clear();
}
