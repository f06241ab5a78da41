//===- AnalysisManager.cpp - Cached analyses of one model -----------------===//
#include "onnxopt/Pass/AnalysisManager.h"

using namespace onnxopt;

void AnalysisManager::invalidate(const PreservedAnalyses &PA) {
  if (PA.isAll())
    return;
  // MapVector has no erase-if that keeps order cheaply; rebuild it.
  decltype(Cache) Kept;
  for (auto &Entry : Cache)
    if (PA.isPreserved(Entry.first))
      Kept.insert({Entry.first, std::move(Entry.second)});
  Cache = std::move(Kept);
}
