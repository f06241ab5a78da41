//===- UnifyDims.cpp - One name per dim, in terms of the inputs -----------===//
//
// Before:  (float[batch,3,height,width] input)
//            => (float[batch,dim1,4] boxes, float[batch,dim2,2] scores)
//          # dim1 and dim2 are both the anchor count
// After:   (float[batch,3,height,width] input)
//            => (float[batch,boxes_dim1,4] boxes, float[batch,boxes_dim1,2]
//            scores)
//          metadata onnx_opt.derived_dims: boxes_dim1=2*ceil(height/8)*...
//
// Runs shape inference and the dim algebra, then gives every class of
// provably equal dims one name, the first that applies:
//  1. the name given for it with names=boxes.1:num_anchors (dim 1 of the
//     value `boxes`);
//  2. a constant when the class holds one (the symbol was a known value);
//  3. a name a person chose: the first symbol of the class, in the order
//     inputs, outputs, other values, that an exporter did not make up (see
//     isExporterMadeSymbol for the list). Two such names in one class are
//     reported and the first is kept;
//  4. an input symbol, even an exporter-made one (the inputs define the rest);
//  5. with derived=position (the default): a dim of a graph output is named
//     after the first output it appears in, `<output>_dim<K>` (outputs are
//     what users and downstream tools see, and no pass renames them, so
//     running fold-shapes first does not change the name); a derived dim
//     only inner values have is named after its expression when that is
//     short (`ceil(height/2)` -> `height_cdiv2`); else d0, d1, ...
//     derived=expr uses the expression itself, derived=expr-name the
//     expression as an identifier on every dim (`W_div4`, outputs too; the
//     position name when that would be long), derived=fresh d0, d1, ...
//  Before all this, declared names are checked (DeclaredNameCheck): a name
//  on dims the nodes prove different is split.
// The expression of every named derived dim is recorded in the model's
// metadata_props (DerivedDims.h), shown by --summary and the text printer.
// Output is deterministic and a second run changes nothing. Dims that
// contradict each other (declared S where one node implies 4 and another 5)
// are reported as warnings and left as they are.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DerivedDims.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/DimNameParser.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Pass/PipelineParser.h"
#include "onnxopt/Passes.h"
#include "RecordedTypes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace onnxopt;

