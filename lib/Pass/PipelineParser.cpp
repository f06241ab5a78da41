//===- PipelineParser.cpp - The textual pipeline syntax -------------------===//
//
//   pipeline := pass (',' pass)*
//   pass     := name ('{' opt (' '+ opt)* '}')?
//   opt      := key ('=' value)?
//
// A value runs until the next space or '}' outside brackets, so it may hold
// commas, brackets, colons and semicolons; a "quoted" part may also hold
// spaces and braces (\" and \\ escape inside quotes). A key without a value
// sets a bool option to true. Every option is checked here (type, range,
// choices, whether a pass got the options it needs), so that a bad
// pipeline fails before any model is loaded.
//
// Errors teach the syntax where a user is likely to have guessed it: a
// comma between two options gets the corrected pipeline, an unknown pass or
// option name gets the closest one.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Pass/PipelineParser.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>

using namespace onnxopt;

std::string onnxopt::suggestClosest(llvm::StringRef Word,
                                    llvm::ArrayRef<std::string> Candidates) {
  std::string Best;
  unsigned BestDist = std::max<unsigned>(2, Word.size() / 3) + 1;
  for (const std::string &C : Candidates) {
    unsigned D = Word.edit_distance(C, /*AllowReplacements=*/true, BestDist);
    if (D < BestDist) {
      BestDist = D;
      Best = C;
    }
  }
  return Best;
}

std::string onnxopt::suggestPassName(llvm::StringRef Name) {
  std::vector<std::string> Names;
  for (const std::unique_ptr<Pass> &P : getRegisteredPasses())
    Names.push_back(P->getArgument().str());
  return suggestClosest(Name, Names);
}

namespace {

/// A recursive-descent parser over the pipeline text. Every error method
/// sets Error and returns failure so that callers can `return error(...)`.
class PipelineParser {
public:
  PipelineParser(llvm::StringRef Text, PipelineError &Error)
      : Text(Text), Error(Error) {}

  LogicalResult parse(std::vector<std::unique_ptr<Pass>> &Out);

private:
  LogicalResult parsePass(std::vector<std::unique_ptr<Pass>> &Out);
  LogicalResult parseOptions(Pass &P, size_t PassStart);
  LogicalResult parseOption(Pass &P, size_t PassStart);
  /// Reads a value starting at Pos into \p Value (quotes removed).
  LogicalResult parseValue(std::string &Value);
  LogicalResult checkRequired(Pass &P, size_t NameStart);
  LogicalResult checkCommaBetweenOptions(Pass &P, llvm::StringRef Key,
                                         size_t ValueStart, size_t PassStart);

  /// Fails with "Msg at position N Tail".
  LogicalResult error(const std::string &Msg, size_t At,
                      const std::string &Tail = "") {
    Error.Message = Msg + Tail;
    Error.Pos = At;
    Error.WithPosition = Msg + " at position " + std::to_string(At + 1) + Tail;
    return failure();
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
  PipelineError &Error;
  size_t Pos = 0;
};

} // namespace

static std::vector<std::string> optionNames(const Pass &P) {
  std::vector<std::string> Names;
  for (const OptionBase *O : P.getOptions())
    Names.push_back(O->getName().str());
  std::sort(Names.begin(), Names.end());
  return Names;
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
      return error("expected ',' or end of pipeline", Pos,
                   ", got '" + std::string(1, peek()) + "'");
    ++Pos;
    skipSpaces();
  }
}

LogicalResult
PipelineParser::parsePass(std::vector<std::unique_ptr<Pass>> &Out) {
  size_t NameStart = Pos;
  llvm::StringRef Name = lexWord(",{}");
  if (Name.empty())
    return error("empty pass name", NameStart);

  std::unique_ptr<Pass> P = createPass(Name);
  if (!P) {
    // `cse;dce`, `freeze-dims(dims=N:1)`: separators from other syntaxes.
    size_t Bad = Name.find_first_of(";(:[");
    if (Bad != llvm::StringRef::npos && createPass(Name.take_front(Bad))) {
      std::string Fixed = Name.take_front(Bad).str();
      if (Name[Bad] == ';')
        return error("passes are separated by commas", NameStart + Bad,
                     ": '" + Name.str() + "' -> '" +
                         llvm::join(llvm::split(Name, ';'), ",") + "'");
      if (Name[Bad] == '(')
        return error("options go in braces after the pass name",
                     NameStart + Bad, ": '" + Fixed + "{key=value ...}'");
    }
    std::string Suggestion = suggestPassName(Name);
    return error("unknown pass '" + Name.str() + "'", NameStart,
                 Suggestion.empty() ? ""
                                    : "; did you mean '" + Suggestion + "'?");
  }

  skipSpaces();
  if (peek() == '{') {
    ++Pos;
    if (failed(parseOptions(*P, NameStart)))
      return failure();
  } else if (!atEnd() && peek() != ',') {
    // `freeze-dims dims=N:1`: options without braces; `cse dce`: a missing
    // comma.
    size_t WordStart = Pos;
    llvm::StringRef Word = lexWord(",{}");
    Pos = WordStart;
    llvm::StringRef Key = Word.take_until([](char C) { return C == '='; });
    if (Word.contains('=') && P->findOption(Key))
      return error("options go in braces after the pass name", WordStart,
                   ": '" + P->getArgument().str() + "{" + Word.str() + "}'");
    if (createPass(Word))
      return error("passes are separated by commas", WordStart,
                   ": '" + P->getArgument().str() + "," + Word.str() + "'");
  }
  if (failed(checkRequired(*P, NameStart)))
    return failure();
  Out.push_back(std::move(P));
  return success();
}

