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
#include "TextPrinterDetail.h"

using namespace onnxopt;
using namespace onnxopt::detail;

/// \p S as the rest of one comment line: a line break in a name or a note
/// would end the comment and leave the rest to be parsed as model text.
static std::string oneLine(llvm::StringRef S) {
  std::string R;
  for (char C : S)
    R += C == '\n' || C == '\r' ? ' ' : C;
  return R;
}

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
    *OS << "# note: " << oneLine(N) << "\n";
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
    *OS << (FirstItem ? " " : ", ") << oneLine(Item.first) << " ("
        << Item.second << ")";
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
      *OS << "# " << oneLine(Name) << " = " << oneLine(Expr) << "\n";
  }
}

void onnxopt::printModel(const Model &M, llvm::raw_ostream &OS,
                         const TextPrintOptions &Opts) {
  TextPrinter(OS, Opts).printModel(M);
}

void onnxopt::printModel(const Model &M, llvm::raw_ostream &OS) {
  TextPrinter(OS).printModel(M);
}
