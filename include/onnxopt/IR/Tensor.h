//===- Tensor.h - Immutable tensor payloads --------------------*- C++ -*-===//
//
// A Tensor is a cheap, shared, immutable handle to a tensor's payload,
// stored as ONNX's TensorProto. Copying a Tensor never copies bytes:
// initializers keep the bytes protobuf parsed (moved, not copied, out of the
// loaded ModelProto), stay in an mmap of their external-data file, or (large
// raw_data of a binary model file the importer mapped) stay in the mmap of
// the model file itself. This header stays free of protobuf: the proto is
// an opaque detail::TensorStorage here, and the functions that take or
// return protos (detail::getProto, detail::tensorFromProto...) are declared
// in IR/ProtoTypes.h, for code that talks to ONNX in protos.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_TENSOR_H
#define ONNXOPT_IR_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

namespace detail {
/// What an unpacked Tensor stores: a TensorProto (defined in
/// IR/ProtoTypes.h, which reads it).
struct TensorStorage;
/// The proto functions of IR/ProtoTypes.h, implemented in Tensor.cpp: the
/// one place that builds tensors from protos and reads packed ones back.
struct TensorAccess;
} // namespace detail

/// A read-only memory map of an external-data file (or of a model file whose
/// raw_data stays in it), shared by all tensors stored in it. The descriptor
/// stays open so that writers can copy ranges in the kernel.
class MappedFile {
public:
  /// Maps \p Path; returns nullptr and sets \p Error on failure.
  static std::shared_ptr<MappedFile> open(const std::string &Path,
                                          std::string &Error);
  ~MappedFile();
  llvm::StringRef getPath() const { return Path; }
  const char *data() const { return Data; }
  uint64_t size() const { return Size; }
  /// The open, read-only descriptor of the file (for copy_file_range).
  int getFD() const { return FD; }

private:
  MappedFile() = default;
  std::string Path;
  const char *Data = nullptr;
  uint64_t Size = 0;
  int FD = -1;
};

/// Where an external tensor's bytes live.
struct ExternalLocation {
  std::shared_ptr<MappedFile> File;
  std::string Location; ///< the `location` key as written in the model
  uint64_t Offset = 0;
  uint64_t Length = 0;
  /// Not external data: the tensor's inline raw_data, left by the importer in
  /// the mapped model file (Location is empty). Export writes it inline.
  /// Only detail::tensorFromMappedRawData makes such locations.
  bool InModelFile = false;
};

/// Small tensors (a payload below 1 KiB in raw_data, nothing but a name,
/// a type and dims besides) are packed: one block holds the dims, the name
/// and the bytes, and no TensorProto exists until someone asks for one. An
/// export has one per Constant node and per small weight: a TensorProto
/// with its dims, name and raw_data was four heap blocks and ~360 bytes,
/// the packed form of an int64 scalar is 48.
class Tensor {
public:
  Tensor();
  Tensor(const Tensor &);
  Tensor(Tensor &&) noexcept;
  Tensor &operator=(const Tensor &);
  Tensor &operator=(Tensor &&) noexcept;
  ~Tensor();
  /// Builds a tensor with raw little-endian bytes.
  static Tensor fromRaw(llvm::StringRef Name, int32_t ElemType,
                        llvm::ArrayRef<int64_t> Dims, llvm::StringRef Bytes);
  static Tensor fromInt64s(llvm::StringRef Name, llvm::ArrayRef<int64_t> Dims,
                           llvm::ArrayRef<int64_t> Values);
  static Tensor fromFloats(llvm::StringRef Name, llvm::ArrayRef<int64_t> Dims,
                           llvm::ArrayRef<float> Values);
  bool isNull() const { return !Stored && !Small; }
  explicit operator bool() const { return !isNull(); }

  /// The stored proto (opaque here: IR/ProtoTypes.h reads it, see
  /// detail::getStoredProtoIfAny), or null for a packed or null tensor.
  const detail::TensorStorage *getStorage() const { return Stored.get(); }
  /// True when the tensor is packed (no TensorProto behind it).
  bool isPacked() const { return bool(Small); }

