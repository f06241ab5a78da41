//===- ImportProto.h - Reading models from a ModelProto --------*- C++ -*-===//
//
// The importer's protobuf entry point, kept out of the installed headers
// (which hold no ONNX protobuf types but IR/ProtoTypes.h): the text importer
// and save-time verification in this layer use it, and so do the unit and
// round-trip tests, which add lib/Import to their include path.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_IMPORT_IMPORTPROTO_H
#define ONNXOPT_LIB_IMPORT_IMPORTPROTO_H

#include "onnxopt/Import/Import.h"
#include <onnx/onnx_pb.h>

namespace onnxopt {

/// Converts a ModelProto to IR. Tensor bytes are moved out of \p Proto (it
/// is left partially consumed). \p BaseDir resolves external data, which
/// must stay under it unless \p Opts allows otherwise.
std::unique_ptr<Model> importModel(onnx::ModelProto &&Proto,
                                   llvm::StringRef BaseDir,
                                   DiagnosticEngine &Diags,
                                   const ImportOptions &Opts = {});

} // namespace onnxopt

#endif // ONNXOPT_LIB_IMPORT_IMPORTPROTO_H
