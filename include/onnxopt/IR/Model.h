//===- Model.h - A whole ONNX model ----------------------------*- C++ -*-===//
#ifndef ONNXOPT_IR_MODEL_H
#define ONNXOPT_IR_MODEL_H

#include "onnxopt/IR/Graph.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace onnxopt {

struct OpsetImport {
  std::string Domain;
  int64_t Version = 0;
};

class Model {
public:
  Model();
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  int64_t getIrVersion() const { return IrVersion; }
  void setIrVersion(int64_t V) { IrVersion = V; }

  std::vector<OpsetImport> &getOpsetImports() { return Opsets; }
  const std::vector<OpsetImport> &getOpsetImports() const { return Opsets; }
  /// The imported version of \p Domain ("" and "ai.onnx" are the same);
  /// 0 when not imported.
  int64_t getOpsetVersion(llvm::StringRef Domain) const;

  Graph &getGraph() { return *MainGraph; }
  const Graph &getGraph() const { return *MainGraph; }

  /// Returns \p Hint if no value in the model uses it yet, else Hint_1,
  /// Hint_2, ... The returned name is reserved.
  std::string makeUniqueName(llvm::StringRef Hint);
  /// Reserves \p Name; returns false if it was already taken.
  bool reserveName(llvm::StringRef Name);
  bool isNameTaken(llvm::StringRef Name) const {
    return UsedNames.count(Name);
  }

  /// The directory external-data locations are relative to ("" = cwd).
  std::string BaseDir;
  /// Serialized ModelProto minus ir_version, opset_import and graph: carries
  /// producer, doc_string, metadata_props, functions, training_info and
  /// unknown fields.
  std::string Residual;

private:
  int64_t IrVersion = 8;
  std::vector<OpsetImport> Opsets;
  std::unique_ptr<Graph> MainGraph;
  llvm::StringSet<> UsedNames;
  uint64_t NextSuffix = 1;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_MODEL_H
