//===- ShapeInference.h - Per-node type and shape inference ----*- C++ -*-===//
//
// Infers value types node by node through ONNX's own op schemas: an adapter
// presents a node of our IR to the schema's inference and data-propagation
// functions, and the result is merged with the declared type of each output.
// Works on a whole model or, after a rewrite, on one node at a time. Nothing
// here builds a GraphProto: only the inputs, attributes and outputs of the
// node being inferred are converted.
//
// This header stays free of ONNX and protobuf headers.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_SHAPEINFERENCE_H
#define ONNXOPT_ANALYSIS_SHAPEINFERENCE_H

#include "onnxopt/IR/Rewriter.h"
#include "onnxopt/IR/Type.h"
#include "onnxopt/Support/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnxopt {

class Graph;
class Model;
class Node;
class TypeChangeLog;
class Value;

struct ShapeInferenceOptions {
  /// An op's inference function failing is an error (else a warning and the
  /// node's outputs keep their declared types).
  bool Strict = false;
  /// Run ONNX's partial data propagation (Shape -> Gather -> Concat ->
  /// Reshape) so that shapes computed in the graph reach their consumers.
  bool DataPropagation = true;
  /// Name dims that inference leaves unknown with fresh `unk__N` symbols, as
  /// onnx::shape_inference does; keeps track of which unknown dims are the
  /// same.
  bool NameUnknownDims = true;
  /// Also infer the bodies of nodes without a schema (custom ops holding
  /// subgraphs), from the bodies' declared input types.
  bool InferUnknownOpBodies = true;
  /// Run the inference and propagation functions once per node signature
  /// (op, attributes, operand types up to the names of their symbols, and
  /// the contents the functions read) and reuse their results for the
  /// nodes that repeat it. Off only to check that it changes nothing.
  bool Memoize = true;
};

/// What merging an inferred type into a declared one learned about a dim
/// that both described differently without contradiction: a symbol that
/// inference proved to be a constant, or two symbols for the same dim.
struct DimFact {
  const Value *V = nullptr;
  /// The node whose inference produced the fact.
  const Node *From = nullptr;
  /// Position of the dim in V's shape (element shape for sequences).
  unsigned DimIndex = 0;
  Dim Declared;
  Dim Inferred;
};

struct ShapeInferenceStats {
  /// Nodes whose schema's inference ran without error.
  size_t NodesInferred = 0;
  /// Nodes kept as declared: no schema, domain not imported or newer than
  /// the schemas known to this ONNX build.
  size_t NodesWithoutSchema = 0;
  /// Of those, the nodes whose results came from the memo of a node
  /// signature inferred before (ShapeInferenceOptions::Memoize).
  size_t NodesMemoized = 0;
  /// Nodes whose inference function threw.
  size_t NodesFailed = 0;
  /// Values whose type was changed (refined) by inference.
  size_t ValuesRefined = 0;
  /// Inferred types that contradicted declared ones (errors).
  size_t Contradictions = 0;
};

/// The inference engine of one model. Keeps the results of data propagation
/// between calls so that passes can re-infer rewritten nodes incrementally.
class ShapeInference {
public:
  ShapeInference(Model &M, DiagnosticEngine &Diags,
                 ShapeInferenceOptions Opts = {});
  ~ShapeInference();
  ShapeInference(const ShapeInference &) = delete;
  ShapeInference &operator=(const ShapeInference &) = delete;

  /// Infers every node of the main graph in order; subgraphs are inferred
  /// when their holder's inference asks for them (If/Loop/Scan), with the
  /// input types the holder provides. Fails if a contradiction was found (or,
  /// when strict, if any node's inference failed); carries on after each
  /// problem so that every one is reported.
  LogicalResult inferModel();
  /// Infers the nodes of \p G in order, as inferModel does for the main
  /// graph. The types of \p G's inputs are taken as they are.
  LogicalResult inferGraph(Graph &G);
  /// Infers one node from the current types of its operands and merges the
  /// result into the types of its results (and data propagation results).
  /// For passes: call it on a node after creating or changing it.
  LogicalResult inferNode(Node &N);
  /// Emits the remarks (one per op type) about nodes kept as declared since
  /// the last call; inferModel and inferGraph do it by themselves, callers
  /// of inferNode call it once they are done.
  void emitRemarks();

  /// The integer contents of \p V known through data propagation (e.g. the
  /// output of Shape, or a Concat of shape pieces): one Dim per element.
  std::optional<std::vector<Dim>> getPropagatedData(const Value &V) const;
  /// Drops what the engine remembers about \p V (call before erasing a
  /// value that the engine has seen, if the engine is used afterwards).
  void forget(const Value &V);
  /// From now on, saves each type into \p Log before changing it (null:
  /// stop). The log must outlive the calls that infer while it is set.
  void setTypeChangeLog(TypeChangeLog *Log);

