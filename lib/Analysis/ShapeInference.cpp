//===- ShapeInference.cpp - Per-node inference through ONNX schemas -------===//
//
// The adapter between our IR and ONNX's inference functions. For one node it
// presents:
//  - input types, converted lazily from the operands' types;
//  - input data: the tensors of constant initializers and Constant nodes,
//    handed over without copying unless they live in external data;
//  - symbolic input data: what data propagation computed for the operand;
//  - attributes, converted to AttributeProto on first request;
//  - subgraph inferencers that infer our subgraphs in place.
// The inferred output types are merged into the declared ones with ONNX's
// rules; a contradiction is an error naming the node and the value.
//
// Cost: each node converts only its own operands and requested attributes,
// so a whole model is linear in its size. Exported graphs repeat a few node
// signatures thousands of times: the functions run once per signature and
// the repeats take their results, symbols renamed (InferenceMemo.h).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/ShapeInference.h"
#include "InferenceMemo.h"
#include "InferenceProtos.h"
#include "onnxopt/Analysis/ConstantEval.h"
#include "onnxopt/Analysis/NodeValidation.h"
#include "onnxopt/Analysis/OpTable.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Ops/InferRules.h"
#include "onnxopt/Ops/OpDef.h"
#include "onnxopt/Ops/OpFacts.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <unordered_map>

using namespace onnxopt;

namespace {

constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;
constexpr int32_t kInt64 = onnx::TensorProto_DataType_INT64;
/// Tensor attributes larger than this are handed to inference functions
/// without their payload: inference reads only their type and dims.
constexpr uint64_t kMaxCopiedAttributeBytes = 64 * 1024;

//===----------------------------------------------------------------------===//
// Type <-> TypeProto
//===----------------------------------------------------------------------===//

// Types and dims convert with the importer's functions: one definition of
// the TypeProto <-> Type mapping for I/O and inference.
Dim dimFromProto(const onnx::TensorShapeProto_Dimension &P) {
  return detail::importDim(P);
}
/// Replaces what \p P holds with \p T. exportType adds dims to a shape it
/// finds: writing a branch's [2,B,64] over ONNX's [2,B,64] for an If result
/// gave a rank-6 type, which then contradicted the declared rank 3.
void typeToProto(const Type &T, onnx::TypeProto &P) {
  P.Clear();
  detail::exportType(T, P);
}
Type typeFromProto(const onnx::TypeProto &P) { return detail::importType(P); }

} // namespace

