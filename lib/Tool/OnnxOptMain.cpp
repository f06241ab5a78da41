//===- OnnxOptMain.cpp - The onnx-opt command line ------------------------===//
//
// A hand-written argument parser (not llvm::cl): pass flags must keep their
// command-line order to form the pipeline, and the library must not register
// global options in programs that embed it.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Tool/OnnxOptMain.h"
#include "Summary.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/Analysis/NodeValidation.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/Export/TextPrintOptions.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Verifier.h"
#include "onnxopt/Import/Import.h"
#include "onnxopt/Import/InputKind.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "onnxopt/Pass/PipelineParser.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <climits>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <map>
#include <onnx/defs/schema.h>
#include <optional>
#include <thread>

using namespace onnxopt;

#ifdef __has_feature
#define ONNXOPT_HAS_FEATURE(X) __has_feature(X)
#else
#define ONNXOPT_HAS_FEATURE(X) 0
#endif

#ifndef ONNXOPT_VERSION
#define ONNXOPT_VERSION "unknown"
#endif

namespace {

/// One piece of the pipeline and where it came from, so that an error in it
/// can be shown under what the user typed.
struct PipelinePiece {
  /// Pipeline text: `cse,dce` or `freeze-dims{dims=N:1}`.
  std::string Text;
  /// The command-line argument as typed: `--freeze-dims=dims=N:1`.
  std::string Arg;
  /// Maps an offset into Text to a column of Arg: Text[I] is Arg[I + Shift]
  /// for I >= From (the value of a pass flag); for I < From it is Arg[I +
  /// NameShift] (the pass name after the dashes).
  size_t From = 0;
  long Shift = 0, NameShift = 0;

  size_t column(size_t Pos) const {
    long Col = Pos < From ? long(Pos) + NameShift : long(Pos) + Shift;
    return size_t(std::clamp<long>(Col, 0, long(Arg.size())));
  }
};

/// --elide-weights without a value, and the default on a terminal.
constexpr uint64_t DefaultElideAbove = 16;

/// The pipeline --simplify stands for: the simplify pass runs its passes
/// (docs/cli.md lists them) in rounds until nothing changes.
const char *const SimplifyPipeline = "simplify";

struct CommandLine {
  std::string Input;
  std::string Output;
  bool HasOutput = false;
  std::optional<FileFormat> OutputFormat;
  /// Pipeline pieces in command-line order: --pass-pipeline texts and
  /// per-pass flags converted to pipeline syntax.
  std::vector<PipelinePiece> PipelinePieces;
  bool ListPasses = false, Help = false, Version = false;
  bool Verify = true, VerifyEach = true;
  /// --verify=ir|onnx|both: how saving checks the output.
  VerifyWith With = VerifyWith::IR;
  bool PrintIrAfterAll = false;
  std::vector<std::string> PrintIrAfter;
  bool Timing = false, Summary = false;
  /// --fail-on-growth: a pass that adds nodes or Shape ops fails the run.
  bool FailOnGrowth = false;
  /// --verbose: diagnostics in their long form.
  bool Verbose = false;
  /// --external-data[=<file name>]: store tensors as external data.
  bool ForceExternal = false;
  std::string ExternalDataName;
  uint64_t ExternalThreshold = 1024;
  /// --allow-external-data-outside: external data may lie outside the
  /// model's directory.
  bool AllowExternalOutside = false;
  /// --freeze-shape-sets: one static model per ';'-separated shape set;
  /// without sets, one per gear stored in the model.
  bool FreezeFamily = false;
  std::vector<std::string> ShapeSets;
  /// --elide-weights[=N]: print tensors above N elements as a placeholder.
  std::optional<uint64_t> ElideAbove;
  bool NoElide = false;
};

/// The tool's own flags, for typo suggestions.
const char *const ToolFlags[] = {"help",
                                 "version",
                                 "list-passes",
                                 "pass-pipeline",
                                 "output-format",
                                 "verify-each",
                                 "no-verify-each",
                                 "no-verify",
                                 "verify",
                                 "print-ir-after-all",
                                 "print-ir-after",
                                 "timing",
                                 "fail-on-growth",
                                 "summary",
                                 "simplify",
                                 "freeze-shape-sets",
                                 "external-data",
                                 "external-threshold",
                                 "output",
                                 "elide-weights",
                                 "no-elide-weights",
                                 "verbose"};

} // namespace

