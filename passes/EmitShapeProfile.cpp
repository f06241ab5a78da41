//===- EmitShapeProfile.cpp - Write a TensorRT min/opt/max profile --------===//
//
// Before:  (float[N,3,H,W] input) with stored ranges
//          N=1:16:1, H=256:1024:640, W=256:1024:640
// After --emit-shape-profile (the model is unchanged), on stdout:
//          --minShapes=input:1x3x256x256 --optShapes=input:1x3x640x640
//          --maxShapes=input:16x3x1024x1024
//
// Writes, in trtexec's syntax, the smallest, optimal and largest shape of
// every main graph input with a symbolic dim, from the ranges set-dim-range
// stored. A range without opt uses its max. Inputs whose dims are all known
// are left out (TensorRT takes them from the model). The line goes to stdout
// or, with file=path, into that file; with the model also on stdout, use -o.
//
// Refused: a symbolic dim without a stored range (the error names the input,
// the dim and the symbol), an unknown dim or an unknown rank.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace onnxopt;

namespace {

/// One input's dims at the three points of the profile.
struct InputProfile {
  std::string Name;
  std::vector<int64_t> Min, Opt, Max;
};

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
           "in trtexec syntax";
  }
  LogicalResult run(Model &M, PassContext &Ctx) override;

private:
  LogicalResult profileInput(const Value &In, const DimRangeMap &Ranges,
                             std::vector<InputProfile> &Out,
                             DiagnosticEngine &Diags);

  Option<std::string> File{*this, "file",
                           "where to write the profile ('-': stdout)", "-"};
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

LogicalResult EmitShapeProfilePass::run(Model &M, PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  DimRangeMap Ranges;
  std::string Error;
  if (!getDimRanges(M, Ranges, Error))
    return emitError(Diags) << "" << Error;
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
  auto Flag = [&](llvm::StringRef Name,
                  std::vector<int64_t> InputProfile::*Field) {
    Line += (Line.empty() ? "--" : " --") + Name.str() + "=";
    for (size_t I = 0; I < Profiles.size(); ++I)
      Line += (I ? "," : "") + quoteName(Profiles[I].Name) + ":" +
              joinDims(Profiles[I].*Field);
  };
  Flag("minShapes", &InputProfile::Min);
  Flag("optShapes", &InputProfile::Opt);
  Flag("maxShapes", &InputProfile::Max);
  Line += "\n";

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

} // namespace

std::unique_ptr<Pass> onnxopt::createEmitShapeProfilePass() {
  return std::make_unique<EmitShapeProfilePass>();
}
