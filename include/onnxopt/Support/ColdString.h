//===- ColdString.h - A string that costs a pointer while empty -*- C++ -*-===//
//
// For string fields that are almost always empty and sit in objects there
// are hundreds of thousands of (the residual bytes of a value's or node's
// proto message): 8 bytes instead of a std::string's 32. It reads as a
// `const std::string &`, so code written against a std::string field (the
// exporters' `ParseFromString(V.Residual)`) compiles unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_SUPPORT_COLDSTRING_H
#define ONNXOPT_SUPPORT_COLDSTRING_H

#include <memory>
#include <string>

namespace onnxopt {

class ColdString {
public:
  ColdString() = default;
  ColdString(std::string S) { *this = std::move(S); }
  ColdString(const ColdString &O) { *this = O.str(); }
  ColdString(ColdString &&) noexcept = default;
  ColdString &operator=(const ColdString &O) {
    if (this != &O)
      *this = O.str();
    return *this;
  }
  ColdString &operator=(ColdString &&) noexcept = default;
  /// An empty string frees the storage, so emptying costs nothing later.
  ColdString &operator=(std::string S) {
    if (S.empty())
      P.reset();
    else if (P)
      *P = std::move(S);
    else
      P = std::make_unique<std::string>(std::move(S));
    return *this;
  }

  bool empty() const { return !P; }
  size_t size() const { return P ? P->size() : 0; }
  const std::string &str() const { return P ? *P : emptyString(); }
  operator const std::string &() const { return str(); }

  bool operator==(const ColdString &O) const { return str() == O.str(); }
  bool operator!=(const ColdString &O) const { return !(*this == O); }

private:
  static const std::string &emptyString() {
    static const std::string Empty;
    return Empty;
  }
  /// Null while empty: never an empty string.
  std::unique_ptr<std::string> P;
};

} // namespace onnxopt

#endif // ONNXOPT_SUPPORT_COLDSTRING_H
