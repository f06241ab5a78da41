//===- InferShapes.cpp - Record inferred types on every value -------------===//
//
// Before:  (float[N,3,32,32] X) => (float[N,8,16,16] Y) {
//            C = Conv<kernel_shape=[3,3], strides=[2,2]...>(X, W, B)
//            Y = Relu(C)
//          }                                 # C has no recorded type
// After:   C: float[N,8,16,16]               # written as value_info
//
// Runs ONNX's per-op inference (through the schemas of the model's opsets)
// over the main graph and, through If/Loop/Scan, their bodies, with data
// propagation so that shapes computed in the graph (Shape -> Gather ->
// Concat -> Reshape) reach their consumers. Inferred types fill what the
// model leaves unknown; a known dim replaces a declared symbol; a declared
// symbol is kept over an inferred one. A contradiction (declared 3,
// inferred 4) is an error naming the node and the value. Nodes without a
// schema (custom domains, opsets newer than this ONNX build knows) keep
// their declared types. An inference function that fails is a warning (the
// node keeps its declared types), an error with strict=true. explain-dims
// prints the classes of equal dims the dim algebra finds (unify-dims names
// them).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "RecordedTypes.h"

using namespace onnxopt;

namespace {

class InferShapesPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "infer-shapes"; }
  llvm::StringRef getDescription() const override {
    return "infer the type and shape of every value through the ONNX op "
           "schemas and record them (value_info, graph outputs)";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    ShapeInferenceOptions Opts;
    Opts.Strict = Strict;
    Opts.DataPropagation = DataPropagation;
    Opts.NameUnknownDims = NameUnknownDims;
    LogicalResult R = success();
    ShapeInferenceOptions Defaults;
    if (Opts.Strict == Defaults.Strict &&
        Opts.DataPropagation == Defaults.DataPropagation &&
        Opts.NameUnknownDims == Defaults.NameUnknownDims) {
      // The default inference is the shared analysis: the shape passes after
      // this one reuse it instead of inferring again.
      ShapeInfo &SI = recordInferredTypes(M, Ctx);
      R = SI.getResult();
      Ctx.Changed |= SI.getEngine().getStats().ValuesRefined > 0;
      Ctx.markAnalysisPreserved<ShapeInfo>();
    } else {
      ShapeInference SI(M, Ctx.getDiags(), Opts);
      R = SI.inferModel();
      if (SI.getStats().ValuesRefined)
        Ctx.Changed = true;
    }
    if (succeeded(R) && (ExplainDims || Constraints)) {
      DimAnalysis &DA = Ctx.getAnalysis<DimAnalysis>();
      DA.run();
      if (ExplainDims)
        DA.explain(llvm::errs());
      if (Constraints)
        reportConstraints(DA, Ctx.getDiags());
      Ctx.markAnalysisPreserved<DimAnalysis>();
    }
    return R;
  }

private:
  /// One remark per condition the input dims must meet, the ones that can
  /// never hold first marked as such.
  static void reportConstraints(const DimAnalysis &DA,
                                DiagnosticEngine &Diags) {
    std::vector<DimConstraint> Cs = getInputConstraints(DA);
    for (const DimConstraint &C : Cs) {
      bool Never = decide(C, SymbolDomain()) == Verdict::Fails;
      emitRemark(Diags) << (Never ? "never holds: " : "") << C.str();
    }
    emitRemark(Diags) << Cs.size() << " constraint(s) on the input dims";
  }

  Option<bool> Strict{*this, "strict",
                      "fail when an op's inference function fails", false};
  Option<bool> DataPropagation{
      *this, "data-prop",
      "propagate computed shape values (Shape, Gather, Concat, ...) to their "
      "consumers",
      true};
  Option<bool> NameUnknownDims{
      *this, "name-unknown-dims",
      "give dims that inference leaves unknown fresh unk__N symbols", true};
  Option<bool> Constraints{
      *this, "constraints",
      "report the conditions on the input dims under which the model runs, "
      "each with the node that needs it",
      false};
  Option<bool> ExplainDims{
      *this, "explain-dims",
      "print each class of equal dims with the nodes that prove it (to "
      "stderr)",
      false};
};

} // namespace

std::unique_ptr<Pass> onnxopt::createInferShapesPass() {
  return std::make_unique<InferShapesPass>();
}
