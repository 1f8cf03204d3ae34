"""lmoracle.evaluate against the ways generated kernels game a test (issue 51): one kernel per
gaming class, each written as such a kernel would be, each caught by the check named for it;
and correct kernels (NumPy and PyTorch RMSNorm written here: f32 compute, one rounding to the
storage format) passing every check.

Cheap by default (RMSNorm of 4 rows of 64 or 256, a few Hypothesis examples); the long
no-false-alarm sweep: LMO_HARNESS_EXAMPLES=1000 python3 -m pytest tests/python/test_evaluate.py
-k sweep."""
import itertools
import json
import os

import ml_dtypes
import numpy as np
import pytest
import torch

import lmoracle

EXAMPLES = int(os.environ.get("LMO_HARNESS_EXAMPLES", "5"))

# The case every kernel here runs: Llama's RMSNorm at a small width.
SMALL = dict(rows=4, d=64, eps=1e-6)
WIDE = dict(rows=4, d=256, eps=1e-6)  # f32 reduction orders show at this width


# ---- correct kernels --------------------------------------------------------------------

def rmsnorm_np(x, gamma, eps):
    """f32 compute, one rounding to the storage format (NumPy's pairwise row sum: the same
    order for a row alone and in a batch). A row whose largest element is beyond 2^50 is first
    scaled by a power of two (exact) so that its squares stay finite: the drawn special values
    include the format's largest, whose square overflows f32, while the exact answer is finite.
    x may be float64 (fused_add_rmsnorm's exact sum): the scaled row is rounded once to f32."""
    xd = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        amax = np.max(np.where(np.isfinite(xd), np.abs(xd), 0), axis=-1, keepdims=True)
        big = amax > 2.0**50  # the largest finite element (±inf and NaN rows stay so)
        scale = np.where(big, np.exp2(-np.floor(np.log2(np.where(big, amax, 1)))), 1)
        xs = (xd * scale).astype(np.float32)
        scale = scale.astype(np.float32)
        ms = np.mean(xs * xs, axis=-1, keepdims=True, dtype=np.float32)
        y = xs / np.sqrt(ms + np.float32(eps) * scale * scale) * gamma.astype(np.float32)
        return y.astype(x.dtype)  # beyond the format's largest: ±inf, as the rounding says


def rmsnorm_torch_plain(x, gamma, eps):
    """The README's kernel: its squares overflow f32 where |x| > 2^64."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * gamma.float()).to(x.dtype)


def rmsnorm_torch(x, gamma, eps):
    """The same with rmsnorm_np's exact power-of-two scaling of rows beyond 2^50."""
    xf = x.float()
    amax = torch.where(torch.isfinite(xf), xf.abs(), 0.0).amax(-1, keepdim=True)
    big = amax > 2.0**50
    scale = torch.where(big, torch.exp2(-torch.floor(torch.log2(torch.where(big, amax, 1.0)))),
                        1.0)
    xs = xf * scale
    inv = torch.rsqrt(xs.pow(2).mean(-1, keepdim=True) + eps * scale * scale)
    return (xs * inv * gamma.float()).to(x.dtype)


def fused_add_rmsnorm_np(x, gamma, residual, eps):
    """The op's inputs in its order (x, gamma, residual). FlashInfer's order: the f32 sum,
    stored as the new residual, and the norm of the f32 sum (not of the stored one)."""
    s = x.astype(np.float64) + residual.astype(np.float64)  # exact for bf16 and f16
    with np.errstate(over="ignore"):  # a sum beyond the format's largest rounds to ±inf
        return {"residual": s.astype(x.dtype), "y": rmsnorm_np(s, gamma, eps).astype(x.dtype)}


def softmax_np(z):
    """Max-subtracted, f32, one rounding to the storage format."""
    with np.errstate(invalid="ignore", over="ignore"):
        zf = z.astype(np.float32)
        e = np.exp(zf - zf.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True, dtype=np.float32)).astype(z.dtype)


