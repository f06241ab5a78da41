//===- Diagnostics.cpp - Errors, warnings and notes -----------------------===//
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/Support/WithColor.h"

using namespace onnxopt;

DiagnosticEngine::DiagnosticEngine() {
  TheHandler = [this](const Diagnostic &D) { print(llvm::errs(), D); };
}

void DiagnosticEngine::emit(Diagnostic D) {
  if (!MessagePrefix.empty())
    D.Message.insert(0, MessagePrefix);
  if (D.Sev == Severity::Error)
    ++NumErrors;
  if (TheHandler)
    TheHandler(D);
}

llvm::StringRef onnxopt::getSeverityName(Severity S) {
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

void DiagnosticEngine::print(llvm::raw_ostream &OS, const Diagnostic &D) const {
  if (!FileName.empty())
    OS << FileName << ": ";
  OS << getSeverityName(D.Sev) << ": ";
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

InFlightDiagnostic onnxopt::emitAt(DiagnosticEngine &D, Severity Sev,
                                   std::string Location) {
  return InFlightDiagnostic(&D, Sev, std::move(Location));
}
InFlightDiagnostic onnxopt::emitError(DiagnosticEngine &D) {
  return InFlightDiagnostic(&D, Severity::Error, "");
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
