//===- TypeWalk.h - Visit every recorded dim of a model --------*- C++ -*-===//
#ifndef ONNXOPT_ANALYSIS_TYPEWALK_H
#define ONNXOPT_ANALYSIS_TYPEWALK_H

#include "onnxopt/IR/Type.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <functional>

namespace onnxopt {

class Model;
class Value;

/// Calls \p F on every dim of every type the model records: graph inputs,
/// initializers and node results of the main graph and of every subgraph
/// (in order, a node's subgraphs after its results), then value-infos that
/// name no value (\p V is null for those). Element types of sequences,
/// optionals and maps are visited too; \p Index is the dim's position in
/// its shape. \p F returns true when it changed the dim.
/// Calls \p F on every dim of \p T, element types of sequences, optionals
/// and maps included; \p Index is the dim's position in its shape.
void forEachDimOf(Type &T,
                  llvm::function_ref<void(Dim &D, unsigned Index)> F);

void forEachRecordedDim(
    Model &M,
    const std::function<bool(Dim &D, const Value *V, unsigned Index)> &F);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_TYPEWALK_H
