//===- ModernVerify.cpp - Verification above ONNX 1.12's opsets -----------===//
//
// The per-node check uses what is certain: for an op version that only
// widened types since ONNX 1.12, the 1.12 schema's inputs, outputs,
// attributes and type constraints, with the widened element types (from the
// op table) allowed too; for a version that changed semantics, the
// signature of its inference rule in the op registry (InferRules.h). Then
// ShapeInference in strict mode: an inference that fails or contradicts a
// declared type is an error.
//
//===----------------------------------------------------------------------===//
#include "ModernVerify.h"
#include "onnxopt/Analysis/OpTable.h"
#include "onnxopt/Analysis/ShapeInference.h"
#include "onnxopt/Export/Export.h"
#include "onnxopt/IR/ElementType.h"
#include "onnxopt/IR/IR.h"
#include "onnxopt/Ops/InferRules.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include <limits>
#include <onnx/defs/schema.h>

using namespace onnxopt;

namespace {

std::string describeOp(const Node &N) {
  return N.isOnnxDomain() ? N.getOpType().str()
                          : N.getDomain().str() + "." + N.getOpType().str();
}

const char *kindCode(onnx::AttributeProto_AttributeType T) {
  return attrKindCode(static_cast<AttrKind>(T));
}

/// The element type of a tensor value's type, or 0.
int32_t tensorElemType(const Value *V) {
  if (!V || !V->getType().isTensor())
    return 0;
  return V->getType().getElemType();
}

/// Checks \p N against ONNX 1.12's schema \p S, allowing the element types
/// in \p Added beyond S's type constraints.
bool checkOnnx112Schema(const Node &N, const onnx::OpSchema &S, uint32_t Added,
                        bool &TypeChecked, std::string &Why) {
  std::string Name =
      N.getOpType().str() + "-" + std::to_string(S.SinceVersion());
  int NumIn = static_cast<int>(N.getNumOperands());
  int NumOut = static_cast<int>(N.getNumResults());
  if (NumIn < S.min_input() || NumIn > S.max_input()) {
    Why = Name + " takes " + std::to_string(S.min_input()) + " to " +
          (S.max_input() == std::numeric_limits<int>::max()
               ? std::string("any number of")
               : std::to_string(S.max_input())) +
          " inputs, the node has " + std::to_string(NumIn);
    return false;
  }
  if (NumOut < S.min_output() || NumOut > S.max_output()) {
    Why = Name + " has " + std::to_string(S.min_output()) + " to " +
          (S.max_output() == std::numeric_limits<int>::max()
               ? std::string("any number of")
               : std::to_string(S.max_output())) +
          " outputs, the node has " + std::to_string(NumOut);
    return false;
  }
  const auto &Attrs = S.attributes();
  for (const Attribute &A : N.getAttrs()) {
    auto It = Attrs.find(A.Name);
    if (It == Attrs.end()) {
      Why = Name + " has no attribute '" + A.Name + "'";
      return false;
    }
    if (It->second.type !=
        static_cast<onnx::AttributeProto_AttributeType>(A.Kind)) {
      Why = "attribute '" + A.Name + "' of " + Name + " must be of kind " +
            kindCode(It->second.type) + ", is " + attrKindCode(A.Kind);
      return false;
    }
  }
  for (const auto &[AttrName, A] : Attrs)
    if (A.required && !N.getAttr(AttrName)) {
      Why = Name + " requires attribute '" + AttrName + "'";
      return false;
    }

  // Type constraints: each tensor operand or result with a known element
  // type must be allowed, and one constraint must bind one type.
  TypeChecked = true;
  llvm::StringMap<int32_t> Bound;
  auto Check = [&](const std::vector<onnx::OpSchema::FormalParameter> &Params,
                   unsigned I, const Value *V, const char *What) {
    if (Params.empty())
      return true;
    const onnx::OpSchema::FormalParameter *P = nullptr;
    if (I < Params.size())
      P = &Params[I];
    else if (Params.back().GetOption() == onnx::OpSchema::Variadic)
      P = &Params.back();
    int32_t ET = tensorElemType(V);
    if (!P || !ET)
      return true;
    llvm::StringRef ElemName = getElementTypeName(static_cast<ElementType>(ET));
    if (ElemName.empty())
      return true;
    std::string TypeStr = "tensor(" + ElemName.str() + ")";
    bool Allowed = (ET < 32 && (Added & (uint32_t(1) << ET))) ||
                   llvm::any_of(P->GetTypes(), [&](const std::string *T) {
                     return T && *T == TypeStr;
                   });
    // Sequence/optional/map constraints take no plain tensors; only check
    // constraints that list tensor types.
    bool ListsTensors = llvm::any_of(P->GetTypes(), [](const std::string *T) {
      return T && llvm::StringRef(*T).startswith("tensor(");
    });
    if (ListsTensors && !Allowed) {
      Why = std::string(What) + " " + std::to_string(I) + " ('" +
            V->getName().str() + "') of " + Name + " has element type " +
            ElemName.str() + ", which " + P->GetTypeStr() + " does not allow";
      return false;
    }
    bool Homogeneous = P->GetIsHomogeneous();
    if (!Homogeneous || P->GetTypeStr().rfind("tensor(", 0) == 0)
      return true;
    auto [It, New] = Bound.try_emplace(P->GetTypeStr(), ET);
    if (!New && It->second != ET) {
      Why = "type constraint " + P->GetTypeStr() + " of " + Name +
            " binds both " +
            getElementTypeName(static_cast<ElementType>(It->second)).str() +
            " and " + ElemName.str();
      return false;
    }
    return true;
  };
  for (unsigned I = 0; I < N.getNumOperands(); ++I)
    if (!Check(S.inputs(), I, N.getOperand(I), "input"))
      return false;
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (!Check(S.outputs(), I, N.getResult(I), "output"))
      return false;
  return true;
}

} // namespace

