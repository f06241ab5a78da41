//===- Write.cpp - Writing models to files --------------------------------===//
//
// saveModel: verify, then write atomically (a temporary file renamed into
// place), streaming large payloads from the IR between the skeleton's bytes
// and writing external data beside the output only.
//
//===----------------------------------------------------------------------===

#include "ExportDetail.h"
#include "ProtoWire.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxopt;
using namespace onnxopt::detail;
namespace pbio = google::protobuf::io;

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
/// The main graph's serialized nodes, in blocks of 64 KiB. One growing
/// string held up to twice the bytes while it was copied into a larger one
/// (1M nodes: 115 MB of nodes, 190 MB at the copy), and blocks that size
/// come from malloc's heap, where the memory the passes freed is.
class ByteBlocks {
public:
  static constexpr size_t BlockSize = 64 << 10;

  /// \p N more bytes, contiguous, to be written by the caller.
  uint8_t *append(size_t N) {
    if (Blocks.empty() || Blocks.back().Capacity - Blocks.back().Size < N) {
      size_t Capacity = std::max(BlockSize, N);
      Blocks.push_back(Block{std::unique_ptr<uint8_t[]>(new uint8_t[Capacity]),
                             0, Capacity});
    }
    Block &B = Blocks.back();
    uint8_t *At = B.Data.get() + B.Size;
    B.Size += N;
    Total += N;
    return At;
  }
  size_t size() const { return Total; }
  void clear() {
    Blocks.clear();
    Total = 0;
  }
  void writeTo(pbio::CodedOutputStream &Coded) const {
    for (const Block &B : Blocks)
      Coded.WriteRaw(B.Data.get(), int(B.Size));
  }

private:
  struct Block {
    std::unique_ptr<uint8_t[]> Data;
    size_t Size, Capacity;
  };
  std::vector<Block> Blocks;
  size_t Total = 0;
};

/// The main graph's parts serialized as they are exported.
struct StreamedParts {
  ByteBlocks Nodes, Infos;
};

struct SplitModel {
  /// On the skeleton's arena, so that moving its parts here swaps pointers.
  explicit SplitModel(google::protobuf::Arena &A)
      : Head(*google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&A)),
        Tail(*google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&A)),
        GraphHead(
            *google::protobuf::Arena::CreateMessage<onnx::GraphProto>(&A)),
        GraphTail(
            *google::protobuf::Arena::CreateMessage<onnx::GraphProto>(&A)),
        GraphEnd(*google::protobuf::Arena::CreateMessage<onnx::GraphProto>(&A)),
        Inits(*google::protobuf::Arena::CreateMessage<onnx::GraphProto>(&A)
                   ->mutable_initializer()) {}

  onnx::ModelProto &Head, &Tail;
  /// The main graph's nodes, serialized as they were exported, when the
  /// skeleton does not hold them: written before GraphHead (then the name).
  ByteBlocks NodeBytes;
  /// Likewise the main graph's value_info entries: written after GraphTail
  /// (fields up to the outputs), before GraphEnd (the fields after them).
  ByteBlocks InfoBytes;
  onnx::GraphProto &GraphHead, &GraphTail, &GraphEnd;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> &Inits;
  std::vector<InitEntry> Entries;
  size_t GraphSize = 0, TotalSize = 0;
};

