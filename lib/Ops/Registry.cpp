//===- Registry.cpp - Merging the families' rows into op definitions ------===//
//
// Built once, on first lookup (no static constructors): every family adds
// its rows per concern, then each (domain, op) is cut into version ranges at
// every `since` any concern names. Lookups bisect the ranges of one op.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/DimRules.h"
#include "onnxopt/Ops/EvalRules.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/PatternRules.h"
#include "onnxopt/Ops/Preconditions.h"
#include "llvm/ADT/StringMap.h"
#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <set>
#include <tuple>

using namespace onnxopt;

void OpRegistryBuilder::addTraits(llvm::ArrayRef<TraitRow> Rows) {
  for (const TraitRow &R : Rows)
    Traits.push_back({{R.Domain, R.OpType, R.Since}, &R});
}
void OpRegistryBuilder::addDims(llvm::ArrayRef<DimRule> Rows) {
  for (const DimRule &R : Rows)
    Dims.push_back({{R.Domain, R.OpType, R.Since}, &R});
}
void OpRegistryBuilder::addEval(llvm::ArrayRef<EvalRule> Rows) {
  for (const EvalRule &R : Rows)
    Evals.push_back({{R.Domain, R.OpType, R.Since}, &R});
}
void OpRegistryBuilder::addInfer(llvm::ArrayRef<InferRule> Rows) {
  for (const InferRule &R : Rows)
    Infers.push_back({{R.Domain, R.OpType, R.Since}, &R});
}
void OpRegistryBuilder::addPreconditions(
    llvm::ArrayRef<PreconditionRule> Rows) {
  for (const PreconditionRule &R : Rows)
    Preconditions.push_back({{R.Domain, R.OpType, R.Since}, &R});
}
void OpRegistryBuilder::addPatterns(llvm::ArrayRef<PatternRule> Rows) {
  for (const PatternRule &R : Rows)
    Patterns.push_back({{R.Domain, R.OpType, R.Since}, &R});
}

namespace {

llvm::StringRef normalizeDomain(llvm::StringRef D) {
  return D == "ai.onnx" ? llvm::StringRef() : D;
}

/// (domain, op) -> its definitions, oldest first, covering [Since, Until).
class Registry {
public:
  Registry() {
    OpRegistryBuilder B;
    ops::registerTensorOps(B);
    ops::registerMathOps(B);
    ops::registerNNOps(B);
    ops::registerControlFlowOps(B);
    ops::registerLateOps(B);
    ops::registerMicrosoftOps(B);
    build(B);
  }

  const OpDef *lookup(llvm::StringRef Domain, llvm::StringRef OpType,
                      int64_t Opset) const {
    auto DomainIt = Ops.find(normalizeDomain(Domain));
    if (DomainIt == Ops.end())
      return nullptr;
    auto It = DomainIt->second.find(OpType);
    if (It == DomainIt->second.end())
      return nullptr;
    const std::vector<OpDef> &Defs = It->second;
    // The newest definition that starts at or below Opset.
    auto Pos = std::upper_bound(
        Defs.begin(), Defs.end(), Opset,
        [](int64_t O, const OpDef &D) { return O < D.Since; });
    if (Pos == Defs.begin())
      return nullptr;
    return &*std::prev(Pos);
  }

  std::vector<const OpDef *> all() const {
    std::vector<const OpDef *> Out;
    for (const auto &D : Ops)
      for (const auto &O : D.second)
        for (const OpDef &Def : O.second)
          Out.push_back(&Def);
    std::sort(Out.begin(), Out.end(), [](const OpDef *A, const OpDef *B) {
      return std::make_tuple(A->Domain, A->OpType, A->Since) <
             std::make_tuple(B->Domain, B->OpType, B->Since);
    });
    return Out;
  }

private:
  // Hashed: a lookup per node on models of a million nodes. all() sorts.
  llvm::StringMap<llvm::StringMap<std::vector<OpDef>>> Ops;

