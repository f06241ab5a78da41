//===- DimExpr.cpp - Canonical symbolic dim expressions -------------------===//
//
// An expression is a sum of terms; a term is an integer coefficient times a
// sorted list of atoms. Floor divisions by a constant are normalized so that
// the same quantity always gets the same form:
//   floor((k*Q + c) / k)        = Q + floor(c/k)
//   floor((g*Q + c) / (g*k))    = floor((Q + floor(c/g)) / k)
//   floor((Q + c) / k)          = floor((Q + c mod k) / k) + floor(c/k)
//   floor((floor(P/a) + r) / k) = floor((P + a*r) / (a*k))
// so a stack of stride-2 convolutions over H reads ceil(H/2), ceil(H/4),
// ceil(H/8) whatever the paddings that produced them.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/DimAlgebra.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <atomic>
#include <cassert>
#include <climits>
#include <cstring>
#include <limits>
#include <numeric>

using namespace onnxopt;

struct DimExpr::Atom {
  enum Kind { Symbol, Unknown, FloorDiv, ExactDiv };
  Kind K = Symbol;
  std::string Name; ///< Symbol
  uint64_t Id = 0;  ///< Unknown
  DimExpr Num;      ///< FloorDiv / ExactDiv numerator
  int64_t Den = 1;  ///< FloorDiv / ExactDiv denominator (> 1)
  std::string Key;
};

namespace onnxopt {
/// Internal access for the helpers below.
struct DimExprAccess {
  static const DimExpr::TermList &terms(const DimExpr &E) { return E.terms(); }
  static DimExpr fromAtom(DimExpr::AtomRef A) {
    DimExpr::Term T;
    T.Factors.push_back(std::move(A));
    T.Coef = 1;
    return fromTerm(std::move(T));
  }
  static DimExpr fromTerm(DimExpr::Term T) {
    DimExpr::TermList L;
    bool Added = DimExpr::addTerm(L, std::move(T)); // into an empty list
    (void)Added;
    return DimExpr::make(std::move(L));
  }
};
} // namespace onnxopt

