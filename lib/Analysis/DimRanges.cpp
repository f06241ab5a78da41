//===- DimRanges.cpp - Value ranges of symbolic dims ----------------------===//
//
// Reads and writes the ranges kept in the model's metadata_props. The model
// residual is the only place the IR keeps metadata_props, so both directions
// parse it into a ModelProto, touch the one key and serialize it back.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/IR/Metadata.h"
#include "onnxopt/IR/Model.h"
#include "llvm/ADT/SmallVector.h"

#include "llvm/ADT/STLExtras.h"
#include <algorithm>

using namespace onnxopt;

namespace {

bool parseInt(llvm::StringRef Text, int64_t &Out) {
  return !Text.trim().getAsInteger(10, Out);
}

} // namespace

bool onnxopt::parseDimRange(llvm::StringRef Text, DimRange &Out,
                            std::string &Error) {
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  Text.split(Parts, ':');
  if (Parts.size() != 2 && Parts.size() != 3) {
    Error = "expected min:max[:opt], got '" + Text.str() + "'";
    return false;
  }
  DimRange R;
  int64_t Opt = 0;
  if (!parseInt(Parts[0], R.Min) || !parseInt(Parts[1], R.Max) ||
      (Parts.size() == 3 && !parseInt(Parts[2], Opt))) {
    Error = "expected integers in min:max[:opt], got '" + Text.str() + "'";
    return false;
  }
  if (Parts.size() == 3)
    R.Opt = Opt;
  if (R.Min < 0) {
    Error = "the minimum must not be negative, got '" + Text.str() + "'";
    return false;
  }
  if (R.Min > R.Max) {
    Error = "the minimum is larger than the maximum in '" + Text.str() + "'";
    return false;
  }
  if (R.Opt && !R.contains(*R.Opt)) {
    Error = "opt is outside [min, max] in '" + Text.str() + "'";
    return false;
  }
  Out = R;
  return true;
}

std::string onnxopt::printDimRange(const DimRange &R) {
  std::string S = std::to_string(R.Min) + ":" + std::to_string(R.Max);
  if (R.Opt)
    S += ":" + std::to_string(*R.Opt);
  return S;
}

static bool isSymbolName(llvm::StringRef S) {
  return !S.empty() && S.find_first_of(";=%: +<*") == llvm::StringRef::npos;
}

std::vector<std::string> DimRelation::symbols() const {
  std::vector<std::string> S;
  if (K == AtMost) {
    for (const auto &[Sym, Coef] : Terms)
      S.push_back(Sym);
    return S;
  }
  S.push_back(Lhs);
  if (K == Equal)
    S.push_back(Rhs);
  llvm::sort(S);
  return S;
}

DimRelation DimRelation::renamed(
    const std::function<std::string(const std::string &)> &NewName) const {
  DimRelation R = *this;
  if (K != AtMost) {
    R.Lhs = NewName(Lhs);
    if (K == Equal)
      R.Rhs = NewName(Rhs);
    return R;
  }
  std::map<std::string, int64_t> Merged;
  for (const auto &[Sym, Coef] : Terms)
    Merged[NewName(Sym)] += Coef;
  R.Terms.assign(Merged.begin(), Merged.end());
  return R;
}

bool DimRelation::holds(const std::map<std::string, int64_t> &Values) const {
  if (!isDecidedBy(Values))
    return false;
  if (K == AtMost) {
    int64_t Sum = 0;
    for (const auto &[Sym, Coef] : Terms) {
      int64_t Term;
      if (__builtin_mul_overflow(Coef, Values.at(Sym), &Term) ||
          __builtin_add_overflow(Sum, Term, &Sum))
        return false;
    }
    return Sum <= Bound;
  }
  int64_t L = Values.at(Lhs);
  if (K == Multiple)
    return Divisor > 0 && L % Divisor == 0;
  return L == Values.at(Rhs);
}

bool DimRelation::isDecidedBy(
    const std::map<std::string, int64_t> &Values) const {
  for (const std::string &S : symbols())
    if (!Values.count(S))
      return false;
  return true;
}

