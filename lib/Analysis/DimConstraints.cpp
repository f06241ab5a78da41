//===- DimConstraints.cpp - Deciding the conditions a model runs under ----===//
//
// Each decision reduces a constraint to "D >= 0" or "D = 0" for one
// expression D and uses two exact facts about the DimExpr forms:
//  - if D never decreases as a symbol grows (DimExpr::isNondecreasing), its
//    least value over the domain is its value at the symbols' minimums, and
//    its greatest is at their maximums (when every symbol has one);
//  - every value of D is its constant term plus a multiple of the gcd of
//    its other coefficients (atoms are integers), which settles
//    divisibility and some equalities.
// What these leave open is decided over a small box of ranges (at most 4096
// points, every symbol bounded) by checking every point of it: exhaustive,
// so still exact. Anything else is "depends": never decided by sampling.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimConstraints.h"
#include "onnxopt/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

using namespace onnxopt;

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

std::vector<std::string> DimConstraint::symbols() const {
  std::vector<std::string> S;
  auto Add = [&](llvm::StringRef Name) {
    if (!llvm::is_contained(S, Name.str()))
      S.push_back(Name.str());
  };
  Lhs.forEachSymbol(Add);
  Rhs.forEachSymbol(Add);
  llvm::sort(S);
  return S;
}

std::string DimConstraint::condition() const {
  switch (K) {
  case Equal:
    return Lhs.str() + " = " + Rhs.str();
  case Broadcast:
    return Lhs.str() + " = " + Rhs.str() + " or one of them is 1";
  case AtLeast:
    return Lhs.str() + " >= " + Rhs.str();
  case AtMost:
    return Lhs.str() + " <= " + Rhs.str();
  case Divisible:
    return Lhs.str() + " is a multiple of " + Rhs.str();
  case DataDependent:
    return "output dims depend on the data";
  }
  return "";
}

std::string DimConstraint::str() const {
  std::string S;
  for (const std::string &Sym : symbols())
    S += (S.empty() ? "" : ", ") + Sym;
  if (!S.empty())
    S += ": ";
  S += condition() + " (" + (N ? describe(*N) : std::string("the model"));
  if (!Why.empty())
    S += ": " + Why;
  return S + ")";
}

//===----------------------------------------------------------------------===//
// Domains
//===----------------------------------------------------------------------===//