static void printHelp(llvm::raw_ostream &OS) {
  OS << "OVERVIEW: onnx-opt - run pass pipelines over ONNX models\n\n"
     << "USAGE: onnx-opt [options] <input> [-o <output>]\n\n"
     << "  <input>                  .onnx (binary) or .onnxtxt (text) file; "
        "'-' for stdin (default)\n"
     << "OPTIONS:\n"
     << "  -o <file>                output file; '-' for stdout (default). "
        "The format\n"
     << "                           follows the extension: .onnx binary, "
        ".onnxtxt text\n"
     << "  --output-format=<f>      force 'text' or 'binary' output\n"
     << "  --pass-pipeline=<text>   a pipeline, e.g. 'cse,dce' or "
        "'pass{key=value list=1,2}'\n"
     << "  --<pass>[=<options>]     append one pass (see --list-passes), "
        "e.g. --cse\n"
     << "  --simplify               the default pipeline: infer-shapes, "
        "fold-shapes,\n"
     << "                           constant-fold, canonicalize, "
        "eliminate-identity, cse,\n"
     << "                           dce, unify-dims, in rounds until "
        "nothing changes\n"
     << "                           (the simplify pass; implies --summary)\n"
     << "  --list-passes            list every pass with its options\n"
     << "  --verify-each            verify the IR after every pass "
        "(default)\n"
     << "  --no-verify-each         verify only the input and the output\n"
     << "  --no-verify              skip all verification (IR, checker, "
        "shape inference)\n"
     << "  --verify=ir|onnx|both    how the output's checker and strict "
        "inference verdict\n"
     << "                           is reached: from the IR (default), by "
        "ONNX's functions\n"
     << "                           on the proto, or both (an error if they "
        "disagree)\n"
     << "  --print-ir-after-all     print the model after every pass to "
        "stderr\n"
     << "  --print-ir-after=<pass>  print the model after the named pass(es)\n"
     << "  --timing                 print per-pass wall time and the passes' "
        "statistics to\n"
     << "                           stderr\n"
     << "  --fail-on-growth         fail (writing nothing) when a pass leaves "
        "more nodes or\n"
     << "                           more Shape ops than it found\n"
     << "  --verbose                diagnostics in their long form (what "
        "verification of a\n"
     << "                           model newer than ONNX 1.12 checked and "
        "did not check)\n"
     << "  --summary                print a before/after summary table to "
        "stderr; without -o,\n"
     << "                           print only the table (to stdout) and "
        "write nothing\n"
     << "  --elide-weights[=<n>]    print tensors of more than n elements "
        "(default 16) as\n"
     << "                           <...> (for reading; on by default on a "
        "terminal)\n"
     << "  --no-elide-weights       print every tensor in full\n"
     << "  --external-data[=<name>] store tensors of at least "
        "--external-threshold\n"
     << "                           bytes in a data file beside the output "
        "(default name:\n"
     << "                           <output file name>.data)\n"
     << "  --external-threshold=<n> size threshold in bytes (default 1024)\n"
     << "  --allow-external-data-outside\n"
     << "                           read external data outside the model's "
        "directory\n"
     << "                           (absolute locations, '..', symbolic "
        "links leading out)\n"
     << "  --freeze-shape-sets=<s>  write one static model per shape set "
        "('x[1,3,640,640];\n"
        "                           x:1x3x320x320'), all sharing one "
        "weight file: -o dir/m.onnx\n"
        "                           gives dir/m_1x3x640x640.onnx, ..., and "
        "dir/m.weights.data\n"
        "  --freeze-shape-sets      the same, one model per gear stored in "
        "the model\n"
        "                           (set-dim-range{gears=...})\n"
     << "  --version                print the version\n"
     << "  -h, --help               print this help\n\n"
     << "Shapes are written input[1,3,640,640] or, as trtexec does, "
        "input:1x3x640x640.\n"
     << "Compare two models on ONNX Runtime: utils/onnx-opt-compare a.onnx "
        "b.onnx --shapes ...\n";
}

/// Splits `--name=value` into name and value.
static std::pair<llvm::StringRef, std::optional<llvm::StringRef>>
splitFlag(llvm::StringRef Arg) {
  Arg = Arg.drop_while([](char C) { return C == '-'; });
  size_t Eq = Arg.find('=');
  if (Eq == llvm::StringRef::npos)
    return {Arg, std::nullopt};
  return {Arg.take_front(Eq), Arg.drop_front(Eq + 1)};
}

/// "unknown option '--unfiy-dims'; did you mean '--unify-dims'?"
static std::string unknownFlag(llvm::StringRef Arg, llvm::StringRef Name) {
  std::vector<std::string> Candidates(std::begin(ToolFlags),
                                      std::end(ToolFlags));
  for (const std::unique_ptr<Pass> &P : getRegisteredPasses())
    Candidates.push_back(P->getArgument().str());
  std::string Msg = "unknown option '" + Arg.str() + "'";
  std::string Best = suggestClosest(Name, Candidates);
  if (!Best.empty())
    return Msg + "; did you mean '--" + Best + "'?";
  return Msg + " (see --help)";
}

/// True when \p Arg, given after --freeze-shape-sets with a space, reads
/// as shape sets rather than as the input file or another flag.
static bool looksLikeShapeSets(llvm::StringRef Arg) {
  if (Arg.startswith("-") || llvm::sys::fs::exists(Arg))
    return false;
  llvm::SmallVector<llvm::StringRef, 4> Sets;
  Arg.split(Sets, ';', -1, false);
  for (llvm::StringRef Set : Sets) {
    std::vector<std::unique_ptr<Pass>> Passes;
    PipelineError E;
    if (failed(parsePassPipeline("freeze-dims{shapes=" + Set.trim().str() + "}",
                                 Passes, E)))
      return false;
  }
  return !Sets.empty();
}

/// True when \p Arg reads as options of pass \p PassName (`shapes=x[1]`),
/// given after the flag with a space instead of '='.
static bool looksLikeOptionsOf(llvm::StringRef PassName, llvm::StringRef Arg) {
  if (llvm::sys::fs::exists(Arg))
    return false;
  std::unique_ptr<Pass> P = createPass(PassName);
  llvm::StringRef Key =
      Arg.take_until([](char C) { return C == '=' || C == ' ' || C == '}'; });
  return P && !Key.empty() && P->findOption(Key);
}