std::string
onnxopt::printDimRelationAt(const DimRelation &R,
                            const std::map<std::string, int64_t> &Values) {
  std::string Text = printDimRelation(R) + " (";
  bool First = true;
  // The relation's own order: Lhs then Rhs, or the terms.
  std::vector<std::string> Order =
      R.K == DimRelation::AtMost ? R.symbols()
                                 : std::vector<std::string>{R.Lhs};
  if (R.K == DimRelation::Equal)
    Order.push_back(R.Rhs);
  for (const std::string &S : Order) {
    auto It = Values.find(S);
    Text += (First ? "" : ", ") + S + "=" +
            (It == Values.end() ? "?" : std::to_string(It->second));
    First = false;
  }
  return Text + ")";
}

/// `past+seq<=64`, `2*H+W<=100`.
static bool parseBound(llvm::StringRef Text, DimRelation &R,
                       std::string &Error) {
  auto [Sum, Limit] = Text.split("<=");
  std::map<std::string, int64_t> Terms;
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  Sum.split(Parts, '+');
  for (llvm::StringRef Part : Parts) {
    Part = Part.trim();
    int64_t Coef = 1;
    if (Part.contains('*')) {
      auto [C, Sym] = Part.split('*');
      if (C.trim().getAsInteger(10, Coef) || Coef < 1)
        return false;
      Part = Sym.trim();
    }
    if (!isSymbolName(Part) || Part.contains('<') || Part.contains('*'))
      return false;
    Terms[Part.str()] += Coef;
  }
  if (Limit.trim().getAsInteger(10, R.Bound) || Terms.empty())
    return false;
  R.K = DimRelation::AtMost;
  R.Terms.assign(Terms.begin(), Terms.end());
  (void)Error;
  return true;
}

bool onnxopt::parseDimRelation(llvm::StringRef Text, DimRelation &Out,
                               std::string &Error) {
  Text = Text.trim();
  DimRelation R;
  if (Text.contains("<=")) {
    if (!parseBound(Text, R, Error)) {
      Error = "expected 'A+B<=n' (terms 'symbol' or 'k*symbol', k >= 1), "
              "got '" + Text.str() + "'";
      return false;
    }
    Out = R;
    return true;
  }
  auto [Left, Right] = Text.split('=');
  Left = Left.trim();
  Right = Right.trim();
  if (Left.contains('%')) {
    auto [Sym, Div] = Left.split('%');
    int64_t D;
    if (!isSymbolName(Sym.trim()) || Div.trim().getAsInteger(10, D) || D < 1 ||
        Right != "0") {
      Error = "expected 'symbol%k=0' with k >= 1, got '" + Text.str() + "'";
      return false;
    }
    R.K = DimRelation::Multiple;
    R.Lhs = Sym.trim().str();
    R.Divisor = D;
  } else {
    if (!isSymbolName(Left) || !isSymbolName(Right) || Left == Right) {
      Error = "expected 'A=B' (two symbols), 'A%k=0' or 'A+B<=n', got '" +
              Text.str() + "'";
      return false;
    }
    R.K = DimRelation::Equal;
    R.Lhs = Left.str();
    R.Rhs = Right.str();
  }
  Out = R;
  return true;
}

std::string onnxopt::printDimRelation(const DimRelation &R) {
  if (R.K == DimRelation::AtMost) {
    std::string S;
    for (const auto &[Sym, Coef] : R.Terms)
      S += (S.empty() ? "" : "+") +
           (Coef == 1 ? Sym : std::to_string(Coef) + "*" + Sym);
    return S + "<=" + std::to_string(R.Bound);
  }
  if (R.K == DimRelation::Multiple)
    return R.Lhs + "%" + std::to_string(R.Divisor) + "=0";
  return R.Lhs + "=" + R.Rhs;
}

