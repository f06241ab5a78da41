//===- NodeValidation.cpp - Checking nodes before ONNX sees them ----------===//
//
// The checks are the schema's own facts (counts, attribute types, type
// constraints) plus the op's run-time preconditions from the op registry
// (Preconditions.h): the attribute and rank rules whose violation ONNX
// 1.12's inference functions do not survive (zero strides divide by zero,
// kernel_shape/pads of the wrong length index past their ends, old Gemm
// inference reads dims of inputs that are not matrices).
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/NodeValidation.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/IR/ProtoTypes.h"
#include "onnxopt/Ops/Preconditions.h"
#include "llvm/ADT/StringMap.h"
#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>

#include <atomic>
#include <map>

using namespace onnxopt;

const onnx::OpSchema *onnxopt::findNodeSchema(const Model &M, const Node &N) {
  std::string Domain = N.isOnnxDomain() ? "" : N.getDomain().str();
  int64_t Version = M.getOpsetVersion(N.getDomain());
  if (Version <= 0 || Version > INT32_MAX)
    return nullptr;
  const auto &Ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  auto It = Ranges.Map().find(Domain);
  if (It == Ranges.Map().end() || Version > It->second.second)
    return nullptr;
  return onnx::OpSchemaRegistry::Schema(N.getOpType().str(), int(Version),
                                        Domain);
}

static const char *attrKindName(AttrKind K) {
  switch (K) {
  case AttrKind::Float:
    return "float";
  case AttrKind::Int:
    return "int";
  case AttrKind::String:
    return "string";
  case AttrKind::Tensor:
    return "tensor";
  case AttrKind::Graph:
    return "graph";
  case AttrKind::SparseTensor:
    return "sparse tensor";
  case AttrKind::TypeProto:
    return "type";
  case AttrKind::Floats:
    return "floats";
  case AttrKind::Ints:
    return "ints";
  case AttrKind::Strings:
    return "strings";
  case AttrKind::Tensors:
    return "tensors";
  case AttrKind::Graphs:
    return "graphs";
  case AttrKind::SparseTensors:
    return "sparse tensors";
  case AttrKind::TypeProtos:
    return "types";
  case AttrKind::Undefined:
    break;
  }
  return "undefined";
}

/// The precondition rule of \p N's definition, or null.
static const PreconditionRule *preconditionsOf(const Node &N) {
  const OpDef *D = lookupOp(N);
  return D ? D->Preconditions : nullptr;
}

int onnxopt::shapeInputOf(const Node &N) {
  const PreconditionRule *P = preconditionsOf(N);
  return P ? P->ShapeInput : -1;
}

/// The op's run-time preconditions (its registry rule), and shape inputs
/// whose length would be the result's rank: without their data, ONNX adds
/// one dim per entry of their length, so a length of 10^18 (which
/// inference can compute from a crafted file) allocates until the process
/// is killed.
static LogicalResult checkPreconditions(const Node &N,
                                        const PreconditionRule *P,
                                        DiagnosticEngine &Diags) {
  if (!P)
    return success();
  if (P->Check && failed(P->Check(N, Diags)))
    return failure();
  int ShapeIn = P->ShapeInput;
  if (ShapeIn >= 0 && unsigned(ShapeIn) < N.getNumOperands())
    if (const Value *S = N.getOperand(unsigned(ShapeIn))) {
      std::string Why = oversizedShapeInput(N, *S, S->getType());
      if (!Why.empty())
        return emitError(Diags, N) << Why;
    }
  return success();
}

std::string onnxopt::oversizedShapeInput(const Node &N, const Value &S,
                                         const Type &T) {
  if (!T.isTensor() || !T.hasShape() || T.getRank() != 1)
    return "";
  const Dim &Length = T.getDims()[0];
  if (!Length.isKnown() || uint64_t(Length.getValue()) <= MaxTensorRank)
    return "";
  return "input " + std::to_string(shapeInputOf(N)) + " ('" +
         S.getName().str() + "') of " + N.getOpType().str() +
         " is a shape of " + std::to_string(Length.getValue()) +
         " entries: its result's rank would be above " +
         std::to_string(MaxTensorRank) + ", the largest onnx-opt takes";
}

