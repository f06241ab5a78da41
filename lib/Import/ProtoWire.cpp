//===- ProtoWire.cpp - Protobuf wire format around raw_data ---------------===//
//
// A scan of the wire format just deep enough to find initializer payloads:
// ModelProto.graph (field 7) -> GraphProto.initializer (field 5) ->
// TensorProto.raw_data (field 9). Anything it does not understand makes it
// give up, and the model is parsed the ordinary way.
//
//===----------------------------------------------------------------------===//

#include "ProtoWire.h"

using namespace onnxopt;
using namespace onnxopt::detail;

namespace {

enum WireType : unsigned { Varint = 0, Fixed64 = 1, Len = 2, Fixed32 = 5 };

/// One field of a message: its number, wire type and where it lies.
struct Field {
  uint32_t Number = 0;
  unsigned Wire = 0;
  const char *Start = nullptr;   ///< the tag
  const char *Payload = nullptr; ///< the value (after the length for Len)
  const char *End = nullptr;     ///< one past the value
  uint64_t Value = 0;            ///< the value of a Varint field
};

bool readVarint(const char *&P, const char *End, uint64_t &V) {
  V = 0;
  for (unsigned Shift = 0; Shift < 64; Shift += 7) {
    if (P == End)
      return false;
    uint8_t Byte = static_cast<uint8_t>(*P++);
    V |= uint64_t(Byte & 0x7f) << Shift;
    if (!(Byte & 0x80))
      return Shift < 63 || Byte <= 1;
  }
  return false;
}

/// Reads the field at \p P and moves \p P past it. Groups (wire types 3 and
/// 4, deprecated and absent from ONNX) are not supported.
bool nextField(const char *&P, const char *End, Field &F) {
  F.Start = P;
  uint64_t Tag;
  if (!readVarint(P, End, Tag) || Tag > UINT32_MAX || (Tag >> 3) == 0)
    return false;
  F.Number = uint32_t(Tag >> 3);
  F.Wire = unsigned(Tag & 7);
  switch (F.Wire) {
  case Varint:
    F.Payload = P;
    if (!readVarint(P, End, F.Value))
      return false;
    break;
  case Fixed64:
  case Fixed32: {
    size_t Size = F.Wire == Fixed64 ? 8 : 4;
    if (size_t(End - P) < Size)
      return false;
    F.Payload = P;
    P += Size;
    break;
  }
  case Len: {
    uint64_t Size;
    if (!readVarint(P, End, Size) || Size > uint64_t(End - P))
      return false;
    F.Payload = P;
    P += Size;
    break;
  }
  default:
    return false;
  }
  F.End = P;
  return true;
}

/// The wire type protobuf expects for the known TensorProto fields that are
/// not payloads, or -1.
int expectedTensorWire(uint32_t Number) {
  switch (Number) {
  case 2:  // data_type
  case 14: // data_location
    return Varint;
  case 3:  // segment
  case 8:  // name
  case 9:  // raw_data
  case 12: // doc_string
  case 13: // external_data
    return Len;
  default:
    return -1;
  }
}

bool isTypedPayload(uint32_t Number) {
  return (Number >= 4 && Number <= 7) || Number == 10 || Number == 11;
}

/// An initializer whose raw_data is left out: its field in the graph and its
/// raw_data field inside it.
struct Cut {
  Field Tensor;
  Field Raw;
};

enum class Scan { Keep, Map, Malformed };

/// Decides whether the initializer \p T leaves its raw_data out.
Scan scanTensor(const Field &T, uint64_t MinBytes, Field &Raw) {
  const char *P = T.Payload;
  unsigned RawCount = 0;
  uint64_t DataType = 0, Location = 0;
  bool Plain = true;
  Field F;
  while (P != T.End) {
    if (!nextField(P, T.End, F))
      return Scan::Malformed;
    int Want = expectedTensorWire(F.Number);
    if (isTypedPayload(F.Number) || (Want >= 0 && unsigned(Want) != F.Wire))
      Plain = false;
    else if (F.Number == 2)
      DataType = F.Value;
    else if (F.Number == 14)
      Location = F.Value;
    else if (F.Number == RawDataField && ++RawCount == 1)
      Raw = F;
  }
  constexpr uint64_t String = 8; // TensorProto::STRING
  bool Map = Plain && RawCount == 1 && DataType != String && Location == 0 &&
             uint64_t(Raw.End - Raw.Payload) >= MinBytes;
  return Map ? Scan::Map : Scan::Keep;
}

void appendVarint(std::string &Out, uint64_t V) {
  while (V >= 0x80) {
    Out.push_back(char(uint8_t(V) | 0x80));
    V >>= 7;
  }
  Out.push_back(char(V));
}

} // namespace

