"""onnx-opt's pass pipelines on ONNX models, from Python.

    import onnxopt
    small = onnxopt.simplify(model)                      # onnx.ModelProto in, out
    data = onnxopt.run(model_bytes, "fold-shapes,cse,dce")  # bytes in, bytes out
    onnxopt.run("m.onnx", "freeze-dims{dims=N:1}", output="m1.onnx")
    for p in onnxopt.passes(): print(p["name"], p["description"])

The passes, their options and the pipeline syntax are onnx-opt's (docs/cli.md,
docs/passes.md); this module runs them in-process, with the GIL released. The
reference is docs/python.md.
"""

import os
import warnings

from . import _onnxopt

__all__ = ["run", "simplify", "passes", "Error", "Warning", "SIMPLIFY_PIPELINE"]

__version__ = _onnxopt.__version__

#: The passes ``simplify`` runs (the command's ``--simplify``).
SIMPLIFY_PIPELINE = _onnxopt.SIMPLIFY_PIPELINE


class Error(Exception):
    """A model or pipeline onnx-opt refused: ``str(e)`` is the diagnostic text
    as the command prints it (``name: error: node 'n' (Op) ...: reason`` and its
    notes); ``e.diagnostics`` lists every diagnostic line of the run, warnings
    and remarks included."""

    def __init__(self, message, diagnostics=()):
        super().__init__(message)
        self.message = message
        self.diagnostics = list(diagnostics)


class Warning(UserWarning):  # noqa: A001 - onnxopt.Warning, as onnxopt.Error
    """Warnings and remarks of a run that succeeded (a model newer than ONNX
    1.12's checker, -1 dims read as unknown, an input sorted into order)."""


def _is_model_proto(obj):
    return hasattr(obj, "SerializeToString") and hasattr(obj, "graph") and hasattr(obj, "ParseFromString")


def _pipeline_text(pipeline):
    if pipeline is None:
        return ""
    if isinstance(pipeline, str):
        return pipeline.strip()
    return ",".join(str(p).strip() for p in pipeline)


def _report(diagnostics, ok, stacklevel):
    """Raises Error when the run failed; else issues its warnings and remarks
    (each with the notes after it) as onnxopt.Warning."""
    groups = []
    for severity, text in diagnostics:
        if severity == "note" and groups:
            groups[-1][1].append(text)
        else:
            groups.append((severity, [text]))
    lines = [text for _, text in diagnostics]
    errors = ["\n".join(texts) for severity, texts in groups if severity == "error"]
    if not ok or errors:
        raise Error("\n".join(errors) if errors else "\n".join(lines) or "onnx-opt failed", lines)
    for severity, texts in groups:
        warnings.warn("\n".join(texts), Warning, stacklevel=stacklevel + 1)


def run(model, pipeline="", *, output=None, base_dir=None, verify=True, verify_each=True,
        verify_with="ir", external_data=None, external_threshold=1024,
        allow_external_data_outside=False, verbose=False):
    """Runs a pass pipeline on a model and returns the result.

    model: a path (str or os.PathLike) to a .onnx or ONNX text file, the bytes
        of a model (binary; ONNX text is accepted too), or an onnx.ModelProto.
    pipeline: pipeline text as the command takes it ("cse,dce",
        "freeze-dims{dims=N:1}"), or a list of pass texts; "" runs no pass
        (load, verify, write).
    output: a file to write the result to (.onnx binary, .onnxtxt text),
        verified, atomically, with external data as the command writes it.
        With output, run returns output.
    base_dir: for bytes and ModelProto input, the directory external data is
        read from (a path input uses its own directory).

    Without output the result is of the input's kind: bytes for bytes, a
    ModelProto (of the input's class) for a ModelProto, and bytes for a path.
    Bytes and ModelProto results hold every tensor inline (the bytes of
    external data are read in, as onnx.load does); a result above protobuf's
    2 GB needs output=.

    verify, verify_each, verify_with ("ir", "onnx", "both"), external_data
    (None: only when the output needs it; "": always, named
    "<output file name>.data"; a file name), external_threshold,
    allow_external_data_outside and verbose are the command's --verify,
    --verify-each, --verify=, --external-data[=name], --external-threshold,
    --allow-external-data-outside and --verbose.

    Raises onnxopt.Error with the diagnostic text when the model or the
    pipeline is refused; warnings and remarks are issued as onnxopt.Warning.
    """
    text = _pipeline_text(pipeline)
    if output is not None:
        output_path = os.fspath(output)
        if not output_path:
            raise ValueError("output= must name a file")
    else:
        output_path = None
        if external_data is not None:
            raise ValueError("external_data= needs output= (bytes and ModelProto results hold their tensors inline)")
    common = dict(pipeline=text, output=output_path, verify=bool(verify), verify_each=bool(verify_each),
                  verify_with=str(verify_with), allow_external_data_outside=bool(allow_external_data_outside),
                  external_data=external_data, external_threshold=int(external_threshold),
                  verbose=bool(verbose))

    if isinstance(model, (str, os.PathLike)):
        if base_dir is not None:
            raise ValueError("base_dir= is for bytes and ModelProto input; a path's external data is read from beside it")
        path = os.fspath(model)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        result, diagnostics, ok = _onnxopt.run_path(path, **common)
        _report(diagnostics, ok, stacklevel=2)
        return output if output is not None else result

    proto_class = None
    if isinstance(model, (bytes, bytearray, memoryview)):
        data, name = bytes(model), "<bytes>"
    elif _is_model_proto(model):
        proto_class = type(model)
        data, name = model.SerializeToString(), "<ModelProto>"
    else:
        raise TypeError("onnxopt.run takes a path, bytes or an onnx.ModelProto, not %s" % type(model).__name__)
    base = "" if base_dir is None else os.fspath(base_dir)
    result, diagnostics, ok = _onnxopt.run_bytes(data, base, name, **common)
    _report(diagnostics, ok, stacklevel=2)
    if output is not None:
        return output
    if proto_class is None:
        return result
    out = proto_class()
    out.ParseFromString(result)
    return out


def simplify(model, **kwargs):
    """onnxopt.run(model, SIMPLIFY_PIPELINE, ...): the command's --simplify
    (the simplify pass: infer-shapes, fold-shapes, constant-fold,
    canonicalize, eliminate-identity, cse, dce and unify-dims in rounds until
    nothing changes). Takes run's keyword arguments."""
    return run(model, SIMPLIFY_PIPELINE, **kwargs)


def passes():
    """The registered passes, sorted by name: a list of dicts with "name",
    "description" and "options" (each a dict with "name", "type",
    "description", "default", "required", and "choices", "min", "max" where
    the option has them)."""
    return _onnxopt.passes()
