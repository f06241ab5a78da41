//===- Tensor.cpp - Immutable tensor payloads -----------------------------===//
//
// Tensors share their TensorProto; external payloads stay in a read-only
// mmap of their data file, and large raw_data of a mapped model file stays in
// that mapping (the proto lacks raw_data until detail::getProto() is
// called). Typed
// payload fields (float_data, int64_data...) are only materialized as raw
// bytes when someone asks for them.
//
//===----------------------------------------------------------------------===//

#include "onnxopt/IR/Tensor.h"
#include "onnxopt/IR/ElementType.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/IR/Type.h"
#include "llvm/Support/xxhash.h"
#include <onnx/onnx_pb.h>

#include <atomic>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxopt;
using onnx::TensorProto;

//===----------------------------------------------------------------------===//
// MappedFile
//===----------------------------------------------------------------------===//

std::shared_ptr<MappedFile> MappedFile::open(const std::string &Path,
                                             std::string &Error) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0) {
    Error = "cannot open '" + Path + "': " + std::strerror(errno);
    return nullptr;
  }
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode)) {
    Error = "cannot map '" + Path + "': not a regular file";
    ::close(FD);
    return nullptr;
  }
  std::shared_ptr<MappedFile> F(new MappedFile());
  F->Path = Path;
  F->Size = static_cast<uint64_t>(St.st_size);
  if (F->Size != 0) {
    void *Addr = ::mmap(nullptr, F->Size, PROT_READ, MAP_PRIVATE, FD, 0);
    if (Addr == MAP_FAILED) {
      Error = "cannot map '" + Path + "': " + std::strerror(errno);
      ::close(FD);
      return nullptr;
    }
    F->Data = static_cast<const char *>(Addr);
  }
  // Kept open for copy_file_range; closed with the mapping.
  F->FD = FD;
  return F;
}

MappedFile::~MappedFile() {
  if (Data)
    ::munmap(const_cast<char *>(Data), Size);
  if (FD >= 0)
    ::close(FD);
}

//===----------------------------------------------------------------------===//
// Element helpers
//===----------------------------------------------------------------------===//

