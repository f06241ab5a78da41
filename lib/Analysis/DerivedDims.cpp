//===- DerivedDims.cpp - Expressions of derived dims ----------------------===//
//
// Reads and writes the expressions kept in the model's metadata_props, the
// same way DimRanges.cpp keeps ranges: parse the residual, touch one key,
// serialize it back.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DerivedDims.h"
#include "onnxopt/IR/Model.h"
#include "llvm/ADT/SmallVector.h"
#include <onnx/onnx_pb.h>

using namespace onnxopt;

static bool parseResidual(const Model &M, onnx::ModelProto &Proto,
                          std::string &Error) {
  if (M.Residual.empty() || Proto.ParseFromString(M.Residual))
    return true;
  Error = "the model's metadata cannot be parsed";
  return false;
}

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
  onnx::ModelProto Proto;
  if (!parseResidual(M, Proto, Error))
    return false;
  for (const onnx::StringStringEntryProto &E : Proto.metadata_props())
    if (E.key() == DerivedDimsKey)
      return parseDerivedDims(E.value(), Out, Error);
  return true;
}

bool onnxopt::setDerivedDims(Model &M, const DerivedDimMap &Dims,
                             std::string &Error) {
  onnx::ModelProto Proto;
  if (!parseResidual(M, Proto, Error))
    return false;
  auto *Props = Proto.mutable_metadata_props();
  onnx::StringStringEntryProto *Entry = nullptr;
  for (int I = 0; I < Props->size(); ++I) {
    if (Props->Get(I).key() != DerivedDimsKey)
      continue;
    if (Dims.empty()) {
      Props->DeleteSubrange(I, 1);
      --I;
      continue;
    }
    Entry = Props->Mutable(I);
  }
  if (!Dims.empty()) {
    if (!Entry) {
      Entry = Props->Add();
      Entry->set_key(DerivedDimsKey);
    }
    Entry->set_value(printDerivedDims(Dims));
  }
  M.Residual = Proto.SerializeAsString();
  return true;
}