namespace {

/// Which of a list of symbols are proven equal to an expression, found
/// through the expression's class instead of by trying each symbol (a
/// model whose inputs each have their own symbol made naming quadratic:
/// 10k inputs, 12 s). Answers as a loop over the list in order would.
class SymbolsByClass {
public:
  SymbolsByClass(const DimAnalysis &DA, llvm::ArrayRef<std::string> Symbols)
      : DA(DA), Symbols(Symbols) {
    for (size_t I = 0; I < Symbols.size(); ++I) {
      DimExpr S = DimExpr::symbol(Symbols[I]);
      ByName.try_emplace(Symbols[I], Span{I, I}).first->second.Last = I;
      if (std::optional<unsigned> C = DA.getClassId(S))
        ByClass.try_emplace(*C, Span{I, I}).first->second.Last = I;
    }
  }
  /// The first (\p Last: the last) symbol of the list proven equal to
  /// \p E, or null.
  const std::string *find(const DimExpr &E, bool Last = false) const {
    std::optional<size_t> Best;
    auto Take = [&](const Span &Sp) {
      size_t I = Last ? Sp.Last : Sp.First;
      if (!Best || (Last ? I > *Best : I < *Best))
        Best = I;
    };
    if (E.isSymbol()) {
      auto It = ByName.find(E.getSymbol());
      if (It != ByName.end())
        Take(It->second);
    }
    if (std::optional<unsigned> C = DA.getClassId(E)) {
      auto It = ByClass.find(*C);
      if (It != ByClass.end())
        Take(It->second);
    }
    return Best ? &Symbols[*Best] : nullptr;
  }

private:
  struct Span {
    size_t First, Last;
  };
  const DimAnalysis &DA;
  llvm::ArrayRef<std::string> Symbols;
  llvm::StringMap<Span> ByName;
  llvm::DenseMap<unsigned, Span> ByClass;
};

/// `names=` entries: `value.K:name`. Value names may hold '.' and ':', so
/// the name is after the last ':' and the index after the last '.' before.
bool checkNameEntry(llvm::StringRef Entry, std::string &Error) {
  auto [Where, Name] = Entry.rsplit(':');
  auto [ValueName, IndexText] = Where.rsplit('.');
  unsigned Index;
  if (Name.empty() || ValueName.empty() || Where == Entry ||
      ValueName == Where || IndexText.getAsInteger(10, Index)) {
    Error = "expected value.dim:name (e.g. boxes.1:num_anchors), got '" +
            Entry.str() + "'";
    return false;
  }
  if (llvm::isDigit(Name.front()) ||
      Name.find_first_of(" ,:[]{}()<>=\"'?") != llvm::StringRef::npos) {
    Error = "'" + Name.str() + "' is not a valid dim name";
    return false;
  }
  return true;
}

/// A dim name made from a value name: `boxes` -> `boxes_dim1`,
/// `onnx::Conv_3` -> `onnx__Conv_3_dim1`.
std::string positionName(llvm::StringRef ValueName, unsigned Index) {
  std::string S;
  for (char C : ValueName)
    S += llvm::isAlnum(C) || C == '_' ? C : '_';
  if (S.empty() || llvm::isDigit(S.front()))
    S = "v" + S;
  return S + "_dim" + std::to_string(Index);
}

/// A dim name spelled after a short expression: `ceil(height/2)` ->
/// `height_cdiv2`, `floor(W/4)` -> `W_div4`, `8*H*W` -> `d8_x_H_x_W`,
/// `seq+1` -> `seq_plus_1`; "" when the expression is too long to be a
/// readable name.
std::string expressionName(llvm::StringRef Expr, size_t MaxSize = 24) {
  std::string S;
  std::vector<char> Enclosing;
  for (size_t I = 0; I < Expr.size(); ++I) {
    llvm::StringRef Rest = Expr.drop_front(I);
    if (Rest.startswith("ceil(")) {
      Enclosing.push_back('c');
      I += 4;
    } else if (Rest.startswith("floor(")) {
      Enclosing.push_back('f');
      I += 5;
    } else if (Expr[I] == '(') {
      Enclosing.push_back('p');
    } else if (Expr[I] == ')') {
      if (!Enclosing.empty())
        Enclosing.pop_back();
    } else if (Expr[I] == '/') {
      S += !Enclosing.empty() && Enclosing.back() == 'c' ? "_cdiv" : "_div";
    } else if (Expr[I] == '*') {
      S += "_x_";
    } else if (Expr[I] == '+') {
      S += "_plus_";
    } else if (Expr[I] == '-') {
      S += "_minus_";
    } else {
      S += llvm::isAlnum(Expr[I]) || Expr[I] == '_' ? Expr[I] : '_';
    }
  }
  if (!S.empty() && llvm::isDigit(S.front()))
    S = "d" + S;
  return S.size() <= MaxSize ? S : "";
}

/// Values of the input symbols at which \p A and \p B differ while every
/// condition the nodes put on those symbols holds (and every stored
/// range): a shape the model runs at where one name cannot label both.
/// A witness proves a difference; finding none decides nothing (the
/// points tried are few), so the caller then keeps the name.
std::optional<std::map<std::string, int64_t>> findDifference(
    const DimExpr &A, const DimExpr &B, llvm::ArrayRef<std::string> Symbols,
    llvm::ArrayRef<DimConstraint> Conditions, const DimRangeMap &Ranges) {
  if (A.isConstant() && B.isConstant())
    return A == B ? std::nullopt
                  : std::optional<std::map<std::string, int64_t>>(
                        std::map<std::string, int64_t>());
  // Large sizes divisible by the usual strides, the same and apart, odd
  // ones, and small ones.
  const std::function<int64_t(size_t)> Points[] = {
      [](size_t) { return 640; },
      [](size_t I) { return 640 + 128 * static_cast<int64_t>(I); },
      [](size_t I) { return 643 + 130 * static_cast<int64_t>(I); },
      [](size_t I) { return 32 + 32 * static_cast<int64_t>(I); },
      [](size_t I) { return 7 + 2 * static_cast<int64_t>(I); },
      [](size_t) { return 1; }};
  for (const auto &Point : Points) {
    std::map<std::string, int64_t> Values;
    for (size_t I = 0; I < Symbols.size(); ++I) {
      int64_t V = Point(I);
      auto R = Ranges.find(Symbols[I]);
      if (R != Ranges.end())
        V = std::min(std::max(V, R->second.Min), R->second.Max);
      Values[Symbols[I]] = V;
    }
    SymbolValues At = [&](llvm::StringRef S) -> std::optional<int64_t> {
      auto It = Values.find(S.str());
      return It == Values.end() ? std::nullopt : std::optional(It->second);
    };
    bool Runs = llvm::all_of(Conditions, [&](const DimConstraint &C) {
      if (C.K == DimConstraint::DataDependent)
        return true;
      std::optional<bool> H = holdsAt(C, At);
      return H && *H;
    });
    if (!Runs)
      continue;
    std::optional<int64_t> VA = A.evaluate(At), VB = B.evaluate(At);
    if (VA && VB && *VA != *VB)
      return Values;
  }
  return std::nullopt;
}

/// `H=640, W=640: 6400 and 1600`: the values of the symbols \p A and \p B
/// mention, and theirs.
std::string printValues(const std::map<std::string, int64_t> &Values,
                        const DimExpr &A, const DimExpr &B) {
  std::set<std::string> Used;
  for (const DimExpr *E : {&A, &B})
    E->forEachSymbol([&](llvm::StringRef S) { Used.insert(S.str()); });
  std::vector<std::string> Parts;
  for (const std::string &S : Used)
    Parts.push_back(S + "=" + std::to_string(Values.at(S)));
  SymbolValues At = [&](llvm::StringRef S) -> std::optional<int64_t> {
    auto It = Values.find(S.str());
    return It == Values.end() ? std::nullopt : std::optional(It->second);
  };
  std::optional<int64_t> VA = A.evaluate(At), VB = B.evaluate(At);
  std::string Numbers =
      VA && VB ? ": " + std::to_string(*VA) + " and " + std::to_string(*VB)
               : "";
  return llvm::join(Parts, ", ") + Numbers;
}

/// Dim names written by exporters are claims: `dim` on twelve outputs of
/// different sizes says they are equal, `((samples//5)) - 1` says what
/// the dim is. The dim analysis unites every recorded dim with what its
/// node computes, so a false claim would merge dims that differ and label
/// them all with one expression. This check runs the analysis without the
/// recorded dims, and where a name labels dims proven different (a shape
/// the model runs at where they differ, or two numbers), keeps the name
/// for the dims of its first class (the expression a parsed name spells,
/// else the first place in input/output/model order) and makes the others
/// unknown, so that naming gives them derived names. Where nothing is
/// proven, the name stays: it is the exporter's claim.
class DeclaredNameCheck {
public:
  DeclaredNameCheck(Model &M, DiagnosticEngine &Diags, bool Explain)
      : M(M), Diags(Diags), Explain(Explain), Computed(M) {
    Computed.setUniteRecorded(false);
  }

