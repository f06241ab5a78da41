//===- ImportExportTest.cpp - Binary import/export units ------------------===//
//
// Models are built with protobuf here (no Python at test time): external
// data, residual carrying, error reporting and the atomic writer.
//
//===----------------------------------------------------------------------===//

#include "ExportProto.h"
#include "ImportProto.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Import/Import.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/message_differencer.h>
#include <onnx/onnx_pb.h>

#include <fstream>

using namespace onnxopt;

namespace {

/// A scratch directory removed at the end of the test.
struct TempDir {
  llvm::SmallString<128> Path;
  TempDir() {
    std::error_code EC =
        llvm::sys::fs::createUniqueDirectory("onnxopt-io", Path);
    EXPECT_FALSE(EC);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  std::string file(llvm::StringRef Name) const {
    llvm::SmallString<128> P(Path);
    llvm::sys::path::append(P, Name);
    return std::string(P);
  }
};

/// Collects diagnostics as "severity: location: message" lines.
struct CapturedDiags {
  DiagnosticEngine Diags;
  std::string Text;
  CapturedDiags() {
    Diags.setHandler([this](const Diagnostic &D) {
      llvm::raw_string_ostream OS(Text);
      Diags.print(OS, D);
    });
  }
};

std::string readFile(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, false, false);
  return Buf ? (*Buf)->getBuffer().str() : std::string();
}

void writeFile(const std::string &Path, llvm::StringRef Bytes) {
  std::ofstream OS(Path, std::ios::binary);
  OS.write(Bytes.data(), Bytes.size());
}

std::vector<std::string> listDir(const std::string &Dir) {
  std::vector<std::string> Names;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    Names.push_back(llvm::sys::path::filename(It->path()).str());
  std::sort(Names.begin(), Names.end());
  return Names;
}

std::string floatBytes(std::initializer_list<float> Vals) {
  std::string S;
  for (float F : Vals)
    S.append(reinterpret_cast<const char *>(&F), sizeof(F));
  return S;
}

std::string diff(const google::protobuf::Message &A,
                 const google::protobuf::Message &B) {
  google::protobuf::util::MessageDifferencer D;
  std::string Report;
  D.ReportDifferencesToString(&Report);
  if (D.Compare(A, B))
    return "";
  return Report.empty() ? "differ" : Report;
}

void setTensorType(onnx::ValueInfoProto &VI, llvm::StringRef Name,
                   std::vector<int64_t> Dims) {
  VI.set_name(Name.str());
  auto *TT = VI.mutable_type()->mutable_tensor_type();
  TT->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t D : Dims)
    TT->mutable_shape()->add_dim()->set_dim_value(D);
}

/// y = Add(Add(x, w0), w1) with w0, w1 float[2].
onnx::ModelProto makeAddModel() {
  onnx::ModelProto P;
  P.set_ir_version(8);
  auto *Op = P.add_opset_import();
  Op->set_domain("");
  Op->set_version(17);
  onnx::GraphProto &G = *P.mutable_graph();
  G.set_name("adds");
  setTensorType(*G.add_input(), "x", {2});
  setTensorType(*G.add_output(), "y", {2});
  auto *N0 = G.add_node();
  N0->set_op_type("Add");
  N0->set_name("add0");
  N0->add_input("x");
  N0->add_input("w0");
  N0->add_output("t");
  auto *N1 = G.add_node();
  N1->set_op_type("Add");
  N1->set_name("add1");
  N1->add_input("t");
  N1->add_input("w1");
  N1->add_output("y");
  for (const char *Name : {"w0", "w1"}) {
    auto *T = G.add_initializer();
    T->set_name(Name);
    T->set_data_type(onnx::TensorProto::FLOAT);
    T->add_dims(2);
  }
  return P;
}

void setExternal(onnx::TensorProto &T, llvm::StringRef Location,
                 std::optional<uint64_t> Offset,
                 std::optional<uint64_t> Length) {
  T.set_data_location(onnx::TensorProto::EXTERNAL);
  auto Add = [&](const char *K, std::string V) {
    auto *E = T.add_external_data();
    E->set_key(K);
    E->set_value(V);
  };
  Add("location", Location.str());
  if (Offset)
    Add("offset", std::to_string(*Offset));
  if (Length)
    Add("length", std::to_string(*Length));
}

/// Writes makeAddModel() with w0 at offset 0 (explicit length) and w1 at
/// offset 8 (no length: to the end) of Dir/weights.bin.
std::string writeExternalModel(const TempDir &Dir) {
  writeFile(Dir.file("weights.bin"), floatBytes({1, 2, 3, 4}));
  onnx::ModelProto P = makeAddModel();
  setExternal(*P.mutable_graph()->mutable_initializer(0), "weights.bin", 0, 8);
  setExternal(*P.mutable_graph()->mutable_initializer(1), "weights.bin", 8,
              std::nullopt);
  std::string Path = Dir.file("model.onnx");
  writeFile(Path, P.SerializeAsString());
  return Path;
}

const Value *findConstant(const Model &M, llvm::StringRef Name) {
  for (const auto &V : M.getGraph().getConstants())
    if (V->getName() == Name)
      return V.get();
  return nullptr;
}

std::string externalLocation(const onnx::TensorProto &T) {
  for (const auto &E : T.external_data())
    if (E.key() == "location")
      return E.value();
  return "";
}

std::unique_ptr<Model> importProto(onnx::ModelProto P, CapturedDiags &D) {
  return importModel(std::move(P), "", D.Diags);
}

/// The same model through the binary parser, which parses the main graph's
/// nodes one at a time while importing (not into the proto).
std::unique_ptr<Model> parseProto(const onnx::ModelProto &P, CapturedDiags &D) {
  return parseBinaryModel(P.SerializeAsString(), "", D.Diags);
}

} // namespace

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

TEST(ImportExport, ExternalDataIsMappedNotRead) {
  TempDir Dir;
  std::string Path = writeExternalModel(Dir);
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Path, D.Diags);
  ASSERT_TRUE(M) << D.Text;
  const Value *W0 = findConstant(*M, "w0"), *W1 = findConstant(*M, "w1");
  ASSERT_TRUE(W0 && W1);
  const Tensor &T0 = W0->getInitializer(), &T1 = W1->getInitializer();
  ASSERT_TRUE(T0.isExternal() && T1.isExternal());
  // Both tensors share one mapping.
  EXPECT_EQ(T0.getExternal()->File, T1.getExternal()->File);
  EXPECT_EQ(T1.getExternal()->Length, 8u);
  std::string S;
  EXPECT_EQ(*T0.getRawBytes(S), floatBytes({1, 2}));
  EXPECT_EQ(*T1.getRawBytes(S), floatBytes({3, 4}));
  EXPECT_EQ(*T1.toDoubles(), (std::vector<double>{3, 4}));
}

