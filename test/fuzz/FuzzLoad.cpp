//===- FuzzLoad.cpp - Binary load, verify, save ---------------------------===//
//
// Any byte string: the loader, the IR verifier, the node validation and
// the save-time verification (ONNX checker, strict inference) must end in a
// diagnostic or a model, never a crash.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Import/Import.h"

using namespace onnxopt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  DiagnosticEngine Diags;
  fuzz::quiet(Diags);
  // No base directory: external data may only come from the working
  // directory, where the fuzzer keeps nothing of value.
  std::unique_ptr<Model> M = fuzz::loadVerified(
      llvm::StringRef(reinterpret_cast<const char *>(Data), Size), Diags);
  if (!M)
    return 0;
  ExportOptions EO;
  (void)saveModel(*M, "/dev/null", FileFormat::Binary, Diags, EO);
  return 0;
}
