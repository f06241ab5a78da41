//===- FuzzText.cpp - Text parse, print, parse ----------------------------===//
//
// Any text the parser accepts and the verifier passes prints as text that
// parses again, to a model that prints the same.
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
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  std::unique_ptr<Model> M = parseTextModel(Text, Diags);
  if (!M)
    return 0;
  VerifyOptions VO;
  VO.RequireTopologicalOrder = false;
  if (failed(verifyModel(*M, Diags, VO)))
    return 0;
  std::string First;
  {
    llvm::raw_string_ostream OS(First);
    printModel(*M, OS);
  }
  DiagnosticEngine Again;
  fuzz::quiet(Again);
  std::unique_ptr<Model> M2 = parseTextModel(First, Again);
  if (!M2)
    fuzz::invariantFailed("the printed model does not parse");
  std::string Second;
  {
    llvm::raw_string_ostream OS(Second);
    printModel(*M2, OS);
  }
  if (First != Second)
    fuzz::invariantFailed("printing the reparsed model differs");
  return 0;
}
