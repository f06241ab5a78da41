//===- TextImport.cpp - Reading ONNX text syntax --------------------------===//
//
// Parses ONNX text with onnx::OnnxParser (ONNX 1.12) into a ModelProto,
// decodes the names the printer had to encode (see printName in
// lib/Export/TextPrinter.cpp), fills in a default model header, and hands
// the proto to importModel. Parse errors become diagnostics with the line,
// the column and the offending source line.
//
//===----------------------------------------------------------------------===//
#include "ImportProto.h"
#include "onnxopt/IR/ElementType.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Import/Import.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include <map>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>
#include <stdexcept>

using namespace onnxopt;

/// The model header a bare graph gets.
static constexpr int64_t DefaultIrVersion = 8;
static constexpr int64_t DefaultOnnxOpset = 17;

//===----------------------------------------------------------------------===//
// Name decoding
//===----------------------------------------------------------------------===//

static bool isUpperHex(char C) {
  return llvm::isDigit(C) || (C >= 'A' && C <= 'F');
}

/// Inverse of the printer's name encoding: an identifier starting with "__"
/// stands for the rest of it, where `_xHH` is the byte 0xHH. Other
/// identifiers are themselves.
static void decodeName(std::string &Name) {
  llvm::StringRef S(Name);
  if (!S.startswith("__"))
    return;
  S = S.drop_front(2);
  std::string Out;
  Out.reserve(S.size());
  for (size_t I = 0, E = S.size(); I != E; ++I) {
    if (S[I] == '_' && I + 3 < E && S[I + 1] == 'x' && isUpperHex(S[I + 2]) &&
        isUpperHex(S[I + 3])) {
      Out.push_back(char(llvm::hexDigitValue(S[I + 2]) * 16 +
                         llvm::hexDigitValue(S[I + 3])));
      I += 3;
      continue;
    }
    Out.push_back(S[I]);
  }
  Name = std::move(Out);
}

template <typename RepeatedStrings>
static void decodeNames(RepeatedStrings &Names) {
  for (std::string &N : Names)
    decodeName(N);
}

/// Decodes each dot-separated component of a domain.
static void decodeDomain(std::string &Domain) {
  if (Domain.find("__") == std::string::npos)
    return;
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  llvm::StringRef(Domain).split(Parts, '.');
  std::string Out;
  for (size_t I = 0; I < Parts.size(); ++I) {
    std::string Part = Parts[I].str();
    decodeName(Part);
    if (I)
      Out += '.';
    Out += Part;
  }
  Domain = std::move(Out);
}

static void decodeType(onnx::TypeProto &T) {
  auto DecodeShape = [](onnx::TensorShapeProto &S) {
    for (auto &D : *S.mutable_dim())
      if (D.has_dim_param())
        decodeName(*D.mutable_dim_param());
  };
  switch (T.value_case()) {
  case onnx::TypeProto::kTensorType:
    if (T.tensor_type().has_shape())
      DecodeShape(*T.mutable_tensor_type()->mutable_shape());
    break;
  case onnx::TypeProto::kSparseTensorType:
    if (T.sparse_tensor_type().has_shape())
      DecodeShape(*T.mutable_sparse_tensor_type()->mutable_shape());
    break;
  case onnx::TypeProto::kSequenceType:
    decodeType(*T.mutable_sequence_type()->mutable_elem_type());
    break;
  case onnx::TypeProto::kOptionalType:
    decodeType(*T.mutable_optional_type()->mutable_elem_type());
    break;
  case onnx::TypeProto::kMapType:
    decodeType(*T.mutable_map_type()->mutable_value_type());
    break;
  default:
    break;
  }
}

static void decodeValueInfo(onnx::ValueInfoProto &VI) {
  decodeName(*VI.mutable_name());
  if (VI.has_type())
    decodeType(*VI.mutable_type());
}

static void decodeGraph(onnx::GraphProto &G);

