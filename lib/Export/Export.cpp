//===- Export.cpp - Writing models ----------------------------------------===//
//
// Export starts every proto from the residual the importer kept and then sets
// the fields the IR models, so what onnx-opt does not understand is written
// back untouched.
//
// saveModel never holds a second copy of the weights: it builds a "skeleton"
// ModelProto in which the large top-level initializers are metadata only,
// verifies that, and then streams the real initializers straight from the
// IR's TensorProtos while writing. External data is kept by reference when the
// output sits beside its file, else it is copied (from the mmap) into a new
// data file; models beyond protobuf's 2 GB limit move their large tensors to
// external data automatically. Everything is written to temporary files that
// are renamed into place only when all writes succeeded.
//
//===----------------------------------------------------------------------===//

#include "onnxopt/Export/Export.h"
#include "ProtoWire.h"
#include "onnxopt/Analysis/ModernVerify.h"
#include "onnxopt/Analysis/NodeValidation.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Import/Import.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/unknown_field_set.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxopt;
using namespace onnxopt::detail;
namespace pbio = google::protobuf::io;

//===----------------------------------------------------------------------===//
// Tensor copies
//===----------------------------------------------------------------------===//

static void stripDensifiedMarker(onnx::TensorProto &TP) {
  if (!isDensifiedSparse(TP))
    return;
  google::protobuf::UnknownFieldSet *U =
      TP.GetReflection()->MutableUnknownFields(&TP);
  for (int I = U->field_count(); I-- > 0;)
    if (U->field(I).number() == DensifiedSparseMarker)
      U->DeleteSubrange(I, 1);
}

/// Copies everything but the payload (raw_data and the typed fields).
static void copyTensorMetadata(const onnx::TensorProto &S,
                               onnx::TensorProto &D) {
  *D.mutable_dims() = S.dims();
  if (S.has_data_type())
    D.set_data_type(S.data_type());
  if (S.has_segment())
    *D.mutable_segment() = S.segment();
  if (S.has_name())
    D.set_name(S.name());
  if (S.has_doc_string())
    D.set_doc_string(S.doc_string());
  *D.mutable_external_data() = S.external_data();
  if (S.has_data_location())
    D.set_data_location(S.data_location());
  D.GetReflection()->MutableUnknownFields(&D)->MergeFrom(
      S.GetReflection()->GetUnknownFields(S));
  stripDensifiedMarker(D);
}

/// Copies \p T with its payload (mapped raw_data is copied in).
static void copyWholeTensor(const Tensor &T, onnx::TensorProto &Out) {
  Out.CopyFrom(T.getStoredProto());
  stripDensifiedMarker(Out);
  if (T.hasMappedRawData()) {
    std::string Unused;
    llvm::StringRef Bytes = *T.getRawBytes(Unused);
    Out.set_raw_data(Bytes.data(), Bytes.size());
  }
}

/// Stands in for an elided payload. The checker wants one non-empty payload
/// field; shape inference only reads the payloads of the small integer
/// tensors, which are never elided.
static void setPlaceholderPayload(onnx::TensorProto &TP) {
  TP.set_raw_data(std::string(1, '\0'));
}

/// Payloads that verification may need to read (shape tensors) are small
/// integers; larger or non-integer payloads are elided from the skeleton and
/// streamed from the IR at write time.
static bool shouldStream(const Tensor &T) {
  uint64_t Size = T.getByteSize();
  int32_t ET = T.getElemType();
  if (ET == onnx::TensorProto::STRING)
    return false;
  bool Int = ET == onnx::TensorProto::INT64 || ET == onnx::TensorProto::INT32;
  return Size >= (Int ? (uint64_t(1) << 20) : uint64_t(1024));
}

namespace {

/// Where external and streamed tensor bytes go when saving to a file.
struct SaveContext {
  /// Directory of the output file ("" = cwd).
  std::string OutDir;
  /// Name (relative to OutDir) and path of a new external-data file.
  std::string DataName, DataPath;
  /// Move inline tensors of at least Threshold bytes to the data file.
  bool Externalize = false;
  uint64_t Threshold = 1024;
  /// Never keep references into this file (it is about to be replaced).
  std::string NoKeepPath;
  /// Keep every reference as written (stdout and text: no data file).
  bool KeepAll = false;

  /// Bytes for the new data file, in file order.
  struct Chunk {
    const Tensor *T;
    uint64_t Offset;
  };
  std::vector<Chunk> Chunks;
  uint64_t DataSize = 0;
  /// Files whose references were kept.
  llvm::StringSet<> KeptFiles;
};

class Exporter {
public:
  explicit Exporter(SaveContext *Save = nullptr) : Save(Save) {}

  void exportModel(const Model &M, onnx::ModelProto &MP);
  /// For the main graph with streaming: the IR tensor each skeleton
  /// initializer stands for, or null when the skeleton entry is complete.
  std::vector<const Tensor *> Streamed;

private:
  void exportGraph(const Graph &G, onnx::GraphProto &GP, bool IsMain);
  void exportInitializers(const Graph &G, onnx::GraphProto &GP, bool IsMain);
  void exportValueInfos(const Graph &G, onnx::GraphProto &GP);
  void exportNode(const Node &N, onnx::NodeProto &NP);
  void exportAttribute(const Attribute &A, onnx::AttributeProto &AP);
  void exportValueInfo(const Value &V, onnx::ValueInfoProto &VI);
  /// Writes \p T named \p Name into \p Out; returns true when the payload was
  /// elided because it will be streamed.
  bool exportTensor(const Tensor &T, llvm::StringRef Name,
                    onnx::TensorProto &Out, bool MayStream);
  bool keepReference(const ExternalLocation &Ext);
  void moveToDataFile(const Tensor &T, onnx::TensorProto &Out);

  SaveContext *Save;
};

} // namespace

