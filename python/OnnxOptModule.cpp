//===- OnnxOptModule.cpp - The Python module onnxopt (pybind11) -----------===//
//
// The compiled half of the Python module: `onnxopt._onnxopt`. It runs the
// command's steps (Tool/OnnxOptMain.h: loadInput, prepareInput; the pass
// pipeline; saveModel) on a path or on bytes, with the GIL released, and
// hands back the result and every diagnostic. The Python half
// (onnxopt/__init__.py) turns errors into onnxopt.Error, warnings into
// Python warnings, and ModelProto in and out of bytes (docs/python.md).
//
//===----------------------------------------------------------------------===//
#include "ExportProto.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Import/Import.h"
#include "onnxopt/Import/InputKind.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "onnxopt/Pass/PipelineParser.h"
#include "onnxopt/Passes.h"
#include "onnxopt/Tool/OnnxOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <climits>
#include <onnx/onnx_pb.h>
#include <optional>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace onnxopt;

#ifndef ONNXOPT_VERSION
#define ONNXOPT_VERSION "unknown"
#endif

namespace {

/// What a run is asked to do; the keyword arguments of onnxopt.run.
struct RunOptions {
  std::string Pipeline;
  /// Where to write the result ("" = return it as bytes).
  std::string Output;
  bool Verify = true, VerifyEach = true;
  std::string VerifyWith = "ir";
  bool AllowExternalDataOutside = false;
  /// External data for the output file: nullopt = only when needed, "" =
  /// always, with the default file name; else that file name.
  std::optional<std::string> ExternalData;
  uint64_t ExternalThreshold = 1024;
  bool Verbose = false;
  /// The name diagnostics start with.
  std::string Name;
};

/// A run's result: the model (bytes) when it was not written to a file,
/// and the diagnostics as (severity, text) pairs in the order emitted.
struct RunResult {
  bool Ok = false;
  std::optional<std::string> Bytes;
  std::vector<std::pair<std::string, std::string>> Diagnostics;
};

/// A diagnostic engine that keeps what it is given, printed as the command
/// prints it (`name: error: location: message`).
class Collector {
public:
  Collector(const RunOptions &Opts, RunResult &Result) : Result(Result) {
    Diags.setFileName(Opts.Name);
    Diags.setVerbose(Opts.Verbose);
    Diags.setHandler([this](const Diagnostic &D) {
      std::string Text;
      llvm::raw_string_ostream OS(Text);
      Diags.print(OS, D);
      OS.flush();
      while (!Text.empty() && Text.back() == '\n')
        Text.pop_back();
      this->Result.Diagnostics.emplace_back(getSeverityName(D.Sev).str(),
                                            std::move(Text));
    });
  }
  DiagnosticEngine Diags;

private:
  RunResult &Result;
};

std::optional<VerifyWith> parseVerifyWith(llvm::StringRef S) {
  if (S == "ir")
    return VerifyWith::IR;
  if (S == "onnx")
    return VerifyWith::Onnx;
  if (S == "both")
    return VerifyWith::Both;
  return std::nullopt;
}

/// Builds the pass manager; a pipeline error is reported as the command
/// reports it, with a caret under the problem.
bool buildPipeline(const RunOptions &Opts, PassManager &PM,
                   DiagnosticEngine &Diags) {
  std::vector<std::unique_ptr<Pass>> Passes;
  PipelineError E;
  if (failed(parsePassPipeline(Opts.Pipeline, Passes, E))) {
    std::string Caret(E.Pos, ' ');
    emitError(Diags) << E.Message << "\n  " << Opts.Pipeline << "\n  " << Caret
                     << "^";
    return false;
  }
  for (std::unique_ptr<Pass> &P : Passes)
    PM.addPass(std::move(P));
  return true;
}

/// Reads the external bytes of \p T (relative to \p BaseDir, where the
/// importer found and checked them) into its raw_data.
LogicalResult inlineTensor(onnx::TensorProto &T, llvm::StringRef BaseDir,
                           DiagnosticEngine &Diags) {
  if (T.data_location() != onnx::TensorProto::EXTERNAL)
    return success();
  std::string Location;
  uint64_t Offset = 0;
  std::optional<uint64_t> Length;
  for (const onnx::StringStringEntryProto &E : T.external_data()) {
    if (E.key() == "location")
      Location = E.value();
    else if (E.key() == "offset")
      llvm::StringRef(E.value()).getAsInteger(10, Offset);
    else if (E.key() == "length") {
      uint64_t L = 0;
      if (!llvm::StringRef(E.value()).getAsInteger(10, L))
        Length = L;
    }
  }
  llvm::SmallString<256> Path;
  if (!llvm::sys::path::is_absolute(Location))
    Path = BaseDir.empty() ? llvm::StringRef(".") : BaseDir;
  llvm::sys::path::append(Path, Location);
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return emitError(Diags)
           << "tensor '" << T.name() << "': cannot read external data '" << Path
           << "': " << Buf.getError().message();
  llvm::StringRef Bytes = (*Buf)->getBuffer();
  if (Offset > Bytes.size() || (Length && *Length > Bytes.size() - Offset))
    return emitError(Diags) << "tensor '" << T.name()
                            << "': external data is outside '" << Path << "'";
  T.set_raw_data(
      Bytes.substr(Offset, Length ? *Length : llvm::StringRef::npos).str());
  T.clear_external_data();
  T.clear_data_location();
  return success();
}

LogicalResult inlineGraph(onnx::GraphProto &G, llvm::StringRef BaseDir,
                          DiagnosticEngine &Diags);

LogicalResult
inlineNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes,
            llvm::StringRef BaseDir, DiagnosticEngine &Diags) {
  for (onnx::NodeProto &N : Nodes)
    for (onnx::AttributeProto &A : *N.mutable_attribute()) {
      if (A.has_t() && failed(inlineTensor(*A.mutable_t(), BaseDir, Diags)))
        return failure();
      for (onnx::TensorProto &T : *A.mutable_tensors())
        if (failed(inlineTensor(T, BaseDir, Diags)))
          return failure();
      if (A.has_g() && failed(inlineGraph(*A.mutable_g(), BaseDir, Diags)))
        return failure();
      for (onnx::GraphProto &Sub : *A.mutable_graphs())
        if (failed(inlineGraph(Sub, BaseDir, Diags)))
          return failure();
    }
  return success();
}