unsigned detail::varintSize(uint64_t V) {
  unsigned N = 1;
  while (V >= 0x80) {
    V >>= 7;
    ++N;
  }
  return N;
}

bool detail::thinModelBytes(llvm::StringRef Bytes, uint64_t MinBytes,
                            std::string &Thin,
                            std::vector<MappedRawData> &Mapped) {
  const char *Begin = Bytes.begin(), *End = Bytes.end();
  constexpr uint32_t GraphField = 7, InitializerField = 5;

  // The model: exactly one graph.
  Field Graph, F;
  unsigned Graphs = 0;
  for (const char *P = Begin; P != End;) {
    if (!nextField(P, End, F))
      return false;
    if (F.Number == GraphField) {
      if (F.Wire != Len || ++Graphs > 1)
        return false;
      Graph = F;
    }
  }
  if (Graphs != 1)
    return false;

  // The graph's initializers.
  std::vector<Cut> Cuts;
  Mapped.clear();
  int Index = 0;
  for (const char *P = Graph.Payload; P != Graph.End;) {
    if (!nextField(P, Graph.End, F))
      return false;
    if (F.Number != InitializerField)
      continue;
    if (F.Wire != Len)
      return false;
    Field Raw;
    Scan S = scanTensor(F, MinBytes, Raw);
    if (S == Scan::Malformed)
      return false;
    if (S == Scan::Map) {
      Cuts.push_back({F, Raw});
      Mapped.push_back({Index, uint64_t(Raw.Payload - Begin),
                        uint64_t(Raw.End - Raw.Payload)});
    }
    ++Index;
  }
  if (Cuts.empty())
    return false;

  // Sizes after the cuts: each initializer loses its raw_data field, and its
  // length prefix (and the graph's) may get shorter.
  uint64_t GraphSize = uint64_t(Graph.End - Graph.Payload);
  for (const Cut &C : Cuts) {
    uint64_t Old = uint64_t(C.Tensor.End - C.Tensor.Start);
    uint64_t NewSize = uint64_t(C.Tensor.End - C.Tensor.Payload) -
                       uint64_t(C.Raw.End - C.Raw.Start);
    GraphSize -= Old - (1 + varintSize(NewSize) + NewSize);
  }

  auto Append = [&](const char *From, const char *To) {
    Thin.append(From, size_t(To - From));
  };
  Thin.clear();
  Thin.reserve(size_t(Bytes.size() - uint64_t(Graph.End - Graph.Payload) +
                      GraphSize + 16));
  Append(Begin, Graph.Start);
  Thin.push_back(char((GraphField << 3) | Len));
  appendVarint(Thin, GraphSize);
  const char *Pos = Graph.Payload;
  for (const Cut &C : Cuts) {
    Append(Pos, C.Tensor.Start);
    Thin.push_back(char((InitializerField << 3) | Len));
    appendVarint(Thin, uint64_t(C.Tensor.End - C.Tensor.Payload) -
                           uint64_t(C.Raw.End - C.Raw.Start));
    Append(C.Tensor.Payload, C.Raw.Start);
    Append(C.Raw.End, C.Tensor.End);
    Pos = C.Tensor.End;
  }
  Append(Pos, End);
  return true;
}

size_t detail::rawDataInsertionPoint(llvm::StringRef Serialized) {
  const char *P = Serialized.begin(), *End = Serialized.end();
  Field F;
  while (P != End) {
    const char *Start = P;
    if (!nextField(P, End, F) || F.Number > RawDataField)
      return size_t(Start - Serialized.begin());
  }
  return Serialized.size();
}