void onnxopt::detail::tensorToTypeProto(const Tensor &T, onnx::TypeProto &P) {
  onnx::TypeProto_Tensor &TT = *P.mutable_tensor_type();
  TT.set_elem_type(T.getElemType());
  onnx::TensorShapeProto &S = *TT.mutable_shape();
  for (int64_t D : T.getDimsRef())
    S.add_dim()->set_dim_value(D);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

namespace {

void tensorForAttribute(const Tensor &T, onnx::TensorProto &P) {
  if (T.isPacked()) {
    detail::toProto(T, P);
    return;
  }
  if (T.getByteSize() <= kMaxCopiedAttributeBytes) {
    P = detail::getProto(T);
    return;
  }
  P.set_name(T.getName().str());
  P.set_data_type(T.getElemType());
  for (int64_t D : T.getDimsRef())
    P.add_dims(D);
}

} // namespace

void onnxopt::detail::attributeToProto(const Attribute &A,
                                       onnx::AttributeProto &P) {
  if (!A.Residual.empty())
    P.ParseFromString(A.Residual);
  P.set_name(A.Name);
  P.set_type(static_cast<onnx::AttributeProto_AttributeType>(A.Kind));
  switch (A.Kind) {
  case AttrKind::Float:
    P.set_f(A.F);
    break;
  case AttrKind::Int:
    P.set_i(A.I);
    break;
  case AttrKind::String:
    P.set_s(A.S);
    break;
  case AttrKind::Tensor:
    if (!A.Tensors.empty())
      tensorForAttribute(A.Tensors.front(), *P.mutable_t());
    break;
  case AttrKind::Floats:
    P.mutable_floats()->Add(A.Floats.begin(), A.Floats.end());
    break;
  case AttrKind::Ints:
    P.mutable_ints()->Add(A.Ints.begin(), A.Ints.end());
    break;
  case AttrKind::Strings:
    for (const std::string &S : A.Strings)
      P.add_strings(S);
    break;
  case AttrKind::Tensors:
    for (const Tensor &T : A.Tensors)
      tensorForAttribute(T, *P.add_tensors());
    break;
  default:
    break;
  }
}

namespace {

/// A copy of \p T whose bytes are in raw_data (external tensors are read
/// from their mapping), for inference functions that parse the contents.
std::unique_ptr<onnx::TensorProto> loadTensor(const Tensor &T) {
  std::string Storage;
  std::optional<llvm::StringRef> Bytes = T.getRawBytes(Storage);
  if (!Bytes)
    return nullptr;
  auto P = std::make_unique<onnx::TensorProto>();
  P->set_name(T.getName().str());
  P->set_data_type(T.getElemType());
  for (int64_t D : T.getDimsRef())
    P->add_dims(D);
  P->set_raw_data(Bytes->data(), Bytes->size());
  return P;
}

} // namespace

//===----------------------------------------------------------------------===//
// Merging
//===----------------------------------------------------------------------===//

static bool mergeInto(Type &D, const Type &I, std::string &Why,
                      std::vector<DimFact> *Facts) {
  if (I.isNone())
    return true;
  if (D.isNone()) {
    D = I;
    return true;
  }
  if (D.getKind() != I.getKind()) {
    Why = "type kinds differ";
    return false;
  }
  switch (D.getKind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    break;
  case Type::Kind::Map:
    if (I.getElemType() && D.getElemType() &&
        I.getElemType() != D.getElemType()) {
      Why = "map key types differ";
      return false;
    }
    if (!D.getElemType())
      D.setElemType(I.getElemType());
    return mergeInto(D.getMutableElementType(), I.getElementType(), Why, Facts);
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    return mergeInto(D.getMutableElementType(), I.getElementType(), Why, Facts);
  default:
    return true;
  }

  if (I.getElemType() && D.getElemType() &&
      I.getElemType() != D.getElemType()) {
    Why = "element type " + getElemTypeName(I.getElemType()).str() + " vs " +
          getElemTypeName(D.getElemType()).str();
    return false;
  }
  if (!D.getElemType())
    D.setElemType(I.getElemType());
  if (!I.hasShape())
    return true;
  if (!D.hasShape()) {
    D.setShape(I.getShape());
    return true;
  }
  if (D.getRank() != I.getRank()) {
    Why = "rank " + std::to_string(I.getRank()) + " vs " +
          std::to_string(D.getRank());
    return false;
  }
  llvm::ArrayRef<Dim> IDims = I.getDims();
  std::vector<Dim> &DDims = D.getMutableDims();
  for (unsigned K = 0; K < IDims.size(); ++K)
    if (IDims[K].isKnown() && DDims[K].isKnown() &&
        IDims[K].getValue() != DDims[K].getValue()) {
      Why = "dim " + std::to_string(K) + ": " +
            std::to_string(IDims[K].getValue()) + " vs " +
            std::to_string(DDims[K].getValue());
      return false;
    }
  for (unsigned K = 0; K < IDims.size(); ++K) {
    const Dim &ID = IDims[K];
    Dim &DD = DDims[K];
    if (ID.isUnknown() || DD.isKnown())
      continue;
    if (DD.isSymbol() && ID.isSymbol()) {
      if (Facts && DD.getSymbol() != ID.getSymbol())
        Facts->push_back(DimFact{nullptr, nullptr, K, DD, ID});
      continue;
    }
    if (DD.isSymbol() && Facts)
      Facts->push_back(DimFact{nullptr, nullptr, K, DD, ID});
    std::string Denotation = DD.getDenotation().str();
    DD = ID;
    if (DD.getDenotation().empty())
      DD.setDenotation(Denotation);
  }
  return true;
}

bool onnxopt::mergeInferredType(Type &Declared, const Type &Inferred,
                                std::string &Why, std::vector<DimFact> *Facts) {
  Type Merged = Declared;
  size_t NumFacts = Facts ? Facts->size() : 0;
  if (!mergeInto(Merged, Inferred, Why, Facts)) {
    if (Facts)
      Facts->resize(NumFacts);
    return false;
  }
  Declared = std::move(Merged);
  return true;
}

//===----------------------------------------------------------------------===//
// The engine
//===----------------------------------------------------------------------===//

namespace {

/// Fresh `unk__N` symbols that collide with no symbol of the model.
class FreshSymbols final : public onnx::SymbolTable {
public:
  explicit FreshSymbols(Model &M) : M(M) {}

  void addFromGraph(const onnx::GraphProto &G) override {
    for (const auto *List : {&G.input(), &G.output(), &G.value_info()})
      for (const onnx::ValueInfoProto &VI : *List)
        addFromProto(VI.type());
  }

  std::string createNew(const std::string &Prefix) override {
    seed();
    while (true) {
      std::string Name = Prefix + std::to_string(Next++);
      if (Used.insert(Name).second)
        return Name;
    }
  }

  /// A fresh symbol named \p Base, or Base_2, Base_3, ... when taken.
  std::string createNamed(const std::string &Base) {
    seed();
    if (Used.insert(Base).second)
      return Base;
    for (uint64_t K = 2;; ++K) {
      std::string Name = Base + "_" + std::to_string(K);
      if (Used.insert(Name).second)
        return Name;
    }
  }

  /// Gives every unknown dim of tensor type \p T a fresh symbol named after
  /// \p Base (the node and output that make it): Base itself for a single
  /// unknown dim, Base_d<J> for dim J when there are several.
  void nameUnknownDimsAfter(Type &T, const std::string &Base) {
    if (!T.isTensor() || !T.hasShape())
      return nameUnknownDims(T);
    std::vector<Dim> &Dims = T.getMutableDims();
    size_t Unknown =
        llvm::count_if(Dims, [](const Dim &D) { return D.isUnknown(); });
    for (size_t J = 0; J < Dims.size(); ++J) {
      if (!Dims[J].isUnknown())
        continue;
      Dim Named = Dim::symbol(
          createNamed(Unknown == 1 ? Base : Base + "_d" + std::to_string(J)));
      Named.setDenotation(Dims[J].getDenotation());
      Dims[J] = std::move(Named);
    }
  }

  /// Gives every unknown dim of \p T a fresh symbol.
  void nameUnknownDims(Type &T) {
    switch (T.getKind()) {
    case Type::Kind::Tensor:
    case Type::Kind::SparseTensor:
      if (!T.hasShape())
        return;
      for (Dim &D : T.getMutableDims())
        if (D.isUnknown()) {
          Dim Named = Dim::symbol(createNew("unk__"));
          Named.setDenotation(D.getDenotation());
          D = std::move(Named);
        }
      return;
    case Type::Kind::Sequence:
    case Type::Kind::Optional:
    case Type::Kind::Map:
      nameUnknownDims(T.getMutableElementType());
      return;
    default:
      return;
    }
  }

private:
  Model &M;
  llvm::StringSet<> Used;
  uint64_t Next = 0;
  bool Seeded = false;

  void add(const Type &T) {
    for (const Dim &D : T.getDims())
      if (D.isSymbol())
        Used.insert(D.getSymbol());
    if (T.getKind() == Type::Kind::Sequence ||
        T.getKind() == Type::Kind::Optional || T.getKind() == Type::Kind::Map)
      add(T.getElementType());
  }
  void addFromProto(const onnx::TypeProto &P) { add(typeFromProto(P)); }
  void addGraph(Graph &G) {
    for (const std::unique_ptr<Value> &V : G.getInputs())
      add(V->getType());
    for (Node &N : G.getNodes()) {
      for (unsigned I = 0; I < N.getNumResults(); ++I)
        if (Value *V = N.getResult(I))
          add(V->getType());
      for (Graph *Sub : N.getSubgraphs())
        addGraph(*Sub);
    }
  }
  /// Collects the model's symbols once, on the first fresh name.
  void seed() {
    if (Seeded)
      return;
    Seeded = true;
    addGraph(M.getGraph());
  }
};

class NodeContext;

} // namespace

class ShapeInference::Impl {
public:
  Impl(Model &M, DiagnosticEngine &Diags, ShapeInferenceOptions Opts)
      : M(M), Diags(Diags), Opts(Opts), Symbols(M) {}

  LogicalResult inferGraph(Graph &G) {
    bool Ok = true;
    for (Node &N : G.getNodes())
      Ok &= succeeded(inferNode(N));
    return success(Ok);
  }
  LogicalResult inferNode(Node &N);
  void emitUnsupportedRemarks();

  /// Every type the engine writes goes through here: the change log (if
  /// any) saves the old type first, and so does the engine itself when it
  /// keeps its results aside.
  void setType(Value &V, Type T) {
    if (ChangeLog)
      ChangeLog->save(V);
    if (Aside && KeptIndex.try_emplace(&V, Kept.size()).second)
      Kept.emplace_back(&V, V.getType());
    V.setType(std::move(T));
  }
  TypeChangeLog *ChangeLog = nullptr;

  /// Results kept beside the IR (ShapeInference::setKeepResultsAside).
  /// Between calls each entry holds a value's inferred type; during a call
  /// the IR holds it and the entry the model's own type, to put back. The
  /// two swap places at the start and at the end of a call: no copy, and
  /// no second table.
  bool Aside = false;
  std::vector<std::pair<Value *, Type>> Kept;
  llvm::DenseMap<const Value *, size_t> KeptIndex;
  void swapKept() {
    for (auto &[V, T] : Kept)
      if (V)
        std::swap(V->getMutableType(), T);
  }
  /// Before a call: the results kept so far go into the IR, where the
  /// inference functions and the registry's hooks read them.
  void beginCall() {
    if (Aside)
      swapKept();
  }
  /// After a call: the results leave the IR, and the model's own types
  /// come back.
  void endCall() {
    if (Aside)
      swapKept();
  }

  const onnx::TensorShapeProto *getData(const Value *V) const {
    auto It = Data.find(V);
    return It == Data.end() ? nullptr : It->second;
  }

  Model &M;
  DiagnosticEngine &Diags;
  ShapeInferenceOptions Opts;
  /// Set when a body inferred for its holder had an error: the public entry
  /// points fail then, even though the holder's own inference succeeded.
  bool SubgraphFailed = false;
  FreshSymbols Symbols;
  /// Results of data propagation. Entries live on an arena, so that pointers
  /// handed to inference functions survive insertions by nested subgraphs,
  /// and a shape's dims are not one heap block each (a torch export has a
  /// propagated shape per Shape/Gather/Unsqueeze/Concat: at 1M nodes, 2M
  /// dims). A replaced entry stays on the arena until the analysis goes:
  /// the arena grows with the number of inferences, not beyond.
  google::protobuf::Arena DataArena{dataArenaOptions()};
  llvm::DenseMap<const Value *, onnx::TensorShapeProto *> Data;
  static google::protobuf::ArenaOptions dataArenaOptions() {
    google::protobuf::ArenaOptions AO;
    AO.start_block_size = 16 << 10;
    AO.max_block_size = 64 << 10;
    return AO;
  }
  /// A new entry for \p V on the arena, replacing any earlier one.
  onnx::TensorShapeProto &newData(const Value *V) {
    auto *P = google::protobuf::Arena::CreateMessage<onnx::TensorShapeProto>(
        &DataArena);
    Data[V] = P;
    return *P;
  }
  std::vector<DimFact> Facts;
  ShapeInferenceStats Stats;
  /// "op_type in domain" -> nodes kept as declared, for one summary remark.
  std::map<std::string, size_t> Unsupported;

  /// How one node is inferred: through an ONNX 1.12 schema, or (for op
  /// versions that changed after ONNX 1.12) through our own function, with
  /// the data propagation of a schema.
  struct Resolved {
    const onnx::OpSchema *Schema = nullptr;
    InferFn Own = nullptr;
    const onnx::OpSchema *Propagation = nullptr;
  };

  /// How nodes of N's op are inferred, resolved once per op type, domain
  /// and opset version: the schema lookup builds strings and searches
  /// maps, several thousand instructions a node otherwise.
  struct Resolution {
    int64_t Version = 0;
    bool Known = false;
    /// A schema standing in for a newer op version (see inferNode).
    bool StandIn = false;
    Resolved R;
    /// The schema whose data propagation the nodes run (getPropagationSchema).
    const onnx::OpSchema *PropagationSchema = nullptr;
    /// The op's definition in the registry at this version, or null: its
    /// traits, shape operands and inference rule.
    const OpDef *Def = nullptr;
    std::string Why;
  };
  const Resolution &resolveCached(const Node &N);
  /// Each resolution on the heap: inferNode holds one while an If's or a
  /// Loop's inference function infers the body, whose nodes add more (a
  /// DenseMap of values would move them as it grows).
  llvm::DenseMap<Node::OpKey, std::unique_ptr<Resolution>> Resolutions;

private:
  bool resolve(const Node &N, Resolved &R, std::string &Why);
  const onnx::FunctionProto *findLocalFunction(const Node &N);
  LogicalResult reportFailure(Node &N, llvm::StringRef What);
  /// What inference says about one result: nothing, a type, or a type too
  /// deep to take (TooDeep is then its largest rank).
  struct InferredResult {
    std::optional<Type> T;
    size_t TooDeep = 0;
  };
  static std::vector<InferredResult> inferredResults(const NodeContext &Ctx);
  LogicalResult writeResults(Node &N,
                             llvm::MutableArrayRef<InferredResult> Results);
  /// Runs \p N's data propagation, if it has one; the exception's message
  /// when it threw. \p Capture (when set) receives each result's data.
  std::optional<std::string>
  propagateData(Node &N, NodeContext &Ctx, const Resolution &Res,
                std::vector<std::optional<onnx::TensorShapeProto>> *Capture);

  /// The memo of node signatures (InferenceMemo.h).
  bool isMemoizable(const Resolution &Res) const;
  bool readsMatch(const detail::MemoEntry &E, NodeContext &Ctx,
                  detail::SignatureSymbols &Sig);
  LogicalResult applyEntry(Node &N, const detail::MemoEntry &E,
                           const detail::SignatureSymbols &Sig);
  void remember(std::vector<detail::MemoEntry> &Bucket, detail::MemoEntry E,
                const detail::SignatureSymbols &Sig);
  std::unordered_map<std::string, std::vector<detail::MemoEntry>> Memo;
  /// The op's refinement after ONNX's function (InferRule::Refine).
  void refineSymbolically(Node &N, const OpDef *Def, NodeContext &Ctx);
  /// An If whose condition is known takes the types of the branch it runs.
  void refineIf(Node &N, NodeContext &Ctx);
  /// Keeps an If result's declared type, with a warning, when it contradicts
  /// the \p Inferred type but allows every branch's output type.
  bool keepDeclaredIfType(Node &N, unsigned Result, const Type &Inferred,
                          llvm::StringRef Why);
  /// Evaluates the shape operands computed from constants only.
  void evaluateShapeOperands(Node &N, const OpDef *Def, NodeContext &Ctx);
  /// `<Op>_<K>_out<Result>`: K numbers the nodes of that op in the order
  /// this engine first named one of their dims.
  std::string sourceName(const Node &N, unsigned Result);
  llvm::DenseMap<const Node *, unsigned> SourceIndex;
  std::map<std::string, unsigned> NextSourceIndex;
  void runFunction(const onnx::FunctionProto &F, NodeContext &Ctx);

  bool FunctionsLoaded = false;
  std::unique_ptr<onnx::ModelProto> FunctionHolder;
  onnx::shape_inference::ModelLocalFunctionsMap Functions;
};

namespace {

/// Infers one of our subgraphs in place when an If/Loop/Scan inference
/// function asks for it.
class SubgraphInferencer final : public onnx::GraphInferencer {
public:
  SubgraphInferencer(ShapeInference::Impl &E, Graph &G) : E(E), G(G) {}

  std::vector<const onnx::TypeProto *>
  doInferencing(const std::vector<const onnx::TypeProto *> &InputTypes,
                const std::vector<const onnx::TensorProto *> &) override {
    if (InputTypes.size() != G.getNumInputs())
      fail_type_inference("graph '", G.getPath(), "' has ", G.getNumInputs(),
                          " inputs but ", InputTypes.size(), " were provided");
    for (unsigned I = 0; I < InputTypes.size(); ++I) {
      if (!InputTypes[I])
        continue;
      Value *In = G.getInput(I);
      Type T = In->getType();
      std::string Why;
      if (!mergeInferredType(T, typeFromProto(*InputTypes[I]), Why))
        fail_type_inference("input '", In->getName().str(), "' of graph '",
                            G.getPath(), "': ", Why);
      E.setType(*In, std::move(T));
    }
    // Problems inside the body are reported by the engine node by node; the
    // whole inference fails with them (ONNX's caller only wants types here).
    if (failed(E.inferGraph(G)))
      E.SubgraphFailed = true;
    OutputTypes.assign(G.getNumOutputs(), onnx::TypeProto());
    std::vector<const onnx::TypeProto *> Result;
    for (unsigned I = 0; I < G.getNumOutputs(); ++I) {
      typeToProto(G.getOutput(I)->getType(), OutputTypes[I]);
      Result.push_back(&OutputTypes[I]);
    }
    return Result;
  }

private:
  ShapeInference::Impl &E;
  Graph &G;
  std::vector<onnx::TypeProto> OutputTypes;
};

/// Presents one node to its schema's inference function.
class NodeContext final : public onnx::InferenceContext {
public:
  NodeContext(ShapeInference::Impl &E, Node &N)
      : E(E), N(N), Arena(arenaOptions(Block, sizeof(Block))),
        InputTypes(N.getNumOperands(), nullptr),
        InputTypeState(N.getNumOperands(), 0), InputData(N.getNumOperands()),
        InputDataState(N.getNumOperands(), 0), Evaluated(N.getNumOperands()) {
    OutputTypes.reserve(N.getNumResults());
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      OutputTypes.push_back(
          google::protobuf::Arena::CreateMessage<onnx::TypeProto>(&Arena));
  }

  Node &getNode() const { return N; }

  const onnx::AttributeProto *
  getAttribute(const std::string &Name) const override {
    for (const auto &Entry : Attributes)
      if (Entry.first == Name)
        return Entry.second.get();
    const Attribute *A = N.getAttr(Name);
    if (!A)
      return nullptr;
    auto P = std::make_unique<onnx::AttributeProto>();
    detail::attributeToProto(*A, *P);
    Attributes.emplace_back(Name, std::move(P));
    return Attributes.back().second.get();
  }

  size_t getNumInputs() const override { return N.getNumOperands(); }

  const onnx::TypeProto *getInputType(size_t I) const override {
    checkInput(I);
    if (!InputTypeState[I]) {
      InputTypeState[I] = 2;
      if (const Value *V = N.getOperand(I)) {
        if (!V->getType().isNone()) {
          typeToProto(V->getType(), newInputType(I));
          InputTypeState[I] = 1;
        } else if (const Tensor *T = getStoredConstant(*V)) {
          detail::tensorToTypeProto(*T, newInputType(I));
          InputTypeState[I] = 1;
        }
      }
    }
    return InputTypeState[I] == 1 ? InputTypes[I] : nullptr;
  }

  const onnx::TensorProto *getInputData(size_t I) const override {
    const onnx::TensorProto *P = readInputData(I);
    if (Log) {
      std::string Value;
      Unmemoizable |= !detail::encodeRead(P, Value);
      Log->push_back({detail::MemoRead::Kind::Data, unsigned(I), Value});
    }
    return P;
  }

  /// Starts recording the reads of contents into \p Reads, shapes encoded
  /// with \p Sig (the node's memo entry).
  void recordReads(std::vector<detail::MemoRead> *Reads,
                   detail::SignatureSymbols *Sig) {
    Log = Reads;
    LogSymbols = Sig;
  }
  /// Records a read of shape data (propagated, or a constant as such).
  void noteRead(detail::MemoRead::Kind K, size_t I,
                const onnx::TensorShapeProto *P) const {
    if (!Log)
      return;
    std::string Value;
    detail::encodeRead(P, *LogSymbols, Value);
    Log->push_back({K, unsigned(I), std::move(Value)});
  }
  /// A read was too large to record: the node's entry must not be kept.
  bool isUnmemoizable() const { return Unmemoizable; }

  const onnx::TensorProto *readInputData(size_t I) const {
    checkInput(I);
    if (InputDataState[I])
      return InputData[I];
    InputDataState[I] = 1;
    const Value *V = N.getOperand(I);
    if (!V)
      return nullptr;
    if (const Tensor *T = getStoredConstant(*V)) {
      if (T->isPacked()) {
        // On the node's arena (its first block is inline): no heap blocks
        // for a proto that lives as long as this node's inference.
        auto *P =
            google::protobuf::Arena::CreateMessage<onnx::TensorProto>(&Arena);
        detail::toProto(*T, *P);
        return InputData[I] = P;
      }
      if (!T->isExternal())
        return InputData[I] = &detail::getProto(*T);
      Owned.push_back(loadTensor(*T));
      return InputData[I] = Owned.back().get();
    }
    if (const onnx::TensorProto *P = getConstantAttributeData(*V))
      return InputData[I] = P;
    if (Evaluated[I])
      return InputData[I] = &detail::getProto(Evaluated[I]);
    return nullptr;
  }

  /// Presents \p T as the contents of operand \p I, a value the model
  /// computes from constants only
  /// (ShapeInference::Impl::evaluateShapeOperands).
  void setEvaluatedInput(size_t I, Tensor T) {
    checkInput(I);
    Evaluated[I] = std::move(T);
    InputDataState[I] = 0;
  }

  size_t getNumOutputs() const override { return N.getNumResults(); }

  onnx::TypeProto *getOutputType(size_t I) override {
    if (I >= OutputTypes.size())
      fail_type_inference("output ", I, " is out of bounds");
    return OutputTypes[I];
  }
  const onnx::TypeProto &getInferredOutput(size_t I) const {
    return *OutputTypes[I];
  }

  onnx::GraphInferencer *
  getGraphAttributeInferencer(const std::string &Name) override {
    for (auto &Entry : Inferencers)
      if (Entry.first == Name)
        return Entry.second.get();
    const Attribute *A = N.getAttr(Name);
    if (!A || A->Kind != AttrKind::Graph || A->Graphs.empty())
      fail_type_inference("attribute ", Name, " does not contain a graph");
    Inferencers.emplace_back(
        Name, std::make_unique<SubgraphInferencer>(E, *A->Graphs.front()));
    return Inferencers.back().second.get();
  }

  const onnx::SparseTensorProto *getInputSparseData(size_t) const override {
    return nullptr;
  }

  const onnx::TensorShapeProto *getSymbolicInput(size_t I) const override {
    checkInput(I);
    const Value *V = N.getOperand(I);
    // Like onnx: constant contents come through getInputData instead.
    const onnx::TensorShapeProto *P =
        !V || getStoredConstant(*V) ? nullptr : E.getData(V);
    noteRead(detail::MemoRead::Kind::Symbolic, I, P);
    return P;
  }

  /// Keeps a converted tensor alive for the duration of the node.
  const onnx::TensorProto *keep(std::unique_ptr<onnx::TensorProto> P) const {
    Owned.push_back(std::move(P));
    return Owned.back().get();
  }

private:
  ShapeInference::Impl &E;
  Node &N;
  /// The node's type protos live on an arena whose first block is part of
  /// the context: freeing a node's protos one by one cost more than
  /// inferring most nodes.
  alignas(16) char Block[2048];
  mutable google::protobuf::Arena Arena;
  // Inline for the usual few operands: a context is made per node, and
  // six heap vectors were a sixth of its cost.
  mutable llvm::SmallVector<onnx::TypeProto *, 4> InputTypes;
  /// 0 = not converted yet, 1 = converted, 2 = no type.
  mutable llvm::SmallVector<char, 4> InputTypeState;
  mutable llvm::SmallVector<const onnx::TensorProto *, 4> InputData;
  mutable llvm::SmallVector<char, 4> InputDataState;
  llvm::SmallVector<Tensor, 2> Evaluated;
  llvm::SmallVector<onnx::TypeProto *, 2> OutputTypes;
  mutable std::vector<
      std::pair<std::string, std::unique_ptr<onnx::AttributeProto>>>
      Attributes;
  std::vector<std::pair<std::string, std::unique_ptr<SubgraphInferencer>>>
      Inferencers;
  mutable std::vector<std::unique_ptr<onnx::TensorProto>> Owned;
  std::vector<detail::MemoRead> *Log = nullptr;
  detail::SignatureSymbols *LogSymbols = nullptr;
  mutable bool Unmemoizable = false;

  static google::protobuf::ArenaOptions arenaOptions(char *Block, size_t Size) {
    google::protobuf::ArenaOptions O;
    O.initial_block = Block;
    O.initial_block_size = Size;
    return O;
  }
  onnx::TypeProto &newInputType(size_t I) const {
    InputTypes[I] =
        google::protobuf::Arena::CreateMessage<onnx::TypeProto>(&Arena);
    return *InputTypes[I];
  }

  void checkInput(size_t I) const {
    if (I >= N.getNumOperands())
      fail_type_inference("input ", I, " is out of bounds");
  }

  /// Contents of a Constant node's value_int(s)/value_float(s).
  const onnx::TensorProto *getConstantAttributeData(const Value &V) const {
    const Node *Def = V.getDefiningNode();
    if (!Def || !hasTrait(*Def, ConstantProducer) ||
        Def->getAttrs().size() != 1)
      return nullptr;
    const Attribute &A = Def->getAttrs().front();
    auto P = std::make_unique<onnx::TensorProto>();
    if (A.Name == "value_int" && A.Kind == AttrKind::Int) {
      P->set_data_type(kInt64);
      P->add_int64_data(A.I);
    } else if (A.Name == "value_ints" && A.Kind == AttrKind::Ints) {
      P->set_data_type(kInt64);
      P->add_dims(A.Ints.size());
      P->mutable_int64_data()->Add(A.Ints.begin(), A.Ints.end());
    } else if (A.Name == "value_float" && A.Kind == AttrKind::Float) {
      P->set_data_type(onnx::TensorProto_DataType_FLOAT);
      P->add_float_data(A.F);
    } else if (A.Name == "value_floats" && A.Kind == AttrKind::Floats) {
      P->set_data_type(onnx::TensorProto_DataType_FLOAT);
      P->add_dims(A.Floats.size());
      P->mutable_float_data()->Add(A.Floats.begin(), A.Floats.end());
    } else {
      return nullptr;
    }
    return keep(std::move(P));
  }
};

/// Presents one node to its schema's data-propagation function; shares the
/// node's inference context for attributes and types.
class PropagationContext final : public onnx::DataPropagationContext {
public:
  PropagationContext(ShapeInference::Impl &E, NodeContext &Ctx)
      : E(E), Ctx(Ctx) {}

  const onnx::AttributeProto *
  getAttribute(const std::string &Name) const override {
    return Ctx.getAttribute(Name);
  }
  size_t getNumInputs() const override { return Ctx.getNumInputs(); }
  const onnx::TypeProto *getInputType(size_t I) const override {
    return Ctx.getInputType(I);
  }
  size_t getNumOutputs() const override { return Ctx.getNumOutputs(); }
  const onnx::TypeProto *getOutputType(size_t I) const override {
    if (I >= Ctx.getNumOutputs())
      fail_type_inference("output ", I, " is out of bounds");
    return &Ctx.getInferredOutput(I);
  }

  const onnx::TensorShapeProto *getInputData(size_t I) override {
    const onnx::TensorShapeProto *P = readInputData(I);
    Ctx.noteRead(detail::MemoRead::Kind::Propagated, I, P);
    return P;
  }

  /// Copies what the function computes for each result into \p Out.
  void captureOutputs(std::vector<std::optional<onnx::TensorShapeProto>> *Out) {
    Capture = Out;
  }

  void addOutputData(size_t I, onnx::TensorShapeProto &&P) override {
    if (I >= Ctx.getNumOutputs())
      fail_type_inference("output ", I, " is out of bounds");
    if (Capture)
      (*Capture)[I] = P;
    if (const Value *V = Ctx.getNode().getResult(I))
      E.newData(V) = std::move(P);
  }

private:
  ShapeInference::Impl &E;
  NodeContext &Ctx;
  std::vector<std::unique_ptr<onnx::TensorShapeProto>> Owned;
  std::vector<std::optional<onnx::TensorShapeProto>> *Capture = nullptr;
  std::vector<Tensor> Cones;

  /// An integer scalar or vector the model computes from constants only
  /// through ops that carry no shape data: the TorchScript exporter writes
  /// `int(sqrt(N))` of a position table as Cast(Pow(16.0, 0.5)) beside
  /// dims read from Shape, so the Concat they meet in is neither all
  /// constant (evaluateShapeOperands) nor all propagated. A few nodes at
  /// most; Shape of a symbolic dim stops it.
  const onnx::TensorProto *evaluateCone(const Value &V) {
    const Node *Def = V.getDefiningNode();
    if (!Def || !Def->isOnnxDomain() || !V.getType().isTensor())
      return nullptr;
    const Type &Ty = V.getType();
    if ((Ty.getElemType() != kInt64 && Ty.getElemType() != kInt32) ||
        !Ty.hasShape() || Ty.getRank() > 1)
      return nullptr;
    ConstantConeOptions Cone;
    Cone.MaxNodes = 8;
    Cone.Eval.MaxResultBytes = 1024;
    llvm::DenseMap<const Value *, Tensor> Memo;
    Tensor C = evaluateFromConstants(V, E.M.getOpsetVersion(""), Cone, Memo);
    if (!C)
      return nullptr;
    Cones.push_back(std::move(C));
    return &detail::getProto(Cones.back());
  }

  const onnx::TensorShapeProto *readInputData(size_t I) {
    if (I >= Ctx.getNumInputs())
      fail_type_inference("input ", I, " is out of bounds");
    const Value *V = Ctx.getNode().getOperand(I);
    if (!V)
      return nullptr;
    if (const onnx::TensorShapeProto *P = E.getData(V))
      return P;
    // Integer constants of rank 0 or 1 read as shape data, as in onnx. Not
    // a read for the memo: the shape returned is (and is recorded). Decided
    // from the stored type first: a weight is never shape data, and
    // loading an external one reads all of its bytes (a Gather from an
    // embedding table, a MatMul's weight).
    if (const Tensor *S = getStoredConstant(*V))
      if (S->getDimsRef().size() > 1 ||
          (S->getElemType() != kInt64 && S->getElemType() != kInt32))
        return nullptr;
    const onnx::TensorProto *T = Ctx.readInputData(I);
    if (!T)
      T = evaluateCone(*V);
    if (!T || T->dims_size() > 1 ||
        (T->data_type() != kInt64 && T->data_type() != kInt32))
      return nullptr;
    std::vector<int64_t> Values;
    if (T->data_type() == kInt64)
      Values = onnx::ParseData<int64_t>(T);
    else
      for (int32_t X : onnx::ParseData<int32_t>(T))
        Values.push_back(X);
    auto P = std::make_unique<onnx::TensorShapeProto>();
    for (int64_t X : Values)
      P->add_dim()->set_dim_value(X);
    Owned.push_back(std::move(P));
    return Owned.back().get();
  }
};

std::string describeOp(const Node &N) {
  std::string S = N.getOpType().str();
  if (!N.isOnnxDomain())
    S = N.getDomain().str() + "." + S;
  return S;
}

} // namespace

bool ShapeInference::Impl::resolve(const Node &N, Resolved &R,
                                   std::string &Why) {
  std::string Domain = N.isOnnxDomain() ? "" : N.getDomain().str();
  int64_t Version = M.getOpsetVersion(N.getDomain());
  if (Version <= 0) {
    Why = "domain '" + N.getDomain().str() + "' is not imported";
    return false;
  }
  // ONNX Runtime's contrib ops have no ONNX schema: the registry's shape
  // functions (any version of com.microsoft; the rules did not change).
  if (const InferRule *C = findNoSchemaRule(Domain, N.getOpType(), Version)) {
    R.Own = C->Infer;
    return true;
  }
  int Max112 = getOnnx112MaxOpset(Domain);
  if (Max112 == 0) {
    // Other domains ONNX 1.12 has schemas for (ai.onnx.preview.training).
    const auto &Ranges =
        onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    auto It = Ranges.Map().find(Domain);
    if (It != Ranges.Map().end() && Version > It->second.second) {
      Why = "opset " + std::to_string(Version) +
            " is newer than the schemas (" + std::to_string(It->second.second) +
            ")";
      return false;
    }
  }
  OpResolution Res = resolveOpVersion(Domain, N.getOpType(), Version);
  switch (Res.K) {
  case OpResolution::Kind::TooNew:
    Why = "opset " + std::to_string(Version) + " is newer than the op table (" +
          std::to_string(getOpTableMaxOpset(Domain)) + ")";
    return false;
  case OpResolution::Kind::Removed:
    Why = "deprecated in opset " + std::to_string(Res.Since);
    return false;
  case OpResolution::Kind::Modern: {
    const InferRule *Op =
        findNewVersionRule(Domain, N.getOpType(), Res.SemanticSince);
    if (!Op) {
      Why = "version " + std::to_string(Res.SemanticSince) +
            " changed after ONNX 1.12 and has no inference here";
      return false;
    }
    const onnx::OpSchema *Reused = getReusedSchema(*Op);
    R.Own = Op->Infer;
    R.Schema = Op->Infer ? nullptr : Reused;
    R.Propagation = Reused;
    if (!R.Own && !R.Schema) {
      Why = "no schema " + std::string(Op->ReuseOp) + "-" +
            std::to_string(Op->ReuseOpset) + " to infer it with";
      return false;
    }
    return true;
  }
  case OpResolution::Kind::Onnx112Schema:
    break;
  }
  R.Schema = onnx::OpSchemaRegistry::Schema(N.getOpType().str(),
                                            Res.SchemaOpset, Domain);
  R.Propagation = R.Schema;
  if (!R.Schema)
    Why = "no schema in opset " + std::to_string(Version);
  return R.Schema != nullptr;
}

/// The schema whose data propagation \p N runs, or null: its own, or that
/// of the newer version its inference rule names (ONNX 1.12 gave Add, Sub
/// and Mul one only from version 14, which changed their types, not their
/// arithmetic).
static const onnx::OpSchema *getPropagationSchema(const Node &N,
                                                  const onnx::OpSchema *Schema,
                                                  const OpDef *Def) {
  if (Schema && Schema->has_data_propagation_function())
    return Schema;
  const InferRule *Rule = Def ? Def->Infer : nullptr;
  if (!Schema || !Rule || !Rule->PropagationOpset)
    return nullptr;
  const onnx::OpSchema *Newer = onnx::OpSchemaRegistry::Schema(
      N.getOpType().str(), Rule->PropagationOpset, Rule->Domain);
  return Newer && Newer->has_data_propagation_function() ? Newer : nullptr;
}

const ShapeInference::Impl::Resolution &
ShapeInference::Impl::resolveCached(const Node &N) {
  int64_t Version = M.getOpsetVersion(N.getDomain());
  auto [It, Inserted] = Resolutions.try_emplace(N.getOpKey());
  if (Inserted)
    It->second = std::make_unique<Resolution>();
  Resolution &Res = *It->second;
  if (Inserted || Res.Version != Version) {
    Res = Resolution();
    Res.Version = Version;
    Res.Known = resolve(N, Res.R, Res.Why);
    Res.StandIn = Res.R.Schema && findNodeSchema(M, N) != Res.R.Schema;
    Res.Def = lookupOp(N.getDomain(), N.getOpType(), Version);
    Res.PropagationSchema = getPropagationSchema(N, Res.R.Propagation, Res.Def);
  }
  return Res;
}

const onnx::FunctionProto *
ShapeInference::Impl::findLocalFunction(const Node &N) {
  if (!FunctionsLoaded) {
    FunctionsLoaded = true;
    if (!M.Residual.empty()) {
      FunctionHolder = std::make_unique<onnx::ModelProto>();
      if (FunctionHolder->ParseFromString(M.Residual))
        for (const onnx::FunctionProto &F : FunctionHolder->functions())
          Functions[F.domain() + ":" + F.name()] = &F;
    }
  }
  if (Functions.empty())
    return nullptr;
  auto It = Functions.find(N.getDomain().str() + ":" + N.getOpType().str());
  return It == Functions.end() ? nullptr : It->second;
}

void ShapeInference::Impl::runFunction(const onnx::FunctionProto &F,
                                       NodeContext &Ctx) {
  std::unordered_map<std::string, int> Opsets;
  for (const onnx::OperatorSetIdProto &O : F.opset_import())
    Opsets[O.domain()] = static_cast<int>(O.version());
  onnx::shape_inference::InferShapeForFunctionNode(
      F, Opsets, onnx::OpSchemaRegistry::Instance(), Ctx, {}, Functions,
      &Symbols);
}

LogicalResult ShapeInference::Impl::reportFailure(Node &N,
                                                  llvm::StringRef What) {
  ++Stats.NodesFailed;
  // An operand without a type (e.g. the result of a custom op) explains the
  // failure; onnx stays silent about it too.
  for (const Value *V : N.getOperands())
    if (V && V->getType().isNone() && !getStoredConstant(*V))
      return success();
  // ONNX messages may span lines ("==> Context: ..."); keep the first.
  llvm::StringRef Msg = What.split('\n').first.rtrim();
  if (Opts.Strict)
    return emitError(Diags, N) << "shape inference failed: " << Msg;
  emitWarning(Diags, N) << "shape inference failed: " << Msg;
  return success();
}

std::vector<ShapeInference::Impl::InferredResult>
ShapeInference::Impl::inferredResults(const NodeContext &Ctx) {
  std::vector<InferredResult> Results(Ctx.getNumOutputs());
  for (unsigned I = 0; I < Results.size(); ++I) {
    const onnx::TypeProto &P = Ctx.getInferredOutput(I);
    if (P.value_case() == onnx::TypeProto::VALUE_NOT_SET)
      continue;
    // Checked before converting: the rank may be anything a file says.
    if (size_t Rank = detail::maxRankOf(P); Rank > MaxTensorRank)
      Results[I].TooDeep = Rank;
    else
      Results[I].T = typeFromProto(P);
  }
  return Results;
}

LogicalResult ShapeInference::Impl::writeResults(
    Node &N, llvm::MutableArrayRef<InferredResult> Results) {
  bool Ok = true;
  // A dim that depends on the data (how many boxes NMS keeps) is named
  // after where it comes from, so that it reads as data-dependent.
  const OpDef *Def = Opts.NameUnknownDims ? resolveCached(N).Def : nullptr;
  bool DataDependent = Def && (Def->has(ValueDependentShape) ||
                               Def->has(ValueDependentUnlessConstant));
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *V = N.getResult(I);
    if (!V || (!Results[I].T && !Results[I].TooDeep))
      continue;
    if (size_t Rank = Results[I].TooDeep) {
      emitError(Diags, N) << "inferred rank " << Rank << " of value '"
                          << V->getName() << "' is above " << MaxTensorRank
                          << ", the largest onnx-opt takes";
      Ok = false;
      continue;
    }
    Type Inferred = std::move(*Results[I].T);
    // As onnx does: name the unknown dims of the inferred type, then merge;
    // a declared unknown dim about which inference says nothing stays so.
    if (Opts.NameUnknownDims) {
      if (DataDependent)
        Symbols.nameUnknownDimsAfter(Inferred, sourceName(N, I));
      else
        Symbols.nameUnknownDims(Inferred);
    }
    Type Merged = V->getType();
    std::string Why;
    size_t FirstFact = Facts.size();
    if (Merged.isNone()) {
      // Nothing declared to contradict or to keep: the inferred type is the
      // value's (moved, where merging would copy it).
      Merged = std::move(Inferred);
    } else if (!mergeInferredType(Merged, Inferred, Why, &Facts)) {
      if (keepDeclaredIfType(N, I, Inferred, Why))
        continue;
      ++Stats.Contradictions;
      emitError(Diags, N) << "inferred type " << Inferred.str() << " of value '"
                          << V->getName() << "' contradicts its declared type "
                          << V->getType().str() << " (" << Why << ")";
      Ok = false;
      continue;
    }
    for (size_t K = FirstFact; K < Facts.size(); ++K) {
      Facts[K].V = V;
      Facts[K].From = &N;
    }
    if (Merged != V->getType()) {
      ++Stats.ValuesRefined;
      setType(*V, std::move(Merged));
    }
  }
  return success(Ok);
}

