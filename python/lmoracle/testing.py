"""assert_matches_reference: lmoracle.check() as an assertion for test suites, with a report
in the manner of torch.testing.assert_close."""
from ._api import check


def _report(v, msg):
    lines = [msg or f"Outputs do not match the reference of case {v.case_id} "
             f"(lmoracle, recipe {v.recipe})."]
    for o in v.outputs.values():
        if o.passed:
            lines.append(f"\nOutput {o.name!r} ({o.format}): passes ({o.elements} elements).")
            continue
        pct = 100.0 * o.failed / o.elements if o.elements else 0.0
        lines.append(f"\nOutput {o.name!r} ({o.format}): mismatched elements: "
                     f"{o.failed} / {o.elements} ({pct:.1f}%)")
        if o.worst_index is not None:
            lines.append(f"Greatest ulp error: {o.worst_ulps} ulp at index {o.worst_index}")
            lines.append(f"  actual:   {o.worst_actual!r}")
            lines.append(f"  expected: {o.worst_expected!r} (correctly rounded)")
            lines.append(f"  exact:    {o.worst_exact}")
        lines.append(f"Allowed: {o.bound}")
        if o.detail:
            lines.append(f"First failure: {o.detail}")
    return "\n".join(lines)


def assert_matches_reference(op, inputs, outputs, *, recipe="strict", msg=None, seed=None,
                             **params):
    """Raises AssertionError unless every output passes lmoracle.check(op, inputs, outputs,
    recipe, seed, **params); returns the Verdict when it does. inputs=None grades a built-in
    case's generated inputs (lmoracle.case)."""
    __tracebackhide__ = True  # pytest: show the caller's line, not this one
    v = check(op, inputs, outputs, recipe=recipe, seed=seed, **params)
    if not v.passed:
        raise AssertionError(_report(v, msg))
    return v
