//===- Pass.cpp - The pass base class -------------------------------------===//
#include "onnxopt/Pass/Pass.h"

using namespace onnxopt;

Pass::~Pass() = default;

OptionBase *Pass::findOption(llvm::StringRef Name) const {
  for (OptionBase *O : Options)
    if (O->getName() == Name)
      return O;
  return nullptr;
}

void Pass::printAsTextualPipeline(llvm::raw_ostream &OS) const {
  OS << getArgument();
  bool First = true;
  for (const OptionBase *O : Options) {
    if (!O->hasValue())
      continue;
    OS << (First ? "{" : " ") << O->getName() << '=';
    O->printValue(OS);
    First = false;
  }
  if (!First)
    OS << '}';
}
