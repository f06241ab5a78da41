//===- ProtoWire.cpp - Protobuf wire format around raw_data ---------------===//
//
// A scan of the wire format just deep enough to find initializer payloads:
// ModelProto.graph (field 7) -> GraphProto.initializer (field 5) ->
// TensorProto.raw_data (field 9). Anything it does not understand makes it
// give up, and the model is parsed the ordinary way.
//
// A file is scanned through a small pread window rather than its mapping:
// the scan touches one spot per initializer, spread over the whole file, and
// on this kind of VM a page fault costs ten times a pread.
//
//===----------------------------------------------------------------------===//

#include "ProtoWire.h"

#include <algorithm>
#include <cerrno>
#include <unistd.h>

using namespace onnxopt;
using namespace onnxopt::detail;

namespace {

enum WireType : unsigned { Varint = 0, Fixed64 = 1, Len = 2, Fixed32 = 5 };

/// The model's bytes: in memory, or read from a file through a window.
class Source {
public:
  explicit Source(llvm::StringRef Bytes)
      : Mem(Bytes.data()), Size(Bytes.size()) {}
  Source(int FD, uint64_t Size) : FD(FD), Size(Size), Window(WindowSize) {}

  uint64_t size() const { return Size; }

  /// Up to \p N bytes at \p Offset (fewer at the end of the file); sets
  /// \p Got. Returns null on a read error.
  const char *peek(uint64_t Offset, size_t N, size_t &Got) {
    N = size_t(std::min<uint64_t>(N, Size - Offset));
    Got = N;
    if (Mem)
      return Mem + Offset;
    if (Offset < WindowStart || Offset + N > WindowStart + WindowLength) {
      WindowStart = Offset;
      WindowLength = 0;
      size_t Want = size_t(std::min<uint64_t>(Window.size(), Size - Offset));
      if (!read(Offset, Want, Window.data()))
        return nullptr;
      WindowLength = Want;
    }
    return Window.data() + (Offset - WindowStart);
  }

  /// Appends [From, To) to \p Out.
  bool append(uint64_t From, uint64_t To, std::string &Out) {
    if (Mem) {
      Out.append(Mem + From, size_t(To - From));
      return true;
    }
    size_t Old = Out.size();
    Out.resize(Old + size_t(To - From));
    return read(From, size_t(To - From), &Out[Old]);
  }

private:
  static constexpr size_t WindowSize = 4 << 10;

  bool read(uint64_t Offset, size_t N, char *Out) {
    while (N) {
      ssize_t Got = ::pread(FD, Out, N, off_t(Offset));
      if (Got < 0 && errno == EINTR)
        continue;
      if (Got <= 0)
        return false;
      Out += Got;
      Offset += uint64_t(Got);
      N -= size_t(Got);
    }
    return true;
  }