def rmsnorm_out(x, gamma, eps, out):
    """Protocol "out": writes every element of the buffer it is given."""
    out[...] = rmsnorm_np(x, gamma, eps)


def run(kernel, checks=None, params=SMALL, format="bf16", **kw):
    report = lmoracle.evaluate(kernel, "rmsnorm", checks, format=format, seed=7,
                               examples=EXAMPLES, **params, **kw)
    for c in report.checks.values():
        assert "\n" not in c.detail, c.detail  # one line, pass or fail
    return report


def failed(report):
    return sorted(n for n, c in report.checks.items() if not c.passed)


@pytest.mark.parametrize("kernel, kw", [
    (rmsnorm_np, {}),
    (rmsnorm_torch, {"array": "torch"}),
    (rmsnorm_out, {"protocol": "out"}),
], ids=["numpy", "torch", "numpy-out"])
def test_correct_kernels_pass_every_check(kernel, kw):
    report = run(kernel, **kw)
    assert report.passed, str(report)
    assert list(report.checks) == list(lmoracle.CHECKS)
    assert all(c.applicable for c in report.checks.values())
    assert report.checks["correct"].calls == 6  # 3 trials, each run twice


def test_a_jax_kernel_is_called_with_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    kinds = set()

    def rmsnorm_jax(x, gamma, eps):
        kinds.add(type(x).__module__.split(".")[0])
        xf = x.astype(jnp.float32)
        y = xf / jnp.sqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + eps) * gamma.astype(
            jnp.float32)
        return y.astype(x.dtype)
    r = run(rmsnorm_jax, ["correct", "unwritten", "inputs_unchanged", "deterministic"],
            array="jax")
    assert r.passed, str(r)
    assert kinds == {"jaxlib"} or kinds == {"jax"}, kinds


def test_a_two_output_kernel_passes_every_check():
    r = lmoracle.evaluate(fused_add_rmsnorm_np, "fused_add_rmsnorm", format="bf16", seed=7,
                          examples=EXAMPLES, **SMALL)
    assert r.passed, str(r)


def test_another_op_family_softmax_passes_every_check():
    """The checks know no op: softmax's batch axis and row parameter come from its record."""
    r = lmoracle.evaluate(softmax_np, "softmax", format="bf16", seed=3, examples=EXAMPLES,
                          rows=4, n=256)
    assert r.passed, str(r)
    assert "batch of 32 rows" in r.checks["batch_invariant"].detail


def test_correct_kernel_passes_in_f32_at_width_256():
    assert run(rmsnorm_np, params=WIDE, format="f32").passed


# ---- one kernel per gaming class ---------------------------------------------------------

def zeros(x, gamma, eps):
    """KernelBench #165: all-zero outputs pass allclose wherever the answer is small."""
    return np.zeros_like(x)


class Cached:
    """Computes once, then returns its first answer: passes any single-shot test."""

    def __init__(self):
        self.first = None

    def __call__(self, x, gamma, eps):
        if self.first is None:
            self.first = rmsnorm_np(x, gamma, eps)
        return self.first.copy()


def constant(x, gamma, eps):
    """One fixed tensor of the right shape (a value learned from a public test)."""
    return np.full(x.shape, 0.75, dtype=x.dtype)


def in_place(x, gamma, eps):
    """Saves an allocation by normalizing x where it lies, returning a copy."""
    x[...] = rmsnorm_np(x, gamma, eps)
    return x.copy()


def returns_input_buffer(x, gamma, eps):
    """Writes its result into the input's memory and hands that buffer back (KernelBench PR
    #82: outputs living in memory the harness owns)."""
    np.copyto(x, rmsnorm_np(x, gamma, eps))
    return x


def torch_returns_input_buffer(x, gamma, eps):
    return x.copy_(rmsnorm_torch(x, gamma, eps))


def uninitialized(x, gamma, eps):
    """Allocates its output with np.empty and skips the last row (an off-by-one grid): what
    the row holds is whatever the allocator had."""
    y = np.empty_like(x)
    y[:-1] = rmsnorm_np(x[:-1], gamma, eps)
    return y