/// The ONNX type string ("tensor(float)") of \p T, or null when it is not
/// fully known.
static const std::string *typeString(const Type &T) {
  if (T.isNone() || (T.isTensor() && T.getElemType() == 0))
    return nullptr;
  // A tensor's string depends on its element type only, and ONNX interns
  // the strings: one conversion per element type, not one per operand (the
  // conversion formats a string and looks it up, ~2.5k instructions).
  // Atomic because the save-time checks validate on a second thread.
  static std::atomic<const std::string *> TensorStrings[64];
  int32_t Elem = T.getElemType();
  bool Cacheable = T.isTensor() && Elem > 0 && Elem < 64;
  if (Cacheable)
    if (const std::string *S =
            TensorStrings[Elem].load(std::memory_order_relaxed))
      return S;
  // Only the element type matters for a tensor: its shape is not exported.
  onnx::TypeProto P;
  if (Cacheable)
    P.mutable_tensor_type()->set_elem_type(Elem);
  else
    detail::exportType(T, P);
  try {
    const std::string *S = onnx::Utils::DataTypeUtils::ToType(P);
    if (Cacheable)
      TensorStrings[Elem].store(S, std::memory_order_relaxed);
    return S;
  } catch (const std::exception &) {
    return nullptr;
  }
}

LogicalResult onnxopt::validateNode(const Node &N, const onnx::OpSchema *Schema,
                                    DiagnosticEngine &Diags,
                                    bool CheckElementTypes) {
  const PreconditionRule *Preconditions = preconditionsOf(N);
  if (failed(checkPreconditions(N, Preconditions, Diags)))
    return failure();
  // A graph node's attribute needs a type: only function bodies may refer
  // to the caller's attributes (ref_attr_name), and ONNX's inference reads
  // the values of an untyped attribute as if it had its schema's type
  // (`strides` of 0 then divides by zero).
  for (const Attribute &A : N.getAttrs())
    if (A.Kind == AttrKind::Undefined)
      return emitError(Diags, N)
             << "attribute '" << A.Name << "' has no type"
             << (A.Residual.empty() ? ""
                                    : " (a ref_attr_name reference is only "
                                      "valid inside a function)");
  if (!Schema)
    return success();

  // Counts. Trailing omitted inputs count, as in ONNX's checker.
  unsigned NumIn = N.getNumOperands(), NumOut = N.getNumResults();
  if (NumIn < unsigned(Schema->min_input()) ||
      NumIn > unsigned(Schema->max_input()))
    return emitError(Diags, N)
           << N.getOpType() << " has " << NumIn << " inputs, but opset "
           << Schema->since_version() << " allows " << Schema->min_input()
           << (Schema->max_input() == Schema->min_input()
                   ? std::string()
                   : " to " + (Schema->max_input() == INT32_MAX
                                   ? std::string("any")
                                   : std::to_string(Schema->max_input())));
  if (NumOut < unsigned(Schema->min_output()) ||
      NumOut > unsigned(Schema->max_output()))
    return emitError(Diags, N)
           << N.getOpType() << " has " << NumOut << " outputs, but opset "
           << Schema->since_version() << " allows " << Schema->min_output()
           << (Schema->max_output() == Schema->min_output()
                   ? std::string()
                   : " to " + (Schema->max_output() == INT32_MAX
                                   ? std::string("any")
                                   : std::to_string(Schema->max_output())));

  // Attributes: known names (unless the schema takes any), their types,
  // required ones present.
  const auto &Known = Schema->attributes();
  for (const Attribute &A : N.getAttrs()) {
    auto It = Known.find(A.Name);
    if (It == Known.end()) {
      // ONNX 1.12 does not expose AllowUncheckedAttributes(): the op's
      // preconditions say whether it takes any attributes.
      if (!N.isOnnxDomain() || (Preconditions && Preconditions->AnyAttributes))
        continue;
      return emitError(Diags, N)
             << "unknown attribute '" << A.Name << "' for " << N.getOpType()
             << " (opset " << Schema->since_version() << ")";
    }
    if (int(A.Kind) != int(It->second.type))
      return emitError(Diags, N)
             << "attribute '" << A.Name << "' is of type "
             << attrKindName(A.Kind) << ", but " << N.getOpType() << " expects "
             << attrKindName(AttrKind(It->second.type));
  }
  for (const auto &[Name, Attr] : Known)
    if (Attr.required && !N.hasAttr(Name))
      return emitError(Diags, N)
             << N.getOpType() << " needs attribute '" << Name << "'";

  // Inputs against the formal parameters: element types allowed by their
  // constraint, one type per constraint.
  std::map<std::string, const std::string *> Bound;
  auto CheckParam = [&](const onnx::OpSchema::FormalParameter &P,
                        const Value *V, unsigned Index,
                        const char *Kind) -> LogicalResult {
    if (!V)
      return success();
    const std::string *TS = typeString(V->getType());
    if (!TS)
      return success();
    const onnx::DataTypeSet &Allowed = P.GetTypes();
    if (!Allowed.empty() && !Allowed.count(TS))
      return emitError(Diags, N)
             << Kind << " " << Index << " ('" << V->getName() << "') of "
             << N.getOpType() << " has type " << *TS << ", which constraint "
             << P.GetTypeStr() << " does not allow";
    if (!P.GetIsHomogeneous())
      return success();
    auto [It, New] = Bound.try_emplace(P.GetTypeStr(), TS);
    if (!New && It->second != TS)
      return emitError(Diags, N)
             << Kind << " " << Index << " ('" << V->getName() << "') of "
             << N.getOpType() << " has type " << *TS << ", but another use "
             << "of constraint " << P.GetTypeStr() << " has type "
             << *It->second;
    return success();
  };
  const auto &Inputs = Schema->inputs();
  for (unsigned I = 0; CheckElementTypes && I < NumIn && !Inputs.empty(); ++I) {
    const auto &P = Inputs[std::min<size_t>(I, Inputs.size() - 1)];
    bool Variadic = P.GetOption() == onnx::OpSchema::Variadic;
    if (!Variadic && I >= Inputs.size())
      break;
    // An omitted single input is the checker's to report: exporters write
    // some (Resize-11's roi) and ONNX Runtime accepts them.
    if (failed(CheckParam(P, N.getOperand(I), I, "input")))
      return failure();
  }
  // Outputs are checked for their count only: their types are what
  // inference is about to compute.
  return success();
}

