"""`python -m lmoracle.harness`: lmoracle.evaluate for an external executable (a compiled kernel,
another language, a sandboxed process) that reads its inputs from a safetensors file and writes
its outputs to one (docs/harness.md):

    python -m lmoracle.harness --exec './my_rmsnorm {inputs} {outputs}' --op rmsnorm \\
        --param rows=4 --param d=4096 --param eps=1e-5 --format bf16 --json

Each kernel call runs the command once, with {inputs} and {outputs} replaced by two file paths:

  {inputs}   the op's inputs by name (`lmoracle list` names them), in their storage format;
             __metadata__ holds "op", "format" and "params" (a JSON object: every parameter);
  {outputs}  exists when the command starts and holds every output by name, at its shape and
             dtype, filled with the harness's poison: the command overwrites the file (or
             writes into it in place); an element it leaves holding the poison is unwritten.

After the command exits 0 the outputs are read back (a missing tensor or a wrong dtype or shape
fails the trial) and the inputs file is read again (a command that wrote into it changed an
input). A command that exits non-zero or runs past --timeout fails the check that called it.

Exit codes: 0 every check passed, 1 a check failed, 2 bad usage or input (the message names the
option and what was expected). Text: one line per check; --json: the report as one JSON object;
--jsonl: one JSON object per check, then a summary line."""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

from . import _api
from .evaluate_api import CHECKS, DEFAULT_EXAMPLES, _Evaluation, DEFAULT_MAX_COST


class CommandFailed(Exception):
    pass


def _save(path, tensors, metadata):
    from safetensors.numpy import save_file
    save_file({n: np.ascontiguousarray(a) for n, a in tensors.items()}, path, metadata=metadata)


def _load(path):
    from safetensors.numpy import load_file
    return load_file(path)


class ExecKernel:
    """A kernel (protocol "out") that runs `command` on safetensors files; see the module's doc.
    op: the op name; timeout: seconds per run (None: no limit)."""

    def __init__(self, command, op, format, timeout=None):
        if not isinstance(command, str) or "{inputs}" not in command or \
                "{outputs}" not in command:
            raise ValueError(f"--exec: expected a command with {{inputs}} and {{outputs}} (the "
                             f"two safetensors paths), got {command!r}")
        self.command, self.op, self.format, self.timeout = command, op, format, timeout

    def __call__(self, *inputs, out, **params):
        case = {"id": "harness/" + self.op, "op": self.op, "seed": 0, "formats": [self.format],
                "params": params}
        io = _api._io(case)
        in_names = [d["name"] for d in io["inputs"]]
        out_names = [d["name"] for d in io["outputs"]]
        buffers = out if isinstance(out, tuple) else (out,)
        meta = {"op": self.op, "format": self.format, "params": json.dumps(params)}
        with tempfile.TemporaryDirectory(prefix="lmoracle-harness-") as d:
            in_path = os.path.join(d, "inputs.safetensors")
            out_path = os.path.join(d, "outputs.safetensors")
            _save(in_path, dict(zip(in_names, inputs)), meta)
            _save(out_path, dict(zip(out_names, buffers)), meta)
            cmd = self.command.replace("{inputs}", shlex.quote(in_path)).replace(
                "{outputs}", shlex.quote(out_path))
            try:
                r = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                                   timeout=self.timeout)
            except subprocess.TimeoutExpired:
                raise CommandFailed(f"the command ran past {self.timeout} s") from None
            if r.returncode != 0:
                tail = " ".join((r.stderr or r.stdout or "").split())[-200:]
                raise CommandFailed(f"the command exited {r.returncode}" +
                                    (f": {tail}" if tail else ""))
            try:
                got = _load(out_path)
                again = _load(in_path)
            except Exception as e:  # noqa: BLE001 — any reader error is a bad file
                raise CommandFailed(f"{{outputs}}: expected a safetensors file ({e})") from None
        for n, b in zip(out_names, buffers):
            if n not in got:
                raise CommandFailed(f"{{outputs}}: expected a tensor {n!r}, got "
                                    f"{sorted(got)}")
            a = got[n]
            if a.dtype != b.dtype or a.shape != b.shape:
                raise CommandFailed(f"{{outputs}}: {n!r}: expected {b.dtype} {list(b.shape)}, "
                                    f"got {a.dtype} {list(a.shape)}")
            np.copyto(b, a)
        for n, x in zip(in_names, inputs):
            y = again.get(n)
            if y is not None and y.shape == x.shape and y.dtype == x.dtype:
                np.copyto(x, y)  # what the command left in its inputs file: the input after
        return None


def _param(item):
    k, sep, v = item.partition("=")
    if not sep or not k:
        raise ValueError(f"--param: expected NAME=VALUE, got {item!r}")
    try:
        return k, json.loads(v)
    except json.JSONDecodeError:
        return k, v  # a string parameter (mask=window)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m lmoracle.harness",
        description="Evaluate an external kernel executable (safetensors in, safetensors out) "
                    "with lmoracle.evaluate's checks.")
    ap.add_argument("--exec", required=True, dest="command", metavar="CMD",
                    help="the command, with {inputs} and {outputs} (run by the shell)")
    ap.add_argument("--op", required=True, help="an op name or a built-in case ID")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a parameter (VALUE as JSON, else a string); repeat")
    ap.add_argument("--format", help="the storage format (default: the case's first)")
    ap.add_argument("--recipe", default="strict", help="the rounding recipe (default strict)")
    ap.add_argument("--checks", default=",".join(CHECKS),
                    help=f"comma-separated, among {','.join(CHECKS)} (default: all)")
    ap.add_argument("--trials", type=int, default=3, help="fresh-input trials (default 3)")
    ap.add_argument("--seed", type=int, help="the first trial's seed (default: the case's)")
    ap.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES,
                    help=f"Hypothesis examples of the shapes check (default {DEFAULT_EXAMPLES})")
    ap.add_argument("--batch-rows", type=int, help="batch_invariant's batch (default: 32)")
    ap.add_argument("--max-cost", type=float, default=DEFAULT_MAX_COST,
                    help="the shapes check's largest drawn case")
    ap.add_argument("--no-specials", action="store_true",
                    help="the shapes check draws no special values (±0, subnormals, ±max, ±inf, "
                         "NaN)")
    ap.add_argument("--timeout", type=float, help="seconds per command run")
    out = ap.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="the report as one JSON object")
    out.add_argument("--jsonl", action="store_true",
                     help="one JSON object per check, then a summary line")
    a = ap.parse_args(argv)
    try:
        params = dict(_param(p) for p in a.param)
        case = _api._resolve(a.op, params, None, "--op")
        fmt = a.format or case["formats"][0]
        kernel = ExecKernel(a.command, case["op"], fmt, a.timeout)
        if a.timeout is not None and a.timeout <= 0:
            raise ValueError(f"--timeout: expected seconds > 0, got {a.timeout}")
        ev = _Evaluation(kernel, a.op, a.checks, a.format, a.recipe, params, a.trials, a.seed,
                         "out", "numpy", None, a.examples, a.batch_rows, a.max_cost, None,
                         not a.no_specials)
    except (ValueError, TypeError) as e:
        print(f"lmoracle.harness: {e}", file=sys.stderr)
        return 2
    try:
        report = ev.run()
    except (ValueError, TypeError) as e:  # what only the judge reads: a recipe it does not know
        print(f"lmoracle.harness: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(report.to_json())
    elif a.jsonl:
        for c in report.checks.values():
            print(json.dumps(c.to_dict(), ensure_ascii=False))
        summary = report.to_dict()
        summary.pop("checks")
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(report)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
