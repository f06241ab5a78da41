//===- FuzzCommon.h - Shared helpers of the libFuzzer targets --*- C++ -*-===//
#ifndef ONNXOPT_TEST_FUZZ_FUZZCOMMON_H
#define ONNXOPT_TEST_FUZZ_FUZZCOMMON_H

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

inline void registerOnce() {
  static const bool Done = (registerAllPasses(), true);
  (void)Done;
}

} // namespace onnxopt::fuzz

#endif // ONNXOPT_TEST_FUZZ_FUZZCOMMON_H
