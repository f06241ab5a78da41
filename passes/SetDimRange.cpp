//===- SetDimRange.cpp - Store the value ranges of symbolic dims ----------===//
//
// Before:  (float[N,3,H,W] input) => ...            (no ranges)
// After --set-dim-range='ranges=N:1:16:1,H:256:1024:640,W:256:1024:640':
//          metadata_props: ["onnx_opt.dim_ranges" :
//                           "v1;H=256:1024:640;N=1:16:1;W=256:1024:640"]
//
// Each entry is `symbol:min:max[:opt]`. Ranges given here replace the stored
// range of the same symbol; the other stored ranges stay unless reset=true.
// The types of the model do not change.
//
// relations= stores relations the user asserts between symbols, the
// aspect lock of deployment guides: `relations=W=H,H%32=0` (W always
// equals H, H is a multiple of 32). They are kept next to the ranges
// (format v2), the conditions below are decided with them, and
// freeze-dims and emit-shape-profile check them. `relations=past+seq<=64`
// bounds a sum of symbols (coefficients >= 1), which no range can say.
//
// gears= stores the few fixed shapes the model will be run at, for the
// tools that compile one graph per shape (Ascend ATC's dynamic dims,
// RKNN-Toolkit2's dynamic_input): gears separated by ';', the shapes of a
// gear by ',' (as in --freeze-shape-sets):
//   --set-dim-range='gears=images[1,3,640,640];images[4,3,320,320]'
//   metadata_props: ["onnx_opt.dim_gears" :
//                    "v1;images[1,3,640,640];images[4,3,320,320]"]
// Each gear is checked like a range, at its one point: it gives every input
// with a non-static dim a shape that agrees with the static dims, gives a
// symbol one value, stays inside the stored ranges, keeps the relations,
// and meets every condition a node puts on the input dims. Given gears
// replace the stored ones; stored gears are checked again against new
// ranges and relations; reset=true without gears= drops them.
//
// With derive=true the bounds the model itself implies are stored too: a
// learned position table of 128 rows gathered by arange(seq_len) gives
// `seq_len:1:128` (a least value without a maximum, `H>=7`, is stored as a
// relation); a table read at past..past+seq gives the relation
// `past+seq<=64`. A range given in ranges= is narrowed to the derived one.
//
// Refused, with nothing changed: a malformed entry; min < 0, min > max or
// opt outside [min, max]; a symbol given twice; a symbol the model does not
// have (the error lists those it has); a symbol the dim algebra proves equal
// to a number outside the range; a gear that misses an input, contradicts
// a static dim, gives a symbol two values, repeats another gear, leaves a
// range, breaks a relation or a node's condition; ranges inside which some
// value breaks a condition a node needs (see DimConstraints.h), named with the
// node.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/Diagnostics.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <set>

using namespace onnxopt;

namespace {

/// The parse-time check of one ranges= entry (the symbol is checked against
/// the model when the pass runs).
bool checkRangeEntry(llvm::StringRef Entry, std::string &Error) {
  auto [Name, Text] = Entry.split(':');
  if (Name.trim().empty() || Text.empty()) {
    Error = "expected symbol:min:max[:opt], got '" + Entry.str() + "'";
    return false;
  }
  DimRange R;
  std::string Why;
  if (parseDimRange(Text, R, Why))
    return true;
  Error = "symbol '" + Name.trim().str() + "': " + Why;
  return false;
}

bool checkGearsOption(llvm::StringRef Text, std::string &Error) {
  DimGears Gears;
  return parseDimGears(Text, Gears, Error);
}

bool checkRelationEntry(llvm::StringRef Entry, std::string &Error) {
  DimRelation R;
  return parseDimRelation(Entry, R, Error);
}

std::string joinSorted(const std::set<std::string> &Names) {
  std::string S;
  for (const std::string &N : Names)
    S += (S.empty() ? "" : ", ") + N;
  return S;
}

class SetDimRangePass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "set-dim-range"; }
  llvm::StringRef getDescription() const override {
    return "store min:max[:opt] ranges of symbolic dims, or gears (the "
           "fixed shapes the model runs at), in the model's metadata_props";
  }
  LogicalResult run(Model &M, PassContext &Ctx) override;

