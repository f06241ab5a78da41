//===- OnnxOptMain.h - The onnx-opt driver as a library --------*- C++ -*-===//
//
// Tools that embed onnx-opt register their own passes (registerPass) and
// call onnxOptMain from their main(); they get the same command line,
// pipeline syntax, verification and output handling.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_TOOL_ONNXOPTMAIN_H
#define ONNXOPT_TOOL_ONNXOPTMAIN_H

#include "onnxopt/Import/Import.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/StringRef.h"
#include <memory>

namespace onnxopt {

class Model;

/// Runs the onnx-opt command line. Registers the built-in passes first.
/// Returns the process exit code (0 success, 1 error).
int onnxOptMain(int Argc, char **Argv);

// The steps of the command, for embedders that run pipelines without a
// command line (the Python module, python/onnxopt.cpp).

/// Loads the input as the command does: first checks that it is an ONNX
/// model at all (a PyTorch checkpoint, an HTML page or a SavedModel gets an
/// error saying what it is), reads ONNX text whatever the file is named,
/// and says where a truncated file ends. Null after an error.
std::unique_ptr<Model> loadInput(llvm::StringRef Path, DiagnosticEngine &Diags,
                                 const ImportOptions &Opts = {});

/// What the command does to a loaded input before the passes: the IR
/// verifier (without topological order; skipped when \p Verify is false),
/// then sorts an input that is not in topological order, with one remark.
/// \p InOrder, if given, says whether the input was verified in order.
LogicalResult prepareInput(Model &M, DiagnosticEngine &Diags, bool Verify,
                           bool *InOrder = nullptr);

/// The pipeline `--simplify` stands for.
const char *getSimplifyPipeline();

} // namespace onnxopt

#endif // ONNXOPT_TOOL_ONNXOPTMAIN_H