TEST(ImportExport, SaveBesideKeepsReferences) {
  TempDir Dir;
  std::string Path = writeExternalModel(Dir);
  onnx::ModelProto Original;
  Original.ParseFromString(readFile(Path));
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Path, D.Diags);
  ASSERT_TRUE(M) << D.Text;
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("out.onnx"), FileFormat::Binary, D.Diags)))
      << D.Text;
  EXPECT_EQ(
      listDir(std::string(Dir.Path)),
      (std::vector<std::string>{"model.onnx", "out.onnx", "weights.bin"}));
  onnx::ModelProto Saved;
  ASSERT_TRUE(Saved.ParseFromString(readFile(Dir.file("out.onnx"))));
  EXPECT_EQ(diff(Original, Saved), "");
}

TEST(ImportExport, SaveElsewhereCopiesBytes) {
  TempDir Dir, Other;
  std::string Path = writeExternalModel(Dir);
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Path, D.Diags);
  ASSERT_TRUE(M) << D.Text;
  std::string Out = Other.file("copy.onnx");
  ASSERT_TRUE(succeeded(saveModel(*M, Out, FileFormat::Binary, D.Diags)))
      << D.Text;
  EXPECT_EQ(listDir(std::string(Other.Path)),
            (std::vector<std::string>{"copy.onnx", "copy.onnx.data"}));

  onnx::ModelProto Saved;
  ASSERT_TRUE(Saved.ParseFromString(readFile(Out)));
  for (const auto &T : Saved.graph().initializer()) {
    EXPECT_EQ(T.data_location(), onnx::TensorProto::EXTERNAL);
    EXPECT_EQ(externalLocation(T), "copy.onnx.data");
  }
  // Loading the copy gives the same bytes.
  std::unique_ptr<Model> M2 = loadModel(Out, D.Diags);
  ASSERT_TRUE(M2) << D.Text;
  std::string S;
  EXPECT_EQ(*findConstant(*M2, "w0")->getInitializer().getRawBytes(S),
            floatBytes({1, 2}));
  EXPECT_EQ(*findConstant(*M2, "w1")->getInitializer().getRawBytes(S),
            floatBytes({3, 4}));
}

TEST(ImportExport, ExternalDataNameOption) {
  TempDir Dir, Other;
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(writeExternalModel(Dir), D.Diags);
  ASSERT_TRUE(M) << D.Text;
  ExportOptions Opts;
  Opts.ExternalDataName = "weights.bin";
  ASSERT_TRUE(succeeded(
      saveModel(*M, Other.file("m.onnx"), FileFormat::Binary, D.Diags, Opts)))
      << D.Text;
  EXPECT_EQ(listDir(std::string(Other.Path)),
            (std::vector<std::string>{"m.onnx", "weights.bin"}));
}

TEST(ImportExport, ForceExternalAndReload) {
  TempDir Dir;
  onnx::ModelProto P = makeAddModel();
  P.mutable_graph()->mutable_initializer(0)->set_raw_data(floatBytes({5, 6}));
  // Typed storage is materialized little-endian.
  P.mutable_graph()->mutable_initializer(1)->add_float_data(7);
  P.mutable_graph()->mutable_initializer(1)->add_float_data(8);
  CapturedDiags D;
  std::unique_ptr<Model> M = importProto(P, D);
  ASSERT_TRUE(M) << D.Text;
  ExportOptions Opts;
  Opts.ForceExternal = true;
  Opts.ExternalThreshold = 4;
  std::string Out = Dir.file("ext.onnx");
  ASSERT_TRUE(succeeded(saveModel(*M, Out, FileFormat::Binary, D.Diags, Opts)))
      << D.Text;
  std::string Data = readFile(Dir.file("ext.onnx.data"));
  EXPECT_NE(Data.find(floatBytes({5, 6})), std::string::npos);
  EXPECT_NE(Data.find(floatBytes({7, 8})), std::string::npos);
  std::unique_ptr<Model> M2 = loadModel(Out, D.Diags);
  ASSERT_TRUE(M2) << D.Text;
  EXPECT_TRUE(findConstant(*M2, "w0")->getInitializer().isExternal());
  EXPECT_TRUE(findConstant(*M2, "w1")->getInitializer().contentEquals(
      findConstant(*M, "w1")->getInitializer()));
}

TEST(ImportExport, ReplacingReferencedDataFile) {
  // Overwrite model.onnx beside its data, forcing a new data file with the
  // same name as a referenced one: the referenced bytes must be copied.
  TempDir Dir;
  writeFile(Dir.file("model.onnx.data"), floatBytes({1, 2, 3, 4}));
  onnx::ModelProto P = makeAddModel();
  setExternal(*P.mutable_graph()->mutable_initializer(0), "model.onnx.data", 0,
              8);
  P.mutable_graph()->mutable_initializer(1)->set_raw_data(floatBytes({9, 9}));
  std::string Path = Dir.file("model.onnx");
  writeFile(Path, P.SerializeAsString());
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Path, D.Diags);
  ASSERT_TRUE(M) << D.Text;
  ExportOptions Opts;
  Opts.ForceExternal = true;
  Opts.ExternalThreshold = 4;
  ASSERT_TRUE(succeeded(saveModel(*M, Path, FileFormat::Binary, D.Diags, Opts)))
      << D.Text;
  std::unique_ptr<Model> M2 = loadModel(Path, D.Diags);
  ASSERT_TRUE(M2) << D.Text;
  std::string S;
  EXPECT_EQ(*findConstant(*M2, "w0")->getInitializer().getRawBytes(S),
            floatBytes({1, 2}));
  EXPECT_EQ(*findConstant(*M2, "w1")->getInitializer().getRawBytes(S),
            floatBytes({9, 9}));
}

TEST(ImportExport, ExternalConstantAttribute) {
  // A Constant node whose value is external: verified without touching the
  // data file, copied when saved elsewhere.
  TempDir Dir, Other;
  writeFile(Dir.file("c.bin"), floatBytes({1, 2}));
  onnx::ModelProto P;
  P.set_ir_version(8);
  P.add_opset_import()->set_version(17);
  onnx::GraphProto &G = *P.mutable_graph();
  G.set_name("g");
  auto *N = G.add_node();
  N->set_op_type("Constant");
  N->add_output("y");
  auto *A = N->add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  A->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  A->mutable_t()->add_dims(2);
  setExternal(*A->mutable_t(), "c.bin", 0, 8);
  setTensorType(*G.add_output(), "y", {2});
  writeFile(Dir.file("m.onnx"), P.SerializeAsString());
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Dir.file("m.onnx"), D.Diags);
  ASSERT_TRUE(M) << D.Text;
  std::string Out = Other.file("m.onnx");
  ASSERT_TRUE(succeeded(saveModel(*M, Out, FileFormat::Binary, D.Diags)))
      << D.Text;
  EXPECT_EQ(readFile(Other.file("m.onnx.data")), floatBytes({1, 2}));
  onnx::ModelProto Saved;
  ASSERT_TRUE(Saved.ParseFromString(readFile(Out)));
  EXPECT_EQ(externalLocation(Saved.graph().node(0).attribute(0).t()),
            "m.onnx.data");
}