  /// From now on (\p Aside true), keeps the types inference finds beside
  /// the IR rather than in it: after each call the IR has the types it had
  /// before, and getType reads the results. For readers that must not
  /// change the model (ShapeInfo). While a call runs, the IR does hold the
  /// results (the registry's hooks that inference calls, such as the
  /// constant evaluator's Shape, read types there); the call puts the
  /// model's own types back before it returns, a cost linear in what it
  /// changes (and in the results kept so far, when called again).
  void setKeepResultsAside(bool Aside);
  /// The type inference gave \p V, else \p V's type in the IR.
  const Type &getType(const Value &V) const;
  /// Writes the types kept aside into the IR; the engine writes there from
  /// then on.
  void commitTypes();

  llvm::ArrayRef<DimFact> getDimFacts() const;
  const ShapeInferenceStats &getStats() const;

  class Impl;

private:
  std::unique_ptr<Impl> P;
};

/// The model's types as ONNX's inference (default options) finds them, kept
/// beside the IR: building it leaves the model as it was. As a cached
/// analysis (`Ctx.getAnalysis<ShapeInfo>()`), a pipeline of shape passes
/// infers once until a pass changes the model. Readers ask getType (or hand
/// the analysis to DimAnalysis); a pass whose job is to record the types
/// (infer-shapes, and unify-dims and freeze-dims, which rewrite them) calls
/// commit.
class ShapeInfo {
public:
  ShapeInfo(Model &M, DiagnosticEngine &Diags);
  /// Built committed (\p Recorded): inference writes the types into the IR
  /// as it goes, so a pass that records them anyway does not hold a second
  /// copy of every type beside the IR (about 50 MB at a million nodes).
  enum RecordTag { Recorded };
  ShapeInfo(Model &M, DiagnosticEngine &Diags, RecordTag);
  /// Failure if inference found a contradiction (reported when built).
  LogicalResult getResult() const { return Result; }
  /// The type inference found for \p V (its IR type where inference
  /// changed nothing, and after commit).
  const Type &getType(const Value &V) const { return Engine->getType(V); }
  /// Records the inferred types in the IR (once; later calls do nothing).
  /// The engine writes into the IR from then on.
  void commit();
  /// True after commit: the IR's types are the inferred ones.
  bool isCommitted() const { return Committed; }
  ShapeInference &getEngine() { return *Engine; }
  const ShapeInference &getEngine() const { return *Engine; }

private:
  std::unique_ptr<ShapeInference> Engine;
  LogicalResult Result = success();
  bool Committed = false;
};

/// Infers the whole model with a temporary engine and records the types in
/// the IR (infer-shapes with the given options).
LogicalResult inferShapes(Model &M, DiagnosticEngine &Diags,
                          ShapeInferenceOptions Opts = {});

/// The types that inference changed in the model, each saved by the engine
/// just before its first change (ShapeInference::setTypeChangeLog), so
/// that fold-shapes, which infers to rewrite nodes and reads the types in
/// the IR while it does, leaves the model with the types it had (unless
/// keep-inferred-types). A pass that only reads types takes ShapeInfo,
/// which never changes the IR. As the listener of a pass's Rewriter the log
/// leaves the values of the nodes the pass creates with their inferred
/// types.
class TypeChangeLog : public RewriteListener {
public:
  /// Saves \p V's type unless it is saved already or \p V belongs to a
  /// node made since (the engine calls it before changing the type).
  void save(Value &V);
  /// \p New took \p Old's place as a graph output, whose declared type it
  /// keeps: \p New gets \p Old's saved (else current) type back.
  void transfer(Value *New, const Value *Old);
  /// \p V was erased: nothing is restored for it.
  void forget(const Value *V);
  /// Puts every saved type back (once).
  void restore();

  void notifyNodeInserted(Node *N) override;

private:
  /// Values the model had before the log started.
  bool isTracked(const Value *V) const;

  std::vector<std::pair<Value *, Type>> Saved;
  llvm::DenseMap<const Value *, size_t> Index;
  llvm::DenseSet<const Node *> Created;
};

/// Merges \p Inferred into \p Declared following onnx::shape_inference's
/// rules: inferred information fills what is unknown, a known inferred dim
/// replaces a declared symbol, a declared symbol stays over an inferred one.
/// On a contradiction returns false and describes it in \p Why (e.g.
/// "dim 1: 4 vs 3"), leaving \p Declared unchanged. \p Facts receives the
/// differences that are not contradictions
/// (V and From left null).
bool mergeInferredType(Type &Declared, const Type &Inferred, std::string &Why,
                       std::vector<DimFact> *Facts = nullptr);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_SHAPEINFERENCE_H
