//===- InferenceSignature.h - Node signatures for inference memos -*- C++
//-*-===//
//
// Exported graphs repeat the same few node signatures thousands of times, so
// both inference engines (ShapeInference.cpp, lib/Export/StrictInference.cpp)
// run ONNX's inference function once per signature. A signature writes its
// dim symbols as numbers, in order of first appearance: [N,8] and [M,8] are
// one signature, [N,N] and [N,M] are two. ONNX's functions (and ours) only
// compare symbols for equality and copy them, so the results for one node
// are the results for another of the same signature, with the symbols
// renamed.
//
// Private to lib/Analysis and lib/Export: includes ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_ANALYSIS_INFERENCESIGNATURE_H
#define ONNXOPT_LIB_ANALYSIS_INFERENCESIGNATURE_H

#include "onnxopt/IR/Type.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include <onnx/onnx_pb.h>
#include <string>

namespace onnxopt {
namespace detail {

/// Append an integer (a varint: small ones take a byte) and a text (its
/// length first) to a signature, so that different sequences of them
/// never encode the same.
void appendKeyInt(std::string &Key, int64_t X);
void appendKeyText(std::string &Key, llvm::StringRef S);
/// Appends what an inference function can learn from reading tensor \p T:
/// all of it but its name. ONNX's functions (1.12: ParseData and the ops
/// that read contents) and ours read a tensor's name only for a failure's
/// message, and no memo keeps a failure. So shape constants that differ
/// only by name (each exported Reshape's own initializer, each constant
/// fold-shapes makes) share a result.
void appendTensorContents(std::string &Key, const onnx::TensorProto &T);

/// The dim symbols of one node's signature, numbered in order of first
/// appearance, and the encoding of the types and shapes that hold them.
class SignatureSymbols {
public:
  /// Appends \p T (every field, denotations included) to \p Key, numbering
  /// its symbols.
  void encode(const Type &T, std::string &Key);
  /// Appends \p S (shape data, as data propagation makes it) to \p Key,
  /// numbering its symbols.
  void encode(const onnx::TensorShapeProto &S, std::string &Key);

  /// How many symbols are numbered; truncate() forgets the later ones.
  size_t size() const { return Originals.size(); }
  void truncate(size_t N);

  /// Renames each numbered symbol of \p T to its number (`?K`). False when
  /// \p T holds a symbol that is not numbered (\p T is then partly renamed).
  bool canonicalize(Type &T) const;
  bool canonicalize(onnx::TensorShapeProto &S) const;
  /// Undoes canonicalize with the symbols of this signature; symbols not
  /// of the `?K` form are left as they are.
  void restore(Type &T) const;
  void restore(onnx::TensorShapeProto &S) const;

private:
  unsigned number(const Dim &Sym);
  unsigned number(llvm::StringRef Sym);
  unsigned add(Dim D);
  int find(llvm::StringRef Sym) const;
  /// A symbol dim (without denotation) per number: restoring copies it
  /// instead of interning the text again.
  llvm::SmallVector<Dim, 8> Originals;
  /// The numbers by text, once there are more than a few (a Concat of
  /// 20k inputs, each with its own symbol, made the search quadratic).
  llvm::StringMap<unsigned> Index;
};

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_ANALYSIS_INFERENCESIGNATURE_H