/// A pass with required options needs a value for at least one of them:
/// `--set-dim-range` alone would silently do nothing.
LogicalResult PipelineParser::checkRequired(Pass &P, size_t NameStart) {
  std::vector<std::string> Required;
  for (const OptionBase *O : P.getOptions()) {
    if (!O->isRequired())
      continue;
    if (O->hasValue())
      return success();
    Required.push_back("'" + O->getName().str() + "'");
  }
  if (Required.empty())
    return success();
  std::sort(Required.begin(), Required.end());
  std::string Example =
      P.getArgument().str() + "{" +
      Required.front().substr(1, Required.front().size() - 2) + "=...}";
  return error("pass '" + P.getArgument().str() + "' needs option " +
                   llvm::join(Required, " or "),
               NameStart,
               ", e.g. '" + Example + "' (see onnx-opt --list-passes)");
}

LogicalResult PipelineParser::parseOptions(Pass &P, size_t PassStart) {
  while (true) {
    skipSpaces();
    if (atEnd())
      return error("expected '}'", Pos,
                   " to end the options of pass '" + P.getArgument().str() +
                       "'");
    if (peek() == '}') {
      ++Pos;
      return success();
    }
    if (failed(parseOption(P, PassStart)))
      return failure();
    // Options are separated by spaces; anything else glued to a value
    // would have been part of it, so only '}' or a space may follow.
    if (!atEnd() && !isSpace(peek()) && peek() != '}')
      return error("expected ' ' or '}'", Pos);
  }
}

/// `dims=batch:1,shapes=x[1,3]`: the comma makes `shapes=...` part of the
/// value of `dims`. Fails with the pipeline as it should have been written.
LogicalResult PipelineParser::checkCommaBetweenOptions(Pass &P,
                                                       llvm::StringRef Key,
                                                       size_t ValueStart,
                                                       size_t PassStart) {
  unsigned Depth = 0;
  bool InQuotes = false;
  for (size_t I = ValueStart; I < Pos; ++I) {
    char C = Text[I];
    if (C == '"')
      InQuotes = !InQuotes;
    if (InQuotes)
      continue;
    if (C == '[')
      ++Depth;
    else if (C == ']' && Depth > 0)
      --Depth;
    if (C != ',' || Depth > 0)
      continue;
    llvm::StringRef Rest = Text.slice(I + 1, Pos);
    size_t Eq = Rest.find('=');
    if (Eq == llvm::StringRef::npos)
      continue;
    llvm::StringRef Next = Rest.take_front(Eq);
    if (Next == Key || !P.findOption(Next))
      continue;
    size_t End = Text.find('}', Pos);
    std::string Fixed =
        (Text.slice(PassStart, I) + " " +
         Text.slice(I + 1, End == llvm::StringRef::npos ? Text.size() : End))
            .str();
    Fixed += "}";
    return error("options are separated by spaces, not commas", I,
                 ": '" + Fixed + "'");
  }
  return success();
}

LogicalResult PipelineParser::parseOption(Pass &P, size_t PassStart) {
  size_t KeyStart = Pos;
  llvm::StringRef Key = lexWord("=}");
  if (Key.empty())
    return error("expected an option name", KeyStart);

  OptionBase *O = P.findOption(Key);
  if (!O) {
    std::vector<std::string> Names = optionNames(P);
    std::string Msg = "pass '" + P.getArgument().str() + "' has no option '" +
                      Key.str() + "'";
    if (Names.empty())
      return error(Msg, KeyStart, " (it has no options)");
    std::string Suggestion = suggestClosest(Key, Names);
    if (!Suggestion.empty())
      return error(Msg, KeyStart, "; did you mean '" + Suggestion + "'?");
    return error(Msg, KeyStart,
                 " (available: " + llvm::join(Names, ", ") + ")");
  }

  std::string Value;
  size_t ValueStart = Pos;
  if (peek() == '=') {
    ++Pos;
    ValueStart = Pos;
    if (failed(parseValue(Value)))
      return failure();
    if (failed(checkCommaBetweenOptions(P, Key, ValueStart, PassStart)))
      return failure();
  } else if (O->getTypeName() == "bool") {
    Value = "true";
  } else {
    return error("expected '=' after option '" + Key.str() + "' of pass '" +
                     P.getArgument().str() + "'",
                 Pos);
  }

  std::string Why;
  if (!O->parse(Value, Why))
    return error("invalid value for option '" + Key.str() + "' of pass '" +
                     P.getArgument().str() + "'",
                 ValueStart, ": " + Why);
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
          return error("unterminated quoted value", QuoteStart);
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
    return error("expected ']'", Pos);
  return success();
}

LogicalResult
onnxopt::parsePassPipeline(llvm::StringRef Text,
                           std::vector<std::unique_ptr<Pass>> &Out,
                           PipelineError &Error) {
  std::vector<std::unique_ptr<Pass>> Passes;
  PipelineParser Parser(Text, Error);
  if (failed(Parser.parse(Passes)))
    return failure();
  for (std::unique_ptr<Pass> &P : Passes)
    Out.push_back(std::move(P));
  return success();
}

LogicalResult onnxopt::parsePassPipeline(llvm::StringRef Text, PassManager &PM,
                                         std::string &Error) {
  std::vector<std::unique_ptr<Pass>> Passes;
  PipelineError E;
  if (failed(parsePassPipeline(Text, Passes, E))) {
    Error = E.WithPosition;
    return failure();
  }
  // Only a fully valid pipeline changes the pass manager.
  for (std::unique_ptr<Pass> &P : Passes)
    PM.addPass(std::move(P));
  return success();
}
