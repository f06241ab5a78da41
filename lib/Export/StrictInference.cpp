//===- StrictInference.cpp - ONNX's strict shape inference, from the IR ---===//
//
// What onnx::shape_inference::InferShapes(check_type, strict) decides about
// the exported model, computed from the IR without building or searching the
// proto: types are looked up by Value, not by name, and nothing is appended
// to the model. ONNX 1.12's rules, as measured against its InferShapes:
//
// - the declared types (inputs, outputs, value_info, initializers) are the
//   starting point; each node's inferred types are checked against and merged
//   into its results' types, unknown dims getting fresh `unk__N` symbols;
// - a node's inference function sees the contents of the initializers and of
//   the `value` Constants of its own graph, nothing else (no value_ints, no
//   propagated data);
// - an error thrown by an inference function fails the model unless a node
//   without a schema came earlier in the same graph (ONNX keeps quiet then);
//   a type-constraint violation, a merge conflict, a domain without opset
//   import and any other exception always fail it;
// - a body inferred for its holder fails the holder's inference.
//
// Exported graphs repeat the same few node signatures thousands of times, so
// the inference function and the type-constraint check run once per
// signature: the op's schema, its attributes, its input types with dim
// symbols renamed in order of appearance (InferenceSignature.h), and the
// contents of the inputs the function actually read. The functions are pure
// in those (they compare dim symbols only for equality), so a repeated
// signature has the same outcome.
//
//===----------------------------------------------------------------------===//

#include "ExportDetail.h"
#include "InferenceProtos.h"
#include "InferenceSignature.h"
#include "onnxopt/Analysis/NodeValidation.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/AllocationOrder.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Ops/OpDef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>

using namespace onnxopt;
using namespace onnxopt::detail;

namespace {

/// What a memo entry remembers of a read of contents: the tensor without
/// its name (appendTensorContents), or that there was none.
std::string encodeDataRead(const onnx::TensorProto *P) {
  if (!P)
    return std::string("\x01");
  std::string Bytes;
  appendTensorContents(Bytes, *P);
  return Bytes;
}

/// Thrown (as ONNX would) when a body inferred for its holder fails.
[[noreturn]] void failBody(const std::string &Why) {
  fail_type_inference("in a body: ", Why);
}

struct Failure {
  const Node *N = nullptr;
  std::string Msg;
  bool Unsafe = false; ///< StrictInferenceFailure::Unsafe
};

/// One node signature's outcome: what the inference function returned.
struct MemoEntry {
  const Node *Rep = nullptr;
  /// (operand, serialized contents or "\x01" for none) the function read.
  std::vector<std::pair<unsigned, std::string>> DataReads;
  /// Inferred result types, in the signature's renamed symbols.
  std::vector<Type> Results;
};

class Engine;

/// Presents one node (with its operands' types, symbols renamed) to its
/// schema's inference function.
class StrictContext final : public onnx::InferenceContext {
public:
  StrictContext(Engine &E, const Node &N,
                const std::vector<const onnx::TypeProto *> &InputTypes)
      : E(E), N(N), InputTypes(InputTypes), Results(N.getNumResults()) {}

  const onnx::AttributeProto *
  getAttribute(const std::string &Name) const override;
  size_t getNumInputs() const override { return N.getNumOperands(); }
  const onnx::TypeProto *getInputType(size_t I) const override {
    checkInput(I);
    return InputTypes[I];
  }
  const onnx::TensorProto *getInputData(size_t I) const override;
  size_t getNumOutputs() const override { return N.getNumResults(); }
  onnx::TypeProto *getOutputType(size_t I) override {
    if (I >= Results.size())
      fail_type_inference("output ", I, " is out of bounds");
    return &Results[I];
  }
  onnx::GraphInferencer *
  getGraphAttributeInferencer(const std::string &Name) override;
  const onnx::SparseTensorProto *getInputSparseData(size_t) const override {
    return nullptr;
  }
  const onnx::TensorShapeProto *getSymbolicInput(size_t) const override {
    return nullptr;
  }

