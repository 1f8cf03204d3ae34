"""`python -m lmoracle ARGS`: the lmoracle command line, the same C++ program as build/lmoracle
(tools/cli_main.cc, linked into the module), with the same exit codes."""
import sys

from . import _core


def main():
    sys.stdout.flush()
    sys.stderr.flush()
    return _core.main(["lmoracle"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