TEST(ImportExport, ExternalDataErrors) {
  TempDir Dir;
  writeFile(Dir.file("weights.bin"), floatBytes({1, 2}));
  struct Case {
    std::string Location;
    std::optional<uint64_t> Offset, Length;
    const char *Expected;
  } Cases[] = {
      {"missing.bin", 0, 8, "cannot read external data"},
      {"weights.bin", 4, 8, "at offset 4 with length 8 is outside"},
      {"weights.bin", 16, std::nullopt, "at offset 16 is outside"},
      // offset + length does not fit 64 bits: printed apart.
      {"weights.bin", UINT64_MAX - 3, 8,
       "at offset 18446744073709551612 with length 8 is outside"},
      {"weights.bin", 0, 4,
       "it holds 4 bytes of data, but its dims and "
       "element type need 8"},
      {"../weights.bin", 0, 8, "leaves the model's directory through '..'"},
      {"/etc/passwd", 0, 8, "is absolute"},
      {"", 0, 8, "external data without a location"},
  };
  for (const Case &C : Cases) {
    onnx::ModelProto P = makeAddModel();
    setExternal(*P.mutable_graph()->mutable_initializer(0), C.Location,
                C.Offset, C.Length);
    P.mutable_graph()->mutable_initializer(1)->set_raw_data(floatBytes({0, 0}));
    CapturedDiags D;
    EXPECT_FALSE(importModel(std::move(P), Dir.Path, D.Diags));
    EXPECT_NE(D.Text.find(C.Expected), std::string::npos) << D.Text;
    EXPECT_NE(D.Text.find("initializer 'w0'"), std::string::npos) << D.Text;
  }
}

//===----------------------------------------------------------------------===//
// Residuals
//===----------------------------------------------------------------------===//

namespace {

/// A model using everything the IR does not model.
onnx::ModelProto makeRichModel() {
  onnx::ModelProto P = makeAddModel();
  P.set_producer_name("unit");
  P.set_producer_version("1");
  P.set_domain("test.domain");
  P.set_model_version(3);
  P.set_doc_string("model doc");
  auto *MD = P.add_metadata_props();
  MD->set_key("author");
  MD->set_value("me");
  // An opset without a domain field must come back without one.
  P.mutable_opset_import(0)->clear_domain();
  auto *Ml = P.add_opset_import();
  Ml->set_domain("ai.onnx.ml");
  Ml->set_version(3);
  auto *Local = P.add_opset_import();
  Local->set_domain("local");
  Local->set_version(1);
  P.GetReflection()->MutableUnknownFields(&P)->AddVarint(1000, 42);

  auto *F = P.add_functions();
  F->set_name("Twice");
  F->set_domain("local");
  F->add_input("a");
  F->add_output("b");
  auto *FN = F->add_node();
  FN->set_op_type("Add");
  FN->add_input("a");
  FN->add_input("a");
  FN->add_output("b");
  auto *FO = F->add_opset_import();
  FO->set_domain("");
  FO->set_version(17);

  auto *TI = P.add_training_info();
  TI->mutable_algorithm()->set_name("train");
  auto *Bind = TI->add_update_binding();
  Bind->set_key("w0");
  Bind->set_value("w0_new");

  onnx::GraphProto &G = *P.mutable_graph();
  G.set_doc_string("graph doc");
  G.GetReflection()->MutableUnknownFields(&G)->AddLengthDelimited(999, "g");
  G.mutable_input(0)->set_doc_string("input doc");
  G.mutable_output(0)->set_doc_string("output doc");
  G.mutable_initializer(0)->set_raw_data(floatBytes({1, 2}));
  G.mutable_initializer(0)->set_doc_string("weight doc");
  G.mutable_initializer(1)->add_float_data(3);
  G.mutable_initializer(1)->add_float_data(4);
  G.mutable_initializer(1)
      ->GetReflection()
      ->MutableUnknownFields(G.mutable_initializer(1))
      ->AddFixed32(77, 7);

  onnx::NodeProto &N0 = *G.mutable_node(0);
  N0.set_doc_string("node doc");
  N0.set_domain(""); // explicitly empty: kept
  N0.GetReflection()->MutableUnknownFields(&N0)->AddVarint(500, 1);
  auto *A = N0.add_attribute();
  A->set_name("note");
  A->set_type(onnx::AttributeProto::STRING);
  A->set_s("hello");
  A->set_doc_string("attr doc");
  auto *TPAttr = N0.add_attribute();
  TPAttr->set_name("tp");
  TPAttr->set_type(onnx::AttributeProto::TYPE_PROTO);
  TPAttr->mutable_tp()->mutable_tensor_type()->set_elem_type(1);

  // A call to the local function and a node reading a sparse initializer.
  auto *Call = G.add_node();
  Call->set_op_type("Twice");
  Call->set_domain("local");
  Call->add_input("y");
  Call->add_output("z");
  auto *Use = G.add_node();
  Use->set_op_type("Add");
  Use->add_input("z");
  Use->add_input("sp");
  Use->add_output("u");
  setTensorType(*G.add_output(), "u", {2});

  auto *SP = G.add_sparse_initializer();
  SP->add_dims(2);
  SP->mutable_values()->set_name("sp");
  SP->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  SP->mutable_values()->add_dims(1);
  SP->mutable_values()->add_float_data(5);
  SP->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  SP->mutable_indices()->add_dims(1);
  SP->mutable_indices()->add_int64_data(1);

  auto *QA = G.add_quantization_annotation();
  QA->set_tensor_name("t");
  auto *QP = QA->add_quant_parameter_tensor_names();
  QP->set_key("SCALE_TENSOR");
  QP->set_value("w0");

  // value_info: one for an intermediate, one naming nothing, one for an
  // output, with a dim denotation and a huge dim.
  auto *VT = G.add_value_info();
  setTensorType(*VT, "t", {2});
  VT->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_denotation("DATA_FEATURE");
  VT->set_doc_string("t doc");
  setTensorType(*G.add_value_info(), "gone", {INT64_MAX});
  setTensorType(*G.add_value_info(), "y", {2});
  // value_info naming a constant lives on the constant.
  setTensorType(*G.add_value_info(), "w1", {2});
  // An input whose type is present but empty.
  auto *E = G.add_input();
  E->set_name("e");
  E->mutable_type();
  // An attribute without a type (as in very old models).
  auto *Old = N0.add_attribute();
  Old->set_name("old");
  Old->set_i(3);
  auto *VZ = G.add_value_info();
  VZ->set_name("z");
  auto *Seq = VZ->mutable_type()->mutable_sequence_type();
  Seq->mutable_elem_type()->mutable_tensor_type()->set_elem_type(7);
  return P;
}

} // namespace

