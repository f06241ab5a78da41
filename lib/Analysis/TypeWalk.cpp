//===- TypeWalk.cpp - Visit every recorded dim of a model -----------------===//
#include "onnxopt/Analysis/TypeWalk.h"
#include "onnxopt/IR/IR.h"
#include <onnx/onnx_pb.h>

using namespace onnxopt;

void onnxopt::forEachDimOf(Type &T,
                           llvm::function_ref<void(Dim &, unsigned)> F) {
  if (T.hasShape()) {
    std::vector<Dim> &Dims = T.getMutableDims();
    for (unsigned I = 0; I < Dims.size(); ++I)
      F(Dims[I], I);
  }
  switch (T.getKind()) {
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
  case Type::Kind::Map:
    forEachDimOf(T.getMutableElementType(), F);
    return;
  default:
    return;
  }
}

namespace {

using DimVisitor = std::function<bool(Dim &, const Value *, unsigned)>;

void visitType(Type &T, const Value *V, const DimVisitor &F) {
  forEachDimOf(T, [&](Dim &D, unsigned I) { F(D, V, I); });
}

/// Visits the dims of a serialized type; returns true if one changed.
bool visitProto(onnx::TypeProto &T, const DimVisitor &F) {
  bool Changed = false;
  onnx::TensorShapeProto *Shape = nullptr;
  if (T.has_tensor_type() && T.tensor_type().has_shape())
    Shape = T.mutable_tensor_type()->mutable_shape();
  else if (T.has_sparse_tensor_type() && T.sparse_tensor_type().has_shape())
    Shape = T.mutable_sparse_tensor_type()->mutable_shape();
  if (Shape)
    for (int I = 0; I < Shape->dim_size(); ++I) {
      onnx::TensorShapeProto_Dimension &P = *Shape->mutable_dim(I);
      Dim D = P.has_dim_value()   ? Dim::known(P.dim_value())
              : P.has_dim_param() ? Dim::symbol(P.dim_param())
                                  : Dim::unknown();
      if (!F(D, nullptr, I))
        continue;
      Changed = true;
      P.clear_dim_value();
      P.clear_dim_param();
      if (D.isKnown())
        P.set_dim_value(D.getValue());
      else if (D.isSymbol())
        P.set_dim_param(D.getSymbol().str());
    }
  if (T.has_sequence_type())
    Changed |= visitProto(*T.mutable_sequence_type()->mutable_elem_type(), F);
  if (T.has_optional_type())
    Changed |= visitProto(*T.mutable_optional_type()->mutable_elem_type(), F);
  if (T.has_map_type())
    Changed |= visitProto(*T.mutable_map_type()->mutable_value_type(), F);
  return Changed;
}

/// Visits the values of \p G and its subgraphs; collects, in the same order,
/// the graphs that hold orphan value-infos, which are visited after every
/// value (one walk over the nodes instead of two).
void visitGraph(Graph &G, const DimVisitor &F,
                std::vector<Graph *> &WithOrphans) {
  if (!G.OrphanValueInfos.empty())
    WithOrphans.push_back(&G);
  for (const std::unique_ptr<Value> &V : G.getInputs())
    visitType(V->getMutableType(), V.get(), F);
  for (const std::unique_ptr<Value> &V : G.getConstants())
    visitType(V->getMutableType(), V.get(), F);
  for (Node &N : G.getNodes()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (Value *V = N.getResult(I))
        visitType(V->getMutableType(), V, F);
    for (Graph *Sub : N.getSubgraphs())
      visitGraph(*Sub, F, WithOrphans);
  }
}

void visitOrphans(Graph &G, const DimVisitor &F) {
  for (std::string &Bytes : G.OrphanValueInfos) {
    onnx::ValueInfoProto VI;
    if (VI.ParseFromString(Bytes) && visitProto(*VI.mutable_type(), F))
      VI.SerializeToString(&Bytes);
  }
}

} // namespace

void onnxopt::forEachRecordedDim(Model &M, const DimVisitor &F) {
  std::vector<Graph *> WithOrphans;
  visitGraph(M.getGraph(), F, WithOrphans);
  for (Graph *G : WithOrphans)
    visitOrphans(*G, F);
}
