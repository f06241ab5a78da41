//===- PassOptions.h - Typed pass options ----------------------*- C++ -*-===//
//
// Options are declared as members of a pass and register themselves with it:
//   Option<int64_t> MaxIterations{*this, "max-iterations", "help", 10};
// They are set from pipeline text `pass{key=value list=1,2}`.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_PASS_PASSOPTIONS_H
#define ONNXOPT_PASS_PASSOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <string>
#include <vector>

namespace onnxopt {

class Pass;

/// A shape written `name[N,3,H,W]`; each dim is an integer, a symbol or "?".
struct ShapeSpec {
  std::string Name;
  std::vector<std::string> Dims;
  bool operator==(const ShapeSpec &O) const {
    return Name == O.Name && Dims == O.Dims;
  }
};

class OptionBase {
public:
  OptionBase(Pass &Owner, llvm::StringRef Name, llvm::StringRef Help);
  virtual ~OptionBase();
  llvm::StringRef getName() const { return Name; }
  llvm::StringRef getHelp() const { return Help; }
  /// Parses \p Text into the option; on failure sets \p Error (lowercase,
  /// no trailing period) and leaves the option unchanged.
  virtual bool parse(llvm::StringRef Text, std::string &Error) = 0;
  virtual void printValue(llvm::raw_ostream &OS) const = 0;
  /// "int", "bool", "string", "float", "list<int>", "list<string>",
  /// "list<shape>".
  virtual llvm::StringRef getTypeName() const = 0;
  bool hasValue() const { return WasSet; }

protected:
  bool WasSet = false;

private:
  std::string Name, Help;
};

// Parsers shared by all options (defined in PassOptions.cpp).
bool parseOptionValue(llvm::StringRef Text, int64_t &Out, std::string &Err);
bool parseOptionValue(llvm::StringRef Text, bool &Out, std::string &Err);
bool parseOptionValue(llvm::StringRef Text, double &Out, std::string &Err);
bool parseOptionValue(llvm::StringRef Text, std::string &Out, std::string &Err);
bool parseOptionValue(llvm::StringRef Text, ShapeSpec &Out, std::string &Err);
void printOptionValue(llvm::raw_ostream &OS, int64_t V);
void printOptionValue(llvm::raw_ostream &OS, bool V);
void printOptionValue(llvm::raw_ostream &OS, double V);
void printOptionValue(llvm::raw_ostream &OS, const std::string &V);
void printOptionValue(llvm::raw_ostream &OS, const ShapeSpec &V);
llvm::StringRef optionTypeName(int64_t *);
llvm::StringRef optionTypeName(bool *);
llvm::StringRef optionTypeName(double *);
llvm::StringRef optionTypeName(std::string *);
llvm::StringRef optionTypeName(ShapeSpec *);

/// Splits a list value at top-level commas (commas inside [] stay).
std::vector<std::string> splitOptionList(llvm::StringRef Text);

template <typename T> class Option : public OptionBase {
public:
  Option(Pass &Owner, llvm::StringRef Name, llvm::StringRef Help,
         T Default = T())
      : OptionBase(Owner, Name, Help), Val(std::move(Default)) {}
  const T &getValue() const { return Val; }
  operator const T &() const { return Val; }
  Option &operator=(T V) {
    Val = std::move(V);
    WasSet = true;
    return *this;
  }
  bool parse(llvm::StringRef Text, std::string &Error) override {
    T Tmp;
    if (!parseOptionValue(Text, Tmp, Error))
      return false;
    Val = std::move(Tmp);
    WasSet = true;
    return true;
  }
  void printValue(llvm::raw_ostream &OS) const override {
    printOptionValue(OS, Val);
  }
  llvm::StringRef getTypeName() const override {
    return optionTypeName(static_cast<T *>(nullptr));
  }

private:
  T Val;
};

/// A comma-separated list option: `dims=N:1,H:640`, `shapes=x[1,3],y[2]`.
template <typename T> class ListOption : public OptionBase {
public:
  ListOption(Pass &Owner, llvm::StringRef Name, llvm::StringRef Help)
      : OptionBase(Owner, Name, Help) {}
  const std::vector<T> &getValue() const { return Vals; }
  operator const std::vector<T> &() const { return Vals; }
  bool empty() const { return Vals.empty(); }
  size_t size() const { return Vals.size(); }
  typename std::vector<T>::const_iterator begin() const { return Vals.begin(); }
  typename std::vector<T>::const_iterator end() const { return Vals.end(); }
  ListOption &operator=(std::vector<T> V) {
    Vals = std::move(V);
    WasSet = true;
    return *this;
  }
  bool parse(llvm::StringRef Text, std::string &Error) override {
    std::vector<T> Tmp;
    for (const std::string &Item : splitOptionList(Text)) {
      T V;
      if (!parseOptionValue(Item, V, Error))
        return false;
      Tmp.push_back(std::move(V));
    }
    Vals = std::move(Tmp);
    WasSet = true;
    return true;
  }
  void printValue(llvm::raw_ostream &OS) const override {
    for (size_t I = 0; I < Vals.size(); ++I) {
      if (I)
        OS << ',';
      printOptionValue(OS, Vals[I]);
    }
  }
  llvm::StringRef getTypeName() const override;

private:
  std::vector<T> Vals;
};

template <typename T> llvm::StringRef ListOption<T>::getTypeName() const {
  llvm::StringRef Elem = optionTypeName(static_cast<T *>(nullptr));
  if (Elem == "int")
    return "list<int>";
  if (Elem == "shape")
    return "list<shape>";
  if (Elem == "float")
    return "list<float>";
  return "list<string>";
}

} // namespace onnxopt

#endif // ONNXOPT_PASS_PASSOPTIONS_H