  /// Returns true if a dim was relabelled.
  bool run() {
    Computed.run();
    std::string Error;
    getDimRanges(M, Ranges, Error); // unreadable ranges: defaults
    Conditions = getInputConstraints(Computed);
    collectPlaces();
    bool Changed = false;
    for (auto &[Symbol, Places] : BySymbol)
      Changed |= checkName(Symbol, Places);
    return Changed;
  }

private:
  struct Place {
    Dim *D;
    const Value *V;
    unsigned Index;
    /// What the nodes compute there, when it is a number or in input
    /// symbols.
    std::optional<DimExpr> Proved;
  };

  Model &M;
  DiagnosticEngine &Diags;
  bool Explain;
  DimAnalysis Computed;
  DimRangeMap Ranges;
  std::vector<DimConstraint> Conditions;
  /// The places of each recorded symbol, symbols in order of first place.
  std::vector<std::pair<std::string, std::vector<Place>>> BySymbol;

  /// Collects the places in input/output/model order: inputs first, then
  /// outputs, then the other values, each group in model order; a place
  /// (value, index) counts once, where it comes first.
  void collectPlaces() {
    llvm::DenseSet<const Value *> Outputs;
    for (const Value *V : M.getGraph().getOutputs())
      Outputs.insert(V);
    // One list per group instead of a stable sort of every place by group.
    std::vector<Place> ByRank[3];
    // A value's dims are visited together, so a place seen twice (dims of
    // nested element types share indices) is one of the current value's.
    const Value *Current = nullptr;
    llvm::SmallVector<unsigned, 4> SeenOfCurrent;
    forEachRecordedDim(M, [&](Dim &D, const Value *V, unsigned Index) {
      if (!D.isSymbol() || !V)
        return false;
      if (V != Current) {
        Current = V;
        SeenOfCurrent.clear();
      }
      if (llvm::is_contained(SeenOfCurrent, Index))
        return false;
      SeenOfCurrent.push_back(Index);
      Place P{&D, V, Index, std::nullopt};
      const std::vector<DimExpr> *Dims = Computed.getDims(*V);
      if (Dims && Index < Dims->size()) {
        DimExpr E = Computed.getBest((*Dims)[Index]);
        if (E.isConstant() || Computed.isInputExpressible(E))
          P.Proved = std::move(E);
      }
      int Rank = V->isGraphInput() ? 0 : Outputs.count(V) ? 1 : 2;
      ByRank[Rank].push_back(std::move(P));
      return false;
    });
    llvm::StringMap<unsigned> SymbolIndex;
    for (std::vector<Place> &Group : ByRank)
      for (Place &P : Group) {
        auto [It, New] =
            SymbolIndex.try_emplace(P.D->getSymbol(), BySymbol.size());
        if (New)
          BySymbol.emplace_back(P.D->getSymbol().str(), std::vector<Place>());
        BySymbol[It->second].second.push_back(std::move(P));
      }
  }

