//===- Export.h - Writing models -------------------------------*- C++ -*-===//
#ifndef ONNXOPT_EXPORT_EXPORT_H
#define ONNXOPT_EXPORT_EXPORT_H

#include "onnxopt/Import/Import.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <string>

namespace onnxopt {

class Model;

/// How saving checks what it writes (`--verify=`): the same verdict as
/// ONNX's checker and strict shape inference, computed from the IR (IR), by
/// those functions on the proto (Onnx), or both, an error when they differ.
enum class VerifyWith { IR, Onnx, Both };

struct ExportOptions {
  /// Run the IR verifier, onnx::checker and strict shape inference on the
  /// proto before writing.
  bool Verify = true;
  /// With Verify: also run the IR verifier. A caller that just verified the
  /// IR (the pass manager after its last pass) may skip it.
  bool VerifyIR = true;
  VerifyWith With = VerifyWith::IR;
  /// Tensors of at least this many bytes go to external data when the
  /// model would exceed protobuf's 2 GB limit, or when ForceExternal is set.
  uint64_t ExternalThreshold = 1024;
  bool ForceExternal = false;
  /// File name of a new external-data file ("" = "<output name>.data").
  std::string ExternalDataName;
};

// Building the ModelProto (exportModel) and checking one (verifyProto) are
// declared in the private lib/Export/ExportProto.h: this header stays free of
// protobuf.

/// What saveModel checks before writing \p M, without writing it.
LogicalResult verifyExport(const Model &M, VerifyWith With,
                           DiagnosticEngine &Diags);

/// Writes \p M to \p Path ("-" = stdout) in \p Format. Binary output is
/// written to a temporary file and renamed into place; external data is
/// reused when writing beside its file, else written to a new data file.
/// On any error nothing is left behind.
LogicalResult saveModel(const Model &M, llvm::StringRef Path, FileFormat Format,
                        DiagnosticEngine &Diags,
                        const ExportOptions &Opts = {});

/// Prints \p M in ONNX text syntax that onnx::OnnxParser reads back.
void printModel(const Model &M, llvm::raw_ostream &OS);

} // namespace onnxopt

#endif // ONNXOPT_EXPORT_EXPORT_H
