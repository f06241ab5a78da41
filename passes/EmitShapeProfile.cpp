//===- EmitShapeProfile.cpp - Write shape profiles for deployment tools ---===//
//
// Before:  (float[N,3,H,W] input) with stored ranges
//          N=1:16:1, H=256:1024:640, W=256:1024:640
// After --emit-shape-profile (the model is unchanged), on stdout:
//          --minShapes=input:1x3x256x256 --optShapes=input:1x3x640x640
//          --maxShapes=input:16x3x1024x1024
//
// Writes the shapes the model must serve, from the ranges or the gears
// set-dim-range stored, in the syntax of the tool that builds the engine
// (format=):
//   trtexec     --minShapes=input:1x3x256x256 --optShapes=... --maxShapes=...
//   polygraphy  --trt-min-shapes input:[1,3,256,256] --trt-opt-shapes ...
//   openvino    --input "input[1..16,3,256..1024,256..1024]"   (ovc, mo)
//   atc         --input_shape="input:1~16,3,256~1024,256~1024"
//   rknn        dynamic_input=[[[1,3,256,256]],[[1,3,640,640]],...]
// From gears (set-dim-range{gears=...}, or shape-sets= given here):
//   atc         --input_shape="input:-1,3,640,640" --dynamic_batch_size="1,4"
//               when only dim 0 varies; --dynamic_image_size="h,w;h,w" when
//               only dims 2 and 3 of NCHW inputs vary; otherwise
//               --dynamic_dims="1,640,640;4,320,320" --input_format=ND
//   rknn        dynamic_input=[[[1,3,640,640]],[[4,3,320,320]]]
// use=ranges|gears picks one where both are stored; by default a format
// takes what it is built for (atc and rknn gears, the others ranges) or the
// one stored.
//
// What a format cannot say is refused, naming the rule: gears for trtexec,
// polygraphy and openvino (each takes one min..max box per input, and the
// box around the gears holds shapes nobody checked); ATC's limits (2 to 100
// gears, at most 4 varying dims with --dynamic_dims). Ranges for rknn
// become the gears min, opt and max (each inside the checked ranges).
// A range without opt uses its max. The line goes to stdout or, with
// file=path, into that file; with the model also on stdout, use -o.
//
// Refused besides: a symbolic dim without a stored range (ranges), an
// unknown dim or an unknown rank; a gear that misses an input, contradicts
// a static dim, leaves a stored range or breaks a stored relation.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace onnxopt;

namespace {

/// One input's dims at the three points of a range profile (a static dim
/// is the same at all three).
struct InputProfile {
  std::string Name;
  std::vector<int64_t> Min, Opt, Max;
  /// Which dims are not static.
  std::vector<bool> Dynamic;
  bool isDynamic() const { return llvm::is_contained(Dynamic, true); }
};

/// Gears written out: [gear][input][dim], every input in graph order.
using GearShapes = std::vector<std::vector<std::vector<int64_t>>>;

bool checkShapeSets(llvm::StringRef Text, std::string &Error) {
  DimGears Gears;
  return parseDimGears(Text, Gears, Error);
}

std::string quoteName(llvm::StringRef Name) {
  if (Name.find_first_of(":, ") == llvm::StringRef::npos)
    return Name.str();
  return "'" + Name.str() + "'";
}

std::string join(llvm::ArrayRef<int64_t> Dims, llvm::StringRef Sep) {
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? Sep.str() : "") + std::to_string(Dims[I]);
  return S;
}

/// ATC's limit on the gears of --dynamic_dims, --dynamic_batch_size and
/// --dynamic_image_size (CANN's ATC reference: more than 1, at most 100).
constexpr size_t AtcMinGears = 2, AtcMaxGears = 100;
/// CANN's rule for --dynamic_dims: at most 4 dims set per gear.
constexpr unsigned AtcMaxDynamicDims = 4;

class EmitShapeProfilePass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "emit-shape-profile"; }
  llvm::StringRef getDescription() const override {
    return "write the inputs' shape profile from the stored dim ranges or "
           "gears for trtexec, polygraphy, Ascend ATC, RKNN-Toolkit2 or "
           "OpenVINO";
  }
  LogicalResult run(Model &M, PassContext &Ctx) override;

