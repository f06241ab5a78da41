//===- IR.h - The in-memory model ------------------------------*- C++ -*-===//
#ifndef ONNXOPT_IR_IR_H
#define ONNXOPT_IR_IR_H

#include "onnxopt/IR/Attribute.h"
#include "onnxopt/IR/Diagnostics.h"
#include "onnxopt/IR/ElementType.h"
#include "onnxopt/IR/Graph.h"
#include "onnxopt/IR/Model.h"
#include "onnxopt/IR/Node.h"
#include "onnxopt/IR/Tensor.h"
#include "onnxopt/IR/Type.h"
#include "onnxopt/IR/Value.h"

#endif // ONNXOPT_IR_IR_H
