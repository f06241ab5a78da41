//===- Model.h - A whole ONNX model ----------------------------*- C++ -*-===//
#ifndef ONNXOPT_IR_MODEL_H
#define ONNXOPT_IR_MODEL_H

#include "onnxopt/IR/Graph.h"
#include "onnxopt/IR/NameTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"
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
  /// Reserves the name of \p V, a value of this model, without looking it
  /// up (the value holds its entry); returns false if it was already taken.
  bool reserveName(const Value &V);
  bool isNameTaken(llvm::StringRef Name) const {
    const NameEntry *E = Names.find(Name);
    return E && E->getValue().isReserved();
  }
  /// The entry of \p Name, or null when no value has had it (see NameSlot;
  /// for importers).
  NameEntry *findName(llvm::StringRef Name) { return Names.find(Name); }
  /// Starts loading what findName(\p Name) will read (for importers, a few
  /// nodes ahead of their lookups).
  void prefetchName(llvm::StringRef Name) const { Names.prefetch(Name); }
  /// Makes room for \p N names in all (for importers, before defining
  /// them).
  void reserveNames(size_t N) { Names.reserve(N); }
  /// How many names the model has had or reserved.
  size_t getNumNames() const { return Names.size(); }
  /// The entry \p V, a value of this model, holds (see NameSlot; for
  /// importers). Only the value's view of it is const.
  NameEntry &getNameEntry(const Value &V);

  /// A copy of \p S that lives as long as the model (node names: one
  /// allocation-free copy each instead of a std::string).
  llvm::StringRef saveString(llvm::StringRef S) { return Saver.save(S); }

  /// The directory external-data locations are relative to ("" = cwd).
  std::string BaseDir;
  /// Serialized ModelProto minus ir_version, opset_import and graph: carries
  /// producer, doc_string, metadata_props, functions, training_info and
  /// unknown fields.
  std::string Residual;

private:
  friend class Value;
  /// The entry of \p Name in Names, added (not reserved) if new. Values
  /// hold it as their name, so a name is stored once for the value and for
  /// the uniquing.
  const NameEntry *internName(llvm::StringRef Name) {
    return &Names.intern(Name);
  }

  int64_t IrVersion = 8;
  std::vector<OpsetImport> Opsets;
  /// Every name a value of the model has had or that was reserved (see
  /// NameSlot). Entries are never removed (the set of taken names only
  /// grows), so values may point at them. Declared before MainGraph, which
  /// holds those values.
  NameTable Names;
  llvm::BumpPtrAllocator StringArena;
  llvm::StringSaver Saver{StringArena};
  std::unique_ptr<Graph> MainGraph;
  uint64_t NextSuffix = 1;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_MODEL_H
