//===- ParseAhead.cpp - The main graph's nodes parsed on a second core ----===//
#include "ParseAhead.h"
#include <google/protobuf/io/coded_stream.h>

#include <climits>

using namespace onnxopt;
using namespace onnxopt::detail;

void ProgressCounter::set(size_t V) {
  // Both seq_cst: either the waiter sees V, or this sees it sleeping.
  Value.store(V);
  if (Sleeping.load()) {
    std::lock_guard<std::mutex> Lock(Mu);
    Changed.notify_all();
  }
}

void ProgressCounter::wake() {
  std::lock_guard<std::mutex> Lock(Mu);
  Changed.notify_all();
}

void ProgressCounter::waitFor(size_t V, const std::atomic<bool> &Stop) {
  // The other side is usually a few nodes away: spinning first saves the
  // two system calls of a sleep and a wake.
  for (int I = 0; I < 256; ++I) {
    if (Value.load() >= V || Stop.load())
      return;
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> Lock(Mu);
  Sleeping.store(true);
  Changed.wait(Lock, [&] { return Value.load() >= V || Stop.load(); });
  Sleeping.store(false);
}

bool onnxopt::detail::mergeFromBytes(google::protobuf::MessageLite &Msg,
                                     llvm::StringRef Bytes) {
  google::protobuf::io::CodedInputStream Coded(
      reinterpret_cast<const uint8_t *>(Bytes.data()), int(Bytes.size()));
  Coded.SetTotalBytesLimit(INT_MAX);
  return Msg.MergeFromCodedStream(&Coded) && Coded.ConsumedEntireMessage();
}

/// Parses \p Bytes into the cleared \p NP.
static bool parseNode(onnx::NodeProto &NP, llvm::StringRef Bytes) {
  NP.Clear();
  return mergeFromBytes(NP, Bytes);
}

/// Nodes in flight. Each side publishes its progress every Batch nodes, so
/// the two threads touch the shared counters rarely.
static constexpr size_t WindowSize = 1024;
static constexpr size_t Batch = 64;

ParseAhead::ParseAhead(llvm::ArrayRef<llvm::StringRef> Nodes)
    : Nodes(Nodes), Threaded(Nodes.size() >= MinThreaded) {
  Window.resize(Threaded ? WindowSize : 1);
  if (Threaded)
    Worker = std::thread([this] { produce(); });
}

ParseAhead::~ParseAhead() {
  if (!Threaded)
    return;
  Stop.store(true);
  Released.wake();
  Worker.join();
}

void ParseAhead::produce() {
  for (size_t I = 0; I < Nodes.size() && !Stop.load(); ++I) {
    if (I >= Window.size()) {
      Released.waitFor(I - Window.size() + 1, Stop);
      if (Stop.load())
        break;
    }
    if (!parseNode(Window[I % Window.size()], Nodes[I])) {
      Parsed.set(I);
      break;
    }
    if ((I + 1) % Batch == 0 || I + 1 == Nodes.size())
      Parsed.set(I + 1);
  }
  Done.store(true);
  Parsed.wake();
}

onnx::NodeProto *ParseAhead::take(size_t I) {
  if (!Threaded)
    return parseNode(Window[0], Nodes[I]) ? &Window[0] : nullptr;
  // The previous node is done with: its slot may be refilled.
  if (I % Batch == 0)
    Released.set(I);
  if (Parsed.get() <= I) {
    // Done is set after the last count: once it is seen, the count is final.
    Parsed.waitFor(I + 1, Done);
    if (Parsed.get() <= I)
      return nullptr;
  }
  return &Window[I % Window.size()];
}

const onnx::NodeProto *ParseAhead::peek(size_t J) const {
  // Parsed > J: node J is in its slot (the seq_cst count orders the parse
  // before this read), and stays there until the caller releases it, which
  // it does only once it has taken it.
  if (!Threaded || J >= Nodes.size() || Parsed.get() <= J)
    return nullptr;
  return &Window[J % Window.size()];
}
