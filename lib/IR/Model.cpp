//===- Model.cpp - A whole ONNX model -------------------------------------===//
#include "onnxopt/IR/Model.h"
#include "llvm/ADT/Twine.h"

using namespace onnxopt;

Model::Model() : MainGraph(std::make_unique<Graph>(this, "main")) {}
Model::~Model() = default;

int64_t Model::getOpsetVersion(llvm::StringRef Domain) const {
  bool WantOnnx = Domain.empty() || Domain == "ai.onnx";
  for (const OpsetImport &O : Opsets) {
    bool IsOnnx = O.Domain.empty() || O.Domain == "ai.onnx";
    if (WantOnnx ? IsOnnx : O.Domain == Domain)
      return O.Version;
  }
  return 0;
}

bool Model::reserveName(llvm::StringRef Name) {
  NameSlot &Slot = Names.intern(Name).getValue();
  if (Slot.isReserved())
    return false;
  Slot.setReserved(true);
  return true;
}

NameEntry &Model::getNameEntry(const Value &V) {
  // The entry is this model's (internName): only the value's view is const.
  return const_cast<NameEntry &>(*V.Name);
}

bool Model::reserveName(const Value &V) {
  NameSlot &Slot = getNameEntry(V).getValue();
  if (Slot.isReserved())
    return false;
  Slot.setReserved(true);
  return true;
}

std::string Model::makeUniqueName(llvm::StringRef Hint) {
  if (Hint.empty())
    Hint = "v";
  if (reserveName(Hint))
    return Hint.str();
  // A model-wide counter keeps this linear: suffixes are never retried.
  while (true) {
    std::string Candidate = (Hint + "_" + llvm::Twine(NextSuffix++)).str();
    if (reserveName(Candidate))
      return Candidate;
  }
}