private:
  LogicalResult parseEntries(Model &M, DimRangeMap &Given,
                             DiagnosticEngine &Diags);
  LogicalResult checkAgainstAlgebra(Model &M, const DimRangeMap &Given,
                                    DiagnosticEngine &Diags);
  void deriveRanges(const DimAnalysis &DA, DimRangeMap &Result,
                    DimRelations &Derived, DiagnosticEngine &Diags);
  LogicalResult checkConstraints(const DimAnalysis &DA,
                                 const DimRangeMap &Result,
                                 const DimRelations &Rels,
                                 DiagnosticEngine &Diags);
  LogicalResult collectRelations(Model &M, DimRelations &Rels,
                                 DiagnosticEngine &Diags);
  LogicalResult checkGears(Model &M, const DimAnalysis &DA,
                           const DimRangeMap &Ranges, const DimRelations &Rels,
                           DimGears &Gears, DiagnosticEngine &Diags);

  ListOption<std::string> Ranges{
      *this, "ranges", "ranges as symbol:min:max[:opt], e.g. N:1:16:1",
      required().also(checkedBy(checkRangeEntry))};
  Option<bool> Reset{*this, "reset",
                     "drop the stored ranges of symbols not given", false,
                     required()};
  ListOption<std::string> Relations{
      *this, "relations",
      "relations between symbols: A=B (always equal), A%k=0 (a multiple "
      "of k), A>=n (a least value) or A+B<=n (a bound on a sum)",
      required().also(checkedBy(checkRelationEntry))};
  Option<std::string> Gears{
      *this, "gears",
      "fixed shapes the model runs at, gears separated by ';', shapes by "
      "',': x[1,3,640,640];x[4,3,320,320]",
      "", required().also(checkedBy(checkGearsOption))};
  Option<bool> Derive{*this, "derive",
                      "also store the ranges the model implies (a table's "
                      "rows bound an index dim; a bound on a sum of "
                      "symbols is stored as a relation)",
                      false, required()};
};

LogicalResult SetDimRangePass::parseEntries(Model &M, DimRangeMap &Given,
                                            DiagnosticEngine &Diags) {
  std::set<std::string> Symbols;
  forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
    if (D.isSymbol())
      Symbols.insert(D.getSymbol().str());
    return false;
  });
  for (const std::string &Entry : Ranges) {
    auto [Name, Text] = llvm::StringRef(Entry).split(':');
    Name = Name.trim();
    if (Name.empty() || Text.empty())
      return emitError(Diags) << "expected symbol:min:max[:opt], "
                                 "got '"
                              << Entry << "'";
    DimRange R;
    std::string Why;
    if (!parseDimRange(Text, R, Why))
      return emitError(Diags) << "symbol '" << Name << "': " << Why;
    if (!Symbols.count(Name.str())) {
      if (Symbols.empty())
        return emitError(Diags) << "unknown symbol '" << Name
                                << "'; the model has no symbolic dims";
      return emitError(Diags)
             << "unknown symbol '" << Name
             << "'; the model's symbols are: " << joinSorted(Symbols);
    }
    if (Name.find_first_of(";=") != llvm::StringRef::npos)
      return emitError(Diags) << "symbol '" << Name
                              << "' contains ';' or '=', which the stored "
                                 "form cannot hold";
    if (!Given.emplace(Name.str(), R).second)
      return emitError(Diags) << "symbol '" << Name << "' is given two ranges";
  }
  return success();
}

/// A symbol the model's nodes force to a number must admit that number.
LogicalResult SetDimRangePass::checkAgainstAlgebra(Model &M,
                                                   const DimRangeMap &Given,
                                                   DiagnosticEngine &Diags) {
  DimAnalysis DA(M);
  DA.run();
  for (const auto &[Name, R] : Given) {
    DimExpr Best = DA.getBest(DimExpr::symbol(Name));
    if (!Best.isConstant() || R.contains(Best.getConstant()))
      continue;
    return emitError(Diags)
           << "symbol '" << Name << "' is " << Best.getConstant()
           << " in this model (the dim algebra proves "
           << "it), outside the range " << printDimRange(R);
  }
  return success();
}

