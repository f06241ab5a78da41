//===- ParseAhead.h - The main graph's nodes parsed on a second core -*- C++ -*-===//
//
// Private to the binary importer. The import's second phase parses each
// streamed node and then resolves it; the parse needs only the node's bytes,
// so on a large graph it runs on the other core, a window of nodes ahead of
// the resolution (100k nodes: 17% of the load moved off the critical path).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_IMPORT_PARSEAHEAD_H
#define ONNXOPT_LIB_IMPORT_PARSEAHEAD_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <onnx/onnx_pb.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace onnxopt {
namespace detail {

/// Merges the serialized fields \p Bytes into \p Msg. A message's fields may
/// be parsed in pieces: merging the pieces in order is parsing the whole.
bool mergeFromBytes(google::protobuf::MessageLite &Msg, llvm::StringRef Bytes);

/// A count that one thread raises and another waits on. The waiter spins
/// briefly, then sleeps; the raiser takes the lock only when someone sleeps.
class ProgressCounter {
public:
  size_t get() const { return Value.load(); }
  void set(size_t V);
  /// Waits until the count is at least \p V or \p Stop is set.
  void waitFor(size_t V, const std::atomic<bool> &Stop);
  /// Wakes a sleeping waiter (after \p Stop was set).
  void wake();

private:
  std::atomic<size_t> Value{0};
  std::atomic<bool> Sleeping{false};
  std::mutex Mu;
  std::condition_variable Changed;
};

/// The nodes whose bytes are \p Nodes, parsed in order into a window of
/// reused protos (Clear() keeps their strings' storage), on a second thread
/// when there are enough of them to pay for it. The protos are on the heap,
/// not on an arena: the importer swaps attribute tensors out of them into
/// the IR.
class ParseAhead {
public:
  explicit ParseAhead(llvm::ArrayRef<llvm::StringRef> Nodes);
  ~ParseAhead();
  ParseAhead(const ParseAhead &) = delete;
  ParseAhead &operator=(const ParseAhead &) = delete;

  /// Node \p I parsed, or null when its bytes are malformed. Taken in order
  /// (I = 0, 1, ...); the proto is the caller's until the next take.
  onnx::NodeProto *take(size_t I);
  /// Node \p J, a node after the last one taken, when it is parsed already
  /// (else null; always null when not threaded). Read-only, until that
  /// node is taken: for looking ahead (the importer prefetches its names).
  const onnx::NodeProto *peek(size_t J) const;

  /// Graphs below this many nodes are parsed on the caller's thread.
  static constexpr size_t MinThreaded = 4096;

private:
  void produce();

  llvm::ArrayRef<llvm::StringRef> Nodes;
  /// Slot I % size() holds node I.
  std::vector<onnx::NodeProto> Window;
  bool Threaded;
  std::thread Worker;
  /// Nodes parsed (all valid); the producer stops at the first malformed
  /// one and sets Done.
  ProgressCounter Parsed;
  /// Nodes the caller is done with (their slots are free).
  ProgressCounter Released;
  std::atomic<bool> Done{false};
  std::atomic<bool> Stop{false};
};

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_IMPORT_PARSEAHEAD_H