  const char *Mem = nullptr;
  int FD = -1;
  uint64_t Size;
  std::vector<char> Window;
  uint64_t WindowStart = 0;
  size_t WindowLength = 0;
};

/// One field of a message: its number, wire type and where it lies (offsets
/// into the model's bytes).
struct Field {
  uint32_t Number = 0;
  unsigned Wire = 0;
  uint64_t Start = 0;   ///< the tag
  uint64_t Payload = 0; ///< the value (after the length for Len)
  uint64_t End = 0;     ///< one past the value
  uint64_t Value = 0;   ///< the value of a Varint field
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

/// Reads the field at \p Pos (before \p End) and moves \p Pos past it.
/// Groups (wire types 3 and 4, deprecated and absent from ONNX) are not
/// supported.
bool nextField(Source &S, uint64_t &Pos, uint64_t End, Field &F) {
  // A tag and a varint or length take at most 15 bytes.
  size_t Avail;
  const char *Begin = S.peek(Pos, 16, Avail);
  if (!Begin)
    return false;
  const char *P = Begin, *Stop = Begin + std::min<uint64_t>(Avail, End - Pos);
  F.Start = Pos;
  uint64_t Tag;
  if (!readVarint(P, Stop, Tag) || Tag > UINT32_MAX || (Tag >> 3) == 0)
    return false;
  F.Number = uint32_t(Tag >> 3);
  F.Wire = unsigned(Tag & 7);
  uint64_t Size = 0;
  switch (F.Wire) {
  case Varint:
    if (!readVarint(P, Stop, F.Value))
      return false;
    break;
  case Fixed64:
    Size = 8;
    break;
  case Fixed32:
    Size = 4;
    break;
  case Len:
    if (!readVarint(P, Stop, Size))
      return false;
    break;
  default:
    return false;
  }
  F.Payload = Pos + uint64_t(P - Begin);
  if (Size > End - F.Payload)
    return false;
  F.End = F.Payload + Size;
  Pos = F.End;
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
Scan scanTensor(Source &S, const Field &T, uint64_t MinBytes, Field &Raw) {
  unsigned RawCount = 0;
  uint64_t DataType = 0, Location = 0;
  bool Plain = true;
  Field F;
  for (uint64_t Pos = T.Payload; Pos != T.End;) {
    if (!nextField(S, Pos, T.End, F))
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
             Raw.End - Raw.Payload >= MinBytes;
  return Map ? Scan::Map : Scan::Keep;
}

void appendVarint(std::string &Out, uint64_t V) {
  while (V >= 0x80) {
    Out.push_back(char(uint8_t(V) | 0x80));
    V >>= 7;
  }
  Out.push_back(char(V));
}

constexpr uint32_t GraphField = 7; // ModelProto.graph

/// Finds the model's `graph` field; false unless there is exactly one (or
/// the bytes are not understood).
bool findGraph(Source &S, Field &Graph) {
  uint64_t End = S.size();
  Field F;
  unsigned Graphs = 0;
  for (uint64_t Pos = 0; Pos != End;) {
    if (!nextField(S, Pos, End, F))
      return false;
    if (F.Number == GraphField) {
      if (F.Wire != Len || ++Graphs > 1)
        return false;
      Graph = F;
    }
  }
  return Graphs == 1;
}

bool thinModel(Source &S, uint64_t MinBytes, std::string &Thin,
               std::vector<MappedRawData> &Mapped) {
  constexpr uint32_t InitializerField = 5;
  uint64_t End = S.size();

  Field Graph, F;
  if (!findGraph(S, Graph))
    return false;

  // The graph's initializers.
  std::vector<Cut> Cuts;
  Mapped.clear();
  int Index = 0;
  for (uint64_t Pos = Graph.Payload; Pos != Graph.End;) {
    if (!nextField(S, Pos, Graph.End, F))
      return false;
    if (F.Number != InitializerField)
      continue;
    if (F.Wire != Len)
      return false;
    Field Raw;
    Scan R = scanTensor(S, F, MinBytes, Raw);
    if (R == Scan::Malformed)
      return false;
    if (R == Scan::Map) {
      Cuts.push_back({F, Raw});
      Mapped.push_back({Index, Raw.Payload, Raw.End - Raw.Payload});
    }
    ++Index;
  }
  if (Cuts.empty())
    return false;

  // Sizes after the cuts: each initializer loses its raw_data field, and its
  // length prefix (and the graph's) may get shorter.
  auto CutSize = [](const Cut &C) {
    return (C.Tensor.End - C.Tensor.Payload) - (C.Raw.End - C.Raw.Start);
  };
  uint64_t GraphSize = Graph.End - Graph.Payload;
  for (const Cut &C : Cuts)
    GraphSize -= (C.Tensor.End - C.Tensor.Start) -
                 (1 + varintSize(CutSize(C)) + CutSize(C));

  Thin.clear();
  Thin.reserve(size_t(End - (Graph.End - Graph.Payload) + GraphSize + 16));
  if (!S.append(0, Graph.Start, Thin))
    return false;
  Thin.push_back(char((GraphField << 3) | Len));
  appendVarint(Thin, GraphSize);
  uint64_t Pos = Graph.Payload;
  for (const Cut &C : Cuts) {
    if (!S.append(Pos, C.Tensor.Start, Thin))
      return false;
    Thin.push_back(char((InitializerField << 3) | Len));
    appendVarint(Thin, CutSize(C));
    if (!S.append(C.Tensor.Payload, C.Raw.Start, Thin) ||
        !S.append(C.Raw.End, C.Tensor.End, Thin))
      return false;
    Pos = C.Tensor.End;
  }
  return S.append(Pos, End, Thin);
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

bool detail::thinModelFile(int FD, uint64_t Size, uint64_t MinBytes,
                           std::string &Thin,
                           std::vector<MappedRawData> &Mapped) {
  Source S(FD, Size);
  return thinModel(S, MinBytes, Thin, Mapped);
}

bool detail::scanNodeHead(llvm::StringRef Node, NodeHead &Head) {
  // NodeProto: output = 2, name = 3, op_type = 4, domain = 7.
  Source S(Node);
  Head.OpType = Head.Domain = Head.Name = llvm::StringRef();
  Head.Outputs.clear();
  Field F;
  for (uint64_t Pos = 0; Pos != S.size();) {
    if (!nextField(S, Pos, S.size(), F))
      return false;
    if (F.Wire != Len)
      continue;
    llvm::StringRef Value = Node.slice(size_t(F.Payload), size_t(F.End));
    switch (F.Number) {
    case 2:
      Head.Outputs.push_back(Value);
      break;
    case 3:
      Head.Name = Value;
      break;
    case 4:
      Head.OpType = Value;
      break;
    case 7:
      Head.Domain = Value;
      break;
    default:
      break;
    }
  }
  return true;
}

bool detail::splitMainGraphNodes(llvm::StringRef Model, NodeSplit &Split) {
  constexpr uint32_t NodeField = 1;
  Source S(Model);
  uint64_t End = S.size();
  auto Run = [&Model](uint64_t From, uint64_t To,
                      std::vector<llvm::StringRef> &Runs) {
    if (To > From)
      Runs.push_back(Model.slice(size_t(From), size_t(To)));
  };
  Split = NodeSplit();

  // The model: exactly one graph, the fields around it in two runs.
  Field Graph, F;
  if (!findGraph(S, Graph))
    return false;
  Run(0, Graph.Start, Split.ModelRuns);
  Run(Graph.End, End, Split.ModelRuns);

  // The graph: its nodes apart, the fields between them in runs.
  uint64_t RunStart = Graph.Payload;
  for (uint64_t Pos = Graph.Payload; Pos != Graph.End;) {
    if (!nextField(S, Pos, Graph.End, F))
      return false;
    if (F.Number != NodeField)
      continue;
    if (F.Wire != Len)
      return false;
    Run(RunStart, F.Start, Split.GraphRuns);
    Split.Nodes.push_back(Model.slice(size_t(F.Payload), size_t(F.End)));
    RunStart = F.End;
  }
  Run(RunStart, Graph.End, Split.GraphRuns);
  return true;
}

size_t detail::rawDataInsertionPoint(llvm::StringRef Serialized) {
  Source S(Serialized);
  Field F;
  for (uint64_t Pos = 0; Pos != S.size();) {
    uint64_t Start = Pos;
    if (!nextField(S, Pos, S.size(), F) || F.Number > RawDataField)
      return size_t(Start);
  }
  return Serialized.size();
}
