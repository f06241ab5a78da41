//===- DimNameParser.cpp - Dim names that are expressions -----------------===//
//
// A recursive-descent parser over rationals Num/Den (Num a DimExpr, Den a
// positive integer): `/` by a constant makes a fraction, `floor`/`ceiling`
// and `//` turn it back into the algebra's floor and ceil divisions. The
// grammar is what sympy's and this project's printers write:
//   sum     := ['-'] product (('+' | '-') product)*
//   product := power (('*' | '/' | '//' | '%') power)*
//   power   := unary ['**' integer]
//   unary   := '-' unary | atom
//   atom    := integer | identifier | identifier '(' sum {',' sum} ')'
//            | '(' sum ')'
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Ops/DimNameParser.h"
#include "llvm/ADT/StringExtras.h"
#include <vector>

using namespace onnxopt;

namespace {

/// Num / Den with Den > 0.
struct Fraction {
  DimExpr Num;
  int64_t Den = 1;
};

/// Denominators stay small in real names (strides, kernel sizes); larger
/// ones are not worth the overflow checks.
constexpr int64_t kMaxDen = int64_t(1) << 30;
/// Nesting deeper than this is not a dim name (and must not blow the stack).
constexpr unsigned kMaxDepth = 64;
constexpr int64_t kMaxPower = 8;

class Parser {
public:
  explicit Parser(llvm::StringRef Text) : Text(Text) {}

  std::optional<DimExpr> parse() {
    std::optional<Fraction> F = sum();
    skipSpace();
    if (!F || Pos != Text.size())
      return std::nullopt;
    std::optional<DimExpr> E = F->Den == 1
                                   ? std::optional<DimExpr>(F->Num)
                                   : F->Num.divExact(DimExpr::constant(F->Den));
    if (!E || E->hasUnknown()) // an overflowing product
      return std::nullopt;
    return E;
  }

private:
  llvm::StringRef Text;
  size_t Pos = 0;
  unsigned Depth = 0;

  void skipSpace() {
    while (Pos < Text.size() && llvm::isSpace(Text[Pos]))
      ++Pos;
  }
  /// Consumes \p Token (after spaces) if it comes next.
  bool eat(llvm::StringRef Token) {
    skipSpace();
    if (!Text.drop_front(Pos).startswith(Token))
      return false;
    Pos += Token.size();
    return true;
  }
  char peek() {
    skipSpace();
    return Pos < Text.size() ? Text[Pos] : '\0';
  }

  static std::optional<Fraction> add(const Fraction &A, const Fraction &B,
                                     bool Subtract) {
    DimExpr BN = Subtract ? B.Num * DimExpr::constant(-1) : B.Num;
    if (A.Den == B.Den)
      return Fraction{A.Num + BN, A.Den};
    int64_t Den;
    if (__builtin_mul_overflow(A.Den, B.Den, &Den) || Den > kMaxDen)
      return std::nullopt;
    return Fraction{
        A.Num * DimExpr::constant(B.Den) + BN * DimExpr::constant(A.Den), Den};
  }
  static std::optional<Fraction> multiply(const Fraction &A,
                                          const Fraction &B) {
    int64_t Den;
    if (__builtin_mul_overflow(A.Den, B.Den, &Den) || Den > kMaxDen)
      return std::nullopt;
    return Fraction{A.Num * B.Num, Den};
  }
  /// The positive integer \p F is, if it is one.
  static std::optional<int64_t> positiveInteger(const Fraction &F) {
    if (F.Den != 1 || !F.Num.isConstant() || F.Num.getConstant() <= 0)
      return std::nullopt;
    return F.Num.getConstant();
  }
  /// A / B for a non-zero constant B (p/q: A*q/p).
  static std::optional<Fraction> divide(const Fraction &A, const Fraction &B) {
    if (!B.Num.isConstant() || B.Num.getConstant() == 0)
      return std::nullopt;
    int64_t P = B.Num.getConstant();
    DimExpr Num = A.Num * DimExpr::constant(B.Den);
    if (P < 0) {
      Num = Num * DimExpr::constant(-1);
      P = -P;
    }
    int64_t Den;
    if (__builtin_mul_overflow(A.Den, P, &Den) || Den > kMaxDen)
      return std::nullopt;
    return Fraction{Num, Den};
  }
  static Fraction floorOf(const Fraction &F) {
    return Fraction{F.Num.floorDiv(F.Den), 1};
  }
  static Fraction ceilOf(const Fraction &F) {
    return Fraction{F.Num.ceilDiv(F.Den), 1};
  }
  /// floor(A / K) and A - K*floor(A / K) for a positive integer K.
  static std::optional<Fraction> floorDivide(const Fraction &A,
                                             const Fraction &B) {
    std::optional<Fraction> Q = divide(A, B);
    if (!Q || !positiveInteger(B))
      return std::nullopt;
    return floorOf(*Q);
  }
  static std::optional<Fraction> modulo(const Fraction &A, const Fraction &B) {
    std::optional<Fraction> Q = floorDivide(A, B);
    if (!Q || A.Den != 1)
      return std::nullopt;
    return add(A, Fraction{Q->Num * B.Num, 1}, /*Subtract=*/true);
  }

