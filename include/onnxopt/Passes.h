//===- Passes.h - Factories of the built-in passes -------------*- C++ -*-===//
#ifndef ONNXOPT_PASSES_H
#define ONNXOPT_PASSES_H

#include "onnxopt/Pass/Pass.h"
#include <memory>

namespace onnxopt {
#define ONNXOPT_PASS(Factory) std::unique_ptr<Pass> Factory();
#include "onnxopt/Passes.def"

/// Registers every built-in pass (those listed in Passes.def) with the pass
/// registry. Idempotent. Lives in the transforms library, so the pass layer
/// does not depend on the passes.
void registerAllPasses();
} // namespace onnxopt

#endif // ONNXOPT_PASSES_H