bool Exporter::keepReference(const ExternalLocation &Ext) {
  if (Save->KeepAll)
    return true;
  // Only references under the output's directory are kept: absolute and
  // '..' locations (read with --allow-external-data-outside) are copied into
  // the data file beside the output, so the output loads without the flag.
  if (llvm::sys::path::is_absolute(Ext.Location))
    return false;
  for (auto I = llvm::sys::path::begin(Ext.Location),
            E = llvm::sys::path::end(Ext.Location);
       I != E; ++I)
    if (*I == "..")
      return false;
  llvm::SmallString<256> Resolved(Save->OutDir);
  llvm::sys::path::append(Resolved, Ext.Location);
  bool Same = false;
  std::string MappedPath = Ext.File ? Ext.File->getPath().str() : "";
  if (llvm::sys::fs::equivalent(Resolved, MappedPath, Same) || !Same)
    return false;
  bool Replaced = false;
  if (!Save->NoKeepPath.empty() &&
      !llvm::sys::fs::equivalent(MappedPath, Save->NoKeepPath, Replaced) &&
      Replaced)
    return false;
  Save->KeptFiles.insert(MappedPath);
  return true;
}

void Exporter::moveToDataFile(const Tensor &T, onnx::TensorProto &Out) {
  copyTensorMetadata(T.getStoredProto(), Out);
  Out.clear_external_data();
  Out.set_data_location(onnx::TensorProto::EXTERNAL);
  uint64_t Length = T.getByteSize();
  // Large tensors start on a 64 KiB boundary so runtimes can mmap them.
  uint64_t Align = Length >= (uint64_t(1) << 20) ? 65536 : 16;
  uint64_t Offset = (Save->DataSize + Align - 1) / Align * Align;
  Save->Chunks.push_back({&T, Offset});
  Save->DataSize = Offset + Length;
  auto Add = [&](const char *Key, std::string Val) {
    onnx::StringStringEntryProto *E = Out.add_external_data();
    E->set_key(Key);
    E->set_value(std::move(Val));
  };
  Add("location", Save->DataName);
  Add("offset", std::to_string(Offset));
  Add("length", std::to_string(Length));
}

bool Exporter::exportTensor(const Tensor &T, llvm::StringRef Name,
                            onnx::TensorProto &Out, bool MayStream) {
  const onnx::TensorProto &P = T.getStoredProto();
  auto SetName = [&] {
    if (P.name() != Name)
      Out.set_name(Name.str());
  };
  if (!Save) {
    copyWholeTensor(T, Out);
    SetName();
    return false;
  }
  if (T.isExternal()) {
    if (keepReference(*T.getExternal()))
      copyTensorMetadata(P, Out);
    else
      moveToDataFile(T, Out);
    SetName();
    return false;
  }
  bool IsString = T.getElemType() == onnx::TensorProto::STRING;
  if (Save->Externalize && !IsString && T.getByteSize() >= Save->Threshold) {
    moveToDataFile(T, Out);
    SetName();
    return false;
  }
  // Streaming writes the IR's proto as it is, so only when nothing changes;
  // mapped raw_data is written after the skeleton's metadata, so renaming is
  // fine.
  bool Unchanged = P.name() == Name && !isDensifiedSparse(P);
  if (MayStream && (Unchanged || T.hasMappedRawData()) && shouldStream(T)) {
    copyTensorMetadata(P, Out);
    setPlaceholderPayload(Out);
    SetName();
    return true;
  }
  copyWholeTensor(T, Out);
  SetName();
  return false;
}

void Exporter::exportValueInfo(const Value &V, onnx::ValueInfoProto &VI) {
  if (!V.Residual.empty())
    VI.ParseFromString(V.Residual);
  VI.set_name(V.getName().str());
  if (!V.getType().isNone())
    exportType(V.getType(), *VI.mutable_type());
}

void Exporter::exportAttribute(const Attribute &A, onnx::AttributeProto &AP) {
  if (!A.Residual.empty())
    AP.ParseFromString(A.Residual);
  AP.set_name(A.Name);
  if (A.Kind != AttrKind::Undefined)
    AP.set_type(static_cast<onnx::AttributeProto::AttributeType>(A.Kind));
  switch (A.Kind) {
  case AttrKind::Float:
    AP.set_f(A.F);
    break;
  case AttrKind::Int:
    AP.set_i(A.I);
    break;
  case AttrKind::String:
    AP.set_s(A.S);
    break;
  case AttrKind::Tensor:
    if (!A.Tensors.empty() && A.Tensors[0])
      exportTensor(A.Tensors[0], A.Tensors[0].getName(), *AP.mutable_t(),
                   false);
    break;
  case AttrKind::Graph:
    if (!A.Graphs.empty())
      exportGraph(*A.Graphs[0], *AP.mutable_g(), false);
    break;
  case AttrKind::Floats:
    AP.mutable_floats()->Add(A.Floats.begin(), A.Floats.end());
    break;
  case AttrKind::Ints:
    AP.mutable_ints()->Add(A.Ints.begin(), A.Ints.end());
    break;
  case AttrKind::Strings:
    for (const std::string &S : A.Strings)
      AP.add_strings(S);
    break;
  case AttrKind::Tensors:
    for (const Tensor &T : A.Tensors)
      if (T)
        exportTensor(T, T.getName(), *AP.add_tensors(), false);
    break;
  case AttrKind::Graphs:
    for (const std::unique_ptr<Graph> &G : A.Graphs)
      exportGraph(*G, *AP.add_graphs(), false);
    break;
  default:
    break; // carried by the residual
  }
}

void Exporter::exportNode(const Node &N, onnx::NodeProto &NP) {
  if (!N.Residual.empty())
    NP.ParseFromString(N.Residual);
  for (Value *V : N.getOperands())
    NP.add_input(V ? V->getName().str() : std::string());
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *R = N.getResult(I);
    NP.add_output(R ? R->getName().str() : std::string());
  }
  if (!N.getName().empty())
    NP.set_name(N.getName().str());
  NP.set_op_type(N.getOpType().str());
  if (!N.getDomain().empty())
    NP.set_domain(N.getDomain().str());
  for (const Attribute &A : N.getAttrs())
    exportAttribute(A, *NP.add_attribute());
}

