//===- Value.cpp - SSA values and their uses ------------------------------===//
#include "onnxopt/IR/Value.h"
#include <cassert>

using namespace onnxopt;

void Value::removeUse(Use U) {
  // Search from the back: the most recent use is the likeliest to go first
  // when a rewrite replaces a node it just created.
  for (size_t I = Uses.size(); I-- > 0;) {
    if (Uses[I] == U) {
      Uses.erase(Uses.begin() + I);
      return;
    }
  }
  assert(false && "removing a use that is not recorded");
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