  /// The expression a name spells, when it is one over input symbols.
  std::optional<DimExpr> spelled(llvm::StringRef Symbol) const {
    if (!isExpressionDimName(Symbol))
      return std::nullopt;
    DimExpr E = *parseDimName(Symbol);
    if (!Computed.isInputExpressible(E))
      return std::nullopt;
    return Computed.getBest(E);
  }

  static std::string where(const Place &P) {
    return "'" + P.V->getName().str() + "' dim " + std::to_string(P.Index);
  }

  bool checkName(const std::string &Symbol, std::vector<Place> &Places) {
    std::optional<DimExpr> Claim = spelled(Symbol);
    const Place *First = nullptr;
    for (const Place &P : Places)
      if (P.Proved) {
        First = &P;
        break;
      }
    if (!First)
      return false;
    // The classes the name keeps, pairwise not proven different.
    std::vector<DimExpr> Kept{Claim ? *Claim : *First->Proved};
    std::map<std::string, bool> Split; // by key of the proved expression
    std::vector<std::string> Why;
    for (const Place &P : Places) {
      if (!P.Proved || Split.count(P.Proved->key()))
        continue;
      bool Differs = false;
      for (const DimExpr &K : Kept) {
        if (*P.Proved == K)
          continue;
        std::optional<std::map<std::string, int64_t>> At = findDifference(
            *P.Proved, K, Computed.getInputSymbols(), Conditions, Ranges);
        if (!At)
          continue;
        Differs = true;
        std::string Values = printValues(*At, *P.Proved, K);
        Why.push_back(where(P) + " is " + P.Proved->str() + ", not " + K.str() +
                      (Values.empty() ? "" : " (at " + Values + ")"));
        break;
      }
      Split[P.Proved->key()] = Differs;
      if (!Differs &&
          llvm::none_of(Kept, [&](const DimExpr &K) { return K == *P.Proved; }))
        Kept.push_back(*P.Proved);
    }
    unsigned Relabelled = 0;
    for (Place &P : Places) {
      if (!P.Proved || !Split[P.Proved->key()])
        continue;
      if (Explain)
        llvm::errs() << "declared name '" << Symbol << "' removed from "
                     << where(P) << ": the nodes compute " << P.Proved->str()
                     << "\n";
      *P.D = Dim::unknown();
      ++Relabelled;
    }
    if (!Relabelled)
      return false;
    std::string Shown = llvm::join(llvm::makeArrayRef(Why).take_front(3), "; ");
    if (Why.size() > 3)
      Shown += "; and " + std::to_string(Why.size() - 3) + " more";
    if (Claim)
      emitWarning(Diags) << "dim name '" << Symbol << "' says " << Claim->str()
                         << ", which the nodes contradict: " << Shown << "; "
                         << Relabelled << " dims take what is proved";
    else
      emitWarning(Diags) << "dim name '" << Symbol
                         << "' labels dims that differ: " << Shown << "; '"
                         << Symbol << "' stays on " << Kept.front().str()
                         << ", " << Relabelled << " dims get derived names";
    return true;
  }
};

class UnifyDimsPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "unify-dims"; }
  llvm::StringRef getDescription() const override {
    return "give provably equal dims one name: names people chose win, "
           "derived dims get a short stable name and their expression is "
           "recorded";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    DiagnosticEngine &Diags = Ctx.getDiags();
    // Shared analyses: after infer-shapes (or another pass that kept them)
    // nothing is inferred again.
    // The pass rewrites the recorded dims: it records the inferred types
    // first (as infer-shapes does; nothing to do after it).
    bool Cached = Ctx.getAnalysisManager().isCached<ShapeInfo>();
    ShapeInfo &Types = recordInferredTypes(M, Ctx);
    if (failed(Types.getResult()))
      return Cached ? emitError(Diags) << "shape inference failed" : failure();
    if (DeclaredNameCheck(M, Diags, Explain).run()) {
      // Recorded dims changed: the dims analysis read the old ones.
      Ctx.getAnalysisManager().invalidate(
          PreservedAnalyses::none().preserve<ShapeInfo>());
      Ctx.Changed = true;
    }
    DimAnalysis &DA = Ctx.getAnalysis<DimAnalysis>();
    DA.run();
    for (const std::string &Conflict : DA.getConflicts())
      emitWarning(Diags) << "dims contradict each other: " << Conflict;
    if (Explain)
      DA.explain(llvm::errs());

    Namer Names(M, DA, Derived.getValue());
    if (failed(Names.addForcedNames(Diags, NamesOpt.getValue())))
      return failure();
    Names.reportUserNameClashes(Diags);

    std::vector<std::string> Kept = inputSymbolsProvenNumbers(M, DA, Diags);
    SymbolsByClass KeptByClass(DA, Kept);
    bool Changed = false;
    // The symbols the model has after renaming, collected on the way.
    llvm::StringSet<> Symbols;
    forEachRecordedDim(M, [&](Dim &D, const Value *V, unsigned Index) {
      std::optional<Dim> New = Names.rename(D, V, Index);
      // A dim equal to a kept input symbol keeps that symbol's name: the
      // number comes from declared types, not from what the nodes compute.
      if (New && New->isKnown() && D.isSymbol())
        if (const std::string *S =
                KeptByClass.find(DimExpr::symbol(D.getSymbol()), /*Last=*/true))
          New = Dim::symbol(*S);
      bool Renamed = New && *New != D;
      if (Renamed) {
        New->setDenotation(D.getDenotation());
        D = std::move(*New);
        Changed = true;
      }
      if (D.isSymbol())
        Symbols.insert(D.getSymbol());
      return Renamed;
    });
    if (failed(recordExpressions(M, Diags, Names, Symbols)))
      return failure();
    if (Changed)
      Ctx.Changed = true;
    return success();
  }

