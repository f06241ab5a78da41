#!/usr/bin/python3
#===- shape-coverage.py - How much of a model's shapes inference knows -----===#
#
#   utils/shape-coverage.py [--min-rank PCT] [--min-resolved PCT] MODEL.onnx...
#
# For models written by `onnx-opt --infer-shapes --unify-dims` (types
# recorded as value_info), counts the node results of every graph (bodies
# included) and prints, per model:
#
#   rank      results whose rank is recorded
#   resolved  results whose every dim is a number, a main-graph input symbol,
#             or a symbol unify-dims derived from them (its expression is in
#             the model's onnx_opt.derived_dims metadata)
#
# Results with a dim that depends on the data (named <Op>_<K>_out<I> by
# onnx-opt, see docs/shape-inference.md) are counted apart: nothing can
# resolve them. Exits 1 if a model is below --min-rank or --min-resolved
# (percent of the results that do not depend on the data).
#
#===------------------------------------------------------------------------===#

import argparse
import re
import sys

import onnx

DATA_DEPENDENT = re.compile(
    r"^(NonZero|NonMaxSuppression|Unique|Compress|TopK|Loop)_\d+_out\d+(_d\d+)?(_\d+)?$")


def derived_symbols(model):
    for prop in model.metadata_props:
        if prop.key != "onnx_opt.derived_dims":
            continue
        entries = prop.value.split(";")
        return {e.split("=", 1)[0] for e in entries[1:] if "=" in e}
    return set()


def graph_values(graph):
    """(value name -> TypeProto) of a graph, and its node results, bodies
    included (each body with its own value_info)."""
    types = {}
    results = []

    def walk(g):
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            types[vi.name] = vi.type
        for n in g.node:
            results.extend(o for o in n.output if o)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sub in a.graphs:
                        walk(sub)

    walk(graph)
    return types, results


def coverage(path):
    model = onnx.load(path, load_external_data=False)
    inputs = {d.dim_param for i in model.graph.input
              if i.type.HasField("tensor_type")
              for d in i.type.tensor_type.shape.dim if d.dim_param}
    known_symbols = inputs | derived_symbols(model)
    types, results = graph_values(model.graph)
    rank = resolved = data = 0
    for name in results:
        t = types.get(name)
        if t is None or not t.HasField("tensor_type") or \
                not t.tensor_type.HasField("shape"):
            continue
        rank += 1
        dims = t.tensor_type.shape.dim
        if any(d.dim_param and DATA_DEPENDENT.match(d.dim_param) for d in dims):
            data += 1
            continue
        if all(d.HasField("dim_value") or d.dim_param in known_symbols
               for d in dims):
            resolved += 1
    return len(results), rank, resolved, data


def main():
    p = argparse.ArgumentParser(description="shape coverage of models")
    p.add_argument("models", nargs="+")
    p.add_argument("--min-rank", type=float, default=0.0)
    p.add_argument("--min-resolved", type=float, default=0.0)
    args = p.parse_args()
    ok = True
    for path in args.models:
        total, rank, resolved, data = coverage(path)
        base = max(total - data, 1)
        rank_pct = 100.0 * rank / max(total, 1)
        resolved_pct = 100.0 * resolved / base
        verdict = "OK"
        if rank_pct < args.min_rank or resolved_pct < args.min_resolved:
            verdict = "BELOW"
            ok = False
        print(f"{path}: {total} results, rank {rank} ({rank_pct:.1f}%), "
              f"resolved {resolved} ({resolved_pct:.1f}%), "
              f"data-dependent {data}: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