namespace {

using Access = DimExprAccess;

int64_t floorDivInt(int64_t A, int64_t B) {
  int64_t Q = A / B;
  return (A % B != 0 && ((A < 0) != (B < 0))) ? Q - 1 : Q;
}

/// A mod B with B's sign; from A % B, which cannot overflow where the
/// product floor(A/B)*B can (A = INT64_MIN).
int64_t modInt(int64_t A, int64_t B) {
  int64_t R = A % B;
  return (R != 0 && ((R < 0) != (B < 0))) ? R + B : R;
}

std::string monomialKey(llvm::ArrayRef<DimExpr::AtomRef> Factors) {
  std::string K;
  for (const DimExpr::AtomRef &A : Factors) {
    if (!K.empty())
      K += '*';
    K += A->Key;
  }
  return K;
}

DimExpr::AtomRef makeDivAtom(DimExpr::Atom::Kind K, DimExpr Num, int64_t Den) {
  auto A = std::make_shared<DimExpr::Atom>();
  A->K = K;
  A->Key = std::string(K == DimExpr::Atom::FloorDiv ? "f(" : "e(") + Num.key() +
           "/" + std::to_string(Den) + ")";
  A->Num = std::move(Num);
  A->Den = Den;
  return A;
}

/// True when -Q or K - 1 - C does not fit in 64 bits (no flip then: the
/// floor keeps its negative lead).
bool negationOverflows(const DimExpr &Q, int64_t C, int64_t K) {
  int64_t R;
  if (__builtin_sub_overflow(K - 1, C, &R))
    return true;
  return llvm::any_of(Access::terms(Q), [](const auto &E) {
    return E.second.Coef == std::numeric_limits<int64_t>::min();
  });
}

/// The constant term of \p E and the rest.
std::pair<DimExpr, int64_t> splitConstant(const DimExpr &E) {
  int64_t C = 0;
  DimExpr Rest;
  for (const auto &Entry : Access::terms(E)) {
    if (Entry.first.empty())
      C = Entry.second.Coef;
    else
      Rest = Rest + Access::fromTerm(Entry.second);
  }
  return {Rest, C};
}

int64_t gcdOfCoefs(const DimExpr &E, int64_t G) {
  for (const auto &Entry : Access::terms(E))
    G = std::gcd(G, std::abs(Entry.second.Coef));
  return G;
}

DimExpr scaleDown(const DimExpr &E, int64_t G) {
  DimExpr R;
  for (const auto &Entry : Access::terms(E)) {
    DimExpr::Term T = Entry.second;
    T.Coef /= G;
    R = R + Access::fromTerm(std::move(T));
  }
  return R;
}

bool needsParens(const DimExpr &E) {
  const auto &Terms = Access::terms(E);
  if (Terms.size() > 1)
    return true;
  if (Terms.empty())
    return false;
  const DimExpr::Term &T = Terms.begin()->second;
  return T.Coef != 1 || T.Factors.size() > 1;
}

std::string printAtom(const DimExpr::Atom &A) {
  switch (A.K) {
  case DimExpr::Atom::Symbol:
    return A.Name;
  case DimExpr::Atom::Unknown:
    return "?";
  case DimExpr::Atom::ExactDiv:
    return (needsParens(A.Num) ? "(" + A.Num.str() + ")" : A.Num.str()) + "/" +
           std::to_string(A.Den);
  case DimExpr::Atom::FloorDiv: {
    auto [Rest, C] = splitConstant(A.Num);
    std::string D = std::to_string(A.Den);
    if (C == 0)
      return "floor(" + Rest.str() + "/" + D + ")";
    if (C == A.Den - 1) {
      const auto &Terms = Access::terms(Rest);
      bool Sum = Terms.size() > 1;
      return "ceil(" + (Sum ? "(" + Rest.str() + ")" : Rest.str()) + "/" + D +
             ")";
    }
    return "floor((" + A.Num.str() + ")/" + D + ")";
  }
  }
  return "?";
}

std::string printTerm(const DimExpr::Term &T) {
  if (T.Factors.empty())
    return std::to_string(T.Coef);
  std::string S;
  if (T.Coef == -1)
    S = "-";
  else if (T.Coef != 1)
    S = std::to_string(T.Coef) + "*";
  // Factors in the order people write them (H before W), not by key.
  std::vector<std::string> Factors;
  for (const DimExpr::AtomRef &A : T.Factors)
    Factors.push_back(printAtom(*A));
  std::stable_sort(Factors.begin(), Factors.end());
  for (size_t I = 0; I < Factors.size(); ++I) {
    if (I)
      S += '*';
    S += Factors[I];
  }
  return S;
}

void visitAtoms(const DimExpr &E,
                const std::function<void(const DimExpr::Atom &)> &F) {
  for (const auto &Entry : Access::terms(E))
    for (const DimExpr::AtomRef &A : Entry.second.Factors) {
      F(*A);
      if (A->K == DimExpr::Atom::FloorDiv || A->K == DimExpr::Atom::ExactDiv)
        visitAtoms(A->Num, F);
    }
}

} // namespace

namespace {
/// The small constants every model repeats (sizes, axes, -1), each made
/// once and shared by all threads; never freed.
constexpr int64_t MinSharedConstant = -16, MaxSharedConstant = 1023;
std::atomic<const void *>
    SharedConstants[MaxSharedConstant - MinSharedConstant + 1];
} // namespace

DimExpr DimExpr::constant(int64_t C) {
  // What make() does for one constant term, without its generic work: the
  // most frequent expression of all.
  DimExpr E;
  if (C == 0)
    return E;
  auto MakeRep = [C] {
    auto *New = new Rep;
    Term T;
    T.Coef = C;
    New->Terms.emplace_back(std::string(), std::move(T));
    New->Key = std::to_string(C);
    New->Key += ".;";
    return New;
  };
  if (C < MinSharedConstant || C > MaxSharedConstant) {
    E.R = MakeRep();
    return E;
  }
  std::atomic<const void *> &Slot = SharedConstants[C - MinSharedConstant];
  const void *Shared = Slot.load(std::memory_order_acquire);
  if (!Shared) {
    const Rep *New = MakeRep();
    New->Retain(); // the table's reference, never released
    if (Slot.compare_exchange_strong(Shared, New, std::memory_order_acq_rel))
      Shared = New;
    else
      New->Release(); // another thread made it first; Shared is theirs
  }
  E.R = static_cast<const Rep *>(Shared);
  return E;
}

const DimExpr::TermList &DimExpr::terms() const {
  static const TermList None;
  return R ? R->Terms : None;
}

