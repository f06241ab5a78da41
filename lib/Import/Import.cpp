//===- Import.cpp - Reading binary models ---------------------------------===//
//
// Binary model files are mapped, not read. Large raw_data of the main graph's
// initializers is left out of what protobuf parses (ProtoWire.h) and stays in
// the mapping, so the weights are never copied: the tensors point into the
// file. Everything else is parsed as usual, and importModel moves (swaps)
// every tensor out of the ModelProto into the IR. Standard input and files
// that cannot be mapped are parsed streaming. Whatever the IR does not model
// is serialized into the residual strings, so export is lossless.
//
// Import is linear in the model size: each graph gets one StringMap scope,
// chained to the enclosing graphs' scopes. A graph is imported in two phases
// (define every name, then resolve uses), so subgraphs may use outer values
// and out-of-order graphs load; the verifier reports the order and topo-sort
// repairs it.
//
//===----------------------------------------------------------------------===//

#include "onnxopt/Import/Import.h"
#include "ImportProto.h"
#include "ParseAhead.h"
#include "ProtoWire.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/unknown_field_set.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxopt;
using namespace onnxopt::detail;
namespace pbio = google::protobuf::io;

//===----------------------------------------------------------------------===//
// Formats
//===----------------------------------------------------------------------===//

FileFormat onnxopt::guessFormatFromPath(llvm::StringRef Path) {
  llvm::StringRef Ext = llvm::sys::path::extension(Path);
  if (Ext.equals_insensitive(".onnxtxt") || Ext.equals_insensitive(".txt") ||
      Ext.equals_insensitive(".onnxtext"))
    return FileFormat::Text;
  return FileFormat::Binary;
}

