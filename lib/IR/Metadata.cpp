//===- Metadata.cpp - The model's metadata_props --------------------------===//
#include "onnxopt/IR/Metadata.h"
#include "onnxopt/IR/Model.h"
#include <onnx/onnx_pb.h>

using namespace onnxopt;

static bool parseResidual(const Model &M, onnx::ModelProto &Proto,
                          std::string &Error) {
  if (M.Residual.empty() || Proto.ParseFromString(M.Residual))
    return true;
  Error = "the model's metadata cannot be parsed";
  return false;
}

bool onnxopt::readMetadataProp(const Model &M, llvm::StringRef Key,
                               std::optional<std::string> &Value,
                               std::string &Error) {
  Value.reset();
  onnx::ModelProto Proto;
  if (!parseResidual(M, Proto, Error))
    return false;
  for (const onnx::StringStringEntryProto &E : Proto.metadata_props())
    if (E.key() == Key) {
      Value = E.value();
      return true;
    }
  return true;
}

bool onnxopt::writeMetadataProp(Model &M, llvm::StringRef Key,
                                const std::optional<std::string> &Value,
                                std::string &Error) {
  onnx::ModelProto Proto;
  if (!parseResidual(M, Proto, Error))
    return false;
  auto *Props = Proto.mutable_metadata_props();
  onnx::StringStringEntryProto *Entry = nullptr;
  for (int I = 0; I < Props->size(); ++I) {
    if (Props->Get(I).key() != Key)
      continue;
    if (!Value) {
      Props->DeleteSubrange(I, 1);
      --I;
      continue;
    }
    Entry = Props->Mutable(I);
  }
  if (Value) {
    if (!Entry) {
      Entry = Props->Add();
      Entry->set_key(Key.str());
    }
    Entry->set_value(*Value);
  }
  M.Residual = Proto.SerializeAsString();
  return true;
}