std::string ShapeInference::Impl::sourceName(const Node &N, unsigned Result) {
  auto It = SourceIndex.find(&N);
  if (It == SourceIndex.end())
    It = SourceIndex.try_emplace(&N, NextSourceIndex[N.getOpType().str()]++)
             .first;
  return N.getOpType().str() + "_" + std::to_string(It->second) + "_out" +
         std::to_string(Result);
}

void ShapeInference::Impl::refineSymbolically(Node &N, const OpDef *Def,
                                              NodeContext &Ctx) {
  if (!Def)
    return;
  // The rules read only what ONNX's function read before; a malformed
  // operand that it tolerated is left to it.
  try {
    if (Def->Infer && Def->Infer->Refine)
      Def->Infer->Refine(Ctx);
    else if (Def->has(Conditional))
      refineIf(N, Ctx);
  } catch (const std::exception &) {
  }
}

/// ONNX's If merges the types of both branches, and keeps no shape when
/// their ranks differ. torch writes `squeeze(dim)` of a value whose dim it
/// could not see as `If(Equal(Shape(x)[dim], 1), Squeeze, Identity)`: the
/// branches differ in rank by design, but the condition usually follows
/// from dims that are numbers (a rotary table `[1, 1, L, d]` sliced on L).
/// When the condition is a constant or propagated shape data holding a
/// number, the node runs that branch at every value of the symbols, so its
/// results have that branch's output types (inferred in place just before,
/// by ONNX's function).
void ShapeInference::Impl::refineIf(Node &N, NodeContext &Ctx) {
  const Value *Cond = N.getNumOperands() == 1 ? N.getOperand(0) : nullptr;
  if (!Cond)
    return;
  std::optional<int64_t> Taken;
  if (Tensor T = getConstantValue(*Cond)) {
    std::optional<std::vector<int64_t>> V = T.toInt64s();
    if (V && V->size() == 1)
      Taken = V->front();
  } else if (const onnx::TensorShapeProto *P = getData(Cond)) {
    if (P->dim_size() == 1 && P->dim(0).has_dim_value())
      Taken = P->dim(0).dim_value();
  }
  if (!Taken)
    return;
  const Attribute *A = N.getAttr(*Taken ? "then_branch" : "else_branch");
  if (!A || A->Kind != AttrKind::Graph || A->Graphs.empty())
    return;
  const Graph &Branch = *A->Graphs.front();
  if (Branch.getNumOutputs() != N.getNumResults())
    return;
  // Each result already holds ONNX's union of both branches: the taken
  // branch's type replaces it (typeToProto clears it first).
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    const Type &T = Branch.getOutput(I)->getType();
    if (!T.isNone())
      typeToProto(T, *Ctx.getOutputType(I));
  }
}