/// ONNX text starts with `<`, a comment or an identifier and has no control
/// bytes; a binary ModelProto starts with a field tag (0x08 for ir_version)
/// and has control bytes almost at once.
static bool looksLikeText(llvm::StringRef Head) {
  llvm::StringRef Trimmed = Head.ltrim();
  if (Trimmed.empty())
    return !Head.empty();
  char C = Trimmed.front();
  if (C != '<' && C != '#' && C != '_' && !llvm::isAlpha(C))
    return false;
  for (char Ch : Head) {
    unsigned char U = static_cast<unsigned char>(Ch);
    if (U < 0x20 && Ch != '\n' && Ch != '\r' && Ch != '\t')
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// ModelProto -> IR
//===----------------------------------------------------------------------===//

/// The error for bytes protobuf cannot parse.
static InFlightDiagnostic emitMalformed(DiagnosticEngine &Diags) {
  return emitError(Diags) << "not a valid ONNX model: the protobuf is "
                             "truncated or malformed";
}

namespace {

/// The names one graph being imported defines. A name resolves through its
/// entry in the model's name table (NameSlot): defining a value points the
/// entry at it, and the scope's end gives the entry back what an enclosing
/// graph had defined under that name, or nothing. So a graph sees its own
/// names and its ancestors' (its own first), a subgraph's names end with
/// it, and after the import every entry is empty again.
class Scope {
public:
  Scope(Model &M, const Graph &G, const Scope *Parent)
      : M(M), G(G), Parent(Parent) {}
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;
  ~Scope() {
    if (Parent) {
      for (auto It = Undo.rbegin(); It != Undo.rend(); ++It)
        It->first->getValue().setImportDef(It->second);
      return;
    }
    // The main graph shadows nothing: its names are emptied by walking its
    // values (no list of a million entries to undo).
    auto Clear = [&](const Value *V) {
      M.getNameEntry(*V).getValue().setImportDef(nullptr);
    };
    for (const auto &V : G.getInputs())
      Clear(V.get());
    for (const auto &V : G.getConstants())
      Clear(V.get());
    for (const Node &N : G.getNodes())
      for (unsigned I = 0; I < N.getNumResults(); ++I)
        if (const Value *V = N.getResult(I))
          Clear(V);
  }

  /// The value \p Name resolves to: this graph's or an enclosing one's.
  Value *lookup(llvm::StringRef Name) const {
    NameEntry *E = M.findName(Name);
    return E ? E->getValue().getImportDef() : nullptr;
  }
  /// The value of this graph itself named \p Name.
  Value *lookupHere(llvm::StringRef Name) const {
    Value *V = lookup(Name);
    return V && V->getOwningGraph() == &G ? V : nullptr;
  }
  /// Makes \p V, a value of this graph, what its name resolves to; false
  /// when a value of this graph already has the name (which stays).
  bool define(Value *V) {
    NameEntry &E = M.getNameEntry(*V);
    Value *Prev = E.getValue().getImportDef();
    if (Prev && Prev->getOwningGraph() == &G)
      return false;
    if (Parent)
      Undo.push_back({&E, Prev});
    E.getValue().setImportDef(V);
    return true;
  }

private:
  Model &M;
  const Graph &G;
  const Scope *Parent;
  /// A subgraph's definitions, with what each entry held before.
  std::vector<std::pair<NameEntry *, Value *>> Undo;
};

/// Serializes \p Msg, or returns "" for an empty message.
template <typename ProtoT> std::string residualOf(const ProtoT &Msg) {
  return Msg.ByteSizeLong() ? Msg.SerializeAsString() : std::string();
}

/// The model file and the main-graph initializers whose raw_data stayed in
/// it.
struct MappedModel {
  std::shared_ptr<MappedFile> File;
  std::vector<MappedRawData> RawData;
};

/// The number of elements \p Dims describe, or nullopt when a dim is
/// negative, above MaxDim, or the product overflows.
std::optional<uint64_t> elementCount(llvm::ArrayRef<int64_t> Dims) {
  uint64_t N = 1;
  for (int64_t D : Dims)
    if (D < 0 || D > MaxDim || __builtin_mul_overflow(N, uint64_t(D), &N))
      return std::nullopt;
  return N;
}

/// How many entries of its typed field a tensor of \p ET with \p Elems
/// elements holds, and how many it has; false for types without one.
bool typedFieldCount(const onnx::TensorProto &TP, uint64_t Elems,
                     uint64_t &Expected, uint64_t &Have) {
  using TPT = onnx::TensorProto;
  Expected = Elems;
  switch (TP.data_type()) {
  case TPT::FLOAT:
    Have = TP.float_data_size();
    return true;
  case TPT::COMPLEX64:
    Have = TP.float_data_size();
    return !__builtin_mul_overflow(Elems, 2, &Expected);
  case TPT::DOUBLE:
    Have = TP.double_data_size();
    return true;
  case TPT::COMPLEX128:
    Have = TP.double_data_size();
    return !__builtin_mul_overflow(Elems, 2, &Expected);
  case TPT::INT64:
    Have = TP.int64_data_size();
    return true;
  case TPT::UINT32:
  case TPT::UINT64:
    Have = TP.uint64_data_size();
    return true;
  case TPT::INT32:
  case TPT::INT16:
  case TPT::INT8:
  case TPT::UINT16:
  case TPT::UINT8:
  case TPT::BOOL:
  case TPT::FLOAT16:
  case TPT::BFLOAT16:
    Have = TP.int32_data_size();
    return true;
  case TPT::STRING:
    Have = TP.string_data_size();
    return true;
  default:
    return false;
  }
}

/// True when \p Path lies inside the directory \p Dir (both canonical).
bool isUnder(llvm::StringRef Path, llvm::StringRef Dir) {
  if (Dir == "/")
    return Path.startswith("/");
  return Path.startswith(Dir) &&
         (Path.size() == Dir.size() || Path[Dir.size()] == '/');
}

/// realpath(3) as a string; empty on error (errno set).
std::string canonicalPath(const std::string &Path) {
  char *Real = ::realpath(Path.c_str(), nullptr);
  if (!Real)
    return std::string();
  std::string Out(Real);
  std::free(Real);
  return Out;
}

class Importer {
public:
  /// \p MainNodes: the main graph's nodes, serialized, when its proto does
  /// not hold them (splitMainGraphNodes).
  Importer(Model &M, llvm::StringRef BaseDir, DiagnosticEngine &Diags,
           const MappedModel *Mapped, const ImportOptions &Opts,
           const std::vector<llvm::StringRef> *MainNodes = nullptr)
      : M(M), BaseDir(BaseDir.str()), Diags(Diags), Mapped(Mapped), Opts(Opts),
        MainNodes(MainNodes) {}

  LogicalResult importGraph(onnx::GraphProto &GP, Graph &G,
                            const Scope *Parent);
  /// One remark for the types whose -1 dims were read as unknown dims.
  void remarkUnknownDims();

private:
  /// Phase 1 for one node: creates it and defines its results.
  Node *declareNode(const NodeHead &Head, Graph &G, Scope &S, bool &Ok);
  /// Phase 2 for one node: resolves its inputs, imports its attributes and
  /// keeps the rest of \p NP as its residual.
  void resolveNode(onnx::NodeProto &NP, Node &N, const Scope &S, bool &Ok);
  /// Starts loading the name-table buckets of \p NP's operands.
  void prefetchInputs(const onnx::NodeProto &NP) const;
  /// How many nodes ahead of its resolution a node's operands are
  /// prefetched: enough for a bucket to arrive, few enough to stay cached.
  static constexpr int kPrefetchDistance = 4;

  LogicalResult define(Scope &S, Graph &G, Value *V, llvm::StringRef What);
  std::optional<Tensor> importTensor(onnx::TensorProto &TP, const Graph &G,
                                     llvm::StringRef What);
  std::optional<ExternalLocation> resolveExternal(const onnx::TensorProto &TP,
                                                  const Graph &G,
                                                  llvm::StringRef What);
  std::optional<Tensor> densify(const onnx::SparseTensorProto &SP,
                                const Graph &G);
  LogicalResult importAttribute(onnx::AttributeProto &AP, Node &N,
                                const Scope &S, Attribute &A);
  LogicalResult importValueInfo(onnx::ValueInfoProto &VI, Value &V,
                                const Graph &G);
  /// Checks the dims of \p TP and that \p PayloadBytes (its raw bytes,
  /// where known) or its typed field match them.
  LogicalResult checkTensor(const onnx::TensorProto &TP, const Graph &G,
                            llvm::StringRef What,
                            std::optional<uint64_t> PayloadBytes);
  /// Resolves an external-data location under the model's directory.
  std::optional<std::string> confine(llvm::StringRef Location,
                                     const onnx::TensorProto &TP,
                                     const Graph &G, llvm::StringRef What);

  /// The tensor of the main graph's initializer \p Index, whose bytes stay
  /// in the model file; nullopt when it was parsed whole.
  std::optional<Tensor> takeMapped(onnx::TensorProto &TP, int Index,
                                   const Graph &G, bool &Failed);

  Model &M;
  std::string BaseDir;
  DiagnosticEngine &Diags;
  const MappedModel *Mapped;
  const ImportOptions &Opts;
  const std::vector<llvm::StringRef> *MainNodes;
  size_t NextMapped = 0;
  /// Subgraph nesting of the graph being imported (the main graph is 0).
  unsigned Depth = 0;
  bool ReportedDepth = false;
  /// Values whose type had a -1 dim (read as unknown), and the first one.
  size_t MinusOneValues = 0;
  std::string FirstMinusOneValue;
  /// The canonical model directory, computed on the first external tensor.
  std::optional<std::string> RealBaseDir;
  /// One mapping per external-data file, shared by its tensors.
  llvm::StringMap<std::shared_ptr<MappedFile>> Files;
};

} // namespace

LogicalResult Importer::define(Scope &S, Graph &G, Value *V,
                               llvm::StringRef What) {
  M.reserveName(*V);
  if (S.define(V))
    return success();
  return emitError(Diags, G)
         << What << " '" << V->getName() << "' is defined more than once";
}

/// The first dim of \p TP (at any nesting) that no tensor can have: negative
/// or above MaxDim.
static std::optional<int64_t> badDim(const onnx::TypeProto &TP) {
  if (const onnx::TensorShapeProto *Shape = innerShapeOf(TP))
    for (const onnx::TensorShapeProto::Dimension &D : Shape->dim())
      if (D.has_dim_value() && (D.dim_value() < 0 || D.dim_value() > MaxDim))
        return D.dim_value();
  return std::nullopt;
}

/// Clears the -1 dims of \p TP's shape (at any nesting), which makes them
/// unknown dims; returns whether there were any. ONNX says a dim_value is
/// never negative, but some exporters (Paddle's) write -1 for a dim they do
/// not know, as ONNX Runtime reads it. Other negative values stay errors.
static bool clearMinusOneDims(onnx::TypeProto &TP) {
  // The shape is TP's own: innerShapeOf only walks it.
  auto *Shape = const_cast<onnx::TensorShapeProto *>(innerShapeOf(TP));
  bool Any = false;
  if (Shape)
    for (onnx::TensorShapeProto::Dimension &D : *Shape->mutable_dim())
      if (D.has_dim_value() && D.dim_value() == -1) {
        D.clear_dim_value();
        Any = true;
      }
  return Any;
}

void Importer::remarkUnknownDims() {
  if (!MinusOneValues)
    return;
  InFlightDiagnostic R = emitRemark(Diags);
  R << "value '" << FirstMinusOneValue << "' has dim -1";
  if (MinusOneValues > 1)
    R << " (and " << MinusOneValues - 1 << " more value(s))";
  R << ": read as an unknown dim ('?'), as ONNX Runtime does; ONNX dims are "
       "never negative, and the output writes it as unknown";
}

/// Moves the ValueInfoProto's type and leftovers onto \p V.
LogicalResult Importer::importValueInfo(onnx::ValueInfoProto &VI, Value &V,
                                        const Graph &G) {
  if (VI.has_type() && clearMinusOneDims(*VI.mutable_type()) &&
      MinusOneValues++ == 0)
    FirstMinusOneValue = VI.name();
  if (VI.has_type())
    if (std::optional<int64_t> D = badDim(VI.type()))
      return emitError(Diags, G)
             << "value '" << VI.name() << "' has dim " << *D
             << " (dims must be between 0 and 2^53"
             << (*D < 0 ? "; -1 alone is read as an unknown dim)" : ")");
  if (VI.has_type())
    if (size_t Rank = maxRankOf(VI.type()); Rank > MaxTensorRank)
      return emitError(Diags, G)
             << "value '" << VI.name() << "' has rank " << Rank << ", above "
             << MaxTensorRank << ", the largest onnx-opt takes";
  if (VI.has_type()) {
    Type T = importType(VI.type());
    // An empty TypeProto stays in the residual so it is written back.
    if (!T.isNone()) {
      V.setType(std::move(T));
      VI.clear_type();
    }
  }
  VI.clear_name();
  V.Residual = residualOf(VI);
  return success();
}

LogicalResult Importer::checkTensor(const onnx::TensorProto &TP, const Graph &G,
                                    llvm::StringRef What,
                                    std::optional<uint64_t> PayloadBytes) {
  auto Fail = [&]() {
    return emitError(Diags, G) << What << " '" << TP.name() << "': ";
  };
  if (size_t(TP.dims_size()) > MaxTensorRank)
    return Fail() << "rank " << TP.dims_size() << ", above " << MaxTensorRank
                  << ", the largest onnx-opt takes";
  for (int64_t D : TP.dims())
    if (D < 0 || D > MaxDim)
      return Fail() << "dim " << D << " (dims must be between 0 and 2^53)";
  std::optional<uint64_t> Elems = elementCount(
      llvm::ArrayRef<int64_t>(TP.dims().data(), size_t(TP.dims_size())));
  size_t ElemSize = getElemTypeSize(TP.data_type());
  uint64_t Bytes = 0;
  if (!Elems || (ElemSize && __builtin_mul_overflow(*Elems, ElemSize, &Bytes)))
    return Fail() << "its dims describe more than 2^64 bytes";
  if (Opts.PlaceholderPayloads)
    return success();
  if (!PayloadBytes && TP.has_raw_data())
    PayloadBytes = TP.raw_data().size();
  if (PayloadBytes) {
    if (ElemSize && *PayloadBytes != Bytes)
      return Fail() << "it holds " << *PayloadBytes << " bytes of data, but "
                    << "its dims and element type need " << Bytes;
    return success();
  }
  uint64_t Expected, Have;
  if (typedFieldCount(TP, *Elems, Expected, Have) && Have && Have != Expected)
    return Fail() << "it holds " << Have << " values, but its dims need "
                  << Expected;
  return success();
}

std::optional<std::string> Importer::confine(llvm::StringRef Location,
                                             const onnx::TensorProto &TP,
                                             const Graph &G,
                                             llvm::StringRef What) {
  auto Refuse = [&](llvm::StringRef Why) {
    emitError(Diags, G) << What << " '" << TP.name()
                        << "': external data location '" << Location << "' "
                        << Why
                        << " (pass --allow-external-data-outside to allow it)";
    return std::nullopt;
  };
  llvm::SmallString<256> Path;
  if (llvm::sys::path::is_absolute(Location)) {
    if (!Opts.AllowExternalDataOutside)
      return Refuse("is absolute; locations are relative to the model's "
                    "directory");
    Path = Location;
    return std::string(Path);
  }
  Path = BaseDir.empty() ? std::string(".") : BaseDir;
  llvm::sys::path::append(Path, Location);
  if (Opts.AllowExternalDataOutside)
    return std::string(Path);
  for (auto I = llvm::sys::path::begin(Location),
            E = llvm::sys::path::end(Location);
       I != E; ++I)
    if (*I == "..")
      return Refuse("leaves the model's directory through '..'");
  // Symbolic links may still lead out: compare canonical paths. A file that
  // does not exist is reported by the caller when it opens it.
  if (!RealBaseDir)
    RealBaseDir = canonicalPath(BaseDir.empty() ? "." : BaseDir);
  std::string Real = canonicalPath(std::string(Path));
  if (!Real.empty() && !RealBaseDir->empty() && !isUnder(Real, *RealBaseDir))
    return Refuse("resolves to '" + Real +
                  "' (through a symbolic link), outside the model's "
                  "directory '" +
                  *RealBaseDir + "'");
  return std::string(Path);
}

std::optional<ExternalLocation>
Importer::resolveExternal(const onnx::TensorProto &TP, const Graph &G,
                          llvm::StringRef What) {
  ExternalLocation Loc;
  bool HasLocation = false, HasLength = false;
  for (const onnx::StringStringEntryProto &E : TP.external_data()) {
    llvm::StringRef Key = E.key(), Val = E.value();
    if (Key == "location") {
      Loc.Location = Val.str();
      HasLocation = true;
    } else if (Key == "offset" || Key == "length") {
      uint64_t N;
      if (Val.getAsInteger(10, N)) {
        emitError(Diags, G)
            << What << " '" << TP.name() << "': invalid external data " << Key
            << " '" << Val << "'";
        return std::nullopt;
      }
      if (Key == "offset") {
        Loc.Offset = N;
      } else {
        Loc.Length = N;
        HasLength = true;
      }
    }
  }
  if (!HasLocation || Loc.Location.empty()) {
    emitError(Diags, G) << What << " '" << TP.name()
                        << "': external data without a location";
    return std::nullopt;
  }

  std::optional<std::string> Resolved = confine(Loc.Location, TP, G, What);
  if (!Resolved)
    return std::nullopt;
  llvm::SmallString<256> Path(*Resolved);
  std::shared_ptr<MappedFile> &File = Files[Path];
  if (!File) {
    std::string Error;
    File = MappedFile::open(std::string(Path), Error);
    if (!File) {
      Files.erase(Path);
      emitError(Diags, G) << What << " '" << TP.name()
                          << "': cannot read external data: " << Error;
      return std::nullopt;
    }
  }
  Loc.File = File;
  uint64_t Size = File->size();
  if (Loc.Offset > Size || (HasLength && Loc.Length > Size - Loc.Offset)) {
    // Offset + length may not fit 64 bits: print them apart.
    auto Diag = emitError(Diags, G)
                << What << " '" << TP.name() << "': external data at offset "
                << Loc.Offset;
    if (HasLength)
      Diag << " with length " << Loc.Length;
    Diag << " is outside '" << Path << "' (" << Size << " bytes)";
    return std::nullopt;
  }
  if (!HasLength) {
    // Without a length the tensor takes what its dims say (as ONNX Runtime
    // reads it), which must be there.
    Loc.Length = Size - Loc.Offset;
    std::optional<uint64_t> Elems = elementCount(
        llvm::ArrayRef<int64_t>(TP.dims().data(), size_t(TP.dims_size())));
    size_t ElemSize = getElemTypeSize(TP.data_type());
    uint64_t Need;
    if (Elems && ElemSize && !__builtin_mul_overflow(*Elems, ElemSize, &Need) &&
        Need <= Loc.Length)
      Loc.Length = Need;
  }
  if (failed(checkTensor(TP, G, What, Loc.Length)))
    return std::nullopt;
  return Loc;
}

std::optional<Tensor> Importer::importTensor(onnx::TensorProto &TP,
                                             const Graph &G,
                                             llvm::StringRef What) {
  if (TP.data_location() != onnx::TensorProto::EXTERNAL) {
    if (failed(checkTensor(TP, G, What, std::nullopt)))
      return std::nullopt;
    return detail::tensorFromProto(std::move(TP));
  }
  std::optional<ExternalLocation> Loc = resolveExternal(TP, G, What);
  if (!Loc)
    return std::nullopt;
  return detail::tensorWrappingProto(std::move(TP), std::move(Loc));
}

std::optional<Tensor> Importer::takeMapped(onnx::TensorProto &TP, int Index,
                                           const Graph &G, bool &Failed) {
  if (!Mapped || NextMapped == Mapped->RawData.size() ||
      Mapped->RawData[NextMapped].Initializer != Index)
    return std::nullopt;
  const MappedRawData &R = Mapped->RawData[NextMapped++];
  if (failed(checkTensor(TP, G, "initializer", R.Length))) {
    Failed = true;
    return std::nullopt;
  }
  return detail::tensorFromMappedRawData(std::move(TP), Mapped->File,
                                         R.Offset, R.Length);
}

/// Builds the dense TensorProto of a sparse initializer, marked so that export
/// writes the sparse form (kept in the graph residual) instead.
std::optional<Tensor> Importer::densify(const onnx::SparseTensorProto &SP,
                                        const Graph &G) {
  const onnx::TensorProto &Vals = SP.values();
  auto Fail = [&](llvm::StringRef Why) {
    emitError(Diags, G) << "sparse initializer '" << Vals.name()
                        << "': " << Why;
    return std::nullopt;
  };
  int32_t ET = Vals.data_type();
  size_t ElemSize = getElemTypeSize(ET);
  if (ElemSize == 0)
    return Fail("unsupported element type");
  if (Vals.data_location() == onnx::TensorProto::EXTERNAL ||
      SP.indices().data_location() == onnx::TensorProto::EXTERNAL)
    return Fail("external data in sparse initializers is not supported");

  uint64_t NumElems = 1;
  for (int64_t D : SP.dims())
    if (D < 0 || __builtin_mul_overflow(NumElems, uint64_t(D), &NumElems))
      return Fail("invalid dims");
  // Densifying is for constant folding; refuse absurd sizes instead of
  // exhausting memory.
  constexpr uint64_t MaxDenseBytes = uint64_t(1) << 30;
  if (NumElems > MaxDenseBytes / ElemSize)
    return Fail("too large to densify");

  Tensor ValsT = detail::tensorWrappingProto(onnx::TensorProto(Vals));
  Tensor IdxT = detail::tensorWrappingProto(onnx::TensorProto(SP.indices()));
  std::string ValStorage;
  std::optional<llvm::StringRef> ValBytes = ValsT.getRawBytes(ValStorage);
  std::optional<std::vector<int64_t>> Idx = IdxT.toInt64s();
  if (!ValBytes || !Idx)
    return Fail("unreadable values or indices");
  uint64_t NNZ = ValBytes->size() / ElemSize;
  size_t Rank = SP.dims_size();
  bool Linear = SP.indices().dims_size() <= 1;
  if ((Linear && Idx->size() != NNZ) || (!Linear && Idx->size() != NNZ * Rank))
    return Fail("indices do not match values");

  std::string Dense(NumElems * ElemSize, '\0');
  for (uint64_t K = 0; K < NNZ; ++K) {
    uint64_t Pos = 0;
    if (Linear) {
      Pos = uint64_t((*Idx)[K]);
    } else {
      for (size_t R = 0; R < Rank; ++R)
        Pos = Pos * uint64_t(SP.dims(R)) + uint64_t((*Idx)[K * Rank + R]);
    }
    if (Pos >= NumElems)
      return Fail("index out of range");
    std::memcpy(&Dense[Pos * ElemSize], ValBytes->data() + K * ElemSize,
                ElemSize);
  }
  onnx::TensorProto P;
  P.set_name(Vals.name());
  P.set_data_type(ET);
  for (int64_t D : SP.dims())
    P.add_dims(D);
  P.set_raw_data(std::move(Dense));
  P.GetReflection()->MutableUnknownFields(&P)->AddVarint(
      DensifiedSparseMarker, 1);
  return detail::tensorWrappingProto(std::move(P));
}

LogicalResult Importer::importAttribute(onnx::AttributeProto &AP, Node &N,
                                        const Scope &S, Attribute &A) {
  Graph &G = *N.getParentGraph();
  A.Name = AP.name();
  A.Kind = static_cast<AttrKind>(AP.type());
  bool Ok = true;
  auto ImportGraph = [&](onnx::GraphProto &GP) {
    A.Graphs.push_back(std::make_unique<Graph>(&M, GP.name(), &N));
    if (Depth >= MaxSubgraphDepth) {
      if (!ReportedDepth)
        emitError(Diags, N)
            << "subgraphs are nested more than " << MaxSubgraphDepth << " deep";
      ReportedDepth = true;
      Ok = false;
      return;
    }
    ++Depth;
    if (failed(importGraph(GP, *A.Graphs.back(), &S)))
      Ok = false;
    --Depth;
  };
  auto ImportTensor = [&](onnx::TensorProto &TP) {
    std::optional<Tensor> T = importTensor(TP, G, "tensor of attribute");
    if (!T)
      Ok = false;
    A.Tensors.push_back(T ? std::move(*T) : Tensor());
  };

  switch (AP.type()) {
  case onnx::AttributeProto::FLOAT:
    A.F = AP.f();
    AP.clear_f();
    break;
  case onnx::AttributeProto::INT:
    A.I = AP.i();
    AP.clear_i();
    break;
  case onnx::AttributeProto::STRING:
    A.S = std::move(*AP.mutable_s());
    AP.clear_s();
    break;
  case onnx::AttributeProto::TENSOR:
    ImportTensor(*AP.mutable_t());
    AP.clear_t();
    break;
  case onnx::AttributeProto::GRAPH:
    ImportGraph(*AP.mutable_g());
    AP.clear_g();
    break;
  case onnx::AttributeProto::FLOATS:
    A.Floats.assign(AP.floats().begin(), AP.floats().end());
    AP.clear_floats();
    break;
  case onnx::AttributeProto::INTS:
    A.Ints.assign(AP.ints().begin(), AP.ints().end());
    AP.clear_ints();
    break;
  case onnx::AttributeProto::STRINGS:
    A.Strings.reserve(AP.strings_size());
    for (std::string &Str : *AP.mutable_strings())
      A.Strings.push_back(std::move(Str));
    AP.clear_strings();
    break;
  case onnx::AttributeProto::TENSORS:
    for (onnx::TensorProto &TP : *AP.mutable_tensors())
      ImportTensor(TP);
    AP.clear_tensors();
    break;
  case onnx::AttributeProto::GRAPHS:
    for (onnx::GraphProto &GP : *AP.mutable_graphs())
      ImportGraph(GP);
    AP.clear_graphs();
    break;
  default:
    // Sparse tensors, type protos and untyped attributes stay in the
    // residual.
    break;
  }
  AP.clear_name();
  AP.clear_type();
  A.Residual = residualOf(AP);
  return success(Ok);
}

/// The names of \p NP as phase 1 takes them.
static void headOf(const onnx::NodeProto &NP, NodeHead &Head) {
  Head.OpType = NP.op_type();
  Head.Domain = NP.domain();
  Head.Name = NP.name();
  Head.Outputs.assign(NP.output().begin(), NP.output().end());
}

Node *Importer::declareNode(const NodeHead &Head, Graph &G, Scope &S,
                            bool &Ok) {
  Node *N = G.createNode(Head.OpType, Head.Domain, Head.Name, {}, {});
  for (llvm::StringRef R : Head.Outputs)
    N->addResult(R);
  for (unsigned R = 0; R < N->getNumResults(); ++R)
    if (Value *V = N->getResult(R))
      Ok &= succeeded(define(S, G, V, "value"));
  return N;
}

void Importer::prefetchInputs(const onnx::NodeProto &NP) const {
  for (const std::string &In : NP.input())
    M.prefetchName(In);
}

void Importer::resolveNode(onnx::NodeProto &NP, Node &N, const Scope &S,
                           bool &Ok) {
  for (const std::string &In : NP.input()) {
    if (In.empty()) {
      N.addOperand(nullptr);
      continue;
    }
    Value *V = S.lookup(In);
    if (!V) {
      Ok = false;
      emitError(Diags, N) << "input '" << In << "' is not defined";
    }
    N.addOperand(V);
  }
  std::vector<Attribute> &Attrs = N.getMutableAttrs();
  Attrs.reserve(NP.attribute_size());
  for (onnx::AttributeProto &AP : *NP.mutable_attribute()) {
    Attrs.emplace_back();
    Ok &= succeeded(importAttribute(AP, N, S, Attrs.back()));
  }
  N.recheckSubgraphs();
  NP.clear_input();
  NP.clear_output();
  NP.clear_op_type();
  NP.clear_attribute();
  // An explicitly empty name or domain stays, so it is written back.
  if (!NP.name().empty())
    NP.clear_name();
  if (!NP.domain().empty())
    NP.clear_domain();
  N.Residual = residualOf(NP);
}

LogicalResult Importer::importGraph(onnx::GraphProto &GP, Graph &G,
                                    const Scope *Parent) {
  Scope S(M, G, Parent);
  bool Ok = true;
  G.setName(GP.name());
  const std::vector<llvm::StringRef> *Streamed = Parent ? nullptr : MainNodes;

  // Phase 1: define every name of this graph. The main graph's names are
  // counted first (one result a node, as most have), so that the name
  // table is not rehashed on the way.
  if (!Parent)
    M.reserveNames(M.getNumNames() + size_t(GP.input_size()) +
                   size_t(GP.initializer_size()) + size_t(GP.node_size()) +
                   (Streamed ? Streamed->size() : 0));
  for (onnx::ValueInfoProto &VI : *GP.mutable_input()) {
    Value *V = G.addInput(VI.name(), Type());
    Ok &= succeeded(importValueInfo(VI, *V, G));
    Ok &= succeeded(define(S, G, V, "input"));
  }

  for (int I = 0; I < GP.initializer_size(); ++I) {
    onnx::TensorProto &TP = *GP.mutable_initializer(I);
    std::string Name = TP.name();
    std::optional<Tensor> T;
    bool MappedFailed = false;
    if (!Parent)
      T = takeMapped(TP, I, G, MappedFailed);
    if (!T && !MappedFailed)
      T = importTensor(TP, G, "initializer");
    if (!T) {
      // Still define the name so that its uses do not cascade into errors.
      Ok = false;
      T = Tensor();
    }
    if (Value *In = S.lookupHere(Name)) {
      if (In->isGraphInput() && !In->hasInitializer()) {
        In->setInitializer(std::move(*T));
        In->InitOrder = I;
        continue;
      }
      Ok = false;
      emitError(Diags, G) << "initializer '" << Name
                          << "' is defined more than once";
      continue;
    }
    std::vector<Dim> Dims;
    for (int64_t D : T->getDims())
      Dims.push_back(Dim::known(D));
    int32_t ET = T->getElemType();
    Value *V = G.addConstant(Name, std::move(*T));
    V->setType(Type::tensor(ET, std::move(Dims)));
    V->InitOrder = I;
    Ok &= succeeded(define(S, G, V, "initializer"));
  }

  // Sparse initializers stay in the residual; the IR sees a dense constant.
  for (const onnx::SparseTensorProto &SP : GP.sparse_initializer()) {
    const std::string &Name = SP.values().name();
    if (S.lookupHere(Name))
      continue; // a graph input with a sparse default value
    std::optional<Tensor> T = densify(SP, G);
    if (!T) {
      Ok = false;
      T = Tensor();
    }
    std::vector<Dim> Dims;
    for (int64_t D : SP.dims())
      Dims.push_back(Dim::known(D));
    int32_t ET = T->getElemType();
    Value *V = G.addConstant(Name, std::move(*T));
    V->setType(Type::tensor(ET, std::move(Dims)));
    Ok &= succeeded(define(S, G, V, "sparse initializer"));
  }

  // Streamed nodes are parsed twice, cheaply: phase 1 reads only their
  // names from the bytes, so the nodes and values are allocated together
  // as from a parsed graph (the passes walk them; interleaving them with
  // the attributes' allocations cost the pipeline a fifth of its time).
  std::vector<Node *> Nodes;
  Nodes.reserve(size_t(GP.node_size()) + (Streamed ? Streamed->size() : 0));
  NodeHead Head;
  for (onnx::NodeProto &NP : *GP.mutable_node()) {
    headOf(NP, Head);
    Nodes.push_back(declareNode(Head, G, S, Ok));
  }
  // Phase 2 parses each streamed node again, whole, ahead of its
  // resolution (ParseAhead: on the other core for a large graph).
  std::optional<ParseAhead> Parsed;
  if (Streamed) {
    Parsed.emplace(*Streamed);
    onnx::NodeProto Scratch;
    NodeHead Ahead;
    for (size_t I = 0; I < Streamed->size(); ++I) {
      llvm::StringRef B = (*Streamed)[I];
      // The buckets that defining the results of a node a few places ahead
      // will write start loading now (its head is scanned twice: the scan
      // costs less than the cache misses).
      if (I + kPrefetchDistance < Streamed->size() &&
          scanNodeHead((*Streamed)[I + kPrefetchDistance], Ahead))
        for (llvm::StringRef R : Ahead.Outputs)
          M.prefetchName(R);
      // Bytes the scan does not take (groups) go through protobuf.
      if (!scanNodeHead(B, Head)) {
        Scratch.Clear();
        if (!mergeFromBytes(Scratch, B))
          return emitMalformed(Diags);
        headOf(Scratch, Head);
      }
      Nodes.push_back(declareNode(Head, G, S, Ok));
    }
  }

  // Outputs: the producer's type and leftovers come from the output entry.
  for (onnx::ValueInfoProto &VI : *GP.mutable_output()) {
    Value *V = S.lookup(VI.name());
    if (!V) {
      Ok = false;
      emitError(Diags, G) << "graph output '" << VI.name()
                          << "' is not defined";
      continue;
    }
    bool First = !V->isGraphOutput();
    G.addOutput(V);
    if (First && V->getOrigin() == Value::Origin::NodeResult &&
        V->getOwningGraph() == &G)
      Ok &= succeeded(importValueInfo(VI, *V, G));
  }

  // value_info naming a node result or a constant lives on the value; any
  // other entry (naming nothing, or an input/output which already has its
  // ValueInfoProto) is carried verbatim.
  for (int I = 0; I < GP.value_info_size(); ++I) {
    onnx::ValueInfoProto &VI = *GP.mutable_value_info(I);
    Value *V = S.lookupHere(VI.name());
    if (!V || V->isGraphInput() || V->isOutputOf(G) || V->HadValueInfo) {
      G.OrphanValueInfos.push_back(VI.SerializeAsString());
      continue;
    }
    V->HadValueInfo = true;
    V->InfoOrder = I;
    Ok &= succeeded(importValueInfo(VI, *V, G));
  }

  // Phase 2: resolve uses, in node order, and import attributes (subgraphs
  // see every name of this graph and of the enclosing ones). The name
  // table's buckets of a node a few places ahead are loaded meanwhile: in a
  // large graph each lookup was a cache miss (a third of the load's time).
  for (int NI = 0; NI < GP.node_size(); ++NI) {
    if (NI + kPrefetchDistance < GP.node_size())
      prefetchInputs(GP.node(NI + kPrefetchDistance));
    resolveNode(*GP.mutable_node(NI), *Nodes[NI], S, Ok);
  }
  if (Streamed)
    for (size_t I = 0; I < Streamed->size(); ++I) {
      onnx::NodeProto *NP = Parsed->take(I);
      if (!NP)
        return emitMalformed(Diags);
      if (const onnx::NodeProto *Ahead = Parsed->peek(I + kPrefetchDistance))
        prefetchInputs(*Ahead);
      resolveNode(*NP, *Nodes[size_t(GP.node_size()) + I], S, Ok);
    }

  GP.clear_node();
  GP.clear_initializer();
  GP.clear_input();
  GP.clear_output();
  GP.clear_value_info();
  if (!GP.name().empty())
    GP.clear_name();
  G.Residual = residualOf(GP);
  return success(Ok);
}

/// True when export can rebuild the opset_import list from the IR's
/// (domain, version) pairs exactly.
static bool opsetsAreCanonical(const onnx::ModelProto &P) {
  for (const onnx::OperatorSetIdProto &O : P.opset_import())
    if (!O.has_domain() || !O.has_version() ||
        O.GetReflection()->GetUnknownFields(O).field_count())
      return false;
  return true;
}

/// importModel, with the main graph's raw_data left in \p Mapped.
static std::unique_ptr<Model>
importMapped(onnx::ModelProto &&Proto, llvm::StringRef BaseDir,
             DiagnosticEngine &Diags, const MappedModel *Mapped,
             const ImportOptions &Opts,
             const std::vector<llvm::StringRef> *MainNodes = nullptr) {
  if (!Proto.has_graph()) {
    emitError(Diags) << "not an ONNX model: it has no graph";
    return nullptr;
  }
  auto M = std::make_unique<Model>();
  M->BaseDir = BaseDir.str();
  M->setIrVersion(Proto.ir_version());
  for (const onnx::OperatorSetIdProto &O : Proto.opset_import())
    M->getOpsetImports().push_back(OpsetImport{O.domain(), O.version()});

  Importer I(*M, BaseDir, Diags, Mapped, Opts, MainNodes);
  if (failed(I.importGraph(*Proto.mutable_graph(), M->getGraph(), nullptr)))
    return nullptr;
  I.remarkUnknownDims();

  Proto.clear_graph();
  Proto.clear_ir_version();
  // Otherwise the original list stays in the residual; export uses it while
  // the IR's list still matches it.
  if (opsetsAreCanonical(Proto))
    Proto.clear_opset_import();
  M->Residual = residualOf(Proto);
  return M;
}

std::unique_ptr<Model> onnxopt::importModel(onnx::ModelProto &&Proto,
                                            llvm::StringRef BaseDir,
                                            DiagnosticEngine &Diags,
                                            const ImportOptions &Opts) {
  return importMapped(std::move(Proto), BaseDir, Diags, nullptr, Opts);
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

/// Block size of the streaming reader (protobuf's default is 8 KiB).
constexpr int StreamBlockSize = 1 << 20;

/// Raw data of at least this many bytes stays in the mapped model file.
constexpr uint64_t MinMappedRawData = 1024;

static std::unique_ptr<Model> tooLarge(DiagnosticEngine &Diags) {
  emitError(Diags) << "the model is larger than 2 GB, which protobuf "
                      "cannot parse; store its weights as external data";
  return nullptr;
}

/// The parsed proto lives on an arena: millions of small messages are
/// bump-allocated and freed at once (1M nodes: 15% less CPU). Blocks stay
/// below malloc's mmap threshold, so their pages are reused afterwards.
static google::protobuf::ArenaOptions parseArenaOptions() {
  google::protobuf::ArenaOptions AO;
  AO.start_block_size = 64 << 10;
  AO.max_block_size = 64 << 10;
  return AO;
}

static std::unique_ptr<Model> malformed(DiagnosticEngine &Diags) {
  emitMalformed(Diags);
  return nullptr;
}

/// Parses a binary ModelProto from \p In (nothing is buffered beyond what
/// protobuf itself keeps).
static std::unique_ptr<Model> parseStream(pbio::ZeroCopyInputStream &In,
                                          llvm::StringRef BaseDir,
                                          DiagnosticEngine &Diags,
                                          const ImportOptions &Opts,
                                          const MappedModel *Mapped = nullptr) {
  google::protobuf::Arena Arena(parseArenaOptions());
  onnx::ModelProto &Proto =
      *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&Arena);
  bool Parsed;
  {
    pbio::CodedInputStream Coded(&In);
    Coded.SetTotalBytesLimit(INT_MAX);
    Parsed =
        Proto.ParseFromCodedStream(&Coded) && Coded.ConsumedEntireMessage();
  }
  if (!Parsed)
    return malformed(Diags);
  return importMapped(std::move(Proto), BaseDir, Diags, Mapped, Opts);
}

/// Parses \p Bytes (in memory) without the main graph's nodes, which the
/// importer parses one at a time into one reused proto: the parsed model
/// never holds them all (the peak of a load was the whole proto plus the
/// IR built from it). Bytes the split does not understand are parsed whole.
static std::unique_ptr<Model> parseSplit(llvm::StringRef Bytes,
                                         llvm::StringRef BaseDir,
                                         DiagnosticEngine &Diags,
                                         const ImportOptions &Opts,
                                         const MappedModel *Mapped = nullptr) {
  NodeSplit Split;
  if (!splitMainGraphNodes(Bytes, Split) || Split.Nodes.empty()) {
    pbio::ArrayInputStream In(Bytes.data(), int(Bytes.size()));
    return parseStream(In, BaseDir, Diags, Opts, Mapped);
  }
  google::protobuf::Arena Arena(parseArenaOptions());
  onnx::ModelProto &Proto =
      *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&Arena);
  for (llvm::StringRef Run : Split.ModelRuns)
    if (!mergeFromBytes(Proto, Run))
      return malformed(Diags);
  onnx::GraphProto &G = *Proto.mutable_graph();
  for (llvm::StringRef Run : Split.GraphRuns)
    if (!mergeFromBytes(G, Run))
      return malformed(Diags);
  return importMapped(std::move(Proto), BaseDir, Diags, Mapped, Opts,
                      &Split.Nodes);
}

std::unique_ptr<Model> onnxopt::parseBinaryModel(llvm::StringRef Bytes,
                                                 llvm::StringRef BaseDir,
                                                 DiagnosticEngine &Diags,
                                                 const ImportOptions &Opts) {
  if (Bytes.empty()) {
    emitError(Diags) << "the model is empty";
    return nullptr;
  }
  if (Bytes.size() > size_t(INT_MAX))
    return tooLarge(Diags);
  return parseSplit(Bytes, BaseDir, Diags, Opts);
}

/// Parses a mapped model file. Large raw_data is left out of the parse and
/// stays in \p File; without any, the mapping is parsed as it is.
static std::unique_ptr<Model> parseMapped(std::shared_ptr<MappedFile> File,
                                          llvm::StringRef BaseDir,
                                          DiagnosticEngine &Diags,
                                          const ImportOptions &Opts) {
  llvm::StringRef Bytes(File->data(), File->size());
  MappedModel Mapped;
  std::string Thin;
  if (thinModelFile(File->getFD(), File->size(), MinMappedRawData, Thin,
                    Mapped.RawData)) {
    if (Thin.size() > size_t(INT_MAX)) {
      emitError(Diags) << "the model is larger than 2 GB even without its "
                          "large initializers, which protobuf cannot parse";
      return nullptr;
    }
    Mapped.File = std::move(File);
    return parseSplit(Thin, BaseDir, Diags, Opts, &Mapped);
  }
  if (Bytes.size() > size_t(INT_MAX))
    return tooLarge(Diags);
  return parseSplit(Bytes, BaseDir, Diags, Opts);
}

/// Reads standard input; the first chunk decides between text and binary.
static std::unique_ptr<Model> loadFromStdin(DiagnosticEngine &Diags,
                                            const ImportOptions &Opts) {
  pbio::FileInputStream In(STDIN_FILENO, StreamBlockSize);
  const void *Data;
  int Size = 0;
  while (In.Next(&Data, &Size) && Size == 0) {
  }
  if (Size <= 0) {
    if (In.GetErrno())
      emitError(Diags) << "cannot read standard input: "
                       << std::strerror(In.GetErrno());
    else
      emitError(Diags) << "the input is empty";
    return nullptr;
  }
  bool Text = looksLikeText(
      llvm::StringRef(static_cast<const char *>(Data), size_t(Size)));
  if (!Text) {
    In.BackUp(Size);
    return parseStream(In, "", Diags, Opts);
  }
  std::string Buf(static_cast<const char *>(Data), size_t(Size));
  while (In.Next(&Data, &Size))
    Buf.append(static_cast<const char *>(Data), size_t(Size));
  if (In.GetErrno()) {
    emitError(Diags) << "cannot read standard input: "
                     << std::strerror(In.GetErrno());
    return nullptr;
  }
  return parseTextModel(Buf, Diags);
}

static std::unique_ptr<Model> loadTextFile(llvm::StringRef Path,
                                           llvm::StringRef BaseDir,
                                           DiagnosticEngine &Diags) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf =
      llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf) {
    emitError(Diags) << "cannot open '" << Path
                     << "': " << Buf.getError().message();
    return nullptr;
  }
  std::unique_ptr<Model> M = parseTextModel((*Buf)->getBuffer(), Diags);
  if (M)
    M->BaseDir = BaseDir.str();
  return M;
}

