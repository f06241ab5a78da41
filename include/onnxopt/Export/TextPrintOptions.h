//===- TextPrintOptions.h - Printing ONNX text for people ------*- C++ -*-===//
//
// printModel(M, OS) in Export.h prints text that parses back. For reading a
// model on a terminal, large tensors can be elided, as mlir-opt's
// --mlir-elide-elementsattrs-if-larger does: such text does not parse back,
// and says so in its first line.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_EXPORT_TEXTPRINTOPTIONS_H
#define ONNXOPT_EXPORT_TEXTPRINTOPTIONS_H

#include "llvm/Support/raw_ostream.h"
#include <cstdint>

namespace onnxopt {

class Model;

struct TextPrintOptions {
  /// Tensors with more elements than this print as `<float[64,3,7,7] ...>`;
  /// 0 prints every tensor in full.
  uint64_t ElideTensorsAbove = 0;
};

/// Prints \p M in ONNX text syntax with \p Opts.
void printModel(const Model &M, llvm::raw_ostream &OS,
                const TextPrintOptions &Opts);

} // namespace onnxopt

#endif // ONNXOPT_EXPORT_TEXTPRINTOPTIONS_H