/// Initializers in their import order, new ones after them in creation
/// order. Constants made from sparse initializers are written back sparse.
void Exporter::exportInitializers(const Graph &G, onnx::GraphProto &GP,
                                  bool IsMain) {
  llvm::StringSet<> SparseNames;
  for (const onnx::SparseTensorProto &SP : GP.sparse_initializer())
    SparseNames.insert(SP.values().name());
  llvm::StringSet<> KeepSparse;

  std::vector<const Value *> Inits;
  for (const auto &V : G.getConstants()) {
    if (!V->hasInitializer())
      continue;
    if (isDensifiedSparse(V->getInitializer().getStoredProto()) &&
        SparseNames.count(V->getName())) {
      KeepSparse.insert(V->getName());
      continue;
    }
    Inits.push_back(V.get());
  }
  for (const auto &V : G.getInputs()) {
    if (V->hasInitializer())
      Inits.push_back(V.get());
    else
      KeepSparse.insert(V->getName()); // a sparse default value
  }
  std::stable_sort(Inits.begin(), Inits.end(),
                   [](const Value *A, const Value *B) {
                     return A->InitOrder < B->InitOrder;
                   });
  for (const Value *V : Inits) {
    bool Elided = exportTensor(V->getInitializer(), V->getName(),
                               *GP.add_initializer(), IsMain);
    if (IsMain)
      Streamed.push_back(Elided ? &V->getInitializer() : nullptr);
  }

  // Drop sparse initializers whose constant a pass removed or replaced.
  auto *Sparse = GP.mutable_sparse_initializer();
  for (int I = Sparse->size(); I-- > 0;)
    if (!KeepSparse.count(Sparse->Get(I).values().name()))
      Sparse->DeleteSubrange(I, 1);
}

/// value_info: the entries that were imported keep their position among the
/// carried ones (orphans fill the gaps), new ones follow in node order.
void Exporter::exportValueInfos(const Graph &G, onnx::GraphProto &GP) {
  std::vector<const Value *> Infos;
  for (const auto &V : G.getConstants())
    if (V->HadValueInfo)
      Infos.push_back(V.get());
  for (const Node &N : G.getNodes()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I) {
      const Value *R = N.getResult(I);
      if (R && !R->isOutputOf(G) && (R->HadValueInfo || !R->getType().isNone()))
        Infos.push_back(R);
    }
  }
  std::stable_sort(Infos.begin(), Infos.end(),
                   [](const Value *A, const Value *B) {
                     return A->InfoOrder < B->InfoOrder;
                   });
  size_t NextOrphan = 0;
  uint64_t Pos = 0;
  auto EmitOrphan = [&] {
    GP.add_value_info()->ParseFromString(G.OrphanValueInfos[NextOrphan++]);
    ++Pos;
  };
  for (const Value *V : Infos) {
    while (NextOrphan < G.OrphanValueInfos.size() && Pos < V->InfoOrder)
      EmitOrphan();
    exportValueInfo(*V, *GP.add_value_info());
    ++Pos;
  }
  while (NextOrphan < G.OrphanValueInfos.size())
    EmitOrphan();
}

void Exporter::exportGraph(const Graph &G, onnx::GraphProto &GP, bool IsMain) {
  if (!G.Residual.empty())
    GP.ParseFromString(G.Residual);
  if (!G.getName().empty())
    GP.set_name(G.getName().str());
  GP.mutable_node()->Reserve(G.getNumNodes());
  for (const Node &N : G.getNodes())
    exportNode(N, *GP.add_node());
  exportInitializers(G, GP, IsMain);
  for (const auto &V : G.getInputs())
    exportValueInfo(*V, *GP.add_input());
  for (const Value *V : G.getOutputs())
    exportValueInfo(*V, *GP.add_output());
  exportValueInfos(G, GP);
}

void Exporter::exportModel(const Model &M, onnx::ModelProto &MP) {
  if (!M.Residual.empty())
    MP.ParseFromString(M.Residual);
  MP.set_ir_version(M.getIrVersion());

  // The residual holds the original opset list only when it carried more than
  // (domain, version); it is used while the IR's list still matches.
  const std::vector<OpsetImport> &Opsets = M.getOpsetImports();
  bool Matches = MP.opset_import_size() == int(Opsets.size());
  for (int I = 0; Matches && I < MP.opset_import_size(); ++I)
    Matches = MP.opset_import(I).domain() == Opsets[I].Domain &&
              MP.opset_import(I).version() == Opsets[I].Version;
  if (!Matches) {
    MP.clear_opset_import();
    for (const OpsetImport &O : Opsets) {
      onnx::OperatorSetIdProto *P = MP.add_opset_import();
      P->set_domain(O.Domain);
      P->set_version(O.Version);
    }
  }
  exportGraph(M.getGraph(), *MP.mutable_graph(), true);
}

