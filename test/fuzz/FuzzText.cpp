//===- FuzzText.cpp - Text parse, print, parse ----------------------------===//
//
// Any text the parser accepts and the verifier passes prints as text that
// parses again; after one round (which may drop what the printer notes it
// cannot express) printing and parsing again changes nothing.
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
  // The first print may be lossy where the printer says so (a "# note:"
  // line: a form ONNX 1.12 text cannot express); from then on printing and
  // parsing must be a fixpoint.
  auto Print = [](const Model &Mod) {
    std::string S;
    llvm::raw_string_ostream OS(S);
    printModel(Mod, OS);
    return OS.str();
  };
  auto Reparse = [](const std::string &Text) {
    DiagnosticEngine D;
    fuzz::quiet(D);
    std::unique_ptr<Model> R = parseTextModel(Text, D);
    if (!R)
      fuzz::invariantFailed("the printed model does not parse");
    return R;
  };
  std::string First = Print(*M);
  std::unique_ptr<Model> M2 = Reparse(First);
  std::string Second = Print(*M2);
  if (Second != First) {
    std::unique_ptr<Model> M3 = Reparse(Second);
    if (Print(*M3) != Second)
      fuzz::invariantFailed("printing the reparsed model differs");
  }
  return 0;
}
