//===- PassOptions.cpp - Typed pass options -------------------------------===//
//
// Parsing and printing of option values. Every parser accepts exactly the
// text its printer produces, so a pipeline printed with
// printAsTextualPipeline parses back to the same options.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Pass/PassOptions.h"
#include "onnxopt/Pass/Pass.h"
#include "llvm/ADT/StringExtras.h"
#include <charconv>
#include <cmath>

using namespace onnxopt;

//===----------------------------------------------------------------------===//
// OptionBase
//===----------------------------------------------------------------------===//

OptionBase::OptionBase(Pass &Owner, llvm::StringRef Name, llvm::StringRef Help,
                       OptionConstraint Constraint)
    : Constraint(std::move(Constraint)), Name(Name.str()), Help(Help.str()) {
  Owner.Options.push_back(this);
}

bool OptionBase::checkConstraint(llvm::StringRef Text,
                                 std::string &Error) const {
  const OptionConstraint &C = Constraint;
  if (!C.Choices.empty() && !llvm::is_contained(C.Choices, Text.str())) {
    std::vector<std::string> Quoted;
    for (const std::string &Choice : C.Choices)
      Quoted.push_back("'" + Choice + "'");
    std::string Last = Quoted.back();
    Quoted.pop_back();
    Error = "expected " +
            (Quoted.empty() ? Last : llvm::join(Quoted, ", ") + " or " + Last) +
            ", got '" + Text.str() + "'";
    return false;
  }
  if (C.Check && !C.Check(Text, Error))
    return false;
  if (!C.Min && !C.Max)
    return true;
  long long V;
  if (Text.getAsInteger(10, V))
    return true; // not an integer option; the type parser decided
  if (C.Min && V < *C.Min) {
    Error =
        "must be at least " + std::to_string(*C.Min) + ", got " + Text.str();
    return false;
  }
  if (C.Max && V > *C.Max) {
    Error = "must be at most " + std::to_string(*C.Max) + ", got " + Text.str();
    return false;
  }
  return true;
}

OptionBase::~OptionBase() = default;

//===----------------------------------------------------------------------===//
// Parsers
//===----------------------------------------------------------------------===//

static std::string quoted(llvm::StringRef Text) {
  return "'" + Text.str() + "'";
}

bool onnxopt::parseOptionValue(llvm::StringRef Text, int64_t &Out,
                               std::string &Err) {
  long long V;
  // getAsInteger rejects trailing garbage and values that do not fit.
  if (Text.empty() || Text.getAsInteger(10, V)) {
    Err = "expected an integer, got " + quoted(Text);
    return false;
  }
  Out = V;
  return true;
}

bool onnxopt::parseOptionValue(llvm::StringRef Text, bool &Out,
                               std::string &Err) {
  if (Text == "true" || Text == "1") {
    Out = true;
    return true;
  }
  if (Text == "false" || Text == "0") {
    Out = false;
    return true;
  }
  Err = "expected 'true' or 'false', got " + quoted(Text);
  return false;
}

bool onnxopt::parseOptionValue(llvm::StringRef Text, double &Out,
                               std::string &Err) {
  double V;
  // getAsDouble accepts things like "inf" and "nan"; a pass option has no
  // use for them.
  if (Text.empty() || Text.getAsDouble(V) || !std::isfinite(V)) {
    Err = "expected a number, got " + quoted(Text);
    return false;
  }
  Out = V;
  return true;
}

bool onnxopt::parseOptionValue(llvm::StringRef Text, std::string &Out,
                               std::string &Err) {
  Out = Text.str();
  return true;
}

/// Characters allowed in the name part of a shape: ONNX value names are
/// free-form, but these cover what exporters produce (`input.1`,
/// `encoder/x:0`, `pixel-values`).
static bool isShapeNameChar(char C) {
  return llvm::isAlnum(C) || C == '_' || C == '.' || C == ':' || C == '/' ||
         C == '-';
}

static bool isIdentifier(llvm::StringRef S) {
  if (S.empty() || !(llvm::isAlpha(S[0]) || S[0] == '_'))
    return false;
  return llvm::all_of(S.drop_front(),
                      [](char C) { return llvm::isAlnum(C) || C == '_'; });
}

/// A dim is a non-negative integer, a symbol or "?".
static bool isValidDim(llvm::StringRef D) {
  if (D == "?" || isIdentifier(D))
    return true;
  uint64_t V;
  return !D.empty() && llvm::all_of(D, llvm::isDigit) &&
         !D.getAsInteger(10, V) && V <= uint64_t(INT64_MAX);
}

/// The forms trtexec and polygraphy take: `input:1x3x640x640` and
/// `input:[1,3,640,640]`. Returns false when \p Text is neither.
static bool parseToolShape(llvm::StringRef Text, ShapeSpec &Out) {
  auto [Name, Body] = Text.rsplit(':');
  // A name ending in ':' would print back as another tool-form split.
  if (Name.empty() || Body.empty() || Name == Text || Name.endswith(":") ||
      !llvm::all_of(Name, isShapeNameChar))
    return false;
  ShapeSpec S;
  S.Name = Name.str();
  if (Body.startswith("[") && Body.endswith("]")) {
    llvm::StringRef Inner = Body.drop_front().drop_back();
    if (Inner.find_first_of("[]") != llvm::StringRef::npos)
      return false;
    if (Inner.trim().empty()) {
      Out = std::move(S);
      return true;
    }
    llvm::SmallVector<llvm::StringRef, 8> Parts;
    Inner.split(Parts, ',');
    for (llvm::StringRef P : Parts) {
      if (!isValidDim(P.trim()))
        return false;
      S.Dims.push_back(P.trim().str());
    }
    Out = std::move(S);
    return true;
  }
  // `1x3x640x640`: only numbers (and '?'), since a symbol may hold an 'x'.
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Body.split(Parts, 'x');
  for (llvm::StringRef P : Parts) {
    if (P != "?" &&
        (P.empty() || !llvm::all_of(P, llvm::isDigit) || !isValidDim(P)))
      return false;
    S.Dims.push_back(P.str());
  }
  Out = std::move(S);
  return true;
}

