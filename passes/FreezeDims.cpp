//===- FreezeDims.cpp - Fix symbolic dims and fold what becomes static ----===//
//
// Before:  (float[N,3,H,W] input) => (float[N,A,4] boxes) {
//            S = Shape(T)  ...  R = Reshape(T, Concat(Unsqueeze(Gather(S, 0)),
//                                                     [-1], [4]))
//          }
// After --freeze-dims='shapes=input[1,3,640,640]':
//          (float[1,3,640,640] input) => (float[1,16800,4] boxes)
//          <int64[3] C = {1, -1, 4}> { ... R = Reshape(T, C) ... }
//
// Fixes symbols by name (`dims=N:1,H:640`) or through the shape of a main
// graph input (`shapes=input[1,3,640,640]`: each symbol of the input takes
// the given value everywhere; an unknown dim of that input is set there
// only; `?` leaves a dim as it is). The values replace the symbols in every
// recorded type: graph inputs and outputs, value-infos, subgraphs. Then
// types are inferred again and constant-fold and fold-shapes run, with
// inference in between, until nothing changes.
//
// Refused, with nothing changed: a value that is not a positive integer; a
// symbol given two values; a value outside the symbol's stored range
// (set-dim-range); a shape that contradicts a known dim of its input or its
// rank; a symbol or input the model does not have (the error lists those it
// has). After freezing, an inferred type that contradicts a declared one is
// an error naming the node. The stored ranges of frozen symbols are dropped.
//
// Stored gears (set-dim-range{gears=...}: the only shapes the model is used
// at) are checked against the frozen values: a gear that gives a frozen dim
// another value can no longer occur and is dropped, with a remark naming
// it; when no gear agrees, freezing is refused (the model was declared to
// run only at its gears), naming the gears and the frozen values. The kept
// gears lose the inputs that became static; when no input has a non-static
// dim left, the gears go, as the ranges of frozen symbols do.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Pass/PassManager.h"
#include "onnxopt/Passes.h"
#include "RecordedTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <map>
#include <memory>
#include <set>
#include <vector>

using namespace onnxopt;

