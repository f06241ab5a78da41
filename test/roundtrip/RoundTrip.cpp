//===- RoundTrip.cpp - Lossless import/export over a model corpus ---------===//
//
// For every .onnx file below the given directories (or every file given):
// load it with loadModel, export it with exportModel and compare with the
// original ModelProto using MessageDifferencer. The file written by saveModel
// (the streaming writer) is compared too, byte for byte and as a message.
// Prints one summary line and exits non-zero if any model differs.
//
// Modes are functions from a path to a Result, so a text mode (print, parse
// back, compare) can be added next to roundTripBinary.
//
//===----------------------------------------------------------------------===//

#include "ExportProto.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Import/Import.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <google/protobuf/util/message_differencer.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string>
#include <unistd.h>
#include <vector>

using namespace onnxopt;

namespace {

struct Options {
  std::vector<std::string> Inputs;
  std::string TmpDir = ".";
  bool Verify = false;
  bool Verbose = false;
};

struct Result {
  bool Loaded = false;
  bool Equal = false;      ///< exportModel output equals the original
  bool SavedEqual = false; ///< saveModel's file parses to the original
  bool SameBytes = false;  ///< saveModel's file has the original's bytes
  bool Verified = false;   ///< verifyProto accepted the export
  bool Mapped = false;     ///< some raw_data stayed in the mapped file
  std::string Detail;
};

std::optional<std::string> readFile(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return std::nullopt;
  return (*Buf)->getBuffer().str();
}

/// Returns "" when equal, else the differencer's report (truncated).
std::string compare(const onnx::ModelProto &Want, const onnx::ModelProto &Got) {
  google::protobuf::util::MessageDifferencer D;
  std::string Report;
  D.ReportDifferencesToString(&Report);
  if (D.Compare(Want, Got))
    return "";
  if (Report.empty())
    Report = "messages differ";
  if (Report.size() > 2000)
    Report = Report.substr(0, 2000) + "...\n";
  return Report;
}

Result roundTripBinary(const std::string &Path, const Options &Opts) {
  Result R;
  std::optional<std::string> Bytes = readFile(Path);
  onnx::ModelProto Original;
  if (!Bytes || !Original.ParseFromString(*Bytes)) {
    R.Detail = "protobuf cannot parse the original";
    return R;
  }

  std::string Errors;
  DiagnosticEngine Diags;
  Diags.setHandler([&](const Diagnostic &D) {
    llvm::raw_string_ostream OS(Errors);
    Diags.print(OS, D);
  });
  std::unique_ptr<Model> M = loadModel(Path, Diags);
  if (!M) {
    R.Detail = "load failed: " + Errors;
    return R;
  }
  R.Loaded = true;
  for (const auto &V : M->getGraph().getConstants())
    R.Mapped |= V->hasInitializer() && V->getInitializer().hasMappedRawData();
  for (const auto &V : M->getGraph().getInputs())
    R.Mapped |= V->hasInitializer() && V->getInitializer().hasMappedRawData();

  std::unique_ptr<onnx::ModelProto> Exported = exportModel(*M);
  std::string Diff = compare(Original, *Exported);
  R.Equal = Diff.empty();
  if (!R.Equal)
    R.Detail += "exportModel differs:\n" + Diff;

  if (Opts.Verify) {
    R.Verified = succeeded(verifyProto(*Exported, Diags));
    if (!R.Verified)
      R.Detail += "verifyProto failed: " + Errors;
  }

  llvm::SmallString<256> Out(Opts.TmpDir);
  llvm::sys::path::append(Out,
                          "roundtrip-" + std::to_string(::getpid()) + ".onnx");
  ExportOptions EO;
  EO.Verify = false;
  if (failed(saveModel(*M, Out, FileFormat::Binary, Diags, EO))) {
    R.Detail += "saveModel failed: " + Errors;
    return R;
  }
  std::optional<std::string> Saved = readFile(std::string(Out));
  llvm::sys::fs::remove(Out);
  onnx::ModelProto Reparsed;
  if (!Saved || !Reparsed.ParseFromString(*Saved)) {
    R.Detail += "saved file does not parse\n";
    return R;
  }
  R.SameBytes = *Saved == *Bytes;
  std::string SavedDiff = compare(Original, Reparsed);
  R.SavedEqual = SavedDiff.empty();
  if (!R.SavedEqual)
    R.Detail += "saved file differs:\n" + SavedDiff;
  return R;
}

void collect(const std::string &Input, std::vector<std::string> &Models) {
  if (!llvm::sys::fs::is_directory(Input)) {
    Models.push_back(Input);
    return;
  }
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Input, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".onnx")
      Models.push_back(It->path());
}

int usage() {
  llvm::errs() << "usage: onnxopt-roundtrip [--verify] [--verbose] "
                  "[--tmpdir DIR] <dir or model>...\n";
  return 2;
}

} // namespace

int main(int Argc, char **Argv) {
  Options Opts;
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef Arg = Argv[I];
    if (Arg == "--verify")
      Opts.Verify = true;
    else if (Arg == "--verbose" || Arg == "-v")
      Opts.Verbose = true;
    else if (Arg == "--tmpdir" && I + 1 < Argc)
      Opts.TmpDir = Argv[++I];
    else if (Arg.startswith("-"))
      return usage();
    else
      Opts.Inputs.push_back(Arg.str());
  }
  if (Opts.Inputs.empty())
    return usage();

  std::vector<std::string> Models;
  for (const std::string &In : Opts.Inputs)
    collect(In, Models);
  std::sort(Models.begin(), Models.end());

  unsigned Loaded = 0, Equal = 0, SavedEqual = 0, SameBytes = 0, Verified = 0,
           Mapped = 0;
  for (const std::string &Path : Models) {
    Result R = roundTripBinary(Path, Opts);
    Loaded += R.Loaded;
    Equal += R.Equal;
    SavedEqual += R.SavedEqual;
    SameBytes += R.SameBytes;
    Verified += R.Verified;
    Mapped += R.Mapped;
    bool Bad = !R.Equal || !R.SavedEqual || (Opts.Verify && !R.Verified);
    if (Bad || Opts.Verbose)
      llvm::outs() << (Bad ? "FAIL " : "ok   ") << Path << "\n" << R.Detail;
  }
  llvm::outs() << "roundtrip-binary: " << Models.size() << " models, " << Loaded
               << " loaded, " << Equal << " equal, " << SavedEqual
               << " equal after saveModel (" << SameBytes
               << " byte-identical); " << Mapped
               << " with raw_data left in the mapped file";
  if (Opts.Verify)
    llvm::outs() << ", " << Verified << " verified";
  llvm::outs() << "\n";
  bool Ok = !Models.empty() && Equal == Models.size() &&
            SavedEqual == Models.size() &&
            (!Opts.Verify || Verified == Models.size());
  return Ok ? 0 : 1;
}
