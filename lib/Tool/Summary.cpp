//===- Summary.cpp - Before/after model summary (--summary) ---------------===//
#include "Summary.h"
#include "onnxopt/Analysis/DerivedDims.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/IR/IR.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include <algorithm>
#include <map>
#include <set>

using namespace onnxopt;

static void countGraph(const Graph &G, ModelSummary &S) {
  for (const auto &V : G.getInputs())
    if (V->hasInitializer()) {
      ++S.NumInitializers;
      S.InitializerBytes += V->getInitializer().getByteSize();
    }
  for (const auto &V : G.getConstants()) {
    ++S.NumInitializers;
    S.InitializerBytes += V->getInitializer().getByteSize();
  }
  for (const Node &N : G.getNodes()) {
    ++S.NumNodes;
    std::string Op =
        N.isOnnxDomain()
            ? N.getOpType().str()
            : (llvm::Twine(N.getDomain()) + "." + N.getOpType()).str();
    ++S.OpCounts[Op];
    for (const Graph *Sub : N.getSubgraphs())
      countGraph(*Sub, S);
  }
}

ModelSummary onnxopt::summarizeModel(const Model &M) {
  ModelSummary S;
  const Graph &G = M.getGraph();
  for (const auto &V : G.getInputs())
    if (!V->hasInitializer())
      S.Inputs.emplace_back(V->getName().str(), V->getType().str());
  for (const Value *V : G.getOutputs())
    S.Outputs.emplace_back(V->getName().str(), V->getType().str());
  countGraph(G, S);
  DimRangeMap Ranges;
  std::string Error;
  if (getDimRanges(M, Ranges, Error))
    for (const auto &[Sym, R] : Ranges)
      S.DimRanges.push_back(Sym + "=" + printDimRange(R));
  DimGears Gears;
  if (getDimGears(M, Gears, Error))
    for (const DimGear &G : Gears)
      S.DimGears.push_back(printDimGear(G));
  DerivedDimMap Derived;
  if (getDerivedDims(M, Derived, Error))
    for (const auto &[Sym, Expr] : Derived)
      S.DerivedDims.push_back(Sym + "=" + Expr);
  return S;
}

void onnxopt::addConstraints(Model &M, ModelSummary &S) {
  // The conditions need the inferred types; the analysis keeps them beside
  // the model, which keeps its own.
  DiagnosticEngine Quiet;
  Quiet.setHandler([](const Diagnostic &) {});
  ShapeInfo Types(M, Quiet);
  DimAnalysis DA(M, &Types);
  DA.run();
  for (const DimConstraint &C : getInputConstraints(DA))
    S.Constraints.push_back(C.str());
}

static std::string formatBytes(uint64_t B) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  if (B < 1024)
    OS << B << " B";
  else if (B < 1024 * 1024)
    OS << llvm::format("%.1f KiB", B / 1024.0);
  else if (B < 1024ull * 1024 * 1024)
    OS << llvm::format("%.1f MiB", B / (1024.0 * 1024));
  else
    OS << llvm::format("%.2f GiB", B / (1024.0 * 1024 * 1024));
  return OS.str();
}

namespace {
struct Row {
  std::string Label, Before, After;
};
} // namespace

static void
addInterfaceRows(std::vector<Row> &Rows, llvm::StringRef Kind,
                 const std::vector<std::pair<std::string, std::string>> &B,
                 const std::vector<std::pair<std::string, std::string>> &A) {
  // Match by name so a renamed or retyped value lines up with itself.
  std::vector<std::string> Names;
  std::set<std::string> Seen;
  for (const auto &P : B)
    if (Seen.insert(P.first).second)
      Names.push_back(P.first);
  for (const auto &P : A)
    if (Seen.insert(P.first).second)
      Names.push_back(P.first);
  // Each side by name (its first entry of a name), so that a model with
  // many inputs is not searched once per name.
  auto Index = [](const std::vector<std::pair<std::string, std::string>> &L) {
    llvm::StringMap<llvm::StringRef> ByName;
    for (const auto &P : L)
      ByName.try_emplace(P.first, P.second);
    return ByName;
  };
  llvm::StringMap<llvm::StringRef> BeforeByName = Index(B),
                                   AfterByName = Index(A);
  auto Find = [](const llvm::StringMap<llvm::StringRef> &ByName,
                 const std::string &N) -> std::string {
    auto It = ByName.find(N);
    return It == ByName.end() ? "-" : It->second.str();
  };
  for (const std::string &N : Names)
    Rows.push_back({(llvm::Twine(Kind) + " " + N).str(), Find(BeforeByName, N),
                    Find(AfterByName, N)});
}

