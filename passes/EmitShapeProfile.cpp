//===- EmitShapeProfile.cpp - Write shape profiles for deployment tools ---===//
//
// Before:  (float[N,3,H,W] input) with stored ranges
//          N=1:16:1, H=256:1024:640, W=256:1024:640
// After --emit-shape-profile (the model is unchanged), on stdout:
//          --minShapes=input:1x3x256x256 --optShapes=input:1x3x640x640
//          --maxShapes=input:16x3x1024x1024
//
// Writes the smallest, optimal and largest shape of every main graph input
// with a symbolic dim, from the ranges set-dim-range stored, in the syntax
// of the tool that builds the engine:
//   format=trtexec     --minShapes=input:1x3x256x256 --optShapes=...
//   --maxShapes=... format=polygraphy  --trt-min-shapes input:[1,3,256,256]
//   --trt-opt-shapes ... format=atc
//   --input_shape="input:1~16,3,256~1024,256~1024"
// Ascend ATC (CANN 8) takes a range as `min~max` in --input_shape; it has no
// opt. With shape-sets=input[1,3,640,640];input[4,3,320,320] ATC gets
// profiles instead (ATC's "dynamic dims", 2 to 100 of them, each a value
// for every -1 in --input_shape, which cannot be combined with ranges):
//   --input_shape="input:-1,3,-1,-1" --dynamic_dims="1,640,640;4,320,320"
//   --input_format=ND
// A range without opt uses its max. Inputs whose dims are all known are left
// out (the tools take them from the model). The line goes to stdout or, with
// file=path, into that file; with the model also on stdout, use -o.
//
// Refused: a symbolic dim without a stored range (the error names the input,
// the dim and the symbol), an unknown dim or an unknown rank; a shape set
// that misses an input, contradicts a static dim or leaves a stored range.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimRanges.h"
#include <map>
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace onnxopt;

namespace {

/// One input's dims at the three points of the profile.
struct InputProfile {
  std::string Name;
  std::vector<int64_t> Min, Opt, Max;
  /// Which dims are symbolic.
  std::vector<bool> Dynamic;
};

/// Splits `x[1,3];x[2,3]` into sets of shapes.
bool parseShapeSets(llvm::StringRef Text,
                    std::vector<std::vector<ShapeSpec>> &Out,
                    std::string &Error) {
  llvm::SmallVector<llvm::StringRef, 8> Sets;
  Text.split(Sets, ';', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Set : Sets) {
    std::vector<ShapeSpec> Shapes;
    for (const std::string &Item : splitOptionList(Set)) {
      ShapeSpec S;
      if (!parseOptionValue(Item, S, Error))
        return false;
      for (const std::string &D : S.Dims)
        if (!llvm::all_of(D, llvm::isDigit)) {
          Error = "shape set '" + Set.trim().str() +
                  "' must give numbers, got '" + D + "'";
          return false;
        }
      Shapes.push_back(std::move(S));
    }
    Out.push_back(std::move(Shapes));
  }
  return true;
}

bool checkShapeSets(llvm::StringRef Text, std::string &Error) {
  std::vector<std::vector<ShapeSpec>> Sets;
  return parseShapeSets(Text, Sets, Error);
}

std::string quoteName(llvm::StringRef Name) {
  if (Name.find_first_of(":, ") == llvm::StringRef::npos)
    return Name.str();
  return "'" + Name.str() + "'";
}

std::string joinDims(llvm::ArrayRef<int64_t> Dims) {
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "x" : "") + std::to_string(Dims[I]);
  return S;
}

class EmitShapeProfilePass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "emit-shape-profile"; }
  llvm::StringRef getDescription() const override {
    return "write the inputs' min/opt/max shapes from the stored dim ranges "
           "(or shape sets) for trtexec, polygraphy or Ascend ATC";
  }
  LogicalResult run(Model &M, PassContext &Ctx) override;