DimExpr DimExpr::make(TermList Terms) {
  if (Terms.empty())
    return DimExpr();
  if (Terms.size() == 1 && Terms.front().first.empty())
    return constant(Terms.front().second.Coef);
  if (std::optional<DimExpr> Merged = mergeHalves(Terms))
    return *Merged;
  auto *New = new Rep;
  for (const auto &Entry : Terms) {
    New->Key += std::to_string(Entry.second.Coef);
    New->Key += '.';
    New->Key += Entry.first;
    New->Key += ';';
  }
  New->Terms = std::move(Terms);
  DimExpr E;
  E.R = New;
  return E;
}

// Hermite's identity for halves: floor(y) - floor(y/2) = floor((y+1)/2).
// With y = N/M: c*floor(N/M) - c*floor(N/2M) is c*floor((N+M)/2M), and for
// M = 1, c*N - c*floor(N/2) is c*floor((N+1)/2). Without it x + x % 2
// (torch pads a size to an even one so) reads 2*x - 2*floor(x/2), which
// equals 2*ceil(x/2) but has another form, and nothing proves it is not
// negative. Each step takes out one negative half, so the rewriting ends.
std::optional<DimExpr> DimExpr::mergeHalves(const TermList &Terms) {
  if (Terms.size() < 2)
    return std::nullopt;
  for (const auto &Entry : Terms) {
    const Term &T = Entry.second;
    if (T.Coef >= 0 || T.Coef == std::numeric_limits<int64_t>::min() ||
        T.Factors.size() != 1 || T.Factors[0]->K != Atom::FloorDiv ||
        T.Factors[0]->Den % 2 != 0)
      continue;
    const Atom &Half = *T.Factors[0];
    int64_t C = -T.Coef, M = Half.Den / 2, CK;
    // The whole, c*floor(N/M), must be in the sum, each of its terms
    // with at least its coefficient, the same sign.
    DimExpr Floor = Half.Num.floorDiv(M);
    int64_t K = Floor.getConstant();
    DimExpr Whole = (Floor - constant(K)) * constant(C);
    if (!Whole.R)
      continue;
    bool Held = llvm::all_of(Whole.terms(), [&](const auto &W) {
      auto It = llvm::lower_bound(
          Terms, W.first,
          [](const auto &E, const std::string &X) { return E.first < X; });
      if (It == Terms.end() || It->first != W.first)
        return false;
      int64_t Have = It->second.Coef, Need = W.second.Coef;
      return Need > 0 ? Have >= Need : Have <= Need;
    });
    if (!Held)
      continue;
    // floor(N/M) is Whole/c + its constant k: c*floor(N/M) - c*half, which
    // is c*Merged, takes c*k more than the Whole the sum holds.
    if (__builtin_mul_overflow(C, K, &CK))
      continue;
    // Rest = Terms - Whole - T; the checks above keep the coefficients
    // within range (each of Whole's is at most the sum's own).
    TermList Rest = Terms;
    bool Fits = true;
    for (const auto &W : Whole.terms()) {
      Term Neg = W.second;
      Fits &= !__builtin_sub_overflow(int64_t(0), Neg.Coef, &Neg.Coef) &&
              addTerm(Rest, std::move(Neg));
    }
    Term Drop = T;
    Drop.Coef = C;
    Fits &= addTerm(Rest, std::move(Drop));
    if (!Fits)
      continue;
    DimExpr Merged = (Half.Num + constant(M)).floorDiv(Half.Den);
    return make(std::move(Rest)) - constant(CK) + constant(C) * Merged;
  }
  return std::nullopt;
}

DimExpr DimExpr::symbol(llvm::StringRef Name) {
  auto A = std::make_shared<Atom>();
  A->K = Atom::Symbol;
  A->Name = Name.str();
  A->Key = "s" + std::to_string(Name.size()) + ":" + Name.str();
  return Access::fromAtom(std::move(A));
}

static std::atomic<uint64_t> NextUnknownId{0};

DimExpr DimExpr::unknown() {
  auto A = std::make_shared<Atom>();
  A->K = Atom::Unknown;
  A->Id = NextUnknownId++;
  A->Key = "u" + std::to_string(A->Id);
  return Access::fromAtom(std::move(A));
}

uint64_t DimExpr::getNumUnknownsMade() { return NextUnknownId; }