static void decodeNode(onnx::NodeProto &N) {
  decodeNames(*N.mutable_input());
  decodeNames(*N.mutable_output());
  decodeName(*N.mutable_op_type());
  decodeDomain(*N.mutable_domain());
  // The parser always sets a domain; text cannot tell "" from no domain.
  if (N.domain().empty())
    N.clear_domain();
  for (auto &A : *N.mutable_attribute()) {
    decodeName(*A.mutable_name());
    if (!A.ref_attr_name().empty())
      decodeName(*A.mutable_ref_attr_name());
    if (A.has_t()) {
      decodeName(*A.mutable_t()->mutable_name());
      if (A.t().name().empty())
        A.mutable_t()->clear_name();
    }
    if (A.has_g())
      decodeGraph(*A.mutable_g());
    for (auto &Sub : *A.mutable_graphs())
      decodeGraph(Sub);
  }
}

static void decodeGraph(onnx::GraphProto &G) {
  decodeName(*G.mutable_name());
  if (G.name().empty())
    G.clear_name();
  for (auto &VI : *G.mutable_input())
    decodeValueInfo(VI);
  for (auto &VI : *G.mutable_output())
    decodeValueInfo(VI);
  for (auto &VI : *G.mutable_value_info())
    decodeValueInfo(VI);
  for (auto &T : *G.mutable_initializer())
    decodeName(*T.mutable_name());
  for (auto &N : *G.mutable_node())
    decodeNode(N);
}

static void decodeModel(onnx::ModelProto &M) {
  decodeGraph(*M.mutable_graph());
  for (auto &F : *M.mutable_functions()) {
    decodeName(*F.mutable_name());
    decodeNames(*F.mutable_input());
    decodeNames(*F.mutable_output());
    decodeNames(*F.mutable_attribute());
    for (auto &N : *F.mutable_node())
      decodeNode(N);
  }
}

//===----------------------------------------------------------------------===//
// Element types newer than ONNX 1.12
//===----------------------------------------------------------------------===//
//
// OnnxParser 1.12 knows the element types up to bfloat16. Before parsing,
// each newer type keyword (float8e4m3fn, ..., int4, uint4, float4e2m1) in a
// type position is replaced by a 1.12 keyword of at most the same length,
// padded with spaces so that columns in parse errors stay true. What it
// stood for is remembered by the name that follows the type (graph inputs,
// outputs, value_info, initializers) or, for tensor literals in attributes,
// by the literal's position among all attribute tensor literals, which the
// parser appends in text order. After parsing, the real types are put back
// and tensor data is packed into raw_data as ONNX stores these types.

namespace {
struct ModernTypeUses {
  /// Encoded value name -> element type.
  std::map<std::string, int32_t> ByName;
  /// Index among attribute tensor literals -> element type.
  std::map<size_t, int32_t> ByLiteral;
  bool empty() const { return ByName.empty() && ByLiteral.empty(); }
};
} // namespace

static bool isTypeName(llvm::StringRef S) {
  return getElementTypeFromName(S) != ElementType::Undefined;
}

