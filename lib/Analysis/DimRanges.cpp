//===- DimRanges.cpp - Value ranges of symbolic dims ----------------------===//
//
// Reads and writes the ranges kept in the model's metadata_props. The model
// residual is the only place the IR keeps metadata_props, so both directions
// parse it into a ModelProto, touch the one key and serialize it back.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/IR/IR.h"
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
  if (K == AtLeast)
    return L >= Bound;
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
  std::vector<std::string> Order = R.K == DimRelation::AtMost
                                       ? R.symbols()
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
  if (Text.contains(">=")) {
    auto [Sym, Least] = Text.split(">=");
    Sym = Sym.trim();
    int64_t N;
    if (!isSymbolName(Sym) || Sym.contains('>') ||
        Least.trim().getAsInteger(10, N) || N < 0) {
      Error = "expected 'symbol>=n' with n >= 0, got '" + Text.str() + "'";
      return false;
    }
    Out = DimRelation::atLeast(Sym.str(), N);
    return true;
  }
  if (Text.contains("<=")) {
    if (!parseBound(Text, R, Error)) {
      Error = "expected 'A+B<=n' (terms 'symbol' or 'k*symbol', k >= 1), "
              "got '" +
              Text.str() + "'";
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
      Error =
          "expected 'A=B' (two symbols), 'A%k=0', 'A>=n' or 'A+B<=n', got '" +
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
  if (R.K == DimRelation::AtLeast)
    return R.Lhs + ">=" + std::to_string(R.Bound);
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

//===----------------------------------------------------------------------===//
// Gears
//===----------------------------------------------------------------------===//

/// Splits at \p Sep outside brackets.
static std::vector<llvm::StringRef> splitTopLevel(llvm::StringRef Text,
                                                  char Sep) {
  std::vector<llvm::StringRef> Parts;
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0, E = Text.size(); I <= E; ++I) {
    if (I < E) {
      char C = Text[I];
      Depth += C == '[' ? 1 : C == ']' ? -1 : 0;
      if (C != Sep || Depth > 0)
        continue;
    }
    Parts.push_back(Text.slice(Start, I).trim());
    Start = I + 1;
  }
  return Parts;
}

/// `x[1,3]`, `x:[1,3]` or `x:1x3`.
static bool parseGearShape(llvm::StringRef Text, GearShape &Out,
                           std::string &Error) {
  llvm::StringRef Name, Body;
  char Sep = ',';
  if (Text.endswith("]") && Text.contains('[')) {
    std::tie(Name, Body) = Text.drop_back().split('[');
    if (Name.endswith(":"))
      Name = Name.drop_back(); // polygraphy's `x:[1,3]`
  } else {
    std::tie(Name, Body) = Text.rsplit(':');
    if (Name == Text)
      Name = "";
    Sep = 'x';
  }
  if (Name.empty() || Body.contains('[') || Body.contains(']') ||
      Name.find_first_of("[],;") != llvm::StringRef::npos) {
    Error = "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got '" +
            Text.str() + "'";
    return false;
  }
  GearShape S;
  S.Input = Name.str();
  llvm::SmallVector<llvm::StringRef, 8> Dims;
  if (!Body.trim().empty())
    Body.split(Dims, Sep);
  for (llvm::StringRef D : Dims) {
    int64_t V;
    if (D.trim().getAsInteger(10, V) || V < 0) {
      Error = "gear shape '" + Text.str() + "' must give numbers, got '" +
              D.trim().str() + "'";
      return false;
    }
    S.Dims.push_back(V);
  }
  Out = std::move(S);
  return true;
}

bool onnxopt::parseDimGears(llvm::StringRef Text, DimGears &Out,
                            std::string &Error) {
  DimGears Gears;
  for (llvm::StringRef GearText : splitTopLevel(Text, ';')) {
    if (GearText.empty())
      continue;
    DimGear Gear;
    for (llvm::StringRef ShapeText : splitTopLevel(GearText, ',')) {
      GearShape S;
      if (!parseGearShape(ShapeText, S, Error))
        return false;
      Gear.push_back(std::move(S));
    }
    Gears.push_back(std::move(Gear));
  }
  if (Gears.empty()) {
    Error = "expected gears as 'x[1,3,640,640];x[4,3,320,320]', got '" +
            Text.str() + "'";
    return false;
  }
  Out = std::move(Gears);
  return true;
}

std::string onnxopt::printDimGear(const DimGear &Gear) {
  std::string S;
  for (const GearShape &Shape : Gear) {
    S += (S.empty() ? "" : ",") + Shape.Input + "[";
    for (size_t I = 0; I < Shape.Dims.size(); ++I)
      S += (I ? "," : "") + std::to_string(Shape.Dims[I]);
    S += "]";
  }
  return S;
}

std::string onnxopt::printDimGears(const DimGears &Gears) {
  std::string S;
  for (const DimGear &Gear : Gears)
    S += (S.empty() ? "" : ";") + printDimGear(Gear);
  return S;
}

bool onnxopt::getDimGears(const Model &M, DimGears &Out, std::string &Error) {
  Out.clear();
  std::optional<std::string> Text;
  if (!readMetadataProp(M, DimGearsKey, Text, Error))
    return false;
  if (!Text)
    return true;
  auto [Version, Body] = llvm::StringRef(*Text).split(';');
  if (Version.trim() != "v1") {
    Error =
        "unsupported dim gear format (expected 'v1;...'), got '" + *Text + "'";
    return false;
  }
  std::string Why;
  if (!parseDimGears(Body, Out, Why)) {
    Error = "bad stored dim gears '" + *Text + "': " + Why;
    return false;
  }
  return true;
}

bool onnxopt::setDimGears(Model &M, const DimGears &Gears, std::string &Error) {
  std::optional<std::string> Text;
  if (!Gears.empty())
    Text = "v1;" + printDimGears(Gears);
  return writeMetadataProp(M, DimGearsKey, Text, Error);
}

/// Where a symbol got its value first, for the error when a second shape
/// gives it another.
struct SymbolSource {
  int64_t Value;
  std::string Input;
  unsigned Dim;
};

/// One input's shape in a gear against its declared type.
static bool resolveGearShape(const Value &In, const GearShape &S,
                             const std::string &GearText,
                             std::map<std::string, SymbolSource> &Seen,
                             std::string &Error) {
  const Type &T = In.getType();
  std::string Where = "gear '" + GearText + "' ";
  if (!T.isTensor() || !T.hasShape()) {
    Error = Where + "gives input '" + S.Input +
            "' a shape, but its rank is unknown";
    return false;
  }
  if (T.getRank() != S.Dims.size()) {
    Error = Where + "gives input '" + S.Input + "' rank " +
            std::to_string(S.Dims.size()) + ", the model has rank " +
            std::to_string(T.getRank());
    return false;
  }
  for (unsigned I = 0; I < T.getRank(); ++I) {
    const Dim &D = T.getDims()[I];
    int64_t V = S.Dims[I];
    if (D.isKnown() && D.getValue() != V) {
      Error = Where + "gives dim " + std::to_string(I) + " of input '" +
              S.Input + "' the value " + std::to_string(V) +
              ", the model has " + std::to_string(D.getValue());
      return false;
    }
    if (!D.isSymbol())
      continue;
    auto [It, New] =
        Seen.try_emplace(D.getSymbol().str(), SymbolSource{V, S.Input, I});
    if (New || It->second.Value == V)
      continue;
    Error = Where + "gives '" + It->first +
            "' two values: " + std::to_string(It->second.Value) + " (dim " +
            std::to_string(It->second.Dim) + " of input '" + It->second.Input +
            "') and " + std::to_string(V) + " (dim " + std::to_string(I) +
            " of input '" + S.Input + "')";
    return false;
  }
  return true;
}

static bool isStatic(const Type &T) {
  return !T.isTensor() ||
         (T.hasShape() &&
          llvm::all_of(T.getDims(), [](const Dim &D) { return D.isKnown(); }));
}

bool onnxopt::resolveDimGear(const Model &M, const DimGear &Gear,
                             DimGear &Normalized,
                             std::map<std::string, int64_t> &Values,
                             std::string &Error) {
  std::string GearText = printDimGear(Gear);
  std::map<std::string, const GearShape *> ByInput;
  for (const GearShape &S : Gear)
    if (!ByInput.emplace(S.Input, &S).second) {
      Error =
          "gear '" + GearText + "' gives input '" + S.Input + "' two shapes";
      return false;
    }
  std::map<std::string, SymbolSource> Seen;
  DimGear Result;
  std::string Inputs;
  for (const std::unique_ptr<Value> &In : M.getGraph().getInputs()) {
    if (In->hasInitializer())
      continue;
    Inputs += (Inputs.empty() ? "" : ", ") + In->getName().str();
    auto It = ByInput.find(In->getName().str());
    if (It == ByInput.end()) {
      if (isStatic(In->getType()))
        continue;
      Error = "gear '" + GearText + "' gives no shape for input '" +
              In->getName().str() + "'";
      return false;
    }
    if (!resolveGearShape(*In, *It->second, GearText, Seen, Error))
      return false;
    if (!isStatic(In->getType()))
      Result.push_back(*It->second);
    ByInput.erase(It);
  }
  if (!ByInput.empty()) {
    Error = "gear '" + GearText + "' names '" + ByInput.begin()->first +
            "', which is not an input of the model (inputs: " + Inputs + ")";
    return false;
  }
  Values.clear();
  for (const auto &[Sym, Src] : Seen)
    Values[Sym] = Src.Value;
  Normalized = std::move(Result);
  return true;
}