bool DimExpr::addTerm(TermList &Terms, Term T) {
  if (T.Coef == 0)
    return true;
  std::string K = monomialKey(T.Factors);
  auto It =
      llvm::lower_bound(Terms, K, [](const auto &E, const std::string &X) {
        return E.first < X;
      });
  if (It == Terms.end() || It->first != K) {
    Terms.insert(It, std::make_pair(std::move(K), std::move(T)));
    return true;
  }
  if (__builtin_add_overflow(It->second.Coef, T.Coef, &It->second.Coef))
    return false;
  if (It->second.Coef == 0)
    Terms.erase(It);
  return true;
}

bool DimExpr::isConstant() const {
  const TermList &Terms = terms();
  return Terms.empty() || (Terms.size() == 1 && Terms.begin()->first.empty());
}

int64_t DimExpr::getConstant() const {
  const TermList &Terms = terms();
  // The constant term's key "" sorts first.
  return !Terms.empty() && Terms.front().first.empty()
             ? Terms.front().second.Coef
             : 0;
}

bool DimExpr::isSymbol() const {
  const TermList &Terms = terms();
  if (Terms.size() != 1)
    return false;
  const Term &T = Terms.begin()->second;
  return T.Coef == 1 && T.Factors.size() == 1 &&
         T.Factors[0]->K == Atom::Symbol;
}

llvm::StringRef DimExpr::getSymbol() const {
  assert(isSymbol() && "not a symbol");
  return terms().begin()->second.Factors[0]->Name;
}

bool DimExpr::hasUnknown() const {
  bool Found = false;
  visitAtoms(*this, [&](const Atom &A) { Found |= A.K == Atom::Unknown; });
  return Found;
}

void DimExpr::forEachSymbol(
    const std::function<void(llvm::StringRef)> &F) const {
  visitAtoms(*this, [&](const Atom &A) {
    if (A.K == Atom::Symbol)
      F(A.Name);
  });
}

size_t DimExpr::complexity() const { return str().size(); }

DimExpr DimExpr::operator+(const DimExpr &O) const {
  // Adding zero gives the other operand, term for term.
  if (!O.R)
    return *this;
  if (!R)
    return O;
  TermList Sum = terms();
  for (const auto &Entry : O.terms())
    if (!addTerm(Sum, Entry.second))
      return unknown();
  return make(std::move(Sum));
}

DimExpr DimExpr::sum(llvm::ArrayRef<DimExpr> Parts) {
  // Every term, sorted by monomial key (stable: equal keys keep their
  // order), then equal keys merged: what adding them one by one with
  // addTerm gives, in n log n.
  std::vector<std::pair<std::string, Term>> All;
  for (const DimExpr &P : Parts)
    if (P.R)
      All.insert(All.end(), P.terms().begin(), P.terms().end());
  llvm::stable_sort(All, [](const auto &A, const auto &B) {
    return A.first < B.first;
  });
  TermList Sum;
  for (auto &Entry : All) {
    if (!Sum.empty() && Sum.back().first == Entry.first) {
      if (__builtin_add_overflow(Sum.back().second.Coef, Entry.second.Coef,
                                 &Sum.back().second.Coef))
        return unknown();
    } else
      Sum.push_back(std::move(Entry));
  }
  llvm::erase_if(Sum, [](const auto &E) { return E.second.Coef == 0; });
  return make(std::move(Sum));
}

DimExpr DimExpr::operator-(const DimExpr &O) const {
  TermList Difference = terms();
  for (const auto &Entry : O.terms()) {
    Term T = Entry.second;
    if (__builtin_sub_overflow(int64_t(0), T.Coef, &T.Coef) ||
        !addTerm(Difference, std::move(T)))
      return unknown();
  }
  return make(std::move(Difference));
}

DimExpr DimExpr::operator*(const DimExpr &O) const {
  // Times 1 gives the other operand, term for term (products start at 1).
  if (O.isConstant() && O.getConstant() == 1)
    return *this;
  if (isConstant() && getConstant() == 1)
    return O;
  TermList Product;
  for (const auto &A : terms())
    for (const auto &B : O.terms()) {
      Term T;
      if (__builtin_mul_overflow(A.second.Coef, B.second.Coef, &T.Coef))
        return unknown();
      T.Factors = A.second.Factors;
      T.Factors.insert(T.Factors.end(), B.second.Factors.begin(),
                       B.second.Factors.end());
      std::stable_sort(
          T.Factors.begin(), T.Factors.end(),
          [](const AtomRef &X, const AtomRef &Y) { return X->Key < Y->Key; });
      if (!addTerm(Product, std::move(T)))
        return unknown();
    }
  return make(std::move(Product));
}