TEST(ImportExport, ResidualsRoundTrip) {
  onnx::ModelProto P = makeRichModel();
  CapturedDiags D;
  std::unique_ptr<Model> M = importProto(P, D);
  ASSERT_TRUE(M) << D.Text;
  std::unique_ptr<onnx::ModelProto> Out = exportModel(*M);
  EXPECT_EQ(diff(P, *Out), "");
  // Byte-identical through the streaming writer too.
  TempDir Dir;
  ExportOptions Opts;
  Opts.Verify = false;
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("r.onnx"), FileFormat::Binary, D.Diags, Opts)))
      << D.Text;
  EXPECT_EQ(readFile(Dir.file("r.onnx")), P.SerializeAsString());
}

TEST(ImportExport, ModeledFieldsAreInTheIR) {
  CapturedDiags D;
  std::unique_ptr<Model> M = importProto(makeRichModel(), D);
  ASSERT_TRUE(M) << D.Text;
  Graph &G = M->getGraph();
  EXPECT_EQ(G.getName(), "adds");
  EXPECT_EQ(M->getOpsetVersion("ai.onnx.ml"), 3);
  EXPECT_EQ(G.OrphanValueInfos.size(), 2u); // "gone" and "y"
  EXPECT_TRUE(findConstant(*M, "w1")->HadValueInfo);
  EXPECT_TRUE(G.getInput(1)->getType().isNone());
  const Node &N0 = G.getNodes().front();
  EXPECT_EQ(N0.getAttr("old")->Kind, AttrKind::Undefined);
  EXPECT_EQ(N0.getAttrString("note"), "hello");
  EXPECT_EQ(N0.getAttr("tp")->Kind, AttrKind::TypeProto);
  // The sparse initializer is a dense constant to passes.
  const Value *Sp = findConstant(*M, "sp");
  ASSERT_TRUE(Sp);
  EXPECT_EQ(*Sp->getInitializer().toDoubles(), (std::vector<double>{0, 5}));
  const Value *T = N0.getResult(0);
  EXPECT_TRUE(T->HadValueInfo);
  EXPECT_EQ(T->getType().getDims()[0].getDenotation(), "DATA_FEATURE");
  EXPECT_EQ(G.getNodes().back().getResult(0)->getName(), "u");
}

TEST(ImportExport, SparseInitializerFollowsItsConstant) {
  onnx::ModelProto P = makeRichModel();
  CapturedDiags D;
  std::unique_ptr<Model> M = importProto(P, D);
  ASSERT_TRUE(M) << D.Text;
  Graph &G = M->getGraph();
  // Replace the sparse constant by a new dense one: the sparse form goes.
  Node &Use = G.getNodes().back();
  Value *Old = const_cast<Value *>(findConstant(*M, "sp"));
  Value *New = G.addConstant("sp2", Tensor::fromFloats("sp2", {2}, {0, 6}));
  Use.setOperand(1, New);
  G.eraseConstant(Old);
  std::unique_ptr<onnx::ModelProto> Out = exportModel(*M);
  EXPECT_EQ(Out->graph().sparse_initializer_size(), 0);
  ASSERT_EQ(Out->graph().initializer_size(), 3);
  EXPECT_EQ(Out->graph().initializer(2).name(), "sp2");
}

TEST(ImportExport, HugeDimsSurvive) {
  // Dims up to 2^53 load and save unchanged (the tensors hold no data);
  // one more is refused, in a type and in a tensor.
  auto Make = [](int64_t Dim) {
    onnx::ModelProto P = makeAddModel();
    for (auto *VI : {P.mutable_graph()->mutable_input(0),
                     P.mutable_graph()->mutable_output(0)})
      VI->mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->mutable_dim(0)
          ->set_dim_value(Dim);
    for (int I : {0, 1}) {
      onnx::TensorProto &T = *P.mutable_graph()->mutable_initializer(I);
      T.set_dims(0, Dim);
      T.clear_raw_data();
      T.clear_float_data();
    }
    return P;
  };
  for (int64_t Bad : {MaxDim + 1, int64_t(INT64_MAX), int64_t(-2)}) {
    CapturedDiags D;
    EXPECT_FALSE(importProto(Make(Bad), D));
    EXPECT_NE(D.Text.find("value 'x' has dim " + std::to_string(Bad) +
                          " (dims must be between 0 and 2^53"),
              std::string::npos)
        << D.Text;
    EXPECT_NE(D.Text.find("initializer 'w0': dim " + std::to_string(Bad)),
              std::string::npos)
        << D.Text;
  }
  // -1 in a type is an exporter's unknown dim (Paddle): read as unknown,
  // with a remark; in a tensor it is still an error.
  {
    CapturedDiags D;
    EXPECT_FALSE(importProto(Make(-1), D));
    EXPECT_EQ(D.Text.find("value 'x' has dim -1 (dims"), std::string::npos)
        << D.Text;
    EXPECT_NE(D.Text.find("initializer 'w0': dim -1"), std::string::npos)
        << D.Text;
  }
  {
    onnx::ModelProto P = makeAddModel();
    P.mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(0)
        ->set_dim_value(-1);
    CapturedDiags D;
    std::unique_ptr<Model> M = importProto(P, D);
    ASSERT_TRUE(M) << D.Text;
    EXPECT_TRUE(M->getGraph().getInput(0)->getType().getDims()[0].isUnknown());
    EXPECT_NE(D.Text.find("remark: value 'x' has dim -1: read as an unknown "
                          "dim ('?')"),
              std::string::npos)
        << D.Text;
  }
  onnx::ModelProto P = Make(MaxDim);
  CapturedDiags D;
  std::unique_ptr<Model> M = importProto(P, D);
  ASSERT_TRUE(M) << D.Text;
  EXPECT_EQ(M->getGraph().getInput(0)->getType().getDims()[0].getValue(),
            MaxDim);
  EXPECT_EQ(findConstant(*M, "w0")->getInitializer().getNumElements(), MaxDim);
  TempDir Dir;
  ExportOptions Opts;
  Opts.Verify = false;
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("h.onnx"), FileFormat::Binary, D.Diags, Opts)));
  EXPECT_EQ(readFile(Dir.file("h.onnx")), P.SerializeAsString());
}

