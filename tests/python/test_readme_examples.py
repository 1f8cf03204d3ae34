"""The README's Python section runs as written: its two code blocks make a test file, whose
tests (one plain, six from the marker's rmsnorm cases and formats) all pass."""
from conftest import ROOT
from readme_example import readme_test_file


def test_readme_python_blocks_pass(pytester):
    pytester.makepyfile(test_readme=readme_test_file((ROOT / "README.md").read_text()))
    r = pytester.runpytest("-p", "lmoracle.pytest_plugin", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=7)
