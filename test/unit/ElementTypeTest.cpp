//===- ElementTypeTest.cpp - Element type codes, names and sizes ----------===//
#include "onnxopt/IR/ElementType.h"
#include "onnxopt/IR/Type.h"
#include "gtest/gtest.h"
#include <onnx/onnx_pb.h>

using namespace onnxopt;

namespace {

TEST(ElementType, CodesAreOnnxDataTypes) {
  EXPECT_EQ(int32_t(ElementType::Float), onnx::TensorProto::FLOAT);
  EXPECT_EQ(int32_t(ElementType::Int64), onnx::TensorProto::INT64);
  EXPECT_EQ(int32_t(ElementType::BFloat16), onnx::TensorProto::BFLOAT16);
  // Newer than ONNX 1.12's proto: the numbers of onnx.proto since IR 9-11.
  EXPECT_EQ(int32_t(ElementType::Float8E4M3FN), 17);
  EXPECT_EQ(int32_t(ElementType::Float8E5M2FNUZ), 20);
  EXPECT_EQ(int32_t(ElementType::Int4), 22);
  EXPECT_EQ(int32_t(ElementType::Float4E2M1), 23);
}

TEST(ElementType, NamesRoundTripAndSizes) {
  for (int32_t Code = 1; Code <= 23; ++Code) {
    auto T = static_cast<ElementType>(Code);
    llvm::StringRef Name = getElementTypeName(T);
    ASSERT_FALSE(Name.empty()) << Code;
    EXPECT_EQ(getElementTypeFromName(Name), T) << Name.str();
    EXPECT_EQ(getElemTypeName(Code), Name);
  }
  EXPECT_EQ(getElementTypeName(static_cast<ElementType>(24)), "");
  EXPECT_EQ(getElementTypeFromName("float9"), ElementType::Undefined);
  EXPECT_EQ(getElementTypeBits(ElementType::Float8E4M3FN), 8u);
  EXPECT_EQ(getElemTypeSize(17), 1u);
  EXPECT_EQ(getElementTypeBits(ElementType::UInt4), 4u);
  // Sub-byte types have no whole-byte size.
  EXPECT_EQ(getElemTypeSize(21), 0u);
  EXPECT_EQ(getElemTypeSize(int32_t(ElementType::Complex128)), 16u);
  EXPECT_EQ(getElementTypeMinIrVersion(ElementType::Float4E2M1), 11);
  EXPECT_TRUE(isPostOnnx112ElementType(17));
  EXPECT_FALSE(isPostOnnx112ElementType(16));
}

} // namespace
