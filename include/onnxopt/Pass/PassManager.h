//===- PassManager.h - Pipelines -------------------------------*- C++ -*-===//
#ifndef ONNXOPT_PASS_PASSMANAGER_H
#define ONNXOPT_PASS_PASSMANAGER_H

#include "onnxopt/Pass/Pass.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace onnxopt {

/// How big a model is, as the graph size report and --fail-on-growth count
/// it: nodes, and Shape ops (each reads a tensor's shape at run time and
/// keeps a computation from folding), over the main graph and every
/// subgraph.
struct GraphSize {
  uint64_t Nodes = 0;
  uint64_t ShapeOps = 0;

  static GraphSize of(const Model &M);
  /// True if either count is above \p Before's.
  bool grewFrom(const GraphSize &Before) const {
    return Nodes > Before.Nodes || ShapeOps > Before.ShapeOps;
  }
};

struct PassManagerOptions {
  /// Run the IR verifier after every pass (that changed the model, once the
  /// IR has been verified).
  bool VerifyEach = true;
  bool PrintIrAfterAll = false;
  /// Pass arguments after which to print the IR.
  std::vector<std::string> PrintIrAfter;
  /// Collect per-pass wall time (printTiming).
  bool Timing = false;
  /// Record the model's size before and after every pass
  /// (printGraphSizes).
  bool Measure = false;
  /// Fail the run when a pass leaves more nodes or more Shape ops than it
  /// found (measures whether or not Measure is set).
  bool FailOnGrowth = false;
  /// Where --print-ir-after* goes.
  llvm::raw_ostream *IrStream = nullptr; // null = llvm::errs()
  /// Prints the model for --print-ir-after*. The pass layer does not depend
  /// on the exporter: the tool (or an embedder) supplies its printer.
  std::function<void(const Model &, llvm::raw_ostream &)> IrPrinter;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions Opts = {}) : Opts(std::move(Opts)) {}
  void addPass(std::unique_ptr<Pass> P) { Passes.push_back(std::move(P)); }
  /// Appends the passes of a textual pipeline (`fold-shapes,cse{...}`), as
  /// a pass building its inner pipeline in code does. Adds nothing and
  /// returns failure with \p Error set if the text is not a valid pipeline.
  LogicalResult addPipeline(llvm::StringRef Text, std::string &Error);
  size_t size() const { return Passes.size(); }
  llvm::ArrayRef<std::unique_ptr<Pass>> getPasses() const { return Passes; }
  PassManagerOptions &getOptions() { return Opts; }

  /// Runs the pipeline; stops at the first pass (or verification) failure.
  /// A pass fails when it returns failure or when it emitted an error.
  /// Every diagnostic a pass emits is prefixed with its argument
  /// ("fold-shapes: ..."), once; passes do not type their own name.
  LogicalResult run(Model &M, DiagnosticEngine &Diags);
  /// The same with the analyses of \p AM (a nested pipeline shares the
  /// outer pass's analyses). Sets \p Changed if any pass changed the model.
  LogicalResult run(Model &M, DiagnosticEngine &Diags, AnalysisManager &AM,
                    bool *Changed = nullptr);
  /// Adds a row (in milliseconds) to the timing table, e.g. for loading and
  /// saving, which happen outside run().
  void recordTiming(llvm::StringRef Name, double Ms) {
    Timings.emplace_back(Name.str(), Ms);
  }
  /// The rows of the timing table so far (pass argument, milliseconds).
  llvm::ArrayRef<std::pair<std::string, double>> getTimings() const {
    return Timings;
  }
  /// Prints the per-pass wall-time table of the last run.
  void printTiming(llvm::raw_ostream &OS) const;
  /// Prints each pass's graph size before and after it (with Measure or
  /// FailOnGrowth), in pipeline order; nothing when nothing was measured.
  void printGraphSizes(llvm::raw_ostream &OS) const;
  /// Appends \p Nested's graph size rows, each pass named with \p Prefix
  /// (a pass running a pipeline of its own reports its passes' rows).
  void recordGraphSizes(const PassManager &Nested, llvm::StringRef Prefix);
  /// Prints the statistics of every pass that declares some, in pipeline
  /// order (MLIR's pass statistics report); nothing when none does.
  void printStatistics(llvm::raw_ostream &OS) const;
  /// The same, each pass under \p Prefix (a nested pipeline's passes are
  /// shown as `simplify: cse`).
  void printStatisticRows(llvm::raw_ostream &OS, llvm::StringRef Prefix) const;
  /// Prints the pipeline back in textual form.
  void printAsTextualPipeline(llvm::raw_ostream &OS) const;

private:
  PassManagerOptions Opts;
  std::vector<std::unique_ptr<Pass>> Passes;
  std::vector<std::pair<std::string, double>> Timings;
  struct SizeRow {
    std::string Pass;
    GraphSize Before, After;
  };
  std::vector<SizeRow> Sizes;
};

/// Parses `a,b{key=value list=1,2},c` and appends the passes to \p PM.
/// On error returns failure with a message in \p Error naming the position
/// and the problem (unknown pass, unknown option, bad value).
LogicalResult parsePassPipeline(llvm::StringRef Text, PassManager &PM,
                                std::string &Error);

} // namespace onnxopt

#endif // ONNXOPT_PASS_PASSMANAGER_H
