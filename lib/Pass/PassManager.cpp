//===- PassManager.cpp - Pipelines ----------------------------------------===//
//
// Running a pipeline (with verification, IR printing and timing). The
// textual pipeline syntax is parsed in PipelineParser.cpp.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Export/Export.h"
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

static InFlightDiagnostic emitNote(DiagnosticEngine &Diags) {
  return InFlightDiagnostic(&Diags, Severity::Note, "");
}

/// The row name under which verification time is reported.
static const char *const VerifierRow = "(verifier)";

LogicalResult PassManager::run(Model &M, DiagnosticEngine &Diags) {
  // Rows recorded before the run (e.g. loading) stay in the table.
  double VerifyMs = 0;
  bool Verified = false;
  // Verification time goes last, as one row, however the run ends.
  auto Finish = [&](LogicalResult R) {
    if (Opts.Timing && Verified)
      Timings.emplace_back(VerifierRow, VerifyMs);
    return R;
  };

  llvm::raw_ostream &IrOS = Opts.IrStream ? *Opts.IrStream : llvm::errs();
  for (const std::unique_ptr<Pass> &P : Passes) {
    llvm::StringRef Arg = P->getArgument();
    PassContext Ctx(Diags);
    auto Start = std::chrono::steady_clock::now();
    LogicalResult R = P->run(M, Ctx);
    if (Opts.Timing)
      Timings.emplace_back(Arg.str(), millisecondsSince(Start));
    if (failed(R)) {
      // The pass emitted the error; say which pass it was.
      emitNote(Diags) << "pass '" << Arg << "' failed";
      return Finish(failure());
    }

    // Print before verifying so that a broken IR can be inspected.
    if (Opts.PrintIrAfterAll ||
        llvm::is_contained(Opts.PrintIrAfter, Arg.str())) {
      IrOS << "# -----// IR after pass '" << Arg << "' //----- #\n";
      printModel(M, IrOS);
      IrOS.flush();
    }

    if (Opts.VerifyEach) {
      auto VerifyStart = std::chrono::steady_clock::now();
      LogicalResult VR = verifyModel(M, Diags);
      VerifyMs += millisecondsSince(VerifyStart);
      Verified = true;
      if (failed(VR)) {
        emitError(Diags) << "verification failed after pass '" << Arg << "'";
        return Finish(failure());
      }
    }
  }
  return Finish(success());
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

void PassManager::printAsTextualPipeline(llvm::raw_ostream &OS) const {
  for (size_t I = 0; I < Passes.size(); ++I) {
    if (I)
      OS << ',';
    Passes[I]->printAsTextualPipeline(OS);
  }
}
