//===- TensorTest.cpp - Packed and proto-backed tensors -------------------===//
//
// Small tensors are packed (one block, no TensorProto): what they give back
// must be what a proto-backed tensor of the same proto gives, down to the
// bytes of the proto built back, which the exporter writes.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/IR/Tensor.h"
#include "gtest/gtest.h"
#include <cstdio>
#include <onnx/onnx_pb.h>
#include <thread>

using namespace onnxopt;
using onnx::TensorProto;

namespace {

TensorProto int64Proto(const std::vector<int64_t> &Values,
                       std::vector<int64_t> Dims, const char *Name) {
  TensorProto P;
  for (int64_t D : Dims)
    P.add_dims(D);
  P.set_data_type(TensorProto::INT64);
  if (Name)
    P.set_name(Name);
  P.set_raw_data(Values.data(), Values.size() * sizeof(int64_t));
  return P;
}

/// Both forms of \p P: packed (tensorFromProto) and wrapped
/// (tensorWrappingProto).
std::pair<Tensor, Tensor> bothForms(const TensorProto &P) {
  TensorProto Copy = P;
  return {detail::tensorFromProto(std::move(Copy)),
          detail::tensorWrappingProto(TensorProto(P))};
}

void expectSameTensor(const Tensor &A, const Tensor &B) {
  EXPECT_EQ(A.getName(), B.getName());
  EXPECT_EQ(A.getElemType(), B.getElemType());
  EXPECT_EQ(A.getDims(), B.getDims());
  EXPECT_EQ(A.getNumElements(), B.getNumElements());
  EXPECT_EQ(A.getByteSize(), B.getByteSize());
  EXPECT_EQ(A.toInt64s(), B.toInt64s());
  EXPECT_EQ(A.toDoubles(), B.toDoubles());
  EXPECT_TRUE(A.contentEquals(B));
  EXPECT_EQ(A.contentHash(), B.contentHash());
  TensorProto PA, PB;
  detail::toProto(A, PA);
  detail::toProto(B, PB);
  EXPECT_EQ(PA.SerializeAsString(), PB.SerializeAsString());
  EXPECT_EQ(detail::getStoredProto(A).SerializeAsString(), PB.SerializeAsString());
}

} // namespace

TEST(Tensor, SmallRawTensorsArePackedAndReadBackTheSame) {
  TensorProto P = int64Proto({1, -2, 3}, {3}, "/Constant_output_0");
  auto [Packed, Wrapped] = bothForms(P);
  EXPECT_TRUE(Packed.isPacked());
  EXPECT_FALSE(Wrapped.isPacked());
  EXPECT_EQ(detail::getStoredProtoIfAny(Packed), nullptr);
  expectSameTensor(Packed, Wrapped);
  EXPECT_EQ(Packed.toInt64s(), (std::vector<int64_t>{1, -2, 3}));
  std::string Storage;
  EXPECT_EQ(Packed.getRawBytes(Storage)->size(), 24u);
  EXPECT_TRUE(Storage.empty()) << "packed bytes are read in place";
}

TEST(Tensor, FieldPresenceSurvivesPacking) {
  // No name at all, an empty name, and no raw_data (an empty tensor) are
  // three different protos on disk.
  TensorProto NoName = int64Proto({7}, {}, nullptr);
  TensorProto EmptyName = int64Proto({7}, {}, "");
  TensorProto NoRaw;
  NoRaw.add_dims(0);
  NoRaw.set_data_type(TensorProto::FLOAT);
  for (const TensorProto *P : {&NoName, &EmptyName, &NoRaw}) {
    auto [Packed, Wrapped] = bothForms(*P);
    EXPECT_TRUE(Packed.isPacked());
    expectSameTensor(Packed, Wrapped);
    TensorProto Back;
    detail::toProto(Packed, Back);
    EXPECT_EQ(Back.SerializeAsString(), P->SerializeAsString());
  }
}

TEST(Tensor, WhatPackingCannotKeepStaysAProto) {
  std::vector<TensorProto> Protos(5);
  Protos[0] = int64Proto({1}, {1}, "doc");
  Protos[0].set_doc_string("kept");
  Protos[1].set_data_type(TensorProto::INT64); // a typed field, not raw
  Protos[1].add_int64_data(4);
  Protos[2].set_data_type(TensorProto::STRING);
  Protos[2].add_string_data("s");
  Protos[3] = int64Proto(std::vector<int64_t>(128, 5), {128}, "big");
  Protos[4] = int64Proto({1}, {1}, "located");
  Protos[4].set_data_location(TensorProto::DEFAULT);
  for (const TensorProto &P : Protos) {
    TensorProto Copy = P;
    Tensor T = detail::tensorFromProto(std::move(Copy));
    EXPECT_FALSE(T.isPacked()) << P.ShortDebugString();
    EXPECT_EQ(detail::getStoredProto(T).SerializeAsString(), P.SerializeAsString());
  }
}

