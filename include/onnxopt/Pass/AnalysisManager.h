//===- AnalysisManager.h - Cached analyses of one model --------*- C++ -*-===//
//
// An analysis is any class constructible as `T(Model &, AnalysisManager &)`,
// `T(Model &, DiagnosticEngine &)` or `T(Model &)` (the last two let the
// analysis layer, which sits below the pass layer, define analyses without
// knowing this class).
// The manager builds it on first request and keeps it until a pass that did
// not preserve it finishes (MLIR's AnalysisManager and PreservedAnalyses,
// without TypeID machinery: an analysis is identified by the address of a
// per-type variable). One manager belongs to one model and one pipeline run,
// so two pipelines on two models in two threads share nothing.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_PASS_ANALYSISMANAGER_H
#define ONNXOPT_PASS_ANALYSISMANAGER_H

#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <memory>
#include <type_traits>
#include <utility>

namespace onnxopt {

class Model;

/// The identity of an analysis type: the address of this variable.
template <typename T> struct AnalysisIdentity { static inline char ID = 0; };
using AnalysisID = const void *;
template <typename T> AnalysisID getAnalysisID() {
  return &AnalysisIdentity<T>::ID;
}

/// What a pass kept valid. The default is nothing: a pass that changes the
/// model and says nothing invalidates every analysis.
class PreservedAnalyses {
public:
  static PreservedAnalyses all() {
    PreservedAnalyses PA;
    PA.All = true;
    return PA;
  }
  static PreservedAnalyses none() { return PreservedAnalyses(); }
  template <typename T> PreservedAnalyses &preserve() {
    Kept.insert(getAnalysisID<T>());
    return *this;
  }
  bool isAll() const { return All; }
  bool isPreserved(AnalysisID ID) const { return All || Kept.count(ID); }

private:
  bool All = false;
  llvm::SmallPtrSet<AnalysisID, 4> Kept;
};

class AnalysisManager {
public:
  AnalysisManager(Model &M, DiagnosticEngine &Diags) : M(M), Diags(Diags) {}
  AnalysisManager(const AnalysisManager &) = delete;
  AnalysisManager &operator=(const AnalysisManager &) = delete;

  Model &getModel() { return M; }
  /// Where analyses report what they find (the pass manager prefixes it
  /// with the name of the pass that asked).
  DiagnosticEngine &getDiags() { return Diags; }

  /// The cached \p T, built now if there is none.
  template <typename T> T &getAnalysis() {
    AnalysisID ID = getAnalysisID<T>();
    auto It = Cache.find(ID);
    if (It != Cache.end())
      return static_cast<Holder<T> &>(*It->second).Value;
    // Built before it is inserted: an analysis may ask for others.
    auto H = std::make_unique<Holder<T>>(M, *this);
    T &Result = H->Value;
    Cache[ID] = std::move(H);
    return Result;
  }
  /// The cached \p T; if there is none, builds it as `T(Args...)` (for an
  /// analysis that a pass wants built in a particular way, such as the
  /// shape types recorded in the IR straight away).
  template <typename T, typename... ArgTs>
  T &getOrBuildAnalysis(ArgTs &&...Args) {
    if (T *Cached = getCachedAnalysis<T>())
      return *Cached;
    auto H = std::make_unique<Holder<T>>(std::in_place,
                                         std::forward<ArgTs>(Args)...);
    T &Result = H->Value;
    Cache[getAnalysisID<T>()] = std::move(H);
    return Result;
  }
  /// The cached \p T, or null.
  template <typename T> T *getCachedAnalysis() {
    auto It = Cache.find(getAnalysisID<T>());
    if (It == Cache.end())
      return nullptr;
    return &static_cast<Holder<T> &>(*It->second).Value;
  }
  template <typename T> bool isCached() const {
    return Cache.count(getAnalysisID<T>());
  }
  /// Drops every analysis that \p PA does not preserve.
  void invalidate(const PreservedAnalyses &PA);
  void clear() { Cache.clear(); }

private:
  struct HolderBase {
    virtual ~HolderBase() = default;
  };
  template <typename T> static T build(Model &M, AnalysisManager &AM) {
    if constexpr (std::is_constructible_v<T, Model &, AnalysisManager &>)
      return T(M, AM);
    else if constexpr (std::is_constructible_v<T, Model &, DiagnosticEngine &>)
      return T(M, AM.getDiags());
    else
      return T(M);
  }
  template <typename T> struct Holder : HolderBase {
    Holder(Model &M, AnalysisManager &AM) : Value(build<T>(M, AM)) {}
    template <typename... ArgTs>
    Holder(std::in_place_t, ArgTs &&...Args)
        : Value(std::forward<ArgTs>(Args)...) {}
    T Value;
  };

  Model &M;
  DiagnosticEngine &Diags;
  // Insertion order, so that invalidation is deterministic.
  llvm::MapVector<AnalysisID, std::unique_ptr<HolderBase>> Cache;
};

} // namespace onnxopt

#endif // ONNXOPT_PASS_ANALYSISMANAGER_H
