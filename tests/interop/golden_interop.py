"""Golden files read from Python, against values computed here independently.
`lmoracle golden` writes the golden files of a few cases (every storage format the project has,
fp8 included); this script loads each with Python's safetensors package (the format's reference
implementation) and NumPy/ml_dtypes, and checks
  1. the manifest: one entry per case, file names, SHA-256 of each file (hashlib);
  2. the metadata: the case JSON is the case written, the policy names the op's outputs, the
     version and the reference precision are present;
  3. every value: out.<name>.<format> is the exact result (mpmath, 60 digits, from the file's
     in.<name> converted to <format> with round-to-nearest-even) correctly rounded to <format>
     by this script's own rounding (subnormals, ties to even, overflow), bit for bit, and
     out.<name>.f64 likewise from in.<name> itself;
  4. a second run with 1 thread and a sharded run (3 shards, merged) give the same bytes;
  5. the README's workflow for a Python kernel: outputs saved with safetensors.numpy.save_file
     as out.<name> are graded by `lmoracle check` (a careful GELU passes, exit 0; the tanh
     approximation in its place fails, exit 1; --json reports the worst element).
Usage: golden_interop.py PATH/TO/lmoracle"""
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import mpmath
import numpy as np
import safetensors
import safetensors.numpy

LMORACLE = sys.argv[1]
mpmath.mp.dps = 60

# format -> (precision p incl. the implicit bit, minimum normal exponent, max finite, has inf,
#            NumPy dtype). Values are x = m · 2^e with 2^(p-1) ≤ m < 2^p for normals.
FORMATS = {
    "f64": (53, -1022, float(np.finfo(np.float64).max), True, np.dtype(np.float64)),
    "f32": (24, -126, float(np.finfo(np.float32).max), True, np.dtype(np.float32)),
    "bf16": (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), True,
             np.dtype(ml_dtypes.bfloat16)),
    "f16": (11, -14, 65504.0, True, np.dtype(np.float16)),
    "e4m3": (4, -6, 448.0, False, np.dtype(ml_dtypes.float8_e4m3fn)),
    "e5m2": (3, -14, 57344.0, True, np.dtype(ml_dtypes.float8_e5m2)),
}
ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
             "BF16": ml_dtypes.bfloat16, "F8_E4M3": ml_dtypes.float8_e4m3fn,
             "F8_E5M2": ml_dtypes.float8_e5m2, "I64": np.int64, "I32": np.int32, "U8": np.uint8}

CASES = {"cases": [
    {"id": "py/rmsnorm", "op": "rmsnorm", "seed": 11, "formats": ["bf16", "f32", "f16"],
     "params": {"rows": 3, "d": 48, "eps": 1e-6}},
    {"id": "py/gelu", "op": "gelu", "seed": 12, "formats": ["f32", "bf16", "f16", "e4m3", "e5m2"],
     "params": {"n": 200}},
    {"id": "py/silu", "op": "silu", "seed": 13, "formats": ["f16", "bf16"], "params": {"n": 150}},
    {"id": "py/softmax", "op": "softmax", "seed": 14, "formats": ["f32", "bf16"],
     "params": {"rows": 2, "n": 60}},
]}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def round_to(v, fmt):
    """The mpf v correctly rounded to fmt (ties to even), as a Python float (exact)."""
    p, emin, fmax, has_inf, _ = FORMATS[fmt]
    if mpmath.isnan(v):
        return float("nan")
    if mpmath.isinf(v):
        return float(v) if has_inf else float("nan")
    if v == 0:
        return 0.0  # the sign of an exact zero is not at stake in these ops
    sign = -1 if v < 0 else 1
    a = abs(v)
    e = max(int(mpmath.floor(mpmath.log(a, 2))), emin)
    # floor(log2) may be off by one near powers of two: settle it exactly.
    while e > emin and a < mpmath.ldexp(1, e):
        e -= 1
    while a >= mpmath.ldexp(1, e + 1):
        e += 1
    quantum = mpmath.ldexp(1, e - p + 1)  # the spacing at a (subnormal spacing below emin)
    scaled = a / quantum
    lo = mpmath.floor(scaled)
    rest = scaled - lo
    m = lo + 1 if rest > 0.5 or (rest == 0.5 and int(lo) % 2 == 1) else lo
    r = m * quantum
    if r > fmax:
        # Beyond the largest finite value after rounding: infinity, or NaN without one.
        return sign * float("inf") if has_inf else float("nan")
    return sign * float(r)


