//===- Import.h - Reading models -------------------------------*- C++ -*-===//
#ifndef ONNXOPT_IMPORT_IMPORT_H
#define ONNXOPT_IMPORT_IMPORT_H

#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/StringRef.h"
#include <memory>

namespace onnxopt {

class Model;

enum class FileFormat { Binary, Text };

/// What a loaded model may refer to, and how big it may be.
struct ImportOptions {
  /// External data may resolve outside the model's directory (absolute
  /// locations, `..`, symbolic links leading out). Off: such a location is
  /// an error.
  bool AllowExternalDataOutside = false;
  /// The proto is a verification skeleton whose large tensors hold a
  /// placeholder payload (Export's verification copies): payload lengths
  /// are not checked against dims.
  bool PlaceholderPayloads = false;
};

/// Subgraphs nested deeper than this are refused (If inside If ...):
/// everything that walks graphs recursively stays within the stack.
constexpr unsigned MaxSubgraphDepth = 256;
/// Dims (of types and tensors) above 2^53 are refused: they are not sizes
/// any runtime allocates, and products of them overflow.
constexpr int64_t MaxDim = int64_t(1) << 53;

/// `.onnxtxt`/`.txt`/`.onnxtext` are text, everything else binary; for "-"
/// (stdin) the content decides (binary protobuf vs text).
FileFormat guessFormatFromPath(llvm::StringRef Path);

/// Loads a model from a file (or "-" for stdin). Binary files are mapped and
/// the raw_data of large initializers stays in the mapping (stdin and other
/// unmappable inputs are parsed streaming); external data is mapped, not
/// read. Returns null after emitting a diagnostic on any error.
std::unique_ptr<Model> loadModel(llvm::StringRef Path, DiagnosticEngine &Diags,
                                 const ImportOptions &Opts = {});

/// Parses a binary model held in memory.
std::unique_ptr<Model> parseBinaryModel(llvm::StringRef Bytes,
                                        llvm::StringRef BaseDir,
                                        DiagnosticEngine &Diags,
                                        const ImportOptions &Opts = {});
/// Parses ONNX text syntax (onnx::OnnxParser). Text nested deeper than the
/// subgraph limit allows is refused before the (recursive) parser runs.
std::unique_ptr<Model> parseTextModel(llvm::StringRef Text,
                                      DiagnosticEngine &Diags);

// Converting a ModelProto to IR (importModel) is declared in the private
// lib/Import/ImportProto.h: this header stays free of protobuf.

} // namespace onnxopt

#endif // ONNXOPT_IMPORT_IMPORT_H
