//===- Metadata.h - The model's metadata_props -----------------*- C++ -*-===//
//
// metadata_props live in the model's residual (the IR does not model them);
// onnx-opt stores its own entries there (dim ranges, derived dims). One
// reader and one writer, so every entry is handled the same way.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_METADATA_H
#define ONNXOPT_IR_METADATA_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace onnxopt {

class Model;

/// Reads the metadata entry \p Key into \p Value (nullopt when absent).
/// Returns false with \p Error set when the residual cannot be parsed.
bool readMetadataProp(const Model &M, llvm::StringRef Key,
                      std::optional<std::string> &Value, std::string &Error);
/// Sets the metadata entry \p Key to \p Value, or removes it when \p Value
/// is nullopt; other entries keep their order. Returns false with \p Error
/// set when the residual cannot be parsed.
bool writeMetadataProp(Model &M, llvm::StringRef Key,
                       const std::optional<std::string> &Value,
                       std::string &Error);

} // namespace onnxopt

#endif // ONNXOPT_IR_METADATA_H