LogicalResult inlineGraph(onnx::GraphProto &G, llvm::StringRef BaseDir,
                          DiagnosticEngine &Diags) {
  for (onnx::TensorProto &T : *G.mutable_initializer())
    if (failed(inlineTensor(T, BaseDir, Diags)))
      return failure();
  for (onnx::SparseTensorProto &S : *G.mutable_sparse_initializer())
    if (failed(inlineTensor(*S.mutable_values(), BaseDir, Diags)) ||
        failed(inlineTensor(*S.mutable_indices(), BaseDir, Diags)))
      return failure();
  return inlineNodes(*G.mutable_node(), BaseDir, Diags);
}

/// The verified result as the bytes of a self-contained binary model: the
/// bytes of external data are read into the tensors (as onnx.load does).
bool serializeResult(const Model &M, const RunOptions &Opts, VerifyWith With,
                     DiagnosticEngine &Diags, std::string &Out) {
  if (Opts.Verify &&
      (failed(verifyModel(M, Diags)) || failed(verifyExport(M, With, Diags))))
    return false;
  std::unique_ptr<onnx::ModelProto> P = exportModel(M);
  if (failed(inlineGraph(*P->mutable_graph(), M.BaseDir, Diags)))
    return false;
  for (onnx::FunctionProto &F : *P->mutable_functions())
    if (failed(inlineNodes(*F.mutable_node(), M.BaseDir, Diags)))
      return false;
  if (P->ByteSizeLong() > size_t(INT_MAX)) {
    emitError(Diags) << "the result is larger than 2 GB, which protobuf "
                        "cannot hold in memory; pass output= to write it to "
                        "a file with external data";
    return false;
  }
  Out = P->SerializeAsString();
  return true;
}