DimExpr DimExpr::floorDiv(int64_t K) const {
  assert(K > 0 && "division by a non-positive constant");
  if (K == 1)
    return *this;
  auto [All, C] = splitConstant(*this);
  if (!All.R)
    return constant(floorDivInt(C, K));
  // Every atom is an integer, so terms whose coefficient K divides leave
  // the division whole: floor((K*f + r)/K) = f + floor(r/K). Swin's pad
  // (7 - W % 7) % 7 reads W - 7*floor(W/7) inside a division by 7.
  DimExpr Q, Whole;
  for (const auto &Entry : Access::terms(All)) {
    Term T = Entry.second;
    if (T.Coef % K == 0) {
      T.Coef /= K;
      Whole = Whole + Access::fromTerm(std::move(T));
    } else {
      Q = Q + Access::fromTerm(std::move(T));
    }
  }
  if (!Q.R)
    return Whole + constant(floorDivInt(C, K));
  if (Whole.R)
    return Whole + (Q + constant(C)).floorDiv(K);
  // One form for floor(-P/K) and -ceil(P/K): the first term (in key order)
  // has a positive coefficient; floor(a/K) = -floor((-a + K - 1)/K).
  if (Access::terms(Q).front().second.Coef < 0 && !negationOverflows(Q, C, K))
    return constant(0) - (constant(0) - Q + constant(K - 1 - C)).floorDiv(K);
  int64_t G = gcdOfCoefs(Q, K);
  if (G > 1) {
    Q = scaleDown(Q, G);
    C = floorDivInt(C, G);
    K /= G;
  }
  int64_t R = modInt(C, K), Quot = floorDivInt(C, K);
  // floor((floor(P/a) + r) / k) = floor((P + a*r) / (a*k)).
  if (Q.terms().size() == 1) {
    const Term &T = Q.terms().begin()->second;
    if (T.Coef == 1 && T.Factors.size() == 1 &&
        T.Factors[0]->K == Atom::FloorDiv) {
      const Atom &Inner = *T.Factors[0];
      return (Inner.Num + constant(Inner.Den * R)).floorDiv(Inner.Den * K) +
             constant(Quot);
    }
  }
  return Access::fromAtom(makeDivAtom(Atom::FloorDiv, Q + constant(R), K)) +
         constant(Quot);
}

DimExpr DimExpr::ceilDiv(int64_t K) const {
  return (*this + constant(K - 1)).floorDiv(K);
}

DimExpr DimExpr::mod(int64_t K) const {
  assert(K > 0 && "modulo by a non-positive constant");
  // A constant directly: K*floor(C/K) may not fit where C mod K does.
  if (isConstant())
    return constant(modInt(getConstant(), K));
  return *this - constant(K) * floorDiv(K);
}

DimExpr DimExpr::exactDivConstant(int64_t K) const {
  if (K == 1)
    return *this;
  int64_t G = gcdOfCoefs(*this, K);
  if (G == K)
    return scaleDown(*this, K);
  DimExpr Num = G > 1 ? scaleDown(*this, G) : *this;
  return Access::fromAtom(makeDivAtom(Atom::ExactDiv, Num, K / G));
}

/// The quotient by a sum \p D when it is one term: (4*B*T*T - 2*B*T) /
/// (4*T*T - 2*T) is B (a view's element count over its other entries).
/// This sum's first term over each of D's terms gives a candidate, taken
/// where it times D is this sum exactly.
std::optional<DimExpr> DimExpr::monomialQuotient(const DimExpr &D) const {
  if (terms().empty())
    return std::nullopt;
  const Term &First = terms().begin()->second;
  for (const auto &Entry : D.terms()) {
    const Term &DT = Entry.second;
    if (DT.Coef == 0 || First.Coef % DT.Coef != 0)
      continue;
    Term Q = First;
    Q.Coef = First.Coef / DT.Coef;
    bool Divides = true;
    for (const AtomRef &F : DT.Factors) {
      auto It =
          std::find_if(Q.Factors.begin(), Q.Factors.end(),
                       [&](const AtomRef &A) { return A->Key == F->Key; });
      if (It == Q.Factors.end()) {
        Divides = false;
        break;
      }
      Q.Factors.erase(It);
    }
    TermList L;
    if (!Divides || !addTerm(L, std::move(Q)))
      continue;
    DimExpr Quotient = make(std::move(L));
    if (!Quotient.hasUnknown() && Quotient * D == *this)
      return Quotient;
  }
  return std::nullopt;
}

