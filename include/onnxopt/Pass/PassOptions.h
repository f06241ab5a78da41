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
#include <optional>
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

/// What values an option accepts beyond its type, checked when the pipeline
/// is parsed (before a model is loaded):
///   Option<int64_t> MaxRounds{*this, "max-rounds", "help", 8, atLeast(1)};
///   ListOption<std::string> Ranges{*this, "ranges", "help", required()};
struct OptionConstraint {
  /// The pass needs a value for at least one of its required options.
  bool Required = false;
  std::optional<int64_t> Min, Max;
  /// The values a string option may take (empty: any).
  std::vector<std::string> Choices;
  /// A check of one (list item) value's text, for formats the type does not
  /// capture (`symbol:min:max`); sets the error and returns false.
  bool (*Check)(llvm::StringRef Text, std::string &Error) = nullptr;
  OptionConstraint &also(OptionConstraint Other) {
    Required |= Other.Required;
    if (Other.Min)
      Min = Other.Min;
    if (Other.Max)
      Max = Other.Max;
    if (!Other.Choices.empty())
      Choices = std::move(Other.Choices);
    if (Other.Check)
      Check = Other.Check;
    return *this;
  }
};
inline OptionConstraint required() {
  OptionConstraint C;
  C.Required = true;
  return C;
}
inline OptionConstraint atLeast(int64_t Min) {
  OptionConstraint C;
  C.Min = Min;
  return C;
}
inline OptionConstraint checkedBy(bool (*Check)(llvm::StringRef Text,
                                                std::string &Error)) {
  OptionConstraint C;
  C.Check = Check;
  return C;
}
inline OptionConstraint oneOf(std::vector<std::string> Choices) {
  OptionConstraint C;
  C.Choices = std::move(Choices);
  return C;
}

class OptionBase {
public:
  OptionBase(Pass &Owner, llvm::StringRef Name, llvm::StringRef Help,
             OptionConstraint Constraint = {});
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
  const OptionConstraint &getConstraint() const { return Constraint; }
  bool isRequired() const { return Constraint.Required; }

protected:
  /// Checks one (list item) value text against the constraint; on failure
  /// sets \p Error.
  bool checkConstraint(llvm::StringRef Text, std::string &Error) const;
  bool WasSet = false;
  OptionConstraint Constraint;

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
         T Default = T(), OptionConstraint Constraint = {})
      : OptionBase(Owner, Name, Help, std::move(Constraint)),
        Val(std::move(Default)) {}
  const T &getValue() const { return Val; }
  operator const T &() const { return Val; }
  Option &operator=(T V) {
    Val = std::move(V);
    WasSet = true;
    return *this;
  }
  bool parse(llvm::StringRef Text, std::string &Error) override {
    T Tmp;
    if (!parseOptionValue(Text, Tmp, Error) || !checkConstraint(Text, Error))
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
  ListOption(Pass &Owner, llvm::StringRef Name, llvm::StringRef Help,
             OptionConstraint Constraint = {})
      : OptionBase(Owner, Name, Help, std::move(Constraint)) {}
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
      if (!parseOptionValue(Item, V, Error) || !checkConstraint(Item, Error))
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