/// Bounds of one symbol that the conditions imply, intersected with what
/// is given or stored.
void SetDimRangePass::deriveRanges(const DimAnalysis &DA, DimRangeMap &Result,
                                   DimRelations &Derived,
                                   DiagnosticEngine &Diags) {
  for (const DimConstraint &C : getInputConstraints(DA)) {
    // A bound on a sum (past+seq <= 64, a position table read at
    // past..past+seq) is no range of one symbol: it becomes a relation.
    if (std::optional<DimRelation> R = asSumBound(C)) {
      emitRemark(Diags) << "the model needs " << C.condition() << " ("
                        << describe(*C.N) << "); stored as the relation "
                        << printDimRelation(*R);
      Derived.push_back(*R);
      continue;
    }
    std::optional<SymbolBound> B = impliedBound(C, SymbolDomain(Result));
    if (!B)
      continue;
    auto It = Result.find(B->Symbol);
    if (!B->Max && It == Result.end()) {
      // A least value alone is no range: it is stored as a relation.
      if (B->Min <= 1)
        continue;
      DimRelation R = DimRelation::atLeast(B->Symbol, B->Min);
      emitRemark(Diags) << "the model needs " << B->Symbol << " >= " << B->Min
                        << " (" << describe(*C.N)
                        << "); stored as the relation " << printDimRelation(R);
      Derived.push_back(R);
      continue;
    }
    DimRange R = It == Result.end() ? DimRange{B->Min, *B->Max, std::nullopt}
                                    : It->second;
    R.Min = std::max(R.Min, B->Min);
    if (B->Max)
      R.Max = std::min(R.Max, *B->Max);
    if (R.Opt && !R.contains(*R.Opt))
      R.Opt.reset();
    if (R.Min > R.Max)
      continue; // the check below names the condition
    Result[B->Symbol] = R;
  }
}

/// Every value inside the ranges must satisfy every condition that speaks
/// only about symbols with a range: a profile promises the model runs there.
LogicalResult SetDimRangePass::checkConstraints(const DimAnalysis &DA,
                                                const DimRangeMap &Result,
                                                const DimRelations &Rels,
                                                DiagnosticEngine &Diags) {
  SymbolDomain Domain(Result, Rels);
  unsigned Broken = 0;
  for (const DimConstraint &C : getInputConstraints(DA)) {
    if (C.K == DimConstraint::DataDependent)
      continue;
    std::vector<std::string> Syms = C.symbols();
    if (Syms.empty() || !llvm::all_of(Syms, [&](const std::string &S) {
          return Result.count(S) > 0;
        }))
      continue;
    Verdict V = decide(C, Domain);
    if (V == Verdict::Holds)
      continue;
    std::string Ranges;
    for (const std::string &S : Syms)
      Ranges +=
          (Ranges.empty() ? "" : ", ") + S + ":" + printDimRange(Result.at(S));
    auto D = C.N ? emitError(Diags, *C.N) : emitError(Diags);
    D << (V == Verdict::Fails ? "no value" : "not every value") << " in "
      << Ranges << " lets the model run: it needs " << C.condition() << " ("
      << C.Why << ")";
    ++Broken;
  }
  if (Broken)
    return emitError(Diags) << Broken
                            << " condition(s) not met inside the ranges; "
                               "nothing was stored";
  return success();
}

/// The stored relations (unless reset) and the given ones, each naming
/// symbols the model has; a relation with no value in the ranges is
/// refused.
LogicalResult SetDimRangePass::collectRelations(Model &M, DimRelations &Rels,
                                                DiagnosticEngine &Diags) {
  std::string Error;
  if (!Reset && !getDimRelations(M, Rels, Error))
    return emitError(Diags) << Error;
  std::set<std::string> Symbols;
  forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
    if (D.isSymbol())
      Symbols.insert(D.getSymbol().str());
    return false;
  });
  for (const std::string &Entry : Relations) {
    DimRelation R;
    if (!parseDimRelation(Entry, R, Error))
      return emitError(Diags) << "relation '" << Entry << "': " << Error;
    for (const std::string &S : R.symbols()) {
      if (Symbols.count(S))
        continue;
      return emitError(Diags)
             << "relation '" << Entry << "': unknown symbol '" << S
             << "'; the model's symbols are: " << joinSorted(Symbols);
    }
    Rels.push_back(R);
  }
  return success();
}

