//===- onnx-opt.cpp - The onnx-opt command -------------------------------===//
#include "onnxopt/Tool/OnnxOptMain.h"

int main(int Argc, char **Argv) { return onnxopt::onnxOptMain(Argc, Argv); }
