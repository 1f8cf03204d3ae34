"""The package's functions: cases, the inputs the oracle generates, the correctly rounded
reference on any inputs, and the judge's verdict on a kernel's outputs. Each is a thin layer on
the C++ oracle (lmoracle._core): this file resolves names, converts arrays (_arrays.py) and
shapes the reports; it computes and judges nothing itself."""
import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Optional

import numpy as np

from . import _arrays, _core, _progress

# Rounding recipes (docs/recipes.md): the named ones. check() also takes "NAME+ftz", "NAME+fma", custom
# "point=value,…" and "NAME,point=value" texts.
RECIPES = tuple(r[0] for r in _core.recipes())

_PACKAGED_CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")


def cases_dir():
    """The built-in cases: $LMO_CASES_DIR, else those an installed package ships, else the
    source tree's cases/ (the build tree's module)."""
    env = os.environ.get("LMO_CASES_DIR")
    if env:
        return env
    if os.path.isdir(_PACKAGED_CASES):
        return _PACKAGED_CASES
    return _core.builtin_cases_dir()


@dataclasses.dataclass(frozen=True)
class Case:
    """A built-in case (cases/*.json): its ID, op, seed, storage formats and parameters."""
    id: str
    op: str
    seed: int
    formats: tuple
    params: dict
    source: dict = dataclasses.field(repr=False)

    @staticmethod
    def from_source(source):
        return Case(source["id"], source["op"], int(source["seed"]), tuple(source["formats"]),
                    dict(source.get("params", {})), source)


_loaded = {}


def cases(pattern=None, op=None):
    """The built-in cases whose ID matches the regular expression `pattern` (re.search) and
    whose op is `op`, in the case files' order."""
    d = cases_dir()
    if d not in _loaded:
        _loaded[d] = [Case.from_source(s) for s in json.loads(_core.load_cases(d))]
    rx = re.compile(pattern) if pattern is not None else None
    return [c for c in _loaded[d]
            if (rx is None or rx.search(c.id)) and (op is None or c.op == op)]


def ops():
    """The op names of the registry, in its order."""
    return [o["name"] for o in json.loads(_core.ops())]


def rounding_points(op, **params):
    """The op's rounding points (docs/recipes.md) with these parameters: dicts {"name", "values"
    ("format", or the list of choices), "strict" (its value under strict), "what"}. Empty for an
    op that only takes strict, +ftz and +fma."""
    return _io(_resolve(op, params, None, "lmoracle.rounding_points"))["rounding_points"]


def _json_value(v, where):
    """A parameter value as JSON (NumPy scalars as Python numbers)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (list, tuple)):
        return [_json_value(e, where) for e in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"{where}: expected a number, string, bool or list, got {type(v).__name__}")


def _resolve(op_or_case, params, seed, where):
    """The case object (case-file JSON) of an op name with parameters, a built-in case ID or a
    Case, with params overriding its parameters and seed its seed."""
    if isinstance(op_or_case, Case):
        case = json.loads(json.dumps(op_or_case.source))
    elif isinstance(op_or_case, str):
        names = ops()
        # An op name (case IDs have a "/") needs no case file: a damaged built-in case file must
        # not stop a call that does not read it.
        found = [] if op_or_case in names else [c for c in cases() if c.id == op_or_case]
        if found:
            case = json.loads(json.dumps(found[0].source))
        else:
            if op_or_case not in names:
                raise ValueError(
                    f"{where}: op: expected an op name ({', '.join(names)}) or the ID of a "
                    f"built-in case (lmoracle.cases() lists them), got {op_or_case!r}")
            case = {"id": "py/" + op_or_case, "op": op_or_case, "seed": 0, "formats": ["f32"],
                    "params": {}}
    else:
        raise TypeError(f"{where}: op: expected an op name, a case ID or an lmoracle.Case, got "
                        f"{type(op_or_case).__name__}")
    for k, v in params.items():
        case.setdefault("params", {})[k] = _json_value(v, f"{where}: parameter {k}")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"{where}: seed: expected an integer ≥ 0, got {seed!r}")
        case["seed"] = int(seed)
    return case


def _io(case):
    return json.loads(_core.op_io(json.dumps(case)))


def _pack_all(case, tensors, what, kind):
    """The module's tuples for a mapping name → array, or a sequence in the op's order of
    `kind` ("inputs" or "outputs"); a single array stands for an op's only output."""
    if isinstance(tensors, Mapping):
        items = list(tensors.items())
    elif isinstance(tensors, Sequence) and not isinstance(tensors, (str, bytes)):
        names = [d["name"] for d in _io(case)[kind]]
        if len(tensors) != len(names):
            raise ValueError(f"{what}: expected {len(names)} arrays in the order "
                             f"({', '.join(names)}) of op {case['op']}, got {len(tensors)}")
        items = list(zip(names, tensors))
    elif kind == "outputs" and len(_io(case)["outputs"]) == 1:
        items = [(_io(case)["outputs"][0]["name"], tensors)]
    else:
        raise TypeError(f"{what}: expected a mapping of {kind[:-1]} name to array, got "
                        f"{type(tensors).__name__}")
    packed = []
    for name, x in items:
        if not isinstance(name, str):
            raise TypeError(f"{what}: expected names as str, got {name!r}")
        packed.append(_arrays.pack(name, x, f"{what}[{name!r}]"))
    torch_like = any(_arrays.is_torch(x) for _, x in items)
    return packed, torch_like