namespace {

/// Where a symbol's value came from, for error messages.
struct Binding {
  int64_t Value = 0;
  std::string Source;
};

/// Parses a positive dim value.
bool parseDimValue(llvm::StringRef Text, int64_t &Out) {
  return !Text.trim().getAsInteger(10, Out) && Out > 0;
}

/// The parse-time check of one dims= entry (the symbol is checked against
/// the model when the pass runs).
bool checkDimValue(llvm::StringRef Entry, std::string &Error) {
  auto [Name, Text] = Entry.split(':');
  int64_t V;
  if (Name.trim().empty() || Text.empty())
    Error = "expected name:value, got '" + Entry.str() + "'";
  else if (!parseDimValue(Text, V))
    Error = "the value of '" + Name.trim().str() +
            "' must be a positive integer, got '" + Text.trim().str() + "'";
  else
    return true;
  return false;
}

std::string joinSorted(const std::set<std::string> &Names) {
  std::string S;
  for (const std::string &N : Names)
    S += (S.empty() ? "" : ", ") + N;
  return S;
}

/// The state of one run (the pass object holds only its options, so it can
/// run on two models at once).
struct FreezeState {
  /// The main graph's inputs by name, for shapes= (one search per entry
  /// was quadratic).
  llvm::StringMap<Value *> InputsByName;
  std::map<std::string, Binding> Bindings;
  /// Unknown dims of inputs set directly: (input, dim index) -> value.
  std::vector<std::tuple<Value *, unsigned, int64_t>> Direct;
  std::set<std::string> Symbols;
  /// The frozen value of each bound symbol, as DimRelation reads values.
  std::map<std::string, int64_t> symbolValues() const {
    std::map<std::string, int64_t> Values;
    for (const auto &[Sym, B] : Bindings)
      Values[Sym] = B.Value;
    return Values;
  }
};

/// The stored gears sorted by the frozen values.
struct GearCheck {
  DimGears Kept;
  /// Each dropped gear with its values that disagree (`N=4, H=320`).
  std::vector<std::pair<std::string, std::string>> Dropped;
};

class FreezeDimsPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "freeze-dims"; }
  llvm::StringRef getDescription() const override {
    return "fix symbolic dims by name or by input shape everywhere, then "
           "infer and fold until the model stops changing";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override;

private:
  LogicalResult collectBindings(FreezeState &S, Model &M,
                                DiagnosticEngine &Diags) const;
  LogicalResult bind(FreezeState &S, llvm::StringRef Symbol, int64_t Value,
                     const std::string &Source, DiagnosticEngine &Diags) const;
  LogicalResult applyShape(FreezeState &S, Model &M, const ShapeSpec &Spec,
                           DiagnosticEngine &Diags) const;
  LogicalResult foldUntilStable(Model &M, PassContext &Ctx);
  /// Refuses values outside the stored ranges of their symbols, then drops
  /// the ranges of the symbols that are frozen.
  LogicalResult checkRanges(FreezeState &S, Model &M, DimRangeMap &Ranges,
                            DiagnosticEngine &Diags) const;
  /// Refuses values that break a condition some node needs to run.
  LogicalResult checkConstraints(FreezeState &S, Model &M,
                                 PassContext &Ctx) const;
  /// Sorts the stored gears into those that agree with the frozen values
  /// and those that do not; refuses when gears are stored and none agrees.
  LogicalResult checkGears(FreezeState &S, Model &M, GearCheck &Out,
                           DiagnosticEngine &Diags) const;

  ListOption<std::string> Dims{*this, "dims",
                               "symbols to fix, as name:value pairs",
                               required().also(checkedBy(checkDimValue))};
  ListOption<ShapeSpec> Shapes{*this, "shapes",
                               "shapes of main graph inputs, e.g. "
                               "input[1,3,640,640] or input:1x3x640x640 "
                               "('?' keeps a dim)",
                               required()};
  Option<bool> Fold{*this, "fold",
                    "fold (constant-fold, fold-shapes) after freezing and "
                    "inference",
                    true};
  Option<int64_t> SizeLimit{*this, "size-limit",
                            "largest constant folding may create, in bytes",
                            1 << 20, atLeast(0)};
  Option<int64_t> MaxRounds{*this, "max-rounds",
                            "rounds of inference and folding before giving up",
                            16, atLeast(1)};
};

LogicalResult FreezeDimsPass::bind(FreezeState &S, llvm::StringRef Symbol,
                                   int64_t Value, const std::string &Source,
                                   DiagnosticEngine &Diags) const {
  auto &Bindings = S.Bindings;
  auto &Direct = S.Direct;
  auto &Symbols = S.Symbols;
  (void)Bindings, (void)Direct, (void)Symbols;
  auto [It, Inserted] =
      Bindings.try_emplace(Symbol.str(), Binding{Value, Source});
  if (Inserted || It->second.Value == Value)
    return success();
  return emitError(Diags) << "symbol '" << Symbol
                          << "' is given two values: " << It->second.Value
                          << " (" << It->second.Source << ") and " << Value
                          << " (" << Source << ")";
}