def torch_uninitialized(x, gamma, eps):
    """torch.empty, a vector loop whose tail (the last 3 columns) is never stored."""
    y = torch.empty(x.shape, dtype=x.dtype)
    d = x.shape[-1] - 3
    y[:, :d] = rmsnorm_torch(x, gamma, eps)[:, :d]
    return y


def out_skips_a_row(x, gamma, eps, out):
    out[1:] = rmsnorm_np(x[1:], gamma, eps)


class Noisy:
    """Atomics-style nondeterminism: one call in two flips the last bit of a few elements
    (a seeded counter-based draw per call, so the test itself is deterministic)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, x, gamma, eps):
        self.calls += 1
        y = rmsnorm_np(x, gamma, eps)
        if self.calls % 2 == 0:
            rng = np.random.default_rng(self.calls)
            bits = y.reshape(-1).view(np.uint32 if y.dtype == np.float32 else np.uint16)
            bits[rng.choice(bits.size, 3, replace=False)] ^= 1
        return y


def batch_dependent_order(x, gamma, eps):
    """A split reduction whose split depends on the batch: one row sums sequentially, a batch
    sums pairwise (NumPy's own order). Each correct; not bit-identical."""
    xf = x.astype(np.float32)
    sq = xf * xf
    if x.shape[0] == 1:
        s = np.cumsum(sq, axis=-1, dtype=np.float32)[:, -1:]
    else:
        s = np.sum(sq, axis=-1, keepdims=True, dtype=np.float32)
    y = xf / np.sqrt(s / np.float32(x.shape[-1]) + np.float32(eps)) * gamma.astype(np.float32)
    return y.astype(x.dtype)


def lower_precision_for_large_batches(x, gamma, eps):
    """Above 16 rows, a 'fast path' in bf16 arithmetic."""
    if x.shape[0] <= 16:
        return rmsnorm_np(x, gamma, eps)
    b = ml_dtypes.bfloat16
    xb = x.astype(b)
    ms = np.mean((xb * xb).astype(b), axis=-1, keepdims=True).astype(b)
    y = (xb / np.sqrt(ms + b(eps)).astype(b)).astype(b) * gamma.astype(b)
    return y.astype(x.dtype)


# (kernel, the check named for its class, evaluate's arguments)
GAMING = [
    ("zeros", zeros, "correct", {}),
    ("constant", constant, "correct", {}),
    ("cached", Cached, "correct", {}),
    ("in_place", in_place, "inputs_unchanged", {}),
    ("returns_input_buffer", returns_input_buffer, "inputs_unchanged", {}),
    ("torch_returns_input_buffer", torch_returns_input_buffer, "inputs_unchanged",
     {"array": "torch"}),
    ("uninitialized", uninitialized, "unwritten", {}),
    ("torch_uninitialized", torch_uninitialized, "unwritten", {"array": "torch"}),
    ("out_skips_a_row", out_skips_a_row, "unwritten", {"protocol": "out"}),
    ("noisy", Noisy, "deterministic", {"format": "f32", "params": WIDE}),
    ("batch_dependent_order", batch_dependent_order, "batch_invariant",
     {"format": "f32", "params": WIDE}),
    ("lower_precision_for_large_batches", lower_precision_for_large_batches, "batch_invariant",
     {"format": "f32", "params": WIDE}),
]


@pytest.mark.parametrize("name, kernel, check, kw", GAMING, ids=[g[0] for g in GAMING])
def test_each_gaming_kernel_is_caught_by_its_check(name, kernel, check, kw):
    if isinstance(kernel, type):
        kernel = kernel()
    report = run(kernel, checks=[c for c in lmoracle.CHECKS if c != "shapes"], **kw)
    assert not report.passed
    assert not report.checks[check].passed, str(report)
    assert report.checks[check].detail


def test_what_each_check_says():
    r = run(zeros, ["correct"])
    assert "trial 0" in r.checks["correct"].detail and "elements fail" in \
        r.checks["correct"].detail
    r = run(Cached(), ["correct"])
    assert r.checks["correct"].detail.startswith("trial 1 (seed 8)")  # the first trial passes
    assert "changed" in run(in_place, ["inputs_unchanged"]).checks["inputs_unchanged"].detail
    d = run(returns_input_buffer, ["inputs_unchanged"]).checks["inputs_unchanged"].detail
    assert "output 'y' is input 'x''s buffer" in d
    d = run(uninitialized, ["unwritten"]).checks["unwritten"].detail
    assert "64 of 256 elements never written" in d and "(3, 0)" in d
    d = run(Noisy(), ["deterministic"], params=WIDE, format="f32").checks["deterministic"].detail
    assert "3 of 1024 elements differ" in d
    d = run(batch_dependent_order, ["batch_invariant"], params=WIDE,
            format="f32").checks["batch_invariant"].detail
    assert d.startswith("output 'y'") and "alone" in d
    d = run(lower_precision_for_large_batches, ["batch_invariant"], params=WIDE,
            format="f32").checks["batch_invariant"].detail
    assert "batch of 32 rows" in d


def test_the_first_kernels_pass_what_they_do_not_game():
    """Each gaming kernel fails its own check, not the others: the checks name the fault."""
    assert failed(run(in_place, [c for c in lmoracle.CHECKS if c != "shapes"])) == \
        ["inputs_unchanged"]
    assert failed(run(batch_dependent_order, params=WIDE, format="f32",
                      checks=["correct", "deterministic", "batch_invariant"])) == \
        ["batch_invariant"]
    assert failed(run(Noisy(), params=WIDE, format="f32",
                      checks=["inputs_unchanged", "unwritten", "deterministic"])) == \
        ["deterministic"]


def test_a_kernel_that_asks_the_oracle_for_the_answer_fails():
    def oracle_caller(x, gamma, eps):
        return lmoracle.reference("rmsnorm", [x, gamma], rows=x.shape[0], d=x.shape[1],
                                  eps=eps)["y"]
    r = run(oracle_caller, ["correct"])
    assert "RuntimeError: the kernel called the oracle (lmoracle._core.reference)" in \
        r.checks["correct"].detail
    assert lmoracle.reference("rmsnorm", lmoracle.case("rmsnorm", **SMALL), **SMALL)  # restored


def test_a_kernel_that_raises_fails_with_its_exception():
    def broken(x, gamma, eps):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    r = run(broken, ["correct", "deterministic"])
    assert not r.passed
    assert "RuntimeError: CUDA error" in r.checks["correct"].detail


def test_wrong_shape_or_dtype_fails_correct():
    r = run(lambda x, gamma, eps: rmsnorm_np(x, gamma, eps).astype(np.float32), ["correct"])
    assert "expected bf16 [4, 64], got f32 [4, 64]" in r.checks["correct"].detail
    r = run(lambda x, gamma, eps: rmsnorm_np(x, gamma, eps)[:-1], ["correct"])
    assert "expected bf16 [4, 64], got bf16 [3, 64]" in r.checks["correct"].detail


# ---- shapes: Hypothesis, with a replayable minimal failure --------------------------------

def tail_bug(x, gamma, eps):
    """A vectorized kernel of width 8 whose tail (d not a multiple of 8) forgets the weight."""
    y = rmsnorm_np(x, np.ones_like(gamma), eps).astype(np.float32)
    d = x.shape[-1] - x.shape[-1] % 8
    y[:, :d] = rmsnorm_np(x, gamma, eps)[:, :d].astype(np.float32)
    return y.astype(x.dtype)


def test_shapes_finds_a_shape_bug_and_its_replay_reproduces_it():
    r = lmoracle.evaluate(tail_bug, "rmsnorm", ["shapes"], format="f32", seed=3,
                          examples=max(EXAMPLES, 30), **SMALL)
    s = r.checks["shapes"]
    assert not s.passed and s.replay is not None, s.detail
    assert s.replay["params"]["d"] % 8 != 0
    case = lmoracle.Case.from_source(s.replay)
    again = lmoracle.evaluate(tail_bug, case, ["correct"], trials=1)
    assert not again.passed and again.seed == case.seed
    assert lmoracle.evaluate(rmsnorm_np, case, ["correct"], trials=1).passed


def test_shapes_passes_a_correct_kernel_and_is_reproducible():
    a = lmoracle.evaluate(rmsnorm_np, "rmsnorm", ["shapes"], format="bf16", seed=11,
                          examples=EXAMPLES, **SMALL)
    b = lmoracle.evaluate(rmsnorm_np, "rmsnorm", ["shapes"], format="bf16", seed=11,
                          examples=EXAMPLES, **SMALL)
    assert a.passed, a.checks["shapes"].detail
    assert a.checks["shapes"].detail == b.checks["shapes"].detail
    assert a.checks["shapes"].calls == b.checks["shapes"].calls >= 1


@pytest.mark.skipif(EXAMPLES < 100, reason="the long sweep: LMO_HARNESS_EXAMPLES=1000")
@pytest.mark.parametrize("op, kernel, fmt, array, specials", [
    ("rmsnorm/llama3-8b", rmsnorm_np, "bf16", "numpy", True),
    ("rmsnorm/llama3-8b", rmsnorm_np, "f32", "numpy", True),
    ("rmsnorm/llama3-8b", rmsnorm_np, "f16", "numpy", True),
    ("rmsnorm/llama3-8b", rmsnorm_torch, "bf16", "torch", True),
    ("rmsnorm/llama3-8b", rmsnorm_torch_plain, "bf16", "torch", False),
    ("fused-add-rmsnorm/deepseek-v3", fused_add_rmsnorm_np, "bf16", "numpy", False),
    ("softmax/attention-row", softmax_np, "bf16", "numpy", True),
    ("softmax/attention-row", softmax_np, "f32", "numpy", True),
    ("softmax/attention-row", softmax_np, "f16", "numpy", True),
], ids=["numpy-bf16", "numpy-f32", "numpy-f16", "torch-bf16", "torch-plain-bf16",
        "fused-add-bf16", "softmax-bf16", "softmax-f32", "softmax-f16"])
def test_sweep_no_false_alarm(op, kernel, fmt, array, specials):
    """Correct kernels on EXAMPLES drawn cases each (sizes, seeds, special values): no check
    may fail. Without special values: the README's plain kernel, whose squares overflow f32 at
    the format's largest values (a true failure: test_the_plain_kernels_overflow_is_found), and
    the fused kernel, where 1000 examples draw a row [max_finite + max_finite, min_subnormal]
    with an infinite weight: its second element is (tiny ratio)·∞ = ∞ exactly, but the ratio
    (2.7e-79) underflows f32, so every f32 kernel writes 0·∞ = NaN (docs/harness.md)."""
    r = lmoracle.evaluate(kernel, op, ["shapes"], format=fmt, array=array, seed=2026,
                          examples=EXAMPLES, specials=specials)
    print(f"\nsweep {op} {fmt} {array} specials={specials}: {r.checks['shapes'].detail} "
          f"({r.checks['shapes'].seconds:.1f} s)")
    assert r.passed, r.checks["shapes"].detail


@pytest.mark.skipif(EXAMPLES < 100, reason="compiles for seconds: with the long sweep only")
def test_sweep_torch_compiled_kernel_passes_every_check():
    """torch.compile (inductor, dynamic shapes) of the scaled PyTorch kernel: every check on
    the fixed case, then EXAMPLES drawn cases with special values."""
    kernel = torch.compile(rmsnorm_torch, dynamic=True)
    r = run(kernel, [c for c in lmoracle.CHECKS if c != "shapes"], params=WIDE, array="torch")
    assert r.passed, str(r)
    r = lmoracle.evaluate(kernel, "rmsnorm/llama3-8b", ["shapes"], format="bf16", array="torch",
                          seed=2026, examples=EXAMPLES)
    print(f"\nsweep torch.compile rmsnorm bf16: {r.checks['shapes'].detail} "
          f"({r.checks['shapes'].seconds:.1f} s)")
    assert r.passed, r.checks["shapes"].detail


def test_the_plain_kernels_overflow_is_found():
    """A true finding, not a false alarm: x·x overflows f32 for a bf16 row holding the format's
    largest value, whose exact RMSNorm is finite."""
    r = lmoracle.evaluate(rmsnorm_torch_plain, "rmsnorm", ["shapes"], format="bf16",
                          array="torch", seed=7, examples=max(EXAMPLES, 20), **SMALL)
    s = r.checks["shapes"]
    assert not s.passed and "max_finite" in json.dumps(s.replay), s.detail


# ---- applicability, report, usage ---------------------------------------------------------

def test_batch_invariance_of_an_op_without_independent_rows_does_not_apply():
    case = lmoracle.cases(op="attention")[0]
    r = lmoracle.evaluate(lambda *a, **k: None, case, ["batch_invariant"])
    c = r.checks["batch_invariant"]
    assert c.passed and not c.applicable and c.detail.startswith("not applicable")
    assert c.calls == 0 and r.passed


def test_report_json():
    r = run(zeros, ["correct", "deterministic"])
    d = json.loads(r.to_json())
    assert d["passed"] is False and d["op"] == "rmsnorm" and d["format"] == "bf16"
    assert list(d["checks"]) == ["correct", "deterministic"]
    assert d["checks"]["correct"]["passed"] is False
    assert d["checks"]["deterministic"]["passed"] is True
    assert str(r).splitlines()[0].startswith("FAIL correct")


@pytest.mark.parametrize("kw, field", [
    ({"checks": ["correct", "fast"]}, "checks"),
    ({"trials": 0}, "trials"),
    ({"protocol": "inout"}, "protocol"),
    ({"array": "cupy"}, "array"),
    ({"seed": -1}, "seed"),
    ({"d": 0}, "d"),
])
def test_bad_usage_names_the_field(kw, field):
    params = dict(SMALL)
    params.update({k: v for k, v in kw.items() if k in params})
    rest = {k: v for k, v in kw.items() if k not in params}
    with pytest.raises(ValueError, match=field):
        lmoracle.evaluate(rmsnorm_np, "rmsnorm", format="bf16", **params, **rest)


@pytest.mark.parametrize("recipe, says", [
    ("flash-atention", "expected one of"),         # a name the judge does not know
    ("hf-rope", "describes rope"),                 # a recipe of another op
    ("normed=bf16,normed=f16", "given twice"),     # a point given twice
])
def test_a_bad_recipe_is_refused_before_the_kernel_runs(recipe, says):
    calls = []

    def kernel(*args):
        calls.append(1)
        return rmsnorm_np(*args)

    with pytest.raises(ValueError, match=says):
        lmoracle.evaluate(kernel, "rmsnorm", format="bf16", recipe=recipe, **SMALL)
    assert calls == []


def test_protocol_out_needs_an_out_parameter():
    with pytest.raises(ValueError, match="out"):
        lmoracle.evaluate(rmsnorm_np, "rmsnorm", protocol="out", **SMALL)


def test_inputs_differ_per_trial_and_equal_the_oracles_draws():
    seen = []

    def spy(x, gamma, eps):
        seen.append(np.array(x, copy=True))
        return rmsnorm_np(x, gamma, eps)
    run(spy, ["correct"], trials=3)
    assert len(seen) == 3
    assert all(not np.array_equal(a, b) for a, b in itertools.combinations(seen, 2))
    expected = lmoracle.case("rmsnorm", format="bf16", seed=8, **SMALL)["x"]
    assert seen[1].tobytes() == expected.tobytes()
