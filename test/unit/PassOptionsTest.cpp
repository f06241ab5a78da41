//===- PassOptionsTest.cpp - Typed pass option units ----------------------===//
#include "onnxopt/Pass/PassOptions.h"
#include "onnxopt/Pass/Pass.h"
#include "gtest/gtest.h"

using namespace onnxopt;

namespace {

/// A pass that only carries options.
struct OptionsPass : Pass {
  llvm::StringRef getArgument() const override { return "opts"; }
  llvm::StringRef getDescription() const override { return "options only"; }
  LogicalResult run(Model &, PassContext &) override { return success(); }

  Option<int64_t> Count{*this, "count", "how many", 10};
  Option<bool> Flag{*this, "flag", "a switch", false};
  Option<double> Ratio{*this, "ratio", "a fraction", 0.5};
  Option<std::string> Label{*this, "label", "a name"};
  Option<ShapeSpec> Shape{*this, "shape", "one shape"};
  ListOption<int64_t> Ints{*this, "ints", "numbers"};
  ListOption<std::string> Dims{*this, "dims", "dim bindings"};
  ListOption<ShapeSpec> Shapes{*this, "shapes", "input shapes"};
};

template <typename T> std::string printed(const T &V) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printOptionValue(OS, V);
  return OS.str();
}

template <typename T> std::string parseError(llvm::StringRef Text) {
  T V;
  std::string Err;
  EXPECT_FALSE(parseOptionValue(Text, V, Err)) << Text.str();
  return Err;
}

} // namespace

TEST(PassOptions, Int) {
  int64_t V = 0;
  std::string Err;
  EXPECT_TRUE(parseOptionValue("42", V, Err));
  EXPECT_EQ(V, 42);
  EXPECT_TRUE(parseOptionValue("-7", V, Err));
  EXPECT_EQ(V, -7);
  EXPECT_TRUE(parseOptionValue("9223372036854775807", V, Err));
  EXPECT_EQ(V, INT64_MAX);
  EXPECT_EQ(printed(int64_t(-7)), "-7");

  EXPECT_EQ(parseError<int64_t>("x"), "expected an integer, got 'x'");
  EXPECT_EQ(parseError<int64_t>(""), "expected an integer, got ''");
  EXPECT_EQ(parseError<int64_t>("1.5"), "expected an integer, got '1.5'");
  EXPECT_EQ(parseError<int64_t>("12abc"), "expected an integer, got '12abc'");
  EXPECT_EQ(parseError<int64_t>("9223372036854775808"),
            "expected an integer, got '9223372036854775808'");
}

TEST(PassOptions, Bool) {
  bool V = false;
  std::string Err;
  for (llvm::StringRef T : {"true", "1"}) {
    EXPECT_TRUE(parseOptionValue(T, V, Err));
    EXPECT_TRUE(V);
  }
  for (llvm::StringRef F : {"false", "0"}) {
    EXPECT_TRUE(parseOptionValue(F, V, Err));
    EXPECT_FALSE(V);
  }
  EXPECT_EQ(printed(true), "true");
  EXPECT_EQ(printed(false), "false");
  EXPECT_EQ(parseError<bool>("yes"), "expected 'true' or 'false', got 'yes'");
  EXPECT_EQ(parseError<bool>("TRUE"), "expected 'true' or 'false', got 'TRUE'");
}

TEST(PassOptions, Float) {
  double V = 0;
  std::string Err;
  EXPECT_TRUE(parseOptionValue("0.25", V, Err));
  EXPECT_EQ(V, 0.25);
  EXPECT_TRUE(parseOptionValue("-3", V, Err));
  EXPECT_EQ(V, -3.0);
  EXPECT_TRUE(parseOptionValue("1e-3", V, Err));
  EXPECT_EQ(V, 1e-3);
  // Printing is the shortest text that reads back exactly.
  EXPECT_EQ(printed(0.1), "0.1");
  EXPECT_EQ(printed(2.0), "2");
  double Back = 0;
  EXPECT_TRUE(parseOptionValue(printed(1.0 / 3), Back, Err));
  EXPECT_EQ(Back, 1.0 / 3);

  EXPECT_EQ(parseError<double>("abc"), "expected a number, got 'abc'");
  EXPECT_EQ(parseError<double>("1.5x"), "expected a number, got '1.5x'");
  EXPECT_EQ(parseError<double>(""), "expected a number, got ''");
  EXPECT_EQ(parseError<double>("inf"), "expected a number, got 'inf'");
  EXPECT_EQ(parseError<double>("1e999"), "expected a number, got '1e999'");
}

