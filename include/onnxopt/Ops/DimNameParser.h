//===- DimNameParser.h - Dim names that are expressions ---------*- C++ -*-===//
//
// Exporters write derived dims with their expressions as names: dynamo
// prints sympy's `(((height - 1)//4)) + 1`, `((samples//5)) - 1`, `2*s0`,
// `floor(s0/2)`, `ceiling(s0/2)`; onnxruntime's symbolic shape inference and
// unify-dims{derived=expr} print this project's own form, `ceil(H/8)`,
// `floor((H+1)/32)*floor((W+1)/32)`, `(H*W)/3`. Such a name is a claim about
// the dim; parsed into the dim algebra it can be checked against what the
// analysis proves (unify-dims does).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_OPS_DIMNAMEPARSER_H
#define ONNXOPT_OPS_DIMNAMEPARSER_H

#include "onnxopt/Ops/DimAlgebra.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace onnxopt {

/// The expression \p Name spells, over the identifiers it mentions (each
/// a symbol): integers, symbols, `+`, `-`, `*`, `**` (small powers),
/// parentheses, floor division `//` by a positive constant, `%` by a
/// positive constant, `/` by a positive constant inside `floor(...)`,
/// `ceiling(...)`/`ceil(...)` (and sympy's `FloorToInt`, `CeilToInt`,
/// `FloorDiv(a, k)`, `CeilDiv(a, k)`, `Mod(a, k)`), or an exact division
/// `(H*W)/3` at the end. std::nullopt for anything else (`Min`, `Max`,
/// division by a symbol, a name with characters no expression has): such
/// a name stays an opaque symbol. A plain identifier parses to itself.
std::optional<DimExpr> parseDimName(llvm::StringRef Name);

/// True if \p Name is an expression rather than one identifier (it holds
/// an operator or a parenthesis) and parses.
bool isExpressionDimName(llvm::StringRef Name);

} // namespace onnxopt

#endif // ONNXOPT_OPS_DIMNAMEPARSER_H
