"""Hypothesis strategies for property-based hunting: draw a case (parameters, seed, storage
format, special values) for any op, feed a kernel the oracle's inputs of that case, and let
Hypothesis shrink a failure to a minimal case.

    from hypothesis import given
    import lmoracle, lmoracle.strategies as los

    @given(los.cases("attention", fixed={"mask": "window"}, formats=["f32"]))
    def test_my_attention(case):
        x = lmoracle.case(case)
        lmoracle.testing.assert_matches_reference(case, x, my_attention(**x, **case.params))

How a case is drawn, for every op alike (no per-op table here, so a new op is covered the day it
gets a built-in case):
  - a built-in case of the op is the template (Hypothesis shrinks towards the first);
  - each integer parameter above 1 is drawn in [1, template value], log-uniformly (so small
    sizes are common and long positions, e.g. 131072, still come), and shrinks towards 1;
  - each string or bool parameter is drawn from the values the op's built-in cases use;
  - the op itself accepts or rejects the parameters (its own checks: divisibility of heads,
    windows, ranges), and a rejected draw is discarded, never "fixed up" here;
  - the seed is drawn (the values are then the oracle's own Philox draws, bit-identical to
    `lmoracle verify`'s), and so is the storage format among the case's;
  - special values (±0, subnormals, the smallest normal, ±max, ±inf, NaN, those the format
    has) land at drawn elements of the real inputs, through the case's "specials" overrides."""
import json
import math

from hypothesis import assume
from hypothesis import strategies as st

from . import _api, _core

# A draw whose reference costs more scalar operations than this is discarded: the exact
# reference in MPFR runs about 1e6 operations per second, and a hunt runs hundreds of examples.
DEFAULT_MAX_COST = 2e5


def _valid(case):
    try:
        _core.validate(json.dumps(case))
        return True
    except ValueError:
        return False


def _int_param(draw, hi):
    # Log-uniform in [1, hi]: the exponent first, then the value below 2**exponent; both shrink
    # towards 1.
    e = draw(st.integers(0, max(hi, 1).bit_length()))
    return draw(st.integers(1, max(1, min(hi, 2 ** e))))


@st.composite
def cases(draw, op, formats=None, fixed=None, max_cost=DEFAULT_MAX_COST, specials=True,
          max_specials=4):
    """An lmoracle.Case of `op` (see the module's doc). formats: the storage formats to draw
    from (default: the template's); fixed: parameters to keep at these values (e.g.
    {"mask": "window"}); max_cost: discard draws whose reference costs more; specials: place
    special values, at most max_specials per input."""
    fixed = dict(fixed or {})
    templates = _api.cases(op=op)
    if not templates:
        raise ValueError(f"lmoracle.strategies.cases: op: expected an op with a built-in case "
                         f"(the strategies draw around them), got {op!r}")
    # Templates that already have the fixed values come first, so shrinking lands on one.
    templates.sort(key=lambda c: sum(c.params.get(k) != v for k, v in fixed.items()))
    seen = {}
    for c in templates:
        for k, v in c.params.items():
            if isinstance(v, (bool, str)) and v not in seen.setdefault(k, []):
                seen[k].append(v)
    t = draw(st.sampled_from(templates))
    params = {}
    for k, v in t.params.items():
        if k in fixed:
            params[k] = fixed[k]
        elif isinstance(v, (bool, str)):
            params[k] = draw(st.sampled_from([v] + [o for o in seen[k] if o != v]))
        elif isinstance(v, int) and v > 1:
            params[k] = _int_param(draw, v)
        else:
            params[k] = v  # reals (eps, theta) and lists keep the template's values
    for k, v in fixed.items():
        params.setdefault(k, v)
    fmt = draw(st.sampled_from(list(formats or t.formats)))
    case = {"id": f"hypothesis/{op}", "op": op, "seed": draw(st.integers(0, 2**32 - 1)),
            "formats": [fmt], "params": params}
    assume(_valid(case))
    io = json.loads(_core.op_io(json.dumps(case)))
    assume(io["cost"] <= max_cost)
    if specials:
        names = _core.specials(fmt)
        overrides = {}
        for d in io["inputs"]:
            n = math.prod(d["shape"])
            if not d["real"] or d["dtype"] or d["computed"] or n == 0:
                continue  # integer inputs, fixed-format tables, derived tables: not drawn
            at = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(names)),
                               max_size=min(max_specials, n), unique_by=lambda p: p[0]))
            if at:
                overrides[d["name"]] = {"specials": [{"index": i, "value": s} for i, s in at]}
        if overrides:
            case["inputs"] = overrides
    return _api.Case.from_source(case)


def ops():
    """The ops these strategies can draw (those with a built-in case)."""
    return sorted({c.op for c in _api.cases()})
