# lit configuration for onnx-opt. `.onnxtxt` files are both the model and the
# test (ONNX text and lit share `#` comments); `.test` files hold RUN lines
# over other inputs.
import os
import lit.formats

config.name = "onnx-opt"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".onnxtxt", ".test"]
config.excludes = ["Inputs", "unit", "roundtrip", "consumer", "e2e", "models", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.onnxopt_obj_root, "test")

path = os.pathsep.join([config.onnxopt_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%testdata", "/usr/share/libonnx-testdata/data"))
