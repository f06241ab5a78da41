//===- ExportProto.h - Writing models as a ModelProto ----------*- C++ -*-===//
//
// The exporter's protobuf entry points, kept out of the installed headers
// (which hold no ONNX protobuf types but IR/ProtoTypes.h): saving in this
// layer uses them, and so do the Python module (a self-contained model as
// bytes), the unit and round-trip tests, which add lib/Export to their
// include path.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_EXPORT_EXPORTPROTO_H
#define ONNXOPT_LIB_EXPORT_EXPORTPROTO_H

#include "onnxopt/Export/Export.h"
#include <memory>
#include <onnx/onnx_pb.h>

namespace onnxopt {

/// Builds the ModelProto. External tensors keep their references; the
/// caller decides where their bytes go (saveModel does).
std::unique_ptr<onnx::ModelProto> exportModel(const Model &M);

/// Verifies a proto with onnx::checker and strict shape inference. Versions
/// newer than ONNX 1.12 knows are checked by verifyModernModel
/// (ModernVerify.h) instead, with a warning saying what was and was not
/// checked.
LogicalResult verifyProto(const onnx::ModelProto &P, DiagnosticEngine &Diags);

} // namespace onnxopt

#endif // ONNXOPT_LIB_EXPORT_EXPORTPROTO_H