/// A relation must leave some value inside the ranges.
static LogicalResult checkRelationsAgainstRanges(const DimRelations &Rels,
                                                 const DimRangeMap &Ranges,
                                                 DiagnosticEngine &Diags) {
  for (const DimRelation &R : Rels) {
    if (R.K == DimRelation::AtMost) {
      // The least sum the ranges allow (a symbol without one counts 0).
      int64_t Least = 0;
      std::string At;
      for (const auto &[Sym, Coef] : R.Terms) {
        auto It = Ranges.find(Sym);
        if (It == Ranges.end())
          continue;
        Least += Coef * It->second.Min;
        At += (At.empty() ? "" : ", ") + Sym + ":" + printDimRange(It->second);
      }
      if (Least > R.Bound)
        return emitError(Diags)
               << "relation '" << printDimRelation(R) << "': no value in " << At
               << " keeps it (the least sum is " << Least << ")";
      continue;
    }
    auto L = Ranges.find(R.Lhs);
    if (L == Ranges.end())
      continue;
    const DimRange &A = L->second;
    // A range is what a profile feeds: every value in it must keep the
    // least value.
    if (R.K == DimRelation::AtLeast) {
      if (A.Min < R.Bound)
        return emitError(Diags)
               << "relation '" << printDimRelation(R) << "': the range "
               << R.Lhs << ":" << printDimRange(A) << " has values below "
               << R.Bound << "; give a min of at least " << R.Bound;
      continue;
    }
    if (R.K == DimRelation::Multiple) {
      int64_t First = (A.Min + R.Divisor - 1) / R.Divisor * R.Divisor;
      if (First > A.Max)
        return emitError(Diags)
               << "relation '" << printDimRelation(R) << "': no multiple of "
               << R.Divisor << " in " << R.Lhs << ":" << printDimRange(A);
      continue;
    }
    auto Rt = Ranges.find(R.Rhs);
    if (Rt == Ranges.end())
      continue;
    const DimRange &B = Rt->second;
    if (std::max(A.Min, B.Min) > std::min(A.Max, B.Max))
      return emitError(Diags)
             << "relation '" << printDimRelation(R) << "': the ranges " << R.Lhs
             << ":" << printDimRange(A) << " and " << R.Rhs << ":"
             << printDimRange(B) << " have no value in common";
  }
  return success();
}

/// `H=30, W=30`: the values a condition speaks about.
static std::string valuesOf(const std::vector<std::string> &Syms,
                            const std::map<std::string, int64_t> &Values) {
  std::string S;
  for (const std::string &Sym : Syms) {
    auto It = Values.find(Sym);
    S += (S.empty() ? "" : ", ") + Sym + "=" +
         (It == Values.end() ? "?" : std::to_string(It->second));
  }
  return S;
}

