//===- main.cpp - A downstream tool with its own pass ---------------------===//
#include "onnxopt/IR/IR.h"
#include "onnxopt/Pass/PassRegistry.h"
#include "onnxopt/Tool/OnnxOptMain.h"

namespace {
/// Sets the main graph's name: the smallest pass that shows registration,
/// typed options and pipeline syntax work from outside the project.
class SetGraphNamePass : public onnxopt::Pass {
public:
  llvm::StringRef getArgument() const override { return "set-graph-name"; }
  llvm::StringRef getDescription() const override {
    return "rename the main graph";
  }
  onnxopt::LogicalResult run(onnxopt::Model &M,
                             onnxopt::PassContext &Ctx) override {
    M.getGraph().setName(Name.getValue());
    return onnxopt::success();
  }

private:
  onnxopt::Option<std::string> Name{*this, "name", "the new name", "g"};
};
} // namespace

int main(int Argc, char **Argv) {
  onnxopt::registerPass([] { return std::make_unique<SetGraphNamePass>(); });
  return onnxopt::onnxOptMain(Argc, Argv);
}