static bool parseCommandLine(int Argc, char **Argv, CommandLine &CL,
                             std::string &Error) {
  bool SawInput = false;
  /// The pass flag just before, if it had no value (`--freeze-dims`).
  std::string PassFlagWithoutValue;
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef Arg = Argv[I];
    std::string PrevPassFlag;
    std::swap(PrevPassFlag, PassFlagWithoutValue);
    auto NextValue = [&](llvm::StringRef Flag,
                         std::optional<llvm::StringRef> Inline,
                         std::string &Out) {
      if (Inline) {
        Out = Inline->str();
        return true;
      }
      if (I + 1 >= Argc) {
        Error = ("option '" + Flag + "' needs a value").str();
        return false;
      }
      Out = Argv[++I];
      return true;
    };
    if (Arg == "-" || !Arg.startswith("-")) {
      if (!PrevPassFlag.empty() && looksLikeOptionsOf(PrevPassFlag, Arg)) {
        Error = "'" + Arg.str() + "' looks like options of --" + PrevPassFlag +
                "; write them after '=': --" + PrevPassFlag + "='" + Arg.str() +
                "'";
        return false;
      }
      if (SawInput) {
        Error = "more than one input file: '" + CL.Input + "' and '" +
                Arg.str() + "'";
        return false;
      }
      CL.Input = Arg.str();
      SawInput = true;
      continue;
    }
    if (Arg == "-o" || Arg.startswith("-o=") || Arg.startswith("--output=") ||
        Arg == "--output") {
      auto [Name, Inline] = splitFlag(Arg);
      if (!NextValue(Name, Inline, CL.Output))
        return false;
      CL.HasOutput = true;
      continue;
    }
    if (Arg.startswith("-o") && !Arg.startswith("--")) {
      CL.Output = Arg.drop_front(2).str();
      CL.HasOutput = true;
      continue;
    }
    auto [Name, Inline] = splitFlag(Arg);
    if (Name == "h" || Name == "help") {
      CL.Help = true;
    } else if (Name == "version") {
      CL.Version = true;
    } else if (Name == "list-passes") {
      CL.ListPasses = true;
    } else if (Name == "pass-pipeline") {
      PipelinePiece Piece;
      if (!NextValue(Name, Inline, Piece.Text))
        return false;
      // Shown as typed: `--pass-pipeline=TEXT`, or TEXT alone when it was
      // the next argument.
      Piece.Arg = Inline ? Arg.str() : Piece.Text;
      Piece.Shift = Piece.NameShift =
          Inline ? long(Arg.size()) - long(Piece.Text.size()) : 0;
      CL.PipelinePieces.push_back(std::move(Piece));
    } else if (Name == "simplify") {
      PipelinePiece Piece;
      Piece.Text = SimplifyPipeline;
      Piece.Arg = Arg.str();
      CL.PipelinePieces.push_back(std::move(Piece));
      CL.Summary = true;
    } else if (Name == "output-format") {
      std::string V;
      if (!NextValue(Name, Inline, V))
        return false;
      if (V == "text")
        CL.OutputFormat = FileFormat::Text;
      else if (V == "binary")
        CL.OutputFormat = FileFormat::Binary;
      else {
        Error = "unknown output format '" + V + "' (expected text or binary)";
        return false;
      }
    } else if (Name == "verify-each") {
      CL.VerifyEach = true;
    } else if (Name == "no-verify-each") {
      CL.VerifyEach = false;
    } else if (Name == "verify") {
      std::string V;
      if (!NextValue(Name, Inline, V))
        return false;
      if (V == "ir")
        CL.With = VerifyWith::IR;
      else if (V == "onnx")
        CL.With = VerifyWith::Onnx;
      else if (V == "both")
        CL.With = VerifyWith::Both;
      else {
        Error = "unknown verification '" + V + "' (expected ir, onnx or both)";
        return false;
      }
    } else if (Name == "no-verify") {
      CL.Verify = false;
      CL.VerifyEach = false;
    } else if (Name == "print-ir-after-all") {
      CL.PrintIrAfterAll = true;
    } else if (Name == "print-ir-after") {
      std::string V;
      if (!NextValue(Name, Inline, V))
        return false;
      llvm::SmallVector<llvm::StringRef, 4> Parts;
      llvm::StringRef(V).split(Parts, ',', -1, false);
      for (llvm::StringRef P : Parts)
        CL.PrintIrAfter.push_back(P.trim().str());
    } else if (Name == "timing") {
      CL.Timing = true;
    } else if (Name == "fail-on-growth") {
      CL.FailOnGrowth = true;
    } else if (Name == "verbose" && !Inline) {
      CL.Verbose = true;
    } else if (Name == "summary") {
      CL.Summary = true;
    } else if (Name == "elide-weights") {
      uint64_t N = DefaultElideAbove;
      if (Inline && Inline->getAsInteger(10, N)) {
        Error = "invalid value '" + Inline->str() +
                "' for --elide-weights (expected a number of elements)";
        return false;
      }
      CL.ElideAbove = N;
      CL.NoElide = false;
    } else if (Name == "no-elide-weights") {
      CL.NoElide = true;
      CL.ElideAbove.reset();
    } else if (Name == "freeze-shape-sets") {
      CL.FreezeFamily = true;
      // Without a value the sets are the model's stored gears; a value
      // may also follow after a space.
      std::string V;
      if (Inline)
        V = Inline->str();
      else if (I + 1 < Argc && looksLikeShapeSets(Argv[I + 1]))
        V = Argv[++I];
      else
        continue;
      llvm::SmallVector<llvm::StringRef, 4> Sets;
      llvm::StringRef(V).split(Sets, ';', -1, false);
      for (llvm::StringRef Set : Sets)
        if (!Set.trim().empty())
          CL.ShapeSets.push_back(Set.trim().str());
      if (CL.ShapeSets.empty()) {
        Error = "--freeze-shape-sets= needs at least one shape set (without "
                "'=' it uses the gears stored in the model)";
        return false;
      }
      // Check every set now, before any model is read.
      for (const std::string &Set : CL.ShapeSets) {
        std::vector<std::unique_ptr<Pass>> Passes;
        PipelineError E;
        if (failed(parsePassPipeline("freeze-dims{shapes=" + Set + "}", Passes,
                                     E))) {
          Error = "invalid shape set '" + Set +
                  "' in --freeze-shape-sets: " + E.Message;
          return false;
        }
      }
    } else if (Name == "external-data") {
      CL.ForceExternal = true;
      if (Inline)
        CL.ExternalDataName = Inline->str();
    } else if (Name == "allow-external-data-outside" && !Inline) {
      CL.AllowExternalOutside = true;
    } else if (Name == "external-threshold") {
      std::string V;
      if (!NextValue(Name, Inline, V))
        return false;
      if (llvm::StringRef(V).getAsInteger(10, CL.ExternalThreshold)) {
        Error = "invalid value '" + V + "' for --external-threshold";
        return false;
      }
    } else if (createPass(Name)) {
      // A pass flag: `--cse` or `--freeze-dims='dims=N:1'`.
      PipelinePiece Piece;
      Piece.Text = Name.str();
      Piece.Arg = Arg.str();
      size_t Dashes = Arg.size() - Arg.ltrim('-').size();
      Piece.NameShift = long(Dashes);
      if (Inline && !Inline->empty()) {
        // `--freeze-dims='{dims=N:1}'` means the same: the braces are
        // already there.
        bool Braced = Inline->startswith("{") && Inline->endswith("}");
        Piece.Text += Braced ? Inline->str() : "{" + Inline->str() + "}";
        // Text[Name.size() + 1 + K] is the value's K-th character, which
        // is Arg[Dashes + Name.size() + 1 + K] (+1 with the braces given).
        Piece.From = Name.size() + 1;
        Piece.Shift = long(Dashes) + (Braced ? 1 : 0);
      } else {
        Piece.From = Piece.Text.size() + 1;
        PassFlagWithoutValue = Name.str();
      }
      CL.PipelinePieces.push_back(std::move(Piece));
    } else {
      Error = unknownFlag(Arg, Name);
      return false;
    }
  }
  if (!SawInput)
    CL.Input = "-";
  if (!CL.HasOutput)
    CL.Output = "-";
  return true;
}