/// An If's result type is ours to compute: ONNX's union of the two branches'
/// types, or the type of the branch a known condition takes (refineIf). When
/// each branch's own output type is known and allowed by the declared type,
/// whichever branch runs gives the result a type the declaration allows; a
/// contradiction then lies in how we combined the branches (a rank-3 LSTM
/// state read as rank 6 was one), not in the model, which ONNX Runtime runs.
/// Refusing would reject a valid model for our own mistake: the declared type
/// stays, and the warning names the node. A branch output that contradicts
/// the declaration, or one of unknown type, leaves it a contradiction.
bool ShapeInference::Impl::keepDeclaredIfType(Node &N, unsigned Result,
                                              const Type &Inferred,
                                              llvm::StringRef Why) {
  const Value *V = N.getResult(Result);
  if (!V || !ifBranchesFit(N, Result, V->getType()))
    return false;
  emitWarning(Diags, N) << "inferred type " << Inferred.str() << " of value '"
                        << V->getName() << "' contradicts its declared type "
                        << V->getType().str() << " (" << Why
                        << ") that both branches' outputs fit: keeping the "
                           "declared type";
  return true;
}

void ShapeInference::Impl::evaluateShapeOperands(Node &N, const OpDef *Def,
                                                 NodeContext &Ctx) {
  // torch exports a grid's Expand target as arithmetic on constants
  // (`Where(Equal(s, -1 * ones), ones, s)`), which ONNX's functions read as
  // unknown contents: evaluated, the target is the constant it always is.
  // Only the operands that decide shapes, and only small cones of known
  // ops; Shape and Size of values with unknown or symbolic dims stop it.
  // The result is a computed value, as propagated data is: data-prop=false
  // turns both off.
  if (!Opts.DataPropagation || !N.isOnnxDomain() || !Def)
    return;
  int64_t Opset = M.getOpsetVersion("");
  ConstantConeOptions Cone;
  Cone.Eval.MaxResultBytes = 64 * 1024;
  llvm::DenseMap<const Value *, Tensor> Memo;
  for (const ShapeOperand &S : Def->ShapeOperands) {
    const Value *V =
        S.Index < N.getNumOperands() ? N.getOperand(S.Index) : nullptr;
    if (!V || isConstant(*V) || !V->getDefiningNode())
      continue;
    if (Tensor T = evaluateFromConstants(*V, Opset, Cone, Memo))
      Ctx.setEvaluatedInput(S.Index, std::move(T));
  }
}

