//===- RegisterAllPasses.cpp - The built-in passes, registered ------------===//
#include "onnxopt/Pass/PassRegistry.h"
#include "onnxopt/Passes.h"

using namespace onnxopt;

void onnxopt::registerAllPasses() {
  // A function-local flag, not a static constructor: registration happens
  // when a tool asks for it.
  static bool Registered = false;
  if (Registered)
    return;
  Registered = true;
#define ONNXOPT_PASS(Factory) registerPass(Factory);
#include "onnxopt/Passes.def"
}