namespace {

/// Which typed repeated field holds the payload of an element type.
enum class Field { None, Float, Int32, String, Int64, Double, UInt64 };

Field typedFieldFor(int32_t ElemType) {
  switch (ElemType) {
  case TensorProto::FLOAT:
  case TensorProto::COMPLEX64:
    return Field::Float;
  case TensorProto::INT32:
  case TensorProto::INT16:
  case TensorProto::INT8:
  case TensorProto::UINT16:
  case TensorProto::UINT8:
  case TensorProto::BOOL:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return Field::Int32;
  default:
    break;
  }
  // float8: one element per int32; int4, uint4, float4e2m1: one byte (two
  // packed elements) per int32.
  if (isPostOnnx112ElementType(ElemType))
    return Field::Int32;
  switch (ElemType) {
  case TensorProto::STRING:
    return Field::String;
  case TensorProto::INT64:
    return Field::Int64;
  case TensorProto::DOUBLE:
  case TensorProto::COMPLEX128:
    return Field::Double;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return Field::UInt64;
  default:
    return Field::None;
  }
}

/// Bytes that one int32_data entry stands for.
size_t int32FieldBytes(int32_t ElemType) {
  if (getElementTypeBits(static_cast<ElementType>(ElemType)) == 4)
    return 1;
  return getElemTypeSize(ElemType);
}

/// Appends the low \p Size bytes of \p V, little-endian.
void appendLE(std::string &Out, uint64_t V, size_t Size) {
  for (size_t I = 0; I < Size; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}

uint64_t readLE(const char *P, size_t Size) {
  uint64_t V = 0;
  for (size_t I = 0; I < Size; ++I)
    V |= uint64_t(static_cast<unsigned char>(P[I])) << (8 * I);
  return V;
}

int64_t signExtend(uint64_t V, size_t Size) {
  if (Size >= 8)
    return static_cast<int64_t>(V);
  unsigned Shift = 64 - 8 * Size;
  return static_cast<int64_t>(V << Shift) >> Shift;
}

float halfToFloat(uint16_t H) {
  uint32_t Sign = (H >> 15) & 1, Exp = (H >> 10) & 0x1f, Mant = H & 0x3ff;
  float Mag;
  if (Exp == 0)
    Mag = std::ldexp(static_cast<float>(Mant), -24);
  else if (Exp == 31)
    Mag = Mant ? NAN : INFINITY;
  else
    Mag = std::ldexp(static_cast<float>(Mant | 0x400), int(Exp) - 25);
  return Sign ? -Mag : Mag;
}

float bitsToFloat(uint32_t Bits) {
  float F;
  std::memcpy(&F, &Bits, sizeof(F));
  return F;
}

double bitsToDouble(uint64_t Bits) {
  double D;
  std::memcpy(&D, &Bits, sizeof(D));
  return D;
}

bool isIntegerOrBool(int32_t ElemType) {
  switch (ElemType) {
  case TensorProto::INT8:
  case TensorProto::INT16:
  case TensorProto::INT32:
  case TensorProto::INT64:
  case TensorProto::UINT8:
  case TensorProto::UINT16:
  case TensorProto::UINT32:
  case TensorProto::UINT64:
  case TensorProto::BOOL:
    return true;
  default:
    return false;
  }
}

bool isSigned(int32_t ElemType) {
  return ElemType == TensorProto::INT8 || ElemType == TensorProto::INT16 ||
         ElemType == TensorProto::INT32 || ElemType == TensorProto::INT64;
}

std::shared_ptr<detail::TensorStorage>
makeStorage(llvm::StringRef Name, int32_t ElemType,
            llvm::ArrayRef<int64_t> Dims) {
  auto S = std::make_shared<detail::TensorStorage>();
  TensorProto &P = S->Proto;
  if (!Name.empty())
    P.set_name(Name.str());
  P.set_data_type(ElemType);
  for (int64_t D : Dims)
    P.add_dims(D);
  return S;
}

} // namespace

//===----------------------------------------------------------------------===//
// Packed tensors
//===----------------------------------------------------------------------===//

/// One block: this header, then the dims, the name and the raw bytes.
struct Tensor::Packed : llvm::ThreadSafeRefCountedBase<Packed> {
  int32_t ElemType = 0;
  uint32_t NameSize = 0;
  uint32_t ByteSize = 0;
  uint16_t NumDims = 0;
  /// Field presence, kept so that the proto built back is the one read.
  bool HasName = false;
  bool HasRaw = false;
  /// The proto that detail::getProto()/getStoredProto() built, once one was asked
  /// for (possibly from two threads: the first one built is kept).
  mutable std::atomic<TensorProto *> Built{nullptr};

  const int64_t *dims() const {
    return reinterpret_cast<const int64_t *>(this + 1);
  }
  const char *name() const {
    return reinterpret_cast<const char *>(dims() + NumDims);
  }
  const char *bytes() const { return name() + NameSize; }

  void writeTo(TensorProto &Out) const {
    Out.Clear();
    Out.mutable_dims()->Add(dims(), dims() + NumDims);
    Out.set_data_type(ElemType);
    if (HasName)
      Out.set_name(name(), NameSize);
    if (HasRaw)
      Out.set_raw_data(bytes(), ByteSize);
  }

