//===- ShapeVectorBuilder.h - Build int64 shape vectors -------*- C++ -*-===//
//
// Shape vectors (Reshape targets, Expand shapes, Resize sizes) that rewrites
// write before a node: runs of literals become constants, dims read at run
// time become `Gather(Shape(V), [d])` with one Shape per value, products
// become Mul, and the pieces are concatenated. make-dynamic and fold-shapes
// both build them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_IR_SHAPEVECTORBUILDER_H
#define ONNXOPT_IR_SHAPEVECTORBUILDER_H

#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/Rewriter.h"
#include "llvm/ADT/DenseMap.h"
#include <string>
#include <vector>

namespace onnxopt {

/// Builds a shape vector before a node: runs of literals become constants,
/// other entries are read at run time (`Gather(Shape(V), [d])`, one Shape
/// per value) or computed by the caller; the pieces are concatenated.
class ShapeVectorBuilder {
public:
  ShapeVectorBuilder(Rewriter &RW, Node &Before, std::string PartName,
                     llvm::StringRef Hint)
      : RW(RW), G(*Before.getParentGraph()), PartName(std::move(PartName)),
        Hint(Hint) {
    RW.setInsertionPointBefore(&Before);
  }
  void literal(int64_t V) { Run.push_back(V); }
  /// Dim \p D of \p V, as a one-element vector.
  Value *dimOf(Value *V, unsigned D) {
    Value *&S = Shapes[V];
    if (!S)
      S = make("Shape", {V}, 1, "", Hint)->getResult(0);
    return element(S, D);
  }
  /// Element \p D of the int64 vector \p V, as a one-element vector.
  Value *element(Value *V, unsigned D) {
    Node *Gather = make(
        "Gather",
        {V, RW.createConstant(
                G, Tensor::fromInt64s("dim_index", {1}, {int64_t(D)}))},
        1, "", Hint == "dims" ? "dim" : Hint);
    Gather->setAttr(Attribute::getInt("axis", 0));
    return Gather->getResult(0);
  }
  Value *mul(Value *A, Value *B) {
    return make("Mul", {A, B}, 1, "", Hint)->getResult(0);
  }
  /// \p A / \p B (both int64 vectors; exact where the caller uses it).
  Value *div(Value *A, Value *B) {
    return make("Div", {A, B}, 1, "", Hint)->getResult(0);
  }
  /// A one-element constant \p V, to compute with.
  Value *constant(int64_t V) {
    return RW.createConstant(G, Tensor::fromInt64s(PartName, {1}, {V}));
  }
  void piece(Value *V) {
    flush();
    Parts.push_back(V);
  }
  /// The vector: the constant itself when every entry is a literal.
  Value *finish(llvm::StringRef ConcatHint) {
    flush();
    if (Parts.size() == 1 && Shapes.empty() && !Computed)
      return Parts.front();
    Node *Concat = make("Concat", Parts, 1, "", ConcatHint);
    Concat->setAttr(Attribute::getInt("axis", 0));
    return Concat->getResult(0);
  }
  /// Marks that a piece was computed without dimOf (the result is then a
  /// Concat even with one part).
  void markComputed() { Computed = true; }
  /// The nodes made so far, in order (constants are initializers, not
  /// nodes): a caller that types values as it goes infers them.
  llvm::ArrayRef<Node *> getCreatedNodes() const { return Created; }

private:
  Node *make(llvm::StringRef Op, llvm::ArrayRef<Value *> Operands,
             unsigned NumResults, llvm::StringRef Domain,
             llvm::StringRef NameHint) {
    Created.push_back(
        RW.createNode(Op, Operands, NumResults, Domain, NameHint));
    return Created.back();
  }
  void flush() {
    if (Run.empty())
      return;
    Parts.push_back(RW.createConstant(
        G, Tensor::fromInt64s(PartName, {int64_t(Run.size())}, Run)));
    Run.clear();
  }
  Rewriter &RW;
  Graph &G;
  std::string PartName;
  llvm::StringRef Hint;
  llvm::DenseMap<Value *, Value *> Shapes;
  std::vector<Value *> Parts;
  std::vector<int64_t> Run;
  std::vector<Node *> Created;
  bool Computed = false;
};

} // namespace onnxopt

#endif // ONNXOPT_IR_SHAPEVECTORBUILDER_H
