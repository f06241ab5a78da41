//===- Value.cpp - SSA values and their uses ------------------------------===//
#include "onnxopt/IR/Value.h"
#include "onnxopt/IR/Graph.h"
#include "onnxopt/IR/Model.h"
#include "onnxopt/IR/Node.h"
#include <cassert>

using namespace onnxopt;

Value::Value(llvm::StringRef Name, Origin O, Graph *Owner)
    : Orig(O), Name(Owner->getModel().internName(Name)), Owner(Owner) {}

// A big model has a Value per tensor (see the layout note in Value.h).
static_assert(sizeof(void *) != 8 || sizeof(Value) <= 136,
              "Value grew past 136 bytes");

void Value::setName(llvm::StringRef N) {
  Name = Owner->getModel().internName(N);
}

const Tensor &Value::getInitializer() const {
  static const Tensor None;
  return Init ? *Init : None;
}

void Value::setInitializer(Tensor T) {
  // Assigned in place when there is one, so that a reference to it stays a
  // reference to this value's initializer.
  if (Init)
    *Init = std::move(T);
  else if (!T.isNull())
    Init = std::make_unique<Tensor>(std::move(T));
}

void Value::removeUseAt(unsigned Slot) {
  assert(Slot < Uses.size() && "use slot out of range");
  unsigned Last = Uses.size() - 1;
  if (Slot != Last) {
    Uses[Slot] = Uses[Last];
    const Use &Moved = Uses[Slot];
    if (Moved.isGraphOutput())
      Moved.OutputOf->OutputUseSlots[Moved.Index] = Slot;
    else
      Moved.User->OperandUseSlots[Moved.Index] = Slot;
  }
  Uses.pop_back();
}

bool Value::isGraphOutput() const {
  for (const Use &U : Uses)
    if (U.isGraphOutput())
      return true;
  return false;
}

bool Value::isOutputOf(const Graph &G) const {
  for (const Use &U : Uses)
    if (U.isGraphOutput() && U.OutputOf == &G)
      return true;
  return false;
}
