//===- InferenceMemo.cpp - infer-shapes' results per node signature -------===//
//
// The signature holds everything an inference function can see of a node
// besides its reads of contents: the op (so the same schema, our rules for
// it, and its propagation), the opset, the counts, the attributes as they
// are converted for the function, and per operand the type getInputType
// presents. Whether an operand has a type of its own is part of it: the
// node check reads only those, and propagation runs only when every
// operand has one.
//
//===----------------------------------------------------------------------===//
#include "InferenceMemo.h"
#include "onnxopt/Ops/OpFacts.h"
#include "onnxopt/IR/IR.h"
#include <cstring>

using namespace onnxopt;
using namespace onnxopt::detail;

namespace {

void appendFloat(std::string &Key, float F) {
  // By bits: -0.0 and 0.0, or two NaNs, are different attributes.
  uint32_t Bits;
  std::memcpy(&Bits, &F, sizeof(Bits));
  appendKeyInt(Key, Bits);
}

/// Appends \p A; false for kinds whose contents the signature does not
/// hold (tensors, graphs, types, undefined).
bool encodeAttribute(const Attribute &A, std::string &Key) {
  appendKeyText(Key, A.Name);
  Key += char(A.Kind);
  switch (A.Kind) {
  case AttrKind::Int:
    appendKeyInt(Key, A.I);
    break;
  case AttrKind::Float:
    appendFloat(Key, A.F);
    break;
  case AttrKind::String:
    appendKeyText(Key, A.S.str());
    break;
  case AttrKind::Ints:
    appendKeyInt(Key, int64_t(A.Ints.size()));
    for (int64_t X : A.Ints)
      appendKeyInt(Key, X);
    break;
  case AttrKind::Floats:
    appendKeyInt(Key, int64_t(A.Floats.size()));
    for (float F : A.Floats)
      appendFloat(Key, F);
    break;
  case AttrKind::Strings:
    appendKeyInt(Key, int64_t(A.Strings.size()));
    for (const std::string &S : A.Strings)
      appendKeyText(Key, S);
    break;
  default:
    return false;
  }
  // The function sees the residual fields too (attributeToProto).
  appendKeyText(Key, A.Residual.str());
  return true;
}

/// Appends the type NodeContext::getInputType presents for \p V.
void encodeOperand(const Value *V, SignatureSymbols &Symbols,
                   std::string &Key) {
  if (!V) {
    Key += '-';
    return;
  }
  if (!V->getType().isNone()) {
    Key += 'T';
    Symbols.encode(V->getType(), Key);
    return;
  }
  const Tensor *T = getStoredConstant(*V);
  if (!T) {
    Key += '0';
    return;
  }
  // A typeless constant: its tensor's element type and dims.
  Key += 'C';
  appendKeyInt(Key, T->getElemType());
  llvm::ArrayRef<int64_t> Dims = T->getDimsRef();
  appendKeyInt(Key, int64_t(Dims.size()));
  for (int64_t D : Dims)
    appendKeyInt(Key, D);
}

} // namespace

bool onnxopt::detail::encodeSignature(const Node &N, int64_t Opset,
                                      SignatureSymbols &Symbols,
                                      std::string &Key) {
  Node::OpKey Op = N.getOpKey();
  Key.append(reinterpret_cast<const char *>(&Op), sizeof(Op));
  appendKeyInt(Key, Opset);
  appendKeyInt(Key, N.getNumOperands());
  appendKeyInt(Key, N.getNumResults());
  appendKeyInt(Key, int64_t(N.getAttrs().size()));
  for (const Attribute &A : N.getAttrs())
    if (!encodeAttribute(A, Key))
      return false;
  for (const Value *V : N.getOperands())
    encodeOperand(V, Symbols, Key);
  return true;
}

bool onnxopt::detail::encodeRead(const onnx::TensorProto *P, std::string &Out) {
  if (!P) {
    Out += '-';
    return true;
  }
  // Shape operands are a few numbers; a read of more is a weight that
  // propagation looks at and gives up on.
  constexpr size_t kMaxReadBytes = 64 * 1024;
  if (P->ByteSizeLong() > kMaxReadBytes)
    return false;
  Out += '+';
  appendTensorContents(Out, *P);
  return true;
}

void onnxopt::detail::encodeRead(const onnx::TensorShapeProto *P,
                                 SignatureSymbols &Symbols, std::string &Out) {
  if (!P) {
    Out += '-';
    return;
  }
  Out += '+';
  Symbols.encode(*P, Out);
}
