//===- TextPrinterProto.cpp - Printing graphs and functions kept as protos ===//
#include "TextPrinterDetail.h"

using namespace onnxopt;
using namespace onnxopt::detail;

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