SymbolDomain::SymbolDomain(DimRangeMap R, DimRelations Relations)
    : Ranges(std::move(R)) {
  // Classes of equal symbols (union-find over names); the representative
  // is the smallest name, its range the intersection of the members'.
  std::map<std::string, std::string> Parent;
  std::function<std::string(const std::string &)> Find =
      [&](const std::string &S) -> std::string {
    auto It = Parent.find(S);
    if (It == Parent.end() || It->second == S)
      return S;
    return It->second = Find(It->second);
  };
  for (const DimRelation &Rel : Relations) {
    if (Rel.K != DimRelation::Equal)
      continue;
    std::string A = Find(Rel.Lhs), B = Find(Rel.Rhs);
    if (A != B)
      Parent[std::max(A, B)] = std::min(A, B);
  }
  std::map<std::string, std::pair<int64_t, std::optional<int64_t>>> Bounds;
  auto Narrow = [&](const std::string &Rep, const std::string &Member) {
    auto &B = Bounds.try_emplace(Rep, 1, std::nullopt).first->second;
    auto It = Ranges.find(Member);
    if (It == Ranges.end())
      return;
    B.first = std::max(B.first, It->second.Min);
    B.second = B.second ? std::min(*B.second, It->second.Max) : It->second.Max;
  };
  for (const DimRelation &Rel : Relations) {
    if (Rel.K != DimRelation::AtMost)
      continue;
    DimExpr Sum = DimExpr::constant(0);
    for (const auto &[Sym, Coef] : Rel.Terms)
      Sum = Sum + DimExpr::constant(Coef) * DimExpr::symbol(Sym);
    SumBounds.emplace_back(Sum, Rel.Bound);
  }
  std::set<std::string> Names;
  for (const DimRelation &Rel : Relations) {
    if (Rel.K == DimRelation::AtMost)
      continue;
    Names.insert(Rel.Lhs);
    if (Rel.K == DimRelation::Equal)
      Names.insert(Rel.Rhs);
  }
  for (const std::string &N : Names)
    Narrow(Find(N), N);
  // Least values (`H>=7`) raise the class's lower end; alone they bound
  // nothing from above.
  for (const DimRelation &Rel : Relations)
    if (Rel.K == DimRelation::AtLeast) {
      auto &B =
          Bounds.try_emplace(Find(Rel.Lhs), 1, std::nullopt).first->second;
      B.first = std::max(B.first, Rel.Bound);
    }
  // Multiples: the representative becomes lcm * a fresh symbol.
  std::map<std::string, int64_t> Lcm;
  for (const DimRelation &Rel : Relations)
    if (Rel.K == DimRelation::Multiple) {
      int64_t &L = Lcm.try_emplace(Find(Rel.Lhs), 1).first->second;
      L = std::lcm(L, Rel.Divisor);
    }
  for (const std::string &N : Names) {
    std::string Rep = Find(N);
    auto [Lo, Hi] = Bounds[Rep];
    DimExpr Target = DimExpr::symbol(Rep);
    auto L = Lcm.find(Rep);
    if (L != Lcm.end() && L->second > 1) {
      int64_t K = L->second;
      std::string Q = Rep + "%" + std::to_string(K);
      Target = DimExpr::constant(K) * DimExpr::symbol(Q);
      DimRange QR;
      QR.Min = (Lo + K - 1) / K;
      QR.Max = Hi ? *Hi / K : (int64_t(1) << 40);
      Ranges[Q] = QR;
    } else if (Hi) {
      DimRange RR;
      RR.Min = Lo;
      RR.Max = *Hi;
      Ranges[Rep] = RR;
    } else if (Lo > 1) {
      assumeAtLeast(Rep, Lo);
    }
    if (Target != DimExpr::symbol(N))
      Rewrite[N] = Target;
  }
}

bool SymbolDomain::assertsAtMost(const DimExpr &E, int64_t Bound) const {
  for (const auto &[Sum, B] : SumBounds)
    if (B <= Bound && normalize(Sum) == E)
      return true;
  return false;
}

DimExpr SymbolDomain::normalize(const DimExpr &E) const {
  if (Rewrite.empty())
    return E;
  return E.substitute([&](llvm::StringRef S) -> std::optional<DimExpr> {
    auto It = Rewrite.find(S.str());
    if (It == Rewrite.end())
      return std::nullopt;
    return It->second;
  });
}

int64_t SymbolDomain::min(llvm::StringRef Symbol) const {
  auto It = Ranges.find(Symbol.str());
  int64_t Min = It == Ranges.end() ? 1 : std::max<int64_t>(It->second.Min, 0);
  auto L = Least.find(Symbol.str());
  return L == Least.end() ? Min : std::max(Min, L->second);
}

void SymbolDomain::assumeAtLeast(llvm::StringRef Symbol, int64_t Min) {
  int64_t &L = Least.try_emplace(Symbol.str(), Min).first->second;
  L = std::max(L, Min);
}

std::optional<int64_t> SymbolDomain::max(llvm::StringRef Symbol) const {
  auto It = Ranges.find(Symbol.str());
  if (It == Ranges.end())
    return std::nullopt;
  return It->second.Max;
}

//===----------------------------------------------------------------------===//
// Deciding
//===----------------------------------------------------------------------===//

