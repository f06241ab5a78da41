//===- PipelineParser.h - The textual pipeline syntax ----------*- C++ -*-===//
//
//   pipeline := pass (',' pass)*
//   pass     := name ('{' opt (' '+ opt)* '}')?
//   opt      := key ('=' value)?
//
// parsePassPipeline(Text, PM, Error) in PassManager.h is the short form;
// this header gives callers that show the error against the text the user
// typed (a caret under the column) the message and position separately.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_PASS_PIPELINEPARSER_H
#define ONNXOPT_PASS_PIPELINEPARSER_H

#include "onnxopt/Pass/Pass.h"
#include <memory>
#include <string>
#include <vector>

namespace onnxopt {

/// A pipeline syntax or option error.
struct PipelineError {
  /// The problem, without a position (lowercase, no trailing period).
  std::string Message;
  /// 0-based offset into the pipeline text the problem is at.
  size_t Pos = 0;
  /// Message with " at position N" (1-based) where it reads best.
  std::string WithPosition;
};

/// Parses \p Text into passes, checking every option's value, range and
/// whether a pass got the options it needs. Nothing is appended on error.
LogicalResult parsePassPipeline(llvm::StringRef Text,
                                std::vector<std::unique_ptr<Pass>> &Out,
                                PipelineError &Error);

/// The registered pass closest to \p Name, or "" if none is close enough to
/// be a likely typo.
std::string suggestPassName(llvm::StringRef Name);

/// The candidate closest to \p Word, or "" when none is a likely typo.
std::string suggestClosest(llvm::StringRef Word,
                           llvm::ArrayRef<std::string> Candidates);

} // namespace onnxopt

#endif // ONNXOPT_PASS_PIPELINEPARSER_H