LogicalResult FreezeDimsPass::applyShape(FreezeState &S, Model &M,
                                         const ShapeSpec &Spec,
                                         DiagnosticEngine &Diags) const {
  auto &Bindings = S.Bindings;
  auto &Direct = S.Direct;
  auto &Symbols = S.Symbols;
  (void)Bindings, (void)Direct, (void)Symbols;
  Graph &G = M.getGraph();
  if (S.InputsByName.empty())
    for (const std::unique_ptr<Value> &V : G.getInputs())
      S.InputsByName.try_emplace(V->getName(), V.get());
  Value *In = S.InputsByName.lookup(Spec.Name);
  if (!In) {
    std::set<std::string> Names;
    for (const std::unique_ptr<Value> &V : G.getInputs())
      Names.insert(V->getName().str());
    return emitError(Diags)
           << "unknown input '" << Spec.Name
           << "'; the main graph's inputs are: " << joinSorted(Names);
  }
  Type &T = In->getMutableType();
  if (!T.isTensor())
    return emitError(Diags, *In) << "input is not a tensor: " << T.str();
  std::string Source = "shapes=" + Spec.Name;
  if (!T.hasShape())
    T.setShape(std::vector<Dim>(Spec.Dims.size()));
  if (T.getRank() != Spec.Dims.size())
    return emitError(Diags, *In)
           << "the input has rank " << T.getRank() << ", shapes= gives "
           << Spec.Dims.size() << " dims";
  for (unsigned I = 0; I < Spec.Dims.size(); ++I) {
    if (Spec.Dims[I] == "?")
      continue;
    int64_t V;
    if (!parseDimValue(Spec.Dims[I], V))
      return emitError(Diags, *In)
             << "dim " << I << " of shapes=" << Spec.Name
             << " must be a positive integer or '?', got '" << Spec.Dims[I]
             << "'";
    const Dim &D = T.getDims()[I];
    if (D.isKnown() && D.getValue() != V)
      return emitError(Diags, *In) << "dim " << I << " of the input is "
                                   << D.getValue() << ", shapes= gives " << V;
    if (D.isSymbol() && failed(bind(S, D.getSymbol(), V, Source, Diags)))
      return failure();
    if (D.isUnknown())
      Direct.emplace_back(In, I, V);
  }
  return success();
}

LogicalResult FreezeDimsPass::collectBindings(FreezeState &S, Model &M,
                                              DiagnosticEngine &Diags) const {
  auto &Bindings = S.Bindings;
  auto &Direct = S.Direct;
  auto &Symbols = S.Symbols;
  (void)Bindings, (void)Direct, (void)Symbols;
  for (const std::string &Entry : Dims) {
    auto [Name, Text] = llvm::StringRef(Entry).split(':');
    Name = Name.trim();
    int64_t V;
    if (Name.empty() || Text.empty())
      return emitError(Diags) << "expected name:value, got '" << Entry << "'";
    if (!parseDimValue(Text, V))
      return emitError(Diags)
             << "the value of '" << Name
             << "' must be a positive integer, got '" << Text.trim() << "'";
    if (!Symbols.count(Name.str())) {
      if (Symbols.empty())
        return emitError(Diags) << "unknown symbol '" << Name
                                << "'; the model has no symbolic dims";
      return emitError(Diags)
             << "unknown symbol '" << Name
             << "'; the model's symbols are: " << joinSorted(Symbols);
    }
    if (failed(bind(S, Name, V, "dims=", Diags)))
      return failure();
  }
  std::set<std::string> Given;
  for (const ShapeSpec &Spec : Shapes) {
    if (!Given.insert(Spec.Name).second)
      return emitError(Diags)
             << "input '" << Spec.Name << "' is given two shapes";
    if (failed(applyShape(S, M, Spec, Diags)))
      return failure();
  }
  return success();
}

LogicalResult FreezeDimsPass::checkRanges(FreezeState &S, Model &M,
                                          DimRangeMap &Ranges,
                                          DiagnosticEngine &Diags) const {
  auto &Bindings = S.Bindings;
  auto &Direct = S.Direct;
  auto &Symbols = S.Symbols;
  (void)Bindings, (void)Direct, (void)Symbols;
  std::string Err;
  if (!getDimRanges(M, Ranges, Err))
    return emitError(Diags) << "cannot read the stored dim "
                               "ranges: "
                            << Err;
  for (const auto &[Symbol, B] : Bindings) {
    auto It = Ranges.find(Symbol);
    if (It != Ranges.end() && !It->second.contains(B.Value))
      return emitError(Diags)
             << "symbol '" << Symbol << "' is given " << B.Value << " ("
             << B.Source << "), outside its range "
             << printDimRange(It->second);
  }
  return success();
}

