//===- Export.cpp - IR to ModelProto --------------------------------------===//
//
// Export starts every proto from the residual the importer kept and then sets
// the fields the IR models, so what onnx-opt does not understand is written
// back untouched. (Verification is Verify.cpp, writing files Write.cpp.)
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
#include "ExportDetail.h"
#include "ExportProto.h"
#include "ProtoWire.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

using namespace onnxopt;
using namespace onnxopt::detail;
namespace pbio = google::protobuf::io;

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
  copyTensorMetadata(T, Out);
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
  auto SetName = [&] {
    if (T.getName() != Name)
      Out.set_name(Name.str());
  };
  if (!Save) {
    copyWholeTensor(T, Out);
    SetName();
    return false;
  }
  if (T.isExternal()) {
    if (keepReference(*T.getExternal()))
      copyTensorMetadata(T, Out);
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
  bool Unchanged = T.getName() == Name && !isDensifiedSparse(T);
  if (MayStream && (Unchanged || T.hasMappedRawData()) && shouldStream(T)) {
    copyTensorMetadata(T, Out);
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
  // assign() rather than set_*(std::string): a reused proto keeps the
  // storage of its strings.
  auto Assign = [](std::string *S, llvm::StringRef Text) {
    S->assign(Text.data(), Text.size());
  };
  for (Value *V : N.getOperands())
    Assign(NP.add_input(), V ? V->getName() : llvm::StringRef());
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *R = N.getResult(I);
    Assign(NP.add_output(), R ? R->getName() : llvm::StringRef());
  }
  if (!N.getName().empty())
    Assign(NP.mutable_name(), N.getName());
  Assign(NP.mutable_op_type(), N.getOpType());
  if (!N.getDomain().empty())
    Assign(NP.mutable_domain(), N.getDomain());
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
    if (isDensifiedSparse(V->getInitializer()) &&
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
void Exporter::exportValueInfos(const Graph &G, onnx::GraphProto &GP,
                                bool IsMain) {
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
  // Streamed like the nodes: one proto reused, handed to the sink.
  bool Stream = IsMain && MainValueInfoSink;
  onnx::ValueInfoProto Scratch;
  auto Next = [&]() -> onnx::ValueInfoProto & {
    if (!Stream)
      return *GP.add_value_info();
    Scratch.Clear();
    return Scratch;
  };
  auto Done = [&] {
    if (Stream)
      MainValueInfoSink(Scratch);
  };
  size_t NextOrphan = 0;
  uint64_t Pos = 0;
  auto EmitOrphan = [&] {
    Next().ParseFromString(G.OrphanValueInfos[NextOrphan++]);
    Done();
    ++Pos;
  };
  for (const Value *V : Infos) {
    while (NextOrphan < G.OrphanValueInfos.size() && Pos < V->InfoOrder)
      EmitOrphan();
    exportValueInfo(*V, Next());
    Done();
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
  if (IsMain && MainNodeSink) {
    // One proto reused: Clear() keeps its strings' and lists' storage.
    onnx::NodeProto Scratch;
    for (const Node &N : G.getNodes()) {
      Scratch.Clear();
      exportNode(N, Scratch);
      MainNodeSink(N, Scratch);
    }
  } else {
    GP.mutable_node()->Reserve(G.getNumNodes());
    for (const Node &N : G.getNodes())
      exportNode(N, *GP.add_node());
  }
  exportInitializers(G, GP, IsMain);
  for (const auto &V : G.getInputs())
    exportValueInfo(*V, *GP.add_input());
  for (const Value *V : G.getOutputs())
    exportValueInfo(*V, *GP.add_output());
  exportValueInfos(G, GP, IsMain);
}

void Exporter::exportHeader(const Model &M, onnx::ModelProto &MP) {
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
}

void Exporter::exportModel(const Model &M, onnx::ModelProto &MP) {
  exportHeader(M, MP);
  exportGraph(M.getGraph(), *MP.mutable_graph(), true);
}

std::unique_ptr<onnx::ModelProto> onnxopt::exportModel(const Model &M) {
  auto MP = std::make_unique<onnx::ModelProto>();
  Exporter().exportModel(M, *MP);
  return MP;
}
