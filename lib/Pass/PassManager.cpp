//===- PassManager.cpp - Pipelines ----------------------------------------===//
//
// Running a pipeline (with verification, IR printing and timing). The
// textual pipeline syntax is parsed in PipelineParser.cpp.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/IR/Model.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include <algorithm>
#include <chrono>

using namespace onnxopt;

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

static double millisecondsSince(std::chrono::steady_clock::time_point Start) {
  std::chrono::duration<double, std::milli> D =
      std::chrono::steady_clock::now() - Start;
  return D.count();
}

static void addGraphSize(const Graph &G, GraphSize &Size) {
  for (const Node &N : G.getNodes()) {
    ++Size.Nodes;
    if (N.is("Shape"))
      ++Size.ShapeOps;
    for (const Graph *Sub : N.getSubgraphs())
      addGraphSize(*Sub, Size);
  }
}

GraphSize GraphSize::of(const Model &M) {
  GraphSize Size;
  addGraphSize(M.getGraph(), Size);
  return Size;
}

static std::string describe(const GraphSize &S) {
  return (llvm::Twine(S.Nodes) + " nodes (" + llvm::Twine(S.ShapeOps) +
          " Shape)")
      .str();
}

/// The row name under which verification time is reported.
static const char *const VerifierRow = "(verifier)";

LogicalResult PassManager::run(Model &M, DiagnosticEngine &Diags) {
  AnalysisManager AM(M, Diags);
  return run(M, Diags, AM);
}

namespace {
/// Sets the engine's message prefix for a scope. Nested pipelines compose:
/// "freeze-dims: fold-shapes: ...".
class ScopedPrefix {
public:
  ScopedPrefix(DiagnosticEngine &Diags, llvm::StringRef Arg) : Diags(Diags) {
    Saved = Diags.setMessagePrefix(Diags.getMessagePrefix().str() + Arg.str() +
                                   ": ");
  }
  ~ScopedPrefix() { Diags.setMessagePrefix(std::move(Saved)); }

private:
  DiagnosticEngine &Diags;
  std::string Saved;
};
} // namespace

LogicalResult PassManager::run(Model &M, DiagnosticEngine &Diags,
                               AnalysisManager &AM, bool *Changed) {
  // Rows recorded before the run (e.g. loading) stay in the table.
  double VerifyMs = 0;
  bool Verified = false;
  // The IR is as the verifier last passed it. A pass that changed nothing
  // leaves it so, and verifying it again would repeat the same walk (MLIR
  // skips the verifier after a pass that preserved every analysis). The
  // first pass is always verified: the input may not have been.
  bool VerifiedAsIs = false;
  // Verification time goes last, as one row, however the run ends.
  auto Finish = [&](LogicalResult R) {
    if (Opts.Timing && Verified)
      Timings.emplace_back(VerifierRow, VerifyMs);
    return R;
  };

  llvm::raw_ostream &IrOS = Opts.IrStream ? *Opts.IrStream : llvm::errs();
  bool Measure = Opts.Measure || Opts.FailOnGrowth;
  GraphSize Size = Measure ? GraphSize::of(M) : GraphSize();
  for (const std::unique_ptr<Pass> &P : Passes) {
    llvm::StringRef Arg = P->getArgument();
    PassContext Ctx(Diags, AM);
    Ctx.setPassManager(this);
    // A pass that reports its inner passes' rows (simplify) gets no row of
    // its own: the total would count its time twice.
    size_t RowsBefore = Timings.size();
    auto Start = std::chrono::steady_clock::now();
    unsigned ErrorsBefore = Diags.getNumErrors();
    LogicalResult R = failure();
    {
      ScopedPrefix Prefix(Diags, Arg);
      R = P->run(M, Ctx);
    }
    if (Opts.Timing && Timings.size() == RowsBefore)
      Timings.emplace_back(Arg.str(), millisecondsSince(Start));
    // An error is a failure even when the pass carried on and returned
    // success: its result is not trusted.
    if (failed(R) || Diags.getNumErrors() != ErrorsBefore) {
      emitNote(Diags) << "pass '" << Arg << "' failed";
      return Finish(failure());
    }
    // Counted even after a pass that reports no change: one walk, and the
    // check does not rest on the pass's word.
    if (Measure) {
      GraphSize Before = Size;
      Size = GraphSize::of(M);
      Sizes.push_back({Arg.str(), Before, Size});
      if (Opts.FailOnGrowth && Size.grewFrom(Before)) {
        emitError(Diags) << "pass '" << Arg
                         << "' made the graph bigger: " << describe(Before)
                         << " before, " << describe(Size)
                         << " after (--fail-on-growth)";
        return Finish(failure());
      }
    }
    if (Ctx.Changed) {
      VerifiedAsIs = false;
      AM.invalidate(Ctx.Preserved);
      if (Changed)
        *Changed = true;
    }

    // Print before verifying so that a broken IR can be inspected.
    if (Opts.PrintIrAfterAll ||
        llvm::is_contained(Opts.PrintIrAfter, Arg.str())) {
      IrOS << "# -----// IR after pass '" << Arg << "' //----- #\n";
      if (Opts.IrPrinter)
        Opts.IrPrinter(M, IrOS);
      else
        IrOS << "# (no IR printer was given to the pass manager)\n";
      IrOS.flush();
    }

    if (Opts.VerifyEach && !VerifiedAsIs) {
      auto VerifyStart = std::chrono::steady_clock::now();
      LogicalResult VR = verifyModel(M, Diags);
      VerifyMs += millisecondsSince(VerifyStart);
      Verified = true;
      if (failed(VR)) {
        emitError(Diags) << "verification failed after pass '" << Arg << "'";
        return Finish(failure());
      }
      VerifiedAsIs = true;
    }
  }
  return Finish(success());
}