TEST(ImportExport, OuterScopeAndOutOfOrder) {
  // Nodes out of order, and an If whose branch reads the outer value "t".
  onnx::ModelProto P = makeAddModel();
  onnx::GraphProto &G = *P.mutable_graph();
  G.mutable_node()->SwapElements(0, 1);
  G.mutable_initializer(0)->set_raw_data(floatBytes({1, 2}));
  G.mutable_initializer(1)->set_raw_data(floatBytes({3, 4}));
  auto *If = G.add_node();
  If->set_op_type("If");
  If->add_input("c");
  If->add_output("o");
  setTensorType(*G.add_input(), "c", {});
  G.mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  for (const char *Branch : {"then_branch", "else_branch"}) {
    auto *A = If->add_attribute();
    A->set_name(Branch);
    A->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto &B = *A->mutable_g();
    B.set_name(Branch);
    auto *Id = B.add_node();
    Id->set_op_type("Identity");
    Id->add_input("t");
    Id->add_output(std::string(Branch) + "_out");
    setTensorType(*B.add_output(), std::string(Branch) + "_out", {2});
  }
  setTensorType(*G.add_output(), "o", {2});
  for (bool Streamed : {false, true}) {
    CapturedDiags D;
    std::unique_ptr<Model> M = Streamed ? parseProto(P, D) : importProto(P, D);
    ASSERT_TRUE(M) << D.Text;
    const Node &IfNode = M->getGraph().getNodes().back();
    Graph *Then = IfNode.getSubgraphs()[0];
    const Value *T = Then->getNodes().front().getOperand(0);
    EXPECT_EQ(T->getName(), "t");
    EXPECT_EQ(T->getOwningGraph(), &M->getGraph());
    // The first node (Add) reads "t", defined by the second.
    const Node &First = M->getGraph().getNodes().front();
    EXPECT_EQ(First.getOperand(0)->getName(), "t");
    EXPECT_EQ(diff(P, *exportModel(*M)), "") << "streamed: " << Streamed;
  }
}

TEST(ImportExport, StreamedNodesKeepResidualsAndAttributes) {
  // Unknown fields on nodes and attributes, a Constant's tensor and a node
  // name; the graph's fields around the nodes interleaved with them.
  onnx::ModelProto P = makeAddModel();
  onnx::GraphProto &G = *P.mutable_graph();
  G.mutable_node(0)->set_doc_string("first");
  G.mutable_node(0)
      ->GetReflection()
      ->MutableUnknownFields(G.mutable_node(0))
      ->AddVarint(1000, 7);
  auto *C = G.add_node();
  C->set_op_type("Constant");
  C->add_output("k");
  auto *A = C->add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  A->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  A->mutable_t()->add_dims(2);
  A->mutable_t()->set_raw_data(floatBytes({5, 6}));
  std::string Bytes = P.SerializeAsString();
  CapturedDiags D;
  std::unique_ptr<Model> M = parseBinaryModel(Bytes, "", D.Diags);
  ASSERT_TRUE(M) << D.Text;
  EXPECT_EQ(diff(P, *exportModel(*M)), "");
  // Bytes cut inside a node: the node's parse fails, like the whole one.
  CapturedDiags Bad;
  onnx::ModelProto Q = P;
  Q.mutable_graph()->mutable_node(0)->set_op_type(std::string(300, 'x'));
  std::string QBytes = Q.SerializeAsString();
  size_t At = QBytes.find(std::string(300, 'x'));
  ASSERT_NE(At, std::string::npos);
  QBytes[At - 2] = char(0xff); // the op_type's length, now past the node
  EXPECT_FALSE(parseBinaryModel(QBytes, "", Bad.Diags));
  EXPECT_NE(Bad.Text.find("truncated or malformed"), std::string::npos)
      << Bad.Text;
}

TEST(ImportExport, LargeGraphParsedAhead) {
  // Enough nodes for the second phase to parse them on another thread
  // (ParseAhead): a chain of Add nodes with Constants, each with its own
  // value and an unknown field, round-trips exactly.
  onnx::ModelProto P = makeAddModel();
  onnx::GraphProto &G = *P.mutable_graph();
  std::string Prev = G.node(0).output(0);
  for (int I = 0; I < 6000; ++I) {
    auto *C = G.add_node();
    C->set_op_type("Constant");
    C->add_output("k" + std::to_string(I));
    auto *A = C->add_attribute();
    A->set_name("value");
    A->set_type(onnx::AttributeProto::TENSOR);
    A->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    A->mutable_t()->add_dims(2);
    A->mutable_t()->set_raw_data(floatBytes({float(I), 1}));
    C->GetReflection()->MutableUnknownFields(C)->AddVarint(1000, I);
    auto *N = G.add_node();
    N->set_op_type("Add");
    N->set_name("add" + std::to_string(I));
    N->add_input(Prev);
    N->add_input("k" + std::to_string(I));
    Prev = "s" + std::to_string(I);
    N->add_output(Prev);
  }
  G.mutable_output(0)->set_name(Prev);
  CapturedDiags D;
  std::unique_ptr<Model> M = parseBinaryModel(P.SerializeAsString(), "", D.Diags);
  ASSERT_TRUE(M) << D.Text;
  EXPECT_EQ(diff(P, *exportModel(*M)), "");

  // A node whose names scan but whose attribute does not parse, far into
  // the graph (past the window the parser thread runs ahead): one error,
  // no model.
  for (int At : {5000, 12000}) {
    onnx::ModelProto Q = P;
    onnx::AttributeProto *Bad =
        Q.mutable_graph()->mutable_node(At)->add_attribute();
    Bad->set_name("bad");
    Bad->set_s(std::string(64, 'z'));
    std::string QBytes = Q.SerializeAsString();
    size_t Pos = QBytes.find(std::string(64, 'z'));
    ASSERT_NE(Pos, std::string::npos);
    // The attribute's `s` tag (field 4, length-delimited: 0x22) gets the
    // invalid wire type 7.
    ASSERT_EQ(QBytes[Pos - 2], char(0x22));
    QBytes[Pos - 2] = char(0x27);
    CapturedDiags E;
    EXPECT_FALSE(parseBinaryModel(QBytes, "", E.Diags));
    EXPECT_EQ(E.Diags.getNumErrors(), 1u) << E.Text;
    EXPECT_NE(E.Text.find("truncated or malformed"), std::string::npos)
        << E.Text;
  }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

std::string loadError(llvm::StringRef Bytes) {
  TempDir Dir;
  std::string Path = Dir.file("bad.onnx");
  writeFile(Path, Bytes);
  CapturedDiags D;
  EXPECT_FALSE(loadModel(Path, D.Diags));
  EXPECT_EQ(D.Diags.getNumErrors(), 1u) << D.Text;
  return D.Text;
}

} // namespace