  const TensorProto &proto() const {
    if (TensorProto *P = Built.load(std::memory_order_acquire))
      return *P;
    auto *New = new TensorProto();
    writeTo(*New);
    TensorProto *Expected = nullptr;
    if (Built.compare_exchange_strong(Expected, New, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      return *New;
    delete New;
    return *Expected;
  }

  ~Packed() { delete Built.load(std::memory_order_acquire); }
  /// The block was allocated with its trailing parts (see make).
  static void operator delete(void *P) { ::operator delete(P); }

  static Packed *make(int32_t ElemType, llvm::ArrayRef<int64_t> Dims,
                      std::optional<llvm::StringRef> Name,
                      std::optional<llvm::StringRef> Bytes) {
    size_t NameSize = Name ? Name->size() : 0;
    size_t ByteSize = Bytes ? Bytes->size() : 0;
    void *Mem = ::operator new(sizeof(Packed) + Dims.size() * sizeof(int64_t) +
                               NameSize + ByteSize);
    auto *K = new (Mem) Packed();
    K->ElemType = ElemType;
    K->NumDims = static_cast<uint16_t>(Dims.size());
    K->NameSize = static_cast<uint32_t>(NameSize);
    K->ByteSize = static_cast<uint32_t>(ByteSize);
    K->HasName = Name.has_value();
    K->HasRaw = Bytes.has_value();
    if (!Dims.empty())
      std::memcpy(const_cast<int64_t *>(K->dims()), Dims.data(),
                  Dims.size() * sizeof(int64_t));
    if (NameSize)
      std::memcpy(const_cast<char *>(K->name()), Name->data(), NameSize);
    if (ByteSize)
      std::memcpy(const_cast<char *>(K->bytes()), Bytes->data(), ByteSize);
    return K;
  }
};

namespace {

/// Payloads below this stay packed (larger raw_data of a model file stays
/// in its mapping: MinMappedRawData in Import.cpp).
constexpr size_t kMaxPackedBytes = 1023;

bool fitsPacked(int32_t ElemType, size_t NumDims, size_t ByteSize) {
  return ElemType != TensorProto::STRING && NumDims <= MaxTensorRank &&
         ByteSize <= kMaxPackedBytes;
}

/// Only a name, a type, dims and raw_data, so that the proto built back
/// from the packed form serializes to the same bytes.
bool isPackable(const TensorProto &P) {
  return P.has_data_type() &&
         fitsPacked(P.data_type(), P.dims_size(), P.raw_data().size()) &&
         !P.has_segment() && !P.has_doc_string() && !P.has_data_location() &&
         P.external_data_size() == 0 && P.float_data_size() == 0 &&
         P.int32_data_size() == 0 && P.string_data_size() == 0 &&
         P.int64_data_size() == 0 && P.double_data_size() == 0 &&
         P.uint64_data_size() == 0 &&
         P.GetReflection()->GetUnknownFields(P).empty();
}

} // namespace

/// The proto functions of ProtoTypes.h: they build tensors from protos and
/// read packed tensors back, which needs the tensor's insides.
struct detail::TensorAccess {
  static Tensor pack(const TensorProto &P) {
    std::optional<llvm::StringRef> Name, Bytes;
    if (P.has_name())
      Name = llvm::StringRef(P.name());
    if (P.has_raw_data())
      Bytes = llvm::StringRef(P.raw_data());
    Tensor T;
    T.Small = Tensor::Packed::make(
        P.data_type(), llvm::ArrayRef<int64_t>(P.dims().data(), P.dims_size()),
        Name, Bytes);
    return T;
  }

  static Tensor wrap(std::shared_ptr<const detail::TensorStorage> S,
                     std::optional<ExternalLocation> Ext) {
    Tensor T;
    T.Stored = std::move(S);
    if (Ext)
      T.Ext = std::make_shared<const std::optional<ExternalLocation>>(
          std::move(Ext));
    return T;
  }

  static const TensorProto &getStoredProto(const Tensor &T) {
    return T.Small ? T.Small->proto() : T.Stored->Proto;
  }

  static void toProto(const Tensor &T, TensorProto &Out) {
    if (T.Small)
      T.Small->writeTo(Out);
    else if (T.Stored)
      Out.CopyFrom(T.Stored->Proto);
    else
      Out.Clear();
  }

  static const TensorProto &getProto(const Tensor &T) {
    if (T.Small)
      return T.Small->proto();
    const ExternalLocation *Ext = T.ext();
    const TensorProto &P = T.Stored->Proto;
    if (Ext && Ext->InModelFile && !P.has_raw_data()) {
      // tensorFromMappedRawData made the storage, mutable, so filling in
      // the bytes it stands for is legal; every handle sharing it sees them.
      auto &Full = const_cast<TensorProto &>(P);
      Full.set_raw_data(Ext->Length ? Ext->File->data() + Ext->Offset : "",
                        Ext->Length);
    }
    return P;
  }

  static std::shared_ptr<const TensorProto> getProtoPtr(const Tensor &T) {
    if (T.Small)
      return std::make_shared<TensorProto>(T.Small->proto());
    if (!T.Stored)
      return nullptr;
    const TensorProto &P = getProto(T);
    // Shares the storage's ownership.
    return std::shared_ptr<const TensorProto>(T.Stored, &P);
  }
};

namespace {

/// Storage for \p P's contents (moved, raw_data never copied).
std::shared_ptr<detail::TensorStorage> takeStorage(TensorProto &P) {
  auto S = std::make_shared<detail::TensorStorage>();
  detail::moveTensorProto(P, S->Proto);
  return S;
}

} // namespace

Tensor detail::tensorFromProto(TensorProto &&P) {
  if (isPackable(P))
    return TensorAccess::pack(P);
  return TensorAccess::wrap(takeStorage(P), std::nullopt);
}

Tensor detail::tensorWrappingProto(TensorProto &&P,
                                   std::optional<ExternalLocation> Ext) {
  return TensorAccess::wrap(takeStorage(P), std::move(Ext));
}

Tensor detail::tensorFromMappedRawData(TensorProto &&P,
                                       std::shared_ptr<MappedFile> File,
                                       uint64_t Offset, uint64_t Length) {
  assert(File && Offset <= File->size() && Length <= File->size() - Offset &&
         "mapped raw_data outside its file");
  ExternalLocation Loc;
  Loc.File = std::move(File);
  Loc.Offset = Offset;
  Loc.Length = Length;
  Loc.InModelFile = true;
  return TensorAccess::wrap(takeStorage(P), std::move(Loc));
}

const TensorProto &detail::getStoredProto(const Tensor &T) {
  return TensorAccess::getStoredProto(T);
}

void detail::toProto(const Tensor &T, TensorProto &Out) {
  TensorAccess::toProto(T, Out);
}

const TensorProto &detail::getProto(const Tensor &T) {
  return TensorAccess::getProto(T);
}

std::shared_ptr<const TensorProto> detail::getProtoPtr(const Tensor &T) {
  return TensorAccess::getProtoPtr(T);
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor() = default;
Tensor::Tensor(const Tensor &) = default;
Tensor::Tensor(Tensor &&) noexcept = default;
Tensor &Tensor::operator=(const Tensor &) = default;
Tensor &Tensor::operator=(Tensor &&) noexcept = default;
Tensor::~Tensor() = default;

Tensor Tensor::fromRaw(llvm::StringRef Name, int32_t ElemType,
                       llvm::ArrayRef<int64_t> Dims, llvm::StringRef Bytes) {
  if (fitsPacked(ElemType, Dims.size(), Bytes.size())) {
    Tensor T;
    T.Small = Packed::make(ElemType, Dims,
                           Name.empty() ? std::nullopt
                                        : std::optional<llvm::StringRef>(Name),
                           Bytes);
    return T;
  }
  auto S = makeStorage(Name, ElemType, Dims);
  S->Proto.set_raw_data(Bytes.data(), Bytes.size());
  return detail::TensorAccess::wrap(std::move(S), std::nullopt);
}

Tensor Tensor::fromInt64s(llvm::StringRef Name, llvm::ArrayRef<int64_t> Dims,
                          llvm::ArrayRef<int64_t> Values) {
  std::string Bytes;
  Bytes.reserve(Values.size() * 8);
  for (int64_t V : Values)
    appendLE(Bytes, static_cast<uint64_t>(V), 8);
  return fromRaw(Name, TensorProto::INT64, Dims, Bytes);
}

Tensor Tensor::fromFloats(llvm::StringRef Name, llvm::ArrayRef<int64_t> Dims,
                          llvm::ArrayRef<float> Values) {
  std::string Bytes;
  Bytes.reserve(Values.size() * 4);
  for (float V : Values) {
    uint32_t Bits;
    std::memcpy(&Bits, &V, sizeof(Bits));
    appendLE(Bytes, Bits, 4);
  }
  return fromRaw(Name, TensorProto::FLOAT, Dims, Bytes);
}

llvm::StringRef Tensor::getName() const {
  if (Small)
    return llvm::StringRef(Small->name(), Small->NameSize);
  return Stored ? llvm::StringRef(Stored->Proto.name()) : llvm::StringRef();
}

Tensor Tensor::withName(llvm::StringRef Name) const {
  if (Small) {
    std::optional<llvm::StringRef> Bytes;
    if (Small->HasRaw)
      Bytes = llvm::StringRef(Small->bytes(), Small->ByteSize);
    Tensor T;
    T.Small = Packed::make(
        Small->ElemType, llvm::ArrayRef<int64_t>(Small->dims(), Small->NumDims),
        Name, Bytes);
    return T;
  }
  if (!Stored)
    return Tensor();
  auto S = std::make_shared<detail::TensorStorage>(*Stored);
  S->Proto.set_name(Name.str());
  if (hasMappedRawData())
    S->Proto.clear_raw_data(); // the copy shares the mapping instead
  Tensor T;
  T.Stored = std::move(S);
  T.Ext = Ext;
  return T;
}

int32_t Tensor::getElemType() const {
  if (Small)
    return Small->ElemType;
  return Stored ? Stored->Proto.data_type() : 0;
}

llvm::ArrayRef<int64_t> Tensor::getDimsRef() const {
  if (Small)
    return llvm::ArrayRef<int64_t>(Small->dims(), Small->NumDims);
  if (Stored)
    return llvm::ArrayRef<int64_t>(Stored->Proto.dims().data(), Stored->Proto.dims_size());
  return {};
}

std::vector<int64_t> Tensor::getDims() const { return getDimsRef().vec(); }

/// Returns -1 when a dim is negative or the product overflows int64.
int64_t Tensor::getNumElements() const {
  if (isNull())
    return 0;
  int64_t N = 1;
  for (int64_t D : getDimsRef()) {
    if (D < 0 || __builtin_mul_overflow(N, D, &N))
      return -1;
  }
  return N;
}

uint64_t detail::payloadByteSize(const TensorProto &P) {
  if (P.has_raw_data())
    return P.raw_data().size();
  int32_t ET = P.data_type();
  switch (typedFieldFor(ET)) {
  case Field::Float:
    return uint64_t(P.float_data_size()) * 4;
  case Field::Int32:
    return uint64_t(P.int32_data_size()) * int32FieldBytes(ET);
  case Field::Int64:
    return uint64_t(P.int64_data_size()) * 8;
  case Field::Double:
    return uint64_t(P.double_data_size()) * 8;
  case Field::UInt64:
    return uint64_t(P.uint64_data_size()) * getElemTypeSize(ET);
  case Field::String: {
    uint64_t Sum = 0;
    for (const std::string &S : P.string_data())
      Sum += S.size();
    return Sum;
  }
  case Field::None:
    return 0;
  }
  return 0;
}

uint64_t Tensor::getByteSize() const {
  if (Small)
    return Small->ByteSize;
  if (!Stored)
    return 0;
  if (const ExternalLocation *Ext = ext())
    return Ext->Length;
  return detail::payloadByteSize(Stored->Proto);
}

std::optional<llvm::StringRef> Tensor::getRawBytes(std::string &Storage) const {
  if (Small)
    return llvm::StringRef(Small->bytes(), Small->ByteSize);
  if (!Stored)
    return std::nullopt;
  int32_t ET = Stored->Proto.data_type();
  if (ET == TensorProto::STRING)
    return std::nullopt;
  if (const ExternalLocation *Ext = ext()) {
    const char *Base = Ext->File ? Ext->File->data() : nullptr;
    if (!Base)
      return llvm::StringRef();
    return llvm::StringRef(Base + Ext->Offset, Ext->Length);
  }
  if (Stored->Proto.has_raw_data())
    return llvm::StringRef(Stored->Proto.raw_data());

  Storage.clear();
  switch (typedFieldFor(ET)) {
  case Field::Float:
    Storage.reserve(Stored->Proto.float_data_size() * 4);
    for (float F : Stored->Proto.float_data()) {
      uint32_t Bits;
      std::memcpy(&Bits, &F, 4);
      appendLE(Storage, Bits, 4);
    }
    break;
  case Field::Int32: {
    size_t Size = int32FieldBytes(ET);
    Storage.reserve(Stored->Proto.int32_data_size() * Size);
    for (int32_t V : Stored->Proto.int32_data())
      appendLE(Storage, static_cast<uint32_t>(V), Size);
    break;
  }
  case Field::Int64:
    Storage.reserve(Stored->Proto.int64_data_size() * 8);
    for (int64_t V : Stored->Proto.int64_data())
      appendLE(Storage, static_cast<uint64_t>(V), 8);
    break;
  case Field::Double:
    Storage.reserve(Stored->Proto.double_data_size() * 8);
    for (double D : Stored->Proto.double_data()) {
      uint64_t Bits;
      std::memcpy(&Bits, &D, 8);
      appendLE(Storage, Bits, 8);
    }
    break;
  case Field::UInt64: {
    size_t Size = getElemTypeSize(ET);
    Storage.reserve(Stored->Proto.uint64_data_size() * Size);
    for (uint64_t V : Stored->Proto.uint64_data())
      appendLE(Storage, V, Size);
    break;
  }
  case Field::String:
  case Field::None:
    return std::nullopt;
  }
  return llvm::StringRef(Storage);
}

std::optional<std::vector<int64_t>> Tensor::toInt64s() const {
  if (isNull() || !isIntegerOrBool(getElemType()))
    return std::nullopt;
  int32_t ET = getElemType();
  // Fast paths that avoid materializing bytes.
  if (Stored && !Ext && !Stored->Proto.has_raw_data()) {
    if (ET == TensorProto::INT64)
      return std::vector<int64_t>(Stored->Proto.int64_data().begin(),
                                  Stored->Proto.int64_data().end());
  }
  std::string Storage;
  std::optional<llvm::StringRef> Bytes = getRawBytes(Storage);
  if (!Bytes)
    return std::nullopt;
  size_t Size = getElemTypeSize(ET);
  if (Size == 0 || Bytes->size() % Size != 0)
    return std::nullopt;
  std::vector<int64_t> Out;
  Out.reserve(Bytes->size() / Size);
  bool Signed = isSigned(ET);
  for (size_t I = 0; I < Bytes->size(); I += Size) {
    uint64_t V = readLE(Bytes->data() + I, Size);
    Out.push_back(Signed ? signExtend(V, Size) : static_cast<int64_t>(V));
  }
  return Out;
}

std::optional<std::vector<double>> Tensor::toDoubles() const {
  if (isNull())
    return std::nullopt;
  int32_t ET = getElemType();
  if (isIntegerOrBool(ET)) {
    std::optional<std::vector<int64_t>> Ints = toInt64s();
    if (!Ints)
      return std::nullopt;
    bool Unsigned64 = ET == TensorProto::UINT64;
    std::vector<double> Out;
    Out.reserve(Ints->size());
    for (int64_t V : *Ints)
      Out.push_back(Unsigned64 ? double(static_cast<uint64_t>(V)) : double(V));
    return Out;
  }
  if (ET != TensorProto::FLOAT && ET != TensorProto::DOUBLE &&
      ET != TensorProto::FLOAT16 && ET != TensorProto::BFLOAT16)
    return std::nullopt;

  std::string Storage;
  std::optional<llvm::StringRef> Bytes = getRawBytes(Storage);
  if (!Bytes)
    return std::nullopt;
  size_t Size = getElemTypeSize(ET);
  if (Bytes->size() % Size != 0)
    return std::nullopt;
  std::vector<double> Out;
  Out.reserve(Bytes->size() / Size);
  for (size_t I = 0; I < Bytes->size(); I += Size) {
    uint64_t V = readLE(Bytes->data() + I, Size);
    switch (ET) {
    case TensorProto::FLOAT:
      Out.push_back(bitsToFloat(static_cast<uint32_t>(V)));
      break;
    case TensorProto::DOUBLE:
      Out.push_back(bitsToDouble(V));
      break;
    case TensorProto::FLOAT16:
      Out.push_back(halfToFloat(static_cast<uint16_t>(V)));
      break;
    default: // BFLOAT16: the high half of a float.
      Out.push_back(bitsToFloat(static_cast<uint32_t>(V) << 16));
      break;
    }
  }
  return Out;
}

bool Tensor::contentEquals(const Tensor &O) const {
  if (isNull() || O.isNull())
    return isNull() && O.isNull();
  if (getElemType() != O.getElemType() || getDimsRef() != O.getDimsRef())
    return false;
  if (getElemType() == TensorProto::STRING) {
    const auto &A = Stored->Proto.string_data(), &B = O.Stored->Proto.string_data();
    return A.size() == B.size() && std::equal(A.begin(), A.end(), B.begin());
  }
  if (getByteSize() != O.getByteSize())
    return false;
  // Walk this tensor in chunks and compare each with the same range of
  // the other; both sides' pages are released as the walk goes.
  std::string OStorage;
  std::optional<llvm::StringRef> OBytes = O.getRawBytes(OStorage);
  if (!OBytes)
    return false;
  uint64_t Off = 0;
  bool OMapped = O.Ext != nullptr;
  bool Equal = forEachChunk([&](llvm::StringRef Piece) {
    llvm::StringRef Other = OBytes->substr(Off, Piece.size());
    bool Same = Piece == Other;
    if (OMapped)
      releasePages(Other);
    Off += Piece.size();
    return Same;
  });
  return Equal && Off == OBytes->size();
}

namespace {

/// The part of a tensor's hash that does not read its payload.
uint64_t headerHash(llvm::ArrayRef<int64_t> Dims, int32_t ElemType) {
  uint64_t H = llvm::xxHash64(
      llvm::StringRef(reinterpret_cast<const char *>(Dims.data()),
                      Dims.size() * sizeof(int64_t)));
  return H * 31 + static_cast<uint32_t>(ElemType);
}

} // namespace

uint64_t Tensor::contentHash() const {
  if (isNull())
    return 0;
  uint64_t H = headerHash(getDimsRef(), getElemType());
  if (getElemType() == TensorProto::STRING) {
    for (const std::string &S : Stored->Proto.string_data())
      H = H * 31 + llvm::xxHash64(S);
    return H;
  }
  // Chunk by chunk: the same bytes give the same hash whatever their
  // storage form, since the chunks are cut at the same offsets.
  forEachChunk([&](llvm::StringRef Piece) {
    H = H * 31 + llvm::xxHash64(Piece);
    return true;
  });
  return H;
}

uint64_t Tensor::prefixHash(uint64_t MaxBytes) const {
  if (isNull())
    return 0;
  uint64_t H = headerHash(getDimsRef(), getElemType());
  if (getElemType() == TensorProto::STRING) {
    if (!Stored->Proto.string_data().empty())
      H = H * 31 + llvm::xxHash64(Stored->Proto.string_data(0));
    return H;
  }
  std::string Storage;
  if (std::optional<llvm::StringRef> Bytes = getRawBytes(Storage)) {
    llvm::StringRef Prefix = Bytes->take_front(MaxBytes);
    H = H * 31 + llvm::xxHash64(Prefix);
    if (Ext)
      releasePages(Prefix);
  }
  return H;
}

void Tensor::releasePages(llvm::StringRef Bytes) {
  static const uintptr_t Page = uintptr_t(::sysconf(_SC_PAGESIZE));
  uintptr_t Begin = reinterpret_cast<uintptr_t>(Bytes.data());
  uintptr_t End = (Begin + Bytes.size()) / Page * Page;
  Begin = (Begin + Page - 1) / Page * Page;
  // Only whole pages inside the range: the partial pages at its ends may
  // hold another tensor's bytes that its reader has in hand.
  if (End > Begin)
    ::madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_DONTNEED);
}
