"""lmoracle.strategies: every op's cases are drawable and valid, a correct kernel passes on
drawn cases, and Hypothesis shrinks a planted windowed-attention off-by-one to a few tokens."""
import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings

import lmoracle
import lmoracle.strategies as los
from windowed_attention import attention

QUIET = settings(suppress_health_check=list(HealthCheck), max_examples=20)


def run(case, off_by_one):
    x = lmoracle.case(case)
    p = case.params
    y = attention(x["q"], x["k"], x["v"], h=p["h"], g=p["g"], d=p["d"], window=p["window"],
                  off_by_one=off_by_one)
    return lmoracle.check(case, x, {"o": y})


WINDOW = los.cases("attention", fixed={"mask": "window"}, formats=["f32"], specials=False)


@QUIET
@given(WINDOW)
def test_correct_windowed_attention_passes_on_drawn_cases(case):
    assert case.params["mask"] == "window"
    v = run(case, off_by_one=False)
    assert v.passed, v.report


def test_planted_off_by_one_shrinks_to_a_handful_of_tokens():
    minimal = find(WINDOW, lambda c: not run(c, off_by_one=True).passed,
                   settings=settings(QUIET, max_examples=200))
    p = minimal.params
    # The bug shows only where a key sits exactly `window` positions back: tokens > window.
    # Shrunk, that is the smallest such case: window 1, two tokens, one head of width 1.
    assert p["tokens"] == p["window"] + 1
    assert p["tokens"] <= 4 and p["h"] == 1 and p["d"] == 1, p


@pytest.mark.parametrize("op", los.ops())
def test_every_op_draws_valid_cases_whose_reference_runs(op):
    # The simplest case Hypothesis finds for the op: the op accepts its parameters, its inputs
    # generate and its reference runs, with outputs of the op's shapes.
    c = find(los.cases(op), lambda c: True, settings=QUIET)
    x = lmoracle.case(c)
    out = lmoracle.reference(c, x, format=c.formats[0])
    io = lmoracle._api._io(c.source)
    assert [o["name"] for o in io["outputs"]] == list(out)
    for o in io["outputs"]:
        assert tuple(out[o["name"]].shape) == tuple(o["shape"])
    # Every op's outputs (top-k indices included) cross back into the judge intact: the
    # correctly rounded values themselves pass with no failing element.
    v = lmoracle.check(c, x, out)
    assert v.passed and all(o.failed == 0 for o in v.outputs.values()), v.report


@QUIET
@given(los.cases("rmsnorm", formats=["bf16", "f16"]))
def test_drawn_specials_are_in_the_generated_inputs(case):
    x = lmoracle.case(case)
    for name, over in case.source.get("inputs", {}).items():
        flat = x[name].reshape(-1).astype(np.float64)
        for s in over["specials"]:
            v = flat[s["index"]]
            kind = s["value"]
            if kind == "nan":
                assert np.isnan(v)
            elif kind in ("pos_inf", "neg_inf"):
                assert v == (np.inf if kind == "pos_inf" else -np.inf)
            elif kind in ("pos_zero", "neg_zero"):
                assert v == 0 and np.signbit(v) == (kind == "neg_zero")


def test_every_registered_op_has_a_strategy():
    # Strategies draw around built-in cases: an op without one would be unreachable here.
    assert los.ops() == sorted(lmoracle.ops())
