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
                                  page_size; seq_lens from kv_indptr, kv_last_page_len; layout
                                  from k_cache's shape; scale from sm_scale)

Every parameter of a mapped op comes from the files, never from a default (PARAMETERS lists
where each is read): the axes, the recorded index tensors, a workload's scalar input, or the
definition itself where the dataset keeps a constant there: its `reference` code (`EPS = 1e-5`,
`sm_scale = 1.0 / math.sqrt(head_dim)`, a keyword default) or its
`description` ("Epsilon is fixed at 1e-5"). Sources that disagree, or none, exit 2. What the
mapped op would take as its own default (a logits soft cap, a sliding window, Gemma's 1 + weight)
is refused when the reference code shows it. An output the oracle's op does not have (gqa_paged's
base-2 `lse`) is named on stderr: it is not judged.

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


PARAMETERS = {
    "rmsnorm": {"rows": "axes.batch_size", "d": "axes.hidden_size",
                "eps": "workload inputs.eps, the reference's EPS or the description"},
    "fused_add_rmsnorm": {"rows": "axes.batch_size", "d": "axes.hidden_size",
                          "eps": "workload inputs.eps, the reference's EPS or the description"},
    "paged_attention_decode": {
        "h": "axes.num_qo_heads", "g": "axes.num_kv_heads", "d": "axes.head_dim",
        "page_size": "axes.page_size", "layout": "inputs.k_cache.shape",
        "seq_lens": "workload kv_indptr (and kv_last_page_len)",
        "scale": "workload inputs.sm_scale or the reference's sm_scale"},
}

NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"


def _const(node, names):
    """The value of a constant expression of the reference code: numbers, the axes' names,
    + - * / **, math.sqrt / math.log2; None for anything else."""
    import ast
    import math
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
            not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id in names:
        return float(names[node.id])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _const(node.operand, names)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        a, b = _const(node.left, names), _const(node.right, names)
        if a is None or b is None:
            return None
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.Div: lambda: a / b if b else None, ast.Pow: lambda: a ** b}
        f = ops.get(type(node.op))
        return f() if f else None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) \
            else None
        v = _const(node.args[0], names)
        if v is not None and name == "sqrt" and v >= 0:
            return math.sqrt(v)
        if v is not None and name == "log2" and v > 0:
            return math.log2(v)
    return None


