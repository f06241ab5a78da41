//===- DerivedDims.cpp - Expressions of derived dims ----------------------===//
//
// Reads and writes the expressions kept in the model's metadata_props, the
// same way DimRanges.cpp keeps ranges: parse the residual, touch one key,
// serialize it back.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DerivedDims.h"
#include "onnxopt/IR/Metadata.h"
#include "onnxopt/IR/Model.h"
#include "llvm/ADT/SmallVector.h"

using namespace onnxopt;

bool onnxopt::parseDerivedDims(llvm::StringRef Text, DerivedDimMap &Out,
                               std::string &Error) {
  llvm::SmallVector<llvm::StringRef, 8> Entries;
  Text.split(Entries, ';');
  if (Entries.empty() || Entries[0].trim() != "v1") {
    Error = "unsupported derived dims format (expected 'v1;...'), got '" +
            Text.str() + "'";
    return false;
  }
  DerivedDimMap Dims;
  for (llvm::StringRef Entry : llvm::makeArrayRef(Entries).drop_front()) {
    if (Entry.trim().empty())
      continue;
    // Expressions never hold '=', symbols might: split at the last one.
    auto [Name, Expr] = Entry.rsplit('=');
    if (Name.empty() || Expr.empty() || !Entry.contains('=')) {
      Error = "bad derived dim entry '" + Entry.str() + "'";
      return false;
    }
    Dims[Name.str()] = Expr.str();
  }
  Out = std::move(Dims);
  return true;
}

std::string onnxopt::printDerivedDims(const DerivedDimMap &Dims) {
  std::string S = "v1";
  for (const auto &[Name, Expr] : Dims)
    S += ";" + Name + "=" + Expr;
  return S;
}

bool onnxopt::getDerivedDims(const Model &M, DerivedDimMap &Out,
                             std::string &Error) {
  Out.clear();
  std::optional<std::string> Text;
  if (!readMetadataProp(M, DerivedDimsKey, Text, Error))
    return false;
  return !Text || parseDerivedDims(*Text, Out, Error);
}

bool onnxopt::setDerivedDims(Model &M, const DerivedDimMap &Dims,
                             std::string &Error) {
  std::optional<std::string> Text;
  if (!Dims.empty())
    Text = printDerivedDims(Dims);
  return writeMetadataProp(M, DerivedDimsKey, Text, Error);
}