std::unique_ptr<onnx::ModelProto> onnxopt::exportModel(const Model &M) {
  auto MP = std::make_unique<onnx::ModelProto>();
  Exporter().exportModel(M, *MP);
  return MP;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// Turns \p T into metadata plus a placeholder payload.
static void thinTensor(const onnx::TensorProto &T, onnx::TensorProto &Out) {
  copyTensorMetadata(T, Out);
  Out.clear_external_data();
  Out.clear_data_location();
  setPlaceholderPayload(Out);
}

static bool isExternal(const onnx::TensorProto &T) {
  return T.data_location() == onnx::TensorProto::EXTERNAL;
}

namespace {

/// Readies a model for the checker and strict shape inference in place and,
/// with Restore, puts it back on destruction, so that saveModel verifies its
/// skeleton without copying it:
/// - external tensors become placeholders (the checker would look for their
///   files relative to the current directory);
/// - inference merges what it infers into the types of the inputs, outputs
///   and value_info of the graphs it visits (the main graph and, through
///   node attributes, its subgraphs) and appends value_info entries: those
///   three lists are saved and swapped back.
class VerificationScope {
public:
  VerificationScope(onnx::ModelProto &P, bool Restore) : Restore(Restore) {
    for (onnx::FunctionProto &F : *P.mutable_functions())
      for (onnx::NodeProto &N : *F.mutable_node())
        visit(N, /*Inferred=*/false);
    for (onnx::TrainingInfoProto &TI : *P.mutable_training_info()) {
      visit(*TI.mutable_initialization(), false);
      visit(*TI.mutable_algorithm(), false);
    }
    if (P.has_graph())
      visit(*P.mutable_graph(), true);
  }

  ~VerificationScope() {
    for (auto &[T, Saved] : Tensors)
      T->Swap(&Saved);
    for (SavedInfos &S : Infos) {
      S.G->mutable_input()->Swap(&S.Input);
      S.G->mutable_output()->Swap(&S.Output);
      S.G->mutable_value_info()->Swap(&S.ValueInfo);
    }
  }

private:
  struct SavedInfos {
    onnx::GraphProto *G;
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> Input, Output,
        ValueInfo;
  };

  void visit(onnx::TensorProto &T) {
    if (!isExternal(T))
      return;
    onnx::TensorProto Thin;
    thinTensor(T, Thin);
    if (Restore) {
      Tensors.emplace_back(&T, onnx::TensorProto());
      Tensors.back().second.Swap(&T);
    }
    T.Swap(&Thin);
  }

  void visit(onnx::GraphProto &G, bool Inferred) {
    if (Inferred && Restore)
      Infos.push_back({&G, G.input(), G.output(), G.value_info()});
    for (onnx::TensorProto &T : *G.mutable_initializer())
      visit(T);
    for (onnx::SparseTensorProto &S : *G.mutable_sparse_initializer()) {
      visit(*S.mutable_values());
      visit(*S.mutable_indices());
    }
    for (onnx::NodeProto &N : *G.mutable_node())
      visit(N, Inferred);
  }

  void visit(onnx::NodeProto &N, bool Inferred) {
    for (onnx::AttributeProto &A : *N.mutable_attribute()) {
      if (A.has_t())
        visit(*A.mutable_t());
      for (onnx::TensorProto &T : *A.mutable_tensors())
        visit(T);
      if (A.has_g())
        visit(*A.mutable_g(), Inferred);
      for (onnx::GraphProto &G : *A.mutable_graphs())
        visit(G, Inferred);
    }
  }

  bool Restore;
  std::vector<std::pair<onnx::TensorProto *, onnx::TensorProto>> Tensors;
  std::vector<SavedInfos> Infos;
};

} // namespace

/// A copy for verification: payloads of large initializers and of external
/// tensors become placeholders (the checker and inference only need their
/// metadata), so verifying never duplicates the weights.
static void copyForVerification(const onnx::ModelProto &P,
                                onnx::ModelProto &C) {
  // Field by field, so that the main graph's initializers can be thinned
  // while they are copied (VerificationScope thins the other tensors).
  C.set_ir_version(P.ir_version());
  *C.mutable_opset_import() = P.opset_import();
  *C.mutable_metadata_props() = P.metadata_props();
  *C.mutable_training_info() = P.training_info();
  *C.mutable_functions() = P.functions();
  if (P.has_producer_name())
    C.set_producer_name(P.producer_name());
  if (P.has_producer_version())
    C.set_producer_version(P.producer_version());
  if (P.has_domain())
    C.set_domain(P.domain());
  if (P.has_model_version())
    C.set_model_version(P.model_version());
  if (!P.has_graph())
    return;
  const onnx::GraphProto &G = P.graph();
  onnx::GraphProto &CG = *C.mutable_graph();
  *CG.mutable_node() = G.node();
  if (G.has_name())
    CG.set_name(G.name());
  *CG.mutable_input() = G.input();
  *CG.mutable_output() = G.output();
  *CG.mutable_value_info() = G.value_info();
  *CG.mutable_sparse_initializer() = G.sparse_initializer();
  *CG.mutable_quantization_annotation() = G.quantization_annotation();
  for (const onnx::TensorProto &T : G.initializer()) {
    onnx::TensorProto &CT = *CG.add_initializer();
    // A non-owning handle, only to measure the payload.
    Tensor Handle(
        std::shared_ptr<const onnx::TensorProto>(std::shared_ptr<void>(), &T));
    if (isExternal(T) || shouldStream(Handle))
      thinTensor(T, CT);
    else
      CT.CopyFrom(T);
  }
}

/// Returns a description of what ONNX 1.12 cannot check in \p P, or "".
static std::string unsupportedVersions(const onnx::ModelProto &P) {
  std::string Why;
  if (P.ir_version() > onnx::IR_VERSION)
    Why += "ir_version " + std::to_string(P.ir_version());
  const auto &Known =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto CheckOpsets = [&](const auto &Opsets) {
    for (const onnx::OperatorSetIdProto &O : Opsets) {
      std::string Domain = O.domain() == "ai.onnx" ? "" : O.domain();
      auto It = Known.find(Domain);
      if (It == Known.end() || O.version() <= It->second.second)
        continue;
      std::string What = "opset " +
                         (Domain.empty() ? std::string("ai.onnx") : Domain) +
                         " " + std::to_string(O.version());
      if (Why.find(What) == std::string::npos)
        Why += (Why.empty() ? "" : ", ") + What;
    }
  };
  CheckOpsets(P.opset_import());
  for (const onnx::FunctionProto &F : P.functions())
    CheckOpsets(F.opset_import());
  return Why;
}

/// Runs the checker and strict shape inference on \p P, which is changed
/// while they run and, with \p Restore, put back afterwards.
static LogicalResult verifyInPlace(onnx::ModelProto &P, bool Restore,
                                   DiagnosticEngine &Diags) {
  std::string TooNew = unsupportedVersions(P);
  VerificationScope Scope(P, Restore);
  if (!TooNew.empty()) {
    // ONNX 1.12 cannot check this model: the analysis layer's verifier
    // (per-node schema check from the op table, strict inference) instead,
    // on a thin copy in our IR.
    std::string Checked;
    {
      onnx::ModelProto Copy;
      copyForVerification(P, Copy);
      ImportOptions Skeleton;
      Skeleton.PlaceholderPayloads = true;
      std::unique_ptr<Model> M =
          importModel(std::move(Copy), "", Diags, Skeleton);
      ModernVerifyReport Report;
      if (!M || failed(verifyModernModel(*M, Diags, Report)))
        return failure();
      Checked = Report.describe();
    }
    emitWarning(Diags) << "the onnx checker and strict shape inference were "
                          "skipped: "
                       << TooNew
                       << " is newer than ONNX 1.12 supports (ir_version <= "
                       << onnx::IR_VERSION << ", ai.onnx opset <= 17, "
                       << "ai.onnx.ml opset <= 3)"
                       << (Checked.empty() ? "" : "; ") << Checked;
    return success();
  }
  try {
    onnx::checker::check_model(P);
  } catch (const std::exception &E) {
    return emitError(Diags)
           << "onnx checker: " << llvm::StringRef(E.what()).trim();
  } catch (...) {
    return emitError(Diags) << "onnx checker: unknown exception";
  }
  try {
    onnx::ShapeInferenceOptions Opts(/*check_type=*/true, /*strict_mode=*/1,
                                     /*data_prop=*/false);
    onnx::shape_inference::InferShapes(P, onnx::OpSchemaRegistry::Instance(),
                                       Opts);
  } catch (const std::exception &E) {
    return emitError(Diags)
           << "strict shape inference: " << llvm::StringRef(E.what()).trim();
  } catch (...) {
    return emitError(Diags) << "strict shape inference: unknown exception";
  }
  return success();
}

LogicalResult onnxopt::verifyProto(const onnx::ModelProto &P,
                                   DiagnosticEngine &Diags) {
  onnx::ModelProto Copy;
  copyForVerification(P, Copy);
  return verifyInPlace(Copy, /*Restore=*/false, Diags);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

/// A file written under a temporary name and renamed into place; removed
/// unless committed.
class TempFile {
public:
  ~TempFile() { discard(); }

  LogicalResult create(const std::string &Final, DiagnosticEngine &Diags) {
    FinalPath = Final;
    // Devices and pipes (/dev/null, /dev/stdout, a FIFO) are written in
    // place: renaming a temporary over them would replace the device node.
    struct stat St;
    if (::stat(Final.c_str(), &St) == 0 && !S_ISREG(St.st_mode)) {
      if (S_ISDIR(St.st_mode))
        return emitError(Diags)
               << "cannot write '" << Final << "': it is a directory";
      FD = ::open(Final.c_str(), O_WRONLY | O_CLOEXEC);
      if (FD < 0)
        return emitError(Diags)
               << "cannot open '" << Final << "': " << std::strerror(errno);
      return success();
    }
    // A symbolic link to a file (a user's link, or /dev/stdout ->
    // /proc/self/fd/1 redirected to a file) is followed: renaming over the
    // link would replace the link itself, and /dev/stdout for everyone.
    std::string Target = Final;
    struct stat Link;
    if (::lstat(Final.c_str(), &Link) == 0 && S_ISLNK(Link.st_mode)) {
      char *Real = ::realpath(Final.c_str(), nullptr);
      if (!Real)
        return emitError(Diags)
               << "cannot write '" << Final << "': " << std::strerror(errno);
      Target = Real;
      std::free(Real);
      FinalPath = Target;
    }
    std::string Template = Target + ".tmp.XXXXXX";
    std::vector<char> Buf(Template.begin(), Template.end());
    Buf.push_back('\0');
    FD = ::mkostemp(Buf.data(), O_CLOEXEC);
    if (FD < 0)
      return emitError(Diags)
             << "cannot create '" << Final << "': " << std::strerror(errno);
    Path = Buf.data();
    // mkstemp creates 0600; give the file the permissions of a new file.
    mode_t Mask = ::umask(0);
    ::umask(Mask);
    ::fchmod(FD, 0666 & ~Mask);
    return success();
  }

  int getFD() const { return FD; }

  LogicalResult close(DiagnosticEngine &Diags) {
    if (FD >= 0 && ::close(FD) != 0) {
      FD = -1;
      return emitError(Diags)
             << "cannot write '" << FinalPath << "': " << std::strerror(errno);
    }
    FD = -1;
    return success();
  }

  LogicalResult commit(DiagnosticEngine &Diags) {
    if (failed(close(Diags)))
      return failure();
    if (Path.empty()) // written in place (a device or pipe)
      return success();
    if (::rename(Path.c_str(), FinalPath.c_str()) != 0)
      return emitError(Diags) << "cannot rename '" << Path << "' to '"
                              << FinalPath << "': " << std::strerror(errno);
    Path.clear();
    return success();
  }

  void discard() {
    if (FD >= 0)
      ::close(FD);
    FD = -1;
    if (!Path.empty())
      ::unlink(Path.c_str());
    Path.clear();
  }

private:
  std::string FinalPath, Path;
  int FD = -1;
};

/// How one initializer of the main graph is written.
struct InitEntry {
  /// The IR tensor whose payload is streamed, or null when the skeleton
  /// entry is complete.
  const Tensor *Streamed = nullptr;
  /// For mapped raw_data: the entry's other fields as protobuf writes them,
  /// and the offset where raw_data goes among them.
  std::string Header;
  size_t RawAt = 0;
  /// Serialized size of the TensorProto.
  size_t Size = 0;
};

/// The skeleton split around the fields that are streamed: the model's
/// fields before `graph` (1-6), the graph's fields before `initializer`
/// (node, name), the initializers, and the rest of each, so the bytes are
/// exactly what protobuf would write (fields in number order).
struct SplitModel {
  onnx::ModelProto Head, Tail;
  onnx::GraphProto GraphHead, GraphTail;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> Inits;
  std::vector<InitEntry> Entries;
  size_t GraphSize = 0, TotalSize = 0;
};

constexpr uint32_t GraphTag = (7 << 3) | 2;       // ModelProto.graph
constexpr uint32_t InitializerTag = (5 << 3) | 2; // GraphProto.initializer

/// Block size of the buffered writer (protobuf's default is 8 KiB).
constexpr int StreamBlockSize = 1 << 20;
/// Smaller mapped ranges go through the buffer (cheaper than a flush and a
/// system call).
constexpr uint64_t MinCopiedRange = 64 << 10;

bool writeAll(int FD, const char *Data, uint64_t Size) {
  while (Size) {
    ssize_t N = ::write(FD, Data, std::min<uint64_t>(Size, 1 << 30));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Data += N;
    Size -= uint64_t(N);
  }
  return true;
}

/// Appends [Offset, Offset + Length) of a mapped file to \p OutFD at its
/// current position: copy_file_range copies in the kernel (no page of the
/// mapping is touched); where it is unsupported (another file system, a
/// pipe) sendfile does; failing both, the bytes are written from the
/// mapping, whose pages are dropped once written so that RSS stays flat.
/// Returns false with errno set.
class RangeCopier {
public:
  bool copy(const MappedFile &F, uint64_t Offset, uint64_t Length, int OutFD) {
    while (Length && UseCopyRange && F.getFD() >= 0) {
      loff_t In = loff_t(Offset);
      ssize_t N = ::copy_file_range(F.getFD(), &In, OutFD, nullptr,
                                    std::min<uint64_t>(Length, 1 << 30), 0);
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0) {
        // Real write errors come back from write() below.
        UseCopyRange = false;
        break;
      }
      Offset += uint64_t(N);
      Length -= uint64_t(N);
    }
    // sendfile also writes to pipes and across file systems.
    while (Length && UseSendfile && F.getFD() >= 0) {
      off_t In = off_t(Offset);
      ssize_t N = ::sendfile(OutFD, F.getFD(), &In,
                             std::min<uint64_t>(Length, 1 << 30));
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0) {
        UseSendfile = false;
        break;
      }
      Offset += uint64_t(N);
      Length -= uint64_t(N);
    }
    const uint64_t Step = uint64_t(64) << 20;
    const uintptr_t Page = uintptr_t(::sysconf(_SC_PAGESIZE));
    while (Length) {
      uint64_t N = std::min(Step, Length);
      const char *Data = F.data() + Offset;
      if (!writeAll(OutFD, Data, N))
        return false;
      // Drop whole pages of the read-only mapping; they reload on demand.
      uintptr_t Begin = reinterpret_cast<uintptr_t>(Data);
      uintptr_t End = (Begin + N) / Page * Page;
      Begin = (Begin + Page - 1) / Page * Page;
      if (End > Begin)
        ::madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_DONTNEED);
      Offset += N;
      Length -= N;
    }
    return true;
  }