def bits_of(values, fmt):
    """Floats exactly representable in fmt, encoded as fmt's bytes (exact conversions only)."""
    return np.array(values, dtype=np.float64).astype(FORMATS[fmt][4]).tobytes()


def load(path):
    """Tensors (NumPy arrays in their dtypes) and metadata, through the safetensors package."""
    data = open(path, "rb").read()
    out = {}
    for name, v in safetensors.deserialize(data):
        dtype = np.dtype(ST_DTYPES[v["dtype"]])
        out[name] = np.frombuffer(bytes(v["data"]), dtype=dtype).reshape(v["shape"])
    with safetensors.safe_open(path, framework="np") as f:
        meta = f.metadata()
    return out, meta


def exact(op, params, inputs):
    """The exact outputs (mpf lists, row-major) of op on inputs (float64 arrays)."""
    if op in ("gelu", "silu"):
        xs = [mpmath.mpf(float(v)) for v in inputs["x"].ravel()]
        if op == "gelu":
            return {"y": [x / 2 * (1 + mpmath.erf(x / mpmath.sqrt(2))) for x in xs]}
        return {"y": [x / (1 + mpmath.exp(-x)) for x in xs]}
    if op == "rmsnorm":
        rows, d = params["rows"], params["d"]
        x = inputs["x"].reshape(rows, d)
        g = [mpmath.mpf(float(v)) for v in inputs["gamma"]]
        eps = mpmath.mpf(float(params["eps"]))
        y = []
        for r in range(rows):
            row = [mpmath.mpf(float(v)) for v in x[r]]
            inv = 1 / mpmath.sqrt(mpmath.fsum(v * v for v in row) / d + eps)
            y += [row[i] * inv * g[i] for i in range(d)]
        return {"y": y}
    if op == "softmax":
        rows, n = params["rows"], params["n"]
        z = inputs["z"].reshape(rows, n)
        p = []
        for r in range(rows):
            e = [mpmath.exp(mpmath.mpf(float(v))) for v in z[r]]
            s = mpmath.fsum(e)
            p += [v / s for v in e]
        return {"p": p}
    raise ValueError(op)


def check_file(folder, case, entry):
    path = os.path.join(folder, entry["file"])
    tensors, meta = load(path)
    cid = case["id"]
    check(json.loads(meta["case"]) == case, f"{cid}: metadata case {meta['case']}")
    check(meta["input_format"] == case["formats"][0], f"{cid}: input_format {meta}")
    check("50 decimal digits" in meta["reference"], f"{cid}: reference {meta['reference']}")
    check(meta["version"] != "", f"{cid}: version")
    policy = json.loads(meta["policy"])
    first = case["formats"][0]
    inputs = {k[3:]: v for k, v in tensors.items() if k.startswith("in.")}
    for name, a in inputs.items():
        check(a.dtype == FORMATS[first][4], f"{cid}: in.{name} dtype {a.dtype}, expected {first}")
    given = {k: v.astype(np.float64) for k, v in inputs.items()}
    runs = {"f64": exact(case["op"], case["params"], given)}
    checked = 0
    for fmt in case["formats"]:
        # The inputs a kernel storing fmt reads: the file's inputs rounded to fmt.
        conv = {k: np.array([round_to(mpmath.mpf(float(x)), fmt) for x in v.ravel()])
                for k, v in given.items()}
        runs[fmt] = exact(case["op"], case["params"], conv)
    for fmt, outs in runs.items():
        for name, values in outs.items():
            key = f"out.{name}.{fmt}"
            check(key in tensors, f"{cid}: {key} missing (has {sorted(tensors)})")
            if key not in tensors:
                continue
            check(name in policy and "kind" in policy[name], f"{cid}: policy of {name}")
            got = tensors[key]
            check(got.dtype == FORMATS[fmt][4], f"{cid}: {key} dtype {got.dtype}")
            want = bits_of([round_to(v, fmt) for v in values], fmt)
            if got.tobytes() != want:
                g = got.ravel().astype(np.float64)
                w = np.frombuffer(want, dtype=FORMATS[fmt][4]).astype(np.float64)
                bad = [i for i in range(len(g)) if g[i].tobytes() != w[i].tobytes()]
                check(False, f"{cid}: {key}: {len(bad)} elements differ, first {bad[0]}: "
                             f"file {g[bad[0]]!r}, mpmath {w[bad[0]]!r}")
            checked += got.size
    expected_keys = {f"in.{k}" for k in inputs} | {f"out.{n}.{f}" for f in runs for n in runs[f]}
    check(set(tensors) == expected_keys, f"{cid}: tensors {sorted(tensors)}")
    return checked


