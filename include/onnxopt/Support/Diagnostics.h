//===- Diagnostics.h - Errors, warnings and notes --------------*- C++ -*-===//
//
// Diagnostics are how onnx-opt reports problems: passes and importers emit
// them and return failure(); nothing throws across library boundaries.
// Format: `file: error: node 'name' (OpType) in graph 'g/body': reason`.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_SUPPORT_DIAGNOSTICS_H
#define ONNXOPT_SUPPORT_DIAGNOSTICS_H

#include "onnxopt/Support/LogicalResult.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace onnxopt {

enum class Severity { Error, Warning, Note, Remark };

/// "error", "warning", "note" or "remark", as diagnostics are printed.
llvm::StringRef getSeverityName(Severity S);

/// One finished diagnostic.
struct Diagnostic {
  Severity Sev = Severity::Error;
  std::string Location; ///< "node 'n' (Op) in graph 'g'" or empty
  std::string Message;
};

/// Collects diagnostics and hands them to a handler. The default handler
/// prints `file: severity: location: message` to stderr.
class DiagnosticEngine {
public:
  using Handler = std::function<void(const Diagnostic &)>;

  DiagnosticEngine();
  /// The file name used as prefix when printing.
  void setFileName(llvm::StringRef Name) { FileName = Name.str(); }
  llvm::StringRef getFileName() const { return FileName; }
  void setHandler(Handler H) { TheHandler = std::move(H); }

  void emit(Diagnostic D);
  unsigned getNumErrors() const { return NumErrors; }

  /// Text put in front of every message emitted from now on (the pass
  /// manager sets it to "pass-name: " while a pass runs, so passes never
  /// type their own name). Returns the previous prefix.
  std::string setMessagePrefix(std::string Prefix) {
    std::swap(Prefix, MessagePrefix);
    return Prefix;
  }
  llvm::StringRef getMessagePrefix() const { return MessagePrefix; }

  /// Whether diagnostics that have a long form use it (`--verbose`):
  /// warnings that repeat on every run (such as what verification could not
  /// check on a newer opset) are one short line otherwise.
  void setVerbose(bool V) { Verbose = V; }
  bool isVerbose() const { return Verbose; }

  /// Prints a diagnostic in the standard format.
  void print(llvm::raw_ostream &OS, const Diagnostic &D) const;

private:
  std::string FileName;
  std::string MessagePrefix;
  Handler TheHandler;
  unsigned NumErrors = 0;
  bool Verbose = false;
};

/// An in-flight diagnostic: collects the message with `<<` and is emitted
/// when destroyed. Converts to failure() so that
/// `return emitError(Diags, N) << "reason";` works.
class InFlightDiagnostic {
public:
  InFlightDiagnostic(DiagnosticEngine *Engine, Severity Sev,
                     std::string Location);
  InFlightDiagnostic(InFlightDiagnostic &&Other);
  InFlightDiagnostic(const InFlightDiagnostic &) = delete;
  ~InFlightDiagnostic();

  template <typename T> InFlightDiagnostic &operator<<(const T &Arg) & {
    OS << Arg;
    return *this;
  }
  template <typename T> InFlightDiagnostic &&operator<<(const T &Arg) && {
    OS << Arg;
    return std::move(*this);
  }
  operator LogicalResult() const { return failure(); }

private:
  DiagnosticEngine *Engine;
  Severity Sev;
  std::string Location;
  std::string Message;
  llvm::raw_string_ostream OS{Message};
};

/// An engine for work a pass repeats (rounds of inference and folding):
/// forwards each distinct error and warning to \p Outer once and drops
/// remarks and notes, which would repeat every round.
class DeduplicatingDiagnostics {
public:
  explicit DeduplicatingDiagnostics(DiagnosticEngine &Outer);
  DiagnosticEngine &get() { return Engine; }

private:
  DiagnosticEngine Engine;
  std::set<std::string> Seen;
};

/// A diagnostic at \p Location (already described, e.g. "node 'n' (Op)").
InFlightDiagnostic emitAt(DiagnosticEngine &D, Severity Sev,
                          std::string Location);

/// Diagnostics located at a node, value or graph are declared by
/// onnxopt/IR/Diagnostics.h (this layer knows nothing of the IR).
InFlightDiagnostic emitError(DiagnosticEngine &D);
InFlightDiagnostic emitWarning(DiagnosticEngine &D);
InFlightDiagnostic emitNote(DiagnosticEngine &D);
InFlightDiagnostic emitRemark(DiagnosticEngine &D);

} // namespace onnxopt

#endif // ONNXOPT_SUPPORT_DIAGNOSTICS_H
