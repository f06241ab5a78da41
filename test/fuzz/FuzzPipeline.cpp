//===- FuzzPipeline.cpp - Pipeline parse, print, parse --------------------===//
//
// A pipeline the parser accepts prints as a pipeline that parses to the
// same printed form.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"
#include "onnxopt/Pass/PassManager.h"

using namespace onnxopt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  fuzz::registerOnce();
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  PassManager PM;
  std::string Error;
  if (failed(parsePassPipeline(Text, PM, Error)))
    return 0;
  std::string First;
  {
    llvm::raw_string_ostream OS(First);
    PM.printAsTextualPipeline(OS);
  }
  PassManager PM2;
  if (failed(parsePassPipeline(First, PM2, Error)))
    fuzz::invariantFailed("the printed pipeline does not parse");
  std::string Second;
  {
    llvm::raw_string_ostream OS(Second);
    PM2.printAsTextualPipeline(OS);
  }
  if (First != Second)
    fuzz::invariantFailed("printing the reparsed pipeline differs");
  return 0;
}
