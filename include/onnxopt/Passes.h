//===- Passes.h - Factories of the built-in passes -------------*- C++ -*-===//
#ifndef ONNXOPT_PASSES_H
#define ONNXOPT_PASSES_H

#include "onnxopt/Pass/Pass.h"
#include <memory>

namespace onnxopt {
#define ONNXOPT_PASS(Factory) std::unique_ptr<Pass> Factory();
#include "passes/Passes.def"
} // namespace onnxopt

#endif // ONNXOPT_PASSES_H