TEST(ImportExport, BadFiles) {
  EXPECT_NE(loadError("").find("the model file is empty"), std::string::npos);
  std::string Good = makeAddModel().SerializeAsString();
  EXPECT_NE(loadError(llvm::StringRef(Good).drop_back(5)).find("truncated"),
            std::string::npos);
  EXPECT_NE(loadError("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
                .find("truncated or malformed"),
            std::string::npos);
  // Valid protobuf, but no graph.
  EXPECT_NE(loadError("\x08\x07").find("it has no graph"), std::string::npos);
  CapturedDiags D;
  EXPECT_FALSE(loadModel("/nonexistent/m.onnx", D.Diags));
  EXPECT_NE(D.Text.find("cannot open '/nonexistent/m.onnx'"),
            std::string::npos);
}

TEST(ImportExport, UndefinedInput) {
  onnx::ModelProto P = makeAddModel();
  P.mutable_graph()->mutable_node(1)->set_input(1, "foo");
  P.mutable_graph()->mutable_node(1)->set_name("x");
  for (bool Streamed : {false, true}) {
    CapturedDiags D;
    EXPECT_FALSE(Streamed ? parseProto(P, D) : importProto(P, D));
    EXPECT_NE(D.Text.find(
                  "node 'x' (Add) in graph 'adds': input 'foo' is not defined"),
              std::string::npos)
        << D.Text;
  }
}

TEST(ImportExport, DuplicateNames) {
  onnx::ModelProto P = makeAddModel();
  P.mutable_graph()->mutable_node(1)->set_output(0, "t");
  CapturedDiags D;
  EXPECT_FALSE(importProto(P, D));
  EXPECT_NE(D.Text.find("'t' is defined more than once"), std::string::npos)
      << D.Text;

  onnx::ModelProto Q = makeAddModel();
  *Q.mutable_graph()->add_initializer() = Q.graph().initializer(0);
  CapturedDiags D2;
  EXPECT_FALSE(importProto(Q, D2));
  EXPECT_NE(D2.Text.find("initializer 'w0' is defined more than once"),
            std::string::npos)
      << D2.Text;
}

TEST(ImportExport, UndefinedGraphOutput) {
  onnx::ModelProto P = makeAddModel();
  P.mutable_graph()->mutable_output(0)->set_name("nope");
  CapturedDiags D;
  EXPECT_FALSE(importProto(P, D));
  EXPECT_NE(D.Text.find("graph output 'nope' is not defined"),
            std::string::npos)
      << D.Text;
}

//===----------------------------------------------------------------------===//
// Saving and verification
//===----------------------------------------------------------------------===//

TEST(ImportExport, FailedSaveLeavesNothing) {
  onnx::ModelProto P = makeAddModel();
  // Add(float, int64) fails strict type checking.
  onnx::TensorProto &W1 = *P.mutable_graph()->mutable_initializer(1);
  W1.set_data_type(onnx::TensorProto::INT64);
  W1.add_int64_data(1);
  W1.add_int64_data(2);
  P.mutable_graph()->mutable_initializer(0)->set_raw_data(floatBytes({1, 2}));
  CapturedDiags D;
  std::unique_ptr<Model> M = importProto(P, D);
  ASSERT_TRUE(M) << D.Text;
  TempDir Dir;
  EXPECT_TRUE(
      failed(saveModel(*M, Dir.file("o.onnx"), FileFormat::Binary, D.Diags)));
  EXPECT_NE(D.Text.find("error: "), std::string::npos);
  EXPECT_TRUE(listDir(std::string(Dir.Path)).empty());

  CapturedDiags D2;
  EXPECT_TRUE(
      failed(saveModel(*M, Dir.file("missing/o.onnx"), FileFormat::Binary,
                       D2.Diags, ExportOptions{false})));
  EXPECT_NE(D2.Text.find("cannot create"), std::string::npos) << D2.Text;
  EXPECT_TRUE(listDir(std::string(Dir.Path)).empty());
}

TEST(ImportExport, NewerVersionsWarn) {
  onnx::ModelProto P = makeAddModel();
  P.set_ir_version(10);
  P.mutable_opset_import(0)->set_version(18);
  CapturedDiags D;
  EXPECT_TRUE(succeeded(verifyProto(P, D.Diags)));
  EXPECT_NE(D.Text.find("warning: the onnx checker and strict shape "
                        "inference were skipped: ir_version 10, opset "
                        "ai.onnx 18"),
            std::string::npos)
      << D.Text;
  EXPECT_EQ(D.Diags.getNumErrors(), 0u);
}

TEST(ImportExport, VerifyAcceptsValidModel) {
  onnx::ModelProto P = makeAddModel();
  P.mutable_graph()->mutable_initializer(0)->set_raw_data(floatBytes({1, 2}));
  P.mutable_graph()->mutable_initializer(1)->set_raw_data(floatBytes({3, 4}));
  CapturedDiags D;
  EXPECT_TRUE(succeeded(verifyProto(P, D.Diags))) << D.Text;
  EXPECT_TRUE(D.Text.empty()) << D.Text;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

TEST(ImportExport, TensorStorageForms) {
  auto Typed = std::make_shared<onnx::TensorProto>();
  Typed->set_data_type(onnx::TensorProto::INT16);
  Typed->add_dims(3);
  for (int V : {-1, 2, 300})
    Typed->add_int32_data(V);
  Tensor T = detail::tensorWrappingProto(onnx::TensorProto(*Typed));
  std::string S;
  EXPECT_EQ(T.getByteSize(), 6u);
  EXPECT_EQ(*T.getRawBytes(S), llvm::StringRef("\xff\xff\x02\x00\x2c\x01", 6));
  EXPECT_EQ(*T.toInt64s(), (std::vector<int64_t>{-1, 2, 300}));
  Tensor Raw = Tensor::fromRaw("r", onnx::TensorProto::INT16, {3},
                               llvm::StringRef("\xff\xff\x02\x00\x2c\x01", 6));
  EXPECT_TRUE(T.contentEquals(Raw));
  EXPECT_EQ(T.contentHash(), Raw.contentHash());
  EXPECT_FALSE(T.contentEquals(
      Tensor::fromRaw("r", onnx::TensorProto::UINT16, {3},
                      llvm::StringRef("\xff\xff\x02\x00\x2c\x01", 6))));

  auto Half = std::make_shared<onnx::TensorProto>();
  Half->set_data_type(onnx::TensorProto::FLOAT16);
  Half->add_dims(2);
  Half->add_int32_data(0x3c00); // 1.0
  Half->add_int32_data(0xc000); // -2.0
  Tensor HalfT = detail::tensorWrappingProto(onnx::TensorProto(*Half));
  EXPECT_EQ(*HalfT.toDoubles(), (std::vector<double>{1.0, -2.0}));
  EXPECT_FALSE(HalfT.toInt64s());

  Tensor I = Tensor::fromInt64s("i", {2}, {-5, 1LL << 40});
  EXPECT_EQ(I.getName(), "i");
  EXPECT_EQ(*I.toInt64s(), (std::vector<int64_t>{-5, 1LL << 40}));
  EXPECT_EQ(I.withName("j").getName(), "j");
  EXPECT_EQ(Tensor::fromFloats("f", {}, {2.5f}).getNumElements(), 1);
  EXPECT_EQ(*Tensor::fromFloats("f", {}, {2.5f}).toDoubles(),
            (std::vector<double>{2.5}));
}

//===----------------------------------------------------------------------===//
// Raw data left in the mapped model file
//===----------------------------------------------------------------------===//

namespace {

std::string floatRange(size_t N) {
  std::string S;
  for (size_t I = 0; I < N; ++I) {
    float F = float(I) * 0.5f;
    S.append(reinterpret_cast<const char *>(&F), sizeof(F));
  }
  return S;
}

/// y = Add(Add(x, w0), w1): w0 float[20000] is large (saving copies it in
/// the kernel) and has a doc_string and an unknown field after its raw_data;
/// w1 float[1] is small.
onnx::ModelProto makeLargeWeightModel() {
  onnx::ModelProto P;
  P.set_ir_version(8);
  P.set_producer_name("test");
  auto *Op = P.add_opset_import();
  Op->set_domain("");
  Op->set_version(17);
  onnx::GraphProto &G = *P.mutable_graph();
  G.set_name("adds");
  setTensorType(*G.add_input(), "x", {20000});
  setTensorType(*G.add_output(), "y", {20000});
  for (auto [In, Out] : {std::pair{"x", "t"}, std::pair{"t", "y"}}) {
    auto *N = G.add_node();
    N->set_op_type("Add");
    N->add_input(In);
    N->add_input(std::string(In) == "x" ? "w0" : "w1");
    N->add_output(Out);
  }
  auto *W0 = G.add_initializer();
  W0->set_name("w0");
  W0->set_data_type(onnx::TensorProto::FLOAT);
  W0->add_dims(20000);
  W0->set_raw_data(floatRange(20000));
  W0->set_doc_string("weights");
  W0->GetReflection()->MutableUnknownFields(W0)->AddVarint(1000, 7);
  auto *W1 = G.add_initializer();
  W1->set_name("w1");
  W1->set_data_type(onnx::TensorProto::FLOAT);
  W1->add_dims(1);
  W1->set_raw_data(floatBytes({1}));
  auto *Meta = P.add_metadata_props();
  Meta->set_key("k");
  Meta->set_value("v");
  return P;
}

std::string varint(uint64_t V) {
  std::string S;
  for (; V >= 0x80; V >>= 7)
    S.push_back(char(uint8_t(V) | 0x80));
  S.push_back(char(V));
  return S;
}

/// A length-delimited field.
std::string lenField(uint32_t Number, const std::string &Payload) {
  return varint((Number << 3) | 2) + varint(Payload.size()) + Payload;
}

const Tensor &initializer(const Model &M, llvm::StringRef Name) {
  return findConstant(M, Name)->getInitializer();
}

} // namespace

TEST(ImportExport, LargeRawDataStaysInTheFile) {
  TempDir Dir;
  onnx::ModelProto P = makeLargeWeightModel();
  std::string Bytes = P.SerializeAsString();
  writeFile(Dir.file("m.onnx"), Bytes);
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Dir.file("m.onnx"), D.Diags);
  ASSERT_TRUE(M) << D.Text;
  const Tensor &W0 = initializer(*M, "w0"), &W1 = initializer(*M, "w1");
  ASSERT_TRUE(W0.hasMappedRawData());
  EXPECT_FALSE(W0.isExternal());
  EXPECT_FALSE(W1.hasMappedRawData());
  EXPECT_FALSE(detail::getStoredProto(W0).has_raw_data());
  EXPECT_EQ(W0.getByteSize(), 80000u);
  std::string S;
  EXPECT_EQ(*W0.getRawBytes(S), floatRange(20000));
  EXPECT_EQ((*W0.toDoubles())[3], 1.5);

  // Exported and saved (verified) exactly as read.
  EXPECT_EQ(diff(P, *exportModel(*M)), "");
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("out.onnx"), FileFormat::Binary, D.Diags)))
      << D.Text;
  EXPECT_EQ(readFile(Dir.file("out.onnx")), Bytes);

  // getProto() gives the whole tensor; nothing else changes.
  EXPECT_EQ(detail::getProto(W0).raw_data(), floatRange(20000));
  EXPECT_EQ(detail::getProtoPtr(W0)->raw_data(), floatRange(20000));
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("again.onnx"), FileFormat::Binary, D.Diags)))
      << D.Text;
  EXPECT_EQ(readFile(Dir.file("again.onnx")), Bytes);

  // The text form has the values.
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  printModel(*M, OS);
  EXPECT_NE(OS.str().find("1.5, 2"), std::string::npos);

  // Replacing the file that holds the bytes keeps them valid.
  ASSERT_TRUE(
      succeeded(saveModel(*M, Dir.file("m.onnx"), FileFormat::Binary, D.Diags)))
      << D.Text;
  EXPECT_EQ(*initializer(*M, "w0").getRawBytes(S), floatRange(20000));
  EXPECT_EQ(readFile(Dir.file("m.onnx")), Bytes);
}