/// Runs the pipeline on \p M and writes or serializes the result.
void runOnModel(std::unique_ptr<Model> M, const RunOptions &Opts,
                DiagnosticEngine &Diags, RunResult &Result) {
  if (!M)
    return;
  std::optional<VerifyWith> With = parseVerifyWith(Opts.VerifyWith);
  if (!With) {
    emitError(Diags) << "unknown verification '" << Opts.VerifyWith
                     << "' (expected ir, onnx or both)";
    return;
  }
  PassManagerOptions PMOpts;
  PMOpts.VerifyEach = Opts.VerifyEach && Opts.Verify;
  PassManager PM(PMOpts);
  if (!buildPipeline(Opts, PM, Diags))
    return;
  if (failed(prepareInput(*M, Diags, Opts.Verify)) || failed(PM.run(*M, Diags)))
    return;
  if (Opts.Output.empty()) {
    std::string Bytes;
    if (!serializeResult(*M, Opts, *With, Diags, Bytes))
      return;
    Result.Bytes = std::move(Bytes);
    Result.Ok = true;
    return;
  }
  ExportOptions EO;
  EO.Verify = Opts.Verify;
  EO.With = *With;
  EO.ExternalThreshold = Opts.ExternalThreshold;
  EO.ForceExternal = Opts.ExternalData.has_value();
  if (Opts.ExternalData)
    EO.ExternalDataName = *Opts.ExternalData;
  Diags.setFileName(Opts.Output);
  Result.Ok = succeeded(
      saveModel(*M, Opts.Output, guessFormatFromPath(Opts.Output), Diags, EO));
}

ImportOptions importOptions(const RunOptions &Opts) {
  ImportOptions IO;
  IO.AllowExternalDataOutside = Opts.AllowExternalDataOutside;
  return IO;
}

RunResult runPath(const std::string &Path, const RunOptions &Opts) {
  RunResult Result;
  Collector C(Opts, Result);
  runOnModel(loadInput(Path, C.Diags, importOptions(Opts)), Opts, C.Diags,
             Result);
  return Result;
}

RunResult runBytes(llvm::StringRef Bytes, const std::string &BaseDir,
                   const RunOptions &Opts) {
  RunResult Result;
  Collector C(Opts, Result);
  std::unique_ptr<Model> M;
  switch (classifyBytes(Bytes, C.Diags)) {
  case InputKind::Rejected:
    return Result;
  case InputKind::Text:
    M = parseTextModel(Bytes, C.Diags);
    if (M)
      M->BaseDir = BaseDir;
    break;
  case InputKind::Binary:
    M = parseBinaryModel(Bytes, BaseDir, C.Diags, importOptions(Opts));
    break;
  }
  runOnModel(std::move(M), Opts, C.Diags, Result);
  return Result;
}

RunOptions makeOptions(const std::string &Pipeline,
                       const std::optional<std::string> &Output, bool Verify,
                       bool VerifyEach, const std::string &VerifyWithName,
                       bool AllowOutside,
                       const std::optional<std::string> &ExternalData,
                       uint64_t ExternalThreshold, bool Verbose,
                       const std::string &Name) {
  RunOptions O;
  O.Pipeline = Pipeline;
  O.Output = Output.value_or("");
  O.Verify = Verify;
  O.VerifyEach = VerifyEach;
  O.VerifyWith = VerifyWithName;
  O.AllowExternalDataOutside = AllowOutside;
  O.ExternalData = ExternalData;
  O.ExternalThreshold = ExternalThreshold;
  O.Verbose = Verbose;
  O.Name = Name;
  return O;
}

/// (result bytes or None, [(severity, text)], ok)
py::tuple toPython(RunResult &&R) {
  py::object Bytes = py::none();
  if (R.Bytes)
    Bytes = py::bytes(*R.Bytes);
  return py::make_tuple(Bytes, R.Diagnostics, R.Ok);
}

