"""lmoracle.evaluate: the oracle's judge with the guards a pipeline of generated kernels needs
(docs/harness.md). A kernel is called on fresh inputs each trial and must be

  correct           judged by lmoracle.check under the declared recipe; the inputs of trial t are
                    the oracle's draws of seed + t, the expected values computed only after the
                    kernel returned;
  unwritten         every output element written: buffers are poisoned (a NaN, then a random
                    finite value) and an element holding the poison of both runs fails;
  inputs_unchanged  every input's bytes identical before and after, and no output sharing an
                    input's memory;
  deterministic     the same inputs twice give the same bits;
  batch_invariant   for an op with independent rows (its record's batch axis): each row computed
                    alone, inside a batch and in a permuted batch gives the same bits, and the
                    batch is correct;
  shapes            correct on Hypothesis-drawn shapes and parameters (lmoracle.strategies), the
                    failure shrunk to a minimal case that replays with evaluate(kernel, case).

evaluate() computes and judges nothing itself: the inputs and the verdicts are the C++ oracle's
(lmoracle.case, lmoracle.check); this file schedules the calls and compares bits."""
import dataclasses
import json
import time
from typing import Optional

import numpy as np

from . import _api, _arrays, _core
from .evaluate_guards import Caller, KernelError, Poison, aliases, digest, to_numpy_copy

CHECKS = ("correct", "unwritten", "inputs_unchanged", "deterministic", "batch_invariant",
          "shapes")


@dataclasses.dataclass
class CheckResult:
    """One check's result. passed: True where it passed or does not apply (applicable False,
    detail saying why); detail: one line, the reason on a failure. replay: for shapes, the
    failing case (a case-file object: evaluate(kernel, lmoracle.Case.from_source(replay))
    runs it again) ; calls: the kernel calls the check made; seconds: its wall time."""
    name: str
    passed: bool
    detail: str
    applicable: bool = True
    calls: int = 0
    seconds: float = 0.0
    replay: Optional[dict] = None

    def to_dict(self):
        d = {"check": self.name, "passed": self.passed, "applicable": self.applicable,
             "detail": self.detail, "calls": self.calls, "seconds": round(self.seconds, 4)}
        if self.replay is not None:
            d["replay"] = self.replay
        return d

    def line(self):
        state = "PASS" if self.passed and self.applicable else "N/A " if self.passed else "FAIL"
        return f"{state} {self.name:<16} {self.detail}"


@dataclasses.dataclass
class Report:
    """evaluate()'s result: `passed` (every selected check passed or does not apply) and
    `checks[name]` (CheckResult), in the order the checks ran."""
    op: str
    case_id: str
    format: str
    recipe: str
    seed: int
    trials: int
    checks: dict
    seconds: float = 0.0

    @property
    def passed(self):
        return all(c.passed for c in self.checks.values())

    def __bool__(self):
        return self.passed

    def to_dict(self):
        return {"op": self.op, "case": self.case_id, "format": self.format,
                "recipe": self.recipe, "seed": self.seed, "trials": self.trials,
                "passed": self.passed, "seconds": round(self.seconds, 4),
                "checks": {n: c.to_dict() for n, c in self.checks.items()}}

    def to_json(self, indent=None):
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def __str__(self):
        lines = [c.line() for c in self.checks.values()]
        n_fail = sum(not c.passed for c in self.checks.values())
        lines.append(f"evaluate {self.case_id} [{self.format}, recipe {self.recipe}]: "
                     f"{'passed' if self.passed else 'FAILED'} ({len(self.checks) - n_fail} "
                     f"passed, {n_fail} failed, {self.seconds:.2f} s)")
        return "\n".join(lines)


class _Failure(Exception):
    """A check's failure, its one-line reason."""


def _hex(a, i):
    return "0x" + a.reshape(-1)[i:i + 1].tobytes()[::-1].hex()