std::unique_ptr<Model> onnxopt::loadModel(llvm::StringRef Path,
                                          DiagnosticEngine &Diags,
                                          const ImportOptions &Opts) {
  if (Path == "-")
    return loadFromStdin(Diags, Opts);
  llvm::StringRef BaseDir = llvm::sys::path::parent_path(Path);
  if (guessFormatFromPath(Path) == FileFormat::Text)
    return loadTextFile(Path, BaseDir, Diags);

  std::string PathStr = Path.str();
  int FD = ::open(PathStr.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0) {
    emitError(Diags) << "cannot open '" << Path
                     << "': " << std::strerror(errno);
    return nullptr;
  }
  pbio::FileInputStream In(FD, StreamBlockSize);
  In.SetCloseOnDelete(true);
  struct stat St;
  if (::fstat(FD, &St) != 0 || S_ISDIR(St.st_mode)) {
    emitError(Diags) << "cannot read '" << Path << "': not a file";
    return nullptr;
  }
  if (S_ISREG(St.st_mode)) {
    if (St.st_size == 0) {
      emitError(Diags) << "the model file is empty";
      return nullptr;
    }
    // Regular files are mapped; if that fails, they are read.
    std::string Ignored;
    if (std::shared_ptr<MappedFile> File = MappedFile::open(PathStr, Ignored))
      return parseMapped(std::move(File), BaseDir, Diags, Opts);
    if (uint64_t(St.st_size) > uint64_t(INT_MAX))
      return tooLarge(Diags);
  }
  std::unique_ptr<Model> M = parseStream(In, BaseDir, Diags, Opts);
  if (!M && In.GetErrno())
    emitError(Diags) << "cannot read '" << Path
                     << "': " << std::strerror(In.GetErrno());
  return M;
}