private:
  bool UseCopyRange = true, UseSendfile = true;
};

/// A buffered protobuf writer (1 MiB blocks) into which mapped byte ranges
/// are copied directly, bypassing the buffer.
class ModelWriter {
public:
  explicit ModelWriter(int FD) : FD(FD), Out(FD, StreamBlockSize) {}

  pbio::CodedOutputStream &coded() { return Coded; }

  /// Writes the mapped bytes at \p Loc. Small ranges are read with pread
  /// into the buffer (touching the mapping would fault its pages in), large
  /// ones are copied in the kernel.
  bool writeMapped(const ExternalLocation &Loc) {
    if (Loc.Length < MinCopiedRange) {
      Scratch.resize(size_t(Loc.Length));
      const char *Data = Loc.File->data() + Loc.Offset;
      if (::pread(Loc.File->getFD(), &Scratch[0], Scratch.size(),
                  off_t(Loc.Offset)) == ssize_t(Scratch.size()))
        Data = Scratch.data();
      Coded.WriteRaw(Data, int(Loc.Length));
      return true;
    }
    Coded.Trim();
    if (!Out.Flush())
      return false;
    if (Copier.copy(*Loc.File, Loc.Offset, Loc.Length, FD))
      return true;
    Errno = errno;
    return false;
  }