/// The tensor of a Constant whose only attribute is a typed `value`, inferred
/// through ONNX 1.12's own Constant schema.
static const Tensor *
constantValueOf(const Node &N, const ShapeInference::Impl::Resolution &Res) {
  if (!Res.R.Schema || Res.R.Own || Res.StandIn || !N.isOnnxDomain() ||
      !Res.Def || !Res.Def->has(ConstantProducer) || N.getNumResults() != 1 ||
      N.getAttrs().size() != 1)
    return nullptr;
  const Attribute &A = N.getAttrs().front();
  if (A.Name != "value" || A.Kind != AttrKind::Tensor ||
      A.Tensors.size() != 1 || A.Tensors.front().getElemType() == 0)
    return nullptr;
  return &A.Tensors.front();
}

LogicalResult ShapeInference::Impl::inferNode(Node &N) {
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (Value *V = N.getResult(I))
      Data.erase(V);

  const Resolution &Res = resolveCached(N);
  const std::string &Why = Res.Why;
  const Resolved &R = Res.R;
  bool Known = Res.Known;
  const onnx::OpSchema *Schema = R.Schema;
  const onnx::FunctionProto *Local = Known ? nullptr : findLocalFunction(N);
  if (!Known && !Local) {
    ++Stats.NodesWithoutSchema;
    ++Unsupported["'" + describeOp(N) + "' (" + Why + ")"];
    if (!Opts.InferUnknownOpBodies)
      return success();
    bool Ok = true;
    for (Graph *Sub : N.getSubgraphs())
      Ok &= succeeded(inferGraph(*Sub));
    return success(Ok);
  }

  // A signature seen before passed the node check, which reads nothing
  // else; its entries say what the functions returned for which contents.
  detail::SignatureSymbols Sig;
  std::vector<detail::MemoEntry> *Bucket = nullptr;
  if (isMemoizable(Res)) {
    std::string Key;
    Key.reserve(128);
    if (detail::encodeSignature(N, Res.Version, Sig, Key))
      Bucket = &Memo[Key];
  }
  bool Validated = Bucket && !Bucket->empty();
  // ONNX's inference functions assume a node that matches its schema. A
  // schema standing in for a newer op version allows fewer element types
  // than that version: those are the op table's to check.
  if (!Validated && failed(validateNode(N, Schema, Diags,
                                        /*CheckElementTypes=*/!Res.StandIn)))
    return failure();
  NodeContext Ctx(*this, N);
  evaluateShapeOperands(N, Res.Def, Ctx);
  if (Validated)
    for (const detail::MemoEntry &E : *Bucket)
      if (readsMatch(E, Ctx, Sig))
        return applyEntry(N, E, Sig);

  std::optional<detail::MemoEntry> Entry;
  if (Bucket) {
    Entry.emplace();
    Entry->Data.resize(N.getNumResults());
    Ctx.recordReads(&Entry->Reads, &Sig);
  }
  try {
    if (Local)
      runFunction(*Local, Ctx);
    else if (const Tensor *T = constantValueOf(N, Res))
      // What Constant's inference function does with `value` (its type is
      // the tensor's), without copying the tensor into an AttributeProto:
      // a third of the nodes of a torch export are Constants.
      detail::tensorToTypeProto(*T, *Ctx.getOutputType(0));
    else if (R.Own)
      R.Own(Ctx);
    else if (Schema->has_type_and_shape_inference_function())
      Schema->GetTypeAndShapeInferenceFunction()(Ctx);
    else if (Schema->HasFunction())
      onnx::shape_inference::InferShapeForFunctionNode(
          *Schema->GetFunction(), onnx::OpSchemaRegistry::Instance(), Ctx, {},
          Functions, &Symbols);
  } catch (const std::exception &Ex) {
    return reportFailure(N, Ex.what());
  } catch (...) {
    return reportFailure(N, "unknown exception");
  }
  ++Stats.NodesInferred;
  refineSymbolically(N, Res.Def, Ctx);
  std::vector<InferredResult> Results = inferredResults(Ctx);
  if (Entry)
    for (const InferredResult &Result : Results) {
      if (Result.TooDeep) {
        Entry.reset();
        break;
      }
      Entry->Results.push_back(Result.T);
    }
  LogicalResult Written = writeResults(N, Results);

  std::optional<std::string> Thrown =
      propagateData(N, Ctx, Res, Entry ? &Entry->Data : nullptr);
  if (!Thrown) {
    if (Entry && !Ctx.isUnmemoizable())
      remember(*Bucket, std::move(*Entry), Sig);
    return Written;
  }
  // As before the memo, an exception without a message is no failure.
  if (!Thrown->empty()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I))
        Data.erase(V);
    --Stats.NodesInferred;
    if (failed(reportFailure(N, *Thrown)))
      return failure();
  }
  return Written;
}

