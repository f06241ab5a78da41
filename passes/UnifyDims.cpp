//===- UnifyDims.cpp - One name per dim, in terms of the inputs -----------===//
//
// Before:  (float[batch,3,height,width] input)
//            => (float[batch,dim1,4] boxes, float[batch,dim2,2] scores)
//          # dim1 and dim2 are both the anchor count
// After:   (float[batch,3,height,width] input)
//            => (float[batch,A,4] boxes, float[batch,A,2] scores)
//          A = 2*ceil(height/8)*ceil(width/8)+2*ceil(height/16)*... (the
//          expression itself is the name with derived=expr)
//
// Runs shape inference and the dim algebra, then gives every class of
// provably equal dims one name:
//  - a constant when the class holds one (the symbol was a known value);
//  - an input symbol when the class holds one (two input symbols proven
//    equal become the first of them in input order);
//  - else, when the dims are a function of the input symbols, that
//    expression (derived=expr) or a fresh name (derived=fresh);
//  - else the first symbol of the class (in model order) that an exporter
//    did not make up, else a fresh name `dN`.
// Symbols that exporters make up (unk__N, <Op><output>_dim_K, dimK,
// p2o.DynamicDimension.K) therefore disappear wherever the graph determines
// them; unknown dims that the algebra can express get named too. Output is
// deterministic and a second run changes nothing. Dims that contradict each
// other (declared S where one node implies 4 and another 5) are reported as
// warnings and left as they are.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace onnxopt;

namespace {

class UnifyDimsPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "unify-dims"; }
  llvm::StringRef getDescription() const override {
    return "give provably equal dims one name, in terms of the input dims "
           "where the graph determines them";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    if (Derived.getValue() != "expr" && Derived.getValue() != "fresh")
      return emitError(Ctx.getDiags())
             << "derived must be 'expr' or 'fresh', got '" << Derived.getValue()
             << "'";
    ShapeInference SI(M, Ctx.getDiags());
    if (failed(SI.inferModel()))
      return failure();
    DimAnalysis DA(M);
    DA.run();
    for (const std::string &Conflict : DA.getConflicts())
      emitWarning(Ctx.getDiags()) << "dims contradict each other: " << Conflict;
    if (Explain)
      DA.explain(llvm::errs());

    Namer Names(M, DA, Derived.getValue() == "expr");
    bool Changed = false;
    forEachRecordedDim(M, [&](Dim &D, const Value *V, unsigned Index) {
      std::optional<Dim> New = Names.rename(D, V, Index);
      if (!New || *New == D)
        return false;
      New->setDenotation(D.getDenotation());
      D = std::move(*New);
      Changed = true;
      return true;
    });
    if (Changed)
      Ctx.Changed = true;
    return success();
  }

private:
  Option<std::string> Derived{
      *this, "derived",
      "name of dims derived from the inputs: 'expr' (the expression, e.g. "
      "ceil(H/8)) or 'fresh' (d0, d1, ...)",
      "expr"};
  Option<bool> Explain{*this, "explain",
                       "print each class of equal dims with the nodes that "
                       "prove it (to stderr)",
                       false};

  /// Decides the new name of every dim; deterministic in model order.
  class Namer {
  public:
    Namer(Model &M, DimAnalysis &DA, bool UseExpr) : DA(DA), UseExpr(UseExpr) {
      forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
        if (D.isSymbol() && Taken.insert(D.getSymbol()).second)
          Order.push_back(D.getSymbol().str());
        return false;
      });
    }

    std::optional<Dim> rename(const Dim &D, const Value *V, unsigned Index) {
      if (D.isKnown())
        return std::nullopt;
      // A symbol that a contradiction involves stays as it is.
      if (D.isSymbol() && DA.isConflicted(DimExpr::symbol(D.getSymbol())))
        return std::nullopt;
      if (D.isSymbol())
        return nameOf(DimExpr::symbol(D.getSymbol()), D.getSymbol());
      // An unknown dim: name it when the algebra expresses it.
      const std::vector<DimExpr> *Dims = V ? DA.getDims(*V) : nullptr;
      if (!Dims || Index >= Dims->size())
        return std::nullopt;
      DimExpr E = DA.getBest((*Dims)[Index]);
      if (!E.isConstant() && !DA.isInputExpressible(E))
        return std::nullopt;
      return nameOf(E, "");
    }

  private:
    DimAnalysis &DA;
    bool UseExpr;
    /// Symbols of the model in order of first appearance.
    std::vector<std::string> Order;
    llvm::StringSet<> Taken;
    /// Class (best expression key) -> chosen dim.
    std::map<std::string, Dim> Chosen;
    unsigned NextFresh = 0;

    Dim fresh() {
      while (true) {
        std::string Name = "d" + std::to_string(NextFresh++);
        if (Taken.insert(Name).second)
          return Dim::symbol(Name);
      }
    }

    /// The name of the class of \p E; \p Symbol is E's own name, if any.
    Dim nameOf(const DimExpr &E, llvm::StringRef Symbol) {
      DimExpr Best = DA.getBest(E);
      auto It = Chosen.find(Best.key());
      if (It != Chosen.end())
        return It->second;
      Dim Name = choose(E, Best, Symbol);
      Chosen.emplace(Best.key(), Name);
      return Name;
    }

    Dim choose(const DimExpr &E, const DimExpr &Best, llvm::StringRef Symbol) {
      if (Best.isConstant())
        return Dim::known(Best.getConstant());
      for (const std::string &S : DA.getInputSymbols())
        if (DA.provenEqual(E, DimExpr::symbol(S)))
          return Dim::symbol(S);
      if (DA.isInputExpressible(Best)) {
        if (!UseExpr)
          return fresh();
        std::string Name = Best.str();
        // A name another symbol already has would merge the two.
        if (Taken.count(Name) && !DA.provenEqual(DimExpr::symbol(Name), E))
          return fresh();
        Taken.insert(Name);
        return Dim::symbol(Name);
      }
      for (const std::string &S : Order)
        if (!isExporterMadeSymbol(S) && DA.provenEqual(E, DimExpr::symbol(S)))
          return Dim::symbol(S);
      if (!Symbol.empty() && !isExporterMadeSymbol(Symbol))
        return Dim::symbol(Symbol);
      return fresh();
    }
  };
};

} // namespace

std::unique_ptr<Pass> onnxopt::createUnifyDimsPass() {
  return std::make_unique<UnifyDimsPass>();
}