private:
  Option<std::string> Derived{
      *this, "derived",
      "name of dims derived from the inputs: 'position' (where the dim "
      "first appears, e.g. boxes_dim1), 'expr' (the expression, e.g. "
      "ceil(H/8)), 'expr-name' (the expression as an identifier, e.g. "
      "H_cdiv8, on outputs too) or 'fresh' (d0, d1, ...)",
      "position", oneOf({"position", "expr", "expr-name", "fresh"})};
  ListOption<std::string> NamesOpt{
      *this, "names",
      "names for the dims at given places, each value.dim:name (e.g. "
      "boxes.1:num_anchors names dim 1 of boxes and every dim equal to it)",
      checkedBy(checkNameEntry)};
  Option<bool> Explain{*this, "explain",
                       "print each class of equal dims with the nodes that "
                       "prove it (to stderr)",
                       false};

  /// Symbols of the main graph's inputs that the algebra proves to be a
  /// number. Replacing them would narrow what the model accepts (ONNX
  /// Runtime runs a model whose declared output says [1,10] at batch 3), so
  /// they stay symbolic, and the user hears why.
  static std::vector<std::string>
  inputSymbolsProvenNumbers(Model &M, const DimAnalysis &DA,
                            DiagnosticEngine &Diags) {
    std::vector<std::string> Kept;
    for (const std::unique_ptr<Value> &In : M.getGraph().getInputs()) {
      if (In->hasInitializer() || !In->getType().isTensor() ||
          !In->getType().hasShape())
        continue;
      for (const Dim &D : In->getType().getDims()) {
        if (!D.isSymbol() || llvm::is_contained(Kept, D.getSymbol().str()))
          continue;
        DimExpr Best = DA.getBest(DimExpr::symbol(D.getSymbol()));
        if (!Best.isConstant())
          continue;
        Kept.push_back(D.getSymbol().str());
        emitWarning(Diags, *In)
            << "input dim '" << D.getSymbol() << "' is proven to be "
            << Best.getConstant()
            << " (the declared types or a node need it); it stays symbolic, "
               "so the model accepts what it accepted before (see "
               "infer-shapes{constraints=true})";
      }
    }
    return Kept;
  }

  /// Decides the new name of every dim; deterministic in model order.
  class Namer {
  public:
    Namer(Model &M, DimAnalysis &DA, llvm::StringRef Mode)
        : M(M), DA(DA), InputSymbols(DA, DA.getInputSymbols()),
          Mode(Mode.str()) {
      collectPlaces();
    }

    /// Applies names=; fails on places that do not exist or hold no
    /// symbolic dim, and on two names for one dim.
    LogicalResult addForcedNames(DiagnosticEngine &Diags,
                                 llvm::ArrayRef<std::string> Entries) {
      std::map<std::string, std::string> ClassOfName;
      for (const std::string &Entry : Entries) {
        auto [Where, Name] = llvm::StringRef(Entry).rsplit(':');
        auto [ValueName, IndexText] = Where.rsplit('.');
        unsigned Index = 0;
        IndexText.getAsInteger(10, Index);
        const Value *V = findMainValue(ValueName);
        if (!V) {
          std::string Hint = suggestClosest(ValueName, ValueNames);
          return emitError(Diags)
                 << "names= gives a name to '" << ValueName
                 << "', which is not a value of the main graph"
                 << (Hint.empty() ? "" : "; did you mean '" + Hint + "'?");
        }
        if (!V->getType().hasShape() || Index >= V->getType().getRank())
          return emitError(Diags)
                 << "'" << ValueName << "' has no dim " << Index
                 << (V->getType().hasShape()
                         ? " (its rank is " +
                               std::to_string(V->getType().getRank()) + ")"
                         : " (its rank is unknown)");
        std::optional<DimExpr> Class =
            classOf(V->getType().getDims()[Index], V, Index);
        if (!Class || Class->isConstant())
          return emitError(Diags)
                 << "dim " << Index << " of '" << ValueName << "' is "
                 << (Class ? "the constant " +
                                 std::to_string(Class->getConstant())
                           : std::string("not known to the dim algebra"))
                 << "; there is no symbol to name";
        const std::string &Key = Class->key();
        auto [It, New] = Forced.emplace(Key, Name.str());
        if (!New && It->second != Name)
          return emitError(Diags) << "names= gives one dim two names, '"
                                  << It->second << "' and '" << Name << "'";
        auto [NIt, NNew] = ClassOfName.emplace(Name.str(), Key);
        if (!NNew && NIt->second != Key)
          return emitError(Diags) << "names= gives the name '" << Name
                                  << "' to two dims not proven equal";
        // A name another symbol already has would merge the two.
        if (Taken.count(Name) && !DA.provenEqual(DimExpr::symbol(Name), *Class))
          return emitError(Diags)
                 << "'" << Name << "' already names another dim of the model";
        Taken.insert(Name);
      }
      return success();
    }

    /// One warning per class that holds two names people chose.
    void reportUserNameClashes(DiagnosticEngine &Diags) {
      for (const auto &[Key, Syms] : UserNames) {
        if (Syms.size() < 2 || Forced.count(Key))
          continue;
        std::vector<std::string> Quoted;
        for (const std::string &S : Syms)
          Quoted.push_back("'" + S + "'");
        emitWarning(Diags) << llvm::join(Quoted, " and ")
                           << " name the same dim (the graph proves them "
                              "equal); keeping '"
                           << Syms.front()
                           << "', the first in input/output order";
      }
    }

    std::optional<Dim> rename(const Dim &D, const Value *V, unsigned Index) {
      if (D.isKnown())
        return std::nullopt;
      // A symbol that a contradiction involves stays as it is.
      if (D.isSymbol() && factsOf(D.getSymbol()).Conflicted)
        return std::nullopt;
      std::optional<DimExpr> Class = classOf(D, V, Index);
      if (!Class)
        return std::nullopt;
      return nameOf(*Class, D.isSymbol() ? D.getSymbol() : "", V, Index);
    }

    /// Name -> expression of every derived class that got a name other
    /// than its expression.
    const DerivedDimMap &getDerived() const { return DerivedExprs; }

  private:
    Model &M;
    DimAnalysis &DA;
    /// The main graph's input symbols, the names a class takes first.
    SymbolsByClass InputSymbols;
    std::string Mode;
    llvm::StringSet<> Taken;
    /// Class key -> names= name.
    std::map<std::string, std::string> Forced;
    /// Class key -> names people chose, in input/output order.
    std::map<std::string, std::vector<std::string>> UserNames;
    /// Class key -> (value name, dim index) where the class first appears.
    llvm::StringMap<std::pair<std::string, unsigned>> FirstPlace;
    /// Class key -> chosen dim.
    llvm::StringMap<Dim> Chosen;
    DerivedDimMap DerivedExprs;
    std::vector<std::string> ValueNames;
    llvm::StringSet<> OutputNames;
    unsigned NextFresh = 0;

    /// What the algebra says about one symbol, asked once per symbol: the
    /// walks below visit every recorded dim, and most dims of a large
    /// model repeat a few symbols.
    struct SymbolFacts {
      bool Conflicted = false;
      DimExpr Best;
    };
    mutable llvm::StringMap<SymbolFacts> Symbols;

    const SymbolFacts &factsOf(llvm::StringRef Symbol) const {
      auto [It, New] = Symbols.try_emplace(Symbol);
      if (New) {
        DimExpr E = DimExpr::symbol(Symbol);
        It->second.Conflicted = DA.isConflicted(E);
        It->second.Best = DA.getBest(E);
      }
      return It->second;
    }

    /// The class of a recorded dim (its best expression); none for known
    /// dims and unknown dims the algebra cannot express.
    std::optional<DimExpr> classOf(const Dim &D, const Value *V,
                                   unsigned Index) const {
      if (D.isKnown())
        return DimExpr::constant(D.getValue());
      if (D.isSymbol())
        return factsOf(D.getSymbol()).Best;
      const std::vector<DimExpr> *Dims = V ? DA.getDims(*V) : nullptr;
      if (!Dims || Index >= Dims->size())
        return std::nullopt;
      DimExpr E = DA.getBest((*Dims)[Index]);
      if (!E.isConstant() && !DA.isInputExpressible(E))
        return std::nullopt;
      return E;
    }

    const Value *findMainValue(llvm::StringRef Name) const {
      const Graph &G = M.getGraph();
      for (const auto &V : G.getInputs())
        if (V->getName() == Name)
          return V.get();
      for (const Node &N : G.getNodes())
        for (unsigned I = 0; I < N.getNumResults(); ++I)
          if (const Value *V = N.getResult(I))
            if (V->getName() == Name)
              return V;
      return nullptr;
    }

    /// Walks the dims in input/output order (main graph inputs, outputs,
    /// then every recorded dim in model order) to find names people chose
    /// and where each class first appears.
    void collectPlaces() {
      Graph &G = M.getGraph();
      std::set<std::pair<std::string, std::string>> SeenUser;
      auto Visit = [&](const Dim &D, const Value *V, unsigned Index,
                       bool IsInput) {
        if (D.isKnown())
          return;
        if (D.isSymbol() && factsOf(D.getSymbol()).Conflicted)
          return;
        std::optional<DimExpr> Class = classOf(D, V, Index);
        if (!Class || Class->isConstant())
          return;
        if (D.isSymbol() && !isExporterMadeSymbol(D.getSymbol()) &&
            SeenUser.emplace(Class->key(), D.getSymbol().str()).second)
          UserNames[Class->key()].push_back(D.getSymbol().str());
        // Inputs are named by their own symbols; places start at outputs.
        // The first place is kept: look before copying the value's name.
        if (V && !IsInput && !FirstPlace.count(Class->key()))
          FirstPlace.try_emplace(Class->key(), V->getName().str(), Index);
      };
      for (const auto &V : G.getInputs()) {
        if (V->hasInitializer())
          continue;
        ValueNames.push_back(V->getName().str());
        llvm::ArrayRef<Dim> Dims = V->getType().getDims();
        for (unsigned I = 0; I < Dims.size(); ++I)
          Visit(Dims[I], V.get(), I, /*IsInput=*/true);
      }
      for (const Value *V : G.getOutputs()) {
        ValueNames.push_back(V->getName().str());
        OutputNames.insert(V->getName().str());
        llvm::ArrayRef<Dim> Dims = V->getType().getDims();
        for (unsigned I = 0; I < Dims.size(); ++I)
          Visit(Dims[I], V, I, /*IsInput=*/false);
      }
      // The same walk collects the names already taken (they are read only
      // after the constructor).
      forEachRecordedDim(M, [&](Dim &D, const Value *V, unsigned Index) {
        if (D.isSymbol())
          Taken.insert(D.getSymbol());
        bool IsInput = V && V->isGraphInput();
        Visit(D, V, Index, IsInput);
        return false;
      });
    }

    Dim fresh() {
      while (true) {
        std::string Name = "d" + std::to_string(NextFresh++);
        if (Taken.insert(Name).second)
          return Dim::symbol(Name);
      }
    }

    Dim unique(std::string Name) {
      if (Taken.insert(Name).second)
        return Dim::symbol(Name);
      for (unsigned I = 2;; ++I)
        if (Taken.insert(Name + "_" + std::to_string(I)).second)
          return Dim::symbol(Name + "_" + std::to_string(I));
    }

    /// The name of class \p Best; \p Symbol is the dim's own name, if any.
    Dim nameOf(const DimExpr &Best, llvm::StringRef Symbol, const Value *V,
               unsigned Index) {
      auto It = Chosen.find(Best.key());
      if (It != Chosen.end())
        return It->second;
      Dim Name = choose(Best, Symbol, V, Index);
      Chosen.try_emplace(Best.key(), Name);
      if (Name.isSymbol() && !Best.isConstant() &&
          DA.isInputExpressible(Best) && !Best.isSymbol() &&
          Name.getSymbol() != Best.str())
        DerivedExprs[Name.getSymbol().str()] = Best.str();
      return Name;
    }

    Dim choose(const DimExpr &Best, llvm::StringRef Symbol, const Value *V,
               unsigned Index) {
      auto F = Forced.find(Best.key());
      if (F != Forced.end())
        return Dim::symbol(F->second);
      if (Best.isConstant())
        return Dim::known(Best.getConstant());
      auto U = UserNames.find(Best.key());
      if (U != UserNames.end())
        return Dim::symbol(U->second.front());
      if (const std::string *S = InputSymbols.find(Best))
        return Dim::symbol(*S);
      bool Expressible = DA.isInputExpressible(Best);
      if (Mode == "fresh")
        return fresh();
      if (Mode == "expr") {
        if (!Expressible)
          return fresh();
        std::string Name = Best.str();
        // A name another symbol already has would merge the two.
        if (Taken.count(Name) && !DA.provenEqual(DimExpr::symbol(Name), Best))
          return fresh();
        Taken.insert(Name);
        return Dim::symbol(Name);
      }
      // expr-name: every derived dim after its expression, outputs too (what
      // make-dynamic asks for: `W_div4` tells more than `loc_dim0`); the
      // place names only what is too long to read.
      if (Mode == "expr-name" && Expressible) {
        std::string Name = expressionName(Best.str(), /*MaxSize=*/48);
        if (!Name.empty())
          return unique(Name);
      }
      // A dim of a graph output is named after the output; one that only
      // inner values have after its expression when that is short, as
      // inner value names are long and passes rename them.
      auto P = FirstPlace.find(Best.key());
      if (P != FirstPlace.end() && OutputNames.count(P->second.first))
        return unique(positionName(P->second.first, P->second.second));
      if (Expressible) {
        std::string Name = expressionName(Best.str());
        if (!Name.empty())
          return unique(Name);
      }
      (void)Symbol;
      (void)V;
      (void)Index;
      return fresh();
    }
  };

  /// Stores the expressions of the derived dims, keeping entries of earlier
  /// runs for symbols the model still has (\p Symbols).
  static LogicalResult recordExpressions(Model &M, DiagnosticEngine &Diags,
                                         const Namer &Names,
                                         const llvm::StringSet<> &Symbols) {
    DerivedDimMap Stored;
    std::string Error;
    if (!getDerivedDims(M, Stored, Error))
      return emitError(Diags) << Error;
    DerivedDimMap Result;
    for (const auto &[Name, Expr] : Stored)
      if (Symbols.count(Name))
        Result[Name] = Expr;
    for (const auto &[Name, Expr] : Names.getDerived())
      if (Symbols.count(Name))
        Result[Name] = Expr;
    if (Result == Stored)
      return success();
    if (!setDerivedDims(M, Result, Error))
      return emitError(Diags) << Error;
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> onnxopt::createUnifyDimsPass() {
  return std::make_unique<UnifyDimsPass>();
}
