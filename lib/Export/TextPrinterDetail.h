//===- TextPrinterDetail.h - The ONNX text printer, shared ----*- C++ -*-===//
//
// Private to lib/Export: the printer class and the name and literal helpers,
// shared by TextPrinter.cpp (literals, types, the model), TextPrinterIR.cpp
// (graphs and nodes of the IR) and TextPrinterProto.cpp (graphs, nodes and
// functions kept as protos).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_EXPORT_TEXTPRINTERDETAIL_H
#define ONNXOPT_LIB_EXPORT_TEXTPRINTERDETAIL_H

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

namespace onnxopt {
namespace detail {

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

/// Element type names, indexed by onnx::TensorProto_DataType. OnnxParser
/// 1.12 knows 1 = float ... 16 = bfloat16; the newer ones (float8, int4,
/// uint4, float4e2m1) are spelled as newer ONNX spells them, and our text
/// importer reads them (see lib/Import/TextImport.cpp).
inline llvm::StringRef typeName(int32_t ElemType) {
  return getElementTypeName(static_cast<ElementType>(ElemType));
}

inline bool isTypeKeyword(llvm::StringRef S) {
  return getElementTypeFromName(S) != ElementType::Undefined;
}

inline bool isIdentStart(char C) { return llvm::isAlpha(C) || C == '_'; }
inline bool isIdentChar(char C) { return llvm::isAlnum(C) || C == '_'; }
inline bool isUpperHex(char C) {
  return llvm::isDigit(C) || (C >= 'A' && C <= 'F');
}

/// True when \p S can be printed as is: an identifier that does not start
/// with the encoding prefix "__" and is not an element type name (a type
/// name where a value-info is expected reads as a type).
inline bool isPlainName(llvm::StringRef S) {
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
inline void printName(llvm::raw_ostream &OS, llvm::StringRef S) {
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
inline void formatReal(llvm::SmallVectorImpl<char> &Out, T V, int MinDigits,
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
template <typename T> inline bool isReadable(T V) {
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

/// Describes the attribute kinds ONNX 1.12 text has no syntax for.
inline const char *attrKindPhrase(int Kind) {
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

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_EXPORT_TEXTPRINTERDETAIL_H
