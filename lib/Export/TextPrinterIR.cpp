//===- TextPrinterIR.cpp - Printing the IR's graphs and nodes as text -----===//
#include "TextPrinterDetail.h"
#include "onnxopt/IR/ProtoTypes.h"

using namespace onnxopt;
using namespace onnxopt::detail;

/// The proto of \p T to print: a packed tensor's is built into \p Scratch
/// (printing a model must not keep a proto per constant).
static const onnx::TensorProto &protoToPrint(const Tensor &T,
                                             onnx::TensorProto &Scratch) {
  if (!T.isPacked())
    return detail::getProto(T);
  detail::toProto(T, Scratch);
  return Scratch;
}

//===----------------------------------------------------------------------===//
// Graphs and nodes (IR)
//===----------------------------------------------------------------------===//

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
        onnx::TensorProto Scratch;
        printTensor(protoToPrint(T, Scratch), &T, &Name, /*WithEquals=*/true);
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
    printString(A.S.str());
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
      onnx::TensorProto Scratch;
      const onnx::TensorProto &P = protoToPrint(A.Tensors[0], Scratch);
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
