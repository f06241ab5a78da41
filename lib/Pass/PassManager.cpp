//===- PassManager.cpp - Pipelines ----------------------------------------===//
//
// Running a pipeline (with verification, IR printing and timing) and the
// textual pipeline syntax:
//
//   pipeline := pass (',' pass)*
//   pass     := name ('{' opt (' '+ opt)* '}')?
//   opt      := key ('=' value)?
//
// A value runs until the next space or '}' outside brackets, so it may hold
// commas, brackets, colons and semicolons; a "quoted" part may also hold
// spaces and braces (\" and \\ escape inside quotes). A key without a value
// sets a bool option to true. Positions in error messages are 1-based
// character columns into the pipeline text.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/IR/Model.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include <algorithm>
#include <chrono>

using namespace onnxopt;

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

static double millisecondsSince(std::chrono::steady_clock::time_point Start) {
  std::chrono::duration<double, std::milli> D =
      std::chrono::steady_clock::now() - Start;
  return D.count();
}

static InFlightDiagnostic emitNote(DiagnosticEngine &Diags) {
  return InFlightDiagnostic(&Diags, Severity::Note, "");
}

/// The row name under which verification time is reported.
static const char *const VerifierRow = "(verifier)";

LogicalResult PassManager::run(Model &M, DiagnosticEngine &Diags) {
  AnalysisManager AM(M, Diags);
  return run(M, Diags, AM);
}

namespace {
/// Sets the engine's message prefix for a scope. Nested pipelines compose:
/// "freeze-dims: fold-shapes: ...".
class ScopedPrefix {
public:
  ScopedPrefix(DiagnosticEngine &Diags, llvm::StringRef Arg) : Diags(Diags) {
    Saved = Diags.setMessagePrefix(Diags.getMessagePrefix().str() + Arg.str() +
                                   ": ");
  }
  ~ScopedPrefix() { Diags.setMessagePrefix(std::move(Saved)); }

private:
  DiagnosticEngine &Diags;
  std::string Saved;
};
} // namespace

LogicalResult PassManager::run(Model &M, DiagnosticEngine &Diags,
                               AnalysisManager &AM, bool *Changed) {
  // Rows recorded before the run (e.g. loading) stay in the table.
  double VerifyMs = 0;
  bool Verified = false;
  // Verification time goes last, as one row, however the run ends.
  auto Finish = [&](LogicalResult R) {
    if (Opts.Timing && Verified)
      Timings.emplace_back(VerifierRow, VerifyMs);
    return R;
  };

  llvm::raw_ostream &IrOS = Opts.IrStream ? *Opts.IrStream : llvm::errs();
  for (const std::unique_ptr<Pass> &P : Passes) {
    llvm::StringRef Arg = P->getArgument();
    PassContext Ctx(Diags, AM);
    auto Start = std::chrono::steady_clock::now();
    unsigned ErrorsBefore = Diags.getNumErrors();
    LogicalResult R = failure();
    {
      ScopedPrefix Prefix(Diags, Arg);
      R = P->run(M, Ctx);
    }
    if (Opts.Timing)
      Timings.emplace_back(Arg.str(), millisecondsSince(Start));
    // An error is a failure even when the pass carried on and returned
    // success: its result is not trusted.
    if (failed(R) || Diags.getNumErrors() != ErrorsBefore) {
      emitNote(Diags) << "pass '" << Arg << "' failed";
      return Finish(failure());
    }
    if (Ctx.Changed) {
      AM.invalidate(Ctx.Preserved);
      if (Changed)
        *Changed = true;
    }

    // Print before verifying so that a broken IR can be inspected.
    if (Opts.PrintIrAfterAll ||
        llvm::is_contained(Opts.PrintIrAfter, Arg.str())) {
      IrOS << "# -----// IR after pass '" << Arg << "' //----- #\n";
      if (Opts.IrPrinter)
        Opts.IrPrinter(M, IrOS);
      else
        IrOS << "# (no IR printer was given to the pass manager)\n";
      IrOS.flush();
    }

    if (Opts.VerifyEach) {
      auto VerifyStart = std::chrono::steady_clock::now();
      LogicalResult VR = verifyModel(M, Diags);
      VerifyMs += millisecondsSince(VerifyStart);
      Verified = true;
      if (failed(VR)) {
        emitError(Diags) << "verification failed after pass '" << Arg << "'";
        return Finish(failure());
      }
    }
  }
  return Finish(success());
}

LogicalResult PassManager::addPipeline(llvm::StringRef Text,
                                       std::string &Error) {
  return parsePassPipeline(Text, *this, Error);
}