std::string ModernVerifyReport::describe() const {
  std::string S = "checked instead: " + std::to_string(NodesChecked) +
                  " node(s) against the op table (input and output counts, "
                  "attributes; element types for the " +
                  std::to_string(NodesTypeChecked) +
                  " whose op version has an ONNX 1.12 schema), and " +
                  std::to_string(NodesInferred) +
                  " node(s) inferred in strict mode agree with the declared "
                  "types; not checked: the checker's model-level rules for "
                  "the newer versions";
  size_t Unknown = 0;
  for (const auto &E : Unchecked)
    Unknown += E.second;
  if (NodesChecked > NodesTypeChecked)
    S += ", element types of " +
         std::to_string(NodesChecked - NodesTypeChecked) +
         " node(s) of op versions newer than ONNX 1.12";
  if (Unknown) {
    S += ", " + std::to_string(Unknown) + " node(s) without a signature here (";
    bool First = true;
    for (const auto &E : Unchecked) {
      S += (First ? "" : ", ") + E.first;
      First = false;
    }
    S += ")";
  }
  if (NodesNotInferred)
    S += ", shapes of " + std::to_string(NodesNotInferred) +
         " node(s) without inference";
  return S;
}

LogicalResult onnxopt::verifyModernModel(Model &M, DiagnosticEngine &Diags,
                                         ModernVerifyReport &Report) {
  bool Ok = true;
  M.getGraph().walk([&](Node &N) {
    llvm::StringRef Domain = N.isOnnxDomain() ? "" : N.getDomain();
    if (!N.isOnnxDomain() && Domain != "ai.onnx.ml") {
      ++Report.Unchecked["'" + describeOp(N) + "' (domain '" + Domain.str() +
                         "')"];
      return;
    }
    int64_t Opset = M.getOpsetVersion(N.getDomain());
    OpResolution R = resolveOpVersion(Domain, N.getOpType(), Opset);
    std::string Why;
    switch (R.K) {
    case OpResolution::Kind::TooNew:
      ++Report.Unchecked["'" + describeOp(N) + "' (opset " +
                         std::to_string(Opset) + ")"];
      return;
    case OpResolution::Kind::Removed:
      Ok = false;
      emitError(Diags, N) << describeOp(N) << " is deprecated in opset "
                          << R.Since;
      return;
    case OpResolution::Kind::Modern: {
      const InferRule *Op =
          findNewVersionRule(Domain, N.getOpType(), R.SemanticSince);
      if (!Op) {
        ++Report.Unchecked["'" + describeOp(N) + "'"];
        return;
      }
      ++Report.NodesChecked;
      if (!checkSignature(N, *Op, Why)) {
        Ok = false;
        emitError(Diags, N) << "schema check: " << Why;
      }
      return;
    }
    case OpResolution::Kind::Onnx112Schema:
      break;
    }
    const onnx::OpSchema *S = onnx::OpSchemaRegistry::Schema(
        N.getOpType().str(), R.SchemaOpset, Domain.str());
    if (!S) {
      Ok = false;
      emitError(Diags, N) << "schema check: no op " << describeOp(N)
                          << " in opset " << Opset;
      return;
    }
    ++Report.NodesChecked;
    bool TypeChecked = false;
    if (!checkOnnx112Schema(N, *S, R.AddedTypes, TypeChecked, Why)) {
      Ok = false;
      emitError(Diags, N) << "schema check: " << Why;
    }
    Report.NodesTypeChecked += TypeChecked;
  });
  if (!Ok)
    return failure();

  // Our inference must agree with what the model declares.
  // Remarks about ops kept as declared are summarised in the report; errors
  // and warnings are passed on.
  DiagnosticEngine Forward;
  Forward.setHandler([&](const Diagnostic &D) {
    if (D.Sev != Severity::Remark && D.Sev != Severity::Note)
      Diags.emit(D);
  });
  ShapeInferenceOptions Opts;
  Opts.Strict = true;
  ShapeInference SI(M, Forward, Opts);
  LogicalResult Inferred = SI.inferModel();
  Report.NodesInferred = SI.getStats().NodesInferred;
  Report.NodesNotInferred = SI.getStats().NodesWithoutSchema;
  return Inferred;
}