private:
  LogicalResult profileInput(const Value &In, const DimRangeMap &Ranges,
                             std::vector<InputProfile> &Out,
                             DiagnosticEngine &Diags);

  std::string formatLine(const std::vector<InputProfile> &Profiles) const;
  LogicalResult formatShapeSets(const std::vector<InputProfile> &Profiles,
                                const DimRangeMap &Ranges, const Model &M,
                                std::string &Line, DiagnosticEngine &Diags);

  Option<std::string> File{*this, "file",
                           "where to write the profile ('-': stdout)", "-"};
  Option<std::string> Format{
      *this, "format", "the tool's syntax: trtexec, polygraphy or atc",
      "trtexec", oneOf({"trtexec", "polygraphy", "atc"})};
  Option<std::string> ShapeSets{
      *this, "shape-sets",
      "';'-separated shape sets for ATC's --dynamic_dims, e.g. "
      "input[1,3,640,640];input[4,3,320,320] (format=atc)",
      "", checkedBy(checkShapeSets)};
};

LogicalResult EmitShapeProfilePass::profileInput(const Value &In,
                                                 const DimRangeMap &Ranges,
                                                 std::vector<InputProfile> &Out,
                                                 DiagnosticEngine &Diags) {
  const Type &T = In.getType();
  if (!T.isTensor())
    return success();
  if (!T.hasShape())
    return emitError(Diags, In) << "the input has an unknown rank";
  bool Dynamic = false;
  InputProfile P;
  P.Name = In.getName().str();
  for (unsigned I = 0; I < T.getRank(); ++I) {
    const Dim &D = T.getDims()[I];
    P.Dynamic.push_back(!D.isKnown());
    if (D.isKnown()) {
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
    if (It == Ranges.end() && !ShapeSets.getValue().empty()) {
      // Shape sets give the values; no range needed.
      Dynamic = true;
      P.Min.push_back(0);
      P.Opt.push_back(0);
      P.Max.push_back(0);
      continue;
    }
    if (It == Ranges.end())
      return emitError(Diags, In)
             << "dim " << I << " of the input ('" << D.getSymbol()
             << "') has no range; set one with "
             << "set-dim-range{ranges=" << D.getSymbol() << ":min:max:opt}";
    Dynamic = true;
    P.Min.push_back(It->second.Min);
    P.Opt.push_back(It->second.getOpt());
    P.Max.push_back(It->second.Max);
  }
  if (Dynamic)
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
      return emitError(Diags)
             << "the profile's " << Names[Point]
             << " shapes break the stored relation "
             << printDimRelationAt(R, Values)
             << "; set ranges that keep it (set-dim-range)";
    }
  }
  return success();
}

LogicalResult EmitShapeProfilePass::run(Model &M, PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  DimRangeMap Ranges;
  std::string Error;
  if (!getDimRanges(M, Ranges, Error))
    return emitError(Diags) << Error;
  if (failed(checkRelations(M, Ranges, Diags)))
    return failure();
  std::vector<InputProfile> Profiles;
  for (const std::unique_ptr<Value> &In : M.getGraph().getInputs()) {
    if (In->hasInitializer())
      continue; // an input with a default value is not fed by TensorRT users
    if (failed(profileInput(*In, Ranges, Profiles, Diags)))
      return failure();
  }
  if (Profiles.empty())
    return emitError(Diags) << "no input has a symbolic "
                               "dim; the model needs no profile";

  std::string Line;
  if (!ShapeSets.getValue().empty()) {
    if (Format.getValue() != "atc")
      return emitError(Diags)
             << "shape-sets are ATC's --dynamic_dims; "
                "use format=atc (trtexec and polygraphy take one min/opt/max "
                "profile)";
    if (failed(formatShapeSets(Profiles, Ranges, M, Line, Diags)))
      return failure();
  } else {
    Line = formatLine(Profiles);
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

std::string EmitShapeProfilePass::formatLine(
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
      if (Poly) {
        // polygraphy: one `name:[d0,d1,...]` per input, space-separated.
        Line += (I ? " " : "") + quoteName(Profiles[I].Name) + ":[";
        for (size_t D = 0; D < Dims.size(); ++D)
          Line += (D ? "," : "") + std::to_string(Dims[D]);
        Line += "]";
      } else {
        Line +=
            (I ? "," : "") + quoteName(Profiles[I].Name) + ":" + joinDims(Dims);
      }
    }
  };
  Flag("minShapes", "trt-min-shapes", &InputProfile::Min);
  Flag("optShapes", "trt-opt-shapes", &InputProfile::Opt);
  Flag("maxShapes", "trt-max-shapes", &InputProfile::Max);
  return Line + "\n";
}

