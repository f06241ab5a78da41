//===- ProtoWire.h - Protobuf wire format around raw_data ------*- C++ -*-===//
//
// Private to the binary importer and exporter. Large initializers of a mapped
// model file are parsed without their raw_data, whose bytes stay in the
// mapping; export writes them back between the tensor's other fields.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_IMPORT_PROTOWIRE_H
#define ONNXOPT_LIB_IMPORT_PROTOWIRE_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>
#include <vector>

namespace onnxopt {
namespace detail {

/// TensorProto.raw_data, and the tag that introduces it.
constexpr uint32_t RawDataField = 9;
constexpr uint32_t RawDataTag = (RawDataField << 3) | 2;

/// The raw_data of one main-graph initializer, left in the model bytes.
struct MappedRawData {
  int Initializer; ///< index in GraphProto.initializer
  uint64_t Offset; ///< of the payload in the model bytes
  uint64_t Length; ///< of the payload
};

/// Scans the binary ModelProto in the \p Size bytes of the file open as
/// \p FD for main-graph initializers whose raw_data has at least \p MinBytes
/// (and that have no other payload field and are not external or strings).
/// The file is read with pread, so the scan neither maps nor faults in its
/// pages. When there are some, returns true, fills \p Mapped in initializer
/// order and builds in \p Thin the same model without those payloads:
/// parsing \p Thin gives the model minus their raw_data. Returns false when
/// there is nothing to leave out, on a read error, or when the scan does not
/// understand the bytes (malformed, groups, several `graph` fields); the
/// caller then parses the file as it is, and protobuf reports what is wrong.
bool thinModelFile(int FD, uint64_t Size, uint64_t MinBytes, std::string &Thin,
                   std::vector<MappedRawData> &Mapped);

/// A binary ModelProto cut around its main graph's nodes. Merging the
/// ModelRuns (in order) into a ModelProto and the GraphRuns into its graph
/// gives the model without the main graph's nodes, exactly as parsing it
/// whole would; Nodes are the serialized NodeProtos, in order. The runs and
/// nodes point into the bytes that were split.
struct NodeSplit {
  std::vector<llvm::StringRef> ModelRuns, GraphRuns, Nodes;
};

/// The fields of a serialized NodeProto that name it and its results, as
/// protobuf would parse them (the last of a singular field wins; a field
/// of the wrong wire type is an unknown field). Absent fields are "".
struct NodeHead {
  llvm::StringRef OpType, Domain, Name;
  std::vector<llvm::StringRef> Outputs;
};

/// Reads \p Head from the serialized NodeProto \p Node without parsing the
/// rest; false when the bytes are not a message.
bool scanNodeHead(llvm::StringRef Node, NodeHead &Head);

/// Splits \p Model (in memory). Returns false when the scan does not
/// understand the bytes (malformed, groups, not exactly one `graph` field);
/// the caller then parses them whole, and protobuf reports what is wrong.
bool splitMainGraphNodes(llvm::StringRef Model, NodeSplit &Split);

/// Where raw_data goes in \p Serialized, a TensorProto without raw_data as
/// protobuf writes it (known fields in number order, then unknown ones): the
/// offset of the first field numbered above raw_data, or the size.
size_t rawDataInsertionPoint(llvm::StringRef Serialized);

/// Number of bytes of \p V as a varint.
unsigned varintSize(uint64_t V);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_IMPORT_PROTOWIRE_H