namespace {

/// Bounds of an expression over a domain, where they follow from
/// monotonicity.
struct Extremes {
  std::optional<int64_t> Least, Greatest;
};

Extremes extremes(const DimExpr &E, const SymbolDomain &D) {
  Extremes R;
  if (E.isConstant()) {
    R.Least = R.Greatest = E.getConstant();
    return R;
  }
  auto AtMin = [&](llvm::StringRef S) -> std::optional<int64_t> {
    return D.min(S);
  };
  auto AtMax = [&](llvm::StringRef S) { return D.max(S); };
  if (E.isNondecreasing(AtMin)) {
    R.Least = E.evaluate(AtMin);
    R.Greatest = E.evaluate(AtMax);
    return R;
  }
  DimExpr Neg = DimExpr::constant(0) - E;
  if (Neg.isNondecreasing(AtMin)) {
    // E never increases: greatest at the minimums, least at the maximums.
    if (std::optional<int64_t> V = Neg.evaluate(AtMin))
      R.Greatest = -*V;
    if (std::optional<int64_t> V = Neg.evaluate(AtMax))
      R.Least = -*V;
  }
  return R;
}

/// D >= 0 over the domain.
Verdict decideNonNegative(const DimExpr &E, const SymbolDomain &D) {
  Extremes X = extremes(E, D);
  if (X.Least && *X.Least >= 0)
    return Verdict::Holds;
  if (X.Greatest && *X.Greatest < 0)
    return Verdict::Fails;
  // Floors read at their least: L*E >= B, and E is an integer, so
  // B > -L proves E >= 0 (a dim within its window-padded size,
  // x <= 7*ceil(x/7), is 7*floor((x+6)/7) - x: B = 0, L = 7).
  if (std::optional<std::pair<DimExpr, int64_t>> R = E.relaxFloors()) {
    Extremes B = extremes(R->first + DimExpr::constant(R->second - 1), D);
    if (B.Least && *B.Least >= 0)
      return Verdict::Holds;
  }
  return Verdict::Depends;
}

/// D = 0 over the domain.
Verdict decideZero(const DimExpr &E, const SymbolDomain &D) {
  if (E.isConstant())
    return E.getConstant() == 0 ? Verdict::Holds : Verdict::Fails;
  auto [G, C] = E.coefficientGcd();
  if (G > 0 && C % G != 0)
    return Verdict::Fails; // C + k*G is never 0
  Extremes X = extremes(E, D);
  if ((X.Least && *X.Least > 0) || (X.Greatest && *X.Greatest < 0))
    return Verdict::Fails;
  if (X.Least && X.Greatest && *X.Least == 0 && *X.Greatest == 0)
    return Verdict::Holds; // a domain of one point, or a constant part
  return Verdict::Depends;
}

bool isOne(const DimExpr &E) { return E.isConstant() && E.getConstant() == 1; }

Verdict decideBroadcast(const DimExpr &A, const DimExpr &B,
                        const SymbolDomain &D) {
  if (A == B || isOne(A) || isOne(B))
    return Verdict::Holds;
  if (A.isConstant() && B.isConstant())
    return Verdict::Fails;
  // Fails when neither side can be 1 and they can never be equal.
  auto CanBeOne = [&](const DimExpr &E) {
    return decideZero(E - DimExpr::constant(1), D) != Verdict::Fails;
  };
  if (!CanBeOne(A) && !CanBeOne(B) && decideZero(A - B, D) == Verdict::Fails)
    return Verdict::Fails;
  return Verdict::Depends;
}

Verdict decideDivisible(const DimExpr &E, const DimExpr &K) {
  if (!K.isConstant() || K.getConstant() <= 0)
    return Verdict::Depends;
  int64_t Div = K.getConstant();
  auto [G, C] = E.coefficientGcd();
  if (G % Div == 0 && C % Div == 0)
    return Verdict::Holds;
  // Every value is C + k*G: a multiple of Div needs gcd(G, Div) | C.
  if (C % std::gcd(G, Div) != 0)
    return Verdict::Fails;
  return Verdict::Depends;
}

/// \p C at every point of \p D's box over its symbols, when every symbol
/// has a range and the box holds at most kMaxPoints points: exact, not a
/// sample (`ceil(W/2) = floor(W/2)` at W in 8:8, `ceil(H/2) = 4` at H in
/// 7:8). std::nullopt for larger or unbounded domains.
std::optional<Verdict> decideByEnumeration(const DimConstraint &C,
                                           const SymbolDomain &D) {
  constexpr int64_t kMaxPoints = 4096;
  std::vector<std::string> Syms = C.symbols();
  std::vector<std::pair<int64_t, int64_t>> Box;
  int64_t Points = 1;
  for (const std::string &S : Syms) {
    std::optional<int64_t> Hi = D.max(S);
    int64_t Lo = D.min(S);
    if (!Hi || *Hi < Lo || *Hi - Lo >= kMaxPoints)
      return std::nullopt;
    Points *= *Hi - Lo + 1;
    if (Points > kMaxPoints)
      return std::nullopt;
    Box.emplace_back(Lo, *Hi);
  }
  std::vector<int64_t> At;
  for (const auto &B : Box)
    At.push_back(B.first);
  bool SomeHold = false, SomeFail = false;
  for (int64_t I = 0; I < Points; ++I) {
    std::optional<bool> R = holdsAt(C, [&](llvm::StringRef S) {
      auto It = llvm::find(Syms, S.str());
      return It == Syms.end() ? std::optional<int64_t>()
                              : std::optional<int64_t>(At[It - Syms.begin()]);
    });
    if (!R)
      return std::nullopt;
    (*R ? SomeHold : SomeFail) = true;
    // The next point, as an odometer.
    for (size_t K = 0; K < At.size(); ++K) {
      if (At[K] < Box[K].second) {
        ++At[K];
        break;
      }
      At[K] = Box[K].first;
    }
  }
  if (SomeHold && SomeFail)
    return Verdict::Depends;
  return SomeHold ? Verdict::Holds : Verdict::Fails;
}

Verdict decideForms(const DimConstraint &C, const SymbolDomain &D) {
  switch (C.K) {
  case DimConstraint::Equal:
    return decideZero(C.Lhs - C.Rhs, D);
  case DimConstraint::Broadcast:
    return decideBroadcast(C.Lhs, C.Rhs, D);
  case DimConstraint::AtLeast:
    return decideNonNegative(C.Lhs - C.Rhs, D);
  case DimConstraint::AtMost: {
    // A stored bound on the same sum settles it (past+seq <= 64).
    if (std::optional<DimRelation> R = asSumBound(C)) {
      DimExpr Sum = DimExpr::constant(0);
      for (const auto &[Sym, Coef] : R->Terms)
        Sum = Sum + DimExpr::constant(Coef) * DimExpr::symbol(Sym);
      if (D.assertsAtMost(Sum, R->Bound))
        return Verdict::Holds;
    }
    return decideNonNegative(C.Rhs - C.Lhs, D);
  }
  case DimConstraint::Divisible:
    return decideDivisible(C.Lhs, C.Rhs);
  case DimConstraint::DataDependent:
    return Verdict::Depends;
  }
  return Verdict::Depends;
}

} // namespace

