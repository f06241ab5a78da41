//===- RecordedTypes.h - The shape analysis of passes that record types ---===//
//
// infer-shapes, unify-dims and freeze-dims write the inferred types into the
// model. They share the cached ShapeInfo; when there is none, they build it
// recorded, so that inference writes into the IR as it goes and never holds
// a second copy of every type beside it.
//
//===----------------------------------------------------------------------===//

#ifndef ONNXOPT_PASSES_RECORDEDTYPES_H
#define ONNXOPT_PASSES_RECORDEDTYPES_H

#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Pass/Pass.h"

namespace onnxopt {

/// The model's inferred types, recorded in \p M (ShapeInfo::commit).
inline ShapeInfo &recordInferredTypes(Model &M, PassContext &Ctx) {
  AnalysisManager &AM = Ctx.getAnalysisManager();
  ShapeInfo &Types =
      AM.getOrBuildAnalysis<ShapeInfo>(M, AM.getDiags(), ShapeInfo::Recorded);
  Types.commit();
  return Types;
}

} // namespace onnxopt

#endif // ONNXOPT_PASSES_RECORDEDTYPES_H