  bool finish() {
    Coded.Trim();
    return !Coded.HadError() && Out.Flush();
  }

  int getErrno() const { return Errno ? Errno : Out.GetErrno(); }

private:
  int FD;
  pbio::FileOutputStream Out;
  pbio::CodedOutputStream Coded{&Out};
  RangeCopier Copier;
  std::string Scratch;
  int Errno = 0;
};

} // namespace

static void splitModel(onnx::ModelProto &&Skeleton,
                       std::vector<const Tensor *> Streamed, SplitModel &S) {
  onnx::GraphProto &G = *Skeleton.mutable_graph();
  S.Inits.Swap(G.mutable_initializer());
  S.GraphHead.mutable_node()->Swap(G.mutable_node());
  if (G.has_name()) {
    S.GraphHead.set_name(G.name());
    G.clear_name();
  }
  S.GraphTail.Swap(&G);
  Skeleton.clear_graph();

  onnx::ModelProto &H = S.Head;
  if (Skeleton.has_ir_version())
    H.set_ir_version(Skeleton.ir_version());
  if (Skeleton.has_producer_name())
    H.set_producer_name(Skeleton.producer_name());
  if (Skeleton.has_producer_version())
    H.set_producer_version(Skeleton.producer_version());
  if (Skeleton.has_domain())
    H.set_domain(Skeleton.domain());
  if (Skeleton.has_model_version())
    H.set_model_version(Skeleton.model_version());
  if (Skeleton.has_doc_string())
    H.set_doc_string(Skeleton.doc_string());
  Skeleton.clear_ir_version();
  Skeleton.clear_producer_name();
  Skeleton.clear_producer_version();
  Skeleton.clear_domain();
  Skeleton.clear_model_version();
  Skeleton.clear_doc_string();
  S.Tail.Swap(&Skeleton);

  size_t GraphSize = S.GraphHead.ByteSizeLong() + S.GraphTail.ByteSizeLong();
  S.Entries.resize(S.Inits.size());
  for (int I = 0; I < S.Inits.size(); ++I) {
    InitEntry &E = S.Entries[I];
    E.Streamed = Streamed[I];
    if (E.Streamed && E.Streamed->hasMappedRawData()) {
      // The skeleton entry has the metadata (and the name) to write.
      onnx::TensorProto &Meta = *S.Inits.Mutable(I);
      Meta.clear_raw_data();
      Meta.SerializeToString(&E.Header);
      E.RawAt = rawDataInsertionPoint(E.Header);
      uint64_t Length = E.Streamed->getExternal()->Length;
      E.Size = E.Header.size() + 1 + varintSize(Length) + Length;
    } else if (E.Streamed) {
      E.Size = E.Streamed->getStoredProto().ByteSizeLong();
    } else {
      E.Size = S.Inits.Get(I).ByteSizeLong();
    }
    GraphSize += 1 + pbio::CodedOutputStream::VarintSize64(E.Size) + E.Size;
  }
  S.GraphSize = GraphSize;
  S.TotalSize = S.Head.ByteSizeLong() + 1 +
                pbio::CodedOutputStream::VarintSize64(GraphSize) + GraphSize +
                S.Tail.ByteSizeLong();
}

