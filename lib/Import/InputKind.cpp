//===- InputKind.cpp - What an input file is when it is not ONNX ----------===//
//
// Signatures checked (first bytes):
//   PK\3\4 ... data.pkl   torch.save (zip, PyTorch >= 1.6)
//   \x80\x02\x8a\x0a      torch.save (legacy: a pickled magic number)
//   \x80[\x02-\x05]       another Python pickle
//   PK\3\4                another zip archive
//   \x89HDF\r\n\x1a\n     HDF5 (Keras .h5)
//   ????TFL3              TensorFlow Lite flatbuffer
//   <u64 n>{"             safetensors (little-endian header size, then JSON)
//   '<', '#', identifier  ONNX text
// and directories holding saved_model.pb(txt) (TensorFlow SavedModel). None
// of these can start a binary ModelProto: its first byte is a field tag of
// ModelProto (fields 1-25), never 'P', 0x80 or 0x89 followed by these bytes.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Import/InputKind.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <fcntl.h>
#include <map>
#include <optional>
#include <unistd.h>

using namespace onnxopt;

/// Up to \p N bytes from the start of \p Path ("" when it cannot be read).
static std::string readHead(llvm::StringRef Path, size_t N) {
  std::string P = Path.str();
  int FD = ::open(P.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return "";
  std::string Buf(N, '\0');
  ssize_t Got = ::pread(FD, Buf.data(), N, 0);
  ::close(FD);
  Buf.resize(Got > 0 ? size_t(Got) : 0);
  return Buf;
}

/// True when \p Head starts like an ONNX text model: after blank and `#`
/// comment lines, the `<...>` model header or a graph signature `name (`.
static bool isOnnxText(llvm::StringRef Head) {
  llvm::StringRef Rest = Head.ltrim();
  while (Rest.startswith("#"))
    Rest = Rest.drop_until([](char C) { return C == '\n'; }).ltrim();
  if (Rest.empty())
    return false;
  if (Rest.front() != '<') {
    llvm::StringRef Ident =
        Rest.take_while([](char C) { return llvm::isAlnum(C) || C == '_'; });
    if (Ident.empty() || llvm::isDigit(Ident.front()) ||
        !Rest.drop_front(Ident.size()).ltrim().startswith("("))
      return false;
  }
  return llvm::all_of(Head, [](char Ch) {
    unsigned char U = static_cast<unsigned char>(Ch);
    return U >= 0x20 || Ch == '\n' || Ch == '\r' || Ch == '\t';
  });
}

InputKind onnxopt::classifyInput(llvm::StringRef Path,
                                 DiagnosticEngine &Diags) {
  if (Path == "-")
    return InputKind::Binary;
  if (llvm::sys::fs::is_directory(Path)) {
    llvm::SmallString<256> PB(Path), PT(Path);
    llvm::sys::path::append(PB, "saved_model.pb");
    llvm::sys::path::append(PT, "saved_model.pbtxt");
    if (llvm::sys::fs::exists(PB) || llvm::sys::fs::exists(PT))
      emitError(Diags) << "this is a TensorFlow SavedModel directory, not an "
                          "ONNX model; convert it first, e.g. python -m "
                          "tf2onnx.convert --saved-model "
                       << Path << " --output model.onnx";
    else
      emitError(Diags) << "'" << Path
                       << "' is a directory; give the model file";
    return InputKind::Rejected;
  }
  std::string HeadBytes = readHead(Path, 4096);
  llvm::StringRef Head(HeadBytes);
  if (Head.empty())
    return InputKind::Binary;

  const char *Export = "; export the model with torch.onnx.export first";
  if (Head.startswith("PK\x03\x04")) {
    if (Head.contains("data.pkl") || Head.contains("/version"))
      emitError(Diags) << "this is a PyTorch checkpoint (torch.save, zip "
                          "format), not an ONNX model"
                       << Export;
    else
      emitError(Diags) << "this is a zip archive, not an ONNX model; unpack "
                          "it and give the .onnx file inside";
    return InputKind::Rejected;
  }
  if (Head.startswith("\x80\x02\x8a\x0a")) {
    emitError(Diags) << "this is a PyTorch checkpoint (torch.save, legacy "
                        "format), not an ONNX model"
                     << Export;
    return InputKind::Rejected;
  }
  if (Head.size() >= 2 && uint8_t(Head[0]) == 0x80 && Head[1] >= 2 &&
      Head[1] <= 5) {
    emitError(Diags) << "this is a Python pickle (such as a PyTorch "
                        "checkpoint), not an ONNX model"
                     << Export;
    return InputKind::Rejected;
  }
  if (Head.startswith("\x89HDF\r\n\x1a\n")) {
    emitError(Diags) << "this is an HDF5 file (such as a Keras .h5 model), "
                        "not an ONNX model; convert it first, e.g. with "
                        "tf2onnx";
    return InputKind::Rejected;
  }
  if (Head.size() >= 8 && Head.substr(4, 4) == "TFL3") {
    emitError(Diags) << "this is a TensorFlow Lite model, not an ONNX model; "
                        "convert it first, e.g. python -m tf2onnx.convert "
                        "--tflite "
                     << Path << " --output model.onnx";
    return InputKind::Rejected;
  }
  if (Head.size() >= 10 && Head.substr(8, 2) == "{\"") {
    uint64_t N = 0;
    for (int I = 7; I >= 0; --I)
      N = (N << 8) | uint8_t(Head[I]);
    // The JSON header ends with '}' where its size says.
    bool Ends = N + 8 > Head.size() || Head[8 + N - 1] == '}';
    if (N > 1 && N < (uint64_t(1) << 30) && Ends) {
      emitError(Diags) << "this is a safetensors weights file, not an ONNX "
                          "model (it holds weights but no graph)"
                       << Export;
      return InputKind::Rejected;
    }
  }
  // ONNX text named like a binary file: read it as text.
  bool NamedText = Path.endswith(".onnxtxt") || Path.endswith(".txt") ||
                   Path.endswith(".onnxtext");
  if (!NamedText && isOnnxText(Head)) {
    emitRemark(Diags) << "the file holds ONNX text, not binary protobuf; "
                         "reading it as text";
    return InputKind::Text;
  }
  return InputKind::Binary;
}

//===----------------------------------------------------------------------===//
// Truncation
//===----------------------------------------------------------------------===//

namespace {

/// A protobuf reader over bytes that reports where the framing breaks.
struct WireScanner {
  llvm::StringRef Bytes;

  std::optional<uint64_t> varint(size_t &Pos) const {
    uint64_t V = 0;
    for (unsigned Shift = 0; Shift < 64; Shift += 7) {
      if (Pos >= Bytes.size())
        return std::nullopt;
      uint8_t B = uint8_t(Bytes[Pos++]);
      V |= uint64_t(B & 0x7f) << Shift;
      if (!(B & 0x80))
        return V;
    }
    return std::nullopt;
  }
};

const char *modelFieldName(uint64_t F) {
  switch (F) {
  case 1:
    return "ir_version";
  case 2:
    return "producer_name";
  case 3:
    return "producer_version";
  case 4:
    return "domain";
  case 5:
    return "model_version";
  case 6:
    return "doc_string";
  case 7:
    return "graph";
  case 8:
    return "opset_import";
  case 14:
    return "metadata_props";
  case 20:
    return "training_info";
  case 25:
    return "functions";
  default:
    return nullptr;
  }
}

const char *graphFieldName(uint64_t F) {
  switch (F) {
  case 1:
    return "node";
  case 2:
    return "name";
  case 5:
    return "initializer";
  case 10:
    return "doc_string";
  case 11:
    return "input";
  case 12:
    return "output";
  case 13:
    return "value_info";
  case 14:
    return "quantization_annotation";
  case 15:
    return "sparse_initializer";
  default:
    return nullptr;
  }
}

/// Where the framing of [Begin, End) breaks: a description, or "".
/// \p Graph selects GraphProto field names (else ModelProto's).
std::string findBreak(const WireScanner &S, size_t Begin, size_t End,
                      bool Graph, size_t FileSize) {
  std::map<uint64_t, uint64_t> Counts;
  size_t Pos = Begin;
  while (Pos < End) {
    size_t FieldStart = Pos;
    std::optional<uint64_t> Tag = S.varint(Pos);
    if (!Tag || Pos > End)
      return "a field tag at byte " + std::to_string(FieldStart);
    uint64_t Field = *Tag >> 3, Wire = *Tag & 7;
    const char *Name = Graph ? graphFieldName(Field) : modelFieldName(Field);
    std::string What =
        Name ? std::string(Name) : "field " + std::to_string(Field);
    uint64_t Index = Counts[Field]++;
    if (Graph &&
        (Field == 1 || Field == 5 || Field == 11 || Field == 12 || Field == 13))
      What += " " + std::to_string(Index);
    if (Graph)
      What += " of the graph";
    switch (Wire) {
    case 0:
      if (!S.varint(Pos) || Pos > End)
        return What;
      break;
    case 1:
      Pos += 8;
      break;
    case 5:
      Pos += 4;
      break;
    case 2: {
      std::optional<uint64_t> Len = S.varint(Pos);
      if (!Len)
        return What;
      if (Pos + *Len > End) {
        // Say the innermost place when the graph is what is cut.
        if (!Graph && Field == 7) {
          std::string Inner = findBreak(S, Pos, End, /*Graph=*/true, FileSize);
          if (!Inner.empty())
            return Inner + " (the graph needs " +
                   std::to_string(Pos + *Len - FileSize) + " more bytes)";
        }
        return What + ", which starts at byte " + std::to_string(FieldStart) +
               " and needs " + std::to_string(Pos + *Len - End) + " more bytes";
      }
      Pos += *Len;
      break;
    }
    default:
      return "";
    }
    if (Pos > End)
      return What;
  }
  return "";
}

} // namespace

void onnxopt::explainMalformedInput(llvm::StringRef Path,
                                    DiagnosticEngine &Diags) {
  if (Path == "-" || !llvm::sys::fs::is_regular_file(Path))
    return;
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return;
  WireScanner S{(*Buf)->getBuffer()};
  size_t Size = S.Bytes.size();
  std::string Where = findBreak(S, 0, Size, /*Graph=*/false, Size);
  if (Where.empty())
    return;
  emitNote(Diags) << "the file looks truncated: it ends at byte " << Size
                  << ", inside " << Where;
}
