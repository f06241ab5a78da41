//===- InputKind.cpp - What an input file is when it is not ONNX ----------===//
//
// Signatures checked (first bytes):
//   PK\3\4 ... constants.pkl, code/   TorchScript (torch.jit.save, a zip)
//   PK\3\4 ... data.pkl   torch.save (zip, PyTorch >= 1.6)
//   PK\3\4 ... config.json, model.weights.h5   Keras 3 (.keras)
//   PK\3\4 ... *.npy      NumPy .npz; other zip archives (naming a .onnx
//                        entry); the names come from the local headers in
//                        the first bytes and the central directory at the end
//   \x80\x02\x8a\x0a      torch.save (legacy: a pickled magic number)
//   \x80[\x02-\x05]       another Python pickle
//   \x89HDF\r\n\x1a\n     HDF5 (Keras .h5)
//   ????TFL3              TensorFlow Lite flatbuffer
//   ????ORTM              ONNX Runtime's ORT format
//   \x1f\x8b, ustar@257   gzip, tar
//   \x93NUMPY            NumPy .npy
//   <u64 n>{"             safetensors (little-endian header size, then JSON)
//   <!DOCTYPE html, <html, <head, <body, <!--   an HTML page (a download
//                        that saved the model hub's page, not the file)
//   <?xml                 XML (OpenVINO IR: `<net `)
//   version https://git-lfs...   a Git LFS pointer (cloned without LFS)
//   { or [ (plain text)   JSON (ONNX's JSON form: "irVersion", "graph")
//   '<', '#', identifier  ONNX text
// a file named saved_model.pb (a TensorFlow SavedModel's graph)
// and directories holding saved_model.pb(txt) (TensorFlow SavedModel). None
// of these can start a binary ModelProto: its first byte is a field tag of
// ModelProto (fields 1-25), never 'P', 0x80 or 0x89 followed by these bytes,
// and never '<', '{', '[' or 'v' (an end or start of a group, wire type 6).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Import/InputKind.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <algorithm>
#include <fcntl.h>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

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

