//===- Diagnostics.h - Diagnostics located in the IR -----------*- C++ -*-===//
//
// The Support layer's diagnostics know only text locations; this header adds
// the IR's: a node, a value or a graph, described the way every message of
// onnx-opt names them ("node 'Conv_3' (Conv) in graph 'main/then_branch'").
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_DIAGNOSTICS_H
#define ONNXOPT_IR_DIAGNOSTICS_H

#include "onnxopt/Support/Diagnostics.h"
#include <string>

namespace onnxopt {

class Node;
class Graph;
class Value;

/// Describes where a node/value/graph lives, e.g.
/// "node 'Conv_3' (Conv) in graph 'main/then_branch'".
std::string describe(const Node &N);
std::string describe(const Value &V);
std::string describe(const Graph &G);

InFlightDiagnostic emitError(DiagnosticEngine &D, const Node &N);
InFlightDiagnostic emitError(DiagnosticEngine &D, const Value &V);
InFlightDiagnostic emitError(DiagnosticEngine &D, const Graph &G);
InFlightDiagnostic emitWarning(DiagnosticEngine &D, const Node &N);
InFlightDiagnostic emitWarning(DiagnosticEngine &D, const Value &V);
InFlightDiagnostic emitRemark(DiagnosticEngine &D, const Node &N);

} // namespace onnxopt

#endif // ONNXOPT_IR_DIAGNOSTICS_H
