"""`python -m lmoracle ARGS`: the lmoracle command line, the same C++ program as build/lmoracle
(tools/cli_main.cc, linked into the module), with the same exit codes."""
import os
import sys

from . import _api, _core


def main():
    # An installed package's program reads the cases the package ships (the compiled-in path
    # is the build's source tree, which a wheel does not carry); $LMO_CASES_DIR still wins.
    os.environ.setdefault("LMO_CASES_DIR", _api.cases_dir())
    sys.stdout.flush()
    sys.stderr.flush()
    return _core.main(["lmoracle"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