LogicalResult FreezeDimsPass::checkConstraints(FreezeState &S, Model &M,
                                               PassContext &Ctx) const {
  DiagnosticEngine &Diags = Ctx.getDiags();
  // The conditions are read off the model as it is, with its symbols, so
  // that the message says them in the user's terms. The pass rewrites the
  // types: it records the inferred ones first.
  ShapeInfo &Types = recordInferredTypes(M, Ctx);
  if (failed(Types.getResult()))
    return failure();
  DimAnalysis &DA = Ctx.getAnalysis<DimAnalysis>();
  DA.run();
  auto Value = [&](llvm::StringRef Sym) -> std::optional<int64_t> {
    auto It = S.Bindings.find(Sym.str());
    if (It == S.Bindings.end())
      return std::nullopt;
    return It->second.Value;
  };
  unsigned Broken = 0;
  for (const DimConstraint &C : DA.getConstraints()) {
    std::optional<bool> Holds = holdsAt(C, Value);
    if (!Holds || *Holds)
      continue;
    std::string Values;
    for (const std::string &Sym : C.symbols())
      Values += (Values.empty() ? "" : ", ") + Sym + "=" +
                std::to_string(*Value(Sym));
    auto D = C.N ? emitError(Diags, *C.N) : emitError(Diags);
    D << "the model cannot run at " << Values << ": it needs " << C.condition()
      << " (" << C.Why << ")";
    ++Broken;
  }
  // The relations the user asserted (set-dim-range{relations=...}).
  DimRelations Rels;
  std::string Err;
  if (!getDimRelations(M, Rels, Err))
    return emitError(Diags) << "cannot read the stored relations: " << Err;
  std::map<std::string, int64_t> Values = S.symbolValues();
  for (const DimRelation &R : Rels) {
    if (!R.isDecidedBy(Values)) {
      // W=H with only H frozen: W would stay dynamic though the relation
      // pins it to H's value. Freezing it too is the user's call.
      if (R.K == DimRelation::Equal &&
          (Values.count(R.Lhs) || Values.count(R.Rhs))) {
        bool LhsFrozen = Values.count(R.Lhs);
        const std::string &Free = LhsFrozen ? R.Rhs : R.Lhs;
        const std::string &Fixed = LhsFrozen ? R.Lhs : R.Rhs;
        emitError(Diags) << "the stored relation " << printDimRelation(R)
                         << " ties " << Free << " to the frozen " << Fixed
                         << "=" << Values.at(Fixed) << ": freeze " << Free
                         << "=" << Values.at(Fixed)
                         << " as well, or store other relations "
                            "(set-dim-range{relations=...})";
        ++Broken;
      }
      continue;
    }
    if (R.holds(Values))
      continue;
    emitError(Diags) << "the values break the stored relation "
                     << printDimRelationAt(R, Values);
    ++Broken;
  }
  if (Broken)
    return emitError(Diags) << Broken
                            << " condition(s) of the model broken by the "
                               "given values; nothing was frozen";
  return success();
}

/// `N=4, dim 1 of 'X'=8`: the gear's values at the frozen dims where
/// they differ from the frozen ones; empty when the gear agrees. \p Values
/// are the gear's symbol values.
static std::string
gearDisagreement(const FreezeState &S, const DimGear &Gear,
                 const std::map<std::string, int64_t> &Values) {
  std::string Why;
  auto Add = [&Why](const std::string &Part) {
    Why += (Why.empty() ? "" : ", ") + Part;
  };
  for (const auto &[Sym, V] : Values) {
    auto It = S.Bindings.find(Sym);
    if (It != S.Bindings.end() && It->second.Value != V)
      Add(Sym + "=" + std::to_string(V));
  }
  // Unknown dims set through shapes= have no symbol: compare in place.
  for (const auto &[In, Index, Val] : S.Direct)
    for (const GearShape &Shape : Gear)
      if (Shape.Input == In->getName() && Index < Shape.Dims.size() &&
          Shape.Dims[Index] != Val)
        Add("dim " + std::to_string(Index) + " of '" + Shape.Input +
            "'=" + std::to_string(Shape.Dims[Index]));
  return Why;
}

/// `N=1, dim 0 of 'X'=2`: the frozen values, for the refusal.
static std::string frozenValues(const FreezeState &S) {
  std::string Text;
  for (const auto &[Sym, B] : S.Bindings)
    Text += (Text.empty() ? "" : ", ") + Sym + "=" + std::to_string(B.Value);
  for (const auto &[In, Index, Val] : S.Direct)
    Text += (Text.empty() ? "" : ", ") + std::string("dim ") +
            std::to_string(Index) + " of '" + In->getName().str() +
            "'=" + std::to_string(Val);
  return Text;
}

