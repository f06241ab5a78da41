//===- TextPrinter.cpp - Printing models in ONNX text syntax --------------===//
//
// Prints a model in the ONNX text syntax that onnx::OnnxParser of ONNX 1.12
// reads back. The printer walks the IR; model-local functions and other
// parts the IR carries as serialized protos are printed from the protos.
//
// ONNX 1.12's grammar is narrow: identifiers are [A-Za-z_][A-Za-z0-9_]*,
// strings have no escapes, literals have no inf/nan, lists cannot be empty
// and a node input list cannot start with an omitted input. Names that are
// not plain identifiers are therefore encoded into identifiers (see
// printName) and parseTextModel decodes them; what has no syntax at all is
// left out or approximated, and a `# note:` comment above the statement says
// so. docs/text-format.md lists both.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DerivedDims.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/Export/TextPrintOptions.h"
#include "onnxopt/IR/IR.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <onnx/onnx_pb.h>
#include <type_traits>

#include "onnxopt/IR/ElementType.h"

using namespace onnxopt;

namespace {

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

/// Element type names, indexed by onnx::TensorProto_DataType. OnnxParser
/// 1.12 knows 1 = float ... 16 = bfloat16; the newer ones (float8, int4,
/// uint4, float4e2m1) are spelled as newer ONNX spells them, and our text
/// importer reads them (see lib/Import/TextImport.cpp).
llvm::StringRef typeName(int32_t ElemType) {
  return getElementTypeName(static_cast<ElementType>(ElemType));
}

bool isTypeKeyword(llvm::StringRef S) {
  return getElementTypeFromName(S) != ElementType::Undefined;
}

bool isIdentStart(char C) { return llvm::isAlpha(C) || C == '_'; }
bool isIdentChar(char C) { return llvm::isAlnum(C) || C == '_'; }
bool isUpperHex(char C) { return llvm::isDigit(C) || (C >= 'A' && C <= 'F'); }

/// True when \p S can be printed as is: an identifier that does not start
/// with the encoding prefix "__" and is not an element type name (a type
/// name where a value-info is expected reads as a type).
bool isPlainName(llvm::StringRef S) {
  if (S.empty() || !isIdentStart(S[0]) || S.startswith("__"))
    return false;
  return llvm::all_of(S, isIdentChar) && !isTypeKeyword(S);
}

/// Prints \p S as an identifier. A name that is not plain is printed as
/// "__" followed by its bytes, where bytes that are not letters, digits or
/// '_' become `_xHH` (two upper-case hex digits). A '_' that would read as
/// the start of such an escape is itself escaped (`_x5F`), so decoding is
/// exact: `input.1` -> `__input_x2E1`, `onnx::Conv_3` ->
/// `__onnx_x3A_x3AConv_3`, `0` -> `__0`, "" -> `__`.
void printName(llvm::raw_ostream &OS, llvm::StringRef S) {
  if (isPlainName(S)) {
    OS << S;
    return;
  }
  OS << "__";
  for (size_t I = 0, E = S.size(); I != E; ++I) {
    char C = S[I];
    bool LooksLikeEscape = C == '_' && I + 3 < E && S[I + 1] == 'x' &&
                           isUpperHex(S[I + 2]) && isUpperHex(S[I + 3]);
    if (llvm::isAlnum(C) || (C == '_' && !LooksLikeEscape)) {
      OS << C;
      continue;
    }
    OS << "_x" << llvm::hexdigit((unsigned char)C >> 4)
       << llvm::hexdigit((unsigned char)C & 15);
  }
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// Writes the shortest decimal form of \p V that \p Parse maps back to the
/// same bits, trying \p MinDigits..\p MaxDigits significant digits. The
/// literal always has a '.' or an exponent: ONNX 1.12 types attribute
/// values by their literals, and "2" would be an int.
template <typename T, typename ParseFn>
void formatReal(llvm::SmallVectorImpl<char> &Out, T V, int MinDigits,
                int MaxDigits, ParseFn Parse) {
  char Buf[64];
  for (int Digits = MinDigits; Digits <= MaxDigits; ++Digits) {
    snprintf(Buf, sizeof(Buf), "%.*g", Digits, double(V));
    T Back = Parse(Buf);
    if (std::memcmp(&Back, &V, sizeof(T)) == 0)
      break;
  }
  llvm::StringRef S(Buf);
  Out.assign(S.begin(), S.end());
  if (S.find_first_of(".e") == llvm::StringRef::npos)
    Out.append({'.', '0'});
}

/// True when std::stof/std::stod (what OnnxParser uses) reads a literal for
/// \p V: they reject inf and nan (no syntax) and throw on subnormals.
template <typename T> bool isReadable(T V) {
  return std::isfinite(V) && std::fpclassify(V) != FP_SUBNORMAL;
}

//===----------------------------------------------------------------------===//
// The printer
//===----------------------------------------------------------------------===//

class TextPrinter {
public:
  explicit TextPrinter(llvm::raw_ostream &OS, const TextPrintOptions &Opts = {})
      : OS(&OS), Opts(Opts) {}

  void printModel(const Model &M);

private:
  llvm::raw_ostream *OS;
  TextPrintOptions Opts;
  unsigned Indent = 0;
  /// Notes about values the current statement could not print exactly.
  std::vector<std::string> Notes;
  /// Counts of metadata with no text form (node names, doc strings...),
  /// summarized at the end.
  std::map<std::string, unsigned> Omitted;

  void indent() { OS->indent(Indent * 3); }
  void note(const llvm::Twine &Msg) {
    std::string S = Msg.str();
    if (!llvm::is_contained(Notes, S))
      Notes.push_back(std::move(S));
  }
  void omit(llvm::StringRef What) { ++Omitted[What.str()]; }
  /// `# boxes_dim1 = 2*ceil(height/8)*...` for each derived dim that
  /// unify-dims recorded, so that a reader sees what a short name stands for.
  void printDerivedDimComments(const onnx::ModelProto &Rest);
  /// Counts what a residual proto carries that text cannot (doc strings,
  /// fields unknown to ONNX 1.12).
  template <typename ProtoT> void omitResidual(const std::string &Bytes);
  /// Prints a statement (a node, a graph header) into a buffer so that the
  /// notes it raises can be written as comments above it.
  void statement(const std::function<void()> &Body);

  // Leaves.
  void printString(llvm::StringRef S);
  /// Prints a float or double literal that reads back exactly.
  template <typename T> void printReal(T V);
  void printFloat(float F) { printReal(F); }
  void printDouble(double D) { printReal(D); }
  void printDims(llvm::ArrayRef<int64_t> Dims);
  /// Prints `elemtype[dims] name {data}` or, with \p Name null, without the
  /// name (attribute values). \p Handle gives access to external bytes.
  void printTensor(const onnx::TensorProto &T, const Tensor *Handle,
                   const std::string *Name, bool WithEquals);
  void printTensorData(const onnx::TensorProto &T, const Tensor *Handle);
  void printNarrowTensorData(const onnx::TensorProto &T, const Tensor *Handle);

  // IR.
  /// Prints the type of \p V followed by its name, as in a value-info.
  void printValueInfo(const Value &V);
  void printType(const Type &T, llvm::StringRef What);
  /// Prints `name (inputs) => (outputs)`.
  void printGraphSignature(const Graph &G);
  /// Prints the `<initializers, value-infos>` section, if any, and `{`.
  void printGraphEntries(const Graph &G);
  void printGraphHeader(const Graph &G) {
    printGraphSignature(G);
    printGraphEntries(G);
  }
  /// Prints the nodes and the closing brace.
  void printGraphBody(const Graph &G);
  void printGraph(const Graph &G) {
    printGraphHeader(G);
    printGraphBody(G);
  }
  void printNode(const Node &N);
  void printAttribute(const Attribute &A, bool &First);

  // Protos (functions and carried parts).
  void printTypeProto(const onnx::TypeProto &T, llvm::StringRef What);
  void printValueInfoProto(const onnx::ValueInfoProto &VI);
  void printGraphProto(const onnx::GraphProto &G);
  void printNodeProto(const onnx::NodeProto &N);
  void printAttributeProto(const onnx::AttributeProto &A, bool &First);
  void printFunction(const onnx::FunctionProto &F);

  // Shared node pieces.
  void printNameList(llvm::ArrayRef<std::string> Names);
  void printOpName(llvm::StringRef Domain, llvm::StringRef OpType);
  template <typename T>
  void printList(llvm::ArrayRef<T> Items,
                 const std::function<void(const T &)> &PrintItem);
};

} // namespace

void TextPrinter::statement(const std::function<void()> &Body) {
  std::string Buffer;
  llvm::raw_string_ostream BufferOS(Buffer);
  llvm::raw_ostream *Saved = OS;
  std::vector<std::string> SavedNotes = std::move(Notes);
  Notes.clear();
  OS = &BufferOS;
  Body();
  BufferOS.flush();
  OS = Saved;
  for (const std::string &N : Notes) {
    indent();
    // A note is one comment line: newlines in it would end the comment.
    std::string Line = N;
    std::replace(Line.begin(), Line.end(), '\n', ' ');
    *OS << "# note: " << Line << "\n";
  }
  *OS << Buffer;
  Notes = std::move(SavedNotes);
}

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

void TextPrinter::printString(llvm::StringRef S) {
  // ONNX 1.12 strings end at the next '"' and have no escapes.
  if (S.contains('"')) {
    std::string Copy = S.str();
    std::replace(Copy.begin(), Copy.end(), '"', '\'');
    note("a string containing '\"' is printed with ' in its place (ONNX 1.12 "
         "strings have no escapes)");
    *OS << '"' << Copy << '"';
    return;
  }
  *OS << '"' << S << '"';
}

template <typename T> void TextPrinter::printReal(T V) {
  constexpr bool IsFloat = std::is_same_v<T, float>;
  if (!isReadable(V)) {
    // Approximate with the nearest value ONNX 1.12 can read.
    note(llvm::Twine(IsFloat ? "float" : "double") + " value " +
         (std::isnan(V)   ? "nan"
          : std::isinf(V) ? (V > 0 ? "inf" : "-inf")
                          : "(subnormal)") +
         " has no ONNX 1.12 text form and is approximated");
    if (std::isnan(V))
      V = 0;
    else if (std::isinf(V))
      V = V > 0 ? std::numeric_limits<T>::max()
                : std::numeric_limits<T>::lowest();
    else
      V = std::signbit(V) ? T(-0.0) : T(0.0);
  }
  llvm::SmallString<32> S;
  if constexpr (IsFloat)
    formatReal(S, V, 6, 9,
               [](const char *B) { return std::strtof(B, nullptr); });
  else
    formatReal(S, V, 15, 17,
               [](const char *B) { return std::strtod(B, nullptr); });
  *OS << S;
}

void TextPrinter::printDims(llvm::ArrayRef<int64_t> Dims) {
  if (Dims.empty())
    return;
  *OS << '[';
  llvm::interleave(
      Dims, *OS, [&](int64_t D) { *OS << D; }, ",");
  *OS << ']';
}

template <typename T>
void TextPrinter::printList(llvm::ArrayRef<T> Items,
                            const std::function<void(const T &)> &PrintItem) {
  *OS << '[';
  for (size_t I = 0; I < Items.size(); ++I) {
    if (I)
      *OS << ", ";
    PrintItem(Items[I]);
  }
  *OS << ']';
}

void TextPrinter::printTensor(const onnx::TensorProto &T, const Tensor *Handle,
                              const std::string *Name, bool WithEquals) {
  llvm::StringRef TypeName = typeName(T.data_type());
  if (TypeName.empty()) {
    note("tensor of element type " + llvm::Twine(T.data_type()) +
         " has no ONNX 1.12 text form; printed as an empty float tensor");
    TypeName = "float";
  }
  std::vector<int64_t> Dims(T.dims().begin(), T.dims().end());
  bool Elide = false;
  if (Opts.ElideTensorsAbove && !typeName(T.data_type()).empty()) {
    uint64_t Elements = 1;
    for (int64_t D : Dims)
      Elements *= uint64_t(std::max<int64_t>(D, 0));
    Elide = Elements > Opts.ElideTensorsAbove;
  }
  // An elided attribute tensor is `<float[3,8] ...>`; an initializer keeps
  // its `float[4,8] name = ` and gets `<...>`.
  if (Elide && !Name) {
    *OS << '<' << TypeName;
    printDims(Dims);
    *OS << " ...>";
    return;
  }
  *OS << TypeName;
  printDims(Dims);
  if (Name) {
    *OS << ' ';
    printName(*OS, *Name);
  }
  *OS << (WithEquals ? " = " : " ");
  if (typeName(T.data_type()).empty()) {
    *OS << "{}";
    return;
  }
  if (Elide) {
    *OS << "<...>";
    return;
  }
  printTensorData(T, Handle);
}

/// Calls \p F on each element: read as little-endian \p RawT from \p Raw
/// when the tensor has raw bytes, else from its typed field.
template <typename RawT, typename FieldT, typename FnT>
static void forEachElement(std::optional<llvm::StringRef> Raw,
                           const FieldT &Typed, FnT F) {
  if (!Raw) {
    for (const auto &V : Typed)
      F(V);
    return;
  }
  for (size_t I = 0, E = Raw->size() / sizeof(RawT); I < E; ++I) {
    RawT V;
    std::memcpy(&V, Raw->data() + I * sizeof(RawT), sizeof(RawT));
    F(V);
  }
}

/// float8 tensors print one byte value per element; int4, uint4 and
/// float4e2m1 one 4-bit value per element (int4 signed), unpacked from the
/// two-per-byte storage. The importer packs them back into raw_data.
void TextPrinter::printNarrowTensorData(const onnx::TensorProto &T,
                                        const Tensor *Handle) {
  int32_t ElemType = T.data_type();
  int64_t Count = 1;
  for (int64_t D : T.dims())
    Count *= D;
  std::string Bytes;
  if (T.has_raw_data()) {
    Bytes = T.raw_data();
  } else if (T.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string Storage;
    std::optional<llvm::StringRef> Raw;
    if (Handle)
      Raw = Handle->getRawBytes(Storage);
    if (!Raw) {
      note("external tensor data could not be read and is left out");
      *OS << "{}";
      return;
    }
    Bytes = Raw->str();
  } else {
    // Typed storage: one int32 per byte (two 4-bit values for int4, uint4
    // and float4e2m1).
    for (int32_t V : T.int32_data())
      Bytes.push_back(static_cast<char>(V & 0xFF));
  }
  bool Nibbles = getElementTypeBits(static_cast<ElementType>(ElemType)) == 4;
  *OS << '{';
  for (int64_t I = 0; I < Count; ++I) {
    size_t Byte = Nibbles ? size_t(I / 2) : size_t(I);
    if (Byte >= Bytes.size())
      break;
    if (I)
      *OS << ", ";
    unsigned V = static_cast<unsigned char>(Bytes[Byte]);
    if (!Nibbles) {
      *OS << V;
      continue;
    }
    V = (I % 2 ? V >> 4 : V) & 0xF;
    if (ElemType == static_cast<int32_t>(ElementType::Int4) && V >= 8)
      *OS << int(V) - 16;
    else
      *OS << V;
  }
  *OS << '}';
}

void TextPrinter::printTensorData(const onnx::TensorProto &T,
                                  const Tensor *Handle) {
  using onnx::TensorProto;
  int32_t ElemType = T.data_type();
  if (ElemType == TensorProto::STRING) {
    std::vector<std::string> Strs(T.string_data().begin(),
                                  T.string_data().end());
    *OS << '{';
    llvm::interleave(
        Strs, *OS, [&](const std::string &S) { printString(S); }, ", ");
    *OS << '}';
    return;
  }
  if (ElemType == TensorProto::FLOAT16 || ElemType == TensorProto::BFLOAT16 ||
      ElemType == TensorProto::COMPLEX64 ||
      ElemType == TensorProto::COMPLEX128) {
    note("the data of a " + typeName(ElemType) +
         " tensor has no ONNX 1.12 text form and is left out");
    *OS << "{}";
    return;
  }

  if (isPostOnnx112ElementType(ElemType)) {
    printNarrowTensorData(T, Handle);
    return;
  }

  // Raw bytes (inline or external) take precedence over typed fields, as in
  // ONNX itself.
  std::string Storage;
  llvm::StringRef Raw;
  bool HasRaw = false;
  if (T.has_raw_data()) {
    Raw = T.raw_data();
    HasRaw = true;
  } else if (T.data_location() == TensorProto::EXTERNAL) {
    std::optional<llvm::StringRef> Bytes;
    if (Handle)
      Bytes = Handle->getRawBytes(Storage);
    if (!Bytes) {
      note("external tensor data could not be read and is left out");
      *OS << "{}";
      return;
    }
    Raw = *Bytes;
    HasRaw = true;
  }

  std::optional<llvm::StringRef> Bytes;
  if (HasRaw)
    Bytes = Raw;
  size_t Count = 0;
  auto Sep = [&]() {
    if (Count++)
      *OS << ", ";
  };
  auto Int = [&](auto V) { Sep(), *OS << int64_t(V); };
  auto UInt = [&](auto V) { Sep(), *OS << uint64_t(V); };
  *OS << '{';
  switch (ElemType) {
  case TensorProto::FLOAT:
    forEachElement<float>(Bytes, T.float_data(),
                          [&](float V) { Sep(), printFloat(V); });
    break;
  case TensorProto::DOUBLE:
    forEachElement<double>(Bytes, T.double_data(),
                           [&](double V) { Sep(), printDouble(V); });
    break;
  case TensorProto::INT64:
    forEachElement<int64_t>(Bytes, T.int64_data(), Int);
    break;
  case TensorProto::UINT32:
    forEachElement<uint32_t>(Bytes, T.uint64_data(), UInt);
    break;
  case TensorProto::UINT64:
    forEachElement<uint64_t>(Bytes, T.uint64_data(), UInt);
    break;
  // The narrow types live in int32_data when typed.
  case TensorProto::INT8:
    forEachElement<int8_t>(Bytes, T.int32_data(), Int);
    break;
  case TensorProto::UINT8:
  case TensorProto::BOOL:
    forEachElement<uint8_t>(Bytes, T.int32_data(), Int);
    break;
  case TensorProto::INT16:
    forEachElement<int16_t>(Bytes, T.int32_data(), Int);
    break;
  case TensorProto::UINT16:
    forEachElement<uint16_t>(Bytes, T.int32_data(), Int);
    break;
  case TensorProto::INT32:
    forEachElement<int32_t>(Bytes, T.int32_data(), Int);
    break;
  }
  *OS << '}';
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// Prints a tensor type: `float` (rank 0), `float[]` (unknown rank),
/// `float[N,3,?]`.
static void printTensorType(llvm::raw_ostream &OS, llvm::StringRef ElemName,
                            const std::optional<std::vector<Dim>> &Shape) {
  OS << ElemName;
  if (!Shape) {
    OS << "[]";
    return;
  }
  if (Shape->empty())
    return;
  OS << '[';
  for (size_t I = 0; I < Shape->size(); ++I) {
    if (I)
      OS << ',';
    const Dim &D = (*Shape)[I];
    if (D.isKnown())
      OS << D.getValue();
    else if (D.isSymbol())
      printName(OS, D.getSymbol());
    else
      OS << '?';
  }
  OS << ']';
}

/// Spells any type the way newer ONNX text does (`seq(float[])`,
/// `map(int64, float)`), for notes about types ONNX 1.12 cannot read.
static void describeType(llvm::raw_ostream &OS, const Type &T) {
  llvm::StringRef ElemName = typeName(T.getElemType());
  std::string Unknown = "elem" + std::to_string(T.getElemType());
  if (ElemName.empty())
    ElemName = Unknown;
  switch (T.getKind()) {
  case Type::Kind::None:
    OS << "(none)";
    return;
  case Type::Kind::Tensor:
    printTensorType(OS, ElemName, T.getShape());
    return;
  case Type::Kind::SparseTensor:
    OS << "sparse_tensor(";
    printTensorType(OS, ElemName, T.getShape());
    OS << ')';
    return;
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    OS << (T.getKind() == Type::Kind::Sequence ? "seq(" : "optional(");
    describeType(OS, T.getElementType());
    OS << ')';
    return;
  case Type::Kind::Map:
    OS << "map(" << ElemName << ", ";
    describeType(OS, T.getElementType());
    OS << ')';
    return;
  case Type::Kind::Opaque:
    OS << "opaque(" << T.getOpaqueDomain() << ", " << T.getOpaqueName() << ')';
    return;
  }
}

void TextPrinter::printType(const Type &T, llvm::StringRef What) {
  if (T.isNone())
    return;
  llvm::StringRef ElemName = typeName(T.getElemType());
  if (T.isTensor() && !ElemName.empty()) {
    printTensorType(*OS, ElemName, T.getShape());
    *OS << ' ';
    bool HasDenotation = !T.getDenotation().empty() ||
                         llvm::any_of(T.getDims(), [](const Dim &D) {
                           return !D.getDenotation().empty();
                         });
    if (HasDenotation)
      omit("denotations");
    return;
  }
  std::string Spelled;
  llvm::raw_string_ostream SpelledOS(Spelled);
  describeType(SpelledOS, T);
  note("the type " + SpelledOS.str() + " of " + What +
       " has no ONNX 1.12 text form and is left out");
}

void TextPrinter::printValueInfo(const Value &V) {
  printType(V.getType(), "'" + V.getName().str() + "'");
  printName(*OS, V.getName());
  omitResidual<onnx::ValueInfoProto>(V.Residual);
}

/// The shape of a type proto as IR dims (dim_value/dim_param/unknown).
static std::optional<std::vector<Dim>>
protoShape(bool HasShape, const onnx::TensorShapeProto &S) {
  if (!HasShape)
    return std::nullopt;
  std::vector<Dim> Dims;
  for (const auto &D : S.dim()) {
    if (D.has_dim_value())
      Dims.push_back(Dim::known(D.dim_value()));
    else if (D.has_dim_param())
      Dims.push_back(Dim::symbol(D.dim_param()));
    else
      Dims.push_back(Dim::unknown());
  }
  return Dims;
}

void TextPrinter::printTypeProto(const onnx::TypeProto &T,
                                 llvm::StringRef What) {
  if (T.value_case() == onnx::TypeProto::VALUE_NOT_SET)
    return;
  if (T.has_tensor_type()) {
    llvm::StringRef ElemName = typeName(T.tensor_type().elem_type());
    if (!ElemName.empty()) {
      bool HasDenotation =
          !T.denotation().empty() ||
          llvm::any_of(T.tensor_type().shape().dim(),
                       [](const auto &D) { return !D.denotation().empty(); });
      if (HasDenotation)
        omit("denotations");
      printTensorType(
          *OS, ElemName,
          protoShape(T.tensor_type().has_shape(), T.tensor_type().shape()));
      *OS << ' ';
      return;
    }
  }
  note("the type of " + What + " has no ONNX 1.12 text form and is left out");
}

void TextPrinter::printValueInfoProto(const onnx::ValueInfoProto &VI) {
  printTypeProto(VI.type(), "'" + VI.name() + "'");
  printName(*OS, VI.name());
  if (!VI.doc_string().empty())
    omit("doc strings");
}

/// Describes the attribute kinds ONNX 1.12 text has no syntax for.
static const char *attrKindPhrase(int Kind) {
  switch (Kind) {
  case onnx::AttributeProto::TENSORS:
    return "(a list of tensors)";
  case onnx::AttributeProto::GRAPHS:
    return "(a list of graphs)";
  case onnx::AttributeProto::SPARSE_TENSOR:
    return "(a sparse tensor)";
  case onnx::AttributeProto::SPARSE_TENSORS:
    return "(a list of sparse tensors)";
  case onnx::AttributeProto::TYPE_PROTO:
    return "(a type)";
  case onnx::AttributeProto::TYPE_PROTOS:
    return "(a list of types)";
  default:
    return "(of unknown kind)";
  }
}

//===----------------------------------------------------------------------===//
// Graphs and nodes (IR)
//===----------------------------------------------------------------------===//

template <typename ProtoT>
void TextPrinter::omitResidual(const std::string &Bytes) {
  if (Bytes.empty())
    return;
  ProtoT P;
  if (!P.ParseFromString(Bytes))
    return;
  if (!P.doc_string().empty())
    omit("doc strings");
  if (P.GetReflection()->GetUnknownFields(P).field_count())
    omit("fields unknown to ONNX 1.12");
  if constexpr (std::is_same_v<ProtoT, onnx::GraphProto>) {
    if (P.sparse_initializer_size())
      omit("sparse initializers (printed dense)");
    if (P.quantization_annotation_size())
      omit("quantization annotations");
  }
}

void TextPrinter::printGraphSignature(const Graph &G) {
  printName(*OS, G.getName());
  *OS << " (";
  for (size_t I = 0; I < G.getNumInputs(); ++I) {
    if (I)
      *OS << ", ";
    printValueInfo(*G.getInput(I));
  }
  *OS << ") => (";
  for (size_t I = 0; I < G.getNumOutputs(); ++I) {
    if (I)
      *OS << ", ";
    printValueInfo(*G.getOutput(I));
  }
  *OS << ')';
}

void TextPrinter::printGraphEntries(const Graph &G) {
  // All initializers, default values of inputs included, go to the `<...>`
  // section in the model's order: the signature stays readable and each
  // tensor keeps its own type, which may differ from its input's.
  std::vector<const Value *> Inits;
  for (const auto &V : G.getInputs())
    if (V->hasInitializer())
      Inits.push_back(V.get());
  for (const auto &C : G.getConstants())
    Inits.push_back(C.get());
  std::stable_sort(Inits.begin(), Inits.end(),
                   [](const Value *A, const Value *B) {
                     return A->InitOrder < B->InitOrder;
                   });
  // Value-infos: constants and node results that had one, and node results
  // that carry a type (graph outputs are typed in the signature). The
  // model's order first, then new ones in node order.
  std::vector<const Value *> Infos;
  for (const auto &C : G.getConstants())
    if (C->HadValueInfo)
      Infos.push_back(C.get());
  for (const Node &N : G.getNodes())
    for (unsigned I = 0; I < N.getNumResults(); ++I) {
      const Value *R = N.getResult(I);
      if (R && !R->getName().empty() && !R->isOutputOf(G) &&
          (R->HadValueInfo || !R->getType().isNone()))
        Infos.push_back(R);
    }
  std::stable_sort(Infos.begin(), Infos.end(),
                   [](const Value *A, const Value *B) {
                     return A->InfoOrder < B->InfoOrder;
                   });

  size_t NumEntries = Inits.size() + Infos.size() + G.OrphanValueInfos.size();
  if (NumEntries) {
    ++Indent;
    // One entry per line, each a statement: notes about a tensor go right
    // above it (comments may stand between entries).
    size_t Entry = 0;
    auto PrintEntry = [&](const std::function<void()> &Body) {
      *OS << (Entry ? ",\n" : "\n");
      statement([&] {
        indent();
        *OS << (Entry ? ' ' : '<');
        Body();
      });
      ++Entry;
    };
    for (const Value *V : Inits)
      PrintEntry([&] {
        std::string Name = V->getName().str();
        const Tensor &T = V->getInitializer();
        printTensor(T.getProto(), &T, &Name, /*WithEquals=*/true);
      });
    // Carried value-infos (naming no value, or an input) keep their
    // position among the others, as the exporter does.
    size_t NextOrphan = 0;
    uint64_t Pos = 0;
    auto PrintOrphan = [&]() {
      onnx::ValueInfoProto VI;
      if (VI.ParseFromString(G.OrphanValueInfos[NextOrphan++]))
        PrintEntry([&] { printValueInfoProto(VI); });
      ++Pos;
    };
    for (const Value *V : Infos) {
      while (NextOrphan < G.OrphanValueInfos.size() && Pos < V->InfoOrder)
        PrintOrphan();
      PrintEntry([&] { printValueInfo(*V); });
      ++Pos;
    }
    while (NextOrphan < G.OrphanValueInfos.size())
      PrintOrphan();
    *OS << ">\n";
    --Indent;
    indent();
    *OS << "{\n";
  } else {
    *OS << " {\n";
  }
  omitResidual<onnx::GraphProto>(G.Residual);
}

void TextPrinter::printGraphBody(const Graph &G) {
  ++Indent;
  for (const Node &N : G.getNodes())
    printNode(N);
  --Indent;
  indent();
  *OS << '}';
}

void TextPrinter::printNameList(llvm::ArrayRef<std::string> Names) {
  for (size_t I = 0; I < Names.size(); ++I) {
    if (I)
      *OS << ", ";
    // An omitted value is an empty slot, except first in the list: ONNX 1.12
    // cannot read a leading empty slot, so it is written as the encoding of
    // "", `__`.
    if (Names[I].empty() && I)
      continue;
    printName(*OS, Names[I]);
  }
}

void TextPrinter::printOpName(llvm::StringRef Domain, llvm::StringRef OpType) {
  if (!Domain.empty()) {
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    Domain.split(Parts, '.');
    for (llvm::StringRef P : Parts) {
      printName(*OS, P);
      *OS << '.';
    }
  }
  printName(*OS, OpType);
}

void TextPrinter::printNode(const Node &N) {
  statement([&] {
    indent();
    std::vector<std::string> Results, Operands;
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      Results.push_back(N.getResult(I) ? N.getResult(I)->getName().str() : "");
    for (Value *V : N.getOperands())
      Operands.push_back(V ? V->getName().str() : "");
    printNameList(Results);
    *OS << (Results.empty() ? "= " : " = ");
    printOpName(N.getDomain(), N.getOpType());
    bool First = true;
    for (const Attribute &A : N.getAttrs())
      printAttribute(A, First);
    if (!First)
      *OS << '>';
    *OS << " (";
    printNameList(Operands);
    *OS << ")\n";
    if (!N.getName().empty())
      omit("node names");
    omitResidual<onnx::NodeProto>(N.Residual);
  });
}

void TextPrinter::printAttribute(const Attribute &A, bool &First) {
  auto Begin = [&]() {
    *OS << (First ? " <" : ", ");
    First = false;
    printName(*OS, A.Name);
    *OS << " = ";
  };
  auto Skip = [&](const llvm::Twine &Why) {
    note("attribute '" + A.Name + "' " + Why + " has no ONNX 1.12 text form");
  };
  switch (A.Kind) {
  case AttrKind::Int:
    Begin();
    *OS << A.I;
    break;
  case AttrKind::Float:
    Begin();
    printFloat(A.F);
    break;
  case AttrKind::String:
    Begin();
    printString(A.S);
    break;
  case AttrKind::Ints:
    if (A.Ints.empty())
      return Skip("(an empty list of ints)");
    Begin();
    printList<int64_t>(A.Ints, [&](const int64_t &V) { *OS << V; });
    break;
  case AttrKind::Floats:
    if (A.Floats.empty())
      return Skip("(an empty list of floats)");
    Begin();
    printList<float>(A.Floats, [&](const float &V) { printFloat(V); });
    break;
  case AttrKind::Strings:
    if (A.Strings.empty())
      return Skip("(an empty list of strings)");
    Begin();
    printList<std::string>(A.Strings,
                           [&](const std::string &V) { printString(V); });
    break;
  case AttrKind::Tensor:
    Begin();
    {
      const onnx::TensorProto &P = A.Tensors[0].getProto();
      printTensor(P, &A.Tensors[0], P.name().empty() ? nullptr : &P.name(),
                  /*WithEquals=*/false);
    }
    break;
  case AttrKind::Graph:
    Begin();
    printGraph(*A.Graphs[0]);
    break;
  default:
    return Skip(attrKindPhrase(int(A.Kind)));
  }
  omitResidual<onnx::AttributeProto>(A.Residual);
}

//===----------------------------------------------------------------------===//
// Graphs and nodes (protos)
//===----------------------------------------------------------------------===//

void TextPrinter::printGraphProto(const onnx::GraphProto &G) {
  printName(*OS, G.name());
  *OS << " (";
  for (int I = 0; I < G.input_size(); ++I) {
    if (I)
      *OS << ", ";
    printValueInfoProto(G.input(I));
  }
  *OS << ") => (";
  for (int I = 0; I < G.output_size(); ++I) {
    if (I)
      *OS << ", ";
    printValueInfoProto(G.output(I));
  }
  *OS << ')';
  bool First = true;
  auto NextEntry = [&]() {
    *OS << (First ? " <" : ", ");
    First = false;
  };
  for (const auto &T : G.initializer()) {
    NextEntry();
    printTensor(T, nullptr, &T.name(), /*WithEquals=*/true);
  }
  for (const auto &VI : G.value_info()) {
    NextEntry();
    printValueInfoProto(VI);
  }
  if (!First)
    *OS << '>';
  if (!G.doc_string().empty())
    omit("doc strings");
  *OS << " {\n";
  ++Indent;
  for (const auto &N : G.node())
    printNodeProto(N);
  --Indent;
  indent();
  *OS << '}';
}

void TextPrinter::printNodeProto(const onnx::NodeProto &N) {
  statement([&] {
    indent();
    std::vector<std::string> Results(N.output().begin(), N.output().end());
    std::vector<std::string> Operands(N.input().begin(), N.input().end());
    printNameList(Results);
    *OS << (Results.empty() ? "= " : " = ");
    printOpName(N.domain(), N.op_type());
    bool First = true;
    for (const auto &A : N.attribute())
      printAttributeProto(A, First);
    if (!First)
      *OS << '>';
    *OS << " (";
    printNameList(Operands);
    *OS << ")\n";
    if (!N.name().empty())
      omit("node names");
    if (!N.doc_string().empty())
      omit("doc strings");
  });
}

void TextPrinter::printAttributeProto(const onnx::AttributeProto &A,
                                      bool &First) {
  using onnx::AttributeProto;
  auto Begin = [&]() {
    *OS << (First ? " <" : ", ");
    First = false;
    printName(*OS, A.name());
  };
  auto Skip = [&](const llvm::Twine &Why) {
    note("attribute '" + A.name() + "' " + Why + " has no ONNX 1.12 text form");
  };
  // A reference to an attribute of the enclosing function: `name: type = @ref`.
  if (!A.ref_attr_name().empty()) {
    static const char *const KindNames[] = {
        nullptr,          "float",      "int",        "string",
        "tensor",         "graph",      "floats",     "ints",
        "strings",        "tensors",    "graphs",     "sparse_tensor",
        "sparse_tensors", "type_proto", "type_protos"};
    Begin();
    if (A.type() > 0 && A.type() < int(llvm::array_lengthof(KindNames)))
      *OS << ": " << KindNames[A.type()];
    *OS << " = @";
    printName(*OS, A.ref_attr_name());
    return;
  }
  switch (A.type()) {
  case AttributeProto::INT:
    Begin();
    *OS << " = " << A.i();
    return;
  case AttributeProto::FLOAT:
    Begin();
    *OS << " = ";
    printFloat(A.f());
    return;
  case AttributeProto::STRING:
    Begin();
    *OS << " = ";
    printString(A.s());
    return;
  case AttributeProto::INTS: {
    if (A.ints_size() == 0)
      return Skip("(an empty list of ints)");
    Begin();
    *OS << " = ";
    std::vector<int64_t> V(A.ints().begin(), A.ints().end());
    printList<int64_t>(V, [&](const int64_t &X) { *OS << X; });
    return;
  }
  case AttributeProto::FLOATS: {
    if (A.floats_size() == 0)
      return Skip("(an empty list of floats)");
    Begin();
    *OS << " = ";
    std::vector<float> V(A.floats().begin(), A.floats().end());
    printList<float>(V, [&](const float &X) { printFloat(X); });
    return;
  }
  case AttributeProto::STRINGS: {
    if (A.strings_size() == 0)
      return Skip("(an empty list of strings)");
    Begin();
    *OS << " = ";
    std::vector<std::string> V(A.strings().begin(), A.strings().end());
    printList<std::string>(V, [&](const std::string &X) { printString(X); });
    return;
  }
  case AttributeProto::TENSOR:
    Begin();
    *OS << " = ";
    printTensor(A.t(), nullptr, A.t().name().empty() ? nullptr : &A.t().name(),
                /*WithEquals=*/false);
    return;
  case AttributeProto::GRAPH:
    Begin();
    *OS << " = ";
    printGraphProto(A.g());
    return;
  default:
    return Skip(attrKindPhrase(A.type()));
  }
}

void TextPrinter::printFunction(const onnx::FunctionProto &F) {
  statement([&] {
    *OS << "<\n";
    *OS << "   domain: ";
    printString(F.domain());
    *OS << ",\n   opset_import: [";
    for (int I = 0; I < F.opset_import_size(); ++I) {
      if (I)
        *OS << ", ";
      printString(F.opset_import(I).domain());
      *OS << " : " << F.opset_import(I).version();
    }
    *OS << ']';
    if (!F.doc_string().empty()) {
      *OS << ",\n   doc_string: ";
      printString(F.doc_string());
    }
    *OS << "\n>\n";
    printName(*OS, F.name());
    if (F.attribute_size()) {
      *OS << " <";
      std::vector<std::string> Attrs(F.attribute().begin(),
                                     F.attribute().end());
      llvm::interleave(
          Attrs, *OS, [&](const std::string &A) { printName(*OS, A); }, ", ");
      *OS << '>';
    }
    std::vector<std::string> Ins(F.input().begin(), F.input().end());
    std::vector<std::string> Outs(F.output().begin(), F.output().end());
    *OS << " (";
    printNameList(Ins);
    *OS << ") => (";
    printNameList(Outs);
    *OS << ") {\n";
  });
  ++Indent;
  for (const auto &N : F.node())
    printNodeProto(N);
  --Indent;
  *OS << "}\n";
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

void TextPrinter::printModel(const Model &M) {
  onnx::ModelProto Rest;
  if (!M.Residual.empty())
    Rest.ParseFromString(M.Residual);

  if (Opts.ElideTensorsAbove)
    *OS << "# note: tensors of more than " << Opts.ElideTensorsAbove
        << " elements are elided (--elide-weights); this text does not "
           "parse back\n";
  statement([&] {
    *OS << "<\n   ir_version: " << M.getIrVersion() << ",\n   opset_import: [";
    const auto &Opsets = M.getOpsetImports();
    for (size_t I = 0; I < Opsets.size(); ++I) {
      if (I)
        *OS << ", ";
      printString(Opsets[I].Domain);
      *OS << " : " << Opsets[I].Version;
    }
    *OS << ']';
    auto Field = [&](llvm::StringRef Key, bool Has, llvm::StringRef Val) {
      if (!Has)
        return;
      *OS << ",\n   " << Key << ": ";
      printString(Val);
    };
    Field("producer_name", Rest.has_producer_name(), Rest.producer_name());
    Field("producer_version", Rest.has_producer_version(),
          Rest.producer_version());
    Field("domain", Rest.has_domain(), Rest.domain());
    if (Rest.has_model_version())
      *OS << ",\n   model_version: " << Rest.model_version();
    Field("doc_string", Rest.has_doc_string(), Rest.doc_string());
    if (Rest.metadata_props_size()) {
      *OS << ",\n   metadata_props: [";
      for (int I = 0; I < Rest.metadata_props_size(); ++I) {
        if (I)
          *OS << ", ";
        printString(Rest.metadata_props(I).key());
        *OS << " : ";
        printString(Rest.metadata_props(I).value());
      }
      *OS << ']';
    }
    *OS << "\n>\n";
    printDerivedDimComments(Rest);
    if (Rest.training_info_size())
      omit("training info");
    if (Rest.GetReflection()->GetUnknownFields(Rest).field_count())
      omit("fields unknown to ONNX 1.12");
  });

  statement([&] { printGraphSignature(M.getGraph()); });
  printGraphEntries(M.getGraph());
  printGraphBody(M.getGraph());
  *OS << '\n';
  for (const auto &F : Rest.functions())
    printFunction(F);
  if (Omitted.empty())
    return;
  *OS << "# note: no ONNX 1.12 text form, not printed:";
  bool FirstItem = true;
  for (const auto &Item : Omitted) {
    *OS << (FirstItem ? " " : ", ") << Item.first << " (" << Item.second << ")";
    FirstItem = false;
  }
  *OS << '\n';
}

void TextPrinter::printDerivedDimComments(const onnx::ModelProto &Rest) {
  for (const onnx::StringStringEntryProto &E : Rest.metadata_props()) {
    if (E.key() != DerivedDimsKey)
      continue;
    DerivedDimMap Dims;
    std::string Error;
    if (!parseDerivedDims(E.value(), Dims, Error))
      return;
    for (const auto &[Name, Expr] : Dims)
      *OS << "# " << Name << " = " << Expr << "\n";
  }
}

void onnxopt::printModel(const Model &M, llvm::raw_ostream &OS,
                         const TextPrintOptions &Opts) {
  TextPrinter(OS, Opts).printModel(M);
}

void onnxopt::printModel(const Model &M, llvm::raw_ostream &OS) {
  TextPrinter(OS).printModel(M);
}