def _first_difference(name, a, b, what_a, what_b):
    """None where a and b hold the same bits, else a one-line description of the first element
    that differs."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"output {name!r}: {what_a} is {a.dtype} {list(a.shape)}, {what_b} " \
               f"{b.dtype} {list(b.shape)}"
    ua, ub = (x.reshape(-1).view(np.dtype(f"u{x.dtype.itemsize}")) for x in (a, b))
    diff = np.flatnonzero(ua != ub)
    if diff.size == 0:
        return None
    i = int(diff[0])
    idx = tuple(int(v) for v in np.unravel_index(i, a.shape)) if a.ndim else ()
    return (f"output {name!r}: {diff.size} of {a.size} elements differ; first at {idx}: "
            f"{what_a} {_value(a, i)} ({_hex(a, i)}), {what_b} {_value(b, i)} ({_hex(b, i)})")


def _value(a, i):
    v = a.reshape(-1)[i]
    try:
        return repr(float(v)) if a.dtype.kind not in "iu" else repr(int(v))
    except (TypeError, ValueError):
        return repr(v)


class _Evaluation:
    def __init__(self, kernel, op, checks, format, recipe, params, trials, seed, protocol,
                 array, device, examples, batch_rows, max_cost, fixed, specials=True):
        self.base = _api._resolve(op, dict(params or {}), None, "lmoracle.evaluate")
        if format is not None and not isinstance(format, str):
            raise TypeError(f"lmoracle.evaluate: format: expected a format name, got {format!r}")
        self.format = format or self.base["formats"][0]
        floats = [n for n, d in _arrays.NUMPY_DTYPES.items() if d.kind not in "iu"]
        if self.format not in floats:
            raise ValueError(f"lmoracle.evaluate: format: expected one of {', '.join(floats)}, "
                             f"got {self.format!r}")
        self.base["formats"] = [self.format]
        _core.validate(json.dumps(self.base))  # ValueError naming the parameter
        if not isinstance(recipe, str):
            raise ValueError(f"lmoracle.evaluate: recipe: expected a recipe text, got {recipe!r}")
        # Refused before any kernel runs (ValueError naming the valid names), not at the first
        # judgement after it.
        _core.validate_recipe(json.dumps(self.base), recipe)
        self.recipe = recipe
        if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
            raise ValueError(f"lmoracle.evaluate: trials: expected an integer ≥ 1, got {trials!r}")
        self.trials = trials
        if seed is None:
            seed = int(self.base.get("seed", 0))
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"lmoracle.evaluate: seed: expected an integer ≥ 0, got {seed!r}")
        self.seed = int(seed)
        self.caller = Caller(kernel, protocol, array, device)
        self.examples, self.batch_rows, self.max_cost = examples, batch_rows, max_cost
        self.batch_max_cost = DEFAULT_BATCH_MAX_COST
        if batch_rows is not None and (isinstance(batch_rows, bool) or
                                       not isinstance(batch_rows, int) or batch_rows < 2):
            raise ValueError(f"lmoracle.evaluate: batch_rows: expected an integer ≥ 2, got "
                             f"{batch_rows!r}")
        if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
            raise ValueError(f"lmoracle.evaluate: examples: expected an integer ≥ 1, got "
                             f"{examples!r}")
        self.fixed = fixed
        self.specials = bool(specials)
        self.user_params = dict(params or {})
        if checks is None:
            checks = CHECKS
        elif isinstance(checks, str):
            checks = [c.strip() for c in checks.split(",") if c.strip()]
        unknown = [c for c in checks if c not in CHECKS]
        if unknown or not checks:
            raise ValueError(f"lmoracle.evaluate: checks: expected names among "
                             f"{', '.join(CHECKS)}, got {list(checks)!r}")
        self.checks = [c for c in CHECKS if c in checks]
        self.calls = 0

    # ---- one case -----------------------------------------------------------------------
    def case_with(self, seed, **params):
        c = json.loads(json.dumps(self.base))
        c["seed"] = int(seed)
        c.setdefault("params", {}).update(params)
        return c

    @staticmethod
    def io(case):
        return json.loads(_core.op_io(json.dumps(case)))

    def expected(self, io):
        return {d["name"]: (d.get("format") or self.format, d["shape"]) for d in io["outputs"]}

    def inputs(self, case):
        return _api.case(_api.Case.from_source(case), format=self.format)

    def call(self, case, io, inputs, poison):
        self.calls += 1
        return self.caller.call(io, inputs, case.get("params", {}), poison, self.expected(io))

    def judge(self, case, inputs, outputs, where):
        v = _api.check(_api.Case.from_source(case), inputs, outputs, recipe=self.recipe)
        if v.passed:
            return
        for o in v.outputs.values():
            if not o.passed:
                head = f"{where}: output {o.name!r}: {o.failed} of {o.elements} elements fail"
                if o.worst_index is not None and o.worst_ulps:
                    head += (f"; worst {o.worst_ulps} ulp at {o.worst_index}: "
                             f"{o.worst_actual!r}, correctly rounded {o.worst_expected!r}")
                first = f"; first: {' '.join(o.detail.split())}" if o.detail else ""
                raise _Failure(f"{head}{first}; allowed: {' '.join(o.bound.split())}")
        raise _Failure(f"{where}: {' '.join(v.report.split())}")

    # ---- the trials: correct, unwritten, inputs_unchanged, deterministic ----------------
    def run_trials(self, results):
        wanted = [c for c in ("correct", "unwritten", "inputs_unchanged", "deterministic")
                  if c in self.checks]
        if not wanted:
            return
        twice = "unwritten" in wanted or "deterministic" in wanted
        failed = {}
        calls = {c: 0 for c in wanted}
        spent = {c: 0.0 for c in wanted}
        rng = np.random.default_rng([self.seed, 0x51])
        for t in range(self.trials):
            seed = self.seed + t
            case = self.case_with(seed)
            where = f"trial {t} (seed {seed})"
            io = self.io(case)
            inputs = self.inputs(case)
            before = {n: digest(a) for n, a in inputs.items()}
            runs = []
            t0 = time.perf_counter()
            try:
                for r in range(2 if twice else 1):
                    poison = Poison(r, rng)
                    outs, given, objects = self.call(case, io, inputs, poison)
                    runs.append((poison, outs))
                    if "inputs_unchanged" in wanted and "inputs_unchanged" not in failed:
                        reason = self.changed_inputs(before, given, objects)
                        if reason:
                            failed["inputs_unchanged"] = f"{where}: {reason}"
            except KernelError as e:
                for c in wanted:
                    failed.setdefault(c, f"{where}: {e}")
                break
            elapsed = time.perf_counter() - t0
            for c in wanted:
                calls[c] += len(runs)
                spent[c] += elapsed / len(wanted)
            if "unwritten" in wanted and "unwritten" not in failed:
                reason = self.unwritten(runs)
                if reason:
                    failed["unwritten"] = f"{where}: {reason}"
            if "deterministic" in wanted and "deterministic" not in failed:
                for n in runs[0][1]:
                    d = _first_difference(n, runs[1][1][n], runs[0][1][n], "second run",
                                          "first run")
                    if d:
                        failed["deterministic"] = f"{where}: the same inputs twice: {d}"
                        break
            if "correct" in wanted and "correct" not in failed:
                t0 = time.perf_counter()
                try:  # the expected values: computed now, after the kernel returned
                    self.judge(case, inputs, runs[0][1], where)
                except _Failure as e:
                    failed["correct"] = str(e)
                spent["correct"] += time.perf_counter() - t0
            if len(failed) == len(wanted):
                break
        passes = {"correct": f"{self.trials} trials (seeds {self.seed}..{self.seed + self.trials - 1}) "
                             f"pass under recipe {self.recipe}",
                  "unwritten": "every output element written (NaN and canary poison)",
                  "inputs_unchanged": "every input's bytes unchanged; no output aliases an input",
                  "deterministic": "the same inputs twice: the same bits"}
        for c in wanted:
            results[c] = CheckResult(c, c not in failed, failed.get(c, passes[c]),
                                     calls=calls[c], seconds=spent[c])

    @staticmethod
    def changed_inputs(before, given, objects):
        for o, y in objects.items():
            for n, x in given.items():
                if aliases(y, x):
                    return f"output {o!r} is input {n!r}'s buffer (shares its memory)"
        for n, x in given.items():
            after = digest(to_numpy_copy(x, f"input {n!r}"))
            if after != before[n]:
                return f"input {n!r} was changed by the kernel (its bytes differ after the call)"
        return None

    @staticmethod
    def unwritten(runs):
        (p0, o0), (p1, o1) = runs[0], runs[1]
        for n, a in o0.items():
            name = _dtype_name(a)
            if name is None:
                continue
            mask = p0.unwritten(name, a) & p1.unwritten(name, o1[n])
            if mask.any():
                idx = np.argwhere(mask)[0]
                return (f"output {n!r}: {int(mask.sum())} of {a.size} elements never written "
                        f"(they hold the harness's poison in both runs); first at "
                        f"{tuple(int(i) for i in idx)}")
        return None

    # ---- batch invariance ---------------------------------------------------------------
    def row_param(self, case, rows):
        """The integer parameter that sets the op's row count, or None."""
        for k, v in case.get("params", {}).items():
            if isinstance(v, bool) or not isinstance(v, int) or v != rows:
                continue
            trial = json.loads(json.dumps(case))
            trial["params"][k] = 1
            try:
                _core.validate(json.dumps(trial))
                if self.io(trial).get("rows") == 1:
                    return k
            except ValueError:
                continue
        return None

    def batch_invariant(self):
        t0 = time.perf_counter()
        calls0 = self.calls
        res = lambda ok, detail, applicable=True: CheckResult(  # noqa: E731
            "batch_invariant", ok, detail, applicable, self.calls - calls0,
            time.perf_counter() - t0)
        case = self.case_with(self.seed + self.trials)
        io = self.io(case)
        if "rows" not in io:
            return res(True, "not applicable: this build's op record names no batch axis "
                             "(lmoracle._core.op_io has no \"rows\")", False)
        rows = int(io["rows"])
        if rows <= 0:
            return res(True, f"not applicable: op {case['op']} has no independent rows (its "
                             f"record names no batch axis)", False)
        key = self.row_param(case, rows)
        if key is None:
            return res(True, f"not applicable: no parameter of op {case['op']} sets its "
                             f"{rows} rows", False)
        batch = self.batch_rows or max(rows, 32)
        case = self.case_with(self.seed + self.trials, **{key: batch})
        io = self.io(case)
        while io["cost"] > self.batch_max_cost and batch > 2:
            batch //= 2
            case = self.case_with(self.seed + self.trials, **{key: batch})
            io = self.io(case)
        if batch < 2:
            return res(True, "not applicable: a batch of one row", False)
        row_inputs = {d["name"] for d in io["inputs"] if d.get("row_input")}
        inputs = self.inputs(case)
        poison = Poison(0, np.random.default_rng([self.seed, 0xB1]))
        where = f"batch of {batch} rows (seed {case['seed']})"
        try:
            full, _, _ = self.call(case, io, inputs, poison)
            self.judge(case, inputs, full, where)
            rng = np.random.default_rng([self.seed, 0xB2])
            picks = list(range(batch)) if batch <= 8 else \
                sorted({0, batch - 1, *rng.choice(batch, 6, replace=False).tolist()})
            one = self.case_with(self.seed + self.trials, **{key: 1})
            one_io = self.io(one)
            for i in picks:
                alone = {n: (a[i:i + 1] if n in row_inputs else a) for n, a in inputs.items()}
                out, _, _ = self.call(one, one_io, alone, poison)
                for n, a in out.items():
                    d = _first_difference(n, a, full[n][i:i + 1], f"row {i} alone",
                                          f"in the {where}")
                    if d:
                        return res(False, d)
            perm = rng.permutation(batch)
            shuffled = {n: (a[perm] if n in row_inputs else a) for n, a in inputs.items()}
            out, _, _ = self.call(case, io, shuffled, poison)
            for n, a in out.items():
                d = _first_difference(n, a, full[n][perm], "in a permuted batch",
                                      f"in the {where} (rows as permuted)")
                if d:
                    return res(False, d)
        except (KernelError, _Failure) as e:
            return res(False, str(e))
        return res(True, f"rows {picks} alone, the {where} and a permuted batch: the same "
                         f"bits, and the batch correct")

    # ---- shapes ---------------------------------------------------------------------------
    def shapes(self):
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hypothesis_seed
        from hypothesis.errors import Unsatisfiable

        from . import strategies

        t0 = time.perf_counter()
        calls0 = self.calls
        op = self.base["op"]
        fixed = {k: v for k, v in self.user_params.items()
                 if not isinstance(v, int) or isinstance(v, bool)}
        fixed.update(self.fixed or {})
        examples = self.examples
        last = {}
        tried = [0]

        def one(case):
            tried[0] += 1
            source = case.source
            io = self.io(source)
            inputs = _api.case(case)
            where = f"case {json.dumps(source['params'], sort_keys=True)} seed " \
                    f"{source['seed']} [{self.format}]" + \
                    (" with special values" if source.get("inputs") else "")
            try:
                out, _, _ = self.call(source, io, inputs, Poison(0, None))
                self.judge(source, inputs, out, where)
            except (KernelError, _Failure) as e:
                last["case"], last["reason"] = source, str(e) if isinstance(e, _Failure) \
                    else f"{where}: {e}"
                raise _Failure(last["reason"]) from None

        done = lambda ok, detail, applicable=True, replay=None: CheckResult(  # noqa: E731
            "shapes", ok, detail, applicable, self.calls - calls0, time.perf_counter() - t0,
            replay)
        if not _api.cases(op=op):
            return done(True, f"not applicable: op {op} has no built-in case for the strategies "
                              f"to draw around", False)
        test = given(strategies.cases(op, formats=[self.format], fixed=fixed,
                                      max_cost=self.max_cost, specials=self.specials))(one)
        test = settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                        print_blob=False, report_multiple_bugs=False,
                        suppress_health_check=list(HealthCheck))(test)
        test = hypothesis_seed(self.seed)(test)
        try:
            test()
        except _Failure:
            return done(False, f"{last['reason']} (shrunk by Hypothesis, seed {self.seed}; "
                               f"replay: evaluate(kernel, lmoracle.Case.from_source(replay)))",
                        replay=last["case"])
        except Unsatisfiable:
            return done(True, f"not applicable: no drawn case of {op} is valid with "
                              f"{json.dumps(fixed, sort_keys=True)} fixed", False)
        except Exception:  # noqa: BLE001 — Hypothesis's Flaky: a failure that did not replay
            if "reason" not in last:
                raise
            return done(False, f"{last['reason']} (did not fail again when Hypothesis replayed "
                               f"it: the kernel is not deterministic)", replay=last["case"])
        return done(True, f"{tried[0]} drawn cases of {op} pass (Hypothesis seed {self.seed})")

    def run(self):
        t0 = time.perf_counter()
        results = {}
        self.run_trials(results)
        if "batch_invariant" in self.checks:
            results["batch_invariant"] = self.batch_invariant()
        if "shapes" in self.checks:
            results["shapes"] = self.shapes()
        ordered = {c: results[c] for c in self.checks}
        return Report(self.base["op"], self.base["id"], self.format, self.recipe, self.seed,
                      self.trials, ordered, time.perf_counter() - t0)


