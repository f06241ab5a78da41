//===- Diagnostics.cpp - Errors, warnings and notes -----------------------===//
#include "onnxopt/Support/Diagnostics.h"
#include "onnxopt/IR/IR.h"
#include "llvm/Support/WithColor.h"

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

DiagnosticEngine::DiagnosticEngine() {
  TheHandler = [this](const Diagnostic &D) { print(llvm::errs(), D); };
}

void DiagnosticEngine::emit(Diagnostic D) {
  if (D.Sev == Severity::Error)
    ++NumErrors;
  if (TheHandler)
    TheHandler(D);
}

static llvm::StringRef severityName(Severity S) {
  switch (S) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

void DiagnosticEngine::print(llvm::raw_ostream &OS,
                             const Diagnostic &D) const {
  if (!FileName.empty())
    OS << FileName << ": ";
  OS << severityName(D.Sev) << ": ";
  if (!D.Location.empty())
    OS << D.Location << ": ";
  OS << D.Message << "\n";
  OS.flush();
}

DeduplicatingDiagnostics::DeduplicatingDiagnostics(DiagnosticEngine &Outer) {
  Engine.setFileName(Outer.getFileName());
  Engine.setHandler([&Outer, this](const Diagnostic &D) {
    if (D.Sev == Severity::Remark || D.Sev == Severity::Note)
      return;
    if (Seen.insert(D.Location + "\n" + D.Message).second)
      Outer.emit(D);
  });
}

InFlightDiagnostic::InFlightDiagnostic(DiagnosticEngine *Engine, Severity Sev,
                                       std::string Location)
    : Engine(Engine), Sev(Sev), Location(std::move(Location)) {}

InFlightDiagnostic::InFlightDiagnostic(InFlightDiagnostic &&Other)
    : Engine(Other.Engine), Sev(Other.Sev), Location(std::move(Other.Location)),
      Message(Other.OS.str()) {
  Other.Engine = nullptr;
}

InFlightDiagnostic::~InFlightDiagnostic() {
  if (!Engine)
    return;
  Diagnostic D;
  D.Sev = Sev;
  D.Location = std::move(Location);
  D.Message = OS.str();
  Engine->emit(std::move(D));
}

InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D, const Node &N) {
  return InFlightDiagnostic(&D, Severity::Error, describe(N));
}
InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D, const Value &V) {
  return InFlightDiagnostic(&D, Severity::Error, describe(V));
}
InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D, const Graph &G) {
  return InFlightDiagnostic(&D, Severity::Error, describe(G));
}
InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D) {
  return InFlightDiagnostic(&D, Severity::Error, "");
}
InFlightDiagnostic onnxopt::emitWarning(DiagnosticEngine &D, const Node &N) {
  return InFlightDiagnostic(&D, Severity::Warning, describe(N));
}
InFlightDiagnostic onnxopt::emitWarning(DiagnosticEngine &D) {
  return InFlightDiagnostic(&D, Severity::Warning, "");
}
InFlightDiagnostic onnxopt::emitNote(DiagnosticEngine &D) {
  return InFlightDiagnostic(&D, Severity::Note, "");
}
InFlightDiagnostic onnxopt::emitRemark(DiagnosticEngine &D) {
  return InFlightDiagnostic(&D, Severity::Remark, "");
}