private:
  LogicalResult profileInput(const Value &In, const DimRangeMap &Ranges,
                             bool NeedRanges, std::vector<InputProfile> &Out,
                             DiagnosticEngine &Diags);
  LogicalResult chooseSource(const DimRangeMap &Ranges, const DimGears &Stored,
                             bool &UseGears, DiagnosticEngine &Diags) const;
  LogicalResult resolveGears(const Model &M, const DimGears &Given,
                             const DimRangeMap &Ranges,
                             const std::vector<InputProfile> &Inputs,
                             GearShapes &Out, DiagnosticEngine &Diags) const;

  std::string formatRanges(const std::vector<InputProfile> &Inputs) const;
  LogicalResult formatAtcGears(const std::vector<InputProfile> &Inputs,
                               const GearShapes &Gears, std::string &Line,
                               DiagnosticEngine &Diags) const;

  Option<std::string> File{*this, "file",
                           "where to write the profile ('-': stdout)", "-"};
  Option<std::string> Format{
      *this, "format",
      "the tool's syntax: trtexec, polygraphy, atc, rknn or openvino",
      "trtexec", oneOf({"trtexec", "polygraphy", "atc", "rknn", "openvino"})};
  Option<std::string> Use{
      *this, "use",
      "ranges or gears where both are stored (auto: gears for atc and rknn, "
      "ranges for the others, or the one stored)",
      "auto", oneOf({"auto", "ranges", "gears"})};
  Option<std::string> ShapeSets{
      *this, "shape-sets",
      "gears given here instead of the stored ones, separated by ';', "
      "shapes by ',': input[1,3,640,640];input[4,3,320,320]",
      "", checkedBy(checkShapeSets)};
};

LogicalResult EmitShapeProfilePass::profileInput(const Value &In,
                                                 const DimRangeMap &Ranges,
                                                 bool NeedRanges,
                                                 std::vector<InputProfile> &Out,
                                                 DiagnosticEngine &Diags) {
  const Type &T = In.getType();
  if (!T.isTensor())
    return success();
  if (!T.hasShape())
    return emitError(Diags, In) << "the input has an unknown rank";
  InputProfile P;
  P.Name = In.getName().str();
  for (unsigned I = 0; I < T.getRank(); ++I) {
    const Dim &D = T.getDims()[I];
    P.Dynamic.push_back(!D.isKnown());
    if (D.isKnown() || !NeedRanges) {
      // Gears give the values of the dims that are not static.
      P.Min.push_back(D.getValue());
      P.Opt.push_back(D.getValue());
      P.Max.push_back(D.getValue());
      continue;
    }
    if (D.isUnknown())
      return emitError(Diags, In)
             << "dim " << I
             << " of the input is unknown; a profile needs a symbol with a "
                "range there";
    auto It = Ranges.find(D.getSymbol().str());
    if (It == Ranges.end())
      return emitError(Diags, In)
             << "dim " << I << " of the input ('" << D.getSymbol()
             << "') has no range; set one with "
             << "set-dim-range{ranges=" << D.getSymbol() << ":min:max:opt}";
    P.Min.push_back(It->second.Min);
    P.Opt.push_back(It->second.getOpt());
    P.Max.push_back(It->second.Max);
  }
  Out.push_back(std::move(P));
  return success();
}

/// The profile's min, opt and max points must each satisfy the relations
/// stored with the ranges (W = H, H a multiple of 32): an engine built for
/// a profile is run at those shapes.
static LogicalResult checkRelations(Model &M, const DimRangeMap &Ranges,
                                    DiagnosticEngine &Diags) {
  DimRelations Rels;
  std::string Error;
  if (!getDimRelations(M, Rels, Error))
    return emitError(Diags) << Error;
  const char *Names[] = {"min", "opt", "max"};
  for (int Point = 0; Point < 3; ++Point) {
    std::map<std::string, int64_t> Values;
    for (const auto &[Sym, R] : Ranges)
      Values[Sym] = Point == 0 ? R.Min : Point == 1 ? R.getOpt() : R.Max;
    for (const DimRelation &R : Rels) {
      if (!R.isDecidedBy(Values) || R.holds(Values))
        continue;
      return emitError(Diags) << "the profile's " << Names[Point]
                              << " shapes break the stored relation "
                              << printDimRelationAt(R, Values)
                              << "; set ranges that keep it (set-dim-range)";
    }
  }
  return success();
}

/// Ranges or gears: shape-sets= are gears; use= decides where it is given;
/// otherwise the one stored, or with both what the format is built for.
LogicalResult
EmitShapeProfilePass::chooseSource(const DimRangeMap &Ranges,
                                   const DimGears &Stored, bool &UseGears,
                                   DiagnosticEngine &Diags) const {
  bool Inline = !ShapeSets.getValue().empty();
  if (Inline && Use.getValue() == "ranges")
    return emitError(Diags) << "shape-sets= are gears; use=ranges "
                               "contradicts them";
  if (Inline || Use.getValue() == "gears") {
    UseGears = true;
    if (!Inline && Stored.empty())
      return emitError(Diags) << "no gears are stored; set them with "
                                 "set-dim-range{gears=...} or give shape-sets=";
    return success();
  }
  if (Use.getValue() == "ranges" || Stored.empty()) {
    UseGears = false;
    return success();
  }
  bool GearFormat = Format.getValue() == "atc" || Format.getValue() == "rknn";
  UseGears = Ranges.empty() || GearFormat;
  return success();
}

