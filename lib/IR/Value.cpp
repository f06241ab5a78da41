//===- Value.cpp - SSA values and their uses ------------------------------===//
#include "onnxopt/IR/Value.h"
#include "onnxopt/IR/Graph.h"
#include "onnxopt/IR/Node.h"
#include <cassert>

using namespace onnxopt;

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
