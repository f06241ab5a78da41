//===- TextRoundTripTest.cpp - Text round trip over Debian's models -------===//
//
// For every model of Debian's libonnx-testdata: load the binary, print it as
// ONNX text, parse the text back, export both models and compare the protos.
// What ONNX 1.12 text cannot express at all (node names, doc strings,
// denotations) is cleared on both sides first; models that use a feature
// the text can only approximate (non-tensor types, float16 data, inf/nan,
// empty lists...) are counted per feature and must still parse. Every other
// model must come back identical.
//
//===----------------------------------------------------------------------===//
#include "ExportProto.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Import/Import.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cmath>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <onnx/onnx_pb.h>
#include <set>

using namespace onnxopt;

namespace {

const char *const TestDataRoot = "/usr/share/libonnx-testdata/data";
const char *const Suites[] = {"node", "pytorch-converted", "pytorch-operator",
                              "simple"};

std::vector<std::string> findModels() {
  std::vector<std::string> Paths;
  for (const char *Suite : Suites) {
    std::string Dir = std::string(TestDataRoot) + "/" + Suite;
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
         It.increment(EC)) {
      std::string Path = It->path() + "/model.onnx";
      if (llvm::sys::fs::exists(Path))
        Paths.push_back(Path);
    }
  }
  std::sort(Paths.begin(), Paths.end());
  return Paths;
}

//===----------------------------------------------------------------------===//
// What the text cannot express exactly
//===----------------------------------------------------------------------===//

/// Collects the features of a model that ONNX 1.12 text can only
/// approximate. Independent of the printer's own notes on purpose.
class Classifier {
public:
  std::set<std::string> Features;

  void model(const onnx::ModelProto &M) {
    graph(M.graph());
    for (const auto &F : M.functions())
      for (const auto &N : F.node())
        node(N);
    if (M.training_info_size())
      Features.insert("training info");
  }

private:
  void graph(const onnx::GraphProto &G) {
    for (const auto &VI : G.input())
      valueInfo(VI);
    for (const auto &VI : G.output())
      valueInfo(VI);
    for (const auto &VI : G.value_info())
      valueInfo(VI);
    for (const auto &T : G.initializer())
      tensor(T);
    if (G.sparse_initializer_size())
      Features.insert("sparse initializers");
    if (G.quantization_annotation_size())
      Features.insert("quantization annotations");
    for (const auto &N : G.node())
      node(N);
  }

  void valueInfo(const onnx::ValueInfoProto &VI) {
    if (!VI.has_type())
      return;
    const onnx::TypeProto &T = VI.type();
    if (!T.has_tensor_type() || T.tensor_type().elem_type() < 1 ||
        T.tensor_type().elem_type() > 16)
      Features.insert("non-tensor types");
  }

  void floatValue(double V) {
    if (!std::isfinite(V) || std::fpclassify(V) == FP_SUBNORMAL)
      Features.insert("inf, nan or subnormal floats");
  }

  void floatValueF(float V) {
    if (!std::isfinite(V) || std::fpclassify(V) == FP_SUBNORMAL)
      Features.insert("inf, nan or subnormal floats");
  }

  void string(const std::string &S) {
    if (S.find('"') != std::string::npos)
      Features.insert("strings with '\"'");
  }

  void tensor(const onnx::TensorProto &T) {
    using onnx::TensorProto;
    switch (T.data_type()) {
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::COMPLEX64:
    case TensorProto::COMPLEX128:
      Features.insert("float16, bfloat16 or complex tensors");
      return;
    case TensorProto::STRING:
      for (const auto &S : T.string_data())
        string(S);
      return;
    default:
      break;
    }
    if (T.data_type() < 1 || T.data_type() > 16) {
      Features.insert("float16, bfloat16 or complex tensors");
      return;
    }
    Tensor Handle = detail::tensorWrappingProto(onnx::TensorProto(T));
    if (T.data_type() == TensorProto::FLOAT ||
        T.data_type() == TensorProto::DOUBLE)
      if (auto Values = Handle.toDoubles()) {
        if (T.data_type() == TensorProto::FLOAT)
          for (double V : *Values)
            floatValueF(float(V));
        else
          for (double V : *Values)
            floatValue(V);
      }
  }

  void node(const onnx::NodeProto &N) {
    using onnx::AttributeProto;
    for (const auto &A : N.attribute()) {
      switch (A.type()) {
      case AttributeProto::FLOAT:
        floatValueF(A.f());
        break;
      case AttributeProto::STRING:
        string(A.s());
        break;
      case AttributeProto::FLOATS:
        if (A.floats_size() == 0)
          Features.insert("empty list attributes");
        for (float F : A.floats())
          floatValueF(F);
        break;
      case AttributeProto::INTS:
        if (A.ints_size() == 0)
          Features.insert("empty list attributes");
        break;
      case AttributeProto::STRINGS:
        if (A.strings_size() == 0)
          Features.insert("empty list attributes");
        for (const auto &S : A.strings())
          string(S);
        break;
      case AttributeProto::TENSOR:
        tensor(A.t());
        break;
      case AttributeProto::GRAPH:
        graph(A.g());
        break;
      case AttributeProto::INT:
        break;
      default:
        Features.insert("tensor/graph lists, sparse or type attributes");
        break;
      }
    }
  }
};

//===----------------------------------------------------------------------===//
// Canonical form for comparing
//===----------------------------------------------------------------------===//