/// Each gear against the model, the ranges and the relations, written out
/// for every input in graph order (static inputs with their shape).
LogicalResult EmitShapeProfilePass::resolveGears(
    const Model &M, const DimGears &Given, const DimRangeMap &Ranges,
    const std::vector<InputProfile> &Inputs, GearShapes &Out,
    DiagnosticEngine &Diags) const {
  DimRelations Rels;
  std::string Error;
  if (!getDimRelations(M, Rels, Error))
    return emitError(Diags) << Error;
  DimGears Seen;
  for (const DimGear &Gear : Given) {
    DimGear Normalized;
    std::map<std::string, int64_t> Values;
    if (!resolveDimGear(M, Gear, Normalized, Values, Error))
      return emitError(Diags) << Error;
    std::string Text = printDimGear(Normalized);
    if (llvm::is_contained(Seen, Normalized))
      return emitError(Diags) << "gear '" << Text << "' is given twice";
    Seen.push_back(Normalized);
    for (const auto &[Sym, V] : Values) {
      auto It = Ranges.find(Sym);
      if (It != Ranges.end() && !It->second.contains(V))
        return emitError(Diags)
               << "gear '" << Text << "' gives '" << Sym << "' the value " << V
               << ", outside its range " << printDimRange(It->second);
    }
    for (const DimRelation &R : Rels)
      if (R.isDecidedBy(Values) && !R.holds(Values))
        return emitError(Diags) << "gear '" << Text << "' breaks the stored "
                                << "relation " << printDimRelationAt(R, Values);
    std::map<std::string, const GearShape *> ByInput;
    for (const GearShape &S : Normalized)
      ByInput[S.Input] = &S;
    std::vector<std::vector<int64_t>> Shapes;
    for (const InputProfile &P : Inputs) {
      auto It = ByInput.find(P.Name);
      Shapes.push_back(It == ByInput.end() ? P.Min : It->second->Dims);
    }
    Out.push_back(std::move(Shapes));
  }
  return success();
}

/// min, opt and max as gears, without repeats: each point lies inside the
/// ranges set-dim-range checked, so the model runs there.
static GearShapes rangePoints(const std::vector<InputProfile> &Inputs) {
  GearShapes Points;
  for (auto Field :
       {&InputProfile::Min, &InputProfile::Opt, &InputProfile::Max}) {
    std::vector<std::vector<int64_t>> Shapes;
    for (const InputProfile &P : Inputs)
      Shapes.push_back(P.*Field);
    if (!llvm::is_contained(Points, Shapes))
      Points.push_back(std::move(Shapes));
  }
  return Points;
}

/// RKNN-Toolkit2's rknn.config(dynamic_input=...): one list per gear, one
/// shape per input in input order.
static std::string formatRknn(const GearShapes &Gears) {
  std::string Line = "dynamic_input=[";
  for (size_t G = 0; G < Gears.size(); ++G) {
    Line += G ? ",[" : "[";
    for (size_t I = 0; I < Gears[G].size(); ++I)
      Line += (I ? ",[" : "[") + join(Gears[G][I], ",") + "]";
    Line += "]";
  }
  return Line + "]\n";
}

/// OpenVINO's ovc/mo --input with bounded dims: `x[1..16,3,256..1024]`,
/// every input (naming a subset would cut the model in mo).
static std::string formatOpenVino(const std::vector<InputProfile> &Inputs) {
  std::string Line = "--input \"";
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const InputProfile &P = Inputs[I];
    Line += (I ? "," : "") + P.Name + "[";
    for (size_t D = 0; D < P.Min.size(); ++D) {
      Line += (D ? "," : "") + std::to_string(P.Min[D]);
      if (P.Max[D] != P.Min[D])
        Line += ".." + std::to_string(P.Max[D]);
    }
    Line += "]";
  }
  return Line + "\"\n";
}