TEST(Tensor, FromRawPacksAndRenames) {
  Tensor T = Tensor::fromInt64s("", {2}, {4, 5});
  EXPECT_TRUE(T.isPacked());
  EXPECT_FALSE(detail::getStoredProto(T).has_name());
  Tensor R = T.withName("shape");
  EXPECT_TRUE(R.isPacked());
  EXPECT_EQ(R.getName(), "shape");
  EXPECT_EQ(T.getName(), "") << "renaming makes a new tensor";
  EXPECT_TRUE(R.contentEquals(T));
  EXPECT_EQ(R.contentHash(), T.contentHash());
  // A packed tensor and a wrapped one of the same contents are equal.
  Tensor W = detail::tensorWrappingProto(TensorProto(detail::getStoredProto(R)));
  EXPECT_TRUE(W.contentEquals(R));
  EXPECT_EQ(W.contentHash(), R.contentHash());
}

TEST(Tensor, PackedProtoIsBuiltOnceAcrossThreads) {
  // Save-time verification reads constants on a second thread while the
  // writer reads them on the first: both must see one proto.
  Tensor T = Tensor::fromFloats("w", {2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(T.isPacked());
  const TensorProto *Seen[4] = {};
  std::vector<std::thread> Threads;
  for (int I = 0; I < 4; ++I)
    Threads.emplace_back([&, I] { Seen[I] = &detail::getProto(T); });
  for (std::thread &Th : Threads)
    Th.join();
  for (const TensorProto *P : Seen)
    EXPECT_EQ(P, Seen[0]);
  EXPECT_EQ(Seen[0]->float_data_size(), 0);
  EXPECT_EQ(Seen[0]->raw_data().size(), 16u);
  Tensor Copy = T;
  EXPECT_EQ(&detail::getProto(Copy), Seen[0]) << "copies share the block";
}

namespace {

/// A float tensor of \p Bytes bytes (a pattern that differs per 8 bytes, so
/// that shifted copies differ) in a temporary file, mapped as
/// tensorFromMappedRawData maps an initializer left in the model file.
Tensor mappedFloats(const std::string &Bytes, const char *Path) {
  FILE *F = std::fopen(Path, "wb");
  std::fwrite(Bytes.data(), 1, Bytes.size(), F);
  std::fclose(F);
  std::string Error;
  std::shared_ptr<MappedFile> File = MappedFile::open(Path, Error);
  EXPECT_TRUE(File) << Error;
  TensorProto Proto;
  Proto.set_data_type(TensorProto::FLOAT);
  Proto.add_dims(int64_t(Bytes.size() / 4));
  return detail::tensorFromMappedRawData(std::move(Proto), File, 0,
                                         Bytes.size());
}

std::string pattern(size_t Size) {
  std::string S(Size, '\0');
  for (size_t I = 0; I < Size; ++I)
    S[I] = char((I * 2654435761u) >> 13);
  return S;
}

} // namespace

// Mapped weights are hashed and compared in chunks whose pages are
// released: the results must be those of the whole payload, across chunk
// boundaries and against the same bytes held in memory.
TEST(Tensor, ChunkedHashAndCompareSeeTheWholePayload) {
  size_t Size = Tensor::kChunkBytes * 2 + 4096; // three chunks, a short last
  std::string Bytes = pattern(Size);
  Tensor Mapped = mappedFloats(Bytes, "/tmp/onnxopt-tensortest-a.bin");
  Tensor Inline =
      Tensor::fromRaw("w", TensorProto::FLOAT, {int64_t(Size / 4)}, Bytes);
  EXPECT_TRUE(Mapped.contentEquals(Inline));
  EXPECT_TRUE(Inline.contentEquals(Mapped));
  EXPECT_EQ(Mapped.contentHash(), Inline.contentHash());
  // Reading again after the pages were released gives the same answers.
  EXPECT_TRUE(Mapped.contentEquals(Inline));

  // One byte changed in the last chunk: equal prefixes, different tensors.
  std::string Late = Bytes;
  Late[Size - 3] ^= 1;
  Tensor MappedLate = mappedFloats(Late, "/tmp/onnxopt-tensortest-b.bin");
  EXPECT_FALSE(Mapped.contentEquals(MappedLate));
  EXPECT_NE(Mapped.contentHash(), MappedLate.contentHash());
  EXPECT_EQ(Mapped.prefixHash(65536), MappedLate.prefixHash(65536));
  // One byte changed at the start: the prefix hash tells them apart.
  std::string Early = Bytes;
  Early[10] ^= 1;
  Tensor InlineEarly =
      Tensor::fromRaw("w", TensorProto::FLOAT, {int64_t(Size / 4)}, Early);
  EXPECT_NE(Mapped.prefixHash(65536), InlineEarly.prefixHash(65536));
  EXPECT_FALSE(InlineEarly.contentEquals(Mapped));
  std::remove("/tmp/onnxopt-tensortest-a.bin");
  std::remove("/tmp/onnxopt-tensortest-b.bin");
}