LogicalResult FreezeDimsPass::checkGears(FreezeState &S, Model &M,
                                         GearCheck &Out,
                                         DiagnosticEngine &Diags) const {
  DimGears Stored;
  std::string Err;
  if (!getDimGears(M, Stored, Err))
    return emitError(Diags) << "cannot read the stored gears: " << Err;
  std::string Refused;
  for (const DimGear &Gear : Stored) {
    DimGear Normalized;
    std::map<std::string, int64_t> Values;
    if (!resolveDimGear(M, Gear, Normalized, Values, Err))
      return emitError(Diags)
             << "the stored gears do not fit the model: " << Err
             << " (set-dim-range{gears=...} replaces them)";
    std::string Why = gearDisagreement(S, Normalized, Values);
    if (Why.empty()) {
      Out.Kept.push_back(std::move(Normalized));
      continue;
    }
    Refused += (Refused.empty() ? "" : "; ") + std::string("gear '") +
               printDimGear(Normalized) + "' has " + Why;
    Out.Dropped.emplace_back(printDimGear(Normalized), Why);
  }
  if (Stored.empty() || !Out.Kept.empty())
    return success();
  return emitError(Diags)
         << "no stored gear agrees with the frozen values " << frozenValues(S)
         << ": " << Refused
         << "; the model is declared to run only at its gears "
            "(set-dim-range{gears=...}), so nothing was frozen";
}

/// After freezing: the kept gears without the inputs that became static
/// (none left: no gears). \p Kept agree with the frozen values, so each
/// resolves against the frozen model.
static LogicalResult storeKeptGears(Model &M, const DimGears &Kept,
                                    DiagnosticEngine &Diags) {
  DimGears Result;
  std::string Err;
  for (const DimGear &Gear : Kept) {
    DimGear Normalized;
    std::map<std::string, int64_t> Values;
    if (!resolveDimGear(M, Gear, Normalized, Values, Err))
      return emitError(Diags) << "cannot store the kept gears: " << Err;
    if (!Normalized.empty() && !llvm::is_contained(Result, Normalized))
      Result.push_back(std::move(Normalized));
  }
  DimGears Stored;
  if (!getDimGears(M, Stored, Err))
    return emitError(Diags) << "cannot read the stored gears: " << Err;
  if (Result != Stored && !setDimGears(M, Result, Err))
    return emitError(Diags) << "cannot store the kept gears: " << Err;
  return success();
}

using DimPlaces = std::set<std::pair<const Value *, unsigned>>;

/// The dims that are not numbers before freezing.
static DimPlaces symbolicDims(Model &M) {
  DimPlaces P;
  forEachRecordedDim(M, [&](Dim &D, const Value *V, unsigned Index) {
    if (V && !D.isKnown())
      P.insert({V, Index});
    return false;
  });
  return P;
}

/// Whether a 0 where a symbol was is a size the model cannot have: a
/// frozen input of 0, or a window op (convolution, pooling) or resampling
/// whose arithmetic went below one (an input shorter than its kernel). An
/// empty slice is a tensor like any other: MobileBERT's `x[:, 1:]` of one
/// token is [1,0,d], padded back to [1,1,d], and runs.
static bool zeroIsBroken(const Value *V) {
  const Node *Def = V ? V->getDefiningNode() : nullptr;
  return !Def || hasTrait(*Def, KernelOp) || hasTrait(*Def, Resampling);
}

