//===- ColdVector.h - A vector that costs a pointer while empty -*- C++ -*-===//
//
// Node attributes have one payload each (an int, a list, a tensor...), yet
// an Attribute has a field for every kind: as std::vectors those were 24
// bytes each and an Attribute was 216 bytes, one per Gather axis and
// Constant value of an export (583k at 1M nodes). A ColdVector is a
// std::vector behind a pointer that stays null while nothing is stored; it
// reads as a `const std::vector<T> &` and offers the vector operations the
// IR's users need.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_SUPPORT_COLDVECTOR_H
#define ONNXOPT_SUPPORT_COLDVECTOR_H

#include "llvm/ADT/ArrayRef.h"
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace onnxopt {

template <typename T> class ColdVector {
public:
  using Vector = std::vector<T>;
  using value_type = T;
  using size_type = size_t;
  using iterator = typename Vector::iterator;
  using const_iterator = typename Vector::const_iterator;

  ColdVector() = default;
  ColdVector(Vector V) { *this = std::move(V); }
  ColdVector(std::initializer_list<T> L) { *this = Vector(L); }
  ColdVector(const ColdVector &O) { *this = O.get(); }
  ColdVector(ColdVector &&) noexcept = default;
  ColdVector &operator=(const ColdVector &O) {
    if (this != &O)
      *this = O.get();
    return *this;
  }
  ColdVector &operator=(ColdVector &&) noexcept = default;
  /// An empty vector frees the storage.
  ColdVector &operator=(Vector V) {
    if (V.empty())
      P.reset();
    else if (P)
      *P = std::move(V);
    else
      P = std::make_unique<Vector>(std::move(V));
    return *this;
  }

  const Vector &get() const { return P ? *P : emptyVector(); }
  operator const Vector &() const { return get(); }
  operator llvm::ArrayRef<T>() const { return get(); }
  /// The vector itself, created if there is none yet.
  Vector &mut() {
    if (!P)
      P = std::make_unique<Vector>();
    return *P;
  }

  bool empty() const { return !P || P->empty(); }
  size_t size() const { return P ? P->size() : 0; }
  const_iterator begin() const { return get().begin(); }
  const_iterator end() const { return get().end(); }
  iterator begin() { return P ? P->begin() : iterator(); }
  iterator end() { return P ? P->end() : iterator(); }
  const T *data() const { return get().data(); }
  const T &operator[](size_t I) const { return (*P)[I]; }
  T &operator[](size_t I) { return (*P)[I]; }
  const T &front() const { return P->front(); }
  T &front() { return P->front(); }
  const T &back() const { return P->back(); }
  T &back() { return P->back(); }

  void push_back(T V) { mut().push_back(std::move(V)); }
  template <typename... Args> T &emplace_back(Args &&...A) {
    return mut().emplace_back(std::forward<Args>(A)...);
  }
  template <typename It> void assign(It B, It E) { *this = Vector(B, E); }
  void reserve(size_t N) {
    if (N)
      mut().reserve(N);
  }
  void resize(size_t N) {
    if (N)
      mut().resize(N);
    else
      P.reset();
  }
  void clear() { P.reset(); }

  bool operator==(const ColdVector &O) const { return get() == O.get(); }
  bool operator!=(const ColdVector &O) const { return !(*this == O); }

private:
  static const Vector &emptyVector() {
    static const Vector Empty;
    return Empty;
  }
  /// Null while nothing was stored.
  std::unique_ptr<Vector> P;
};

} // namespace onnxopt

#endif // ONNXOPT_SUPPORT_COLDVECTOR_H