std::optional<DimExpr> DimExpr::divExact(const DimExpr &D) const {
  if (D.isConstant()) {
    int64_t C = D.getConstant();
    if (C == 0)
      return std::nullopt;
    if (C < 0)
      return (constant(0) - *this).exactDivConstant(-C);
    return exactDivConstant(C);
  }
  if (*this == D)
    return constant(1);
  if (D.terms().size() != 1)
    return monomialQuotient(D);
  const Term &DT = D.terms().begin()->second;
  TermList QuotientTerms;
  for (const auto &Entry : terms()) {
    Term T = Entry.second;
    // Remove D's factors (a multiset) from the term.
    for (const AtomRef &F : DT.Factors) {
      auto It =
          std::find_if(T.Factors.begin(), T.Factors.end(),
                       [&](const AtomRef &A) { return A->Key == F->Key; });
      if (It == T.Factors.end())
        return std::nullopt;
      T.Factors.erase(It);
    }
    if (!addTerm(QuotientTerms, std::move(T)))
      return std::nullopt;
  }
  DimExpr Quotient = make(std::move(QuotientTerms));
  if (DT.Coef < 0)
    return (constant(0) - Quotient).exactDivConstant(-DT.Coef);
  return Quotient.exactDivConstant(DT.Coef);
}

std::optional<int64_t> DimExpr::evaluate(
    const std::function<std::optional<int64_t>(llvm::StringRef)> &Lookup)
    const {
  int64_t Sum = 0;
  for (const auto &Entry : terms()) {
    int64_t Product = Entry.second.Coef;
    for (const AtomRef &A : Entry.second.Factors) {
      std::optional<int64_t> V;
      switch (A->K) {
      case Atom::Symbol:
        V = Lookup(A->Name);
        break;
      case Atom::Unknown:
        break;
      case Atom::FloorDiv:
        if ((V = A->Num.evaluate(Lookup)))
          V = floorDivInt(*V, A->Den);
        break;
      case Atom::ExactDiv:
        if ((V = A->Num.evaluate(Lookup)) && *V % A->Den != 0)
          V.reset();
        else if (V)
          V = *V / A->Den;
        break;
      }
      // Overflow is no value: the callers ask about sizes, not wrap-around.
      if (!V || __builtin_mul_overflow(Product, *V, &Product))
        return std::nullopt;
    }
    if (__builtin_add_overflow(Sum, Product, &Sum))
      return std::nullopt;
  }
  return Sum;
}

bool DimExpr::isNondecreasing(
    const std::function<std::optional<int64_t>(llvm::StringRef)> &Min) const {
  for (const auto &Entry : terms()) {
    const Term &T = Entry.second;
    if (T.Factors.empty())
      continue;
    if (T.Coef < 0)
      return false;
    for (const AtomRef &A : T.Factors) {
      if (A->K == Atom::Unknown)
        return false;
      if (A->K == Atom::Symbol)
        continue; // at or above Min >= 0
      if (!A->Num.isNondecreasing(Min))
        return false;
      // A product grows with its factors only while they are not negative.
      if (T.Factors.size() > 1) {
        std::optional<int64_t> V = A->Num.evaluate(Min);
        if (!V || *V < 0)
          return false;
      }
    }
  }
  return true;
}

DimExpr DimExpr::substitute(
    const std::function<std::optional<DimExpr>(llvm::StringRef)> &F) const {
  DimExpr Result;
  for (const auto &Entry : terms()) {
    DimExpr P = constant(Entry.second.Coef);
    for (const AtomRef &A : Entry.second.Factors) {
      DimExpr X;
      switch (A->K) {
      case Atom::Symbol:
        if (std::optional<DimExpr> S = F(A->Name))
          X = *S;
        else
          X = Access::fromAtom(A);
        break;
      case Atom::Unknown:
        X = Access::fromAtom(A);
        break;
      case Atom::FloorDiv:
        X = A->Num.substitute(F).floorDiv(A->Den);
        break;
      case Atom::ExactDiv:
        X = A->Num.substitute(F).exactDivConstant(A->Den);
        break;
      }
      P = P * X;
    }
    Result = Result + P;
  }
  return Result;
}