/// After freezing: every dim is a size a tensor can have. A negative dim,
/// or a 0 where a symbol was that zeroIsBroken (empty constants such as
/// Resize's roi are fine), means an op's arithmetic went below zero; the
/// model would not run.
static LogicalResult checkFrozenDims(Model &M, const DimPlaces &WasSymbolic,
                                     DiagnosticEngine &Diags) {
  unsigned Bad = 0;
  forEachRecordedDim(M, [&](Dim &D, const Value *V, unsigned Index) {
    bool Broken =
        D.isKnown() && (D.getValue() < 0 ||
                        (D.getValue() == 0 && WasSymbolic.count({V, Index}) &&
                         zeroIsBroken(V)));
    if (Broken && Bad++ < 5) {
      const Node *Def = V ? V->getDefiningNode() : nullptr;
      auto Diag = Def ? emitError(Diags, *Def)
                  : V ? emitError(Diags, *V)
                      : emitError(Diags);
      Diag << "the frozen model gives "
           << (V ? "'" + V->getName().str() + "'" : std::string("a value"))
           << " dim " << Index << " = " << D.getValue();
    }
    return false;
  });
  if (Bad)
    return emitError(Diags) << Bad << " dim(s) <= 0 after freezing";
  // Conditions that are numbers now: each must hold.
  DimAnalysis DA(M);
  DA.run();
  unsigned Broken = 0;
  for (const std::string &C : DA.getConflicts()) {
    emitError(Diags) << "the frozen model contradicts itself: " << C;
    ++Broken;
  }
  for (const DimConstraint &C : DA.getConstraints()) {
    if (decide(C, SymbolDomain()) != Verdict::Fails)
      continue;
    auto Diag = C.N ? emitError(Diags, *C.N) : emitError(Diags);
    Diag << "the frozen model cannot run: " << C.condition() << " (" << C.Why
         << ")";
    ++Broken;
  }
  if (Broken)
    return emitError(Diags) << Broken << " broken condition(s) after freezing";
  return success();
}

LogicalResult FreezeDimsPass::foldUntilStable(Model &M, PassContext &Ctx) {
  DeduplicatingDiagnostics Inner(Ctx.getDiags());
  // The folding pipeline, built in code like any other: options are checked
  // by the same parser as on the command line.
  PassManagerOptions FoldOpts;
  // The outer pass manager verifies freeze-dims' result as a whole.
  FoldOpts.VerifyEach = false;
  PassManager Folders(FoldOpts);
  std::string Err;
  if (failed(Folders.addPipeline(
          "constant-fold{size-limit=" + std::to_string(SizeLimit.getValue()) +
              "},fold-shapes",
          Err)))
    return emitError(Ctx.getDiags()) << "size-limit: " << Err;

  for (int64_t Round = 0;; ++Round) {
    // Inference first: folding needs the types that freezing made static.
    if (failed(inferShapes(M, Inner.get())))
      return emitError(Ctx.getDiags())
             << "the frozen model contradicts its declared types";
    if (!Fold)
      return success();
    bool Changed = false;
    AnalysisManager FoldAM(M, Inner.get());
    if (failed(Folders.run(M, Inner.get(), FoldAM, &Changed)))
      return failure();
    if (!Changed)
      return success();
    Ctx.Changed = true;
    if (Round + 1 >= MaxRounds) {
      emitWarning(Ctx.getDiags())
          << "folding still changes the model after " << MaxRounds << " rounds";
      return inferShapes(M, Inner.get());
    }
  }
}

