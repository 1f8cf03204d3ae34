"""The README's Python section runs as written: its two code blocks make a test file, whose
tests (one plain, six from the marker's rmsnorm cases and formats) all pass."""
import re

from conftest import ROOT


def test_readme_python_blocks_pass(pytester):
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Python: check tensors in a pytest test"):]
    section = section[:section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    pytester.makepyfile(test_readme="import pytest\n" + "\n".join(blocks))
    r = pytester.runpytest("-p", "lmoracle.pytest_plugin", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=7)
