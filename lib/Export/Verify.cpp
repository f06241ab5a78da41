//===- Verify.cpp - Save-time verification of the exported proto ---------===//
//
// Before anything is written: ONNX's checker and strict shape inference on
// the skeleton of the exported proto (large payloads elided, never copied),
// or, for versions newer than ONNX 1.12, the op-table verifier on a thin copy.
//
//===----------------------------------------------------------------------===

#include "ExportDetail.h"
#include "onnxopt/Analysis/ModernVerify.h"
#include "onnxopt/Analysis/NodeValidation.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Import/Import.h"
#include "llvm/ADT/StringSet.h"
#include <google/protobuf/unknown_field_set.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

using namespace onnxopt;
using namespace onnxopt::detail;
namespace pbio = google::protobuf::io;

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// Turns \p T into metadata plus a placeholder payload.
static void thinTensor(const onnx::TensorProto &T, onnx::TensorProto &Out) {
  copyTensorMetadata(T, Out);
  Out.clear_external_data();
  Out.clear_data_location();
  setPlaceholderPayload(Out);
}

static bool isExternal(const onnx::TensorProto &T) {
  return T.data_location() == onnx::TensorProto::EXTERNAL;
}

namespace {

/// Readies a model for the checker and strict shape inference in place and,
/// with Restore, puts it back on destruction, so that saveModel verifies its
/// skeleton without copying it:
/// - external tensors become placeholders (the checker would look for their
///   files relative to the current directory);
/// - inference merges what it infers into the types of the inputs, outputs
///   and value_info of the graphs it visits (the main graph and, through
///   node attributes, its subgraphs) and appends value_info entries: those
///   three lists are saved and swapped back.
class VerificationScope {
public:
  VerificationScope(onnx::ModelProto &P, bool Restore) : Restore(Restore) {
    for (onnx::FunctionProto &F : *P.mutable_functions())
      for (onnx::NodeProto &N : *F.mutable_node())
        visit(N, /*Inferred=*/false);
    for (onnx::TrainingInfoProto &TI : *P.mutable_training_info()) {
      visit(*TI.mutable_initialization(), false);
      visit(*TI.mutable_algorithm(), false);
    }
    if (P.has_graph())
      visit(*P.mutable_graph(), true);
  }

  ~VerificationScope() {
    for (auto &[T, Saved] : Tensors)
      T->Swap(&Saved);
    for (SavedInfos &S : Infos) {
      S.G->mutable_input()->Swap(&S.Input);
      S.G->mutable_output()->Swap(&S.Output);
      S.G->mutable_value_info()->Swap(&S.ValueInfo);
    }
  }

private:
  struct SavedInfos {
    onnx::GraphProto *G;
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> Input, Output,
        ValueInfo;
  };

  void visit(onnx::TensorProto &T) {
    if (!isExternal(T))
      return;
    onnx::TensorProto Thin;
    thinTensor(T, Thin);
    if (Restore) {
      Tensors.emplace_back(&T, onnx::TensorProto());
      Tensors.back().second.Swap(&T);
    }
    T.Swap(&Thin);
  }

  void visit(onnx::GraphProto &G, bool Inferred) {
    if (Inferred && Restore)
      Infos.push_back({&G, G.input(), G.output(), G.value_info()});
    for (onnx::TensorProto &T : *G.mutable_initializer())
      visit(T);
    for (onnx::SparseTensorProto &S : *G.mutable_sparse_initializer()) {
      visit(*S.mutable_values());
      visit(*S.mutable_indices());
    }
    for (onnx::NodeProto &N : *G.mutable_node())
      visit(N, Inferred);
  }

  void visit(onnx::NodeProto &N, bool Inferred) {
    for (onnx::AttributeProto &A : *N.mutable_attribute()) {
      if (A.has_t())
        visit(*A.mutable_t());
      for (onnx::TensorProto &T : *A.mutable_tensors())
        visit(T);
      if (A.has_g())
        visit(*A.mutable_g(), Inferred);
      for (onnx::GraphProto &G : *A.mutable_graphs())
        visit(G, Inferred);
    }
  }

  bool Restore;
  std::vector<std::pair<onnx::TensorProto *, onnx::TensorProto>> Tensors;
  std::vector<SavedInfos> Infos;
};

} // namespace

