#!/usr/bin/env python3
"""Turns FlashInfer-Trace definitions and workloads into LM Oracle case files.

    python3 tools/trace_import.py DEFINITION.json [WORKLOADS.jsonl] [--seed N] > cases.json
    build/lmoracle verify --case-file cases.json

FlashInfer-Trace (flashinfer-bench's dataset schema) describes an op by a Definition (its axes,
constant or variable, and its named input and output tensors with their dtypes) and each
recorded call by a Workload (the values of the variable axes and where each input comes from:
random, a scalar, or a tensor in a safetensors file). This tool maps the definitions of the ops
the oracle has to cases, one case per workload (or one per definition without workloads, the
variable axes then given with --axis NAME=VALUE):

    op_type rmsnorm            -> rmsnorm            (hidden_size, batch_size, eps)
    op_type fused_add_rmsnorm  -> fused_add_rmsnorm  (hidden_size, batch_size, eps)
    gqa_paged decode           -> paged_attention_decode (num_qo_heads, num_kv_heads, head_dim,
                                  page_size; seq_lens from kv_indptr, kv_last_page_len)

A case takes the shapes and parameters; its inputs are the oracle's own draws (Philox, the same
on every machine), not the recorded tensors, which `lmoracle ref --in` takes when the values
matter. Anything else (another op type, an axis or input the mapping needs and the files do not
give) is refused with exit code 2 and a message naming the file and the field.
"""
import argparse
import json
import os
import sys

DTYPES = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}


class ImportError_(Exception):
    """Bad or unsupported input: the file, the field and what was expected."""

    def __init__(self, file, field, expectation):
        super().__init__(f"{file}: {field}: {expectation}")


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ImportError_(path, "", f"cannot be read ({e.strerror})") from e
    except json.JSONDecodeError as e:
        raise ImportError_(path, f"line {e.lineno}", f"expected JSON ({e.msg})") from e


def read_workloads(path):
    """The Workload objects of a JSONL file (each line a Trace with a "workload" field, or a
    bare Workload)."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ImportError_(path, "", f"cannot be read ({e.strerror})") from e
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ImportError_(path, f"line {n}", f"expected a JSON object ({e.msg})") from e
        w = obj.get("workload", obj) if isinstance(obj, dict) else None
        if not isinstance(w, dict) or not isinstance(w.get("axes"), dict):
            raise ImportError_(path, f"line {n}", "expected a Workload with an \"axes\" object")
        out.append((f"line {n}", w))
    return out


class Axes:
    """A definition's constant axes and one workload's variable ones (or --axis values)."""

    def __init__(self, definition, def_file, values, where):
        self.def_file, self.where = def_file, where
        self.values = {}
        axes = definition.get("axes")
        if not isinstance(axes, dict):
            raise ImportError_(def_file, "axes", "expected an object of axis descriptions")
        for name, a in axes.items():
            if isinstance(a, dict) and a.get("type") == "const":
                self.values[name] = a.get("value")
        self.values.update(values)

    def get(self, name):
        v = self.values.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ImportError_(self.where, f"axes.{name}",
                               f"expected a non-negative integer, got {json.dumps(v)}")
        return v


def storage_format(definition, def_file, tensor):
    t = definition.get("inputs", {}).get(tensor)
    if not isinstance(t, dict):
        raise ImportError_(def_file, f"inputs.{tensor}", "expected a tensor description")
    dtype = t.get("dtype")
    if dtype not in DTYPES:
        raise ImportError_(def_file, f"inputs.{tensor}.dtype",
                           f"expected one of {', '.join(DTYPES)}, got {json.dumps(dtype)}")
    return DTYPES[dtype]


def scalar(workload, where, name, default):
    """A workload's scalar input (type "scalar"), or the default when it gives none."""
    d = (workload or {}).get("inputs", {}).get(name)
    if d is None:
        return default
    if not isinstance(d, dict) or d.get("type") != "scalar":
        raise ImportError_(where, f"inputs.{name}", "expected {\"type\": \"scalar\", \"value\": …}")
    v = d.get("value")
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise ImportError_(where, f"inputs.{name}.value", f"expected a number, got {json.dumps(v)}")
    return v


def index_tensor(workload, where, base_dir, name):
    """A workload's integer input held in a safetensors file, as a list."""
    d = (workload or {}).get("inputs", {}).get(name)
    if not isinstance(d, dict) or d.get("type") != "safetensors":
        raise ImportError_(where, f"inputs.{name}",
                           "expected the recorded tensor ({\"type\": \"safetensors\", \"path\": …, "
                           "\"tensor_key\": …}): the sequence lengths come from it")
    path = d.get("path")
    if not isinstance(path, str):
        raise ImportError_(where, f"inputs.{name}.path", "expected a file path")
    if not os.path.isabs(path):
        path = os.path.join(base_dir, path)
    try:
        from safetensors.numpy import load_file
        tensors = load_file(path)
    except Exception as e:  # noqa: BLE001 — any reader error is a bad file
        raise ImportError_(path, name, f"expected a readable safetensors file ({e})") from e
    key = d.get("tensor_key", name)
    if key not in tensors:
        raise ImportError_(path, str(key), "expected this tensor in the file")
    return [int(v) for v in tensors[key].reshape(-1)]