/// Each gear (the given ones, else the stored ones unless reset) at its one
/// point, like a range at every point: the inputs' shapes, the ranges, the
/// relations and every condition a node puts on the input dims. \p Out gets
/// the gears in stored form.
LogicalResult SetDimRangePass::checkGears(Model &M, const DimAnalysis &DA,
                                          const DimRangeMap &Ranges,
                                          const DimRelations &Rels,
                                          DimGears &Out,
                                          DiagnosticEngine &Diags) {
  std::string Error;
  DimGears Given;
  if (!Gears.getValue().empty()) {
    if (!parseDimGears(Gears.getValue(), Given, Error))
      return emitError(Diags) << Error;
  } else if (!Reset && !getDimGears(M, Given, Error)) {
    return emitError(Diags) << Error;
  }
  std::vector<DimConstraint> Conditions = getInputConstraints(DA);
  DimGears Result;
  unsigned Broken = 0;
  for (const DimGear &Gear : Given) {
    DimGear Normalized;
    std::map<std::string, int64_t> Values;
    if (!resolveDimGear(M, Gear, Normalized, Values, Error))
      return emitError(Diags) << Error;
    std::string Text = printDimGear(Normalized);
    if (llvm::is_contained(Result, Normalized))
      return emitError(Diags) << "gear '" << Text << "' is given twice";
    for (const auto &[Sym, V] : Values) {
      auto It = Ranges.find(Sym);
      if (It != Ranges.end() && !It->second.contains(V))
        return emitError(Diags)
               << "gear '" << Text << "' gives '" << Sym << "' the value " << V
               << ", outside its range " << printDimRange(It->second);
    }
    for (const DimRelation &R : Rels)
      if (R.isDecidedBy(Values) && !R.holds(Values))
        return emitError(Diags) << "gear '" << Text << "' breaks the relation "
                                << printDimRelationAt(R, Values);
    auto At = [&](llvm::StringRef Sym) -> std::optional<int64_t> {
      auto It = Values.find(Sym.str());
      return It == Values.end() ? std::nullopt
                                : std::optional<int64_t>(It->second);
    };
    for (const DimConstraint &C : Conditions) {
      if (C.K == DimConstraint::DataDependent)
        continue;
      std::optional<bool> Holds = holdsAt(C, At);
      if (!Holds || *Holds)
        continue;
      auto D = C.N ? emitError(Diags, *C.N) : emitError(Diags);
      D << "the model cannot run at gear '" << Text << "' ("
        << valuesOf(C.symbols(), Values) << "): it needs " << C.condition()
        << " (" << C.Why << ")";
      ++Broken;
    }
    Result.push_back(std::move(Normalized));
  }
  if (Broken)
    return emitError(Diags) << Broken
                            << " condition(s) not met at the gears; "
                               "nothing was stored";
  Out = std::move(Result);
  return success();
}

LogicalResult SetDimRangePass::run(Model &M, PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  DimRangeMap Given;
  if (failed(parseEntries(M, Given, Diags)) ||
      failed(checkAgainstAlgebra(M, Given, Diags)))
    return failure();
  DimRangeMap Stored;
  std::string Error;
  if (!getDimRanges(M, Stored, Error))
    return emitError(Diags) << Error;
  DimRangeMap Result = Reset ? DimRangeMap() : Stored;
  for (const auto &[Name, R] : Given)
    Result[Name] = R;
  // The conditions need the inferred types; the analysis keeps them beside
  // the model, which keeps its own.
  DiagnosticEngine Quiet;
  Quiet.setHandler([](const Diagnostic &) {});
  ShapeInfo Types(M, Quiet);
  DimAnalysis DA(M, &Types);
  DA.run();
  DimRelations Derived;
  if (Derive)
    deriveRanges(DA, Result, Derived, Diags);
  DimRelations Rels;
  if (failed(collectRelations(M, Rels, Diags)))
    return failure();
  Rels.insert(Rels.end(), Derived.begin(), Derived.end());
  if (failed(checkRelationsAgainstRanges(Rels, Result, Diags)) ||
      failed(checkConstraints(DA, Result, Rels, Diags)))
    return failure();
  DimGears NewGears, StoredGears;
  if (failed(checkGears(M, DA, Result, Rels, NewGears, Diags)))
    return failure();
  if (!getDimGears(M, StoredGears, Error))
    return emitError(Diags) << Error;
  if (NewGears != StoredGears) {
    if (!setDimGears(M, NewGears, Error))
      return emitError(Diags) << Error;
    Ctx.Changed = true;
  }
  DimRelations StoredRels;
  if (!getDimRelations(M, StoredRels, Error))
    return emitError(Diags) << Error;
  // A least value a range now keeps says nothing more.
  llvm::erase_if(Rels, [&](const DimRelation &R) {
    auto It = Result.find(R.Lhs);
    return R.K == DimRelation::AtLeast && It != Result.end() &&
           It->second.Min >= R.Bound;
  });
  llvm::sort(Rels);
  Rels.erase(std::unique(Rels.begin(), Rels.end()), Rels.end());
  if (Rels != StoredRels) {
    if (!setDimRelations(M, Rels, Error))
      return emitError(Diags) << Error;
    Ctx.Changed = true;
  }
  if (Result == Stored)
    return success();
  if (!setDimRanges(M, Result, Error))
    return emitError(Diags) << Error;
  Ctx.Changed = true;
  return success();
}

} // namespace

std::unique_ptr<Pass> onnxopt::createSetDimRangePass() {
  return std::make_unique<SetDimRangePass>();
}
