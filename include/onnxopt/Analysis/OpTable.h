//===- OpTable.h - What changed in each op version above ONNX 1.12 -*- C++
//-*-===//
//
// ONNX 1.12's schemas stop at ai.onnx opset 17 and ai.onnx.ml opset 3. The
// table here, written from ONNX's operator changelog (docs/Changelog.md and
// docs/Changelog-ml.md), lists every op version introduced after that:
// ai.onnx opsets 18-24 and ai.onnx.ml opsets 4-5, each with what it changed
// compared with the op's previous version. Versions up to 17 (3 for
// ai.onnx.ml) are ONNX 1.12's own registry.
//
// resolveOpVersion() combines both: for a node at a given opset it says
// which ONNX 1.12 schema version describes it, or that the op changed its
// semantics after 1.12 (our own inference applies, see the op registry's
// InferRules.h), or that the op is gone or unknown.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_OPTABLE_H
#define ONNXOPT_ANALYSIS_OPTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>

namespace onnxopt {

/// How an op version differs from the op's previous version.
enum class OpChange : uint8_t {
  /// The op first appears at this version.
  New,
  /// Only type constraints changed (new element types such as bfloat16,
  /// float8, int4): inputs, attributes and shape rules are unchanged.
  TypesOnly,
  /// Inputs, attributes, attribute values or shape rules changed.
  Semantics,
  /// The op is deprecated (removed) at this version.
  Removed,
};

/// One op version newer than ONNX 1.12's schemas.
struct OpVersionEntry {
  /// "" for ai.onnx, "ai.onnx.ml".
  const char *Domain;
  const char *OpType;
  int Since;
  OpChange Change;
  /// For TypesOnly entries (and New/Semantics entries that also widened
  /// types): the element types added, as a bit mask over
  /// onnx::TensorProto_DataType codes (bit K = code K).
  uint32_t AddedTypes;
  /// What changed, for documentation ("axes is an input").
  const char *What;
};

/// The last opset of \p Domain that ONNX 1.12's schemas know (17 for
/// ai.onnx, 3 for ai.onnx.ml), or 0 for other domains.
int getOnnx112MaxOpset(llvm::StringRef Domain);

/// The last opset of \p Domain that the table covers (24 for ai.onnx, 5 for
/// ai.onnx.ml), or 0 for other domains.
int getOpTableMaxOpset(llvm::StringRef Domain);

/// Every entry of the table, sorted by domain, op type and version.
llvm::ArrayRef<OpVersionEntry> getOpVersionEntries();

/// The entries of one op, oldest first (empty if the op did not change
/// after ONNX 1.12).
llvm::ArrayRef<OpVersionEntry> getOpVersionEntries(llvm::StringRef Domain,
                                                   llvm::StringRef OpType);

/// How a node of \p OpType at opset \p Opset of \p Domain is described.
struct OpResolution {
  enum class Kind : uint8_t {
    /// ONNX 1.12's schema at SchemaOpset describes the node: either the
    /// opset is one ONNX 1.12 knows, or every change since its newest
    /// version was type-only.
    Onnx112Schema,
    /// The op version in effect (Since) changed semantics after ONNX 1.12
    /// (or is new): our own inference for (OpType, SemanticSince) applies.
    Modern,
    /// The op is deprecated at this opset.
    Removed,
    /// The opset is newer than the table.
    TooNew,
  };
  Kind K = Kind::Onnx112Schema;
  /// The opset at which to ask ONNX 1.12 for the schema (Onnx112Schema).
  int SchemaOpset = 0;
  /// The op version in effect: the newest table entry at or below the
  /// opset, or 0 if the op did not change after ONNX 1.12.
  int Since = 0;
  /// The newest version at or below Since that changed semantics (Modern).
  int SemanticSince = 0;
  /// Element types added by type-only versions above SchemaOpset (bit mask
  /// as in OpVersionEntry::AddedTypes), for type checks that reuse an older
  /// schema.
  uint32_t AddedTypes = 0;
};

/// Resolves \p OpType of \p Domain ("" or "ai.onnx" for the default domain)
/// at \p Opset. Domains other than ai.onnx and ai.onnx.ml always resolve to
/// Onnx112Schema at \p Opset.
OpResolution resolveOpVersion(llvm::StringRef Domain, llvm::StringRef OpType,
                              int64_t Opset);

/// "types only", "semantics", "new", "removed".
llvm::StringRef getOpChangeName(OpChange C);

/// The names of the element types in \p Mask, comma-separated.
std::string describeTypeMask(uint32_t Mask);

/// The tables of docs/opsets.md, generated from the op table and the
/// inference table: what onnx-opt infers and checks at each op version
/// newer than ONNX 1.12. test/unit/OpTableTest.cpp keeps the page equal to
/// it.
std::string renderOpTableMarkdown();

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_OPTABLE_H