  std::optional<Fraction> sum() {
    if (++Depth > kMaxDepth)
      return std::nullopt;
    std::optional<Fraction> Acc = product();
    while (Acc) {
      bool Minus = false;
      if (eat("-"))
        Minus = true;
      else if (!eat("+"))
        break;
      std::optional<Fraction> Rhs = product();
      if (!Rhs)
        return std::nullopt;
      Acc = add(*Acc, *Rhs, Minus);
    }
    --Depth;
    return Acc;
  }

  std::optional<Fraction> product() {
    std::optional<Fraction> Acc = power();
    while (Acc) {
      std::optional<Fraction> (*Apply)(const Fraction &, const Fraction &);
      // `**` belongs to power(); `//` before `/`.
      if (Text.drop_front(Pos).ltrim().startswith("**"))
        break;
      if (eat("*"))
        Apply = multiply;
      else if (eat("//"))
        Apply = floorDivide;
      else if (eat("/"))
        Apply = divide;
      else if (eat("%"))
        Apply = modulo;
      else
        break;
      std::optional<Fraction> Rhs = power();
      if (!Rhs)
        return std::nullopt;
      Acc = Apply(*Acc, *Rhs);
    }
    return Acc;
  }

  std::optional<Fraction> power() {
    std::optional<Fraction> Base = unary();
    if (!Base || !eat("**"))
      return Base;
    std::optional<Fraction> Exp = unary();
    if (!Exp || Exp->Den != 1 || !Exp->Num.isConstant() ||
        Exp->Num.getConstant() < 0 || Exp->Num.getConstant() > kMaxPower)
      return std::nullopt;
    std::optional<Fraction> Result = Fraction{DimExpr::constant(1), 1};
    for (int64_t I = 0; I < Exp->Num.getConstant() && Result; ++I)
      Result = multiply(*Result, *Base);
    return Result;
  }

  std::optional<Fraction> unary() {
    if (!eat("-"))
      return atom();
    if (++Depth > kMaxDepth)
      return std::nullopt;
    std::optional<Fraction> F = unary();
    --Depth;
    if (!F)
      return std::nullopt;
    return Fraction{F->Num * DimExpr::constant(-1), F->Den};
  }

  std::optional<Fraction> atom() {
    char C = peek();
    if (C == '(') {
      ++Pos;
      std::optional<Fraction> F = sum();
      if (!F || !eat(")"))
        return std::nullopt;
      return F;
    }
    if (llvm::isDigit(C)) {
      size_t Start = Pos;
      while (Pos < Text.size() && llvm::isDigit(Text[Pos]))
        ++Pos;
      int64_t V;
      if (Text.slice(Start, Pos).getAsInteger(10, V))
        return std::nullopt;
      return Fraction{DimExpr::constant(V), 1};
    }
    if (!llvm::isAlpha(C) && C != '_')
      return std::nullopt;
    size_t Start = Pos;
    while (Pos < Text.size() &&
           (llvm::isAlnum(Text[Pos]) || Text[Pos] == '_' || Text[Pos] == '.'))
      ++Pos;
    llvm::StringRef Name = Text.slice(Start, Pos);
    if (peek() != '(')
      return Fraction{DimExpr::symbol(Name), 1};
    ++Pos;
    return call(Name);
  }

  /// A function applied to its arguments (the '(' is read).
  std::optional<Fraction> call(llvm::StringRef Name) {
    std::vector<Fraction> Args;
    do {
      std::optional<Fraction> A = sum();
      if (!A)
        return std::nullopt;
      Args.push_back(std::move(*A));
    } while (eat(","));
    if (!eat(")"))
      return std::nullopt;
    if (Args.size() == 1) {
      if (Name == "floor" || Name == "FloorToInt")
        return floorOf(Args[0]);
      if (Name == "ceiling" || Name == "ceil" || Name == "CeilToInt")
        return ceilOf(Args[0]);
      return std::nullopt;
    }
    if (Args.size() != 2)
      return std::nullopt;
    if (Name == "FloorDiv")
      return floorDivide(Args[0], Args[1]);
    if (Name == "CeilDiv") {
      std::optional<Fraction> Q = divide(Args[0], Args[1]);
      if (!Q || !positiveInteger(Args[1]))
        return std::nullopt;
      return ceilOf(*Q);
    }
    if (Name == "Mod" || Name == "PythonMod")
      return modulo(Args[0], Args[1]);
    // Min, Max and the rest have no form in the algebra.
    return std::nullopt;
  }
};

} // namespace

std::optional<DimExpr> onnxopt::parseDimName(llvm::StringRef Name) {
  if (Name.empty() || Name.size() > 4096)
    return std::nullopt;
  return Parser(Name).parse();
}

bool onnxopt::isExpressionDimName(llvm::StringRef Name) {
  return Name.find_first_of("+-*/%()") != llvm::StringRef::npos &&
         parseDimName(Name).has_value();
}