LogicalResult EmitShapeProfilePass::run(Model &M, PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  DimRangeMap Ranges;
  DimGears Stored;
  std::string Error;
  if (!getDimRanges(M, Ranges, Error) || !getDimGears(M, Stored, Error))
    return emitError(Diags) << Error;
  bool UseGears = false;
  if (failed(chooseSource(Ranges, Stored, UseGears, Diags)))
    return failure();
  llvm::StringRef Fmt = Format.getValue();
  if (UseGears &&
      (Fmt == "trtexec" || Fmt == "polygraphy" || Fmt == "openvino"))
    return emitError(Diags)
           << "format=" << Fmt
           << " takes one min..max box per input and gears are single "
              "shapes: the box around them holds shapes that were not "
              "checked; set ranges (set-dim-range{ranges=...}, use=ranges) "
              "or write the gears with format=atc or format=rknn";
  if (!UseGears && failed(checkRelations(M, Ranges, Diags)))
    return failure();

  // Every fed input in graph order; the range formats but openvino and
  // rknn list only those with a dim that is not static.
  std::vector<InputProfile> Inputs;
  for (const std::unique_ptr<Value> &In : M.getGraph().getInputs()) {
    if (In->hasInitializer())
      continue; // an input with a default value is not fed by TensorRT users
    if (failed(profileInput(*In, Ranges, !UseGears, Inputs, Diags)))
      return failure();
  }
  if (!llvm::any_of(Inputs,
                    [](const InputProfile &P) { return P.isDynamic(); }))
    return emitError(Diags) << "no input has a symbolic "
                               "dim; the model needs no profile";

  std::string Line;
  if (UseGears) {
    DimGears Given = Stored;
    if (!ShapeSets.getValue().empty() &&
        !parseDimGears(ShapeSets.getValue(), Given, Error))
      return emitError(Diags) << Error;
    GearShapes Gears;
    if (failed(resolveGears(M, Given, Ranges, Inputs, Gears, Diags)))
      return failure();
    if (Fmt == "rknn")
      Line = formatRknn(Gears);
    else if (failed(formatAtcGears(Inputs, Gears, Line, Diags)))
      return failure();
  } else if (Fmt == "rknn") {
    Line = formatRknn(rangePoints(Inputs));
  } else if (Fmt == "openvino") {
    Line = formatOpenVino(Inputs);
  } else {
    std::vector<InputProfile> Dynamic;
    for (const InputProfile &P : Inputs)
      if (P.isDynamic())
        Dynamic.push_back(P);
    Line = formatRanges(Dynamic);
  }

  if (File.getValue() == "-") {
    llvm::outs() << Line;
    llvm::outs().flush();
    return success();
  }
  std::error_code EC;
  llvm::raw_fd_ostream OS(File.getValue(), EC, llvm::sys::fs::OF_Text);
  if (!EC) {
    OS << Line;
    OS.close();
    EC = OS.error();
  }
  if (EC)
    return emitError(Diags)
           << "cannot write '" << File.getValue() << "': " << EC.message();
  return success();
}

std::string EmitShapeProfilePass::formatRanges(
    const std::vector<InputProfile> &Profiles) const {
  std::string Line;
  if (Format.getValue() == "atc") {
    // --input_shape="a:1~16,3,256~1024;b:..." (CANN 8: ranges in
    // --input_shape; -1 would mean any value, which a range replaces).
    Line = "--input_shape=\"";
    for (size_t I = 0; I < Profiles.size(); ++I) {
      const InputProfile &P = Profiles[I];
      Line += (I ? ";" : "") + P.Name + ":";
      for (size_t D = 0; D < P.Min.size(); ++D) {
        Line += D ? "," : "";
        Line += std::to_string(P.Min[D]);
        if (P.Max[D] != P.Min[D])
          Line += "~" + std::to_string(P.Max[D]);
      }
    }
    return Line + "\"\n";
  }
  bool Poly = Format.getValue() == "polygraphy";
  auto Flag = [&](llvm::StringRef TrtName, llvm::StringRef PolyName,
                  std::vector<int64_t> InputProfile::*Field) {
    Line += Line.empty() ? "--" : " --";
    Line += Poly ? PolyName.str() + " " : TrtName.str() + "=";
    for (size_t I = 0; I < Profiles.size(); ++I) {
      const std::vector<int64_t> &Dims = Profiles[I].*Field;
      if (Poly) // polygraphy: one `name:[d0,d1,...]` per input
        Line += (I ? " " : "") + quoteName(Profiles[I].Name) + ":[" +
                join(Dims, ",") + "]";
      else
        Line += (I ? "," : "") + quoteName(Profiles[I].Name) + ":" +
                join(Dims, "x");
    }
  };
  Flag("minShapes", "trt-min-shapes", &InputProfile::Min);
  Flag("optShapes", "trt-opt-shapes", &InputProfile::Opt);
  Flag("maxShapes", "trt-max-shapes", &InputProfile::Max);
  return Line + "\n";
}