/// A copy for verification: payloads of large initializers and of external
/// tensors become placeholders (the checker and inference only need their
/// metadata), so verifying never duplicates the weights.
static void copyForVerification(const onnx::ModelProto &P,
                                onnx::ModelProto &C) {
  // Field by field, so that the main graph's initializers can be thinned
  // while they are copied (VerificationScope thins the other tensors).
  C.set_ir_version(P.ir_version());
  *C.mutable_opset_import() = P.opset_import();
  *C.mutable_metadata_props() = P.metadata_props();
  *C.mutable_training_info() = P.training_info();
  *C.mutable_functions() = P.functions();
  if (P.has_producer_name())
    C.set_producer_name(P.producer_name());
  if (P.has_producer_version())
    C.set_producer_version(P.producer_version());
  if (P.has_domain())
    C.set_domain(P.domain());
  if (P.has_model_version())
    C.set_model_version(P.model_version());
  if (!P.has_graph())
    return;
  const onnx::GraphProto &G = P.graph();
  onnx::GraphProto &CG = *C.mutable_graph();
  *CG.mutable_node() = G.node();
  if (G.has_name())
    CG.set_name(G.name());
  *CG.mutable_input() = G.input();
  *CG.mutable_output() = G.output();
  *CG.mutable_value_info() = G.value_info();
  *CG.mutable_sparse_initializer() = G.sparse_initializer();
  *CG.mutable_quantization_annotation() = G.quantization_annotation();
  for (const onnx::TensorProto &T : G.initializer()) {
    onnx::TensorProto &CT = *CG.add_initializer();
    // A non-owning handle, only to measure the payload.
    Tensor Handle(
        std::shared_ptr<const onnx::TensorProto>(std::shared_ptr<void>(), &T));
    if (isExternal(T) || shouldStream(Handle))
      thinTensor(T, CT);
    else
      CT.CopyFrom(T);
  }
}

/// Returns a description of what ONNX 1.12 cannot check in \p P, or "".
static std::string unsupportedVersions(const onnx::ModelProto &P) {
  std::string Why;
  if (P.ir_version() > onnx::IR_VERSION)
    Why += "ir_version " + std::to_string(P.ir_version());
  const auto &Known =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto CheckOpsets = [&](const auto &Opsets) {
    for (const onnx::OperatorSetIdProto &O : Opsets) {
      std::string Domain = O.domain() == "ai.onnx" ? "" : O.domain();
      auto It = Known.find(Domain);
      if (It == Known.end() || O.version() <= It->second.second)
        continue;
      std::string What = "opset " +
                         (Domain.empty() ? std::string("ai.onnx") : Domain) +
                         " " + std::to_string(O.version());
      if (Why.find(What) == std::string::npos)
        Why += (Why.empty() ? "" : ", ") + What;
    }
  };
  CheckOpsets(P.opset_import());
  for (const onnx::FunctionProto &F : P.functions())
    CheckOpsets(F.opset_import());
  return Why;
}

/// Runs the checker and strict shape inference on \p P, which is changed
/// while they run and, with \p Restore, put back afterwards.
LogicalResult onnxopt::detail::verifyInPlace(onnx::ModelProto &P, bool Restore,
                                             DiagnosticEngine &Diags) {
  std::string TooNew = unsupportedVersions(P);
  VerificationScope Scope(P, Restore);
  if (!TooNew.empty()) {
    // ONNX 1.12 cannot check this model: the analysis layer's verifier
    // (per-node schema check from the op table, strict inference) instead,
    // on a thin copy in our IR.
    std::string Checked;
    {
      onnx::ModelProto Copy;
      copyForVerification(P, Copy);
      ImportOptions Skeleton;
      Skeleton.PlaceholderPayloads = true;
      std::unique_ptr<Model> M =
          importModel(std::move(Copy), "", Diags, Skeleton);
      ModernVerifyReport Report;
      if (!M || failed(verifyModernModel(*M, Diags, Report)))
        return failure();
      Checked = Report.describe();
    }
    emitWarning(Diags) << "the onnx checker and strict shape inference were "
                          "skipped: "
                       << TooNew
                       << " is newer than ONNX 1.12 supports (ir_version <= "
                       << onnx::IR_VERSION << ", ai.onnx opset <= 17, "
                       << "ai.onnx.ml opset <= 3)"
                       << (Checked.empty() ? "" : "; ") << Checked;
    return success();
  }
  try {
    onnx::checker::check_model(P);
  } catch (const std::exception &E) {
    return emitError(Diags)
           << "onnx checker: " << llvm::StringRef(E.what()).trim();
  } catch (...) {
    return emitError(Diags) << "onnx checker: unknown exception";
  }
  try {
    onnx::ShapeInferenceOptions Opts(/*check_type=*/true, /*strict_mode=*/1,
                                     /*data_prop=*/false);
    onnx::shape_inference::InferShapes(P, onnx::OpSchemaRegistry::Instance(),
                                       Opts);
  } catch (const std::exception &E) {
    return emitError(Diags)
           << "strict shape inference: " << llvm::StringRef(E.what()).trim();
  } catch (...) {
    return emitError(Diags) << "strict shape inference: unknown exception";
  }
  return success();
}

LogicalResult onnxopt::verifyProto(const onnx::ModelProto &P,
                                   DiagnosticEngine &Diags) {
  onnx::ModelProto Copy;
  copyForVerification(P, Copy);
  return verifyInPlace(Copy, /*Restore=*/false, Diags);
}