TEST(ImportExport, MappedRawDataRenamedOrExternalized) {
  TempDir Dir;
  onnx::ModelProto P = makeLargeWeightModel();
  writeFile(Dir.file("m.onnx"), P.SerializeAsString());
  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Dir.file("m.onnx"), D.Diags);
  ASSERT_TRUE(M) << D.Text;
  Value *W0 = const_cast<Value *>(findConstant(*M, "w0"));
  W0->setName("weights");
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("renamed.onnx"), FileFormat::Binary, D.Diags)))
      << D.Text;
  onnx::ModelProto Want = P;
  Want.mutable_graph()->mutable_node(0)->set_input(1, "weights");
  Want.mutable_graph()->mutable_initializer(0)->set_name("weights");
  EXPECT_EQ(readFile(Dir.file("renamed.onnx")), Want.SerializeAsString());

  ExportOptions Opts;
  Opts.ForceExternal = true;
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("ext.onnx"), FileFormat::Binary, D.Diags, Opts)))
      << D.Text;
  EXPECT_EQ(readFile(Dir.file("ext.onnx.data")), floatRange(20000));
  std::unique_ptr<Model> M2 = loadModel(Dir.file("ext.onnx"), D.Diags);
  ASSERT_TRUE(M2) << D.Text;
  const Tensor &T = initializer(*M2, "weights");
  EXPECT_TRUE(T.isExternal());
  EXPECT_TRUE(T.contentEquals(W0->getInitializer()));
  EXPECT_EQ(detail::getStoredProto(T).doc_string(), "weights");
}