static FileFormat outputFormat(const CommandLine &CL) {
  if (CL.OutputFormat)
    return *CL.OutputFormat;
  if (CL.Output == "-")
    return FileFormat::Text;
  return guessFormatFromPath(CL.Output);
}

static ImportOptions importOptions(const CommandLine &CL) {
  ImportOptions IO;
  IO.AllowExternalDataOutside = CL.AllowExternalOutside;
  return IO;
}

/// "x[1,3,640,640],y:2" -> "1x3x640x640_2": the file-name tag of a set
/// (already checked to parse).
static std::string shapeSetTag(llvm::StringRef Set) {
  std::string Tag;
  for (const std::string &Item : splitOptionList(Set)) {
    ShapeSpec S;
    std::string Ignored;
    if (!parseOptionValue(Item, S, Ignored))
      continue;
    if (!Tag.empty())
      Tag += '_';
    for (size_t I = 0; I < S.Dims.size(); ++I)
      Tag += (I ? "x" : "") + (S.Dims[I] == "?" ? std::string("d") : S.Dims[I]);
  }
  return Tag;
}

/// The shape sets of the family: the given ones, else the gears stored in
/// \p M (set-dim-range{gears=...}). Says which it uses when the model
/// stores gears.
static LogicalResult chooseShapeSets(const CommandLine &CL, const Model &M,
                                     std::vector<std::string> &Sets,
                                     DiagnosticEngine &Diags) {
  DimGears Gears;
  std::string Err;
  if (!getDimGears(M, Gears, Err))
    return emitError(Diags) << "--freeze-shape-sets: cannot read the stored "
                               "gears: "
                            << Err;
  if (!CL.ShapeSets.empty()) {
    Sets = CL.ShapeSets;
    if (!Gears.empty())
      emitRemark(Diags) << "--freeze-shape-sets: the given shape sets win "
                           "over the model's "
                        << Gears.size() << " stored gear(s) "
                        << printDimGears(Gears)
                        << "; the frozen models do not keep the gears";
    return success();
  }
  if (Gears.empty())
    return emitError(Diags)
           << "--freeze-shape-sets without sets freezes the model at its "
              "stored gears, and the model stores none: give sets "
              "(--freeze-shape-sets='x[1,3,640,640];x[2,3,320,480]') or "
              "store gears first (set-dim-range{gears=...})";
  for (const DimGear &Gear : Gears)
    Sets.push_back(printDimGear(Gear));
  emitRemark(Diags) << "--freeze-shape-sets: freezing at the model's "
                    << Gears.size() << " stored gear(s) "
                    << printDimGears(Gears);
  return success();
}