/// After freezing: the stored relations without the frozen symbols. One
/// they decide held (checkConstraints) and goes; a sum bound keeps its
/// other terms with the frozen ones taken off the bound (`past+seq<=64`
/// with seq=16 is `past<=48`). An equality with one side frozen was
/// refused before.
static LogicalResult storeKeptRelations(Model &M, const FreezeState &S,
                                        DiagnosticEngine &Diags) {
  DimRelations Stored, Kept;
  std::string Err;
  if (!getDimRelations(M, Stored, Err))
    return emitError(Diags) << "cannot read the stored relations: " << Err;
  std::map<std::string, int64_t> Values = S.symbolValues();
  for (const DimRelation &R : Stored) {
    if (R.isDecidedBy(Values)) {
      emitRemark(Diags) << "stored relation " << printDimRelationAt(R, Values)
                        << " dropped: its symbols are frozen";
      continue;
    }
    if (R.K != DimRelation::AtMost) {
      Kept.push_back(R);
      continue;
    }
    DimRelation Rest = R;
    Rest.Terms.clear();
    int64_t Term = 0;
    for (const auto &[Sym, Coef] : R.Terms) {
      auto It = Values.find(Sym);
      if (It == Values.end())
        Rest.Terms.emplace_back(Sym, Coef);
      else if (__builtin_mul_overflow(Coef, It->second, &Term) ||
               __builtin_sub_overflow(Rest.Bound, Term, &Rest.Bound))
        Rest.Bound = -1;
    }
    // No value of the other symbols (never negative) meets it.
    if (Rest.Bound < 0)
      return emitError(Diags) << "the values break the stored relation "
                              << printDimRelationAt(R, Values)
                              << " whatever the other symbols are";
    if (Rest.Terms.size() != R.Terms.size())
      emitRemark(Diags) << "stored relation " << printDimRelation(R)
                        << " becomes " << printDimRelation(Rest)
                        << " with the frozen values";
    Kept.push_back(std::move(Rest));
  }
  if (Kept.size() == Stored.size() &&
      std::equal(Kept.begin(), Kept.end(), Stored.begin()))
    return success();
  if (!setDimRelations(M, Kept, Err))
    return emitError(Diags) << "cannot store the kept relations: " << Err;
  return success();
}

LogicalResult FreezeDimsPass::run(Model &M, PassContext &Ctx) {
  DiagnosticEngine &Diags = Ctx.getDiags();
  FreezeState S;
  auto &Bindings = S.Bindings;
  auto &Direct = S.Direct;
  auto &Symbols = S.Symbols;
  forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
    if (D.isSymbol())
      Symbols.insert(D.getSymbol().str());
    return false;
  });
  // Validate everything before changing anything. applyShape may give an
  // input of unknown rank its rank; that is undone on failure.
  std::vector<std::pair<Value *, Type>> Saved;
  for (const std::unique_ptr<Value> &V : M.getGraph().getInputs())
    Saved.emplace_back(V.get(), V->getType());
  DimRangeMap Ranges;
  GearCheck Gears;
  if (failed(collectBindings(S, M, Diags)) ||
      failed(checkRanges(S, M, Ranges, Diags)) ||
      failed(checkGears(S, M, Gears, Diags)) ||
      failed(checkConstraints(S, M, Ctx))) {
    for (auto &[V, T] : Saved)
      V->setType(T);
    return failure();
  }
  // Said before anything changes, while the frozen values are at hand.
  for (const auto &[Gear, Why] : Gears.Dropped)
    emitRemark(Diags) << "stored gear '" << Gear << "' dropped: it has " << Why
                      << ", the model is frozen at " << frozenValues(S);
  // Frozen symbols are gone: so are their ranges.
  bool DroppedRange = false;
  for (const auto &Entry : Bindings)
    DroppedRange |= Ranges.erase(Entry.first) > 0;
  std::string Err;
  if (DroppedRange && !setDimRanges(M, Ranges, Err))
    return emitError(Diags) << "cannot store the dim ranges: " << Err;
  if (failed(storeKeptRelations(M, S, Diags)))
    return failure();

  DimPlaces WasSymbolic = symbolicDims(M);
  forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
    if (!D.isSymbol())
      return false;
    auto It = Bindings.find(D.getSymbol().str());
    if (It == Bindings.end())
      return false;
    Dim Frozen = Dim::known(It->second.Value);
    Frozen.setDenotation(D.getDenotation());
    D = Frozen;
    return true;
  });
  for (auto &[V, Index, Val] : Direct) {
    Dim &D = V->getMutableType().getMutableDims()[Index];
    Dim Frozen = Dim::known(Val);
    Frozen.setDenotation(D.getDenotation());
    D = Frozen;
  }
  if (!Bindings.empty() || !Direct.empty())
    Ctx.Changed = true;
  if (failed(storeKeptGears(M, Gears.Kept, Diags)))
    return failure();
  if (failed(foldUntilStable(M, Ctx)))
    return failure();
  return checkFrozenDims(M, WasSymbolic, Diags);
}

} // namespace

std::unique_ptr<Pass> onnxopt::createFreezeDimsPass() {
  return std::make_unique<FreezeDimsPass>();
}