  const std::vector<onnx::TypeProto> &results() const { return Results; }
  const std::vector<std::pair<unsigned, std::string>> &dataReads() const {
    return DataReads;
  }

private:
  Engine &E;
  const Node &N;
  const std::vector<const onnx::TypeProto *> &InputTypes;
  std::vector<onnx::TypeProto> Results;
  mutable std::vector<
      std::pair<std::string, std::unique_ptr<onnx::AttributeProto>>>
      Attributes;
  mutable std::vector<std::pair<unsigned, std::string>> DataReads;
  std::vector<std::pair<std::string, std::unique_ptr<onnx::GraphInferencer>>>
      Inferencers;

  void checkInput(size_t I) const {
    if (I >= N.getNumOperands())
      fail_type_inference("input ", I, " is out of bounds");
  }
};

/// Infers a body in place of ONNX's GraphInferencerImpl.
class BodyInferencer final : public onnx::GraphInferencer {
public:
  BodyInferencer(Engine &E, const Graph &G) : E(E), G(G) {}
  std::vector<const onnx::TypeProto *>
  doInferencing(const std::vector<const onnx::TypeProto *> &InputTypes,
                const std::vector<const onnx::TensorProto *> &) override;

private:
  Engine &E;
  const Graph &G;
  std::vector<onnx::TypeProto> OutputTypes;
};

class Engine {
public:
  explicit Engine(const Model &M) : M(M) {
    collectFreshSymbolClashes();
    loadLocalFunctions();
  }

  /// \p Gate, if given, is asked before each node of \p G (by index)
  /// whether to go on; a stop ends the walk without a failure.
  std::optional<Failure>
  inferGraph(const Graph &G,
             llvm::function_ref<bool(size_t)> Gate = nullptr) {
    bool SeenUnsupported = false;
    size_t I = 0;
    for (const Node &N : G.getNodes()) {
      if (Gate && !Gate(I++))
        return std::nullopt;
      if (std::optional<Failure> F = inferNode(N, SeenUnsupported))
        return F;
    }
    return std::nullopt;
  }

  /// The type \p V has now (declared, then merged with what was inferred),
  /// or null. Valid until the next setType.
  const Type *typeOf(const Value *V) {
    auto It = Overrides.find(V);
    if (It != Overrides.end())
      return It->second;
    if (!V->getType().isNone())
      return &V->getType();
    if (!V->hasInitializer())
      return nullptr;
    onnx::TypeProto P;
    tensorToTypeProto(V->getInitializer(), P);
    return Overrides[V] = &TypeStore.emplace_back(importType(P));
  }

  void setType(const Value *V, Type T) {
    Type *&Slot = Overrides[V];
    if (Slot)
      *Slot = std::move(T);
    else
      Slot = &TypeStore.emplace_back(std::move(T));
  }

  /// The contents ONNX would give \p N's inference function for \p V: the
  /// initializers and `value` Constants of the node's own graph. Large
  /// payloads read as the skeleton's one-byte placeholders, as on the proto.
  const onnx::TensorProto *dataOf(const Node &N, const Value *V) {
    if (!V || V->getOwningGraph() != N.getParentGraph())
      return nullptr;
    const Tensor *T = nullptr;
    if (V->hasInitializer()) {
      T = &V->getInitializer();
    } else if (const Node *Def = V->getDefiningNode();
               Def && hasTrait(*Def, ConstantProducer) &&
               Def->getNumResults() == 1) {
      for (const Attribute &A : Def->getAttrs())
        if (A.Name == "value" && A.Kind == AttrKind::Tensor &&
            !A.Tensors.empty())
          T = &A.Tensors.front();
    }
    if (!T)
      return nullptr;
    if (T->isPacked()) {
      // Built for this node only: a kept copy of every small constant
      // would undo what packing saves.
      NodeOwned.push_back(std::make_unique<onnx::TensorProto>());
      detail::toProto(*T, *NodeOwned.back());
      return NodeOwned.back().get();
    }
    auto [It, New] = Data.try_emplace(T, nullptr);
    if (New) {
      const onnx::TensorProto &Stored = detail::getStoredProto(*T);
      // The IR's own proto where it is the whole tensor: the functions only
      // read it, and so does the export on the other thread.
      if (!T->isExternal() && !shouldStream(*T) && !T->hasMappedRawData() &&
          !isDensifiedSparse(Stored)) {
        It->second = &Stored;
      } else {
        Owned.push_back(std::make_unique<onnx::TensorProto>());
        if (T->isExternal() || shouldStream(*T))
          thinTensor(Stored, *Owned.back());
        else
          copyWholeTensor(*T, *Owned.back());
        It->second = Owned.back().get();
      }
    }
    return It->second;
  }

