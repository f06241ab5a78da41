//===- Verify.cpp - Save-time verification of the exported proto ---------===//
//
// Before anything is written: ONNX's checker and strict shape inference on
// the skeleton of the exported proto (large payloads elided, never copied),
// or, for versions newer than ONNX 1.12, the op-table verifier on a thin copy.
//
//===----------------------------------------------------------------------===

#include "ExportDetail.h"
#include "ExportProto.h"
#include "ImportProto.h"
#include "ModernVerify.h"
#include "onnxopt/Analysis/NodeValidation.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Import/Import.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include <google/protobuf/unknown_field_set.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

using namespace onnxopt;
using namespace onnxopt::detail;
namespace pbio = google::protobuf::io;

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

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
  /// \p SaveInfos: strict inference will run on \p P and append to it.
  VerificationScope(onnx::ModelProto &P, bool Restore, bool SaveInfos = true)
      : Restore(Restore), SaveInfos(SaveInfos) {
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

  /// Thins the external tensors of \p N's attributes (a copy, checked and
  /// dropped).
  static void thinNode(onnx::NodeProto &N) {
    VerificationScope Scope;
    Scope.visit(N, /*Inferred=*/false);
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
  VerificationScope() : Restore(false), SaveInfos(false) {}

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
    if (Inferred && Restore && SaveInfos)
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

  bool Restore, SaveInfos;
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
    if (isExternal(T) || shouldStream(T.data_type(), payloadByteSize(T)))
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

/// ONNX 1.12 cannot check \p P: the analysis layer's verifier (per-node
/// schema check from the op table, strict inference) instead, on a thin copy
/// in our IR, with a warning saying so.
static LogicalResult verifyTooNew(onnx::ModelProto &P, llvm::StringRef TooNew,
                                  DiagnosticEngine &Diags) {
  std::string Checked;
  size_t NodesChecked = 0;
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
    NodesChecked = Report.NodesChecked;
  }
  // Every write of such a model says this: one line, the details (what
  // was and was not checked) under --verbose.
  InFlightDiagnostic W = emitWarning(Diags);
  W << "the onnx checker and strict shape inference were skipped: " << TooNew
    << " is newer than ONNX 1.12 supports";
  if (Diags.isVerbose())
    W << " (ir_version <= " << onnx::IR_VERSION << ", ai.onnx opset <= 17, "
      << "ai.onnx.ml opset <= 3)" << (Checked.empty() ? "" : "; ") << Checked;
  else
    W << "; onnx-opt checked " << NodesChecked
      << " node(s) itself (--verbose for details)";
  return success();
}

/// check_model's verdict ("" = valid) on \p P, whose main graph's nodes are
/// checked apart: versions, opsets, metadata, functions, initializers,
/// inputs and outputs.
static std::string checkModelWithoutNodes(const onnx::ModelProto &P) {
  try {
    onnx::checker::check_model(P);
  } catch (const std::exception &E) {
    return E.what();
  } catch (...) {
    return "unknown exception";
  }
  return "";
}

static onnx::checker::CheckerContext
checkerContext(int64_t IrVersion, std::unordered_map<std::string, int> Opsets) {
  onnx::checker::CheckerContext Ctx;
  Ctx.set_ir_version(static_cast<int>(IrVersion));
  Ctx.set_opset_imports(std::move(Opsets));
  return Ctx;
}

/// check_node's verdict on \p N ("" = valid), worded as check_model's.
static std::string
checkNodeProto(const onnx::NodeProto &N,
               const onnx::checker::CheckerContext &Ctx,
               const onnx::checker::LexicalScopeContext &Lex) {
  try {
    onnx::checker::check_node(N, Ctx, Lex);
  } catch (const std::exception &E) {
    return std::string(E.what()) +
           "\n==> Context: Bad node spec for node. "
           "Name: " +
           N.name() + " OpType: " + N.op_type();
  } catch (...) {
    return "unknown exception in node '" + N.name() + "'";
  }
  return "";
}

/// The checker's verdict on \p P ("" = valid), from what check_model does
/// that the IR has not already proved: check_model itself on the model
/// without its main graph's nodes, then check_node on each node. The
/// graph-level checks check_model adds around its nodes (topological order,
/// single assignment, names in scope) are the IR verifier's, which ran
/// before; the lexical scope is kept only where a node holds a graph, whose
/// check reads it.
static std::string checkSkeleton(onnx::ModelProto &P) {
  onnx::GraphProto &G = *P.mutable_graph();
  // On the graph's arena (if any): a swap across arenas would copy.
  google::protobuf::Arena *A = G.GetArena();
  auto *Nodes = google::protobuf::Arena::Create<
      google::protobuf::RepeatedPtrField<onnx::NodeProto>>(A);
  std::unique_ptr<google::protobuf::RepeatedPtrField<onnx::NodeProto>> Owned(
      A ? nullptr : Nodes);
  Nodes->Swap(G.mutable_node());
  std::string Error = checkModelWithoutNodes(P);
  G.mutable_node()->Swap(Nodes);
  if (!Error.empty())
    return Error;

  std::unordered_map<std::string, int> Opsets;
  for (const onnx::OperatorSetIdProto &O : P.opset_import())
    Opsets[O.domain()] = static_cast<int>(O.version());
  onnx::checker::CheckerContext Ctx =
      checkerContext(P.ir_version(), std::move(Opsets));
  bool Scoped = std::any_of(
      G.node().begin(), G.node().end(), [](const onnx::NodeProto &N) {
        for (const onnx::AttributeProto &A : N.attribute())
          if (A.has_g() || A.graphs_size())
            return true;
        return false;
      });
  onnx::checker::LexicalScopeContext Lex;
  if (Scoped) {
    for (const onnx::ValueInfoProto &VI : G.input())
      Lex.add(VI.name());
    for (const onnx::TensorProto &T : G.initializer())
      Lex.add(T.name());
    for (const onnx::SparseTensorProto &T : G.sparse_initializer())
      Lex.add(T.values().name());
  }
  for (const onnx::NodeProto &N : G.node()) {
    Error = checkNodeProto(N, Ctx, Lex);
    if (!Error.empty())
      return Error;
    if (Scoped)
      for (const std::string &Out : N.output())
        if (!Out.empty())
          Lex.add(Out);
  }
  return "";
}

/// ONNX's checker and whole-model strict inference on the proto.
static LogicalResult verifyWithOnnx(onnx::ModelProto &P,
                                    DiagnosticEngine &Diags) {
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

/// The verdict of the checker's part and of strict inference from the IR,
/// reported as verifyWithOnnx would: a checker error first.
static LogicalResult reportVerdict(llvm::StringRef CheckerError, bool Inferred,
                                   const StrictInferenceFailure &Failure,
                                   DiagnosticEngine &Diags) {
  if (!CheckerError.empty())
    return emitError(Diags)
           << "onnx checker: " << llvm::StringRef(CheckerError).trim();
  if (Inferred)
    return success();
  InFlightDiagnostic D =
      Failure.N ? emitError(Diags, *Failure.N) : emitError(Diags);
  return D << "strict shape inference: "
           << llvm::StringRef(Failure.Msg).split('\n').first.rtrim();
}

/// The same verdict from the IR \p M that \p P was exported from: the
/// checker's part on a second thread (checkSkeleton), strict inference from
/// the IR on this one (StrictInference.cpp).
static LogicalResult verifyFromIR(const Model &M, onnx::ModelProto &P,
                                  DiagnosticEngine &Diags) {
  std::string CheckerError;
  std::thread Checker([&] { CheckerError = checkSkeleton(P); });
  StrictInferenceFailure Failure;
  bool Inferred = succeeded(verifyStrictInference(M, Failure));
  Checker.join();
  return reportVerdict(CheckerError, Inferred, Failure, Diags);
}

LogicalResult onnxopt::detail::verifyInPlace(const Model *M,
                                             onnx::ModelProto &P, bool Restore,
                                             VerifyWith With,
                                             DiagnosticEngine &Diags) {
  std::string TooNew = unsupportedVersions(P);
  if (!M)
    With = VerifyWith::Onnx;
  bool OnProto = With != VerifyWith::IR || !TooNew.empty();
  VerificationScope Scope(P, Restore, /*SaveInfos=*/OnProto);
  if (!TooNew.empty())
    return verifyTooNew(P, TooNew, Diags);
  if (With != VerifyWith::IR && M) {
    // ONNX's whole-model inference cannot be stopped once it runs: what
    // would not return is refused first, from the IR.
    StrictInferenceFailure Failure;
    if (failed(verifyStrictInference(*M, Failure)) && Failure.Unsafe) {
      InFlightDiagnostic D =
          Failure.N ? emitError(Diags, *Failure.N) : emitError(Diags);
      return D << "strict shape inference: " << Failure.Msg
               << " (ONNX's own inference is not run on it)";
    }
  }
  switch (With) {
  case VerifyWith::IR:
    return verifyFromIR(*M, P, Diags);
  case VerifyWith::Onnx:
    return verifyWithOnnx(P, Diags);
  case VerifyWith::Both:
    break;
  }
  // Both verdicts; a disagreement is a bug of ours, reported as an error.
  DiagnosticEngine Quiet;
  Quiet.setHandler([](const Diagnostic &) {});
  bool FromIR = succeeded(verifyFromIR(*M, P, Quiet));
  bool FromOnnx = succeeded(verifyWithOnnx(P, Diags));
  if (FromIR != FromOnnx) {
    emitError(Diags) << "verification from the IR says the model is "
                     << (FromIR ? "valid" : "invalid")
                     << " but ONNX's checker and inference say it is "
                     << (FromOnnx ? "valid" : "invalid")
                     << " (a bug in onnx-opt: please report it)";
    return failure();
  }
  return success(FromOnnx);
}

/// What ONNX 1.12 cannot check in the model exported from \p M, known
/// before its graph is exported: the versions are in its header.
static std::string unsupportedVersions(const Model &M) {
  // The header has the functions too (from the residual): their opsets count.
  onnx::ModelProto Head;
  Exporter().exportHeader(M, Head);
  return unsupportedVersions(Head);
}

/// Whether a node of \p G's holds a graph (whose check needs the lexical
/// scope of the nodes before it).
static bool holdsGraphs(const Graph &G) {
  for (const Node &N : G.getNodes())
    for (const Attribute &A : N.getAttrs())
      if (!A.Graphs.empty())
        return true;
  return false;
}

static bool hasExternalAttrTensor(const onnx::NodeProto &N) {
  for (const onnx::AttributeProto &A : N.attribute()) {
    if (A.has_t() && isExternal(A.t()))
      return true;
    for (const onnx::TensorProto &T : A.tensors())
      if (isExternal(T))
        return true;
  }
  return false;
}

/// What ONNX 1.12's check_node reads of a node with no graph attribute,
/// besides the model-wide context: its op and domain, which inputs and
/// outputs it has (Verify looks at their count and at which names are
/// empty, the rest of a name only goes into messages) and its attributes.
/// Two nodes alike in these get the same verdict.
static uint64_t checkerSignature(const Node &N) {
  llvm::hash_code H =
      llvm::hash_combine(N.getOpKey().first, N.getOpKey().second,
                         N.getNumOperands(), N.getNumResults(), N.hashAttrs());
  for (const Value *V : N.getOperands())
    H = llvm::hash_combine(H, V != nullptr);
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    H = llvm::hash_combine(H, N.getResult(I) != nullptr);
  return H;
}

static bool hasDuplicateAttrNames(const Node &N) {
  llvm::ArrayRef<Attribute> Attrs = N.getAttrs();
  for (size_t I = 0; I < Attrs.size(); ++I)
    for (size_t J = I + 1; J < Attrs.size(); ++J)
      if (Attrs[I].Name == Attrs[J].Name)
        return true;
  return false;
}

/// Whether check_node sees \p A and \p B alike (see checkerSignature).
/// hasSameAttrs matches attributes by name, so a node with two of one name
/// is alike to none.
static bool alikeForChecker(const Node &A, const Node &B) {
  if (A.getOpKey() != B.getOpKey() ||
      A.getNumOperands() != B.getNumOperands() ||
      A.getNumResults() != B.getNumResults())
    return false;
  for (unsigned I = 0; I < A.getNumOperands(); ++I)
    if (!A.getOperand(I) != !B.getOperand(I))
      return false;
  for (unsigned I = 0; I < A.getNumResults(); ++I)
    if (!A.getResult(I) != !B.getResult(I))
      return false;
  return A.hasSameAttrs(B) && !hasDuplicateAttrNames(A);
}

struct SaveVerification::Shared {
  /// Strict inference from the IR runs on the worker.
  bool Strict = false;
  /// The main graph's nodes are checked one at a time (checkNode).
  bool PerNode = false;
  std::thread Worker;
  /// What the node validation emitted, replayed on the caller's engine by
  /// awaitVerdict.
  std::vector<Diagnostic> Held;
  /// The validation's progress: how many leading main-graph nodes (with
  /// their subgraphs) are known valid, and whether it is done; NodesOk is
  /// set before ValidationFinished. PerNode, the caller validates each node
  /// as it is exported (checkNode) and the worker's inference follows it;
  /// otherwise the worker validates every node before inferring, and
  /// finish() waits on Validated (for ValidationFinished, then
  /// VerdictReady).
  std::atomic<size_t> ValidPrefix{0};
  std::atomic<bool> ValidationFinished{false};
  std::mutex Mu;
  std::condition_variable Validated;
  bool NodesOk = false;
  bool Inferred = false;
  StrictInferenceFailure Failure;
  /// Set (under Mu) once Held, NodesOk, Inferred and Failure are final; the
  /// worker may still be freeing the inference's memory, and is joined
  /// only when the SaveVerification ends (after the file is written).
  bool VerdictReady = false;
  bool Replayed = false;

  void publishVerdict() {
    {
      std::lock_guard<std::mutex> Lock(Mu);
      VerdictReady = true;
    }
    Validated.notify_all();
  }

  // checkNode's state, on the caller's thread.
  /// Nodes check_node passed, by checkerSignature (a torch export repeats a
  /// few dozen kinds of node: 100k nodes, 230 M instructions of checks).
  /// At most a few per signature, so that a lookup stays short.
  llvm::DenseMap<uint64_t, llvm::SmallVector<const Node *, 2>> Passed;
  /// The caller's validation (PerNode): the next main-graph node, whether
  /// all so far were valid, and where the diagnostics go (to Held).
  std::optional<NodeValidator> CallerValidator;
  Graph::NodeList::const_iterator NextToValidate;
  bool AllValid = true;
  DiagnosticEngine HeldDiags;
  bool StoppedChecking = false;
  onnx::checker::CheckerContext Ctx;
  onnx::checker::LexicalScopeContext Lex;
  std::string CheckerError;

  /// validateModelNodes, publishing progress node by node.
  void validate(const Model &M, DiagnosticEngine &Diags) {
    NodeValidator V(M);
    bool Ok = true;
    size_t I = 0;
    for (const Node &N : M.getGraph().getNodes()) {
      Ok &= succeeded(V.validateTree(N, Diags));
      ++I;
      if (Ok)
        ValidPrefix.store(I, std::memory_order_release);
    }
    finishValidation(Ok);
  }

  /// Publishes the validation's verdict (NodesOk before ValidationFinished).
  void finishValidation(bool Ok) {
    NodesOk = Ok;
    {
      std::lock_guard<std::mutex> Lock(Mu);
      ValidationFinished.store(true, std::memory_order_release);
    }
    Validated.notify_all();
  }

  /// PerNode, on the caller's thread: validates main-graph node \p N, the
  /// next one; false when it or one before it is invalid.
  bool validateNext(const Model &M, const Node &N) {
    assert(&*NextToValidate == &N && "nodes are exported in order");
    (void)M;
    AllValid &= succeeded(CallerValidator->validateTree(N, HeldDiags));
    ++NextToValidate;
    if (AllValid)
      ValidPrefix.store(ValidPrefix.load() + 1, std::memory_order_release);
    return AllValid;
  }

  /// PerNode: validates what the export did not reach (nothing, unless it
  /// failed) and ends the validation, which lets the worker finish. Once.
  void endCallerValidation(const Model &M) {
    if (!PerNode || ValidationFinished.load())
      return;
    for (auto E = M.getGraph().getNodes().end(); NextToValidate != E;)
      validateNext(M, *NextToValidate);
    finishValidation(AllValid);
  }

  /// Waits until main-graph node \p I is known valid (true) or invalid or
  /// after an invalid one (false). Validation runs ahead of what waits for
  /// it (the export and check of a node take longer; so does its
  /// inference), so this rarely waits.
  bool waitValid(size_t I) {
    while (ValidPrefix.load(std::memory_order_acquire) <= I) {
      if (ValidationFinished.load(std::memory_order_acquire))
        return ValidPrefix.load(std::memory_order_acquire) > I;
      std::this_thread::yield();
    }
    return true;
  }
};

SaveVerification::SaveVerification(const Model &M, VerifyWith With)
    : M(M), With(With), State(std::make_unique<Shared>()) {
  Shared &S = *State;
  S.Strict = With == VerifyWith::IR && unsupportedVersions(M).empty();
  S.PerNode = S.Strict && !holdsGraphs(M.getGraph());
  if (S.PerNode) {
    std::unordered_map<std::string, int> Opsets;
    for (const OpsetImport &O : M.getOpsetImports())
      Opsets[O.Domain] = static_cast<int>(O.Version);
    S.Ctx = checkerContext(M.getIrVersion(), std::move(Opsets));
    // The caller validates each node as it exports it: the worker's
    // inference is the longer task.
    S.CallerValidator.emplace(M);
    S.NextToValidate = M.getGraph().getNodes().begin();
    S.HeldDiags.setHandler(
        [&S](const Diagnostic &D) { S.Held.push_back(D); });
  }
  S.Worker = std::thread([&S, &M] {
    // ONNX's inference functions crash on some invalid nodes: only valid
    // ones are inferred.
    auto Publish = [&S](LogicalResult R) {
      S.Inferred = succeeded(R);
      S.publishVerdict();
    };
    if (S.PerNode) {
      (void)verifyStrictInference(M, S.Failure, Publish,
                                  [&S](size_t I) { return S.waitValid(I); });
      return;
    }
    DiagnosticEngine Local;
    Local.setHandler([&S](const Diagnostic &D) { S.Held.push_back(D); });
    S.validate(M, Local);
    if (!S.NodesOk || !S.Strict) {
      S.publishVerdict();
      return;
    }
    (void)verifyStrictInference(M, S.Failure, Publish);
  });
}

SaveVerification::~SaveVerification() {
  // The worker may be waiting for the validation of nodes never exported.
  State->endCallerValidation(M);
  State->Worker.join();
}

bool SaveVerification::checksNodes() const { return State->PerNode; }

void SaveVerification::checkNode(const Node &N, const onnx::NodeProto &NP) {
  Shared &S = *State;
  // Every node is validated (each problem is reported). The checker
  // crashes on some invalid nodes: it stops before the first one, or at
  // its own first error.
  bool Valid = S.validateNext(M, N);
  if (S.StoppedChecking)
    return;
  if (!Valid) {
    S.StoppedChecking = true;
    return;
  }
  // A node alike to one that passed passes without the check.
  bool External = hasExternalAttrTensor(NP);
  llvm::SmallVector<const Node *, 2> *Alike = nullptr;
  if (!External) {
    Alike = &S.Passed[checkerSignature(N)];
    for (const Node *P : *Alike)
      if (alikeForChecker(N, *P))
        return;
  }
  if (!External) {
    S.CheckerError = checkNodeProto(NP, S.Ctx, S.Lex);
    constexpr size_t MaxPerSignature = 4;
    if (S.CheckerError.empty() && Alike->size() < MaxPerSignature)
      Alike->push_back(&N);
  } else {
    // The checker would look for the data file relative to the current
    // directory: it sees placeholders.
    onnx::NodeProto Thin(NP);
    VerificationScope::thinNode(Thin);
    S.CheckerError = checkNodeProto(Thin, S.Ctx, S.Lex);
  }
  S.StoppedChecking = !S.CheckerError.empty();
}

void SaveVerification::awaitVerdict(DiagnosticEngine &Diags) {
  Shared &S = *State;
  {
    std::unique_lock<std::mutex> Lock(S.Mu);
    S.Validated.wait(Lock, [&S] { return S.VerdictReady; });
  }
  if (S.Replayed)
    return;
  S.Replayed = true;
  for (Diagnostic &D : S.Held)
    Diags.emit(std::move(D));
  S.Held.clear();
}

void SaveVerification::abandon(DiagnosticEngine &Diags) {
  State->endCallerValidation(M);
  awaitVerdict(Diags);
}

LogicalResult SaveVerification::finish(onnx::ModelProto &Skeleton,
                                       DiagnosticEngine &Diags) {
  Shared &S = *State;
  if (S.PerNode) {
    S.endCallerValidation(M);
    // The skeleton holds no node (they were checked one at a time): the
    // checker can look at it while the worker still infers.
    std::string ModelError;
    {
      VerificationScope Scope(Skeleton, /*Restore=*/true, /*SaveInfos=*/false);
      ModelError = checkModelWithoutNodes(Skeleton);
    }
    awaitVerdict(Diags);
    if (!S.NodesOk)
      return failure();
    // check_model's own error first, as checkSkeleton reports it.
    return reportVerdict(ModelError.empty() ? S.CheckerError : ModelError,
                         S.Inferred, S.Failure, Diags);
  }
  {
    // The checker, like inference, must not see an invalid node.
    std::unique_lock<std::mutex> Lock(S.Mu);
    S.Validated.wait(Lock, [&S] {
      return S.ValidationFinished.load(std::memory_order_acquire);
    });
  }
  if (!S.NodesOk || !S.Strict) {
    awaitVerdict(Diags);
    if (!S.NodesOk)
      return failure();
    return verifyInPlace(&M, Skeleton, /*Restore=*/true, With, Diags);
  }
  std::string CheckerError;
  {
    VerificationScope Scope(Skeleton, /*Restore=*/true, /*SaveInfos=*/false);
    CheckerError = checkSkeleton(Skeleton);
  }
  awaitVerdict(Diags);
  return reportVerdict(CheckerError, S.Inferred, S.Failure, Diags);
}

LogicalResult onnxopt::verifyProto(const onnx::ModelProto &P,
                                   DiagnosticEngine &Diags) {
  onnx::ModelProto Copy;
  copyForVerification(P, Copy);
  return verifyInPlace(nullptr, Copy, /*Restore=*/false, VerifyWith::Onnx,
                       Diags);
}

LogicalResult onnxopt::verifyExport(const Model &M, VerifyWith With,
                                    DiagnosticEngine &Diags) {
  std::unique_ptr<onnx::ModelProto> P = exportModel(M);
  onnx::ModelProto Copy;
  copyForVerification(*P, Copy);
  return verifyInPlace(&M, Copy, /*Restore=*/false, With, Diags);
}