const onnx::OpSchema *NodeValidator::schemaOf(const Node &N) {
  auto [It, New] = Schemas.try_emplace(N.getOpKey(), nullptr);
  if (New)
    It->second = findNodeSchema(M, N);
  return It->second;
}

LogicalResult NodeValidator::validateTree(const Node &Root,
                                          DiagnosticEngine &Diags) {
  bool Ok = succeeded(validateNode(Root, schemaOf(Root), Diags));
  std::vector<const Graph *> Work;
  auto PushGraphs = [&Work](const Node &N) {
    for (const Attribute &A : N.getAttrs())
      for (const std::unique_ptr<Graph> &Sub : A.Graphs)
        Work.push_back(Sub.get());
  };
  PushGraphs(Root);
  while (!Work.empty()) {
    const Graph *G = Work.back();
    Work.pop_back();
    for (const Node &N : G->getNodes()) {
      Ok &= succeeded(validateNode(N, schemaOf(N), Diags));
      PushGraphs(N);
    }
  }
  return success(Ok);
}

LogicalResult onnxopt::validateModelNodes(const Model &M,
                                          DiagnosticEngine &Diags) {
  NodeValidator V(M);
  bool Ok = true;
  for (const Node &N : M.getGraph().getNodes())
    Ok &= succeeded(V.validateTree(N, Diags));
  return success(Ok);
}
