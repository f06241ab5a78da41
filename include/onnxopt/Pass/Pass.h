//===- Pass.h - The pass base class ----------------------------*- C++ -*-===//
#ifndef ONNXOPT_PASS_PASS_H
#define ONNXOPT_PASS_PASS_H

#include "onnxopt/Pass/PassOptions.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <string>
#include <vector>

namespace onnxopt {

class Model;

/// What a pass sees besides the model.
class PassContext {
public:
  explicit PassContext(DiagnosticEngine &Diags) : Diags(Diags) {}
  DiagnosticEngine &getDiags() { return Diags; }
  /// Set by a pass that changed the model (for --timing/--summary output).
  bool Changed = false;

private:
  DiagnosticEngine &Diags;
};

class Pass {
public:
  virtual ~Pass();
  /// The kebab-case name used in pipelines and as a flag.
  virtual llvm::StringRef getArgument() const = 0;
  /// One line, lowercase start, no trailing period.
  virtual llvm::StringRef getDescription() const = 0;
  /// Runs on the whole model. On failure a diagnostic has been emitted.
  virtual LogicalResult run(Model &M, PassContext &Ctx) = 0;

  llvm::ArrayRef<OptionBase *> getOptions() const { return Options; }
  OptionBase *findOption(llvm::StringRef Name) const;
  /// Prints `arg{k=v ...}` with the options that were set.
  void printAsTextualPipeline(llvm::raw_ostream &OS) const;

private:
  friend class OptionBase;
  std::vector<OptionBase *> Options;
};

} // namespace onnxopt

#endif // ONNXOPT_PASS_PASS_H