void clearDenotations(onnx::TypeProto &T) {
  T.clear_denotation();
  if (T.has_tensor_type() && T.tensor_type().has_shape())
    for (auto &D : *T.mutable_tensor_type()->mutable_shape()->mutable_dim())
      D.clear_denotation();
  if (T.has_sequence_type())
    clearDenotations(*T.mutable_sequence_type()->mutable_elem_type());
  if (T.has_optional_type())
    clearDenotations(*T.mutable_optional_type()->mutable_elem_type());
  if (T.has_map_type())
    clearDenotations(*T.mutable_map_type()->mutable_value_type());
}

/// Stores numeric data as raw bytes: text yields typed fields, a binary
/// often raw_data; the contents are what must match.
void canonTensor(onnx::TensorProto &T) {
  T.clear_doc_string();
  if (T.has_name() && T.name().empty())
    T.clear_name();
  if (T.data_type() == onnx::TensorProto::STRING ||
      T.data_location() == onnx::TensorProto::EXTERNAL)
    return;
  Tensor Handle = detail::tensorWrappingProto(onnx::TensorProto(T));
  std::string Storage;
  std::optional<llvm::StringRef> Raw = Handle.getRawBytes(Storage);
  if (!Raw)
    return;
  std::string Bytes = Raw->str();
  T.clear_float_data();
  T.clear_int32_data();
  T.clear_int64_data();
  T.clear_double_data();
  T.clear_uint64_data();
  T.set_raw_data(Bytes);
}

void canonGraph(onnx::GraphProto &G);

void canonNode(onnx::NodeProto &N) {
  N.clear_name();
  N.clear_doc_string();
  if (N.domain().empty())
    N.clear_domain();
  for (auto &A : *N.mutable_attribute()) {
    A.clear_doc_string();
    if (A.has_t())
      canonTensor(*A.mutable_t());
    for (auto &T : *A.mutable_tensors())
      canonTensor(T);
    if (A.has_g())
      canonGraph(*A.mutable_g());
    for (auto &G : *A.mutable_graphs())
      canonGraph(G);
  }
}

void canonGraph(onnx::GraphProto &G) {
  G.clear_doc_string();
  if (G.name().empty())
    G.clear_name();
  for (auto *List :
       {G.mutable_input(), G.mutable_output(), G.mutable_value_info()})
    for (auto &VI : *List) {
      VI.clear_doc_string();
      if (VI.has_type())
        clearDenotations(*VI.mutable_type());
    }
  for (auto &T : *G.mutable_initializer())
    canonTensor(T);
  for (auto &N : *G.mutable_node())
    canonNode(N);
}

void canonModel(onnx::ModelProto &M) {
  M.DiscardUnknownFields();
  M.clear_doc_string();
  // Text writes every opset domain; binaries may leave "" unset.
  for (auto &O : *M.mutable_opset_import())
    if (O.domain().empty())
      O.clear_domain();
  canonGraph(*M.mutable_graph());
  for (auto &F : *M.mutable_functions()) {
    F.clear_doc_string();
    for (auto &N : *F.mutable_node())
      canonNode(N);
  }
}

/// Prints \p M as text.
std::string printToString(const Model &M) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printModel(M, OS);
  return OS.str();
}

} // namespace

TEST(TextRoundTrip, DebianTestModels) {
  std::vector<std::string> Paths = findModels();
  if (Paths.empty())
    GTEST_SKIP() << "libonnx-testdata is not installed";

  unsigned Equal = 0, Approximated = 0, ApproximatedEqual = 0;
  std::map<std::string, unsigned> FeatureCounts;
  for (const std::string &Path : Paths) {
    SCOPED_TRACE(Path);
    std::string Errors;
    DiagnosticEngine Diags;
    Diags.setHandler([&](const Diagnostic &D) {
      llvm::raw_string_ostream OS(Errors);
      Diags.print(OS, D);
    });

    std::unique_ptr<Model> Binary = loadModel(Path, Diags);
    ASSERT_TRUE(Binary) << Errors;
    std::string Text = printToString(*Binary);
    std::unique_ptr<Model> FromText = parseTextModel(Text, Diags);
    // The printer's output must always parse, lossy or not.
    ASSERT_TRUE(FromText) << Errors << "\n" << Text.substr(0, 4000);

    std::unique_ptr<onnx::ModelProto> Expected = exportModel(*Binary);
    std::unique_ptr<onnx::ModelProto> Actual = exportModel(*FromText);
    Classifier C;
    C.model(*Expected);
    canonModel(*Expected);
    canonModel(*Actual);

    std::string Diff;
    google::protobuf::util::MessageDifferencer D;
    D.ReportDifferencesToString(&Diff);
    bool Same = D.Compare(*Expected, *Actual);

    if (!C.Features.empty()) {
      ++Approximated;
      ApproximatedEqual += Same;
      for (const std::string &F : C.Features)
        ++FeatureCounts[F];
      continue;
    }
    EXPECT_TRUE(Same) << Diff.substr(0, 4000) << "\n" << Text.substr(0, 4000);
    if (!Same)
      continue;
    ++Equal;
    // Printing is a fixpoint: the parsed text prints the same text, up to
    // the closing summary of what was not printed.
    size_t Summary = Text.find("# note: no ONNX 1.12 text form");
    EXPECT_EQ(Text.substr(0, Summary), printToString(*FromText));
  }

  std::string Summary;
  llvm::raw_string_ostream OS(Summary);
  OS << Paths.size() << " models: " << Equal
     << " round trip through text exactly; " << Approximated
     << " use features ONNX 1.12 text approximates (" << ApproximatedEqual
     << " of them still equal):";
  for (const auto &F : FeatureCounts)
    OS << "\n  " << F.first << ": " << F.second;
  std::cout << OS.str() << "\n";
  RecordProperty("summary", OS.str());
}
