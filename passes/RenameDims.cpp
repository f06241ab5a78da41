//===- RenameDims.cpp - Rename symbolic dims everywhere
//--------------------===//
//
// Before:  (float[batch_size,3,H,W] X) => (float[batch_size,1000] Y)
//          rename-dims{map=batch_size:N}
// After:   (float[N,3,H,W] X) => (float[N,1000] Y)
//
// A symbol is renamed wherever a type mentions it: graph inputs and outputs,
// the recorded type of every value (value_info), the bodies of If/Loop/Scan
// and value-infos that name no value. All renames apply at once, so
// `map=A:B,B:A` swaps two symbols.
//
// Renaming a symbol to a name that another symbol of the model already uses
// would assert that the two dims are equal; that is refused (until
// unify-dims can prove such equalities), as is renaming two symbols to one
// name. Renaming to a number is freeze-dims' job.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/Pass.h"
#include "onnxopt/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <onnx/onnx_pb.h>
#include <set>

using namespace onnxopt;

namespace {

/// Calls \p F on every type recorded in \p G and its subgraphs.
void forEachType(Graph &G, const std::function<void(Type &)> &F) {
  for (const std::unique_ptr<Value> &V : G.getInputs())
    F(V->getMutableType());
  for (const std::unique_ptr<Value> &V : G.getConstants())
    F(V->getMutableType());
  for (Node &N : G.getNodes()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I))
        F(V->getMutableType());
    for (Graph *Sub : N.getSubgraphs())
      forEachType(*Sub, F);
  }
}

/// Calls \p F on every dim of \p T, including element types of sequences,
/// optionals and maps.
void forEachDim(Type &T, const std::function<void(Dim &)> &F) {
  if (T.hasShape())
    for (Dim &D : T.getMutableDims())
      F(D);
  switch (T.getKind()) {
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
  case Type::Kind::Map:
    forEachDim(T.getMutableElementType(), F);
    return;
  default:
    return;
  }
}

void forEachDim(
    onnx::TypeProto &T,
    const std::function<void(onnx::TensorShapeProto_Dimension &)> &F) {
  onnx::TensorShapeProto *Shape = nullptr;
  if (T.has_tensor_type() && T.tensor_type().has_shape())
    Shape = T.mutable_tensor_type()->mutable_shape();
  else if (T.has_sparse_tensor_type() && T.sparse_tensor_type().has_shape())
    Shape = T.mutable_sparse_tensor_type()->mutable_shape();
  if (Shape)
    for (onnx::TensorShapeProto_Dimension &D : *Shape->mutable_dim())
      F(D);
  if (T.has_sequence_type())
    forEachDim(*T.mutable_sequence_type()->mutable_elem_type(), F);
  if (T.has_optional_type())
    forEachDim(*T.mutable_optional_type()->mutable_elem_type(), F);
  if (T.has_map_type())
    forEachDim(*T.mutable_map_type()->mutable_value_type(), F);
}

/// Value-infos that name no value are kept serialized; visits their dims
/// and writes them back when \p F changed something.
void forEachOrphanDim(
    Graph &G,
    const std::function<bool(onnx::TensorShapeProto_Dimension &)> &F) {
  for (std::string &Bytes : G.OrphanValueInfos) {
    onnx::ValueInfoProto VI;
    if (!VI.ParseFromString(Bytes))
      continue;
    bool Changed = false;
    forEachDim(*VI.mutable_type(),
               [&](onnx::TensorShapeProto_Dimension &D) { Changed |= F(D); });
    if (Changed)
      VI.SerializeToString(&Bytes);
  }
  for (Node &N : G.getNodes())
    for (Graph *Sub : N.getSubgraphs())
      forEachOrphanDim(*Sub, F);
}

/// A name that the text format and most runtimes take as a dim symbol.
bool isValidSymbol(llvm::StringRef S) {
  if (S.empty() || llvm::isDigit(S.front()) || S.front() == '-')
    return false;
  for (char C : S)
    if (llvm::isSpace(C) || llvm::StringRef(",:[]{}()<>=\"'?").contains(C))
      return false;
  return true;
}

class RenameDimsPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "rename-dims"; }
  llvm::StringRef getDescription() const override {
    return "rename symbolic dims everywhere (inputs, outputs, value_info, "
           "subgraphs); refuses renames that would merge two symbols";
  }

  LogicalResult run(Model &M, PassContext &Ctx) override {
    DiagnosticEngine &Diags = Ctx.getDiags();
    std::map<std::string, std::string> Renames;
    if (failed(parseMap(Diags, Renames)))
      return failure();
    std::set<std::string> Symbols = collectSymbols(M);
    if (failed(checkRenames(Diags, Renames, Symbols)))
      return failure();

    size_t Count = 0;
    forEachType(M.getGraph(), [&](Type &T) {
      forEachDim(T, [&](Dim &D) {
        if (!D.isSymbol())
          return;
        auto It = Renames.find(D.getSymbol().str());
        if (It == Renames.end())
          return;
        Dim Renamed = Dim::symbol(It->second);
        Renamed.setDenotation(D.getDenotation());
        D = std::move(Renamed);
        ++Count;
      });
    });
    forEachOrphanDim(M.getGraph(), [&](onnx::TensorShapeProto_Dimension &D) {
      if (!D.has_dim_param())
        return false;
      auto It = Renames.find(D.dim_param());
      if (It == Renames.end())
        return false;
      D.set_dim_param(It->second);
      ++Count;
      return true;
    });
    if (Count)
      Ctx.Changed = true;
    return success();
  }

private:
  ListOption<std::string> Map{*this, "map",
                              "renames, each old:new (applied at once)"};

  LogicalResult parseMap(DiagnosticEngine &Diags,
                         std::map<std::string, std::string> &Renames) const {
    if (Map.empty())
      return emitError(Diags) << "rename-dims: no renames given (use "
                                 "map=old:new,...)";
    for (const std::string &Entry : Map) {
      auto [Old, New] = llvm::StringRef(Entry).split(':');
      if (Old.empty() || New.empty() || !llvm::StringRef(Entry).contains(':'))
        return emitError(Diags)
               << "rename-dims: expected old:new, got '" << Entry << "'";
      if (llvm::all_of(New, llvm::isDigit))
        return emitError(Diags)
               << "rename-dims: '" << Old << "' renamed to the number " << New
               << "; use freeze-dims to set a dim's value";
      if (!isValidSymbol(New))
        return emitError(Diags)
               << "rename-dims: '" << New << "' is not a valid symbol name";
      if (!Renames.emplace(Old.str(), New.str()).second)
        return emitError(Diags)
               << "rename-dims: '" << Old << "' is renamed more than once";
    }
    return success();
  }

  static std::set<std::string> collectSymbols(Model &M) {
    std::set<std::string> Symbols;
    forEachType(M.getGraph(), [&](Type &T) {
      forEachDim(T, [&](Dim &D) {
        if (D.isSymbol())
          Symbols.insert(D.getSymbol().str());
      });
    });
    forEachOrphanDim(M.getGraph(), [&](onnx::TensorShapeProto_Dimension &D) {
      if (D.has_dim_param())
        Symbols.insert(D.dim_param());
      return false;
    });
    return Symbols;
  }

  /// Refuses unknown symbols and renames that would make two different
  /// symbols one.
  static LogicalResult
  checkRenames(DiagnosticEngine &Diags,
               const std::map<std::string, std::string> &Renames,
               const std::set<std::string> &Symbols) {
    for (const auto &[Old, New] : Renames) {
      if (Symbols.count(Old))
        continue;
      if (Symbols.empty())
        return emitError(Diags) << "rename-dims: unknown symbol '" << Old
                                << "'; the model has no symbolic dims";
      return emitError(Diags)
             << "rename-dims: unknown symbol '" << Old
             << "'; the model's symbols are: " << llvm::join(Symbols, ", ");
    }
    // The name each symbol has after the renames, to find merges.
    std::map<std::string, std::string> Owner;
    for (const std::string &S : Symbols) {
      auto It = Renames.find(S);
      const std::string &Final = It == Renames.end() ? S : It->second;
      auto [Prev, Inserted] = Owner.emplace(Final, S);
      if (Inserted)
        continue;
      // Name the symbol that is renamed first, then the other one.
      std::string A = Prev->second, B = S;
      if (!Renames.count(A))
        std::swap(A, B);
      return emitError(Diags)
             << "rename-dims: renaming '" << A << "' to '" << Final
             << "' would merge it with '" << B
             << "', a different symbol (unify-dims merges symbols it proves "
                "equal)";
    }
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> onnxopt::createRenameDimsPass() {
  return std::make_unique<RenameDimsPass>();
}
