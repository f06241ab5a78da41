//===- InferenceSignature.cpp - Node signatures for inference memos -------===//
//
// The encoding is exact rather than short: every field of a type is written
// (denotations too, which inference functions copy into their results), and
// texts carry their length, so that two different inputs never encode the
// same. A repeated signature is a lookup of a few dozen bytes.
//
//===----------------------------------------------------------------------===//
#include "InferenceSignature.h"
#include "onnxopt/Analysis/TypeWalk.h"

using namespace onnxopt;
using namespace onnxopt::detail;

namespace {

/// `?K`, the canonical name of symbol number \p K.
std::string canonicalName(unsigned K) { return "?" + std::to_string(K); }

Dim canonicalDim(unsigned K, llvm::StringRef Denotation) {
  Dim D = Dim::symbol(canonicalName(K));
  D.setDenotation(Denotation);
  return D;
}

/// The number of a canonical name, or -1.
int canonicalNumber(llvm::StringRef Sym) {
  unsigned K = 0;
  if (!Sym.consume_front("?") || Sym.getAsInteger(10, K) || K > INT32_MAX)
    return -1;
  return int(K);
}

} // namespace

void onnxopt::detail::appendKeyInt(std::string &Key, int64_t X) {
  // Zigzag, so that small negative numbers are short too.
  uint64_t U = (uint64_t(X) << 1) ^ uint64_t(X >> 63);
  while (U >= 0x80) {
    Key += char(U | 0x80);
    U >>= 7;
  }
  Key += char(U);
}

void onnxopt::detail::appendKeyText(std::string &Key, llvm::StringRef S) {
  appendKeyInt(Key, int64_t(S.size()));
  Key.append(S.data(), S.size());
}

void onnxopt::detail::appendTensorContents(std::string &Key,
                                           const onnx::TensorProto &T) {
  if (!T.has_name()) {
    T.AppendToString(&Key);
    return;
  }
  // A copy: the tensor may be the IR's, which other threads read. Reads
  // are of shape operands, a few numbers.
  onnx::TensorProto Unnamed(T);
  Unnamed.clear_name();
  Unnamed.AppendToString(&Key);
}

/// Up to this many symbols are searched one by one.
static constexpr size_t MaxUnindexed = 8;

int SignatureSymbols::find(llvm::StringRef Sym) const {
  if (!Index.empty()) {
    auto It = Index.find(Sym);
    return It == Index.end() ? -1 : int(It->second);
  }
  // A node has a few symbols. Those of types are interned (one pointer per
  // text); those of shape protos are compared as text.
  for (unsigned K = 0; K < Originals.size(); ++K) {
    llvm::StringRef S = Originals[K].getSymbol();
    if (S.data() == Sym.data() || S == Sym)
      return int(K);
  }
  return -1;
}

unsigned SignatureSymbols::add(Dim D) {
  Originals.push_back(std::move(D));
  unsigned K = Originals.size() - 1;
  if (!Index.empty())
    Index.try_emplace(Originals[K].getSymbol(), K);
  else if (Originals.size() > MaxUnindexed)
    for (unsigned J = 0; J < Originals.size(); ++J)
      Index.try_emplace(Originals[J].getSymbol(), J);
  return K;
}

void SignatureSymbols::truncate(size_t N) {
  if (N >= Originals.size())
    return;
  for (size_t K = N; K < Originals.size() && !Index.empty(); ++K)
    Index.erase(Originals[K].getSymbol());
  Originals.resize(N);
  if (N <= MaxUnindexed)
    Index.clear();
}

unsigned SignatureSymbols::number(const Dim &Sym) {
  if (int K = find(Sym.getSymbol()); K >= 0)
    return unsigned(K);
  Dim D = Sym;
  D.setDenotation("");
  return add(std::move(D));
}

unsigned SignatureSymbols::number(llvm::StringRef Sym) {
  if (int K = find(Sym); K >= 0)
    return unsigned(K);
  return add(Dim::symbol(Sym));
}

void SignatureSymbols::encode(const Type &T, std::string &Key) {
  Key += char('A' + int(T.getKind()));
  appendKeyInt(Key, T.getElemType());
  appendKeyText(Key, T.getDenotation());
  switch (T.getKind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    if (!T.hasShape()) {
      Key += 'n';
      return;
    }
    appendKeyInt(Key, int64_t(T.getRank()));
    for (const Dim &D : T.getDims()) {
      if (D.isKnown()) {
        Key += 'v';
        appendKeyInt(Key, D.getValue());
      } else if (D.isSymbol()) {
        Key += 's';
        appendKeyInt(Key, number(D));
      } else {
        Key += 'u';
      }
      appendKeyText(Key, D.getDenotation());
    }
    return;
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
  case Type::Kind::Map:
    encode(T.getElementType(), Key);
    return;
  case Type::Kind::Opaque:
    appendKeyText(Key, T.getOpaqueDomain());
    appendKeyText(Key, T.getOpaqueName());
    return;
  case Type::Kind::None:
    return;
  }
}

void SignatureSymbols::encode(const onnx::TensorShapeProto &S,
                              std::string &Key) {
  appendKeyInt(Key, S.dim_size());
  for (const onnx::TensorShapeProto_Dimension &D : S.dim()) {
    switch (D.value_case()) {
    case onnx::TensorShapeProto_Dimension::kDimValue:
      Key += 'v';
      appendKeyInt(Key, D.dim_value());
      break;
    case onnx::TensorShapeProto_Dimension::kDimParam:
      // An empty dim_param reads as unknown, but it is written as given.
      if (D.dim_param().empty()) {
        Key += 'e';
        break;
      }
      Key += 's';
      appendKeyInt(Key, number(llvm::StringRef(D.dim_param())));
      break;
    default:
      Key += 'u';
      break;
    }
    Key += D.has_denotation() ? 'd' : '-';
    appendKeyText(Key, D.denotation());
  }
}

bool SignatureSymbols::canonicalize(Type &T) const {
  bool AllNumbered = true;
  forEachDimOf(T, [&](Dim &D, unsigned) {
    if (!D.isSymbol())
      return;
    int K = find(D.getSymbol());
    if (K < 0) {
      AllNumbered = false;
      return;
    }
    D = canonicalDim(unsigned(K), D.getDenotation());
  });
  return AllNumbered;
}

bool SignatureSymbols::canonicalize(onnx::TensorShapeProto &S) const {
  bool AllNumbered = true;
  for (onnx::TensorShapeProto_Dimension &D : *S.mutable_dim()) {
    if (!D.has_dim_param() || D.dim_param().empty())
      continue;
    int K = find(D.dim_param());
    if (K < 0) {
      AllNumbered = false;
      continue;
    }
    D.set_dim_param(canonicalName(unsigned(K)));
  }
  return AllNumbered;
}

void SignatureSymbols::restore(Type &T) const {
  forEachDimOf(T, [&](Dim &D, unsigned) {
    if (!D.isSymbol())
      return;
    int K = canonicalNumber(D.getSymbol());
    if (K < 0 || unsigned(K) >= Originals.size())
      return;
    llvm::StringRef Denotation = D.getDenotation();
    Dim R = Originals[K];
    R.setDenotation(Denotation);
    D = R;
  });
}

void SignatureSymbols::restore(onnx::TensorShapeProto &S) const {
  for (onnx::TensorShapeProto_Dimension &D : *S.mutable_dim()) {
    if (!D.has_dim_param())
      continue;
    int K = canonicalNumber(D.dim_param());
    if (K >= 0 && unsigned(K) < Originals.size())
      D.set_dim_param(Originals[K].getSymbol().str());
  }
}