Verdict onnxopt::decide(const DimConstraint &Given, const SymbolDomain &D) {
  if (Given.Lhs.hasUnknown() || Given.Rhs.hasUnknown())
    return Verdict::Depends;
  DimConstraint Normal;
  const DimConstraint *P = &Given;
  if (D.hasRelations()) {
    Normal = Given;
    Normal.Lhs = D.normalize(Given.Lhs);
    Normal.Rhs = D.normalize(Given.Rhs);
    P = &Normal;
  }
  const DimConstraint &C = *P;
  Verdict V = decideForms(C, D);
  if (V != Verdict::Depends || C.K == DimConstraint::DataDependent)
    return V;
  // What the forms leave open over a small box of values is settled by
  // every value of it.
  return decideByEnumeration(C, D).value_or(Verdict::Depends);
}

std::optional<DimRelation> onnxopt::asSumBound(const DimConstraint &C) {
  if (C.K != DimConstraint::AtMost || !C.Rhs.isConstant() || C.Lhs.hasUnknown())
    return std::nullopt;
  std::vector<std::string> Syms = C.symbols();
  if (Syms.size() < 2)
    return std::nullopt;
  // Coefficients from values (each symbol 1, the others 0); the sum they
  // make must then be the expression itself (no products, no divisions).
  auto At = [&](const std::string &One) {
    return C.Lhs.evaluate([&](llvm::StringRef S) -> std::optional<int64_t> {
      return S == One ? 1 : 0;
    });
  };
  std::optional<int64_t> Base = At("");
  if (!Base)
    return std::nullopt;
  DimRelation R;
  R.K = DimRelation::AtMost;
  DimExpr Sum = DimExpr::constant(*Base);
  for (const std::string &S : Syms) {
    std::optional<int64_t> V = At(S);
    if (!V || *V - *Base < 1)
      return std::nullopt;
    R.Terms.emplace_back(S, *V - *Base);
    Sum = Sum + DimExpr::constant(*V - *Base) * DimExpr::symbol(S);
  }
  if (Sum != C.Lhs)
    return std::nullopt;
  R.Bound = C.Rhs.getConstant() - *Base;
  return R;
}