/// Writes one frozen model per shape set beside -o, all referencing one
/// weight file: the model (after the user's pipeline) is first saved with
/// external data as a base, then each set reloads the base, runs
/// freeze-dims and is saved beside it, which keeps the references. On any
/// error everything written is removed.
static int writeFrozenFamily(const CommandLine &CL, const Model &M,
                             DiagnosticEngine &Diags) {
  llvm::StringRef Out = CL.Output;
  llvm::SmallString<256> Dir(llvm::sys::path::parent_path(Out));
  std::string Stem = llvm::sys::path::stem(Out).str();
  auto InDir = [&](const std::string &Name) {
    llvm::SmallString<256> P(Dir);
    llvm::sys::path::append(P, Name);
    return std::string(P.str());
  };
  std::vector<std::string> Sets;
  if (failed(chooseShapeSets(CL, M, Sets, Diags)))
    return 1;
  std::vector<std::string> Written;
  auto Cleanup = [&] {
    for (const std::string &F : Written)
      llvm::sys::fs::remove(F);
  };
  std::string Base = InDir("." + Stem + ".base.onnx");
  ExportOptions BaseOpts;
  BaseOpts.Verify = false; // each member is verified when it is written
  BaseOpts.ForceExternal = true;
  BaseOpts.ExternalThreshold = CL.ExternalThreshold;
  BaseOpts.ExternalDataName = Stem + ".weights.data";
  if (failed(saveModel(M, Base, FileFormat::Binary, Diags, BaseOpts)))
    return 1;
  Written.push_back(Base);
  Written.push_back(InDir(BaseOpts.ExternalDataName));
  for (const std::string &Set : Sets) {
    std::string Error;
    PassManager Freeze;
    if (failed(parsePassPipeline("freeze-dims{shapes=" + Set + "}", Freeze,
                                 Error))) {
      llvm::errs() << "onnx-opt: error: invalid shape set '" << Set
                   << "': " << Error << "\n";
      Cleanup();
      return 1;
    }
    std::unique_ptr<Model> Member = loadModel(Base, Diags, importOptions(CL));
    std::string Path = InDir(Stem + "_" + shapeSetTag(Set) + ".onnx");
    ExportOptions EO;
    EO.Verify = CL.Verify;
    EO.With = CL.With;
    EO.ExternalThreshold = CL.ExternalThreshold;
    // The family stands for the gears: a member is one shape, and
    // freeze-dims would otherwise drop every other gear with a remark (or
    // refuse a given set that is no gear).
    if (Member && !setDimGears(*Member, {}, Error)) {
      emitError(Diags) << "--freeze-shape-sets: " << Error;
      Member.reset();
    }
    if (!Member || failed(Freeze.run(*Member, Diags)) ||
        failed(saveModel(*Member, Path, FileFormat::Binary, Diags, EO))) {
      emitNote(Diags) << "while freezing shape set '" << Set << "'";
      Cleanup();
      return 1;
    }
    Written.push_back(Path);
    llvm::errs() << "wrote " << Path << "\n";
  }
  llvm::sys::fs::remove(Base);
  return 0;
}

std::unique_ptr<Model> onnxopt::loadInput(llvm::StringRef Path,
                                          DiagnosticEngine &Diags,
                                          const ImportOptions &Opts) {
  switch (classifyInput(Path, Diags)) {
  case InputKind::Rejected:
    return nullptr;
  case InputKind::Text: {
    auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
    if (!Buf) {
      emitError(Diags) << "cannot open '" << Path
                       << "': " << Buf.getError().message();
      return nullptr;
    }
    std::unique_ptr<Model> M = parseTextModel((*Buf)->getBuffer(), Diags);
    if (M)
      M->BaseDir = llvm::sys::path::parent_path(Path).str();
    return M;
  }
  case InputKind::Binary:
    break;
  }
  std::unique_ptr<Model> M = loadModel(Path, Diags, Opts);
  if (!M && guessFormatFromPath(Path) == FileFormat::Binary)
    explainMalformedInput(Path, Diags);
  return M;
}

namespace {

/// Prints diagnostics as the engine would, but only the first few of each
/// kind (same severity and message once quoted names are blanked): one
/// broken pattern in a 10,000-node model must not print 10,000 lines. The
/// destructor says how many were left out.
class DiagnosticCap {
public:
  static constexpr unsigned Shown = 5;

  explicit DiagnosticCap(DiagnosticEngine &Diags) : Diags(Diags) {
    Diags.setHandler([this](const Diagnostic &D) { handle(D); });
  }
  ~DiagnosticCap() {
    for (const auto &[Key, K] : Kinds) {
      if (K.Count <= Shown)
        continue;
      Diagnostic Note;
      Note.Sev = Severity::Note;
      Note.Message =
          "and " + std::to_string(K.Count - Shown) + " more like: " + K.Example;
      Diags.print(llvm::errs(), Note);
    }
  }

private:
  struct Kind {
    unsigned Count = 0;
    std::string Example;
  };
  DiagnosticEngine &Diags;
  std::map<std::string, Kind> Kinds;

