//===- ProtoTypes.cpp - TypeProto <-> Type conversion ---------------------===//

#include "onnxopt/IR/ProtoTypes.h"
#include <google/protobuf/unknown_field_set.h>

using namespace onnxopt;
using namespace onnxopt::detail;

Dim detail::importDim(const onnx::TensorShapeProto::Dimension &D) {
  Dim Out;
  if (D.has_dim_value())
    Out = Dim::known(D.dim_value());
  else if (D.has_dim_param())
    Out = Dim::symbol(D.dim_param());
  if (D.has_denotation())
    Out.setDenotation(D.denotation());
  return Out;
}

static std::optional<std::vector<Dim>>
importShape(bool HasShape, const onnx::TensorShapeProto &SP) {
  if (!HasShape)
    return std::nullopt;
  std::vector<Dim> Dims;
  Dims.reserve(SP.dim_size());
  for (const onnx::TensorShapeProto::Dimension &D : SP.dim())
    Dims.push_back(importDim(D));
  return Dims;
}

static void exportShape(const Type &T, onnx::TensorShapeProto &SP) {
  for (const Dim &D : T.getDims()) {
    onnx::TensorShapeProto::Dimension *Out = SP.add_dim();
    if (D.isKnown())
      Out->set_dim_value(D.getValue());
    else if (D.isSymbol())
      Out->set_dim_param(D.getSymbol().str());
    if (!D.getDenotation().empty())
      Out->set_denotation(D.getDenotation().str());
  }
}

const onnx::TensorShapeProto *detail::innerShapeOf(const onnx::TypeProto &TP) {
  // Iterative: the nesting comes from the input.
  for (const onnx::TypeProto *T = &TP; T;) {
    switch (T->value_case()) {
    case onnx::TypeProto::kTensorType:
      return &T->tensor_type().shape();
    case onnx::TypeProto::kSparseTensorType:
      return &T->sparse_tensor_type().shape();
    case onnx::TypeProto::kSequenceType:
      T = &T->sequence_type().elem_type();
      break;
    case onnx::TypeProto::kOptionalType:
      T = &T->optional_type().elem_type();
      break;
    case onnx::TypeProto::kMapType:
      T = &T->map_type().value_type();
      break;
    default:
      return nullptr;
    }
  }
  return nullptr;
}

size_t detail::maxRankOf(const onnx::TypeProto &TP) {
  const onnx::TensorShapeProto *Shape = innerShapeOf(TP);
  return Shape ? size_t(Shape->dim_size()) : 0;
}

Type detail::importType(const onnx::TypeProto &TP) {
  Type T;
  switch (TP.value_case()) {
  case onnx::TypeProto::kTensorType: {
    const auto &TT = TP.tensor_type();
    T = Type::tensor(TT.elem_type(), importShape(TT.has_shape(), TT.shape()));
    break;
  }
  case onnx::TypeProto::kSparseTensorType: {
    const auto &ST = TP.sparse_tensor_type();
    T = Type::sparseTensor(ST.elem_type(),
                           importShape(ST.has_shape(), ST.shape()));
    break;
  }
  case onnx::TypeProto::kSequenceType:
    T = Type::sequence(importType(TP.sequence_type().elem_type()));
    break;
  case onnx::TypeProto::kOptionalType:
    T = Type::optional(importType(TP.optional_type().elem_type()));
    break;
  case onnx::TypeProto::kMapType:
    T = Type::map(TP.map_type().key_type(),
                  importType(TP.map_type().value_type()));
    break;
  case onnx::TypeProto::kOpaqueType:
    T = Type::opaque(TP.opaque_type().domain(), TP.opaque_type().name());
    break;
  case onnx::TypeProto::VALUE_NOT_SET:
    break;
  }
  if (TP.has_denotation())
    T.setDenotation(TP.denotation());
  return T;
}

void detail::exportType(const Type &T, onnx::TypeProto &TP) {
  switch (T.getKind()) {
  case Type::Kind::None:
    return;
  case Type::Kind::Tensor: {
    auto *TT = TP.mutable_tensor_type();
    if (T.getElemType())
      TT->set_elem_type(T.getElemType());
    if (T.hasShape())
      exportShape(T, *TT->mutable_shape());
    break;
  }
  case Type::Kind::SparseTensor: {
    auto *ST = TP.mutable_sparse_tensor_type();
    if (T.getElemType())
      ST->set_elem_type(T.getElemType());
    if (T.hasShape())
      exportShape(T, *ST->mutable_shape());
    break;
  }
  case Type::Kind::Sequence: {
    auto *ST = TP.mutable_sequence_type();
    if (!T.getElementType().isNone())
      exportType(T.getElementType(), *ST->mutable_elem_type());
    break;
  }
  case Type::Kind::Optional: {
    auto *OT = TP.mutable_optional_type();
    if (!T.getElementType().isNone())
      exportType(T.getElementType(), *OT->mutable_elem_type());
    break;
  }
  case Type::Kind::Map: {
    auto *MT = TP.mutable_map_type();
    if (T.getElemType())
      MT->set_key_type(T.getElemType());
    if (!T.getElementType().isNone())
      exportType(T.getElementType(), *MT->mutable_value_type());
    break;
  }
  case Type::Kind::Opaque: {
    auto *OT = TP.mutable_opaque_type();
    if (!T.getOpaqueDomain().empty())
      OT->set_domain(T.getOpaqueDomain().str());
    if (!T.getOpaqueName().empty())
      OT->set_name(T.getOpaqueName().str());
    break;
  }
  }
  if (!T.getDenotation().empty())
    TP.set_denotation(T.getDenotation().str());
}

void detail::moveTensorProto(onnx::TensorProto &From, onnx::TensorProto &To) {
  if (!From.GetArena()) {
    To.Swap(&From);
    return;
  }
  std::string Raw;
  bool HasRaw = From.has_raw_data();
  if (HasRaw) {
    Raw.swap(*From.mutable_raw_data());
    From.clear_raw_data();
  }
  To.CopyFrom(From);
  if (HasRaw)
    To.set_raw_data(std::move(Raw));
}

bool detail::isDensifiedSparse(const onnx::TensorProto &TP) {
  const google::protobuf::UnknownFieldSet &U =
      TP.GetReflection()->GetUnknownFields(TP);
  for (int I = 0; I < U.field_count(); ++I)
    if (U.field(I).number() == DensifiedSparseMarker)
      return true;
  return false;
}