/// Which ATC option says the gears: --dynamic_batch_size when only dim 0
/// varies, with one value per gear across the inputs; --dynamic_image_size
/// when only dims 2 and 3 of rank-4 (NCHW) inputs vary, with one height and
/// width per gear; --dynamic_dims otherwise. A dim that is the same in
/// every gear is written as its number.
LogicalResult
EmitShapeProfilePass::formatAtcGears(const std::vector<InputProfile> &Inputs,
                                     const GearShapes &Gears, std::string &Line,
                                     DiagnosticEngine &Diags) const {
  if (Gears.size() < AtcMinGears || Gears.size() > AtcMaxGears)
    return emitError(Diags) << "ATC takes " << AtcMinGears << " to "
                            << AtcMaxGears << " gears, got " << Gears.size();
  // Varying[i][d]: dim d of input i differs between gears.
  std::vector<std::vector<bool>> Varying;
  bool OnlyBatch = true, OnlyImage = true;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    Varying.emplace_back(Inputs[I].Min.size(), false);
    for (size_t D = 0; D < Inputs[I].Min.size(); ++D) {
      for (const auto &Gear : Gears)
        if (Gear[I][D] != Gears[0][I][D])
          Varying[I][D] = true;
      if (!Varying[I][D])
        continue;
      OnlyBatch &= D == 0;
      OnlyImage &= Inputs[I].Min.size() == 4 && (D == 2 || D == 3);
    }
  }
  // One value (batch) or one height and width (image) per gear across the
  // inputs that vary: ATC sets them all from one list.
  auto Shared = [&](llvm::ArrayRef<size_t> Dims) {
    for (const auto &Gear : Gears) {
      std::optional<std::vector<int64_t>> Value;
      for (size_t I = 0; I < Inputs.size(); ++I) {
        if (!llvm::any_of(Dims, [&](size_t D) { return Varying[I][D]; }))
          continue;
        std::vector<int64_t> V;
        for (size_t D : Dims)
          V.push_back(Gear[I][D]);
        if (Value && *Value != V)
          return false;
        Value = V;
      }
    }
    return true;
  };
  enum {
    Batch,
    Image,
    Dims
  } Kind = OnlyBatch && Shared({0})      ? Batch
           : OnlyImage && Shared({2, 3}) ? Image
                                         : Dims;
  // The dims written as -1 (an image input gets both height and width).
  std::vector<std::vector<bool>> Free = Varying;
  unsigned NumFree = 0;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    if (Kind == Image && (Varying[I][2] || Varying[I][3]))
      Free[I][2] = Free[I][3] = true;
    NumFree += llvm::count(Free[I], true);
  }
  if (Kind == Dims && NumFree > AtcMaxDynamicDims)
    return emitError(Diags)
           << "ATC's --dynamic_dims takes at most " << AtcMaxDynamicDims
           << " dims that vary between gears, these gears vary " << NumFree
           << " (and neither only the batch dim nor only height and width, "
              "which --dynamic_batch_size and --dynamic_image_size take)";
  // Every input, static ones too: ATC needs a scalar input named when
  // others have gears.
  Line = "--input_shape=\"";
  for (size_t I = 0; I < Inputs.size(); ++I) {
    Line += (I ? ";" : "") + Inputs[I].Name + ":";
    for (size_t D = 0; D < Free[I].size(); ++D)
      Line += (D ? "," : "") +
              (Free[I][D] ? std::string("-1") : std::to_string(Gears[0][I][D]));
  }
  Line += "\"";
  std::vector<std::string> Profiles;
  for (const auto &Gear : Gears) {
    std::vector<int64_t> Values;
    for (size_t I = 0; I < Inputs.size(); ++I)
      for (size_t D = 0; D < Free[I].size(); ++D)
        if (Free[I][D])
          Values.push_back(Gear[I][D]);
    if (Kind != Dims) // one list for all inputs
      Values.resize(Kind == Batch ? 1 : 2);
    Profiles.push_back(join(Values, ","));
  }
  if (Kind == Batch)
    Line += " --dynamic_batch_size=\"" + llvm::join(Profiles, ",") + "\"\n";
  else if (Kind == Image)
    Line += " --dynamic_image_size=\"" + llvm::join(Profiles, ";") +
            "\" --input_format=NCHW\n";
  else
    Line += " --dynamic_dims=\"" + llvm::join(Profiles, ";") +
            "\" --input_format=ND\n";
  return success();
}

} // namespace

std::unique_ptr<Pass> onnxopt::createEmitShapeProfilePass() {
  return std::make_unique<EmitShapeProfilePass>();
}
