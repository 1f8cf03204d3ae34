"""Writes the README's Python section (its two code blocks, as test_readme_examples.py reads them)
as a pytest file: python3 readme_example.py README.md OUT.py."""
import re
import sys

text = open(sys.argv[1]).read()
section = text[text.index("## Python: check tensors in a pytest test"):]
section = section[:section.index("\n## ", 1)]
blocks = re.findall(r"```python\n(.*?)```", section, re.S)
if len(blocks) != 2:
    sys.exit(f"{sys.argv[1]}: expected two python blocks in the Python section, got {len(blocks)}")
open(sys.argv[2], "w").write("import pytest\n" + "\n".join(blocks))