std::optional<std::string> ShapeInference::Impl::propagateData(
    Node &N, NodeContext &Ctx, const Resolution &Res,
    std::vector<std::optional<onnx::TensorShapeProto>> *Capture) {
  if (!Opts.DataPropagation)
    return std::nullopt;
  // Ours first: ONNX 1.12 has none for these ops, or none that we use.
  PropagateFn Own =
      Res.Def && Res.Def->Infer ? Res.Def->Infer->Propagate : nullptr;
  const onnx::OpSchema *Propagation = Res.PropagationSchema;
  if (!Own && !Propagation)
    return std::nullopt;
  // Data propagation functions read their inputs' types unchecked (Shape
  // dereferences a missing one): only nodes whose inputs all have types.
  for (const Value *V : N.getOperands())
    if (V && V->getType().isNone())
      return std::nullopt;
  PropagationContext PCtx(*this, Ctx);
  PCtx.captureOutputs(Capture);
  try {
    if (Own)
      Own(PCtx);
    else
      Propagation->GetDataPropagationFunction()(PCtx);
  } catch (const std::exception &Ex) {
    return std::string(Ex.what());
  } catch (...) {
    return std::string("unknown exception");
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The memo
//===----------------------------------------------------------------------===//

bool ShapeInference::Impl::isMemoizable(const Resolution &Res) const {
  if (!Opts.Memoize || !Res.Known)
    return false;
  // A function body is inferred with our fresh-symbol table, which names
  // dims per node; local functions are not Known.
  if (Res.R.Own)
    return true;
  return Res.R.Schema && Res.R.Schema->has_type_and_shape_inference_function();
}

bool ShapeInference::Impl::readsMatch(const detail::MemoEntry &E,
                                      NodeContext &Ctx,
                                      detail::SignatureSymbols &Sig) {
  // The same reads, in the same order, returning the same (symbols
  // numbered on from the signature's): the functions, pure in what they
  // read, then do for this node what they did for the entry's.
  size_t KeySymbols = Sig.size();
  PropagationContext PCtx(*this, Ctx);
  auto Same = [&](const detail::MemoRead &Read, std::string &Value) {
    switch (Read.K) {
    case detail::MemoRead::Kind::Data:
      if (!detail::encodeRead(Ctx.getInputData(Read.Operand), Value))
        return false;
      break;
    case detail::MemoRead::Kind::Symbolic:
      detail::encodeRead(Ctx.getSymbolicInput(Read.Operand), Sig, Value);
      break;
    case detail::MemoRead::Kind::Propagated:
      detail::encodeRead(PCtx.getInputData(Read.Operand), Sig, Value);
      break;
    }
    return Value == Read.Value;
  };
  std::string Value;
  try {
    for (const detail::MemoRead &Read : E.Reads) {
      Value.clear();
      if (!Same(Read, Value)) {
        Sig.truncate(KeySymbols);
        return false;
      }
    }
  } catch (const std::exception &) {
    Sig.truncate(KeySymbols);
    return false;
  }
  return true;
}

LogicalResult
ShapeInference::Impl::applyEntry(Node &N, const detail::MemoEntry &E,
                                 const detail::SignatureSymbols &Sig) {
  ++Stats.NodesInferred;
  ++Stats.NodesMemoized;
  std::vector<InferredResult> Results(E.Results.size());
  for (unsigned I = 0; I < Results.size(); ++I)
    if (E.Results[I]) {
      Results[I].T = *E.Results[I];
      Sig.restore(*Results[I].T);
    }
  LogicalResult Written = writeResults(N, Results);
  for (unsigned I = 0; I < E.Data.size(); ++I)
    if (Value *V = N.getResult(I); V && E.Data[I]) {
      onnx::TensorShapeProto &P = newData(V);
      P = *E.Data[I];
      Sig.restore(P);
    }
  return Written;
}

void ShapeInference::Impl::remember(std::vector<detail::MemoEntry> &Bucket,
                                    detail::MemoEntry E,
                                    const detail::SignatureSymbols &Sig) {
  // A node whose reads differ each time (Reshapes to many constant shapes)
  // would make every lookup replay a long list.
  constexpr size_t kMaxEntriesPerSignature = 4;
  if (Bucket.size() >= kMaxEntriesPerSignature)
    return;
  // A symbol that came from neither the types nor the reads would be a
  // constant of the function's: not the same under renaming.
  for (std::optional<Type> &T : E.Results)
    if (T && !Sig.canonicalize(*T))
      return;
  for (std::optional<onnx::TensorShapeProto> &D : E.Data)
    if (D && !Sig.canonicalize(*D))
      return;
  Bucket.push_back(std::move(E));
}

void ShapeInference::Impl::emitUnsupportedRemarks() {
  for (const auto &Entry : Unsupported)
    emitRemark(Diags) << Entry.second << " node(s) of " << Entry.first
                      << " keep their declared types";
  Unsupported.clear();
}

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

ShapeInference::ShapeInference(Model &M, DiagnosticEngine &Diags,
                               ShapeInferenceOptions Opts)
    : P(std::make_unique<Impl>(M, Diags, Opts)) {}

ShapeInference::~ShapeInference() = default;

LogicalResult ShapeInference::inferModel() {
  return inferGraph(P->M.getGraph());
}

LogicalResult ShapeInference::inferGraph(Graph &G) {
  P->SubgraphFailed = false;
  P->beginCall();
  LogicalResult R = P->inferGraph(G);
  P->endCall();
  P->emitUnsupportedRemarks();
  return success(succeeded(R) && !P->SubgraphFailed);
}

LogicalResult ShapeInference::inferNode(Node &N) {
  P->SubgraphFailed = false;
  P->beginCall();
  LogicalResult R = P->inferNode(N);
  P->endCall();
  return success(succeeded(R) && !P->SubgraphFailed);
}

void ShapeInference::emitRemarks() { P->emitUnsupportedRemarks(); }

std::optional<std::vector<Dim>>
ShapeInference::getPropagatedData(const Value &V) const {
  const onnx::TensorShapeProto *S = P->getData(&V);
  if (!S)
    return std::nullopt;
  std::vector<Dim> Dims;
  for (const onnx::TensorShapeProto_Dimension &D : S->dim())
    Dims.push_back(dimFromProto(D));
  return Dims;
}

void ShapeInference::forget(const Value &V) {
  P->Data.erase(&V);
  auto It = P->KeptIndex.find(&V);
  if (It != P->KeptIndex.end()) {
    P->Kept[It->second].first = nullptr;
    P->KeptIndex.erase(It);
  }
}

void ShapeInference::setTypeChangeLog(TypeChangeLog *Log) {
  P->ChangeLog = Log;
}

void ShapeInference::setKeepResultsAside(bool Aside) { P->Aside = Aside; }

const Type &ShapeInference::getType(const Value &V) const {
  if (!P->KeptIndex.empty()) {
    auto It = P->KeptIndex.find(&V);
    if (It != P->KeptIndex.end())
      return P->Kept[It->second].second;
  }
  return V.getType();
}

void ShapeInference::commitTypes() {
  for (auto &[V, T] : P->Kept)
    if (V)
      V->setType(std::move(T));
  P->Kept = {};
  P->KeptIndex = decltype(P->KeptIndex)();
  P->Aside = false;
}

llvm::ArrayRef<DimFact> ShapeInference::getDimFacts() const { return P->Facts; }

const ShapeInferenceStats &ShapeInference::getStats() const { return P->Stats; }

void TypeChangeLog::save(Value &V) {
  if (Index.count(&V) || !isTracked(&V))
    return;
  Index[&V] = Saved.size();
  Saved.emplace_back(&V, V.getType());
}

void TypeChangeLog::transfer(Value *New, const Value *Old) {
  if (!isTracked(Old))
    return;
  auto It = Index.find(Old);
  Type T = It != Index.end() ? Saved[It->second].second : Old->getType();
  auto NewIt = Index.find(New);
  if (NewIt != Index.end()) {
    Saved[NewIt->second] = {New, std::move(T)};
    return;
  }
  Index[New] = Saved.size();
  Saved.emplace_back(New, std::move(T));
}

void TypeChangeLog::forget(const Value *V) {
  auto It = Index.find(V);
  if (It == Index.end())
    return;
  Saved[It->second].first = nullptr;
  Index.erase(It);
}

void TypeChangeLog::restore() {
  for (auto &[V, T] : Saved)
    if (V)
      V->setType(std::move(T));
  Saved.clear();
  Index.clear();
}

void TypeChangeLog::notifyNodeInserted(Node *N) { Created.insert(N); }

bool TypeChangeLog::isTracked(const Value *V) const {
  if (const Node *Def = V->getDefiningNode())
    return !Created.count(Def);
  return V->isGraphInput();
}

LogicalResult onnxopt::inferShapes(Model &M, DiagnosticEngine &Diags,
                                   ShapeInferenceOptions Opts) {
  ShapeInference SI(M, Diags, Opts);
  return SI.inferModel();
}

ShapeInfo::ShapeInfo(Model &M, DiagnosticEngine &Diags)
    : Engine(std::make_unique<ShapeInference>(M, Diags)) {
  Engine->setKeepResultsAside(true);
  Result = Engine->inferModel();
}

ShapeInfo::ShapeInfo(Model &M, DiagnosticEngine &Diags, RecordTag)
    : Engine(std::make_unique<ShapeInference>(M, Diags)), Committed(true) {
  Result = Engine->inferModel();
}

void ShapeInfo::commit() {
  if (Committed)
    return;
  Engine->commitTypes();
  Committed = true;
}
