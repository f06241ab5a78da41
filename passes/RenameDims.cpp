//===- RenameDims.cpp - Rename symbolic dims everywhere -------------------===//
//
// Before:  (float[batch_size,3,H,W] X) => (float[batch_size,1000] Y)
//          rename-dims{map=batch_size:N}
// After:   (float[N,3,H,W] X) => (float[N,1000] Y)
//
// A symbol is renamed wherever a type mentions it: graph inputs and outputs,
// the recorded type of every value (value_info), the bodies of If/Loop/Scan
// and value-infos that name no value. All renames apply at once, so
// `map=A:B,B:A` swaps two symbols.
//
// Renaming a symbol to a name that another symbol of the model already uses
// asserts that the two dims are equal; that is refused, as is renaming two
// symbols to one name, unless the dim algebra proves them equal (a MatMul's
// contracted dims, Concat's other dims, a declared name tied to an
// expression). Renaming to a number is freeze-dims' job. What the model
// stores about a symbol (its range, the expression of a derived dim) moves
// with it, and a later unify-dims keeps a name given here.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DerivedDims.h"
#include "onnxopt/Analysis/DimAlgebra.h"
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <set>

using namespace onnxopt;

namespace {

/// A name that the text format and most runtimes take as a dim symbol.
bool isValidSymbol(llvm::StringRef S) {
  if (S.empty() || llvm::isDigit(S.front()) || S.front() == '-')
    return false;
  for (char C : S)
    if (llvm::isSpace(C) || llvm::StringRef(",:[]{}()<>=\"'?").contains(C))
      return false;
  return true;
}

/// The parse-time check of one map= entry (the symbols are checked against
/// the model when the pass runs).
bool checkRenameEntry(llvm::StringRef Entry, std::string &Error) {
  auto [Old, New] = Entry.split(':');
  if (Old.empty() || New.empty() || !Entry.contains(':'))
    Error = "expected old:new, got '" + Entry.str() + "'";
  else if (llvm::all_of(New, llvm::isDigit))
    Error = "'" + Old.str() + "' renamed to the number " + New.str() +
            "; use freeze-dims to set a dim's value";
  else if (!isValidSymbol(New))
    Error = "'" + New.str() + "' is not a valid symbol name";
  else
    return true;
  return false;
}

class RenameDimsPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "rename-dims"; }
  llvm::StringRef getDescription() const override {
    return "rename symbolic dims everywhere (inputs, outputs, value_info, "
           "subgraphs); refuses to merge symbols not proven equal";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    DiagnosticEngine &Diags = Ctx.getDiags();
    std::map<std::string, std::string> Renames;
    if (failed(parseMap(Diags, Renames)))
      return failure();
    std::set<std::string> Symbols = collectSymbols(M);
    if (failed(checkRenames(M, Diags, Renames, Symbols)))
      return failure();

    size_t Count = 0;
    forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
      if (!D.isSymbol())
        return false;
      auto It = Renames.find(D.getSymbol().str());
      if (It == Renames.end())
        return false;
      Dim Renamed = Dim::symbol(It->second);
      Renamed.setDenotation(D.getDenotation());
      D = std::move(Renamed);
      ++Count;
      return true;
    });
    if (Count)
      Ctx.Changed = true;
    return moveStoredFacts(M, Diags, Renames);
  }

