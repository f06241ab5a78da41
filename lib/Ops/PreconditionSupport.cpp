//===- PreconditionSupport.cpp - Helpers of the run-time preconditions ----===//
#include "PreconditionSupport.h"
#include "onnxopt/IR/IR.h"
#include <algorithm>
#include <cmath>

using namespace onnxopt;

int64_t precondition::knownRank(const Value *V) {
  if (!V || !V->getType().isTensor() || !V->getType().hasShape())
    return -1;
  return int64_t(V->getType().getRank());
}

int64_t precondition::leastDimForScale(double Scale) {
  float S = static_cast<float>(Scale);
  if (!(S > 0))
    return 0;
  if (S >= 1)
    return 1;
  constexpr int64_t Cap = int64_t(1) << 31;
  double Guess = std::ceil(1.0 / double(S));
  int64_t N = Guess >= double(Cap) ? Cap : std::max<int64_t>(1, int64_t(Guess));
  // The float product can round either way of the exact one: step to the
  // least n where it reaches 1.
  auto Reaches = [S](int64_t K) { return S * static_cast<float>(K) >= 1.0f; };
  while (N > 1 && Reaches(N - 1))
    --N;
  while (N < Cap && !Reaches(N))
    ++N;
  return N;
}
