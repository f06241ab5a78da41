//===- ExportDetail.h - Shared by proto conversion, verification, writing -===//
//
// Private to lib/Export: the tensor-copy helpers that the three parts of
// saving share (Export.cpp builds protos, Verify.cpp checks them, Write.cpp
// streams them to files), and the verification entry the writer calls.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_EXPORT_EXPORTDETAIL_H
#define ONNXOPT_LIB_EXPORT_EXPORTDETAIL_H

#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <functional>
#include <google/protobuf/unknown_field_set.h>
#include <memory>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace onnxopt {
namespace detail {

inline void stripDensifiedMarker(onnx::TensorProto &TP) {
  if (!isDensifiedSparse(TP))
    return;
  google::protobuf::UnknownFieldSet *U =
      TP.GetReflection()->MutableUnknownFields(&TP);
  for (int I = U->field_count(); I-- > 0;)
    if (U->field(I).number() == DensifiedSparseMarker)
      U->DeleteSubrange(I, 1);
}

/// Copies everything but the payload (raw_data and the typed fields).
inline void copyTensorMetadata(const onnx::TensorProto &S,
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

/// The metadata of \p T (a packed tensor's proto is built for the call).
inline void copyTensorMetadata(const Tensor &T, onnx::TensorProto &D) {
  if (const onnx::TensorProto *P = detail::getStoredProtoIfAny(T))
    return copyTensorMetadata(*P, D);
  onnx::TensorProto Built;
  detail::toProto(T, Built);
  copyTensorMetadata(Built, D);
}

/// Packed tensors never carry the marker (they carry no unknown fields).
inline bool isDensifiedSparse(const Tensor &T) {
  const onnx::TensorProto *P = detail::getStoredProtoIfAny(T);
  return P && isDensifiedSparse(*P);
}

/// Copies \p T with its payload (mapped raw_data is copied in).
inline void copyWholeTensor(const Tensor &T, onnx::TensorProto &Out) {
  detail::toProto(T, Out);
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
inline void setPlaceholderPayload(onnx::TensorProto &TP) {
  TP.set_raw_data(std::string(1, '\0'));
}

/// Turns \p T into metadata plus a placeholder payload, as verification
/// sees large and external tensors.
inline void thinTensor(const onnx::TensorProto &T, onnx::TensorProto &Out) {
  copyTensorMetadata(T, Out);
  Out.clear_external_data();
  Out.clear_data_location();
  setPlaceholderPayload(Out);
}

/// Payloads that verification may need to read (shape tensors) are small
/// integers; larger or non-integer payloads are elided from the skeleton and
/// streamed from the IR at write time.
inline bool shouldStream(int32_t ET, uint64_t Size) {
  if (ET == onnx::TensorProto::STRING)
    return false;
  bool Int = ET == onnx::TensorProto::INT64 || ET == onnx::TensorProto::INT32;
  return Size >= (Int ? (uint64_t(1) << 20) : uint64_t(1024));
}
inline bool shouldStream(const Tensor &T) {
  return shouldStream(T.getElemType(), T.getByteSize());
}

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
  /// exportModel without the graph: versions, opsets and the residual.
  void exportHeader(const Model &M, onnx::ModelProto &MP);
  /// For the main graph with streaming: the IR tensor each skeleton
  /// initializer stands for, or null when the skeleton entry is complete.
  std::vector<const Tensor *> Streamed;
  /// When set, the main graph's nodes are handed to it one at a time, in
  /// order, instead of being added to its proto: saveModel checks and
  /// serializes each as it comes, so the skeleton never holds them.
  std::function<void(const Node &, const onnx::NodeProto &)> MainNodeSink;
  /// Likewise for the main graph's value_info entries (which ONNX 1.12's
  /// check_model does not read).
  std::function<void(const onnx::ValueInfoProto &)> MainValueInfoSink;

private:
  void exportGraph(const Graph &G, onnx::GraphProto &GP, bool IsMain);
  void exportInitializers(const Graph &G, onnx::GraphProto &GP, bool IsMain);
  void exportValueInfos(const Graph &G, onnx::GraphProto &GP, bool IsMain);
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

/// Runs the checker and strict shape inference (or, for versions newer than
/// ONNX 1.12, our own verification) on \p P, exported from \p M (null when
/// there is no IR: ONNX's functions then), which is changed while they run
/// and, with \p Restore, put back afterwards (Verify.cpp).
LogicalResult verifyInPlace(const Model *M, onnx::ModelProto &P, bool Restore,
                            VerifyWith With, DiagnosticEngine &Diags);

/// Where strict inference from the IR failed.
struct StrictInferenceFailure {
  const Node *N = nullptr;
  std::string Msg;
  /// ONNX's own inference must not run on the model either (it would not
  /// return: a shape input of an absurd length).
  bool Unsafe = false;
};

/// saveModel's verification, overlapped with building the skeleton: the
/// constructor starts, on a second thread, what needs only the IR (the
/// per-node schema checks, then, when verifying from the IR, strict
/// inference); finish() runs the rest on the skeleton (the checker) on this
/// thread meanwhile, and reports the verdict as verifyInPlace would.
class SaveVerification {
public:
  SaveVerification(const Model &M, VerifyWith With);
  ~SaveVerification();
  SaveVerification(const SaveVerification &) = delete;
  SaveVerification &operator=(const SaveVerification &) = delete;

  /// Whether the main graph's nodes are to be checked one at a time as they
  /// are exported (checkNode), rather than in the skeleton, which then does
  /// not hold them.
  bool checksNodes() const;
  /// Checks \p NP, the export of \p N, the next main-graph node (called in
  /// node order), with ONNX's check_node, once the worker has found it
  /// valid; or not at all when a node alike for check_node passed.
  void checkNode(const Node &N, const onnx::NodeProto &NP);
  /// Verifies \p Skeleton, exported from the model, in place (put back).
  LogicalResult finish(onnx::ModelProto &Skeleton, DiagnosticEngine &Diags);
  /// The skeleton could not be built: reports only the node checks' errors.
  void abandon(DiagnosticEngine &Diags);

private:
  struct Shared;
  /// Waits for the worker's verdict (not for its teardown) and replays its
  /// diagnostics on \p Diags, once.
  void awaitVerdict(DiagnosticEngine &Diags);

  const Model &M;
  VerifyWith With;
  std::unique_ptr<Shared> State;
};

/// What ONNX 1.12's InferShapes(check_type, strict) decides about the model
/// exported from \p M, computed from the IR (StrictInference.cpp).
/// \p OnVerdict, if given, is called with the verdict before the inference's
/// memory (a type per value) is freed, which a caller waiting only for the
/// verdict need not wait for. \p BeforeMainNode, if given, is asked before
/// each main-graph node (by index) whether to go on; when it says no, the
/// inference ends there and the verdict means nothing.
LogicalResult verifyStrictInference(
    const Model &M, StrictInferenceFailure &Failure,
    llvm::function_ref<void(LogicalResult)> OnVerdict = nullptr,
    llvm::function_ref<bool(size_t)> BeforeMainNode = nullptr);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_EXPORT_EXPORTDETAIL_H
