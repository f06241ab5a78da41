//===- PassRegistry.h - Named passes ---------------------------*- C++ -*-===//
#ifndef ONNXOPT_PASS_PASSREGISTRY_H
#define ONNXOPT_PASS_PASSREGISTRY_H

#include "onnxopt/Pass/Pass.h"
#include <functional>
#include <memory>
#include <vector>

namespace onnxopt {

using PassFactory = std::function<std::unique_ptr<Pass>()>;

/// Registers a pass under its argument. Later registrations of the same
/// argument replace earlier ones. Not thread-safe; call before parsing.
void registerPass(PassFactory Factory);
/// Creates a pass by argument; null if unknown.
std::unique_ptr<Pass> createPass(llvm::StringRef Argument);
/// One instance of each registered pass, sorted by argument.
std::vector<std::unique_ptr<Pass>> getRegisteredPasses();
/// Prints every pass with its options and description (--list-passes).
void printRegisteredPasses(llvm::raw_ostream &OS);

} // namespace onnxopt

#endif // ONNXOPT_PASS_PASSREGISTRY_H
