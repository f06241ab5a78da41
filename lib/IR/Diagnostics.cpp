//===- Diagnostics.cpp - Diagnostics located in the IR --------------------===//
#include "onnxopt/IR/Diagnostics.h"
#include "onnxopt/IR/IR.h"

using namespace onnxopt;

std::string onnxopt::describe(const Graph &G) {
  return "graph '" + G.getPath() + "'";
}

std::string onnxopt::describe(const Node &N) {
  // Text models cannot name nodes; an unnamed node is known by its output.
  std::string S = "node '" + N.getName().str() + "' (";
  if (N.getName().empty() && N.getNumResults() && N.getResult(0))
    S = "node producing '" + N.getResult(0)->getName().str() + "' (";
  if (!N.isOnnxDomain())
    S += N.getDomain().str() + ".";
  S += N.getOpType().str() + ")";
  if (const Graph *G = N.getParentGraph())
    S += " in " + describe(*G);
  return S;
}

std::string onnxopt::describe(const Value &V) {
  std::string S = "value '" + V.getName().str() + "'";
  if (const Graph *G = V.getOwningGraph())
    S += " in " + describe(*G);
  return S;
}

InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D, const Node &N) {
  return emitAt(D, Severity::Error, describe(N));
}
InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D, const Value &V) {
  return emitAt(D, Severity::Error, describe(V));
}
InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D, const Graph &G) {
  return emitAt(D, Severity::Error, describe(G));
}
InFlightDiagnostic onnxopt::emitWarning(DiagnosticEngine &D, const Node &N) {
  return emitAt(D, Severity::Warning, describe(N));
}
InFlightDiagnostic onnxopt::emitWarning(DiagnosticEngine &D, const Value &V) {
  return emitAt(D, Severity::Warning, describe(V));
}
InFlightDiagnostic onnxopt::emitRemark(DiagnosticEngine &D, const Node &N) {
  return emitAt(D, Severity::Remark, describe(N));
}