constexpr uint32_t GraphTag = (7 << 3) | 2;       // ModelProto.graph
constexpr uint32_t NodeTag = (1 << 3) | 2;        // GraphProto.node
constexpr uint32_t ValueInfoTag = (13 << 3) | 2;  // GraphProto.value_info
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
                       std::vector<const Tensor *> Streamed,
                       StreamedParts &&Parts, SplitModel &S) {
  S.NodeBytes = std::move(Parts.Nodes);
  S.InfoBytes = std::move(Parts.Infos);
  onnx::GraphProto &G = *Skeleton.mutable_graph();
  S.Inits.Swap(G.mutable_initializer());
  S.GraphHead.mutable_node()->Swap(G.mutable_node());
  if (G.has_name()) {
    S.GraphHead.set_name(G.name());
    G.clear_name();
  }
  S.GraphTail.Swap(&G);
  // The fields numbered after value_info, and the unknown ones (written
  // last), follow the streamed value_info entries.
  S.GraphEnd.mutable_quantization_annotation()->Swap(
      S.GraphTail.mutable_quantization_annotation());
  S.GraphEnd.mutable_sparse_initializer()->Swap(
      S.GraphTail.mutable_sparse_initializer());
  S.GraphEnd.GetReflection()
      ->MutableUnknownFields(&S.GraphEnd)
      ->Swap(S.GraphTail.GetReflection()->MutableUnknownFields(&S.GraphTail));
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

  size_t GraphSize = S.NodeBytes.size() + S.GraphHead.ByteSizeLong() +
                     S.GraphTail.ByteSizeLong() + S.InfoBytes.size() +
                     S.GraphEnd.ByteSizeLong();
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
      E.Size = detail::getStoredProto(*E.Streamed).ByteSizeLong();
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
  S.NodeBytes.writeTo(Coded);
  S.GraphHead.SerializeWithCachedSizes(&Coded);
  for (int I = 0; I < S.Inits.size(); ++I) {
    const InitEntry &E = S.Entries[I];
    Coded.WriteTag(InitializerTag);
    Coded.WriteVarint64(E.Size);
    if (!E.Streamed) {
      S.Inits.Get(I).SerializeWithCachedSizes(&Coded);
    } else if (!E.Streamed->hasMappedRawData()) {
      detail::getStoredProto(*E.Streamed).SerializeWithCachedSizes(&Coded);
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
  S.InfoBytes.writeTo(Coded);
  S.GraphEnd.SerializeWithCachedSizes(&Coded);
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

/// Appends \p N to \p Out as the field \p Tag (of a GraphProto).
static void appendField(uint32_t Tag, const google::protobuf::MessageLite &N,
                        ByteBlocks &Out) {
  size_t Size = N.ByteSizeLong();
  uint8_t Prefix[16];
  uint8_t *End = pbio::CodedOutputStream::WriteTagToArray(Tag, Prefix);
  End = pbio::CodedOutputStream::WriteVarint64ToArray(Size, End);
  uint8_t *Dest = Out.append(size_t(End - Prefix) + Size);
  Dest = std::copy(Prefix, End, Dest);
  N.SerializeWithCachedSizesToArray(Dest);
}

/// Builds the skeleton, externalizing tensors when the model would not fit
/// protobuf's limit or when asked to. With \p Parts, the main graph's nodes
/// and value_info entries are serialized into it as they are exported (the
/// nodes checked by \p Check, if any, on the first build), not kept in the
/// skeleton.
static LogicalResult
buildSkeleton(const Model &M, const ExportOptions &Opts, bool Binary,
              SaveContext &Ctx, onnx::ModelProto &Skeleton,
              std::vector<const Tensor *> &Streamed, StreamedParts *Parts,
              SaveVerification *Check, DiagnosticEngine &Diags) {
  bool First = true;
  auto Build = [&] {
    Ctx.Chunks.clear();
    Ctx.DataSize = 0;
    Ctx.KeptFiles.clear();
    Skeleton.Clear();
    Exporter E(&Ctx);
    if (Parts) {
      Parts->Nodes.clear();
      Parts->Infos.clear();
      // The checks' verdict does not depend on where tensors are written.
      bool Checking = Check && First;
      E.MainNodeSink = [&, Checking](const Node &N,
                                     const onnx::NodeProto &NP) {
        if (Checking)
          Check->checkNode(N, NP);
        // Text is printed from the IR: the bytes are for binary files only.
        if (Binary)
          appendField(NodeTag, NP, Parts->Nodes);
      };
      E.MainValueInfoSink = [&](const onnx::ValueInfoProto &VI) {
        if (Binary)
          appendField(ValueInfoTag, VI, Parts->Infos);
      };
    }
    E.exportModel(M, Skeleton);
    Streamed = std::move(E.Streamed);
    First = false;
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
  uint64_t Total = Skeleton.ByteSizeLong() +
                   (Parts ? Parts->Nodes.size() + Parts->Infos.size() : 0);
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

  // The skeleton's many small messages are allocated from, and freed with,
  // one arena: no per-message malloc, free or destructor.
  google::protobuf::ArenaOptions ArenaOpts;
  ArenaOpts.start_block_size = 64 << 10;
  ArenaOpts.max_block_size = 1 << 20;
  google::protobuf::Arena Arena(ArenaOpts);
  onnx::ModelProto &Skeleton =
      *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&Arena);
  std::vector<const Tensor *> Streamed;
  StreamedParts Parts;
  // The checks that need only the IR run while the skeleton is built. Their
  // worker is joined when this returns: it frees its memory while the file
  // is written.
  std::optional<SaveVerification> Check;
  if (Binary || Opts.Verify) {
    if (Opts.Verify)
      Check.emplace(M, Opts.With);
    auto Abandon = [&] {
      if (Check)
        Check->abandon(Diags);
      return failure();
    };
    // Nodes are streamed unless the verification needs them in the skeleton.
    bool StreamNodes = !Check || Check->checksNodes();
    if (failed(buildSkeleton(M, Opts, Binary, Ctx, Skeleton, Streamed,
                             StreamNodes ? &Parts : nullptr,
                             Check ? &*Check : nullptr, Diags)))
      return Abandon();
    if (ToStdout && !Ctx.Chunks.empty()) {
      emitError(Diags) << "the model needs a new external-data file, "
                          "which cannot be written next to standard "
                          "output; write to a file";
      return Abandon();
    }
    // The skeleton's large payloads are placeholders already: it is verified
    // itself, not a copy.
    if (Check && failed(Check->finish(Skeleton, Diags)))
      return failure();
  }
  if (!Binary)
    return writeText(M, Path, Diags);

  SplitModel Split(Arena);
  splitModel(std::move(Skeleton), std::move(Streamed), std::move(Parts), Split);
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