void PassManager::printTiming(llvm::raw_ostream &OS) const {
  double Total = 0;
  for (const auto &T : Timings)
    Total += T.second;
  auto Row = [&](double Ms, llvm::StringRef Name) {
    double Percent = Total > 0 ? 100.0 * Ms / Total : 0.0;
    OS << llvm::format("  %10.3f (%5.1f%%)  ", Ms, Percent) << Name << "\n";
  };

  const char *Rule = "===---------------------------------------------------"
                     "----------------------===\n";
  OS << Rule;
  OS << "                      ... Pass execution timing report ...\n";
  OS << Rule;
  OS << llvm::format("  Total Execution Time: %.3f ms\n\n", Total);
  OS << "  ----Wall Time (ms)---  ----Name----\n";
  for (const auto &T : Timings)
    Row(T.second, T.first);
  Row(Total, "Total");
  OS.flush();
}

void PassManager::printAsTextualPipeline(llvm::raw_ostream &OS) const {
  for (size_t I = 0; I < Passes.size(); ++I) {
    if (I)
      OS << ',';
    Passes[I]->printAsTextualPipeline(OS);
  }
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

/// A recursive-descent parser over the pipeline text. Every error method
/// sets Error and returns failure so that callers can `return error(...)`.
class PipelineParser {
public:
  PipelineParser(llvm::StringRef Text, std::string &Error)
      : Text(Text), Error(Error) {}

  LogicalResult parse(std::vector<std::unique_ptr<Pass>> &Out);
  /// Parses the whole text as the options of \p P (no braces).
  LogicalResult parseOptionList(Pass &P);

private:
  LogicalResult parsePass(std::vector<std::unique_ptr<Pass>> &Out);
  LogicalResult parseOptions(Pass &P);
  LogicalResult parseOption(Pass &P);
  /// Reads a value starting at Pos into \p Value (quotes removed).
  LogicalResult parseValue(std::string &Value);

  LogicalResult error(std::string Msg) {
    Error = std::move(Msg);
    return failure();
  }
  static std::string at(size_t At) {
    return " at position " + std::to_string(At + 1);
  }

  bool atEnd() const { return Pos >= Text.size(); }
  char peek() const { return atEnd() ? '\0' : Text[Pos]; }
  static bool isSpace(char C) {
    return C == ' ' || C == '\t' || C == '\n' || C == '\r';
  }
  void skipSpaces() {
    while (!atEnd() && isSpace(Text[Pos]))
      ++Pos;
  }
  /// Consumes characters up to one in \p Stop (or a space) and returns them.
  llvm::StringRef lexWord(llvm::StringRef Stop) {
    size_t Start = Pos;
    while (!atEnd() && !isSpace(Text[Pos]) &&
           Stop.find(Text[Pos]) == llvm::StringRef::npos)
      ++Pos;
    return Text.slice(Start, Pos);
  }

  llvm::StringRef Text;
  std::string &Error;
  size_t Pos = 0;
};

} // namespace

/// The registered pass closest to \p Name, or "" if none is close enough to
/// be a likely typo.
static std::string suggestPass(llvm::StringRef Name) {
  std::string Best;
  unsigned BestDist = std::max<unsigned>(2, Name.size() / 3) + 1;
  for (const std::unique_ptr<Pass> &P : getRegisteredPasses()) {
    unsigned D = Name.edit_distance(P->getArgument(), /*AllowReplacements=*/
                                    true, BestDist);
    if (D < BestDist) {
      BestDist = D;
      Best = P->getArgument().str();
    }
  }
  return Best;
}

/// "a, b, c" of \p P's option names, sorted.
static std::string listOptions(const Pass &P) {
  std::vector<std::string> Names;
  for (const OptionBase *O : P.getOptions())
    Names.push_back(O->getName().str());
  std::sort(Names.begin(), Names.end());
  return llvm::join(Names, ", ");
}

LogicalResult PipelineParser::parse(std::vector<std::unique_ptr<Pass>> &Out) {
  skipSpaces();
  // An empty pipeline is valid and does nothing.
  if (atEnd())
    return success();
  while (true) {
    if (failed(parsePass(Out)))
      return failure();
    skipSpaces();
    if (atEnd())
      return success();
    if (peek() != ',')
      return error("expected ',' or end of pipeline" + at(Pos) + ", got '" +
                   std::string(1, peek()) + "'");
    ++Pos;
    skipSpaces();
  }
}