std::optional<bool> onnxopt::holdsAt(const DimConstraint &C,
                                     const SymbolValues &V) {
  if (C.K == DimConstraint::DataDependent)
    return std::nullopt;
  std::optional<int64_t> L = C.Lhs.evaluate(V), R = C.Rhs.evaluate(V);
  if (!L || !R)
    return std::nullopt;
  switch (C.K) {
  case DimConstraint::Equal:
    return *L == *R;
  case DimConstraint::Broadcast:
    return *L == *R || *L == 1 || *R == 1;
  case DimConstraint::AtLeast:
    return *L >= *R;
  case DimConstraint::AtMost:
    return *L <= *R;
  case DimConstraint::Divisible:
    return *R > 0 && *L % *R == 0;
  case DimConstraint::DataDependent:
    break;
  }
  return std::nullopt;
}

std::optional<SymbolBound> onnxopt::impliedBound(const DimConstraint &C,
                                                 const SymbolDomain &D) {
  if (C.K != DimConstraint::AtLeast && C.K != DimConstraint::AtMost)
    return std::nullopt;
  std::vector<std::string> Syms = C.symbols();
  if (Syms.size() != 1 || C.Lhs.hasUnknown() || C.Rhs.hasUnknown())
    return std::nullopt;
  const std::string &S = Syms[0];
  DimExpr E = C.K == DimConstraint::AtLeast ? C.Lhs - C.Rhs : C.Rhs - C.Lhs;
  auto At = [&](int64_t X) {
    return E.evaluate(
        [&](llvm::StringRef) -> std::optional<int64_t> { return X; });
  };
  auto Ok = [&](int64_t X) {
    std::optional<int64_t> V = At(X);
    return V && *V >= 0;
  };
  int64_t Lo = D.min(S);
  // Far beyond any tensor size, and small enough not to overflow products.
  int64_t Hi = D.max(S).value_or(int64_t(1) << 31);
  if (Lo > Hi)
    return std::nullopt;
  auto MinAt = [&](llvm::StringRef) -> std::optional<int64_t> { return Lo; };
  SymbolBound B;
  B.Symbol = S;
  B.Min = Lo;
  B.Max = D.max(S);
  if (E.isNondecreasing(MinAt)) {
    // The least X with E(X) >= 0.
    if (!Ok(Hi))
      return std::nullopt;
    int64_t A = Lo, Z = Hi;
    while (A < Z) {
      int64_t Mid = A + (Z - A) / 2;
      if (Ok(Mid))
        Z = Mid;
      else
        A = Mid + 1;
    }
    B.Min = A;
    return B;
  }
  if ((DimExpr::constant(0) - E).isNondecreasing(MinAt)) {
    // The greatest X with E(X) >= 0.
    if (!Ok(Lo))
      return std::nullopt;
    int64_t A = Lo, Z = Hi;
    while (A < Z) {
      int64_t Mid = A + (Z - A + 1) / 2;
      if (Ok(Mid))
        A = Mid;
      else
        Z = Mid - 1;
    }
    B.Max = A;
    return B;
  }
  return std::nullopt;
}

bool onnxopt::pinsSymbols(const DimConstraint &C) {
  bool HasSymbols = !C.symbols().empty();
  switch (C.K) {
  case DimConstraint::Equal:
    return HasSymbols && (C.Lhs.isConstant() || C.Rhs.isConstant());
  case DimConstraint::Broadcast:
    return HasSymbols && ((C.Lhs.isConstant() && !isOne(C.Lhs)) ||
                          (C.Rhs.isConstant() && !isOne(C.Rhs)));
  default:
    return false;
  }
}

std::vector<DimConstraint> onnxopt::getInputConstraints(const DimAnalysis &DA) {
  std::vector<DimConstraint> Result;
  for (DimConstraint &C : DA.getConstraints())
    if (C.K == DimConstraint::DataDependent ||
        (DA.isInputExpressible(C.Lhs) && DA.isInputExpressible(C.Rhs)))
      Result.push_back(std::move(C));
  return Result;
}