  /// Checks \p Inferred (fresh symbols given to its unknown dims) against
  /// the type \p V has and merges it in, as ONNX's updateType does; "" or
  /// the contradiction.
  std::string merge(const Value *V, Type Inferred);

  const Model &M;

private:
  std::optional<Failure> inferNode(const Node &N, bool &SeenUnsupported);
  std::optional<Failure> runInference(const Node &N,
                                      const onnx::OpSchema *Schema,
                                      const onnx::FunctionProto *Local,
                                      std::vector<Type> &Out,
                                      bool SeenUnsupported);
  const onnx::OpSchema *schemaOf(const Node &N, int64_t Version);
  void materialize(Type &T);
  void collectFreshSymbolClashes();
  void loadLocalFunctions();

  /// Types that differ from the IR's: merged with what was inferred, or of
  /// initializers that carry none (every result, in a model without
  /// value_info). Kept in a deque: typeOf's pointers survive insertions.
  /// Read and written in graph order (AllocationOrder.h).
  llvm::DenseMap<const Value *, Type *, AllocationOrderInfo<const Value>>
      Overrides;
  std::deque<Type> TypeStore;
  /// What inference reads of a constant: the IR's proto, or a complete
  /// (or thinned) copy in Owned.
  llvm::DenseMap<const Tensor *, const onnx::TensorProto *> Data;
  std::vector<std::unique_ptr<onnx::TensorProto>> Owned;
  /// Packed constants' protos, for the nodes being inferred (a stack: a
  /// node's body is inferred inside it).
  std::vector<std::unique_ptr<onnx::TensorProto>> NodeOwned;
  llvm::DenseMap<Node::OpKey, const onnx::OpSchema *> Schemas;
  std::unordered_map<std::string, std::vector<MemoEntry>> Memo;
  llvm::StringSet<> TakenFresh;
  unsigned NextFresh = 0;
  std::unique_ptr<onnx::ModelProto> FunctionHolder;
  onnx::shape_inference::ModelLocalFunctionsMap Functions;
};

//===----------------------------------------------------------------------===//
// The context
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *
StrictContext::getAttribute(const std::string &Name) const {
  for (const auto &Entry : Attributes)
    if (Entry.first == Name)
      return Entry.second.get();
  const Attribute *A = N.getAttr(Name);
  if (!A)
    return nullptr;
  auto P = std::make_unique<onnx::AttributeProto>();
  attributeToProto(*A, *P);
  Attributes.emplace_back(Name, std::move(P));
  return Attributes.back().second.get();
}

const onnx::TensorProto *StrictContext::getInputData(size_t I) const {
  checkInput(I);
  const onnx::TensorProto *P = E.dataOf(N, N.getOperand(I));
  DataReads.emplace_back(unsigned(I), encodeDataRead(P));
  return P;
}

onnx::GraphInferencer *
StrictContext::getGraphAttributeInferencer(const std::string &Name) {
  for (auto &Entry : Inferencers)
    if (Entry.first == Name)
      return Entry.second.get();
  const Attribute *A = N.getAttr(Name);
  if (!A || A->Kind != AttrKind::Graph || A->Graphs.empty())
    fail_type_inference("attribute ", Name, " does not contain a graph");
  Inferencers.emplace_back(
      Name, std::make_unique<BodyInferencer>(E, *A->Graphs.front()));
  return Inferencers.back().second.get();
}

std::vector<const onnx::TypeProto *> BodyInferencer::doInferencing(
    const std::vector<const onnx::TypeProto *> &InputTypes,
    const std::vector<const onnx::TensorProto *> &) {
  if (InputTypes.size() != G.getNumInputs())
    fail_type_inference("Graph has ", G.getNumInputs(), " inputs but ",
                        InputTypes.size(), " were provided");
  for (unsigned I = 0; I < InputTypes.size(); ++I) {
    if (!InputTypes[I])
      continue;
    // ONNX merges what the holder passes into the body's input types, and
    // a contradiction there fails the holder.
    std::string Why = E.merge(G.getInput(I), importType(*InputTypes[I]));
    if (!Why.empty())
      fail_type_inference("input ", I, " of the body: ", Why);
  }
  if (std::optional<Failure> F = E.inferGraph(G))
    failBody(F->Msg);
  OutputTypes.assign(G.getNumOutputs(), onnx::TypeProto());
  std::vector<const onnx::TypeProto *> Out;
  for (unsigned I = 0; I < G.getNumOutputs(); ++I) {
    if (const Type *T = E.typeOf(G.getOutput(I)))
      exportType(*T, OutputTypes[I]);
    Out.push_back(&OutputTypes[I]);
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

bool holdsGraph(const Node &N) {
  for (const Attribute &A : N.getAttrs())
    if (A.isGraph())
      return true;
  return false;
}

/// ONNX's prefix for an error of node \p N, so that messages read (and
/// compare) as its InferShapes' do.
std::string onnxNodeContext(const Node &N) {
  std::string S = "[ShapeInferenceError] (op_type:" + N.getOpType().str();
  if (!N.getName().empty())
    S += ", node name: " + N.getName().str();
  return S + "): ";
}

//===----------------------------------------------------------------------===//
// The engine
//===----------------------------------------------------------------------===//

void Engine::collectFreshSymbolClashes() {
  // ONNX's fresh symbols skip every dim_param the model already has; only
  // the ones that look like its own can clash.
  auto AddType = [&](const Type &T, auto &Self) -> void {
    if (T.hasShape())
      for (const Dim &D : T.getDims())
        if (D.isSymbol() && llvm::StringRef(D.getSymbol()).startswith("unk__"))
          TakenFresh.insert(D.getSymbol());
    if (T.getKind() == Type::Kind::Sequence ||
        T.getKind() == Type::Kind::Optional || T.getKind() == Type::Kind::Map)
      Self(T.getElementType(), Self);
  };
  std::function<void(const Graph &)> Visit = [&](const Graph &G) {
    for (const auto &V : G.getInputs())
      AddType(V->getType(), AddType);
    for (const Node &N : G.getNodes()) {
      for (unsigned I = 0; I < N.getNumResults(); ++I)
        if (const Value *R = N.getResult(I))
          AddType(R->getType(), AddType);
      for (const Attribute &A : N.getAttrs())
        for (const auto &Sub : A.Graphs)
          Visit(*Sub);
    }
  };
  Visit(M.getGraph());
}

void Engine::loadLocalFunctions() {
  if (M.Residual.empty())
    return;
  FunctionHolder = std::make_unique<onnx::ModelProto>();
  if (!FunctionHolder->ParseFromString(M.Residual))
    return;
  for (const onnx::FunctionProto &F : FunctionHolder->functions())
    Functions[F.domain() + ":" + F.name()] = &F;
}

void Engine::materialize(Type &T) {
  forEachDimOf(T, [&](Dim &D, unsigned) {
    if (!D.isUnknown())
      return;
    std::string Name;
    do
      Name = "unk__" + std::to_string(NextFresh++);
    while (TakenFresh.count(Name));
    std::string Denotation = D.getDenotation().str();
    D = Dim::symbol(Name);
    D.setDenotation(Denotation);
  });
}

std::string Engine::merge(const Value *V, Type Inferred) {
  if (Inferred.isNone())
    return "";
  materialize(Inferred);
  const Type *Existing = typeOf(V);
  if (!Existing) {
    setType(V, std::move(Inferred));
    return "";
  }
  if (Inferred == *Existing)
    return "";
  // ONNX's checkShapesAndTypes and mergeShapesAndTypes: known information
  // fills the unknown, a known inferred dim replaces a symbol, and element
  // types, ranks and known dims must agree.
  Type Merged = *Existing;
  std::string Why;
  if (!mergeInferredType(Merged, Inferred, Why))
    return "inferred type " + Inferred.str() + " of '" + V->getName().str() +
           "' contradicts its type " + Existing->str() + " (" + Why + ")";
  if (Merged != *Existing)
    setType(V, std::move(Merged));
  return "";
}

const onnx::OpSchema *Engine::schemaOf(const Node &N, int64_t Version) {
  // The version is the domain's: one lookup per op.
  auto [It, New] = Schemas.try_emplace(N.getOpKey(), nullptr);
  if (New && Version <= INT32_MAX)
    It->second = onnx::OpSchemaRegistry::Schema(
        N.getOpType().str(), int(Version),
        N.isOnnxDomain() ? "" : N.getDomain().str());
  return It->second;
}

std::optional<Failure> Engine::inferNode(const Node &N, bool &SeenUnsupported) {
  // The protos built for this node go with it; a body inferred inside it
  // (If, Loop) frees only its own nodes' ones.
  size_t OwnedMark = NodeOwned.size();
  auto FreeOwned =
      llvm::make_scope_exit([&] { NodeOwned.resize(OwnedMark); });
  int64_t Version = M.getOpsetVersion(N.getDomain());
  if (Version <= 0)
    return Failure{&N, "Cannot infer type and shape for node: no opset "
                       "import for domain '" +
                           N.getDomain().str() + "'"};
  const onnx::OpSchema *Schema = schemaOf(N, Version);
  const onnx::FunctionProto *Local = nullptr;
  if (!Schema) {
    auto It = Functions.find(N.getDomain().str() + ":" + N.getOpType().str());
    if (It == Functions.end()) {
      // ONNX skips the node and stays quiet about errors after it.
      SeenUnsupported = true;
      return std::nullopt;
    }
    Local = It->second;
  }
  std::vector<Type> Inferred;
  if (std::optional<Failure> F =
          runInference(N, Schema, Local, Inferred, SeenUnsupported))
    return F;
  // Empty when ONNX dropped the node's error (and its types).
  for (unsigned I = 0; I < Inferred.size() && I < N.getNumResults(); ++I)
    if (const Value *V = N.getResult(I)) {
      std::string Why = merge(V, std::move(Inferred[I]));
      if (!Why.empty())
        return Failure{&N, onnxNodeContext(N) + Why};
    }
  return std::nullopt;
}

std::optional<Failure> Engine::runInference(const Node &N,
                                            const onnx::OpSchema *Schema,
                                            const onnx::FunctionProto *Local,
                                            std::vector<Type> &Out,
                                            bool SeenUnsupported) {
  // The signature: schema, operand types with symbols numbered, attributes
  // (compared against a representative node), data read (checked per entry).
  bool Memoizable = !Local && !holdsGraph(N) && Schema &&
                    Schema->has_type_and_shape_inference_function();
  SignatureSymbols Symbols;
  std::vector<const Type *> Operands(N.getNumOperands(), nullptr);
  std::string Key;
  if (Memoizable) {
    // The attributes' hash keeps nodes that differ only in them (Constants
    // of different values) in different buckets: each bucket is searched
    // entry by entry.
    uint64_t AttrHash = N.hashAttrs();
    Key.append(reinterpret_cast<const char *>(&Schema), sizeof(Schema));
    Key.append(reinterpret_cast<const char *>(&AttrHash), sizeof(AttrHash));
    Key += char(N.getNumResults());
  }
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const Value *V = N.getOperand(I);
    Operands[I] = V ? typeOf(V) : nullptr;
    Key += Operands[I] ? '+' : '-';
    if (Operands[I])
      Symbols.encode(*Operands[I], Key);
  }
  auto Restore = [&](std::vector<Type> Results) {
    for (Type &T : Results)
      Symbols.restore(T);
    Out = std::move(Results);
  };

  std::vector<MemoEntry> *Bucket = nullptr;
  if (Memoizable) {
    Bucket = &Memo[Key];
    for (const MemoEntry &E : *Bucket) {
      if (!E.Rep->hasSameAttrs(N))
        continue;
      bool Same = true;
      for (const auto &[I, Bytes] : E.DataReads) {
        const onnx::TensorProto *P = dataOf(N, N.getOperand(I));
        if (encodeDataRead(P) != Bytes) {
          Same = false;
          break;
        }
      }
      if (Same) {
        Restore(E.Results);
        return std::nullopt;
      }
    }
  }

  // A new signature: ONNX's functions on the renamed types (the types are
  // the inferred ones here, which the save-time node checks did not see).
  if (int ShapeIn = shapeInputOf(N); ShapeIn >= 0 &&
                                     unsigned(ShapeIn) < N.getNumOperands() &&
                                     Operands[ShapeIn]) {
    std::string Why =
        oversizedShapeInput(N, *N.getOperand(ShapeIn), *Operands[ShapeIn]);
    if (!Why.empty())
      return Failure{&N, Why, /*Unsafe=*/true};
  }
  std::vector<onnx::TypeProto> Protos(N.getNumOperands());
  std::vector<const onnx::TypeProto *> InputTypes(N.getNumOperands(), nullptr);
  for (unsigned I = 0; I < N.getNumOperands(); ++I)
    if (Operands[I]) {
      Type Renamed = *Operands[I];
      Symbols.canonicalize(Renamed);
      exportType(Renamed, Protos[I]);
      InputTypes[I] = &Protos[I];
    }
  StrictContext Ctx(*this, N, InputTypes);
  try {
    if (Local) {
      std::unordered_map<std::string, int> Opsets;
      for (const onnx::OperatorSetIdProto &O : Local->opset_import())
        Opsets[O.domain()] = static_cast<int>(O.version());
      onnx::shape_inference::InferShapeForFunctionNode(
          *Local, Opsets, onnx::OpSchemaRegistry::Instance(), Ctx, {},
          Functions);
    } else if (Schema->has_type_and_shape_inference_function()) {
      Schema->GetTypeAndShapeInferenceFunction()(Ctx);
    } else if (Schema->HasFunction()) {
      onnx::shape_inference::InferShapeForFunctionNode(
          *Schema->GetFunction(), onnx::OpSchemaRegistry::Instance(), Ctx, {},
          Functions);
    }
  } catch (const onnx::InferenceError &Ex) {
    if (SeenUnsupported)
      return std::nullopt; // ONNX drops the error and the node's types
    return Failure{&N, onnxNodeContext(N) + Ex.what()};
  } catch (const std::exception &Ex) {
    return Failure{&N, onnxNodeContext(N) + Ex.what()};
  }
  if (Schema) {
    try {
      Schema->CheckInputOutputType(Ctx);
    } catch (const std::exception &Ex) {
      return Failure{&N, onnxNodeContext(N) + Ex.what()};
    }
  }
  std::vector<Type> Results;
  for (const onnx::TypeProto &P : Ctx.results())
    if (size_t Rank = maxRankOf(P); Rank > MaxTensorRank)
      return Failure{&N, "inferred rank " + std::to_string(Rank) +
                             " is above " + std::to_string(MaxTensorRank) +
                             ", the largest onnx-opt takes"};
  for (const onnx::TypeProto &P : Ctx.results())
    Results.push_back(P.value_case() == onnx::TypeProto::VALUE_NOT_SET
                          ? Type()
                          : importType(P));
  // Nodes that read different contents each time (Reshapes to many constant
  // shapes) share a signature: a bucket that grew with each would make the
  // inference quadratic (20k such nodes: 135 s). After a few entries the
  // rest are inferred without the memo.
  constexpr size_t MaxEntriesPerSignature = 4;
  if (Bucket && Bucket->size() < MaxEntriesPerSignature)
    Bucket->push_back(MemoEntry{&N, Ctx.dataReads(), Results});
  Restore(std::move(Results));
  return std::nullopt;
}

} // namespace

LogicalResult onnxopt::detail::verifyStrictInference(
    const Model &M, StrictInferenceFailure &Out,
    llvm::function_ref<void(LogicalResult)> OnVerdict,
    llvm::function_ref<bool(size_t)> BeforeMainNode) {
  Engine E(M);
  std::optional<Failure> F = E.inferGraph(M.getGraph(), BeforeMainNode);
  if (F) {
    Out.N = F->N;
    Out.Msg = std::move(F->Msg);
    Out.Unsafe = F->Unsafe;
  }
  LogicalResult Verdict = success(!F);
  if (OnVerdict)
    OnVerdict(Verdict);
  return Verdict;
}