/// The registered passes with their options, as dictionaries.
py::list listPasses() {
  py::list Out;
  for (const std::unique_ptr<Pass> &P : getRegisteredPasses()) {
    py::list Options;
    for (const OptionBase *O : P->getOptions()) {
      std::string Default;
      llvm::raw_string_ostream OS(Default);
      O->printValue(OS);
      OS.flush();
      py::dict D;
      D["name"] = O->getName().str();
      D["type"] = O->getTypeName().str();
      D["description"] = O->getHelp().str();
      D["default"] = Default;
      D["required"] = O->isRequired();
      const OptionConstraint &C = O->getConstraint();
      if (!C.Choices.empty())
        D["choices"] = C.Choices;
      if (C.Min)
        D["min"] = *C.Min;
      if (C.Max)
        D["max"] = *C.Max;
      Options.append(std::move(D));
    }
    py::dict D;
    D["name"] = P->getArgument().str();
    D["description"] = P->getDescription().str();
    D["options"] = std::move(Options);
    Out.append(std::move(D));
  }
  return Out;
}

} // namespace

PYBIND11_MODULE(_onnxopt, M) {
  M.doc() = "onnx-opt's pass pipelines on ONNX models (the compiled half of "
            "the onnxopt package)";
  registerAllPasses();
  M.attr("__version__") = ONNXOPT_VERSION;
  M.attr("SIMPLIFY_PIPELINE") = getSimplifyPipeline();

  M.def(
      "run_path",
      [](const std::string &Path, const std::string &Pipeline,
         const std::optional<std::string> &Output, bool Verify, bool VerifyEach,
         const std::string &VerifyWith, bool AllowOutside,
         const std::optional<std::string> &ExternalData,
         uint64_t ExternalThreshold, bool Verbose) {
        RunOptions Opts = makeOptions(Pipeline, Output, Verify, VerifyEach,
                                      VerifyWith, AllowOutside, ExternalData,
                                      ExternalThreshold, Verbose, Path);
        RunResult R;
        {
          py::gil_scoped_release Release;
          R = runPath(Path, Opts);
        }
        return toPython(std::move(R));
      },
      py::arg("path"), py::arg("pipeline"), py::arg("output"),
      py::arg("verify"), py::arg("verify_each"), py::arg("verify_with"),
      py::arg("allow_external_data_outside"), py::arg("external_data"),
      py::arg("external_threshold"), py::arg("verbose"),
      "Loads the model at path, runs the pipeline; returns (bytes or None, "
      "diagnostics, ok).");

  M.def(
      "run_bytes",
      [](const py::bytes &Data, const std::string &BaseDir,
         const std::string &Name, const std::string &Pipeline,
         const std::optional<std::string> &Output, bool Verify, bool VerifyEach,
         const std::string &VerifyWith, bool AllowOutside,
         const std::optional<std::string> &ExternalData,
         uint64_t ExternalThreshold, bool Verbose) {
        RunOptions Opts = makeOptions(Pipeline, Output, Verify, VerifyEach,
                                      VerifyWith, AllowOutside, ExternalData,
                                      ExternalThreshold, Verbose, Name);
        char *Ptr = nullptr;
        Py_ssize_t Size = 0;
        if (PyBytes_AsStringAndSize(Data.ptr(), &Ptr, &Size) != 0)
          throw py::error_already_set();
        RunResult R;
        {
          // The bytes object is immutable and referenced by the caller.
          py::gil_scoped_release Release;
          R = runBytes(llvm::StringRef(Ptr, size_t(Size)), BaseDir, Opts);
        }
        return toPython(std::move(R));
      },
      py::arg("data"), py::arg("base_dir"), py::arg("name"),
      py::arg("pipeline"), py::arg("output"), py::arg("verify"),
      py::arg("verify_each"), py::arg("verify_with"),
      py::arg("allow_external_data_outside"), py::arg("external_data"),
      py::arg("external_threshold"), py::arg("verbose"),
      "Parses a model from bytes (binary or ONNX text), runs the pipeline; "
      "returns (bytes or None, diagnostics, ok).");

  M.def("passes", &listPasses,
        "The registered passes: a list of dicts with name, description and "
        "options (name, type, description, default, required, and choices, "
        "min, max where the option has them).");
}
