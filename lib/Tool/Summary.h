//===- Summary.h - Before/after model summary (--summary) ------*- C++ -*-===//
#ifndef ONNXOPT_LIB_TOOL_SUMMARY_H
#define ONNXOPT_LIB_TOOL_SUMMARY_H

#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace onnxopt {

class Model;

/// What --summary compares: the graph interface, op counts and weights.
struct ModelSummary {
  std::vector<std::pair<std::string, std::string>> Inputs, Outputs;
  std::map<std::string, uint64_t> OpCounts; // includes subgraph nodes
  uint64_t NumNodes = 0;
  uint64_t NumInitializers = 0;
  uint64_t InitializerBytes = 0;
  /// Stored dim ranges (set-dim-range), `N=1:16` per symbol, sorted.
  std::vector<std::string> DimRanges;
  /// Stored gears (set-dim-range{gears=...}), `input[1,3,640,640]` each,
  /// in stored order.
  std::vector<std::string> DimGears;
  /// Expressions of derived dims (unify-dims), `boxes_dim1=...`, sorted.
  std::vector<std::string> DerivedDims;
  /// The conditions on the input dims (addConstraints), in the order the
  /// dim algebra finds them.
  std::vector<std::string> Constraints;
};

ModelSummary summarizeModel(const Model &M);
/// Fills S.Constraints from the model's inferred types; the model keeps the
/// types it has.
void addConstraints(Model &M, ModelSummary &S);
/// Prints a two-column before/after table.
void printSummaryTable(llvm::raw_ostream &OS, const ModelSummary &Before,
                       const ModelSummary &After);

} // namespace onnxopt

#endif // ONNXOPT_LIB_TOOL_SUMMARY_H
