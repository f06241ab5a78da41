//===- OpFacts.h - Moved to the ops layer -----------------------*- C++ -*-===//
//
// OpFacts lives in the ops layer (include/onnxopt/Ops/OpFacts.h): its op
// predicates read the op registry. This header keeps the old include path
// working until its users include the new one.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_OPFACTS_H
#define ONNXOPT_ANALYSIS_OPFACTS_H

#include "onnxopt/Ops/OpFacts.h"

#endif // ONNXOPT_ANALYSIS_OPFACTS_H