/// Both parts of the stored text.
static bool parseStored(llvm::StringRef Text, DimRangeMap &Out,
                        DimRelations *Relations, std::string &Error) {
  llvm::SmallVector<llvm::StringRef, 8> Entries;
  Text.split(Entries, ';');
  llvm::StringRef Version = Entries.empty() ? "" : Entries[0].trim();
  if (Version != "v1" && Version != "v2") {
    Error = "unsupported dim range format (expected 'v1;...' or 'v2;...'), "
            "got '" +
            Text.str() + "'";
    return false;
  }
  DimRangeMap Ranges;
  DimRelations Rels;
  for (llvm::StringRef Entry : llvm::makeArrayRef(Entries).drop_front()) {
    if (Entry.trim().empty())
      continue;
    if (Version == "v2" && Entry.trim().startswith("rel:")) {
      DimRelation R;
      std::string Why;
      if (!parseDimRelation(Entry.trim().drop_front(4), R, Why)) {
        Error = "bad dim relation entry '" + Entry.str() + "': " + Why;
        return false;
      }
      Rels.push_back(R);
      continue;
    }
    auto [Name, RangeText] = Entry.rsplit('=');
    DimRange R;
    std::string Why;
    if (Name.empty() || RangeText.empty() ||
        !parseDimRange(RangeText, R, Why)) {
      Error = "bad dim range entry '" + Entry.str() + "'" +
              (Why.empty() ? "" : ": " + Why);
      return false;
    }
    Ranges[Name.str()] = R;
  }
  Out = std::move(Ranges);
  if (Relations)
    *Relations = std::move(Rels);
  return true;
}

bool onnxopt::parseDimRanges(llvm::StringRef Text, DimRangeMap &Out,
                             std::string &Error) {
  return parseStored(Text, Out, nullptr, Error);
}

static std::string printStored(const DimRangeMap &Ranges,
                               DimRelations Relations) {
  llvm::sort(Relations);
  Relations.erase(std::unique(Relations.begin(), Relations.end()),
                  Relations.end());
  // Version 1 while there are no relations: tools that read v1 keep
  // working.
  std::string S = Relations.empty() ? "v1" : "v2";
  for (const auto &[Name, R] : Ranges)
    S += ";" + Name + "=" + printDimRange(R);
  for (const DimRelation &R : Relations)
    S += ";rel:" + printDimRelation(R);
  return S;
}

std::string onnxopt::printDimRanges(const DimRangeMap &Ranges) {
  return printStored(Ranges, {});
}

static bool readStored(const Model &M, DimRangeMap &Ranges,
                       DimRelations &Relations, std::string &Error) {
  Ranges.clear();
  Relations.clear();
  std::optional<std::string> Text;
  if (!readMetadataProp(M, DimRangesKey, Text, Error))
    return false;
  return !Text || parseStored(*Text, Ranges, &Relations, Error);
}

static bool writeStored(Model &M, const DimRangeMap &Ranges,
                        const DimRelations &Relations, std::string &Error) {
  std::optional<std::string> Text;
  if (!Ranges.empty() || !Relations.empty())
    Text = printStored(Ranges, Relations);
  return writeMetadataProp(M, DimRangesKey, Text, Error);
}

bool onnxopt::getDimRelations(const Model &M, DimRelations &Out,
                              std::string &Error) {
  DimRangeMap Ranges;
  return readStored(M, Ranges, Out, Error);
}

bool onnxopt::setDimRelations(Model &M, const DimRelations &Relations,
                              std::string &Error) {
  DimRangeMap Ranges;
  DimRelations Old;
  return readStored(M, Ranges, Old, Error) &&
         writeStored(M, Ranges, Relations, Error);
}

bool onnxopt::getDimRanges(const Model &M, DimRangeMap &Out,
                           std::string &Error) {
  DimRelations Relations;
  return readStored(M, Out, Relations, Error);
}

bool onnxopt::setDimRanges(Model &M, const DimRangeMap &Ranges,
                           std::string &Error) {
  DimRangeMap Old;
  DimRelations Relations;
  return readStored(M, Old, Relations, Error) &&
         writeStored(M, Ranges, Relations, Error);
}