LogicalResult
PipelineParser::parsePass(std::vector<std::unique_ptr<Pass>> &Out) {
  size_t NameStart = Pos;
  llvm::StringRef Name = lexWord(",{}");
  if (Name.empty())
    return error("empty pass name" + at(NameStart));

  std::unique_ptr<Pass> P = createPass(Name);
  if (!P) {
    std::string Msg = "unknown pass '" + Name.str() + "'" + at(NameStart);
    std::string Suggestion = suggestPass(Name);
    if (!Suggestion.empty())
      Msg += "; did you mean '" + Suggestion + "'?";
    return error(Msg);
  }

  skipSpaces();
  if (peek() == '{') {
    ++Pos;
    if (failed(parseOptions(*P)))
      return failure();
  }
  Out.push_back(std::move(P));
  return success();
}

LogicalResult PipelineParser::parseOptions(Pass &P) {
  while (true) {
    skipSpaces();
    if (atEnd())
      return error("expected '}'" + at(Pos) + " to end the options of pass '" +
                   P.getArgument().str() + "'");
    if (peek() == '}') {
      ++Pos;
      return success();
    }
    if (failed(parseOption(P)))
      return failure();
    // Options are separated by spaces; anything else glued to a value
    // would have been part of it, so only '}' or a space may follow.
    if (!atEnd() && !isSpace(peek()) && peek() != '}')
      return error("expected ' ' or '}'" + at(Pos));
  }
}

LogicalResult PipelineParser::parseOptionList(Pass &P) {
  while (true) {
    skipSpaces();
    if (atEnd())
      return success();
    if (failed(parseOption(P)))
      return failure();
    if (!atEnd() && !isSpace(peek()))
      return error("expected ' ' or end of options" + at(Pos));
  }
}

LogicalResult PipelineParser::parseOption(Pass &P) {
  size_t KeyStart = Pos;
  llvm::StringRef Key = lexWord("=}");
  if (Key.empty())
    return error("expected an option name" + at(KeyStart));

  OptionBase *O = P.findOption(Key);
  if (!O) {
    std::string Msg = "pass '" + P.getArgument().str() + "' has no option '" +
                      Key.str() + "'" + at(KeyStart);
    std::string Available = listOptions(P);
    Msg += Available.empty() ? " (it has no options)"
                             : " (available: " + Available + ")";
    return error(Msg);
  }

  auto Invalid = [&](size_t At, const std::string &Why) {
    return error("invalid value for option '" + Key.str() + "' of pass '" +
                 P.getArgument().str() + "'" + at(At) + ": " + Why);
  };

  std::string Value;
  size_t ValueStart = Pos;
  if (peek() == '=') {
    ++Pos;
    ValueStart = Pos;
    if (failed(parseValue(Value)))
      return failure();
  } else if (O->getTypeName() == "bool") {
    Value = "true";
  } else {
    return error("expected '=' after option '" + Key.str() + "' of pass '" +
                 P.getArgument().str() + "'" + at(Pos));
  }

  std::string Why;
  if (!O->parse(Value, Why))
    return Invalid(ValueStart, Why);
  return success();
}

LogicalResult PipelineParser::parseValue(std::string &Value) {
  unsigned Depth = 0;
  while (!atEnd()) {
    char C = Text[Pos];
    if (Depth == 0 && (isSpace(C) || C == '}'))
      break;
    ++Pos;
    if (C == '[') {
      ++Depth;
    } else if (C == ']') {
      if (Depth > 0)
        --Depth;
    } else if (C == '"') {
      size_t QuoteStart = Pos - 1;
      while (true) {
        if (atEnd())
          return error("unterminated quoted value" + at(QuoteStart));
        char Q = Text[Pos++];
        if (Q == '"')
          break;
        if (Q == '\\' && !atEnd())
          Q = Text[Pos++];
        Value += Q;
      }
      continue;
    }
    Value += C;
  }
  if (Depth > 0)
    return error("expected ']'" + at(Pos));
  return success();
}

LogicalResult onnxopt::parsePassOptions(llvm::StringRef Text, Pass &P,
                                        std::string &Error) {
  PipelineParser Parser(Text, Error);
  return Parser.parseOptionList(P);
}

LogicalResult onnxopt::parsePassPipeline(llvm::StringRef Text, PassManager &PM,
                                         std::string &Error) {
  std::vector<std::unique_ptr<Pass>> Passes;
  PipelineParser Parser(Text, Error);
  if (failed(Parser.parse(Passes)))
    return failure();
  // Only a fully valid pipeline changes the pass manager.
  for (std::unique_ptr<Pass> &P : Passes)
    PM.addPass(std::move(P));
  return success();
}
