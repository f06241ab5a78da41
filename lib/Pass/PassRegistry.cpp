//===- PassRegistry.cpp - Named passes ------------------------------------===//
//
// The registry is a function-local static (no static constructors) keyed by
// pass argument; std::map keeps listings sorted and deterministic.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <map>
#include <string>

using namespace onnxopt;

static std::map<std::string, PassFactory> &getRegistry() {
  static std::map<std::string, PassFactory> Registry;
  return Registry;
}

void onnxopt::registerPass(PassFactory Factory) {
  assert(Factory && "registering a null pass factory");
  std::unique_ptr<Pass> P = Factory();
  assert(P && "pass factory returned null");
  getRegistry()[P->getArgument().str()] = std::move(Factory);
}

std::unique_ptr<Pass> onnxopt::createPass(llvm::StringRef Argument) {
  auto &Registry = getRegistry();
  auto It = Registry.find(Argument.str());
  if (It == Registry.end())
    return nullptr;
  return It->second();
}

std::vector<std::unique_ptr<Pass>> onnxopt::getRegisteredPasses() {
  std::vector<std::unique_ptr<Pass>> Passes;
  for (auto &Entry : getRegistry())
    Passes.push_back(Entry.second());
  return Passes;
}

/// The option's current value as pipeline text; "" when it has none worth
/// showing (an empty list or string).
static std::string getDefaultText(const OptionBase &O) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  O.printValue(OS);
  OS.flush();
  return S == "\"\"" ? std::string() : S;
}

void onnxopt::printRegisteredPasses(llvm::raw_ostream &OS) {
  std::vector<std::unique_ptr<Pass>> Passes = getRegisteredPasses();
  size_t ArgWidth = 0;
  for (const auto &P : Passes)
    ArgWidth = std::max(ArgWidth, P->getArgument().size());

  for (const auto &P : Passes) {
    OS << "  " << P->getArgument();
    OS.indent(ArgWidth - P->getArgument().size());
    OS << "  - " << P->getDescription() << "\n";

    // Options sorted by name, their help aligned in one column.
    std::vector<const OptionBase *> Opts(P->getOptions().begin(),
                                         P->getOptions().end());
    std::stable_sort(Opts.begin(), Opts.end(),
                     [](const OptionBase *A, const OptionBase *B) {
                       return A->getName() < B->getName();
                     });
    std::vector<std::string> Keys;
    size_t KeyWidth = 0;
    for (const OptionBase *O : Opts) {
      Keys.push_back(O->getName().str() + "=<" + O->getTypeName().str() + ">");
      KeyWidth = std::max(KeyWidth, Keys.back().size());
    }
    std::vector<std::string> Required;
    for (const OptionBase *O : Opts)
      if (O->isRequired())
        Required.push_back(O->getName().str());
    for (size_t I = 0; I < Opts.size(); ++I) {
      const OptionConstraint &C = Opts[I]->getConstraint();
      OS << "    " << Keys[I];
      OS.indent(KeyWidth - Keys[I].size());
      OS << "  " << Opts[I]->getHelp();
      std::string Default = getDefaultText(*Opts[I]);
      if (!Default.empty())
        OS << " (default: " << Default << ")";
      if (C.Min && C.Max)
        OS << " (" << *C.Min << " to " << *C.Max << ")";
      else if (C.Min)
        OS << " (at least " << *C.Min << ")";
      if (C.Required)
        OS << (Required.size() == 1
                   ? std::string(" (required)")
                   : " (required: one of " + llvm::join(Required, ", ") + ")");
      OS << "\n";
    }
  }
}