/// Streams the split model to \p FD.
static LogicalResult writeModel(SplitModel &S, int FD, llvm::StringRef Path,
                                DiagnosticEngine &Diags) {
  ModelWriter W(FD);
  pbio::CodedOutputStream &Coded = W.coded();
  auto Fail = [&] {
    int Err = W.getErrno();
    return emitError(Diags)
           << "cannot write '" << Path
           << "': " << (Err ? std::strerror(Err) : "write error");
  };
  S.Head.SerializeWithCachedSizes(&Coded);
  Coded.WriteTag(GraphTag);
  Coded.WriteVarint64(S.GraphSize);
  S.GraphHead.SerializeWithCachedSizes(&Coded);
  for (int I = 0; I < S.Inits.size(); ++I) {
    const InitEntry &E = S.Entries[I];
    Coded.WriteTag(InitializerTag);
    Coded.WriteVarint64(E.Size);
    if (!E.Streamed) {
      S.Inits.Get(I).SerializeWithCachedSizes(&Coded);
    } else if (!E.Streamed->hasMappedRawData()) {
      E.Streamed->getStoredProto().SerializeWithCachedSizes(&Coded);
    } else {
      const ExternalLocation &Loc = *E.Streamed->getExternal();
      Coded.WriteRaw(E.Header.data(), int(E.RawAt));
      Coded.WriteTag(RawDataTag);
      Coded.WriteVarint64(Loc.Length);
      if (!W.writeMapped(Loc))
        return Fail();
      Coded.WriteRaw(E.Header.data() + E.RawAt, int(E.Header.size() - E.RawAt));
    }
  }
  S.GraphTail.SerializeWithCachedSizes(&Coded);
  S.Tail.SerializeWithCachedSizes(&Coded);
  if (!W.finish())
    return Fail();
  return success();
}

/// Writes the bytes of the tensors moved to the new data file. Mapped bytes
/// are copied in the kernel, runs of adjacent tensors at once.
static LogicalResult writeDataFile(const SaveContext &Ctx, int FD,
                                   DiagnosticEngine &Diags) {
  uint64_t Pos = 0;
  const std::string Zeros(65536, '\0');
  RangeCopier Copier;
  auto Fail = [&] {
    return emitError(Diags)
           << "cannot write '" << Ctx.DataPath << "': " << std::strerror(errno);
  };
  const std::vector<SaveContext::Chunk> &Chunks = Ctx.Chunks;
  for (size_t I = 0; I < Chunks.size();) {
    const SaveContext::Chunk &C = Chunks[I];
    while (Pos < C.Offset) {
      uint64_t N = std::min<uint64_t>(C.Offset - Pos, Zeros.size());
      if (!writeAll(FD, Zeros.data(), N))
        return Fail();
      Pos += N;
    }
    if (const std::optional<ExternalLocation> &Loc = C.T->getExternal()) {
      // Extend the run while the next tensor follows in both files.
      uint64_t Length = Loc->Length;
      size_t J = I + 1;
      for (; J < Chunks.size(); ++J) {
        const std::optional<ExternalLocation> &Next =
            Chunks[J].T->getExternal();
        if (!Next || Next->File != Loc->File ||
            Next->Offset != Loc->Offset + Length ||
            Chunks[J].Offset != C.Offset + Length)
          break;
        Length += Next->Length;
      }
      if (!Copier.copy(*Loc->File, Loc->Offset, Length, FD))
        return Fail();
      Pos += Length;
      I = J;
      continue;
    }
    std::string Storage;
    std::optional<llvm::StringRef> Bytes = C.T->getRawBytes(Storage);
    if (!Bytes)
      return emitError(Diags) << "tensor '" << C.T->getName()
                              << "' has no raw form for external data";
    if (!writeAll(FD, Bytes->data(), Bytes->size()))
      return Fail();
    Pos += Bytes->size();
    ++I;
  }
  return success();
}