  /// `node 'a' (Relu): operand 0 'b' ...` -> `node '' (Relu): operand 0 ''`.
  static std::string kindOf(const Diagnostic &D) {
    std::string Key = std::to_string(int(D.Sev)) + ":";
    bool InQuote = false;
    for (char C : D.Location + "|" + D.Message) {
      if (C == '\'')
        InQuote = !InQuote;
      else if (InQuote || llvm::isDigit(C))
        continue;
      Key += C;
    }
    return Key;
  }

public:
  /// Keeps diagnostics back instead of printing them, until release().
  void hold() { Holding = true; }
  /// Stops holding; hands back what was held (unprinted).
  std::vector<Diagnostic> release() {
    Holding = false;
    return std::move(Held);
  }
  void handle(const Diagnostic &D) {
    if (Holding) {
      Held.push_back(D);
      return;
    }
    // Notes explain the diagnostic before them; they are never capped.
    if (D.Sev != Severity::Note) {
      Kind &K = Kinds[kindOf(D)];
      if (++K.Count > Shown) {
        if (K.Example.empty())
          K.Example = D.Message;
        Suppressing = true;
        return;
      }
      Suppressing = false;
    } else if (Suppressing) {
      return;
    }
    Diags.print(llvm::errs(), D);
  }

private:
  bool Suppressing = false;
  bool Holding = false;
  std::vector<Diagnostic> Held;
};

/// The errors ONNX's checker and strict inference report for the input
/// file as it is (reloaded: the IR has changed since). Only those: a node
/// that our own validation refuses (a zero stride, an attribute of the wrong
/// kind, mismatched element types) cannot run, and stays an error even when
/// the input has it; such an input gets no leniency at all, and ONNX's
/// checker is never called on it (it crashes on some of them).
std::vector<std::string> inputVerifierErrors(llvm::StringRef Path,
                                             const ImportOptions &Opts,
                                             VerifyWith With) {
  std::vector<std::string> Errors;
  DiagnosticEngine Quiet;
  Quiet.setHandler([&](const Diagnostic &D) {
    if (D.Sev == Severity::Error)
      Errors.push_back(D.Message);
  });
  std::unique_ptr<Model> In = loadInput(Path, Quiet, Opts);
  if (!In || failed(validateModelNodes(*In, Quiet)))
    return {};
  Errors.clear();
  // The same verification as the output's, so that messages compare.
  (void)verifyExport(*In, With, Quiet);
  llvm::erase_if(Errors, [](const std::string &E) {
    llvm::StringRef S(E);
    return !S.startswith("onnx checker: ") &&
           !S.startswith("strict shape inference: ");
  });
  return Errors;
}

/// Saves the result. When the output fails ONNX's checker or strict
/// inference only in ways the input itself already fails (Debian's
/// test_PixelShuffle: an int64 Constant at opset 6), the pipeline did not
/// cause it: one warning says what the input fails, and the result is
/// written with the IR verified. Failures the pipeline introduced stay
/// errors.
LogicalResult saveResult(const Model &M, const CommandLine &CL,
                         FileFormat Format, const ExportOptions &EO,
                         DiagnosticEngine &Diags, DiagnosticCap &Cap) {
  bool CanCompare = EO.Verify && CL.Input != "-";
  if (CanCompare)
    Cap.hold();
  LogicalResult R = saveModel(M, CL.Output, Format, Diags, EO);
  if (!CanCompare)
    return R;
  std::vector<Diagnostic> Held = Cap.release();
  auto Replay = [&] {
    for (const Diagnostic &D : Held)
      Cap.handle(D);
  };
  if (succeeded(R)) {
    Replay();
    return R;
  }
  std::vector<std::string> InputErrors =
      inputVerifierErrors(CL.Input, importOptions(CL), EO.With);
  bool AllInherited = !InputErrors.empty();
  for (const Diagnostic &D : Held)
    if (D.Sev == Severity::Error && !llvm::is_contained(InputErrors, D.Message))
      AllInherited = false;
  if (!AllInherited) {
    Replay();
    return R;
  }
  std::string OutName = Diags.getFileName().str();
  Diags.setFileName(CL.Input);
  emitWarning(Diags)
      << "the input itself fails ONNX's verification (" << InputErrors.front()
      << (InputErrors.size() > 1
              ? "; and " + std::to_string(InputErrors.size() - 1) + " more"
              : std::string())
      << "); the pipeline added no failure, so the result is "
         "written anyway";
  Diags.setFileName(OutName);
  // The IR verifier still runs: only ONNX's own checks are skipped.
  if (failed(verifyModel(M, Diags)))
    return failure();
  ExportOptions Lenient = EO;
  Lenient.Verify = false;
  return saveModel(M, CL.Output, Format, Diags, Lenient);
}

} // namespace

/// Some exporters and quantizers append nodes at the end and ONNX Runtime
/// runs such models: sort them with one remark instead of one error per
/// node. A cycle is still an error (topo-sort reports it).
/// \p Order is what the input's verification found (VerifyOptions::Order).
static LogicalResult
sortInputIfNeeded(Model &M, DiagnosticEngine &Diags,
                  const VerifyOptions::OrderReport &Order) {
  size_t Late = Order.LateNodes;
  if (!Late)
    return success();
  std::unique_ptr<Pass> Sort = createPass("topo-sort");
  assert(Sort && "topo-sort is a built-in pass");
  PassManagerOptions Opts;
  // The input is verified after it is sorted, as any input is.
  Opts.VerifyEach = false;
  PassManager PM(Opts);
  PM.addPass(std::move(Sort));
  if (failed(PM.run(M, Diags)))
    return failure();
  emitRemark(Diags) << "the input is not in topological order (" << Late
                    << " node(s) read values produced later); sorted it";
  return success();
}