def _dtype_name(a):
    return _arrays._NAMES.get(a.dtype)


DEFAULT_EXAMPLES = 20
DEFAULT_MAX_COST = 2e5
DEFAULT_BATCH_MAX_COST = 5e6


def evaluate(kernel, op, checks=None, *, format=None, recipe="strict", trials=3, seed=None,
             protocol="return", array="numpy", device=None, examples=DEFAULT_EXAMPLES,
             batch_rows=None, max_cost=None, fixed=None, specials=True, **params):
    """Evaluates `kernel` on `op` (an op name with its parameters, a built-in case ID or a Case)
    in storage `format` and returns a Report (docs/harness.md).

    kernel: called as kernel(*inputs, **params) (protocol "return": returns the outputs, a
        mapping of name to array, a sequence in the op's order or the one array) or
        kernel(*inputs, out=buffers, **params) (protocol "out": writes the poisoned buffers the
        harness hands it); inputs in the op's order as `array` ("numpy", "torch", "jax") on
        `device`; params: the case's parameters its signature names (all with **kwargs).
    checks: names among CHECKS (default all), a list or "a,b".
    trials: fresh inputs per trial, seeds seed, seed+1, … (seed: default the case's).
    examples: Hypothesis examples of the shapes check; fixed: parameters it keeps (besides
        the non-integer ones given here); max_cost: its largest drawn case (strategies' cost);
        specials: whether drawn cases place special values (±0, subnormals, ±max, ±inf, NaN).
    batch_rows: the batch batch_invariant runs (default max(the case's rows, 32), halved while
        its cost exceeds 5e6)."""
    ev = _Evaluation(kernel, op, checks, format, recipe, params, trials, seed, protocol, array,
                     device, examples, batch_rows,
                     DEFAULT_MAX_COST if max_cost is None else max_cost, fixed, specials)
    return ev.run()