std::optional<std::pair<DimExpr, int64_t>> DimExpr::relaxFloors() const {
  int64_t L = 1;
  for (const auto &Entry : terms())
    for (const AtomRef &A : Entry.second.Factors)
      if (A->K == Atom::FloorDiv) {
        // Bounded so that the lcm and the scaled coefficients stay small.
        if (Entry.second.Factors.size() != 1 || A->Den > (1 << 20))
          return std::nullopt;
        L = std::lcm(L, A->Den);
        if (L > (1 << 20))
          return std::nullopt;
      }
  if (L == 1)
    return std::nullopt;
  DimExpr Bound;
  for (const auto &Entry : terms()) {
    const Term &T = Entry.second;
    if (T.Factors.size() != 1 || T.Factors[0]->K != Atom::FloorDiv) {
      Bound = Bound + constant(L) * Access::fromTerm(T);
      continue;
    }
    // floor(P/K) lies in [(P-K+1)/K, P/K]: the end that bounds c*floor
    // from below, times L (which K divides).
    const Atom &F = *T.Factors[0];
    DimExpr P = T.Coef > 0 ? F.Num - constant(F.Den - 1) : F.Num;
    int64_t Scaled;
    if (__builtin_mul_overflow(T.Coef, L / F.Den, &Scaled))
      return std::nullopt;
    Bound = Bound + constant(Scaled) * P;
  }
  return std::make_pair(Bound, L);
}

std::pair<int64_t, int64_t> DimExpr::coefficientGcd() const {
  int64_t G = 0, C = 0;
  for (const auto &Entry : terms()) {
    if (Entry.second.Factors.empty())
      C = Entry.second.Coef;
    else if (Entry.second.Coef == INT64_MIN)
      G = std::gcd(G, int64_t(1) << 62); // |INT64_MIN| does not fit
    else
      G = std::gcd(G, Entry.second.Coef < 0 ? -Entry.second.Coef
                                            : Entry.second.Coef);
  }
  return {G, C};
}

std::string DimExpr::str() const {
  if (!R)
    return "0";
  // Higher-degree terms first, the constant last; ties alphabetically.
  std::vector<std::pair<size_t, std::string>> Order;
  for (const auto &Entry : terms())
    Order.emplace_back(Entry.second.Factors.size(), printTerm(Entry.second));
  std::sort(Order.begin(), Order.end(), [](const auto &A, const auto &B) {
    if (A.first != B.first)
      return A.first > B.first;
    return A.second < B.second;
  });
  std::string S;
  for (const auto &Entry : Order) {
    const std::string &P = Entry.second;
    if (!S.empty() && P.front() != '-')
      S += '+';
    S += P;
  }
  return S;
}

bool onnxopt::isExporterMadeSymbol(llvm::StringRef Name) {
  auto AllDigits = [](llvm::StringRef S) {
    return !S.empty() &&
           llvm::all_of(S, [](char C) { return C >= '0' && C <= '9'; });
  };
  if (Name.startswith("unk__") && AllDigits(Name.drop_front(5)))
    return true;
  if (Name.startswith("p2o.DynamicDimension.") &&
      AllDigits(Name.drop_front(strlen("p2o.DynamicDimension."))))
    return true;
  if (Name.startswith("dim") && AllDigits(Name.drop_front(3)))
    return true;
  // torch.export / dynamo: s0, s1, ...
  if (Name.size() > 1 && Name[0] == 's' && AllDigits(Name.drop_front(1)))
    return true;
  // torch.onnx.export with dynamic_axes given as a list: input_dynamic_axes_1.
  size_t Axes = Name.rfind("_dynamic_axes_");
  if (Axes != llvm::StringRef::npos && Axes > 0 &&
      AllDigits(Name.drop_front(Axes + strlen("_dynamic_axes_"))))
    return true;
  // An expression used as a name (onnxruntime's symbolic shape inference,
  // unify-dims{derived=expr}): 2*ceil(H/8), seq+1.
  if (Name.find_first_of("+*/()") != llvm::StringRef::npos)
    return true;
  size_t Pos = Name.rfind("_dim_");
  return Pos != llvm::StringRef::npos && Pos > 0 &&
         AllDigits(Name.drop_front(Pos + 5));
}