LogicalResult onnxopt::prepareInput(Model &M, DiagnosticEngine &Diags,
                                    bool Verify, bool *InOrder) {
  // The input may be out of order: topo-sort must be able to repair it.
  // The verification finds what is late; without it (Verify off) the same
  // walk runs only for that.
  VerifyOptions::OrderReport Order;
  VerifyOptions VO;
  VO.RequireTopologicalOrder = false;
  VO.Order = &Order;
  DiagnosticEngine Quiet;
  Quiet.setHandler(nullptr);
  if (failed(verifyModel(M, Verify ? Diags : Quiet, VO)) && Verify)
    return failure();
  if (InOrder)
    *InOrder = !Order.AnyLateUse;
  return sortInputIfNeeded(M, Diags, Order);
}

const char *onnxopt::getSimplifyPipeline() { return SimplifyPipeline; }

/// The summary of the result, with the conditions its input dims must meet.
static ModelSummary summarizeAfter(Model &M) {
  ModelSummary S = summarizeModel(M);
  addConstraints(M, S);
  return S;
}

/// After the passes, before saving: what the passes freed (the nodes dce
/// erased, the analyses) lies in small holes all over malloc's heap, which
/// the save's larger blocks and its second thread do not reuse, so the
/// save's memory came on top of the passes' peak (100k nodes: 141 MB at the
/// save against 136 in fold-shapes). Giving the free pages back to the
/// system keeps the save below that peak.
static void returnFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

/// The process is about to exit: tearing down a large IR only costs time (as
/// LLVM tools do with -disable-free). Sanitizer builds free it, so that
/// LeakSanitizer reports real leaks and ASan checks the destructors.
static void releaseAtExit(std::unique_ptr<Model> &M) {
#if defined(__SANITIZE_ADDRESS__) || ONNXOPT_HAS_FEATURE(address_sanitizer)
  M.reset();
#else
  (void)M.release();
#endif
}

namespace {
/// ONNX registers its schemas (about 2,000 of them) on the first lookup,
/// which takes 15-20 ms. The first lookup comes after the load, in the
/// passes or in the save's checks, where both cores are busy; the load uses
/// one. So the registry is built on the other core while the input loads
/// (the registry's construction is a function-local static: a lookup on the
/// main thread meanwhile waits for it instead of building it twice).
class SchemaWarmup {
public:
  SchemaWarmup()
      : Thread(
            [] { (void)onnx::OpSchemaRegistry::Schema("Identity", 1, ""); }) {}
  ~SchemaWarmup() { Thread.join(); }

private:
  std::thread Thread;
};
} // namespace

/// What --timing prints: the wall-time table, then the statistics the
/// passes declare.
static void printTimingReport(const PassManager &PM, llvm::raw_ostream &OS) {
  PM.printTiming(OS);
  PM.printGraphSizes(OS);
  PM.printStatistics(OS);
}

