"""Tests of the Python module onnxopt (python/, docs/python.md).

Run by ctest (`python`) as /usr/bin/python3 test/python/test_onnxopt.py, with
PYTHONPATH pointing at build/python; models come from Debian's python3-onnx.
"""

import os
import pathlib
import sys
import tempfile
import threading
import unittest
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnxopt

SOURCE_DIR = pathlib.Path(os.environ.get("ONNXOPT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
RETINAFACE = SOURCE_DIR / "test" / "models" / "retinaface_dynamic_names.onnx"


def redundant_model(weight=None, opset=13):
    """x -> Identity -> (Relu, Relu) -> Add(w) -> y: cse merges the Relus,
    eliminate-identity drops the Identity."""
    w = weight if weight is not None else np.arange(12, dtype=np.float32).reshape(3, 4)
    nodes = [
        helper.make_node("Identity", ["x"], ["i"], name="id"),
        helper.make_node("Relu", ["i"], ["a"], name="relu_a"),
        helper.make_node("Relu", ["i"], ["b"], name="relu_b"),
        helper.make_node("Add", ["a", "b"], ["s"], name="add"),
        helper.make_node("Add", ["s", "w"], ["y"], name="bias"),
    ]
    graph = helper.make_graph(
        nodes, "redundant",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        initializer=[numpy_helper.from_array(w[0], "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def op_types(model):
    return [n.op_type for n in model.graph.node]


class RunInputKinds(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        self.model = redundant_model()
        self.path = self.dir / "m.onnx"
        onnx.save(self.model, str(self.path))

    def tearDown(self):
        self.tmp.cleanup()

    def test_model_proto_in_model_proto_out(self):
        out = onnxopt.run(self.model, "eliminate-identity,cse,dce")
        self.assertIsInstance(out, onnx.ModelProto)
        self.assertEqual(op_types(out), ["Relu", "Add", "Add"])
        onnx.checker.check_model(out)
        # The input is not modified.
        self.assertEqual(len(self.model.graph.node), 5)

    def test_bytes_in_bytes_out(self):
        data = onnxopt.run(self.model.SerializeToString(), "eliminate-identity,cse,dce")
        self.assertIsInstance(data, bytes)
        self.assertEqual(op_types(onnx.load_from_string(data)), ["Relu", "Add", "Add"])
        # bytearray and memoryview are bytes too.
        self.assertIsInstance(onnxopt.run(bytearray(self.model.SerializeToString()), "cse"), bytes)
        self.assertIsInstance(onnxopt.run(memoryview(self.model.SerializeToString()), "cse"), bytes)

    def test_onnx_text_bytes(self):
        text = b"""<ir_version: 8, opset_import: ["" : 17]>
        g (float[N] x) => (float[N] y) {
          i = Identity (x)
          y = Relu (i)
        }"""
        out = onnx.load_from_string(onnxopt.run(text, ["eliminate-identity", "dce"]))
        self.assertEqual(op_types(out), ["Relu"])

    def test_path_returns_bytes(self):
        for path in (str(self.path), self.path):  # str and os.PathLike
            data = onnxopt.run(path, "cse,dce")
            self.assertIsInstance(data, bytes)
            self.assertEqual(op_types(onnx.load_from_string(data)), ["Identity", "Relu", "Add", "Add"])

    def test_path_with_output(self):
        out = self.dir / "out.onnx"
        ret = onnxopt.run(self.path, "eliminate-identity,cse,dce", output=out)
        self.assertEqual(ret, out)
        written = onnx.load(str(out))
        onnx.checker.check_model(written)
        self.assertEqual(op_types(written), ["Relu", "Add", "Add"])
        # Text output by the extension, as the command writes it.
        text = self.dir / "out.onnxtxt"
        onnxopt.run(self.path, "", output=str(text))
        self.assertIn("y = Add (s, w)", text.read_text())

    def test_bytes_with_output(self):
        out = self.dir / "from-bytes.onnx"
        self.assertEqual(onnxopt.run(self.model.SerializeToString(), "cse", output=out), out)
        self.assertTrue(out.exists())

    def test_no_pipeline_is_a_verified_copy(self):
        out = onnxopt.run(self.model)
        self.assertEqual(op_types(out), op_types(self.model))
        self.assertEqual(out.graph.initializer[0].name, "w")

    def test_bad_arguments(self):
        with self.assertRaises(TypeError):
            onnxopt.run(42, "cse")
        with self.assertRaises(ValueError):
            onnxopt.run(self.path, "cse", base_dir=self.dir)
        with self.assertRaises(ValueError):
            onnxopt.run(self.model, "cse", external_data="w.data")


class RealPipelines(unittest.TestCase):
    def test_simplify_exporter_model(self):
        model = onnx.load(str(RETINAFACE))
        out = onnxopt.simplify(model)
        self.assertIsInstance(out, onnx.ModelProto)
        onnx.checker.check_model(out)
        # README: 234 -> 144 nodes, no Constant node left.
        self.assertEqual(len(model.graph.node), 234)
        self.assertLess(len(out.graph.node), 160)
        self.assertNotIn("Constant", op_types(out))
        self.assertEqual([o.name for o in out.graph.output], [o.name for o in model.graph.output])
        self.assertEqual(onnxopt.SIMPLIFY_PIPELINE, "simplify")
        # A fixed point: simplifying the output again changes nothing.
        again = onnxopt.simplify(out)
        self.assertEqual(again.SerializeToString(), out.SerializeToString())

    def test_freeze_dims(self):
        out = onnxopt.run(str(RETINAFACE), "freeze-dims{shapes=input[1,3,320,320]},fold-shapes,dce")
        model = onnx.load_from_string(out)
        dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, [1, 3, 320, 320])
        for output in model.graph.output:
            for d in output.type.tensor_type.shape.dim:
                self.assertTrue(d.HasField("dim_value"), output)

    def test_threads(self):
        # The GIL is released while a pipeline runs: runs on several threads
        # at once complete, with the same results.
        data = RETINAFACE.read_bytes()
        results = [None] * 4

        def work(i):
            results[i] = onnxopt.run(data, "infer-shapes,fold-shapes,cse,dce")

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(all(r == results[0] for r in results))
        self.assertIsNotNone(results[0])


class Errors(unittest.TestCase):
    def test_unknown_pass(self):
        with self.assertRaises(onnxopt.Error) as ctx:
            onnxopt.run(redundant_model(), "cse,unfiy-dims")
        text = str(ctx.exception)
        self.assertIn("error: unknown pass 'unfiy-dims'", text)
        self.assertIn("did you mean 'unify-dims'?", text)
        self.assertIn("cse,unfiy-dims\n      ^", text)

    def test_bad_option(self):
        with self.assertRaises(onnxopt.Error) as ctx:
            onnxopt.run(redundant_model(), "fold-shapes{max-rounds=-3}")
        self.assertIn("must be at least 1, got -3", str(ctx.exception))

    def test_invalid_model(self):
        model = redundant_model()
        model.graph.node[1].input[0] = "undefined"
        with self.assertRaises(onnxopt.Error) as ctx:
            onnxopt.run(model, "cse")
        self.assertIn("<ModelProto>: error: node 'relu_a' (Relu) in graph 'redundant': input 'undefined' is not defined",
                      str(ctx.exception))
        self.assertTrue(ctx.exception.diagnostics)

    def test_not_a_model(self):
        page = b"<!DOCTYPE html>\n<html><body>Sign in</body></html>\n"
        with self.assertRaises(onnxopt.Error) as ctx:
            onnxopt.run(page, "cse")
        self.assertIn("<bytes>: error: this is an HTML page, not an ONNX model", str(ctx.exception))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "page.onnx")
            with open(path, "wb") as f:
                f.write(page)
            with self.assertRaises(onnxopt.Error) as ctx:
                onnxopt.run(path)
            self.assertIn("page.onnx: error: this is an HTML page", str(ctx.exception))
            with self.assertRaises(onnxopt.Error) as ctx:
                onnxopt.run(os.path.join(d, "missing.onnx"))
            self.assertIn("missing.onnx: error: cannot open", str(ctx.exception))

    def test_failed_run_writes_nothing(self):
        model = redundant_model()
        model.graph.node[1].input[0] = "undefined"
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.onnx")
            with self.assertRaises(onnxopt.Error):
                onnxopt.run(model, "cse", output=out)
            self.assertEqual(os.listdir(d), [])

    def test_error_is_an_exception(self):
        self.assertTrue(issubclass(onnxopt.Error, Exception))
        self.assertTrue(issubclass(onnxopt.Warning, UserWarning))


class Warnings(unittest.TestCase):
    def test_newer_opset_warns_in_one_line(self):
        model = redundant_model(opset=21)
        model.ir_version = 10
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            onnxopt.run(model, "cse")
        messages = [str(w.message) for w in caught if issubclass(w.category, onnxopt.Warning)]
        self.assertEqual(len(messages), 1, messages)
        self.assertIn("warning: the onnx checker and strict shape inference were skipped", messages[0])
        self.assertIn("(--verbose for details)", messages[0])
        self.assertNotIn("\n", messages[0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            onnxopt.run(model, "cse", verbose=True)
        self.assertIn("checked instead:", str(caught[0].message))

    def test_minus_one_dims_remark(self):
        model = redundant_model()
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = onnxopt.run(model)
        self.assertEqual(len(caught), 1)
        self.assertIn("remark: value 'x' has dim -1", str(caught[0].message))
        self.assertIsNone(out.graph.input[0].type.tensor_type.shape.dim[0].WhichOneof("value"))


class Passes(unittest.TestCase):
    def test_passes(self):
        passes = onnxopt.passes()
        names = [p["name"] for p in passes]
        self.assertEqual(names, sorted(names))
        for name in ("cse", "dce", "fold-shapes", "freeze-dims", "unify-dims", "infer-shapes"):
            self.assertIn(name, names)
        by_name = {p["name"]: p for p in passes}
        self.assertTrue(by_name["cse"]["description"])
        options = {o["name"]: o for o in by_name["freeze-dims"]["options"]}
        self.assertEqual(options["shapes"]["type"], "list<shape>")
        self.assertTrue(options["shapes"]["description"])
        fold = {o["name"]: o for o in by_name["fold-shapes"]["options"]}
        self.assertEqual(fold["max-rounds"]["min"], 1)
        self.assertEqual(fold["max-rounds"]["type"], "int")
        self.assertTrue(any(o["required"] for o in by_name["set-dim-range"]["options"]))


class ExternalData(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        self.weight = np.random.RandomState(0).rand(3, 4).astype(np.float32)
        model = redundant_model(self.weight)
        # A large initializer, so that it goes to external data.
        big = np.random.RandomState(1).rand(64, 64).astype(np.float32)
        model.graph.initializer.append(numpy_helper.from_array(big, "unused_big"))
        self.big = big
        self.src = self.dir / "src"
        self.src.mkdir()
        self.path = self.src / "m.onnx"
        onnx.save(model, str(self.path), save_as_external_data=True, all_tensors_to_one_file=True,
                  location="m.weights", size_threshold=0)
        self.assertTrue((self.src / "m.weights").exists())

    def tearDown(self):
        self.tmp.cleanup()

    def check_inline(self, model):
        for init in model.graph.initializer:
            self.assertNotEqual(init.data_location, TensorProto.EXTERNAL, init.name)
        inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        np.testing.assert_array_equal(inits["w"], self.weight[0])
        return inits

    def test_path_beside_its_data(self):
        # Bytes results hold every tensor inline, as onnx.load does.
        out = onnx.load_from_string(onnxopt.run(self.path, "cse"))
        inits = self.check_inline(out)
        np.testing.assert_array_equal(inits["unused_big"], self.big)

    def test_path_to_output_writes_a_data_file(self):
        dest = self.dir / "dest"
        dest.mkdir()
        out = dest / "o.onnx"
        onnxopt.run(self.path, "cse,dce", output=out)
        self.assertTrue((dest / "o.onnx.data").exists())
        loaded = onnx.load(str(out))  # reads the external data beside it
        inits = {i.name: numpy_helper.to_array(i) for i in loaded.graph.initializer}
        np.testing.assert_array_equal(inits["w"], self.weight[0])
        self.assertNotIn("unused_big", inits)  # dce dropped the unused one
        # external_data= forces a data file, as --external-data does.
        forced = dest / "forced.onnx"
        onnxopt.run(self.path, "", output=forced, external_data="forced.bin", external_threshold=16)
        self.assertTrue((dest / "forced.bin").exists())

    def test_model_proto_with_base_dir(self):
        proto = onnx.load(str(self.path), load_external_data=False)
        self.assertEqual(proto.graph.initializer[0].data_location, TensorProto.EXTERNAL)
        out = onnxopt.run(proto, "cse", base_dir=self.src)
        self.check_inline(out)
        data = onnxopt.run(proto.SerializeToString(), "cse", base_dir=str(self.src))
        self.check_inline(onnx.load_from_string(data))

    def test_missing_base_dir_is_an_error(self):
        proto = onnx.load(str(self.path), load_external_data=False)
        with self.assertRaises(onnxopt.Error) as ctx:
            onnxopt.run(proto, "cse", base_dir=self.dir)  # not where the data is
        self.assertIn("m.weights", str(ctx.exception))

    def test_outside_base_dir_is_refused(self):
        proto = onnx.load(str(self.path), load_external_data=False)
        for init in proto.graph.initializer:
            for entry in init.external_data:
                if entry.key == "location":
                    entry.value = "../src/m.weights"
        sub = self.dir / "sub"
        sub.mkdir()
        with self.assertRaises(onnxopt.Error) as ctx:
            onnxopt.run(proto, "cse", base_dir=sub)
        self.assertIn("allow-external-data-outside", str(ctx.exception))
        out = onnxopt.run(proto, "cse", base_dir=sub, allow_external_data_outside=True)
        self.check_inline(out)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