  llvm::StringRef getName() const;
  /// Returns a copy of this tensor with another name (bytes are shared only
  /// for mapped tensors; inline bytes are copied, so use sparingly).
  Tensor withName(llvm::StringRef Name) const;
  int32_t getElemType() const;
  std::vector<int64_t> getDims() const;
  /// The dims in place (valid as long as the tensor): no vector to build.
  llvm::ArrayRef<int64_t> getDimsRef() const;
  /// Product of dims (1 for a scalar).
  int64_t getNumElements() const;

  /// data_location is EXTERNAL: the bytes are in an external-data file.
  bool isExternal() const { return Ext && !(*Ext)->InModelFile; }
  /// Inline raw_data whose bytes stayed in the mapped model file.
  bool hasMappedRawData() const { return Ext && (*Ext)->InModelFile; }
  /// Where the bytes are mapped: external data or mapped raw_data.
  const std::optional<ExternalLocation> &getExternal() const {
    return Ext ? *Ext : noLocation();
  }

  /// Size of the payload in bytes (raw_data, typed fields or mapped).
  uint64_t getByteSize() const;

  /// The payload as raw little-endian bytes, without copying when the data
  /// is in raw_data or mapped. For typed fields (float_data, int64_data...)
  /// the bytes are materialized into \p Storage. Strings are not supported
  /// (returns std::nullopt).
  std::optional<llvm::StringRef> getRawBytes(std::string &Storage) const;

  /// Integer/bool contents widened to int64; std::nullopt for other types.
  std::optional<std::vector<int64_t>> toInt64s() const;
  /// Numeric contents as double; std::nullopt for strings/unsupported.
  std::optional<std::vector<double>> toDoubles() const;

  /// Same element type, dims and contents (name and storage form ignored).
  /// Mapped bytes are compared in bounded chunks whose pages are released
  /// after each (see forEachChunk): comparing two 1 GB weights does not
  /// keep 2 GB resident.
  bool contentEquals(const Tensor &O) const;
  /// A hash consistent with contentEquals, over the whole payload, read in
  /// bounded chunks like contentEquals.
  uint64_t contentHash() const;
  /// A hash of the type, the dims and at most the first \p MaxBytes of the
  /// payload: equal tensors have equal prefix hashes. A cheap filter before
  /// contentHash on large weights, which mostly differ early.
  uint64_t prefixHash(uint64_t MaxBytes) const;

  /// The payload as consecutive pieces of at most kChunkBytes, in order;
  /// stops and returns false when \p F does. Pages of mapped bytes are
  /// released (madvise) after each piece, so that reading a mapped tensor
  /// through here keeps at most one piece resident. Returns false for
  /// strings and null tensors without calling \p F.
  template <typename Fn> bool forEachChunk(Fn F) const {
    std::string Storage;
    std::optional<llvm::StringRef> Bytes = getRawBytes(Storage);
    if (!Bytes)
      return false;
    bool Mapped = Ext != nullptr;
    for (uint64_t Off = 0; Off < Bytes->size(); Off += kChunkBytes) {
      llvm::StringRef Piece = Bytes->substr(Off, kChunkBytes);
      bool Go = F(Piece);
      if (Mapped)
        releasePages(Piece);
      if (!Go)
        return false;
    }
    return true;
  }
  /// The size of the pieces of forEachChunk.
  static constexpr uint64_t kChunkBytes = uint64_t(4) << 20;

private:
  /// Drops the whole pages inside \p Bytes, a range of a read-only file
  /// mapping, from this process' memory; they are read again on demand.
  static void releasePages(llvm::StringRef Bytes);
  static const std::optional<ExternalLocation> &noLocation() {
    static const std::optional<ExternalLocation> None;
    return None;
  }
  const ExternalLocation *ext() const { return Ext ? &**Ext : nullptr; }

  friend struct detail::TensorAccess;
  struct Packed;

  /// Null for packed tensors.
  std::shared_ptr<const detail::TensorStorage> Stored;
  /// Null for the tensors whose bytes are in the proto, else an engaged
  /// optional (the type getExternal returns) shared by all copies of the
  /// handle: copying a Tensor copies no string.
  std::shared_ptr<const std::optional<ExternalLocation>> Ext;
  /// Set for packed tensors (then Stored and Ext are null).
  llvm::IntrusiveRefCntPtr<const Packed> Small;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_TENSOR_H