TEST(PassOptions, String) {
  std::string V;
  std::string Err;
  EXPECT_TRUE(parseOptionValue("a:b;c[1,2]", V, Err));
  EXPECT_EQ(V, "a:b;c[1,2]");
  EXPECT_EQ(printed(std::string("plain")), "plain");
  // Values the pipeline parser would split are quoted.
  EXPECT_EQ(printed(std::string("a b")), "\"a b\"");
  EXPECT_EQ(printed(std::string("")), "\"\"");
  EXPECT_EQ(printed(std::string("x}\"y")), "\"x}\\\"y\"");
  // Paired brackets read back as they are; an unpaired one is quoted.
  EXPECT_EQ(printed(std::string("a[1,3]")), "a[1,3]");
  EXPECT_EQ(printed(std::string("a:[xt")), "\"a:[xt\"");
  EXPECT_EQ(printed(std::string("a]")), "\"a]\"");
}

TEST(PassOptions, Shape) {
  ShapeSpec S;
  std::string Err;
  ASSERT_TRUE(parseOptionValue("x[N,3,H,W]", S, Err)) << Err;
  EXPECT_EQ(S.Name, "x");
  EXPECT_EQ(S.Dims, (std::vector<std::string>{"N", "3", "H", "W"}));
  EXPECT_EQ(printed(S), "x[N,3,H,W]");

  ASSERT_TRUE(parseOptionValue("encoder/input.1:0[?,128]", S, Err)) << Err;
  EXPECT_EQ(S.Name, "encoder/input.1:0");
  EXPECT_EQ(S.Dims, (std::vector<std::string>{"?", "128"}));

  ASSERT_TRUE(parseOptionValue("scalar[]", S, Err)) << Err;
  EXPECT_TRUE(S.Dims.empty());
  EXPECT_EQ(printed(S), "scalar[]");

  EXPECT_EQ(parseError<ShapeSpec>("x"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got 'x'");
  EXPECT_EQ(parseError<ShapeSpec>("[1,2]"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got '[1,2]'");
  EXPECT_EQ(parseError<ShapeSpec>("x[1,2"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got 'x[1,2'");
  EXPECT_EQ(parseError<ShapeSpec>("x[1,[2]]"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got 'x[1,[2]]'");
  EXPECT_EQ(parseError<ShapeSpec>("x y[1]"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got 'x y[1]'");
  EXPECT_EQ(parseError<ShapeSpec>("x[1,-2]"),
            "invalid dim '-2' in shape 'x[1,-2]': expected an integer, a "
            "symbol or '?'");
  EXPECT_EQ(parseError<ShapeSpec>("x[1,,2]"),
            "invalid dim '' in shape 'x[1,,2]': expected an integer, a "
            "symbol or '?'");
  EXPECT_EQ(parseError<ShapeSpec>("x[3a]"),
            "invalid dim '3a' in shape 'x[3a]': expected an integer, a "
            "symbol or '?'");
}

TEST(PassOptions, ShapesAsOtherToolsWriteThem) {
  ShapeSpec S;
  std::string Err;
  // trtexec --shapes / polygraphy --input-shapes.
  ASSERT_TRUE(parseOptionValue("input:1x3x640x640", S, Err)) << Err;
  EXPECT_EQ(S.Name, "input");
  EXPECT_EQ(S.Dims, (std::vector<std::string>{"1", "3", "640", "640"}));
  ASSERT_TRUE(parseOptionValue("images:[1,3,H,W]", S, Err)) << Err;
  EXPECT_EQ(S.Name, "images");
  EXPECT_EQ(S.Dims, (std::vector<std::string>{"1", "3", "H", "W"}));
  // TensorFlow-style names keep their ':0'.
  ASSERT_TRUE(parseOptionValue("x:0:2x4", S, Err)) << Err;
  EXPECT_EQ(S.Name, "x:0");
  EXPECT_EQ(S.Dims, (std::vector<std::string>{"2", "4"}));
  ASSERT_TRUE(parseOptionValue("x:0[2,4]", S, Err)) << Err;
  EXPECT_EQ(S.Name, "x:0");
  // Symbols cannot be written with 'x' separators (a symbol may hold 'x').
  EXPECT_EQ(parseError<ShapeSpec>("input:Nx3"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got "
            "'input:Nx3'");
  EXPECT_EQ(parseError<ShapeSpec>("input:1xx3"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got "
            "'input:1xx3'");
  // A name ending in ':' could not be printed back as itself.
  EXPECT_EQ(parseError<ShapeSpec>("x:::[N,8]"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got "
            "'x:::[N,8]'");
  EXPECT_EQ(parseError<ShapeSpec>("x::2x4"),
            "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got "
            "'x::2x4'");
}

TEST(PassOptions, TypeNames) {
  OptionsPass P;
  EXPECT_EQ(P.Count.getTypeName(), "int");
  EXPECT_EQ(P.Flag.getTypeName(), "bool");
  EXPECT_EQ(P.Ratio.getTypeName(), "float");
  EXPECT_EQ(P.Label.getTypeName(), "string");
  EXPECT_EQ(P.Shape.getTypeName(), "shape");
  EXPECT_EQ(P.Ints.getTypeName(), "list<int>");
  EXPECT_EQ(P.Dims.getTypeName(), "list<string>");
  EXPECT_EQ(P.Shapes.getTypeName(), "list<shape>");
}

TEST(PassOptions, SplitList) {
  using Items = std::vector<std::string>;
  EXPECT_EQ(splitOptionList(""), Items{});
  EXPECT_EQ(splitOptionList("1"), Items{"1"});
  EXPECT_EQ(splitOptionList("N:1,H:640,W:640"),
            (Items{"N:1", "H:640", "W:640"}));
  EXPECT_EQ(splitOptionList("x[N,3],y[2]"), (Items{"x[N,3]", "y[2]"}));
  // Semicolons are left to the option that wants them.
  EXPECT_EQ(splitOptionList("a[1,3];b[2],c[4]"),
            (Items{"a[1,3];b[2]", "c[4]"}));
  EXPECT_EQ(splitOptionList("a,,b"), (Items{"a", "", "b"}));
}

TEST(PassOptions, RegisterWithOwner) {
  OptionsPass P;
  ASSERT_EQ(P.getOptions().size(), 8u);
  EXPECT_EQ(P.getOptions()[0], &P.Count);
  EXPECT_EQ(P.getOptions()[7], &P.Shapes);
  EXPECT_EQ(P.findOption("ratio"), &P.Ratio);
  EXPECT_EQ(P.findOption("nope"), nullptr);
  EXPECT_EQ(P.Count.getValue(), 10);
  EXPECT_FALSE(P.Count.hasValue());
}

TEST(PassOptions, ParseThroughOption) {
  OptionsPass P;
  std::string Err;
  EXPECT_TRUE(P.Count.parse("3", Err));
  EXPECT_EQ(P.Count.getValue(), 3);
  EXPECT_TRUE(P.Count.hasValue());
  // A bad value leaves the option unchanged.
  EXPECT_FALSE(P.Count.parse("three", Err));
  EXPECT_EQ(Err, "expected an integer, got 'three'");
  EXPECT_EQ(P.Count.getValue(), 3);

  EXPECT_TRUE(P.Shapes.parse("x[N,3],y[2]", Err)) << Err;
  ASSERT_EQ(P.Shapes.size(), 2u);
  EXPECT_EQ(P.Shapes.getValue()[1], (ShapeSpec{"y", {"2"}}));
  EXPECT_FALSE(P.Shapes.parse("x[N,3],y", Err));
  EXPECT_EQ(Err, "expected 'name[d0,d1,...]' or 'name:1x3x640x640', got 'y'");
  EXPECT_EQ(P.Shapes.size(), 2u);

  EXPECT_TRUE(P.Ints.parse("1,2,3", Err));
  EXPECT_EQ(P.Ints.getValue(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(P.Ints.parse("1,x", Err));
  EXPECT_EQ(Err, "expected an integer, got 'x'");
}

TEST(PassOptions, PrintAsTextualPipeline) {
  OptionsPass P;
  auto Print = [&] {
    std::string S;
    llvm::raw_string_ostream OS(S);
    P.printAsTextualPipeline(OS);
    return OS.str();
  };
  EXPECT_EQ(Print(), "opts");
  P.Ratio = 0.75;
  P.Shapes = {ShapeSpec{"x", {"N", "3"}}, ShapeSpec{"y", {}}};
  P.Label = std::string("two words");
  EXPECT_EQ(Print(), "opts{ratio=0.75 label=\"two words\" shapes=x[N,3],y[]}");
}
