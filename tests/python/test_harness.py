"""python -m lmoracle.harness: lmoracle.evaluate for an external executable that reads its inputs
from a safetensors file and writes its outputs to one; JSON report, exit codes 0 / 1 / 2."""
import json
import os
import subprocess
import sys

import pytest

# The external kernel, as a contest entry would be written: safetensors in, safetensors out,
# the parameters from the inputs file's metadata. MODE picks its behaviour.
KERNEL = r'''
import json, sys
import ml_dtypes  # noqa: F401 (NumPy reads bf16 through it)
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

inputs, outputs, mode = sys.argv[1], sys.argv[2], sys.argv[3]
with safe_open(inputs, "np") as f:
    params = json.loads(f.metadata()["params"])
t = load_file(inputs)
x, gamma = t["x"], t["gamma"]
xf = x.astype(np.float32)
with np.errstate(all="ignore"):  # rows beyond 2^50 scaled by a power of two: finite squares
    amax = np.max(np.abs(xf), axis=-1, keepdims=True)
    big = np.isfinite(amax) & (amax > np.float32(2.0**50))
    s = np.where(big, np.exp2(-np.floor(np.log2(np.where(big, amax, 1)))), 1).astype(np.float32)
    xs = xf * s
    ms = np.mean(xs * xs, axis=-1, keepdims=True, dtype=np.float32)
    y = xs / np.sqrt(ms + np.float32(params["eps"]) * s * s) * gamma.astype(np.float32)
y = y.astype(x.dtype)
if mode == "zeros":
    y = np.zeros_like(y)
if mode == "crash":
    print("segmentation fault (core dumped)", file=sys.stderr)
    sys.exit(139)
if mode == "skip":          # fills the file it was given, all but the last row
    given = load_file(outputs)["y"]
    given[:-1] = y[:-1]
    y = given
if mode == "inplace":       # leaves its normalized x in the inputs file
    save_file({"x": y, "gamma": gamma}, inputs, metadata={"params": json.dumps(params)})
if mode == "noname":
    save_file({"out": y}, outputs)
    sys.exit(0)
save_file({"y": y}, outputs)
'''


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    return lambda mode: f"{sys.executable} {path} {{inputs}} {{outputs}} {mode}"


def harness(*args):
    return subprocess.run([sys.executable, "-m", "lmoracle.harness", "--op", "rmsnorm",
                           "--param", "rows=4", "--param", "d=64", "--param", "eps=1e-6",
                           "--format", "bf16", "--seed", "5", *args],
                          capture_output=True, text=True, env=dict(os.environ))


def test_a_correct_executable_passes_every_check(kernel):
    r = harness("--exec", kernel("correct"), "--examples", "2", "--trials", "1", "--batch-rows",
                "4", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["passed"] is True
    assert list(report["checks"]) == ["correct", "unwritten", "inputs_unchanged",
                                      "deterministic", "batch_invariant", "shapes"]
    assert all(c["passed"] and c["applicable"] for c in report["checks"].values())


@pytest.mark.parametrize("mode, check, words", [
    ("zeros", "correct", "elements fail"),
    ("skip", "unwritten", "64 of 256 elements never written"),
    ("inplace", "inputs_unchanged", "input 'x' was changed"),
    ("crash", "correct", "exited 139: segmentation fault"),
    ("noname", "correct", "expected a tensor 'y'"),
])
def test_a_gaming_or_broken_executable_fails_with_exit_1(kernel, mode, check, words):
    r = harness("--exec", kernel(mode), "--checks", "correct,unwritten,inputs_unchanged",
                "--trials", "1", "--jsonl")
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(lines) == 4 and lines[-1]["passed"] is False  # one line per check, a summary
    by = {line["check"]: line for line in lines[:-1]}
    assert by[check]["passed"] is False and words in by[check]["detail"], by[check]


def test_text_output_is_one_line_per_check(kernel):
    r = harness("--exec", kernel("zeros"), "--checks", "correct,deterministic", "--trials", "1")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("FAIL correct") and lines[1].startswith("PASS deterministic")
    assert lines[2].startswith("evaluate py/rmsnorm [bf16, recipe strict]: FAILED")


@pytest.mark.parametrize("args, words", [
    (["--exec", "true {inputs}"], "--exec: expected a command with {inputs} and {outputs}"),
    (["--exec", "true {inputs} {outputs}", "--param", "rows"], "--param: expected NAME=VALUE"),
    (["--exec", "true {inputs} {outputs}", "--checks", "correct,fast"], "checks: expected"),
    (["--exec", "true {inputs} {outputs}", "--param", "d=0"], "d"),
    (["--exec", "true {inputs} {outputs}", "--trials", "0"], "trials"),
    (["--exec", "true {inputs} {outputs}", "--format", "int4"], "format"),
    (["--exec", "python3 -c pass {inputs} {outputs}", "--checks", "correct", "--recipe",
      "no-such-recipe"], "recipe"),
])
def test_bad_usage_exits_2_naming_the_field(args, words):
    r = harness(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr and r.stdout == "", r.stderr


def test_an_unknown_op_exits_2():
    r = subprocess.run([sys.executable, "-m", "lmoracle.harness", "--op", "rmsnorn", "--exec",
                        "true {inputs} {outputs}"], capture_output=True, text=True)
    assert r.returncode == 2 and "op: expected an op name" in r.stderr, r.stderr