LogicalResult EmitShapeProfilePass::formatShapeSets(
    const std::vector<InputProfile> &Profiles, const DimRangeMap &Ranges,
    const Model &M, std::string &Line, DiagnosticEngine &Diags) {
  std::vector<std::vector<ShapeSpec>> Sets;
  std::string Error;
  if (!parseShapeSets(ShapeSets.getValue(), Sets, Error))
    return emitError(Diags) << Error;
  // ATC's rule: 2 to 100 profiles.
  if (Sets.size() < 2 || Sets.size() > 100)
    return emitError(Diags) << "ATC takes 2 to 100 "
                               "shape sets for --dynamic_dims, got "
                            << Sets.size();
  // Inputs and each set's entries by name: one search per input and set
  // was quadratic in the inputs.
  llvm::StringMap<const Value *> InputsByName;
  for (const auto &V : M.getGraph().getInputs())
    InputsByName[V->getName()] = V.get();
  std::string Profile;
  for (const std::vector<ShapeSpec> &Set : Sets) {
    llvm::StringMap<const ShapeSpec *> ByName;
    for (const ShapeSpec &S : Set)
      ByName.try_emplace(S.Name, &S);
    std::vector<std::string> Values;
    for (const InputProfile &P : Profiles) {
      const ShapeSpec *It = ByName.lookup(P.Name);
      if (!It)
        return emitError(Diags) << "a shape set gives no "
                                   "shape for input '"
                                << P.Name << "'";
      if (It->Dims.size() != P.Dynamic.size())
        return emitError(Diags) << "shape set gives input '"
                                << P.Name << "' rank " << It->Dims.size()
                                << ", the model has rank " << P.Dynamic.size();
      const Value *In = InputsByName.lookup(P.Name);
      for (size_t D = 0; D < P.Dynamic.size(); ++D) {
        int64_t V = 0;
        llvm::StringRef(It->Dims[D]).getAsInteger(10, V);
        if (!P.Dynamic[D]) {
          if (V != P.Min[D])
            return emitError(Diags)
                   << "shape set gives dim " << D
                   << " of input '" << P.Name << "' the value " << V
                   << ", the model has " << P.Min[D];
          continue;
        }
        const Dim &Sym = In->getType().getDims()[D];
        auto R =
            Sym.isSymbol() ? Ranges.find(Sym.getSymbol().str()) : Ranges.end();
        if (R != Ranges.end() && !R->second.contains(V))
          return emitError(Diags)
                 << "shape set gives '" << Sym.getSymbol()
                 << "' (dim " << D << " of input '" << P.Name << "') the value "
                 << V << ", outside its range " << printDimRange(R->second);
        Values.push_back(std::to_string(V));
      }
    }
    Profile += (Profile.empty() ? "" : ";") + llvm::join(Values, ",");
  }
  Line = "--input_shape=\"";
  for (size_t I = 0; I < Profiles.size(); ++I) {
    const InputProfile &P = Profiles[I];
    Line += (I ? ";" : "") + P.Name + ":";
    for (size_t D = 0; D < P.Dynamic.size(); ++D)
      Line += (D ? "," : "") +
              (P.Dynamic[D] ? std::string("-1") : std::to_string(P.Min[D]));
  }
  Line += "\" --dynamic_dims=\"" + Profile + "\" --input_format=ND\n";
  return success();
}

} // namespace

std::unique_ptr<Pass> onnxopt::createEmitShapeProfilePass() {
  return std::make_unique<EmitShapeProfilePass>();
}