TEST(ImportExport, UnusualTensorEncodingsParseAsProtobufDoes) {
  // w0's raw_data twice (the last wins), w1 with raw_data and float_data,
  // and the graph split over two `graph` fields (protobuf merges them).
  onnx::ModelProto P = makeLargeWeightModel();
  onnx::GraphProto G = P.graph();
  P.clear_graph();
  onnx::TensorProto W0 = G.initializer(0), W1 = G.initializer(1);
  G.clear_initializer();
  W1.set_raw_data(floatRange(400));
  W1.add_float_data(2);
  // Dims that match the raw_data that wins (the importer checks them).
  W0.clear_dims();
  W0.add_dims(310);
  W1.clear_dims();
  W1.add_dims(400);
  std::string Init0 =
      lenField(5, W0.SerializeAsString() + lenField(9, floatRange(310)));
  std::string Init1 = lenField(5, W1.SerializeAsString());
  std::string GraphBytes = G.SerializeAsString() + Init0 + Init1;

  TempDir Dir;
  for (bool Split : {false, true}) {
    std::string Bytes = P.SerializeAsString();
    if (Split)
      Bytes += lenField(7, G.SerializeAsString()) + lenField(7, Init0 + Init1);
    else
      Bytes += lenField(7, GraphBytes);
    onnx::ModelProto Want;
    ASSERT_TRUE(Want.ParseFromString(Bytes));
    ASSERT_EQ(Want.graph().initializer(0).raw_data(), floatRange(310));
    writeFile(Dir.file("m.onnx"), Bytes);
    CapturedDiags D;
    std::unique_ptr<Model> M = loadModel(Dir.file("m.onnx"), D.Diags);
    ASSERT_TRUE(M) << D.Text;
    EXPECT_FALSE(initializer(*M, "w0").hasMappedRawData());
    EXPECT_FALSE(initializer(*M, "w1").hasMappedRawData());
    EXPECT_EQ(diff(Want, *exportModel(*M)), "") << "split: " << Split;
  }
}

TEST(ImportExport, VerifyingLeavesTheSkeletonAlone) {
  // Strict inference would replace the symbolic dims of y and z by 2, fill
  // in the branch outputs' shapes and add value_info for t; the checker needs
  // w's file. None of that may reach the output.
  TempDir Dir;
  writeFile(Dir.file("w.bin"), floatBytes({1, 2}));
  onnx::ModelProto P = makeAddModel();
  onnx::GraphProto &G = *P.mutable_graph();
  G.clear_node();
  G.mutable_initializer()->RemoveLast();
  setExternal(*G.mutable_initializer(0), "w.bin", 0, 8);
  G.mutable_initializer(0)->set_name("w");
  G.mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("N");
  auto *Cond = G.add_input();
  Cond->set_name("c");
  Cond->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  Cond->mutable_type()->mutable_tensor_type()->mutable_shape();
  auto AddNode = [](onnx::GraphProto &In, const char *Op,
                    std::vector<std::string> Ins, const char *Out) {
    auto *N = In.add_node();
    N->set_op_type(Op);
    for (const std::string &I : Ins)
      N->add_input(I);
    N->add_output(Out);
    return N;
  };
  AddNode(G, "Add", {"x", "w"}, "t");
  AddNode(G, "Identity", {"t"}, "y");
  auto *If = AddNode(G, "If", {"c"}, "z");
  for (const char *Branch : {"then_branch", "else_branch"}) {
    auto *A = If->add_attribute();
    A->set_name(Branch);
    A->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto &B = *A->mutable_g();
    B.set_name(Branch);
    AddNode(B, "Identity", {"t"}, "o");
    B.add_output()->set_name("o");
    B.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  }
  auto *Z = G.add_output();
  Z->set_name("z");
  Z->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  Z->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_param("M");
  std::string Bytes = P.SerializeAsString();
  writeFile(Dir.file("m.onnx"), Bytes);

  CapturedDiags D;
  std::unique_ptr<Model> M = loadModel(Dir.file("m.onnx"), D.Diags);
  ASSERT_TRUE(M) << D.Text;
  ASSERT_TRUE(succeeded(
      saveModel(*M, Dir.file("out.onnx"), FileFormat::Binary, D.Diags)))
      << D.Text;
  EXPECT_EQ(D.Text, "");
  EXPECT_EQ(readFile(Dir.file("out.onnx")), Bytes);
  // verifyProto checks the same model.
  EXPECT_TRUE(succeeded(verifyProto(P, D.Diags))) << D.Text;
}

// Names resolve through the model's name entries while importing: a
// subgraph sees its own names first, then its ancestors'; its names end
// with it; siblings do not see each other's; and no entry keeps a value
// after the import.
TEST(ImportExport, SubgraphScopes) {
  const char *Text = R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[N] X, bool C) => (float[N] Y, float[N] Z) {
  T = Neg (X)
  Y = If <then_branch = a () => (float[N] A) {
    T = Abs (X)
    A = Relu (T)
  }, else_branch = b () => (float[N] B) {
    B = Relu (T)
  }> (C)
  Z = Identity (T)
}
)";
  CapturedDiags D;
  std::unique_ptr<Model> M = parseTextModel(Text, D.Diags);
  ASSERT_TRUE(M) << D.Text;
  Graph &G = M->getGraph();
  Node *If = nullptr, *Id = nullptr;
  Value *OuterT = nullptr;
  for (Node &N : G.getNodes()) {
    if (N.is("If"))
      If = &N;
    if (N.is("Identity"))
      Id = &N;
    if (N.is("Neg"))
      OuterT = N.getResult(0);
  }
  ASSERT_TRUE(If && Id && OuterT);
  std::vector<Graph *> Branches = If->getSubgraphs();
  ASSERT_EQ(Branches.size(), 2u);
  // then: its own T (Abs) shadows the outer one.
  Node &ThenRelu = *std::next(Branches[0]->getNodes().begin());
  EXPECT_TRUE(ThenRelu.getOperand(0)->getDefiningNode()->is("Abs"));
  // else: the outer T, not the sibling's.
  Node &ElseRelu = *Branches[1]->getNodes().begin();
  EXPECT_EQ(ElseRelu.getOperand(0), OuterT);
  // After the If, T is the outer one again.
  EXPECT_EQ(Id->getOperand(0), OuterT);
  for (const char *Name : {"T", "X", "A", "B", "Y"}) {
    NameEntry *E = M->findName(Name);
    ASSERT_TRUE(E) << Name;
    EXPECT_EQ(E->getValue().getImportDef(), nullptr) << Name;
  }

  // A subgraph's name is not visible after it.
  const char *Leak = R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[N] X, bool C) => (float[N] Y, float[N] Z) {
  Y = If <then_branch = a () => (float[N] A) {
    Inner = Abs (X)
    A = Relu (Inner)
  }, else_branch = b () => (float[N] B) {
    B = Relu (X)
  }> (C)
  Z = Identity (Inner)
}
)";
  CapturedDiags D2;
  EXPECT_FALSE(parseTextModel(Leak, D2.Diags));
  EXPECT_NE(D2.Text.find("input 'Inner' is not defined"), std::string::npos)
      << D2.Text;
}
