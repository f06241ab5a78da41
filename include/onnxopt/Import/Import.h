//===- Import.h - Reading models -------------------------------*- C++ -*-===//
#ifndef ONNXOPT_IMPORT_IMPORT_H
#define ONNXOPT_IMPORT_IMPORT_H

#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/StringRef.h"
#include <memory>

namespace onnx {
class ModelProto;
}

namespace onnxopt {

class Model;

enum class FileFormat { Binary, Text };

/// `.onnxtxt`/`.txt`/`.onnxtext` are text, everything else binary; for "-"
/// (stdin) the content decides (binary protobuf vs text).
FileFormat guessFormatFromPath(llvm::StringRef Path);

/// Loads a model from a file (or "-" for stdin). Binary files are mapped and
/// the raw_data of large initializers stays in the mapping (stdin and other
/// unmappable inputs are parsed streaming); external data is mapped, not
/// read. Returns null after emitting a diagnostic on any error.
std::unique_ptr<Model> loadModel(llvm::StringRef Path, DiagnosticEngine &Diags);

/// Parses a binary model held in memory.
std::unique_ptr<Model> parseBinaryModel(llvm::StringRef Bytes,
                                        llvm::StringRef BaseDir,
                                        DiagnosticEngine &Diags);
/// Parses ONNX text syntax (onnx::OnnxParser).
std::unique_ptr<Model> parseTextModel(llvm::StringRef Text,
                                      DiagnosticEngine &Diags);

/// Converts a ModelProto to IR. Tensor bytes are moved out of \p Proto (it
/// is left partially consumed). \p BaseDir resolves external data.
std::unique_ptr<Model> importModel(onnx::ModelProto &&Proto,
                                   llvm::StringRef BaseDir,
                                   DiagnosticEngine &Diags);

} // namespace onnxopt

#endif // ONNXOPT_IMPORT_IMPORT_H
