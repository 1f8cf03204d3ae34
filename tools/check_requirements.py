"""Exit 0 when every pinned package of a requirements file is installed at its version."""
import importlib.metadata
import sys

for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, version = line.partition("==")
    try:
        if importlib.metadata.version(name) != version:
            sys.exit(1)
    except importlib.metadata.PackageNotFoundError:
        sys.exit(1)