  template <typename Row>
  static const Row *
  newestAt(const std::vector<std::pair<OpRegistryBuilder::Key, const Row *>>
               &Rows,
           int Opset) {
    const Row *Best = nullptr;
    int BestSince = INT_MIN;
    for (const auto &[K, R] : Rows)
      if (K.Since <= Opset && K.Since > BestSince) {
        Best = R;
        BestSince = K.Since;
      }
    return Best;
  }

  template <typename Row>
  using Rows = std::vector<std::pair<OpRegistryBuilder::Key, const Row *>>;

  struct PerOp {
    Rows<TraitRow> Traits;
    Rows<DimRule> Dims;
    Rows<EvalRule> Evals;
    Rows<InferRule> Infers;
    Rows<PreconditionRule> Preconditions;
    Rows<PatternRule> Patterns;
    std::set<int> Cuts;
  };

  template <typename Row>
  static void group(std::map<std::pair<std::string, std::string>, PerOp> &By,
                    const Rows<Row> &In, Rows<Row> PerOp::*Field) {
    for (const auto &E : In) {
      PerOp &P = By[{normalizeDomain(E.first.Domain).str(),
                     E.first.OpType.str()}];
      (P.*Field).push_back(E);
      P.Cuts.insert(E.first.Since);
    }
  }

  void build(const OpRegistryBuilder &B) {
    std::map<std::pair<std::string, std::string>, PerOp> By;
    group(By, B.Traits, &PerOp::Traits);
    group(By, B.Dims, &PerOp::Dims);
    group(By, B.Evals, &PerOp::Evals);
    group(By, B.Infers, &PerOp::Infers);
    group(By, B.Preconditions, &PerOp::Preconditions);
    group(By, B.Patterns, &PerOp::Patterns);
    for (auto &[Name, P] : By) {
      std::vector<OpDef> &Defs = Ops[Name.first][Name.second];
      Defs.reserve(P.Cuts.size());
      std::vector<int> Cuts(P.Cuts.begin(), P.Cuts.end());
      for (size_t I = 0; I < Cuts.size(); ++I) {
        OpDef D;
        D.Since = Cuts[I];
        D.Until = I + 1 < Cuts.size() ? Cuts[I + 1] : INT_MAX;
        if (const TraitRow *T = newestAt(P.Traits, D.Since)) {
          D.Traits = T->Traits;
          D.ShapeOperands = T->ShapeOperands;
          D.Axes = T->Axes;
          D.DataOperand = T->DataOperand;
        }
        D.Dims = newestAt(P.Dims, D.Since);
        D.Eval = newestAt(P.Evals, D.Since);
        D.Infer = newestAt(P.Infers, D.Since);
        D.Preconditions = newestAt(P.Preconditions, D.Since);
        D.Patterns = newestAt(P.Patterns, D.Since);
        Defs.push_back(D);
      }
    }
    // The names point into the maps' keys, which never move.
    for (auto &DomainEntry : Ops)
      for (auto &OpEntry : DomainEntry.second)
        for (OpDef &D : OpEntry.second) {
          D.Domain = DomainEntry.first();
          D.OpType = OpEntry.first();
        }
  }
};

const Registry &getRegistry() {
  static const Registry R;
  return R;
}

} // namespace

const OpDef *onnxopt::lookupOp(llvm::StringRef Domain, llvm::StringRef OpType,
                               int64_t Opset) {
  return getRegistry().lookup(Domain, OpType, Opset);
}

int64_t onnxopt::getNodeOpset(const Node &N) {
  const Graph *G = N.getParentGraph();
  int64_t Opset = G ? G->getModel().getOpsetVersion(N.getDomain()) : 0;
  if (Opset > 0)
    return Opset;
  // No model or no import: the newest version of the op.
  return INT32_MAX - 1;
}

const OpDef *onnxopt::lookupOp(const Node &N) {
  return lookupOp(N.getDomain(), N.getOpType(), getNodeOpset(N));
}

bool onnxopt::hasTrait(const Node &N, OpTrait T) {
  const OpDef *D = lookupOp(N);
  return D && D->has(T);
}

std::vector<const OpDef *> onnxopt::getAllOpDefs() {
  return getRegistry().all();
}