def rmsnorm_case(definition, def_file, axes, workload, fused):
    x = "hidden_states" if "hidden_states" in definition.get("inputs", {}) else "input"
    params = {"rows": axes.get("batch_size"), "d": axes.get("hidden_size"),
              "eps": scalar(workload, axes.where, "eps", 1e-6)}
    if params["rows"] < 1 or params["d"] < 1:
        raise ImportError_(axes.where, "axes", "expected batch_size and hidden_size of at least 1")
    return ("fused_add_rmsnorm" if fused else "rmsnorm"), storage_format(definition, def_file, x), \
        params


def paged_decode_case(definition, def_file, axes, workload, base_dir):
    page = axes.get("page_size")
    indptr = index_tensor(workload, axes.where, base_dir, "kv_indptr")
    if len(indptr) < 2 or indptr[0] != 0 or any(b <= a for a, b in zip(indptr, indptr[1:])):
        raise ImportError_(axes.where, "inputs.kv_indptr",
                           "expected 0 then strictly increasing page offsets (no empty sequence)")
    pages = [b - a for a, b in zip(indptr, indptr[1:])]
    if page == 1:
        lens = pages
    else:
        last = index_tensor(workload, axes.where, base_dir, "kv_last_page_len")
        if len(last) != len(pages) or any(not 1 <= v <= page for v in last):
            raise ImportError_(axes.where, "inputs.kv_last_page_len",
                               f"expected one value in [1, {page}] per sequence")
        lens = [(p - 1) * page + v for p, v in zip(pages, last)]
    params = {"h": axes.get("num_qo_heads"), "g": axes.get("num_kv_heads"),
              "d": axes.get("head_dim"), "page_size": page, "layout": "nhd", "seq_lens": lens}
    sm_scale = scalar(workload, axes.where, "sm_scale", None)
    if sm_scale is not None:
        params["scale"] = sm_scale
    return "paged_attention_decode", storage_format(definition, def_file, "q"), params


def cases(def_file, work_file, extra_axes, seed):
    definition = read_json(def_file)
    if not isinstance(definition, dict):
        raise ImportError_(def_file, "", "expected a Definition object")
    name = definition.get("name")
    if not isinstance(name, str) or not name:
        raise ImportError_(def_file, "name", "expected the definition's name")
    op_type = definition.get("op_type")
    base_dir = os.path.dirname(os.path.abspath(work_file or def_file))
    workloads = read_workloads(work_file) if work_file else [("--axis", {"axes": {}})]
    out = []
    for i, (line, w) in enumerate(workloads):
        where = f"{work_file}: {line}" if work_file else "--axis"
        axes = Axes(definition, def_file, {**w["axes"], **extra_axes}, where)
        if op_type in ("rmsnorm", "fused_add_rmsnorm"):
            fused = op_type == "fused_add_rmsnorm" or "residual" in definition.get("inputs", {})
            op, fmt, params = rmsnorm_case(definition, def_file, axes, w, fused)
        elif op_type in ("gqa_paged", "gqa_paged_decode") and "decode" in name:
            op, fmt, params = paged_decode_case(definition, def_file, axes, w, base_dir)
        else:
            raise ImportError_(def_file, "op_type",
                               "expected rmsnorm, fused_add_rmsnorm or a gqa_paged decode "
                               f"definition (the ops the oracle has), got {json.dumps(op_type)}")
        uuid = w.get("uuid", str(i))
        out.append({"id": f"trace/{name}/{uuid}", "op": op, "seed": seed + i,
                    "description": f"FlashInfer-Trace {name}, workload {uuid}",
                    "formats": [fmt], "params": params})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("definition", help="a Definition JSON file")
    ap.add_argument("workloads", nargs="?", help="its Workloads, JSONL (one per line)")
    ap.add_argument("--axis", action="append", default=[], metavar="NAME=VALUE",
                    help="a variable axis's value (without workloads, or to override them)")
    ap.add_argument("--seed", type=int, default=1, help="the first case's seed (default 1)")
    a = ap.parse_args(argv)
    extra = {}
    try:
        for item in a.axis:
            k, sep, v = item.partition("=")
            if not sep or not v.strip().lstrip("-").isdigit():
                raise ImportError_("--axis", item, "expected NAME=INTEGER")
            extra[k] = int(v)
        result = {"cases": cases(a.definition, a.workloads, extra, a.seed)}
    except ImportError_ as e:
        print(f"trace_import: {e}", file=sys.stderr)
        return 2
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
