"""The README's Python section (its two code blocks) as a pytest file: test_readme_examples.py
runs it in the suite, tests/wheel/ from an installed package (python3 readme_example.py README.md
OUT.py writes it)."""
import re
import sys


def readme_test_file(readme_text):
    """The pytest file made of the README's Python section's two code blocks."""
    section = readme_text[readme_text.index("## Python: check tensors in a pytest test"):]
    section = section[:section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    if len(blocks) != 2:
        raise ValueError(f"README: expected two python blocks in the Python section, got {len(blocks)}")
    return "import pytest\n" + "\n".join(blocks)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        text = readme_test_file(f.read())
    with open(sys.argv[2], "w") as f:
        f.write(text)