LogicalResult PassManager::addPipeline(llvm::StringRef Text,
                                       std::string &Error) {
  return parsePassPipeline(Text, *this, Error);
}

void PassManager::printTiming(llvm::raw_ostream &OS) const {
  double Total = 0;
  for (const auto &T : Timings)
    Total += T.second;
  auto Row = [&](double Ms, llvm::StringRef Name) {
    double Percent = Total > 0 ? 100.0 * Ms / Total : 0.0;
    OS << llvm::format("  %10.3f (%5.1f%%)  ", Ms, Percent) << Name << "\n";
  };

  const char *Rule = "===---------------------------------------------------"
                     "----------------------===\n";
  OS << Rule;
  OS << "                      ... Pass execution timing report ...\n";
  OS << Rule;
  OS << llvm::format("  Total Execution Time: %.3f ms\n\n", Total);
  OS << "  ----Wall Time (ms)---  ----Name----\n";
  for (const auto &T : Timings)
    Row(T.second, T.first);
  Row(Total, "Total");
  OS.flush();
}

void PassManager::printGraphSizes(llvm::raw_ostream &OS) const {
  if (Sizes.empty())
    return;
  const char *Rule = "===---------------------------------------------------"
                     "----------------------===\n";
  OS << Rule;
  OS << "                       ... Graph size report ...\n";
  OS << Rule;
  OS << "  ----Before----    ----After-----  ----Name----\n"
     << "  nodes (Shape ops)\n";
  for (const SizeRow &Row : Sizes) {
    auto Cell = [](const GraphSize &S) {
      return (llvm::Twine(S.Nodes) + " (" + llvm::Twine(S.ShapeOps) + ")")
          .str();
    };
    OS << "  " << llvm::right_justify(Cell(Row.Before), 14) << " -> "
       << llvm::left_justify(Cell(Row.After), 14) << "  " << Row.Pass;
    if (Row.After.grewFrom(Row.Before))
      OS << "  (grew)";
    OS << "\n";
  }
  OS.flush();
}

void PassManager::recordGraphSizes(const PassManager &Nested,
                                   llvm::StringRef Prefix) {
  for (const SizeRow &Row : Nested.Sizes)
    Sizes.push_back({(Prefix + Row.Pass).str(), Row.Before, Row.After});
}

/// Whether \p PM or a pipeline nested in one of its passes declares a
/// statistic.
static bool hasStatistics(const PassManager &PM) {
  return llvm::any_of(PM.getPasses(), [](const std::unique_ptr<Pass> &P) {
    const PassManager *Nested = P->getNestedPipeline();
    return !P->getStatistics().empty() || (Nested && hasStatistics(*Nested));
  });
}

void PassManager::printStatistics(llvm::raw_ostream &OS) const {
  if (!hasStatistics(*this))
    return;
  const char *Rule = "===---------------------------------------------------"
                     "----------------------===\n";
  OS << Rule;
  OS << "                       ... Pass statistics report ...\n";
  OS << Rule;
  printStatisticRows(OS, "");
  OS.flush();
}

void PassManager::printStatisticRows(llvm::raw_ostream &OS,
                                     llvm::StringRef Prefix) const {
  for (const std::unique_ptr<Pass> &P : Passes) {
    llvm::ArrayRef<Statistic *> Stats = P->getStatistics();
    if (!Stats.empty()) {
      // Values and names in columns, as MLIR aligns them.
      size_t ValueWidth = 0, NameWidth = 0;
      for (const Statistic *S : Stats) {
        ValueWidth =
            std::max(ValueWidth, std::to_string(S->getValue()).size());
        NameWidth = std::max(NameWidth, S->getName().size());
      }
      OS << Prefix << P->getArgument() << "\n";
      for (const Statistic *S : Stats)
        OS << "  (S) "
           << llvm::right_justify(std::to_string(S->getValue()), ValueWidth)
           << " " << llvm::left_justify(S->getName(), NameWidth) << " - "
           << S->getDescription() << "\n";
    }
    if (const PassManager *Nested = P->getNestedPipeline())
      Nested->printStatisticRows(OS,
                                 (Prefix + P->getArgument() + ": ").str());
  }
}

void PassManager::printAsTextualPipeline(llvm::raw_ostream &OS) const {
  for (size_t I = 0; I < Passes.size(); ++I) {
    if (I)
      OS << ',';
    Passes[I]->printAsTextualPipeline(OS);
  }
}
