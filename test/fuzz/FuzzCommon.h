//===- FuzzCommon.h - Shared helpers of the libFuzzer targets --*- C++ -*-===//
#ifndef ONNXOPT_TEST_FUZZ_FUZZCOMMON_H
#define ONNXOPT_TEST_FUZZ_FUZZCOMMON_H

#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Import/Import.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "onnxopt/Passes.h"
#include "onnxopt/Support/Diagnostics.h"
#include <cstdio>
#include <cstdlib>

namespace onnxopt::fuzz {

/// A diagnostic engine that swallows everything (the fuzzer looks for
/// crashes, not messages); ONNXOPT_FUZZ_VERBOSE=1 prints them.
inline void quiet(DiagnosticEngine &Diags) {
  static const bool Verbose = std::getenv("ONNXOPT_FUZZ_VERBOSE");
  if (!Verbose)
    Diags.setHandler([](const Diagnostic &) {});
}

/// A broken invariant: stops the fuzzer with a crash input.
[[noreturn]] inline void invariantFailed(const char *What) {
  std::fprintf(stderr, "fuzz invariant failed: %s\n", What);
  std::abort();
}

/// Parses a binary model from fuzz bytes and checks the IR invariants
/// (topological order not required: the targets also feed unsorted graphs).
/// Null when the bytes are no valid model: the fuzzer then moves on.
inline std::unique_ptr<Model> loadVerified(llvm::StringRef Bytes,
                                           DiagnosticEngine &Diags) {
  std::unique_ptr<Model> M = parseBinaryModel(Bytes, "", Diags);
  if (!M)
    return nullptr;
  VerifyOptions VO;
  VO.RequireTopologicalOrder = false;
  if (failed(verifyModel(*M, Diags, VO)))
    return nullptr;
  return M;
}

inline void registerOnce() {
  static const bool Done = (registerAllPasses(), true);
  (void)Done;
}

} // namespace onnxopt::fuzz

#endif // ONNXOPT_TEST_FUZZ_FUZZCOMMON_H
