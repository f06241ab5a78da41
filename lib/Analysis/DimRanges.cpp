//===- DimRanges.cpp - Value ranges of symbolic dims ----------------------===//
//
// Reads and writes the ranges kept in the model's metadata_props. The model
// residual is the only place the IR keeps metadata_props, so both directions
// parse it into a ModelProto, touch the one key and serialize it back.
//
//===----------------------------------------------------------------------===//
#include "onnxopt/Analysis/DimRanges.h"
#include "onnxopt/IR/Metadata.h"
#include "onnxopt/IR/Model.h"
#include "llvm/ADT/SmallVector.h"

using namespace onnxopt;

namespace {

bool parseInt(llvm::StringRef Text, int64_t &Out) {
  return !Text.trim().getAsInteger(10, Out);
}

} // namespace

bool onnxopt::parseDimRange(llvm::StringRef Text, DimRange &Out,
                            std::string &Error) {
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  Text.split(Parts, ':');
  if (Parts.size() != 2 && Parts.size() != 3) {
    Error = "expected min:max[:opt], got '" + Text.str() + "'";
    return false;
  }
  DimRange R;
  int64_t Opt = 0;
  if (!parseInt(Parts[0], R.Min) || !parseInt(Parts[1], R.Max) ||
      (Parts.size() == 3 && !parseInt(Parts[2], Opt))) {
    Error = "expected integers in min:max[:opt], got '" + Text.str() + "'";
    return false;
  }
  if (Parts.size() == 3)
    R.Opt = Opt;
  if (R.Min < 0) {
    Error = "the minimum must not be negative, got '" + Text.str() + "'";
    return false;
  }
  if (R.Min > R.Max) {
    Error = "the minimum is larger than the maximum in '" + Text.str() + "'";
    return false;
  }
  if (R.Opt && !R.contains(*R.Opt)) {
    Error = "opt is outside [min, max] in '" + Text.str() + "'";
    return false;
  }
  Out = R;
  return true;
}

std::string onnxopt::printDimRange(const DimRange &R) {
  std::string S = std::to_string(R.Min) + ":" + std::to_string(R.Max);
  if (R.Opt)
    S += ":" + std::to_string(*R.Opt);
  return S;
}

bool onnxopt::parseDimRanges(llvm::StringRef Text, DimRangeMap &Out,
                             std::string &Error) {
  llvm::SmallVector<llvm::StringRef, 8> Entries;
  Text.split(Entries, ';');
  if (Entries.empty() || Entries[0].trim() != "v1") {
    Error = "unsupported dim range format (expected 'v1;...'), got '" +
            Text.str() + "'";
    return false;
  }
  DimRangeMap Ranges;
  for (llvm::StringRef Entry : llvm::makeArrayRef(Entries).drop_front()) {
    if (Entry.trim().empty())
      continue;
    auto [Name, RangeText] = Entry.rsplit('=');
    DimRange R;
    std::string Why;
    if (Name.empty() || RangeText.empty() ||
        !parseDimRange(RangeText, R, Why)) {
      Error = "bad dim range entry '" + Entry.str() + "'" +
              (Why.empty() ? "" : ": " + Why);
      return false;
    }
    Ranges[Name.str()] = R;
  }
  Out = std::move(Ranges);
  return true;
}

std::string onnxopt::printDimRanges(const DimRangeMap &Ranges) {
  std::string S = "v1";
  for (const auto &[Name, R] : Ranges)
    S += ";" + Name + "=" + printDimRange(R);
  return S;
}

bool onnxopt::getDimRanges(const Model &M, DimRangeMap &Out,
                           std::string &Error) {
  Out.clear();
  std::optional<std::string> Text;
  if (!readMetadataProp(M, DimRangesKey, Text, Error))
    return false;
  return !Text || parseDimRanges(*Text, Out, Error);
}

bool onnxopt::setDimRanges(Model &M, const DimRangeMap &Ranges,
                           std::string &Error) {
  std::optional<std::string> Text;
  if (!Ranges.empty())
    Text = printDimRanges(Ranges);
  return writeMetadataProp(M, DimRangesKey, Text, Error);
}
