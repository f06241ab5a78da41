//===- DerivedDims.h - Expressions of derived dims -------------*- C++ -*-===//
//
// unify-dims gives a dim that the graph derives from the input dims a short
// name (`boxes_dim1`) rather than its expression. The expression is kept in
// the model, in the model-level metadata_props under the key
// "onnx_opt.derived_dims", as versioned text:
//
//   v1;boxes_dim1=2*ceil(height/16)*ceil(width/16)+...;logits_dim1=floor(width/4)
//
// entries `symbol=expression` sorted by symbol, separated by ';'. The
// summary table and the text printer show them; rename-dims keeps them in
// step with the names. This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_DERIVEDDIMS_H
#define ONNXOPT_ANALYSIS_DERIVEDDIMS_H

#include "llvm/ADT/StringRef.h"
#include <map>
#include <string>

namespace onnxopt {

class Model;

/// The metadata_props key that holds the expressions.
inline constexpr const char *DerivedDimsKey = "onnx_opt.derived_dims";

/// Symbol -> expression over the input symbols.
using DerivedDimMap = std::map<std::string, std::string>;

/// Parses the stored form (`v1;S=expr;...`).
bool parseDerivedDims(llvm::StringRef Text, DerivedDimMap &Out,
                      std::string &Error);
/// Prints the stored form, sorted by symbol.
std::string printDerivedDims(const DerivedDimMap &Dims);

/// The expressions stored in \p M (empty when there are none). Fails,
/// setting \p Error, when the residual or the stored value cannot be parsed.
bool getDerivedDims(const Model &M, DerivedDimMap &Out, std::string &Error);
/// Replaces the expressions stored in \p M (an empty map removes the key);
/// other metadata_props keep their order.
bool setDerivedDims(Model &M, const DerivedDimMap &Dims, std::string &Error);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_DERIVEDDIMS_H