def _unpack_all(items, order, torch_like):
    arrays = dict(_arrays.unpack(i) for i in items)
    ordered = {n: arrays[n] for n in order if n in arrays}
    if torch_like:
        return {n: _arrays.to_torch(a) for n, a in ordered.items()}
    return ordered


def reference(op, inputs, format=None, **params):
    """The correctly rounded outputs of `op` (an op name with its parameters, a built-in case ID
    or a Case) on `inputs` (a mapping of input name to array, or the arrays in the op's input
    order), in `format` (default: the dtype of the first real input), as a dict of output name to
    array: NumPy arrays, or CPU torch tensors when the inputs are torch tensors."""
    case = _resolve(op, params, None, "lmoracle.reference")
    if format is not None and not isinstance(format, str):
        raise TypeError(f"lmoracle.reference: format: expected a format name, got {format!r}")
    packed, torch_like = _pack_all(case, inputs, "inputs", "inputs")
    items, _ = _progress.run(f"reference {case['op']}", _core.reference, json.dumps(case), packed,
                             format or "")
    return _unpack_all(items, [d["name"] for d in _io(case)["outputs"]], torch_like)


def case(op_or_case_id, format=None, seed=None, array="numpy", **params):
    """The inputs the oracle generates (those `lmoracle verify` gives every backend) for a
    built-in case ID, a Case, or an op with its parameters (seed 0 unless given), in storage
    format `format` (default: the case's first format; f32 for an op), as a dict of input name to
    array in the op's order; array="torch" gives CPU torch tensors."""
    if array not in ("numpy", "torch"):
        raise ValueError(f"lmoracle.case: array: expected 'numpy' or 'torch', got {array!r}")
    c = _resolve(op_or_case_id, params, seed, "lmoracle.case")
    fmt = format or c["formats"][0]
    if not isinstance(fmt, str):
        raise TypeError(f"lmoracle.case: format: expected a format name, got {fmt!r}")
    c["formats"] = [fmt]
    items = _progress.run(f"inputs of {c['id']}", _core.case_inputs, json.dumps(c), fmt)
    return _unpack_all(items, [d["name"] for d in _io(c)["inputs"]], array == "torch")


@dataclasses.dataclass
class OutputVerdict:
    """One output's verdict. worst_index is the element with the largest ulp error (None when no
    finite pair was compared); worst_expected is its correctly rounded reference, worst_exact its
    exact reference in decimal (21 significant digits; "" when there is no worst element)."""
    name: str
    format: str
    passed: bool
    failed: int
    elements: int
    worst_index: Optional[tuple]
    worst_actual: float
    worst_expected: float
    worst_ulps: int
    bound: str
    detail: str
    worst_exact: str = ""


@dataclasses.dataclass
class Verdict:
    """check()'s result: passed, and per output the failing count, the worst element and the
    bound. `report` is the text `lmoracle check` prints. diagnosis: the recipes ranked by how
    much of the outputs each explains, best first, as dicts {"recipe", "explained" (fraction of
    elements within that recipe's own bound: 1 when the outputs would pass under it),
    "correlation" (|Pearson| of the two error vectors per row, 0…1), "equal" (fraction of
    elements bit-equal to that recipe's simulated kernel)}; None when the check passed and
    diagnose was not asked. When the first explains less than 1, no recipe explains the errors
    (docs/recipes.md, Diagnosis)."""
    passed: bool
    case_id: str
    recipe: str
    outputs: dict
    report: str
    diagnosis: Optional[list] = None

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.report


def check(op, inputs, outputs, recipe="strict", seed=None, diagnose=False, **params):
    """Grades a kernel's `outputs` (a mapping of output name to array in the storage format it
    ran in, or the single output's array) with the op's tolerance policies, on `inputs` (the
    arrays the kernel read; None for a built-in case or seed: the oracle's generated inputs).
    Returns a Verdict."""
    if not isinstance(recipe, str):
        raise ValueError(f"lmoracle.check: recipe: expected a recipe text (one of "
                         f"{', '.join(RECIPES)}, or point=value,…), got {recipe!r}")
    c = _resolve(op, params, seed, "lmoracle.check")
    packed_out, _ = _pack_all(c, outputs, "outputs", "outputs")
    packed_in = None if inputs is None else _pack_all(c, inputs, "inputs", "inputs")[0]
    if inputs is None:
        # The judge regenerates the case's inputs in the outputs' format: name it the case's.
        # Outputs stored in a format of their own (fp8 quantization's q and scales) say nothing
        # of it: without another, the case keeps its own.
        fixed = {d["name"] for d in _io(c)["outputs"] if d.get("format")}
        real = [p[1] for p in packed_out if p[0] not in fixed and p[1] not in ("i64", "i32", "u8")]
        if real:
            c["formats"] = [real[0]]
    report_json, text = _progress.run(f"check {c['id']}", _core.check, json.dumps(c), packed_in,
                                      packed_out, recipe, diagnose)
    report = json.loads(report_json)
    shapes = {p[0]: p[2] for p in packed_out}
    outs = {}
    for o in report["outputs"]:
        w = o["worst_index"]
        index = None
        if w >= 0:
            index = tuple(int(i) for i in np.unravel_index(w, shapes[o["name"]]))
        outs[o["name"]] = OutputVerdict(o["name"], o["format"], o["pass"], o["failed"],
                                        o["elements"], index, o["worst_actual"],
                                        o["worst_expected"], o["worst_ulps"], o["bound"],
                                        o["detail"], o["worst_exact"])
    diagnosis = report["diagnosis"] or None
    return Verdict(report["pass"], report["case"], report["recipe"], outs, text, diagnosis)
