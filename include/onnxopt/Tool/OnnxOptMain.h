//===- OnnxOptMain.h - The onnx-opt driver as a library --------*- C++ -*-===//
//
// Tools that embed onnx-opt register their own passes (registerPass) and
// call onnxOptMain from their main(); they get the same command line,
// pipeline syntax, verification and output handling.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_TOOL_ONNXOPTMAIN_H
#define ONNXOPT_TOOL_ONNXOPTMAIN_H

namespace onnxopt {

/// Runs the onnx-opt command line. Registers the built-in passes first.
/// Returns the process exit code (0 success, 1 error).
int onnxOptMain(int Argc, char **Argv);

} // namespace onnxopt

#endif // ONNXOPT_TOOL_ONNXOPTMAIN_H
