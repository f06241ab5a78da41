//===- onnx-opt.cpp - The onnx-opt command -------------------------------===//
#include "onnxopt/Tool/OnnxOptMain.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdio>
#include <cstdlib>

#ifdef __has_feature
#define ONNXOPT_HAS_FEATURE(X) __has_feature(X)
#else
#define ONNXOPT_HAS_FEATURE(X) 0
#endif

int main(int Argc, char **Argv) {
  int RC = onnxopt::onnxOptMain(Argc, Argv);
#if !defined(__SANITIZE_ADDRESS__) && !ONNXOPT_HAS_FEATURE(address_sanitizer)
  // What is left only frees memory: ONNX's schema registry and the other
  // statics take 5-10 ms to tear down, for nothing, at the end of every run.
  // The output streams are flushed first; one that failed takes the normal
  // exit, whose destructors report the failure. Sanitizer builds keep the
  // normal exit for their leak check.
  llvm::outs().flush();
  llvm::errs().flush();
  if (std::fflush(nullptr) == 0 && !llvm::outs().has_error() &&
      !llvm::errs().has_error())
    std::_Exit(RC);
#endif
  return RC;
}