void onnxopt::printSummaryTable(llvm::raw_ostream &OS, const ModelSummary &B,
                                const ModelSummary &A) {
  std::vector<Row> Rows;
  addInterfaceRows(Rows, "input", B.Inputs, A.Inputs);
  addInterfaceRows(Rows, "output", B.Outputs, A.Outputs);
  // Ranges line up by symbol; a symbol without a range shows "-".
  std::set<std::string> Syms;
  auto SymOf = [](const std::string &E) { return E.substr(0, E.find('=')); };
  for (const std::string &E : B.DimRanges)
    Syms.insert(SymOf(E));
  for (const std::string &E : A.DimRanges)
    Syms.insert(SymOf(E));
  // `sym=text` entries by symbol (the first of each), so that a model with
  // many symbols is not searched once per symbol.
  using BySymbol = std::map<std::string, std::string>;
  auto Index = [&](const std::vector<std::string> &L) {
    BySymbol M;
    for (const std::string &E : L) {
      std::string Sym = SymOf(E);
      M.emplace(Sym, E.substr(std::min(E.size(), Sym.size() + 1)));
    }
    return M;
  };
  auto RangeOf = [](const BySymbol &M, const std::string &Sym) {
    auto It = M.find(Sym);
    return It == M.end() ? std::string("-") : It->second;
  };
  BySymbol RangesBefore = Index(B.DimRanges), RangesAfter = Index(A.DimRanges);
  for (const std::string &Sym : Syms)
    Rows.push_back({"range " + Sym, RangeOf(RangesBefore, Sym),
                    RangeOf(RangesAfter, Sym)});
  // Gears line up by position; a side with fewer shows "-".
  for (size_t I = 0; I < std::max(B.DimGears.size(), A.DimGears.size()); ++I)
    Rows.push_back({"gear " + std::to_string(I + 1),
                    I < B.DimGears.size() ? B.DimGears[I] : "-",
                    I < A.DimGears.size() ? A.DimGears[I] : "-"});
  // Derived dims the interface shows (the text printer and metadata_props
  // list all of them).
  std::set<std::string> Visible;
  for (const auto *L : {&B.Inputs, &B.Outputs, &A.Inputs, &A.Outputs})
    for (const auto &P : *L) {
      // `float[batch,boxes_dim1,4]`: the dims are between '[' and ']'.
      std::string Token;
      bool InDims = false;
      for (char C : P.second) {
        if (C == '[' || C == ']' || C == ',') {
          if (InDims && !Token.empty())
            Visible.insert(Token);
          Token.clear();
          InDims = C != ']';
          continue;
        }
        if (InDims)
          Token += C;
      }
    }
  std::set<std::string> Derived;
  for (const auto *L : {&B.DerivedDims, &A.DerivedDims})
    for (const std::string &E : *L)
      if (Visible.count(SymOf(E)))
        Derived.insert(SymOf(E));
  BySymbol DerivedBefore = Index(B.DerivedDims),
           DerivedAfter = Index(A.DerivedDims);
  for (const std::string &Sym : Derived)
    Rows.push_back({"dim " + Sym, RangeOf(DerivedBefore, Sym),
                    RangeOf(DerivedAfter, Sym)});
  Rows.push_back({"", "", ""});
  std::set<std::string> Ops;
  for (const auto &P : B.OpCounts)
    Ops.insert(P.first);
  for (const auto &P : A.OpCounts)
    Ops.insert(P.first);
  auto Count = [](const std::map<std::string, uint64_t> &M,
                  const std::string &Op) {
    auto It = M.find(Op);
    return std::to_string(It == M.end() ? 0 : It->second);
  };
  for (const std::string &Op : Ops)
    Rows.push_back({Op, Count(B.OpCounts, Op), Count(A.OpCounts, Op)});
  Rows.push_back({"", "", ""});
  Rows.push_back(
      {"nodes", std::to_string(B.NumNodes), std::to_string(A.NumNodes)});
  Rows.push_back({"initializers", std::to_string(B.NumInitializers),
                  std::to_string(A.NumInitializers)});
  Rows.push_back({"initializer size", formatBytes(B.InitializerBytes),
                  formatBytes(A.InitializerBytes)});

  size_t W0 = 0, W1 = 6, W2 = 5;
  for (const Row &R : Rows) {
    W0 = std::max(W0, R.Label.size());
    W1 = std::max(W1, R.Before.size());
    W2 = std::max(W2, R.After.size());
  }
  auto Line = [&] {
    OS << '+' << std::string(W0 + 2, '-') << '+' << std::string(W1 + 2, '-')
       << '+' << std::string(W2 + 2, '-') << "+\n";
  };
  auto Print = [&](const Row &R) {
    OS << "| " << llvm::left_justify(R.Label, W0) << " | "
       << llvm::left_justify(R.Before, W1) << " | "
       << llvm::left_justify(R.After, W2) << " |\n";
  };
  Line();
  Print({"", "before", "after"});
  Line();
  for (const Row &R : Rows) {
    if (R.Label.empty())
      Line();
    else
      Print(R);
  }
  Line();
  if (!A.Constraints.empty()) {
    OS << "conditions on the input dims (after):\n";
    for (const std::string &C : A.Constraints)
      OS << "  " << C << "\n";
  }
  OS.flush();
}
