//===- ModernVerify.h - Verification above ONNX 1.12's versions -*- C++ -*-===//
//
// ONNX 1.12's checker and strict shape inference refuse models newer than
// they know (IR > 8, ai.onnx > 17, ai.onnx.ml > 3). For those, save-time
// verification runs verifyModernModel instead: a per-node schema check from
// the op table and our shape inference in strict mode, which must agree
// with the declared types; it says what it checked and what it could not.
//
// Private to the io layer: Export's save-time verification calls it.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_EXPORT_MODERNVERIFY_H
#define ONNXOPT_LIB_EXPORT_MODERNVERIFY_H

#include "onnxopt/Support/Diagnostics.h"
#include "onnxopt/Support/LogicalResult.h"
#include <cstddef>
#include <map>
#include <string>

namespace onnxopt {

class Model;

/// What verifyModernModel checked, for the warning that replaces the ONNX
/// checker's verdict.
struct ModernVerifyReport {
  /// Nodes whose input/output counts and attributes were checked.
  size_t NodesChecked = 0;
  /// Of those, nodes whose element types were checked against type
  /// constraints (op versions described by an ONNX 1.12 schema).
  size_t NodesTypeChecked = 0;
  /// Nodes without a signature here (custom domains, opsets newer than the
  /// op table), by "op (reason)".
  std::map<std::string, size_t> Unchecked;
  /// Nodes whose inference ran; nodes kept as declared.
  size_t NodesInferred = 0;
  size_t NodesNotInferred = 0;
  /// "checked instead: ...; not checked: ..." for the warning.
  std::string describe() const;
};

/// Checks \p M: every node of the default and ai.onnx.ml domains against
/// its op version (counts, attribute names and kinds, required attributes,
/// element types and homogeneous type constraints where an ONNX 1.12 schema
/// describes the version), then infers the model strictly. Errors are
/// emitted on \p Diags; \p M's types are refined by inference (pass a copy).
LogicalResult verifyModernModel(Model &M, DiagnosticEngine &Diags,
                                ModernVerifyReport &Report);


} // namespace onnxopt

#endif // ONNXOPT_LIB_EXPORT_MODERNVERIFY_H