def reference_constants(definition, def_file, pattern, names):
    """The values the definition's reference code gives a name matching `pattern` (re, full
    match): assignments (EPS = 1e-5), keyword defaults (def run(x, eps=1e-6)); each as
    (value, where)."""
    import ast
    import re
    code = definition.get("reference")
    if not isinstance(code, str):
        return []
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise ImportError_(def_file, "reference", f"expected Python code ({e.msg}, line "
                                                  f"{e.lineno})") from e
    rx = re.compile(pattern, re.IGNORECASE)
    found = []
    for node in ast.walk(tree):
        pairs = []
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            pairs = [(t.id, node.value) for t in targets
                     if isinstance(t, ast.Name) and node.value is not None]
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs = list(zip([p.arg for p in pos[len(pos) - len(a.defaults):]], a.defaults))
            pairs += [(p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        for name, value in pairs:
            if rx.fullmatch(name):
                v = _const(value, names)
                if v is not None:  # not a constant (scale = sm_scale): it gives no value
                    found.append((v, f"reference {name} = {ast.unparse(value)}"))
    return found


def description_constants(definition, words):
    """(value, where) for each "<word> is fixed at 1e-5" / "<word> = 1e-5" / "<word> of 1e-5"
    in the definition's description."""
    import re
    text = definition.get("description")
    if not isinstance(text, str):
        return []
    rx = re.compile(rf"\b(?:{words})\b\s*(?:is\s+)?(?:fixed\s+)?(?:at|=|:|of|to)?\s*"
                    rf"({NUMBER})(?![0-9A-Za-z])", re.IGNORECASE)
    return [(float(m.group(1)), f"description \"{m.group(0).strip()}\"")
            for m in rx.finditer(text)]


def one_value(found, file, field, what):
    """The single value all sources agree on; ImportError_ when they disagree or none gives it."""
    if not found:
        raise ImportError_(file, field, f"expected {what}: the files do not give it (a "
                                        f"workload scalar, the reference code or the "
                                        f"description), and it is never defaulted")
    values = {v for v, _ in found}
    if len(values) > 1:
        raise ImportError_(file, field, f"expected a single value for {what}, got "
                                        f"{'; '.join(w for _, w in found)}")
    return found[0][0]


def refuse_in_reference(definition, def_file, patterns):
    """ImportError_ where the reference code shows a feature (pattern -> what) the mapping does
    not carry."""
    import re
    code = definition.get("reference") or ""
    for rx, what in patterns:
        m = re.search(rx, code)
        if m:
            raise ImportError_(def_file, "reference",
                               f"shows {what} ({m.group(0)!r}), which the mapped op would not "
                               f"apply: not mapped")


def same_dtypes(definition, def_file, names, first):
    fmt = storage_format(definition, def_file, first)
    for n in names:
        if n in definition.get("inputs", {}) and storage_format(definition, def_file, n) != fmt:
            raise ImportError_(def_file, f"inputs.{n}.dtype",
                               f"expected {definition['inputs'][first]['dtype']} like {first} "
                               f"(one storage format per case)")
    return fmt


def rmsnorm_case(definition, def_file, axes, workload, fused):
    x = "hidden_states" if "hidden_states" in definition.get("inputs", {}) else "input"
    refuse_in_reference(definition, def_file, [
        (r"1(?:\.0*)?\s*\+\s*weight|weight\s*\+\s*1(?:\.0*)?\b", "Gemma's (1 + weight) scale")])
    found = reference_constants(definition, def_file, r"eps|epsilon|variance_epsilon|rms_eps|"
                                                      r"norm_eps|rms_norm_eps", axes.values)
    found += description_constants(definition, "eps|epsilon|variance_epsilon")
    recorded = scalar(workload, axes.where, "eps", None)
    if recorded is not None:
        found.append((float(recorded), f"{axes.where}: inputs.eps"))
    eps = one_value(found, def_file, "reference", "the epsilon (EPS = … in the reference, "
                                                  "\"epsilon …\" in the description)")
    params = {"rows": axes.get("batch_size"), "d": axes.get("hidden_size"), "eps": eps}
    if params["rows"] < 1 or params["d"] < 1:
        raise ImportError_(axes.where, "axes", "expected batch_size and hidden_size of at least 1")
    fmt = same_dtypes(definition, def_file, ["weight", "residual"], x)
    return ("fused_add_rmsnorm" if fused else "rmsnorm"), fmt, params


def cache_layout(definition, def_file, page):
    """nhd or hnd, from the shape the definition gives k_cache (and v_cache)."""
    shapes = {}
    for n in ("k_cache", "v_cache"):
        t = definition.get("inputs", {}).get(n)
        if not isinstance(t, dict) or not isinstance(t.get("shape"), list):
            raise ImportError_(def_file, f"inputs.{n}.shape",
                               "expected the paged cache's shape (its layout is read from it)")
        shapes[n] = t["shape"]
    if shapes["k_cache"] != shapes["v_cache"]:
        raise ImportError_(def_file, "inputs.v_cache.shape", f"expected k_cache's shape "
                                                             f"{shapes['k_cache']}")
    shape = shapes["k_cache"]
    if shape == ["num_pages", "page_size", "num_kv_heads", "head_dim"] or \
            (page == 1 and shape == ["num_pages", "num_kv_heads", "head_dim"]):
        return "nhd"
    if shape == ["num_pages", "num_kv_heads", "page_size", "head_dim"]:
        return "hnd"
    raise ImportError_(def_file, "inputs.k_cache.shape",
                       "expected [num_pages, page_size, num_kv_heads, head_dim] (nhd) or "
                       f"[num_pages, num_kv_heads, page_size, head_dim] (hnd), got {shape}")


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
    refuse_in_reference(definition, def_file, [
        (r"soft_?cap|tanh", "a logits soft cap"), (r"window", "a sliding window"),
        (r"alibi|slope", "ALiBi slopes")])
    params = {"h": axes.get("num_qo_heads"), "g": axes.get("num_kv_heads"),
              "d": axes.get("head_dim"), "page_size": page,
              "layout": cache_layout(definition, def_file, page), "seq_lens": lens}
    found = reference_constants(definition, def_file, r"sm_scale|softmax_scale|scale",
                                axes.values)
    found += description_constants(definition, "sm_scale|softmax scale")
    inputs = definition.get("inputs", {})
    recorded = scalar(workload, axes.where, "sm_scale", None)
    if recorded is not None:
        found.append((float(recorded), f"{axes.where}: inputs.sm_scale"))
    elif "sm_scale" in inputs:
        raise ImportError_(axes.where, "inputs.sm_scale",
                           "expected {\"type\": \"scalar\", \"value\": …}: the definition takes "
                           "sm_scale as an input and this workload does not record it")
    params["scale"] = one_value(found, def_file, "reference", "the softmax scale (a workload's "
                                                              "sm_scale, or sm_scale = … in the "
                                                              "reference)")
    if params["scale"] <= 0:
        raise ImportError_(def_file, "reference", f"expected a softmax scale > 0, got "
                                                  f"{params['scale']}")
    fmt = same_dtypes(definition, def_file, ["k_cache", "v_cache"], "q")
    if "lse" in definition.get("outputs", {}):
        print(f"trace_import: {def_file}: outputs.lse: not judged (the oracle's "
              f"paged_attention_decode has no log-sum-exp output)", file=sys.stderr)
    return "paged_attention_decode", fmt, params


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
        output = definition.get("outputs", {}).get("output")
        if isinstance(output, dict) and DTYPES.get(output.get("dtype")) != fmt:
            raise ImportError_(def_file, "outputs.output.dtype",
                               f"expected the inputs' storage format ({fmt}: the case judges its "
                               f"outputs in it), got {json.dumps(output.get('dtype'))}")
        missing = [k for k in PARAMETERS[op] if params.get(k) is None]
        if missing:
            raise ImportError_(def_file, ", ".join(missing),
                               f"expected from {'; '.join(PARAMETERS[op][k] for k in missing)}")
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