static void rewriteModernTypes(std::string &Text, ModernTypeUses &Uses) {
  size_t Literal = 0;
  size_t I = 0, E = Text.size();
  auto SkipSpace = [&](size_t P) {
    while (P < E) {
      if (Text[P] == '#') {
        while (P < E && Text[P] != '\n')
          ++P;
      } else if (llvm::isSpace(Text[P])) {
        ++P;
      } else {
        break;
      }
    }
    return P;
  };
  auto IsIdent = [](char C) { return llvm::isAlnum(C) || C == '_'; };
  while (I < E) {
    char C = Text[I];
    if (C == '#') {
      while (I < E && Text[I] != '\n')
        ++I;
      continue;
    }
    if (C == '"') {
      for (++I; I < E && Text[I] != '"'; ++I)
        if (Text[I] == '\\')
          ++I;
      ++I;
      continue;
    }
    if (!llvm::isAlpha(C) && C != '_') {
      ++I;
      continue;
    }
    size_t Start = I;
    while (I < E && IsIdent(Text[I]))
      ++I;
    llvm::StringRef Word(Text.data() + Start, I - Start);
    if (!isTypeName(Word))
      continue;
    // A type is followed by dims, a name or a literal; a value that happens
    // to be called like a type is followed by ',', ')' or '='.
    size_t P = SkipSpace(I);
    if (P < E && Text[P] == '[') {
      while (P < E && Text[P] != ']')
        ++P;
      P = SkipSpace(P + 1);
    }
    bool IsLiteral = P < E && Text[P] == '{';
    bool HasName = P < E && (llvm::isAlpha(Text[P]) || Text[P] == '_');
    if (!IsLiteral && !HasName)
      continue;
    // An attribute tensor may carry a name before its values
    // (`int4[3] g {...}`): still a literal, counted as one.
    size_t NameEnd = P;
    while (HasName && NameEnd < E && IsIdent(Text[NameEnd]))
      ++NameEnd;
    if (HasName && SkipSpace(NameEnd) < E && Text[SkipSpace(NameEnd)] == '{')
      IsLiteral = true;
    size_t Index = IsLiteral ? Literal++ : 0;
    int32_t Code = static_cast<int32_t>(getElementTypeFromName(Word));
    if (isOnnx112ElementType(Code))
      continue;
    if (IsLiteral)
      Uses.ByLiteral[Index] = Code;
    else
      Uses.ByName[Text.substr(P, NameEnd - P)] = Code;
    std::string Stand = Word.size() >= 5 ? "uint8" : "int8";
    Stand.resize(Word.size(), ' ');
    Text.replace(Start, Word.size(), Stand);
  }
}

/// Packs the literal values the parser put in int32_data into raw_data.
static void packModernTensor(onnx::TensorProto &T, int32_t Code) {
  T.set_data_type(Code);
  if (T.int32_data_size() == 0)
    return;
  std::string Raw;
  bool Nibbles = getElementTypeBits(static_cast<ElementType>(Code)) == 4;
  for (int I = 0; I < T.int32_data_size(); ++I) {
    unsigned V = static_cast<unsigned>(T.int32_data(I));
    if (!Nibbles)
      Raw.push_back(static_cast<char>(V & 0xFF));
    else if (I % 2 == 0)
      Raw.push_back(static_cast<char>(V & 0xF));
    else
      Raw.back() = static_cast<char>(Raw.back() | ((V & 0xF) << 4));
  }
  T.clear_int32_data();
  T.set_raw_data(Raw);
}

static void restoreType(onnx::TypeProto &T, int32_t Code) {
  if (T.has_tensor_type())
    T.mutable_tensor_type()->set_elem_type(Code);
  else if (T.has_sparse_tensor_type())
    T.mutable_sparse_tensor_type()->set_elem_type(Code);
}