/// Builds the skeleton, externalizing tensors when the model would not fit
/// protobuf's limit or when asked to.
static LogicalResult buildSkeleton(const Model &M, const ExportOptions &Opts,
                                   bool Binary, SaveContext &Ctx,
                                   onnx::ModelProto &Skeleton,
                                   std::vector<const Tensor *> &Streamed,
                                   DiagnosticEngine &Diags) {
  auto Build = [&] {
    Ctx.Chunks.clear();
    Ctx.DataSize = 0;
    Ctx.KeptFiles.clear();
    Skeleton.Clear();
    Exporter E(&Ctx);
    E.exportModel(M, Skeleton);
    Streamed = std::move(E.Streamed);
  };
  Ctx.Externalize = Binary && Opts.ForceExternal;
  Build();
  // Replacing a data file that kept references point into: copy them too.
  if (!Ctx.Chunks.empty() && Ctx.KeptFiles.size()) {
    Ctx.NoKeepPath = Ctx.DataPath;
    Build();
  }
  if (!Binary)
    return success();

  // Size check without touching the skeleton: sizes of the streamed parts
  // come from the IR.
  uint64_t Total = Skeleton.ByteSizeLong();
  for (int I = 0; I < int(Streamed.size()); ++I)
    if (Streamed[I])
      Total += Streamed[I]->getByteSize() + 16;
  if (Total <= uint64_t(INT_MAX))
    return success();
  if (Ctx.Externalize)
    return emitError(Diags) << "the model is larger than 2 GB even with its "
                               "tensors in external data";
  emitRemark(Diags) << "the model is larger than 2 GB (protobuf's limit): "
                       "tensors of at least "
                    << Ctx.Threshold << " bytes go to '" << Ctx.DataName << "'";
  Ctx.Externalize = true;
  Ctx.NoKeepPath = Ctx.DataPath;
  Build();
  return success();
}

static LogicalResult writeText(const Model &M, llvm::StringRef Path,
                               DiagnosticEngine &Diags) {
  if (Path == "-") {
    printModel(M, llvm::outs());
    llvm::outs().flush();
    return success();
  }
  TempFile Tmp;
  if (failed(Tmp.create(Path.str(), Diags)))
    return failure();
  {
    llvm::raw_fd_ostream OS(Tmp.getFD(), /*shouldClose=*/false);
    printModel(M, OS);
    OS.flush();
    if (OS.has_error()) {
      std::string Msg = OS.error().message();
      OS.clear_error();
      return emitError(Diags) << "cannot write '" << Path << "': " << Msg;
    }
  }
  return Tmp.commit(Diags);
}

LogicalResult onnxopt::saveModel(const Model &M, llvm::StringRef Path,
                                 FileFormat Format, DiagnosticEngine &Diags,
                                 const ExportOptions &Opts) {
  if (Opts.Verify && Opts.VerifyIR && failed(verifyModel(M, Diags)))
    return failure();
  // ONNX's checker and inference below crash on some invalid nodes.
  if (Opts.Verify && failed(validateModelNodes(M, Diags)))
    return failure();
  bool Binary = Format == FileFormat::Binary;
  bool ToStdout = Path == "-";

  // A data file is written beside the output, nowhere else.
  llvm::StringRef DataName = Opts.ExternalDataName;
  if (!DataName.empty() && (DataName == "." || DataName == ".." ||
                            DataName.find('/') != llvm::StringRef::npos ||
                            DataName.find('\0') != llvm::StringRef::npos))
    return emitError(Diags) << "external data file name '" << DataName
                            << "' is not a plain file name (the data file "
                               "is written beside the output)";
  SaveContext Ctx;
  Ctx.Threshold = Opts.ExternalThreshold;
  if (!ToStdout) {
    Ctx.OutDir = llvm::sys::path::parent_path(Path).str();
    Ctx.DataName = Opts.ExternalDataName.empty()
                       ? (llvm::sys::path::filename(Path) + ".data").str()
                       : Opts.ExternalDataName;
    llvm::SmallString<256> DataPath(Ctx.OutDir);
    llvm::sys::path::append(DataPath, Ctx.DataName);
    Ctx.DataPath = std::string(DataPath);
  } else {
    Ctx.OutDir = ".";
  }
  // Only binary files get a data file; elsewhere references stay as written.
  Ctx.KeepAll = ToStdout || !Binary;

  onnx::ModelProto Skeleton;
  std::vector<const Tensor *> Streamed;
  if (Binary || Opts.Verify) {
    if (failed(buildSkeleton(M, Opts, Binary, Ctx, Skeleton, Streamed, Diags)))
      return failure();
    if (ToStdout && !Ctx.Chunks.empty())
      return emitError(Diags) << "the model needs a new external-data file, "
                                 "which cannot be written next to standard "
                                 "output; write to a file";
    // The skeleton's large payloads are placeholders already: it is verified
    // itself, not a copy.
    if (Opts.Verify && failed(verifyInPlace(Skeleton, /*Restore=*/true, Diags)))
      return failure();
  }
  if (!Binary)
    return writeText(M, Path, Diags);

  SplitModel Split;
  splitModel(std::move(Skeleton), std::move(Streamed), Split);
  if (Split.TotalSize > size_t(INT_MAX))
    return emitError(Diags) << "the model is larger than 2 GB, which "
                               "protobuf cannot write";
  if (ToStdout)
    return writeModel(Split, STDOUT_FILENO, "<stdout>", Diags);

  TempFile DataTmp, ModelTmp;
  if (!Ctx.Chunks.empty()) {
    if (failed(DataTmp.create(Ctx.DataPath, Diags)) ||
        failed(writeDataFile(Ctx, DataTmp.getFD(), Diags)) ||
        failed(DataTmp.close(Diags)))
      return failure();
  }
  if (failed(ModelTmp.create(Path.str(), Diags)) ||
      failed(writeModel(Split, ModelTmp.getFD(), Path, Diags)))
    return failure();
  if (!Ctx.Chunks.empty() && failed(DataTmp.commit(Diags)))
    return failure();
  return ModelTmp.commit(Diags);
}
