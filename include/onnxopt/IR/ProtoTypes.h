//===- ProtoTypes.h - The IR's protobuf interop ----------------*- C++ -*-===//
//
// The one installed header that names ONNX's protobuf types: the one
// TypeProto <-> Type mapping, shared by the binary importer and exporter,
// the text importer (through a ModelProto) and the analysis layer's
// shape-inference adapter, which talks to ONNX in protos; and the Tensor <->
// TensorProto functions (a Tensor stores a TensorProto, opaque in Tensor.h).
// It includes ONNX's protobuf headers, so include it only from .cpp files
// that talk to ONNX.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_PROTOTYPES_H
#define ONNXOPT_IR_PROTOTYPES_H

#include "onnxopt/IR/Tensor.h"
#include "onnxopt/IR/Type.h"
#include <onnx/onnx_pb.h>
#include <memory>
#include <optional>

namespace onnxopt {
namespace detail {

/// Converts one dim (value, param or unknown, with its denotation).
Dim importDim(const onnx::TensorShapeProto::Dimension &D);

/// Converts a TypeProto; an empty TypeProto becomes Type::Kind::None.
Type importType(const onnx::TypeProto &TP);

/// The shape of the tensor type in \p TP, through sequence, optional and map
/// types (a type holds one kind, so there is at most one), or null.
const onnx::TensorShapeProto *innerShapeOf(const onnx::TypeProto &TP);

/// The rank of innerShapeOf(\p TP); 0 without a shape.
size_t maxRankOf(const onnx::TypeProto &TP);

/// Writes \p T into \p TP (merging into what is there). Type::Kind::None
/// writes nothing.
void exportType(const Type &T, onnx::TypeProto &TP);

/// Unknown-field number marking a dense TensorProto that the importer made
/// from a sparse initializer; the sparse form stays in the graph residual.
constexpr int DensifiedSparseMarker = 536870000;

/// True when \p TP carries DensifiedSparseMarker.
bool isDensifiedSparse(const onnx::TensorProto &TP);

/// Moves \p From into \p To (on the heap): \p From may be on an arena, and
/// its raw_data is moved, never copied (typed payloads are copied; exporters
/// write large tensors as raw_data).
void moveTensorProto(onnx::TensorProto &From, onnx::TensorProto &To);

//===----------------------------------------------------------------------===//
// Tensors and their protos
//===----------------------------------------------------------------------===//

/// What an unpacked Tensor points to (shared by its copies): its proto.
/// A wrapper, since protobuf's message classes are final.
struct TensorStorage {
  onnx::TensorProto Proto;
};

/// The tensor \p P holds, packed when it is small (see Tensor), else taking
/// \p P's contents (P is left valid but unspecified; raw_data is moved,
/// not copied). Not for external data.
Tensor tensorFromProto(onnx::TensorProto &&P);
/// The tensor \p P holds, never packed, taking \p P's contents as
/// tensorFromProto does. For data_location=EXTERNAL, \p Ext says where the
/// bytes are (the importer resolves and maps the file).
Tensor tensorWrappingProto(onnx::TensorProto &&P,
                           std::optional<ExternalLocation> Ext = std::nullopt);
/// Takes \p P, which has every field but raw_data: its raw_data is
/// [Offset, Offset + Length) of \p File, the mapped model file.
Tensor tensorFromMappedRawData(onnx::TensorProto &&P,
                               std::shared_ptr<MappedFile> File,
                               uint64_t Offset, uint64_t Length);

/// The complete proto of \p T. For a tensor with hasMappedRawData(), the
/// first call copies the bytes into the proto (shared by every copy of the
/// handle); getStoredProto() and Tensor::getRawBytes() do not. For a packed
/// tensor the first call builds the proto and keeps it as long as the
/// tensor: code that only needs a copy uses toProto().
const onnx::TensorProto &getProto(const Tensor &T);
/// getProto(\p T) as a shared pointer that keeps it alive (a packed
/// tensor's is a copy).
std::shared_ptr<const onnx::TensorProto> getProtoPtr(const Tensor &T);
/// The proto as stored: with hasMappedRawData() it may lack raw_data. A
/// packed tensor builds (and keeps) it, as getProto() does.
const onnx::TensorProto &getStoredProto(const Tensor &T);
/// The stored proto, or null for a packed tensor (which has no more than a
/// name, a type, dims and raw_data: no doc_string, no markers).
inline const onnx::TensorProto *getStoredProtoIfAny(const Tensor &T) {
  const TensorStorage *S = T.getStorage();
  return S ? &S->Proto : nullptr;
}
/// The payload size of \p P, a tensor whose bytes are in it (raw_data or
/// typed fields): Tensor::getByteSize without building a tensor.
uint64_t payloadByteSize(const onnx::TensorProto &P);
/// Writes the stored proto of \p T into \p Out (what
/// CopyFrom(getStoredProto(T)) would), without building and keeping one for
/// a packed tensor.
void toProto(const Tensor &T, onnx::TensorProto &Out);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_IR_PROTOTYPES_H
