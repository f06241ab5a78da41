//===- FuzzPasses.cpp - Load, shape pipeline, save ------------------------===//
//
// Any binary model that loads and verifies goes through the shape passes
// and is saved; every step may fail with a diagnostic, none may crash.
// The first input byte picks one of a few pipelines, so that passes also
// see each other's output.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Import/Import.h"
#include "onnxopt/Pass/PassManager.h"

using namespace onnxopt;

static const char *const Pipelines[] = {
#include "pipelines.inc"
};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  fuzz::registerOnce();
  if (Size < 1)
    return 0;
  const char *Pipeline =
      Pipelines[Data[0] % (sizeof(Pipelines) / sizeof(Pipelines[0]))];
  DiagnosticEngine Diags;
  fuzz::quiet(Diags);
  std::unique_ptr<Model> M = fuzz::loadVerified(
      llvm::StringRef(reinterpret_cast<const char *>(Data + 1), Size - 1),
      Diags);
  if (!M)
    return 0;
  PassManager PM;
  std::string Error;
  if (failed(parsePassPipeline(Pipeline, PM, Error)))
    fuzz::invariantFailed("a built-in fuzz pipeline does not parse");
  if (failed(PM.run(*M, Diags)))
    return 0;
  ExportOptions EO;
  (void)saveModel(*M, "/dev/null", FileFormat::Binary, Diags, EO);
  return 0;
}