def python_kernel_check(folder):
    """A user's GELU kernel (f32 storage) on the golden inputs, graded by lmoracle check."""
    golden_file = os.path.join(folder, "py+gelu.safetensors")
    with safetensors.safe_open(golden_file, framework="np") as f:
        x = f.get_tensor("in.x")  # f32, the case's first format
    check(x.dtype == np.float32, f"in.x dtype {x.dtype}")
    # x·Φ(x) with Φ through erfc: 1 + erf(x/√2) cancels for negative x (the oracle flags that
    # form: at x ≈ −7 it is 1390 f32 ulps off).
    erfc = np.vectorize(math.erfc)
    careful = x.astype(np.float64) * 0.5 * erfc(-x.astype(np.float64) / math.sqrt(2))
    c = 0.7978845608028654  # sqrt(2/pi): the tanh approximation is not GELU
    approx = 0.5 * x * (1 + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))
    results = {}
    for name, y in (("careful", careful), ("approx", approx)):
        actual = os.path.join(folder, f"{name}.safetensors")
        safetensors.numpy.save_file({"out.y": y.astype(np.float32)}, actual)
        r = subprocess.run([LMORACLE, "check", "--json", "--golden", golden_file, "--actual",
                            actual], capture_output=True, text=True)
        results[name] = (r.returncode, json.loads(r.stdout) if r.stdout else r.stderr)
    code, report = results["careful"]
    check(code == 0 and report["pass"], f"careful GELU: exit {code}, {report}")
    code, report = results["approx"]
    check(code == 1 and not report["pass"], f"tanh-approximate GELU: exit {code}, {report}")
    if code == 1:
        y = report["outputs"][0]
        check(y["name"] == "y" and y["format"] == "f32" and y["failed"] > 0 and
              y["worst_ulps"] > 4, f"tanh-approximate GELU report: {y}")
        print(f"python kernel: careful GELU passes; tanh approximation fails "
              f"({y['failed']} of {y['elements']} elements, worst {y['worst_ulps']} ulp)")


def golden(*args):
    r = subprocess.run([LMORACLE, "golden", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"lmoracle golden {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def tree_bytes(folder, names):
    return {n: open(os.path.join(folder, n), "rb").read() for n in names}


def main():
    print(f"safetensors {safetensors.__version__}, mpmath {mpmath.__version__}, "
          f"numpy {np.__version__}")
    np.seterr(invalid="ignore", over="ignore")
    with tempfile.TemporaryDirectory() as tmp:
        case_file = os.path.join(tmp, "cases.json")
        with open(case_file, "w") as f:
            json.dump(CASES, f)
        out = os.path.join(tmp, "golden")
        golden("--case-file", case_file, "--out", out)
        manifest = json.load(open(os.path.join(out, "manifest.json")))
        by_id = {c["id"]: c for c in CASES["cases"]}
        check(sorted(e["case"] for e in manifest["files"]) == sorted(by_id), "manifest cases")
        elements = 0
        names = ["manifest.json"]
        for entry in manifest["files"]:
            data = open(os.path.join(out, entry["file"]), "rb").read()
            check(hashlib.sha256(data).hexdigest() == entry["sha256"], f"{entry['file']}: sha256")
            check(entry["file"] == entry["case"].replace("/", "+") + ".safetensors",
                  f"file name {entry['file']}")
            elements += check_file(out, by_id[entry["case"]], entry)
            names.append(entry["file"])
        print(f"{len(manifest['files'])} golden files, {elements} output elements checked "
              "against mpmath")

        # The same bytes from one thread, and from three shards merged.
        env_out = os.path.join(tmp, "one_thread")
        golden("--case-file", case_file, "--out", env_out, "--threads", "1")
        check(tree_bytes(env_out, names) == tree_bytes(out, names), "one-thread run differs")
        shards = [os.path.join(tmp, f"shard{i}") for i in range(3)]
        for i, d in enumerate(shards):
            golden("--case-file", case_file, "--out", d, "--shard", f"{i}/3")
        golden("--merge", *shards)
        check(tree_bytes(shards[0], names) == tree_bytes(out, names), "3 shards merged differ")
        python_kernel_check(out)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
