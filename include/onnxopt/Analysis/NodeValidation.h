//===- NodeValidation.h - Checking nodes before ONNX sees them -*- C++ -*-===//
//
// ONNX 1.12's inference functions and checker assume a node that matches its
// schema: on one that does not they index past the end of shapes, divide by a
// zero stride or dereference a missing input type, and the process dies by a
// signal. Every call into ONNX (ShapeInference, the save-time verification)
// is preceded by this check, which turns such nodes into diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_ANALYSIS_NODEVALIDATION_H
#define ONNXOPT_ANALYSIS_NODEVALIDATION_H

#include "onnxopt/IR/Node.h"
#include "onnxopt/Support/Diagnostics.h"
#include "onnxopt/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"

namespace onnx {
class OpSchema;
} // namespace onnx

namespace onnxopt {

class Graph;
class Model;

/// Checks \p N against \p Schema (null: no schema, only the checks that need
/// none): input and output counts, attribute names
/// and types, required attributes, element types of typed inputs (each
/// allowed by its type constraint, one type per constraint), the ranks and
/// signs of strides, dilations, kernel_shape, pads and output_padding of
/// convolutions and pools (against each other and the input's rank), and
/// the input ranks that fixed-rank ops need. Emits one error on the first
/// problem. Without \p CheckElementTypes the element types are not checked:
/// for an op version newer than ONNX 1.12 whose schema stands in for it, the
/// newer version allows more types (the op table's business).
LogicalResult validateNode(const Node &N, const onnx::OpSchema *Schema,
                           DiagnosticEngine &Diags,
                           bool CheckElementTypes = true);

/// The input of \p N that holds the shape of its result (Reshape, Expand,
/// ConstantOfShape, Resize's sizes), or -1.
int shapeInputOf(const Node &N);

/// Why \p T, the type of \p N's shape input \p S, must not reach ONNX's
/// inference ("" when it may): without the input's data, ONNX adds one dim
/// per entry of its length, so a 1-D length above MaxTensorRank (inference
/// can compute 10^18 from a crafted file) allocates until the process is
/// killed.
std::string oversizedShapeInput(const Node &N, const Value &S, const Type &T);

/// The schema ONNX 1.12 uses for \p N in \p M (its domain's opset version),
/// or null (unknown domain, no such op, or an opset above 1.12's schemas).
const onnx::OpSchema *findNodeSchema(const Model &M, const Node &N);

/// validateNode with each schema looked up once per model: exported graphs
/// use a few dozen ops thousands of times, and the registry's lookup builds
/// and hashes strings.
class NodeValidator {
public:
  explicit NodeValidator(const Model &M) : M(M) {}
  /// Validates \p N and the nodes of its subgraphs (iteratively: the
  /// nesting depth comes from the input). Emits every problem found.
  LogicalResult validateTree(const Node &N, DiagnosticEngine &Diags);

private:
  const onnx::OpSchema *schemaOf(const Node &N);

  const Model &M;
  llvm::DenseMap<Node::OpKey, const onnx::OpSchema *> Schemas;
};

/// NodeValidator::validateTree over every node of \p M's main graph.
LogicalResult validateModelNodes(const Model &M, DiagnosticEngine &Diags);

} // namespace onnxopt

#endif // ONNXOPT_ANALYSIS_NODEVALIDATION_H