bool onnxopt::parseOptionValue(llvm::StringRef Text, ShapeSpec &Out,
                               std::string &Err) {
  auto Fail = [&] {
    Err =
        "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got " + quoted(Text);
    return false;
  };
  llvm::StringRef Trimmed = Text.trim();
  if (!Trimmed.endswith("]") || Trimmed.contains(":["))
    if (parseToolShape(Trimmed, Out))
      return true;
  size_t Open = Trimmed.find('[');
  if (Open == llvm::StringRef::npos || Open == 0 || !Trimmed.endswith("]"))
    return Fail();
  llvm::StringRef Name = Trimmed.take_front(Open);
  // `x::[1]` is neither form: the tool form's name would end in ':', and
  // printing `x:` back as `x:[1]` would read as the name `x`.
  if (!llvm::all_of(Name, isShapeNameChar) || Name.endswith(":"))
    return Fail();
  llvm::StringRef Body = Trimmed.slice(Open + 1, Trimmed.size() - 1);
  if (Body.find_first_of("[]") != llvm::StringRef::npos)
    return Fail();

  ShapeSpec S;
  S.Name = Name.str();
  // `name[]` is a scalar.
  if (!Body.trim().empty()) {
    llvm::SmallVector<llvm::StringRef, 8> Parts;
    Body.split(Parts, ',');
    for (llvm::StringRef P : Parts) {
      llvm::StringRef D = P.trim();
      if (!isValidDim(D)) {
        Err = "invalid dim " + quoted(D) + " in shape " + quoted(Text) +
              ": expected an integer, a symbol or '?'";
        return false;
      }
      S.Dims.push_back(D.str());
    }
  }
  Out = std::move(S);
  return true;
}

//===----------------------------------------------------------------------===//
// Printers
//===----------------------------------------------------------------------===//

void onnxopt::printOptionValue(llvm::raw_ostream &OS, int64_t V) { OS << V; }

void onnxopt::printOptionValue(llvm::raw_ostream &OS, bool V) {
  OS << (V ? "true" : "false");
}

void onnxopt::printOptionValue(llvm::raw_ostream &OS, double V) {
  // The shortest text that reads back as the same double.
  char Buf[64];
  auto Res = std::to_chars(Buf, Buf + sizeof(Buf), V);
  OS << llvm::StringRef(Buf, Res.ptr - Buf);
}

/// True if \p S must be quoted to survive the pipeline parser.
static bool needsQuotes(llvm::StringRef S) {
  if (S.empty() || S.find_first_of(" \t\n\r{}\"\\") != llvm::StringRef::npos)
    return true;
  // Outside quotes the parser pairs brackets (`x[1,3]`): an unpaired '['
  // would swallow the closing brace.
  int Depth = 0;
  for (char C : S) {
    if (C == '[')
      ++Depth;
    else if (C == ']' && --Depth < 0)
      return true;
  }
  return Depth != 0;
}

void onnxopt::printOptionValue(llvm::raw_ostream &OS, const std::string &V) {
  if (!needsQuotes(V)) {
    OS << V;
    return;
  }
  OS << '"';
  for (char C : V) {
    if (C == '"' || C == '\\')
      OS << '\\';
    OS << C;
  }
  OS << '"';
}

void onnxopt::printOptionValue(llvm::raw_ostream &OS, const ShapeSpec &V) {
  OS << V.Name << '[';
  for (size_t I = 0; I < V.Dims.size(); ++I) {
    if (I)
      OS << ',';
    OS << V.Dims[I];
  }
  OS << ']';
}

llvm::StringRef onnxopt::optionTypeName(int64_t *) { return "int"; }
llvm::StringRef onnxopt::optionTypeName(bool *) { return "bool"; }
llvm::StringRef onnxopt::optionTypeName(double *) { return "float"; }
llvm::StringRef onnxopt::optionTypeName(std::string *) { return "string"; }
llvm::StringRef onnxopt::optionTypeName(ShapeSpec *) { return "shape"; }

//===----------------------------------------------------------------------===//
// Lists
//===----------------------------------------------------------------------===//

std::vector<std::string> onnxopt::splitOptionList(llvm::StringRef Text) {
  std::vector<std::string> Items;
  if (Text.trim().empty())
    return Items;
  unsigned Depth = 0;
  size_t Start = 0;
  for (size_t I = 0, E = Text.size(); I <= E; ++I) {
    if (I < E) {
      char C = Text[I];
      if (C == '[')
        ++Depth;
      else if (C == ']' && Depth > 0)
        --Depth;
      if (C != ',' || Depth > 0)
        continue;
    }
    Items.push_back(Text.slice(Start, I).trim().str());
    Start = I + 1;
  }
  return Items;
}
