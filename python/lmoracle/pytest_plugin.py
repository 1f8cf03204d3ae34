"""pytest plugin (registered by the package's pytest11 entry point; a build-tree suite adds
`pytest_plugins = ["lmoracle.pytest_plugin"]` to its conftest.py): one test function grades a
kernel on every built-in case that a marker selects.

    @pytest.mark.lmoracle_cases("^rmsnorm/", formats=["bf16", "f32"])
    def test_my_rmsnorm(lmoracle_case):
        x = lmoracle_case.inputs(array="torch")
        lmoracle_case.assert_matches({"y": my_rmsnorm(x["x"], x["gamma"])})

The test runs once per selected case and storage format, with IDs like rmsnorm/llama3-8b[bf16]."""
import re

import pytest

from . import _api, testing

MARKER = "lmoracle_cases"


class BoundCase:
    """A built-in case in one storage format: what a parametrized test receives."""

    def __init__(self, case, format):
        self.case = case
        self.format = format
        self._inputs = None

    id = property(lambda self: self.case.id)
    op = property(lambda self: self.case.op)
    params = property(lambda self: dict(self.case.params))

    def inputs(self, array="numpy"):
        """The oracle's inputs of the case in this format (generated once per test)."""
        if self._inputs is None:
            self._inputs = _api.case(self.case, format=self.format)
        if array == "numpy":
            return {k: v.copy() for k, v in self._inputs.items()}
        if array == "torch":
            from ._arrays import to_torch
            return {k: to_torch(v) for k, v in self._inputs.items()}
        raise ValueError(f"inputs: array: expected 'numpy' or 'torch', got {array!r}")

    def reference(self):
        """The correctly rounded outputs on inputs() in this format."""
        return _api.reference(self.case, self.inputs(), format=self.format)

    def check(self, outputs, recipe="strict"):
        return _api.check(self.case, self.inputs(), outputs, recipe=recipe)

    def assert_matches(self, outputs, recipe="strict"):
        __tracebackhide__ = True
        return testing.assert_matches_reference(self.case, self.inputs(), outputs, recipe=recipe)

    def __repr__(self):
        return f"{self.case.id}[{self.format}]"


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{MARKER}(pattern, formats=None, op=None): run the test once per built-in lmoracle "
        "case whose ID matches the regular expression (and whose op is op), in each of its "
        "storage formats (or those of formats); the test takes the fixture lmoracle_case")


def pytest_generate_tests(metafunc):
    if "lmoracle_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: the lmoracle_case fixture needs "
            f"@pytest.mark.{MARKER}(pattern) to say which cases to run")
    pattern = marker.args[0] if marker.args else marker.kwargs.get("pattern", "")
    formats = marker.kwargs.get("formats")
    op = marker.kwargs.get("op")
    try:
        re.compile(pattern)
    except re.error as e:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: {MARKER}: pattern {pattern!r} "
                                f"is not a regular expression: {e}") from None
    bound = [BoundCase(c, f) for c in _api.cases(pattern, op=op) for f in c.formats
             if formats is None or f in formats]
    if not bound:
        # A pattern that selects nothing is a typo far more often than an intent.
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: {MARKER}({pattern!r}, "
                                f"formats={formats!r}, op={op!r}) selects no built-in case")
    metafunc.parametrize("lmoracle_case", bound, ids=[repr(b) for b in bound])
