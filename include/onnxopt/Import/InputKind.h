//===- InputKind.h - What an input file is when it is not ONNX -*- C++ -*-===//
//
// Users hand onnx-opt what their guides left them with: a PyTorch
// checkpoint, a TensorFlow SavedModel directory, ONNX text named .onnx, a
// download that stopped half way. These functions look at the first bytes
// (and, for a file that fails to parse, its protobuf framing) so that the
// error says what the file is and what to do, not only "malformed protobuf".
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IMPORT_INPUTKIND_H
#define ONNXOPT_IMPORT_INPUTKIND_H

#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/StringRef.h"

namespace onnxopt {

enum class InputKind {
  /// Binary protobuf, or unknown: let the importer decide.
  Binary,
  /// ONNX text syntax (whatever the file is named).
  Text,
  /// Not a model onnx-opt reads; a diagnostic has been emitted.
  Rejected,
};

/// Looks at \p Path before loading it. Rejects (with an error saying what
/// the input is and how to get an ONNX model from it) PyTorch checkpoints
/// (zip or pickle), TorchScript archives, other pickles and zip archives
/// (Keras 3, NumPy .npz, a zip holding a .onnx), TensorFlow SavedModel
/// directories and saved_model.pb, Keras HDF5, TensorFlow Lite, ONNX
/// Runtime ORT-format, safetensors, NumPy, gzip and tar files, HTML pages,
/// XML (OpenVINO IR), Git LFS pointers and JSON (ONNX's JSON form named as
/// such). Returns Text for ONNX text in a file whose name says binary (with
/// a remark). "-" (stdin) and paths that cannot be opened are Binary: the
/// loader reports those.
InputKind classifyInput(llvm::StringRef Path, DiagnosticEngine &Diags);

/// The same checks on a model held in memory (bytes from an embedder):
/// Rejected with an error, Text for ONNX text (no remark), else Binary.
InputKind classifyBytes(llvm::StringRef Bytes, DiagnosticEngine &Diags);

/// For a binary file that failed to parse: walks its protobuf framing and,
/// when the file ends inside a field, emits a note saying where (`the file
/// ends at byte N, inside initializer 12 of the graph, which needs M more
/// bytes`). Emits nothing when the framing is complete.
void explainMalformedInput(llvm::StringRef Path, DiagnosticEngine &Diags);

} // namespace onnxopt

#endif // ONNXOPT_IMPORT_INPUTKIND_H
