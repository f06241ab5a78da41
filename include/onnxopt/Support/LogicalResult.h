//===- LogicalResult.h - Success/failure result type -----------*- C++ -*-===//
//
// LLVM 14 has no LogicalResult in Support; this is the small subset we use.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXOPT_SUPPORT_LOGICALRESULT_H
#define ONNXOPT_SUPPORT_LOGICALRESULT_H

namespace onnxopt {

/// The result of an operation that either succeeded or failed. Failures are
/// always accompanied by a diagnostic emitted at the point of failure.
class [[nodiscard]] LogicalResult {
public:
  static LogicalResult success(bool IsSuccess = true) {
    return LogicalResult(IsSuccess);
  }
  static LogicalResult failure(bool IsFailure = true) {
    return LogicalResult(!IsFailure);
  }
  bool succeeded() const { return Ok; }
  bool failed() const { return !Ok; }

private:
  explicit LogicalResult(bool Ok) : Ok(Ok) {}
  bool Ok;
};

inline LogicalResult success(bool IsSuccess = true) {
  return LogicalResult::success(IsSuccess);
}
inline LogicalResult failure(bool IsFailure = true) {
  return LogicalResult::failure(IsFailure);
}
inline bool succeeded(LogicalResult R) { return R.succeeded(); }
inline bool failed(LogicalResult R) { return R.failed(); }

} // namespace onnxopt

#endif // ONNXOPT_SUPPORT_LOGICALRESULT_H
