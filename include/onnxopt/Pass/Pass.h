//===- Pass.h - The pass base classes --------------------------*- C++ -*-===//
//
// Two kinds of pass, as in MLIR's nesting and onnxruntime's mandatory
// recursion:
//   - Pass:      runs once on the whole model (interface edits, naming,
//                anything that needs every graph at once);
//   - GraphPass: runs on one graph at a time; the walk over the main graph
//                and every If/Loop/Scan body is the framework's, so no pass
//                writes its own recursion.
// Per-run state lives in the PassContext (and in locals), never in pass
// members, so one pass object can run on two models in two threads. What a
// pass counts for the user is a Statistic member (MLIR's Pass::Statistic):
// `--timing` prints them after the time table.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_PASS_PASS_H
#define ONNXOPT_PASS_PASS_H

#include "onnxopt/Pass/AnalysisManager.h"
#include "onnxopt/Pass/PassOptions.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace onnxopt {

class Graph;
class Model;
class Pass;
class PassManager;

/// A counter a pass declares as a member, as MLIR's Pass::Statistic:
///
///   Statistic NumFolded{this, "num-folded", "Number of folded nodes"};
///
/// and bumps as it runs (`++NumFolded`, `NumFolded += N`). `--timing`
/// prints every pass's statistics after the time table
/// (PassManager::printStatistics). The count covers every run of the pass
/// object; it is atomic, so one pass object may still run on two models in
/// two threads (the counts then add up, as MLIR's do over its threads).
/// State one run needs for itself stays in locals and the PassContext.
class Statistic {
public:
  /// \p Name (kebab-case) and \p Description must outlive the pass:
  /// string literals.
  Statistic(Pass *Owner, const char *Name, const char *Description);
  Statistic(const Statistic &) = delete;
  Statistic &operator=(const Statistic &) = delete;

  llvm::StringRef getName() const { return Name; }
  llvm::StringRef getDescription() const { return Description; }
  uint64_t getValue() const { return Value.load(std::memory_order_relaxed); }
  operator uint64_t() const { return getValue(); }

  Statistic &operator++() {
    Value.fetch_add(1, std::memory_order_relaxed);
    return *this;
  }
  Statistic &operator+=(uint64_t N) {
    Value.fetch_add(N, std::memory_order_relaxed);
    return *this;
  }

private:
  const char *Name;
  const char *Description;
  std::atomic<uint64_t> Value{0};
};

/// What a pass sees besides the model, for one run.
class PassContext {
public:
  PassContext(DiagnosticEngine &Diags, AnalysisManager &AM)
      : Diags(Diags), AM(AM) {}
  DiagnosticEngine &getDiags() { return Diags; }
  AnalysisManager &getAnalysisManager() { return AM; }

  /// The cached analysis \p T of the model, built if needed.
  template <typename T> T &getAnalysis() { return AM.getAnalysis<T>(); }

  /// The pass manager running the pass (null when a pass is run by hand).
  /// A pass with a pipeline of its own (simplify) takes the outer run's
  /// options from it and reports its inner passes' time rows to it.
  PassManager *getPassManager() const { return Owner; }
  void setPassManager(PassManager *PM) { Owner = PM; }

  /// Set by a pass that changed the model (for --timing/--summary output).
  /// A pass that sets nothing here and preserves nothing keeps every
  /// analysis only if it leaves Changed false.
  bool Changed = false;
  /// The analyses still valid after the pass, when it changed the model.
  PreservedAnalyses Preserved;
  void markAllAnalysesPreserved() { Preserved = PreservedAnalyses::all(); }
  template <typename T> void markAnalysisPreserved() {
    Preserved.preserve<T>();
  }

private:
  DiagnosticEngine &Diags;
  AnalysisManager &AM;
  PassManager *Owner = nullptr;
};

class Pass {
public:
  virtual ~Pass();
  /// The kebab-case name used in pipelines and as a flag.
  virtual llvm::StringRef getArgument() const = 0;
  /// One line, lowercase start, no trailing period.
  virtual llvm::StringRef getDescription() const = 0;
  /// Runs on the whole model. On failure a diagnostic has been emitted.
  virtual LogicalResult run(Model &M, PassContext &Ctx) = 0;

  llvm::ArrayRef<OptionBase *> getOptions() const { return Options; }
  OptionBase *findOption(llvm::StringRef Name) const;
  /// Prints `arg{k=v ...}` with the options that were set.
  void printAsTextualPipeline(llvm::raw_ostream &OS) const;

  /// The statistics the pass declares, in declaration order.
  llvm::ArrayRef<Statistic *> getStatistics() const { return Statistics; }

  /// The pipeline the pass runs inside itself, if it keeps one across runs
  /// (simplify): its passes' statistics are reported under the pass.
  virtual const PassManager *getNestedPipeline() const { return nullptr; }

private:
  friend class OptionBase;
  friend class Statistic;
  std::vector<OptionBase *> Options;
  std::vector<Statistic *> Statistics;
};

/// A pass that runs on one graph at a time. GraphPass::run visits the main
/// graph and every subgraph of every node (If branches, Loop and Scan
/// bodies, graph attributes of custom ops), iteratively, in one of two
/// orders:
///   - BodiesFirst (the default): every subgraph before the graph that holds
///     it, so a pass on the outer graph sees bodies already simplified (dce
///     then finds outer values that bodies stopped reading);
///   - ParentFirst: a graph before its subgraphs, so bodies see the outer
///     values already rewritten (cse, folding: outer constants are merged or
///     folded before the bodies that read them).
/// The graph list is taken before the first call: subgraphs a pass creates
/// are not visited in the same run, and a pass must not erase a node whose
/// subgraphs are still to be visited (ParentFirst) or change graphs other
/// than the one it was given.
class GraphPass : public Pass {
public:
  enum class Order { BodiesFirst, ParentFirst };
  virtual Order getOrder() const { return Order::BodiesFirst; }

  /// Runs on \p G, which belongs to \p M. On failure a diagnostic has been
  /// emitted and no further graph is visited.
  virtual LogicalResult runOnGraph(Graph &G, Model &M, PassContext &Ctx) = 0;
  /// Called once after every graph was visited (a summary remark).
  virtual LogicalResult finishModel(Model &M, PassContext &Ctx) {
    return success();
  }

  LogicalResult run(Model &M, PassContext &Ctx) final;
};

/// Every graph of \p M in \p O order (see GraphPass).
std::vector<Graph *> collectGraphs(Model &M, GraphPass::Order O);

} // namespace onnxopt

#endif // ONNXOPT_PASS_PASS_H