private:
  ListOption<std::string> Map{*this, "map",
                              "renames, each old:new (applied at once)",
                              required().also(checkedBy(checkRenameEntry))};

  LogicalResult parseMap(DiagnosticEngine &Diags,
                         std::map<std::string, std::string> &Renames) const {
    if (Map.empty())
      return emitError(Diags) << "no renames given (use "
                                 "map=old:new,...)";
    for (const std::string &Entry : Map) {
      auto [Old, New] = llvm::StringRef(Entry).split(':');
      if (Old.empty() || New.empty() || !llvm::StringRef(Entry).contains(':'))
        return emitError(Diags) << "expected old:new, got '" << Entry << "'";
      if (llvm::all_of(New, llvm::isDigit))
        return emitError(Diags)
               << "'" << Old << "' renamed to the number " << New
               << "; use freeze-dims to set a dim's value";
      if (!isValidSymbol(New))
        return emitError(Diags) << "'" << New << "' is not a valid symbol name";
      if (!Renames.emplace(Old.str(), New.str()).second)
        return emitError(Diags) << "'" << Old << "' is renamed more than once";
    }
    return success();
  }

  /// Renames the symbols in the stored ranges and derived-dim expressions.
  static LogicalResult
  moveStoredFacts(Model &M, DiagnosticEngine &Diags,
                  const std::map<std::string, std::string> &Renames) {
    auto NewName = [&](const std::string &S) {
      auto It = Renames.find(S);
      return It == Renames.end() ? S : It->second;
    };
    std::string Error;
    DimRangeMap Ranges, NewRanges;
    DerivedDimMap Exprs, NewExprs;
    DimRelations Relations, NewRelations;
    if (!getDimRanges(M, Ranges, Error) || !getDerivedDims(M, Exprs, Error) ||
        !getDimRelations(M, Relations, Error))
      return emitError(Diags) << Error;
    for (const auto &[S, R] : Ranges) {
      auto [It, Inserted] = NewRanges.emplace(NewName(S), R);
      if (Inserted)
        continue;
      // Two symbols merged (proven or asserted equal): the dim lies in
      // both ranges.
      DimRange &Both = It->second;
      Both.Min = std::max(Both.Min, R.Min);
      Both.Max = std::min(Both.Max, R.Max);
      if (Both.Opt && !Both.contains(*Both.Opt))
        Both.Opt.reset();
      if (Both.Min > Both.Max)
        return emitError(Diags)
               << "the stored ranges of the symbols merged into '" << It->first
               << "' do not overlap";
    }
    for (const DimRelation &Old : Relations) {
      DimRelation R = Old.renamed(NewName);
      if (R.K == DimRelation::Equal && R.Lhs == R.Rhs)
        continue; // the merge made it hold by construction
      if (!llvm::is_contained(NewRelations, R))
        NewRelations.push_back(R);
    }
    // Expressions mention input symbols: rename those tokens too (a token
    // is a run of characters between the operators DimExpr prints).
    for (const auto &[S, E] : Exprs) {
      std::string Out, Token;
      auto Flush = [&] {
        if (!Token.empty() && !llvm::all_of(Token, llvm::isDigit))
          Token = NewName(Token);
        Out += Token;
        Token.clear();
      };
      for (char C : E) {
        if (llvm::StringRef("+-*/() ").contains(C)) {
          Flush();
          Out += C;
        } else {
          Token += C;
        }
      }
      Flush();
      NewExprs[NewName(S)] = Out;
    }
    if ((NewRanges != Ranges && !setDimRanges(M, NewRanges, Error)) ||
        (NewExprs != Exprs && !setDerivedDims(M, NewExprs, Error)) ||
        (NewRelations != Relations && !setDimRelations(M, NewRelations, Error)))
      return emitError(Diags) << Error;
    return success();
  }

  /// True if a stored relation says \p A = \p B.
  static bool assertedEqual(const Model &M, llvm::StringRef A,
                            llvm::StringRef B) {
    DimRelations Relations;
    std::string Error;
    if (!getDimRelations(M, Relations, Error))
      return false;
    return llvm::any_of(Relations, [&](const DimRelation &R) {
      return R.K == DimRelation::Equal &&
             ((R.Lhs == A && R.Rhs == B) || (R.Lhs == B && R.Rhs == A));
    });
  }

  static std::set<std::string> collectSymbols(Model &M) {
    std::set<std::string> Symbols;
    forEachRecordedDim(M, [&](Dim &D, const Value *, unsigned) {
      if (D.isSymbol())
        Symbols.insert(D.getSymbol().str());
      return false;
    });
    return Symbols;
  }

  /// Refuses unknown symbols and renames that would make two symbols one,
  /// unless the dim algebra proves them equal or the user asserted it with
  /// a stored relation (`set-dim-range{relations=W=H}`).
  static LogicalResult
  checkRenames(Model &M, DiagnosticEngine &Diags,
               const std::map<std::string, std::string> &Renames,
               const std::set<std::string> &Symbols) {
    for (const auto &[Old, New] : Renames) {
      if (Symbols.count(Old))
        continue;
      if (Symbols.empty())
        return emitError(Diags) << "unknown symbol '" << Old
                                << "'; the model has no symbolic dims";
      return emitError(Diags)
             << "unknown symbol '" << Old
             << "'; the model's symbols are: " << llvm::join(Symbols, ", ");
    }
    // The name each symbol has after the renames, to find merges.
    std::map<std::string, std::string> Owner;
    std::unique_ptr<DimAnalysis> DA;
    for (const std::string &S : Symbols) {
      auto It = Renames.find(S);
      const std::string &Final = It == Renames.end() ? S : It->second;
      auto [Prev, Inserted] = Owner.emplace(Final, S);
      if (Inserted)
        continue;
      // Merging is sound when the graph forces the two dims to be equal.
      if (!DA) {
        DA = std::make_unique<DimAnalysis>(M);
        DA->run();
      }
      if (DA->provenEqual(DimExpr::symbol(Prev->second), DimExpr::symbol(S)) ||
          assertedEqual(M, Prev->second, S))
        continue;
      // Name the symbol that is renamed first, then the other one.
      std::string A = Prev->second, B = S;
      if (!Renames.count(A))
        std::swap(A, B);
      return emitError(Diags)
             << "renaming '" << A << "' to '" << Final
             << "' would merge it with '" << B
             << "', a symbol not proven equal to it (set-dim-range{relations="
             << A << "=" << B << "} asserts it)";
    }
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> onnxopt::createRenameDimsPass() {
  return std::make_unique<RenameDimsPass>();
}