static void restoreModernTypes(onnx::GraphProto &G, const ModernTypeUses &Uses,
                               size_t &Literal) {
  auto ByName = [&](const std::string &Name) -> int32_t {
    auto It = Uses.ByName.find(Name);
    return It == Uses.ByName.end() ? 0 : It->second;
  };
  for (auto *List :
       {G.mutable_input(), G.mutable_output(), G.mutable_value_info()})
    for (onnx::ValueInfoProto &VI : *List)
      if (int32_t Code = ByName(VI.name()))
        restoreType(*VI.mutable_type(), Code);
  for (onnx::TensorProto &T : *G.mutable_initializer())
    if (int32_t Code = ByName(T.name()))
      packModernTensor(T, Code);
  for (onnx::NodeProto &N : *G.mutable_node())
    for (onnx::AttributeProto &A : *N.mutable_attribute()) {
      if (A.has_t()) {
        auto It = Uses.ByLiteral.find(Literal++);
        if (It != Uses.ByLiteral.end())
          packModernTensor(*A.mutable_t(), It->second);
      }
      if (A.has_g())
        restoreModernTypes(*A.mutable_g(), Uses, Literal);
      for (onnx::GraphProto &Sub : *A.mutable_graphs())
        restoreModernTypes(Sub, Uses, Literal);
    }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {
/// A parse error split into its parts.
struct ParseError {
  unsigned Line = 0, Column = 0;
  std::string Message;
};
} // namespace

/// Reads "(line: L column: C)" as produced by ParserBase::GetCurrentPos.
static void readPosition(llvm::StringRef Pos, ParseError &E) {
  size_t L = Pos.find("line: ");
  size_t C = Pos.find("column: ");
  if (L != llvm::StringRef::npos)
    Pos.substr(L + 6).consumeInteger(10, E.Line);
  if (C != llvm::StringRef::npos)
    Pos.substr(C + 8).consumeInteger(10, E.Column);
}

/// Splits OnnxParser's "[ParseError at position (line: L column: C)]\n
/// Error context: ...\nMessage" and rewords the message in our style.
static ParseError splitParseError(llvm::StringRef Raw) {
  ParseError E;
  llvm::StringRef Header, Rest;
  std::tie(Header, Rest) = Raw.split('\n');
  readPosition(Header, E);
  if (Rest.startswith("Error context:"))
    Rest = Rest.split('\n').second;
  llvm::StringRef Msg = Rest.trim().rtrim('.');
  if (Msg.empty())
    Msg = Raw.trim().rtrim('.');
  // "Expected character = not found" reads better as "expected '='".
  if (Msg.startswith("Expected character ") && Msg.endswith(" not found") &&
      Msg.size() == strlen("Expected character X not found")) {
    E.Message = "expected '" + Msg.substr(19, 1).str() + "'";
    return E;
  }
  E.Message = Msg.str();
  if (!E.Message.empty())
    E.Message[0] = llvm::toLower(E.Message[0]);
  return E;
}

/// The source line \p Line (1-based) of \p Text.
static llvm::StringRef sourceLine(llvm::StringRef Text, unsigned Line) {
  for (unsigned I = 1; I < Line && !Text.empty(); ++I)
    Text = Text.split('\n').second;
  return Text.split('\n').first.rtrim('\r');
}

static void emitParseError(DiagnosticEngine &Diags, llvm::StringRef Text,
                           const ParseError &E) {
  auto Diag = emitError(Diags);
  Diag << "cannot parse ONNX text: ";
  if (E.Line)
    Diag << "line " << E.Line << ", column " << E.Column << ": ";
  Diag << E.Message;
  llvm::StringRef Src = E.Line ? sourceLine(Text, E.Line) : "";
  if (Src.trim().empty())
    return;
  std::string Caret(E.Column ? E.Column - 1 : 0, ' ');
  for (size_t I = 0; I < Caret.size() && I < Src.size(); ++I)
    if (Src[I] == '\t')
      Caret[I] = '\t';
  Diag << "\n  " << Src << "\n  " << Caret << '^';
}

/// Describes a literal std::stoll/stof/stod threw on. The parser stands
/// after the literal; the error points at its start.
static ParseError literalError(llvm::StringRef Text, ParseError E,
                               bool OutOfRange) {
  size_t LineStart = 0;
  for (unsigned I = 1; I < E.Line && LineStart != llvm::StringRef::npos; ++I)
    LineStart = Text.find('\n', LineStart) + 1;
  size_t Pos = std::min(Text.size(), LineStart + (E.Column ? E.Column - 1 : 0));
  auto IsLiteralChar = [](char C) {
    return llvm::isDigit(C) || C == '.' || C == '-' || C == '+' || C == 'e' ||
           C == 'E';
  };
  while (Pos > LineStart && IsLiteralChar(Text[Pos - 1]))
    --Pos;
  E.Column = unsigned(Pos - LineStart + 1);
  // lower() returns a std::string: keep it alive while comparing.
  std::string After = Text.substr(Pos).ltrim('-').take_front(3).lower();
  if (After == "inf" || After == "nan")
    E.Message = "inf and nan have no ONNX 1.12 text form";
  else
    E.Message = OutOfRange ? "number out of range" : "invalid number";
  return E;
}

/// The deepest nesting of brackets (`{`, `(`, `[`) in \p Text outside
/// comments and strings, and the line where it is first reached.
static unsigned maxNesting(llvm::StringRef Text, unsigned &AtLine) {
  unsigned Depth = 0, Max = 0, Line = 1;
  AtLine = 0;
  for (size_t I = 0, E = Text.size(); I < E; ++I) {
    char C = Text[I];
    if (C == '\n') {
      ++Line;
    } else if (C == '#') {
      while (I + 1 < E && Text[I + 1] != '\n')
        ++I;
    } else if (C == '"') {
      for (++I; I < E && Text[I] != '"'; ++I) {
        if (Text[I] == '\\')
          ++I;
        else if (Text[I] == '\n')
          ++Line;
      }
    } else if (C == '{' || C == '(' || C == '[') {
      if (++Depth > Max) {
        Max = Depth;
        AtLine = Line;
      }
    } else if ((C == '}' || C == ')' || C == ']') && Depth) {
      --Depth;
    }
  }
  return Max;
}

/// True when \p Text holds nothing but blanks and `#` comments.
static bool isBlank(llvm::StringRef Text) {
  while (!Text.empty()) {
    llvm::StringRef Line;
    std::tie(Line, Text) = Text.split('\n');
    Line = Line.ltrim();
    if (!Line.empty() && !Line.startswith("#"))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

std::unique_ptr<Model> onnxopt::parseTextModel(llvm::StringRef Text,
                                               DiagnosticEngine &Diags) {
  if (isBlank(Text)) {
    emitError(Diags) << "cannot parse ONNX text: the input is empty";
    return nullptr;
  }
  // OnnxParser is recursive: refuse what would exhaust the stack. A nested
  // graph takes one `{`; a few more are open around it for a moment.
  unsigned DeepLine;
  constexpr unsigned MaxTextNesting = MaxSubgraphDepth + 16;
  if (maxNesting(Text, DeepLine) > MaxTextNesting) {
    emitError(Diags) << "cannot parse ONNX text: line " << DeepLine
                     << ": brackets are nested more than " << MaxTextNesting
                     << " deep (subgraphs may nest " << MaxSubgraphDepth
                     << " deep)";
    return nullptr;
  }
  // OnnxParser reads a NUL-terminated buffer.
  std::string Buffer = Text.str();
  ModernTypeUses Modern;
  rewriteModernTypes(Buffer, Modern);
  onnx::ModelProto Proto;
  onnx::OnnxParser Parser(Buffer.c_str());
  try {
    onnx::Common::Status S = Parser.Parse(Proto);
    if (!S.IsOK()) {
      emitParseError(Diags, Text, splitParseError(S.ErrorMessage()));
      return nullptr;
    }
  } catch (const std::exception &Ex) {
    // std::stoll/stof/stod throw on literals they cannot represent.
    ParseError E;
    readPosition(Parser.GetCurrentPos(), E);
    emitParseError(
        Diags, Text,
        literalError(Text, E, dynamic_cast<const std::out_of_range *>(&Ex)));
    return nullptr;
  } catch (...) {
    emitError(Diags) << "cannot parse ONNX text: the parser failed";
    return nullptr;
  }

  if (!Modern.empty()) {
    size_t Literal = 0;
    restoreModernTypes(*Proto.mutable_graph(), Modern, Literal);
  }
  decodeModel(Proto);
  // A bare graph (no `<...>` header) gets a default header.
  bool Bare = !Proto.has_ir_version() && Proto.opset_import_size() == 0;
  if (!Proto.has_ir_version())
    Proto.set_ir_version(DefaultIrVersion);
  if (Bare) {
    auto *Opset = Proto.add_opset_import();
    Opset->set_domain("");
    Opset->set_version(DefaultOnnxOpset);
  }
  return importModel(std::move(Proto), "", Diags);
}