static int runTool(const CommandLine &CL) {
  llvm::raw_ostream &Err = llvm::errs();
  if (CL.FreezeFamily && (!CL.HasOutput || CL.Output == "-" ||
                          outputFormat(CL) != FileFormat::Binary)) {
    Err << "onnx-opt: error: --freeze-shape-sets needs a binary output file "
           "(-o dir/model.onnx) to name the family after\n";
    return 1;
  }
  // Elided text is for reading: only on stdout, and by default only when
  // that is a terminal (a pipe gets text that parses back).
  uint64_t ElideAbove = 0;
  bool ToStdoutText = CL.Output == "-" && outputFormat(CL) == FileFormat::Text;
  if (CL.ElideAbove) {
    if (!ToStdoutText) {
      Err << "onnx-opt: error: --elide-weights prints for reading and the "
             "text does not parse back; it needs the text on stdout (-o -)\n";
      return 1;
    }
    ElideAbove = *CL.ElideAbove;
  } else if (!CL.NoElide && ToStdoutText && llvm::outs().is_displayed()) {
    ElideAbove = DefaultElideAbove;
  }
  if (CL.ForceExternal &&
      (CL.Output == "-" || outputFormat(CL) != FileFormat::Binary)) {
    Err << "onnx-opt: error: --external-data needs a binary output file (-o "
           "model.onnx)\n";
    return 1;
  }
  PassManagerOptions PMOpts;
  PMOpts.VerifyEach = CL.VerifyEach;
  PMOpts.PrintIrAfterAll = CL.PrintIrAfterAll;
  PMOpts.PrintIrAfter = CL.PrintIrAfter;
  PMOpts.Timing = CL.Timing;
  PMOpts.Measure = CL.Timing;
  PMOpts.FailOnGrowth = CL.FailOnGrowth;
  PMOpts.IrPrinter = [](const Model &M, llvm::raw_ostream &OS) {
    printModel(M, OS);
  };
  PassManager PM(PMOpts);
  for (const PipelinePiece &Piece : CL.PipelinePieces) {
    std::vector<std::unique_ptr<Pass>> Passes;
    PipelineError E;
    if (failed(parsePassPipeline(Piece.Text, Passes, E))) {
      // The message, then the argument as typed with a caret under the
      // problem (as clang and mlir-opt show source locations).
      Err << "onnx-opt: error: " << E.Message << "\n  " << Piece.Arg << "\n  ";
      Err.indent(Piece.column(E.Pos)) << "^\n";
      return 1;
    }
    for (std::unique_ptr<Pass> &P : Passes)
      PM.addPass(std::move(P));
  }
  for (const std::string &Name : CL.PrintIrAfter) {
    if (!createPass(Name)) {
      std::string Best = suggestPassName(Name);
      Err << "onnx-opt: error: --print-ir-after names unknown pass '" << Name
          << "'" << (Best.empty() ? "" : "; did you mean '" + Best + "'?")
          << "\n";
      return 1;
    }
  }
  // `onnx-opt m.onnx --summary` looks without writing: the table goes to
  // stdout and no model is written (the text dump needs `-o -`).
  bool LookOnly = CL.Summary && !CL.HasOutput && !CL.FreezeFamily;

  DiagnosticEngine Diags;
  Diags.setFileName(CL.Input == "-" ? "<stdin>" : CL.Input);
  Diags.setVerbose(CL.Verbose);
  DiagnosticCap Cap(Diags);
  auto Start = std::chrono::steady_clock::now();
  auto LapMs = [&Start] {
    auto Now = std::chrono::steady_clock::now();
    double Ms = std::chrono::duration<double, std::milli>(Now - Start).count();
    Start = Now;
    return Ms;
  };
  std::optional<SchemaWarmup> Warmup;
  Warmup.emplace();
  std::unique_ptr<Model> M = loadInput(CL.Input, Diags, importOptions(CL));
  Warmup.reset();
  if (!M)
    return 1;
  PM.recordTiming("(load)", LapMs());
  // Whether the input verdict also holds with topological order required.
  bool InOrder = true;
  if (failed(prepareInput(*M, Diags, CL.Verify, &InOrder)))
    return 1;
  PM.recordTiming(CL.Verify ? "(verify input)" : "(order check)", LapMs());
  std::optional<ModelSummary> Before;
  if (CL.Summary)
    Before = summarizeModel(*M);

  if (failed(PM.run(*M, Diags)))
    return 1;
  returnFreedMemory();
  LapMs();

  if (CL.FreezeFamily) {
    int RC = writeFrozenFamily(CL, *M, Diags);
    if (CL.Timing)
      printTimingReport(PM, Err);
    return RC;
  }

  if (LookOnly) {
    // Nothing is written, so the output checks (ONNX's checker, strict
    // inference) do not run; --verify-each still checked the IR.
    if (CL.Timing)
      printTimingReport(PM, Err);
    printSummaryTable(llvm::outs(), *Before, summarizeAfter(*M));
    releaseAtExit(M);
    return 0;
  }

  ExportOptions EO;
  EO.Verify = CL.Verify;
  EO.With = CL.With;
  // The pass manager verified the IR (with topological order) after the
  // last pass; the input check alone did not require order.
  // Without passes, an input that was verified and found in order is the
  // IR being saved: verifying it again would only repeat the same walk.
  EO.VerifyIR = PM.size() > 0 ? !CL.VerifyEach : !(CL.Verify && InOrder);
  EO.ForceExternal = CL.ForceExternal;
  EO.ExternalDataName = CL.ExternalDataName;
  EO.ExternalThreshold = CL.ExternalThreshold;
  if (CL.HasOutput && CL.Output != "-")
    Diags.setFileName(CL.Output);
  if (ElideAbove) {
    // What saveModel checks, then the elided text.
    if (CL.Verify && failed(verifyExport(*M, CL.With, Diags)))
      return 1;
    TextPrintOptions TPO;
    TPO.ElideTensorsAbove = ElideAbove;
    printModel(*M, llvm::outs(), TPO);
    llvm::outs().flush();
    PM.recordTiming("(verify and print)", LapMs());
    if (CL.Timing)
      printTimingReport(PM, Err);
    if (Before)
      printSummaryTable(Err, *Before, summarizeAfter(*M));
    releaseAtExit(M);
    return 0;
  }
  if (failed(saveResult(*M, CL, outputFormat(CL), EO, Diags, Cap)))
    return 1;
  PM.recordTiming(CL.Verify ? "(verify and save)" : "(save)", LapMs());
  if (CL.Timing)
    printTimingReport(PM, Err);
  if (Before)
    printSummaryTable(Err, *Before, summarizeAfter(*M));
  releaseAtExit(M);
  return 0;
}

/// The passes allocate and free an IR's worth of small objects. By default
/// glibc gives the top of its heap back to the system whenever enough of it
/// is free, and maps each large block (an analysis' table) on its own: the
/// next allocations then fault fresh, kernel-zeroed pages in again (1M
/// nodes: 390k page faults, a tenth of the run). The tool keeps what it
/// frees for reuse instead, all on the heap, and gives the free pages back
/// once, before saving (returnFreedMemory). Files are mapped with mmap
/// directly, which this does not change.
static void keepFreedMemory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int onnxopt::onnxOptMain(int Argc, char **Argv) {
  keepFreedMemory();
  registerAllPasses();
  CommandLine CL;
  std::string Error;
  if (!parseCommandLine(Argc, Argv, CL, Error)) {
    llvm::errs() << "onnx-opt: error: " << Error << "\n";
    return 1;
  }
  if (CL.Help) {
    printHelp(llvm::outs());
    return 0;
  }
  if (CL.Version) {
    llvm::outs() << "onnx-opt version " << ONNXOPT_VERSION
                 << " (ONNX 1.12 schemas, LLVM 14)\n";
    return 0;
  }
  if (CL.ListPasses) {
    printRegisteredPasses(llvm::outs());
    return 0;
  }
  return runTool(CL);
}