/// Up to \p N bytes from the end of \p Path ("" when it cannot be read).
static std::string readTail(llvm::StringRef Path, size_t N) {
  std::string P = Path.str();
  int FD = ::open(P.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return "";
  std::string Buf;
  off_t Size = ::lseek(FD, 0, SEEK_END);
  if (Size > 0) {
    size_t Take = std::min<size_t>(N, size_t(Size));
    Buf.resize(Take);
    ssize_t Got = ::pread(FD, Buf.data(), Take, Size - off_t(Take));
    Buf.resize(Got > 0 ? size_t(Got) : 0);
  }
  ::close(FD);
  return Buf;
}

static uint16_t readLE16(llvm::StringRef B, size_t At) {
  return uint16_t(uint8_t(B[At]) | uint8_t(B[At + 1]) << 8);
}

/// The entry names a zip archive's first and last bytes show: the local
/// file headers in \p Head (`PK\3\4`, name at +30) and the central directory
/// in \p Tail (`PK\1\2`, name at +46), which lists every entry.
static std::vector<std::string> zipEntryNames(llvm::StringRef Head,
                                              llvm::StringRef Tail) {
  std::vector<std::string> Names;
  auto Scan = [&](llvm::StringRef B, llvm::StringRef Sig, size_t LenAt,
                  size_t NameAt) {
    for (size_t Pos = B.find(Sig); Pos != llvm::StringRef::npos;
         Pos = B.find(Sig, Pos + 4)) {
      if (Pos + NameAt > B.size())
        break;
      size_t Len = readLE16(B, Pos + LenAt);
      if (Pos + NameAt + Len > B.size())
        break;
      std::string Name = B.substr(Pos + NameAt, Len).str();
      if (!Name.empty() && !llvm::is_contained(Names, Name))
        Names.push_back(std::move(Name));
    }
  };
  Scan(Head, llvm::StringRef("PK\x03\x04", 4), 26, 30);
  Scan(Tail, llvm::StringRef("PK\x01\x02", 4), 28, 46);
  return Names;
}

/// What a zip archive is, from its entry names.
static void rejectZip(llvm::StringRef Head, llvm::StringRef Tail,
                      DiagnosticEngine &Diags, const char *Export) {
  std::vector<std::string> Names = zipEntryNames(Head, Tail);
  auto Any = [&](auto Pred) { return llvm::any_of(Names, Pred); };
  // An entry by its file name, in any folder (torch writes `archive/...`).
  auto Named = [&](llvm::StringRef Want) {
    return Any([&](const std::string &N) {
      return llvm::sys::path::filename(N, llvm::sys::path::Style::posix) ==
             Want;
    });
  };
  // Both torch.save and torch.jit.save write data.pkl and version; only
  // TorchScript has code/ and constants.pkl.
  if (Named("constants.pkl") || Any([](const std::string &N) {
        return llvm::StringRef(N).contains("code/__torch__");
      })) {
    emitError(Diags) << "this is a TorchScript archive (torch.jit.save), not "
                        "an ONNX model; load it with torch.jit.load and "
                        "export it with torch.onnx.export first";
    return;
  }
  if (Named("data.pkl") || Named("version") || Head.contains("data.pkl") ||
      Head.contains("/version")) {
    emitError(Diags) << "this is a PyTorch checkpoint (torch.save, zip "
                        "format), not an ONNX model"
                     << Export;
    return;
  }
  if (Named("config.json") &&
      (Named("model.weights.h5") || Named("metadata.json"))) {
    emitError(Diags) << "this is a Keras model (.keras archive), not an ONNX "
                        "model; convert it first, e.g. with tf2onnx";
    return;
  }
  auto Onnx = llvm::find_if(Names, [](const std::string &N) {
    return llvm::StringRef(N).endswith(".onnx");
  });
  if (Onnx != Names.end()) {
    emitError(Diags) << "this is a zip archive, not an ONNX model; unpack it "
                        "and give the .onnx file inside ('"
                     << *Onnx << "')";
    return;
  }
  if (!Names.empty() && llvm::all_of(Names, [](const std::string &N) {
        return llvm::StringRef(N).endswith(".npy");
      })) {
    emitError(Diags) << "this is a NumPy .npz archive (arrays, no graph), "
                        "not an ONNX model";
    return;
  }
  emitError(Diags) << "this is a zip archive, not an ONNX model; unpack it "
                      "and give the .onnx file inside";
}

/// True when \p S starts with \p Prefix, ignoring ASCII case.
static bool startsWithNoCase(llvm::StringRef S, llvm::StringRef Prefix) {
  return S.size() >= Prefix.size() &&
         S.take_front(Prefix.size()).equals_insensitive(Prefix);
}

/// True when \p Head has no control characters but whitespace (UTF-8 text).
static bool isPlainText(llvm::StringRef Head) {
  return llvm::all_of(Head, [](char Ch) {
    unsigned char U = static_cast<unsigned char>(Ch);
    return U >= 0x20 || Ch == '\n' || Ch == '\r' || Ch == '\t';
  });
}

/// The checks of classifyInput on the first (\p Head) and last (\p Tail)
/// bytes of an input; \p Path names it in messages ("" for bytes).
static InputKind classifyContent(llvm::StringRef Head, llvm::StringRef Tail,
                                 llvm::StringRef Path,
                                 DiagnosticEngine &Diags) {
  const char *Export = "; export the model with torch.onnx.export first";
  if (Head.startswith("PK\x03\x04") || Head.startswith("PK\x05\x06")) {
    rejectZip(Head, Tail, Diags, Export);
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
                     << (Path.empty() ? "model.tflite" : Path)
                     << " --output model.onnx";
    return InputKind::Rejected;
  }
  if (Head.size() >= 8 && Head.substr(4, 4) == "ORTM") {
    emitError(Diags) << "this is an ONNX Runtime model in ORT format (.ort), "
                        "not an ONNX model; give onnx-opt the .onnx file it "
                        "was converted from";
    return InputKind::Rejected;
  }
  if (Head.startswith("\x1f\x8b")) {
    emitError(Diags) << "this is a gzip-compressed file, not an ONNX model; "
                        "decompress it first (gunzip, or tar -xzf for a "
                        ".tar.gz) and give the .onnx file";
    return InputKind::Rejected;
  }
  if (Head.size() >= 262 && Head.substr(257, 5) == "ustar") {
    emitError(Diags) << "this is a tar archive, not an ONNX model; unpack it "
                        "(tar -xf) and give the .onnx file inside";
    return InputKind::Rejected;
  }
  if (Head.startswith("\x93NUMPY")) {
    emitError(Diags) << "this is a NumPy array file (.npy), not an ONNX model";
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
  // Text that is not ONNX text. A binary ModelProto never starts with these
  // bytes: '<' would end a group, '{', '[' would start a group (ModelProto
  // has none), 'v' is wire type 6, which does not exist.
  llvm::StringRef Text = Head;
  if (Text.startswith("\xef\xbb\xbf"))
    Text = Text.drop_front(3); // UTF-8 byte order mark
  Text = Text.ltrim();
  if (startsWithNoCase(Text, "<!doctype html") ||
      startsWithNoCase(Text, "<html") || startsWithNoCase(Text, "<head") ||
      startsWithNoCase(Text, "<body") || startsWithNoCase(Text, "<!--")) {
    emitError(Diags) << "this is an HTML page, not an ONNX model: the download "
                        "saved a web page (the model hub's page for the file, "
                        "or a sign-in page) instead of the file; download the "
                        "file itself (GitHub: the 'raw' link; Hugging Face: "
                        "the '/resolve/' URL, not '/blob/')";
    return InputKind::Rejected;
  }
  if (startsWithNoCase(Text, "<?xml")) {
    if (Head.contains("<net "))
      emitError(Diags) << "this is an OpenVINO IR model (.xml), not an ONNX "
                          "model; give onnx-opt the .onnx file it was "
                          "converted from";
    else
      emitError(Diags) << "this is an XML file, not an ONNX model";
    return InputKind::Rejected;
  }
  if (Text.startswith("version https://git-lfs.github.com/spec/")) {
    emitError(Diags) << "this is a Git LFS pointer, not the model itself: the "
                        "repository was cloned without Git LFS; run 'git lfs "
                        "pull' (or download the file itself)";
    return InputKind::Rejected;
  }
  if ((Text.startswith("{") || Text.startswith("[")) && isPlainText(Head)) {
    if (Head.contains("\"irVersion\"") || Head.contains("\"opsetImport\"") ||
        (Head.contains("\"graph\"") && Head.contains("\"node\"")))
      emitError(Diags) << "this is an ONNX model in protobuf's JSON form, not "
                          "a binary or text ONNX model; convert it first, "
                          "e.g. onnx.save(google.protobuf.json_format.Parse("
                          "text, onnx.ModelProto()), 'model.onnx')";
    else
      emitError(Diags) << "this is a JSON file (such as a model's "
                          "config.json), not an ONNX model";
    return InputKind::Rejected;
  }
  if (llvm::sys::path::filename(Path) == "saved_model.pb") {
    emitError(Diags) << "this is the graph of a TensorFlow SavedModel, not an "
                        "ONNX model; convert its directory first, e.g. python "
                        "-m tf2onnx.convert --saved-model "
                     << (llvm::sys::path::parent_path(Path).empty()
                             ? llvm::StringRef(".")
                             : llvm::sys::path::parent_path(Path))
                     << " --output model.onnx";
    return InputKind::Rejected;
  }
  return isOnnxText(Head) ? InputKind::Text : InputKind::Binary;
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
  if (HeadBytes.empty())
    return InputKind::Binary;
  // The tail only matters for zip archives (their central directory).
  std::string TailBytes =
      llvm::StringRef(HeadBytes).startswith("PK") ? readTail(Path, 65536) : "";
  InputKind K = classifyContent(HeadBytes, TailBytes, Path, Diags);
  if (K != InputKind::Text)
    return K;
  // A file named as text is text: the loader reads it by its name.
  if (Path.endswith(".onnxtxt") || Path.endswith(".txt") ||
      Path.endswith(".onnxtext"))
    return InputKind::Binary;
  // ONNX text named like a binary file: read it as text.
  emitRemark(Diags) << "the file holds ONNX text, not binary protobuf; "
                       "reading it as text";
  return InputKind::Text;
}

InputKind onnxopt::classifyBytes(llvm::StringRef Bytes,
                                 DiagnosticEngine &Diags) {
  if (Bytes.empty())
    return InputKind::Binary;
  llvm::StringRef Head = Bytes.take_front(4096);
  llvm::StringRef Tail = Bytes.take_back(65536);
  return classifyContent(Head, Tail, "", Diags);
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
