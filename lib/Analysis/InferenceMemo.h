//===- InferenceMemo.h - infer-shapes' results per node signature -*- C++
//-*-===//
//
// What ShapeInference remembers of a node signature (InferenceSignature.h):
// the types its inference function and our refinements gave its results,
// and what data propagation computed, both with the signature's symbols
// numbered. A node is looked up by its op, opset, attributes and operand
// types; an entry then applies when the node reads the same contents
// (constants, propagated shapes) as the node the entry was made from.
//
// Only what is a function of that signature is remembered: the inference
// and propagation functions, our refinements, and the node check before
// them. Fresh dim names, merging into declared types, DimFacts and
// diagnostics stay per node.
//
// Private to lib/: includes ONNX headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_LIB_ANALYSIS_INFERENCEMEMO_H
#define ONNXOPT_LIB_ANALYSIS_INFERENCEMEMO_H

#include "InferenceSignature.h"
#include "onnxopt/IR/Type.h"
#include <cstdint>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

class Node;

namespace detail {

/// One read, by an inference or propagation function, of something the
/// signature does not fix, and what it returned (encoded).
struct MemoRead {
  enum class Kind : char {
    Data,      ///< InferenceContext::getInputData
    Symbolic,  ///< InferenceContext::getSymbolicInput
    Propagated ///< DataPropagationContext::getInputData
  };
  Kind K;
  unsigned Operand;
  std::string Value;
};

/// The outcome of one signature, symbols as numbered for it.
struct MemoEntry {
  /// The reads of the node the entry was made from, in order.
  std::vector<MemoRead> Reads;
  /// Per result: the inferred type, or nullopt when inference set none.
  std::vector<std::optional<Type>> Results;
  /// Per result: what data propagation computed.
  std::vector<std::optional<onnx::TensorShapeProto>> Data;
};

/// Appends \p N's signature to \p Key: op, \p Opset, operand and result
/// counts, attributes, and each operand's type as an inference function
/// sees it (its own, a typeless constant's, or none). False for nodes
/// whose attributes are not plain numbers and strings (graphs, tensors,
/// types): their inference reads more than the signature says.
bool encodeSignature(const Node &N, int64_t Opset, SignatureSymbols &Symbols,
                     std::string &Key);

/// Appends what a read returned to \p Out (MemoRead::Value). False for
/// contents too large to keep (a weight read through propagation): the node
/// is then inferred without the memo.
bool encodeRead(const onnx::TensorProto *P, std::string &Out);
void encodeRead(const onnx::TensorShapeProto *P, SignatureSymbols &Symbols,
                std::string &Out);

} // namespace detail
} // namespace onnxopt

#endif // ONNXOPT_LIB_ANALYSIS_INFERENCEMEMO_H
