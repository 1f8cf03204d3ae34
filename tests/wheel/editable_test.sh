#!/usr/bin/env bash
# After tools/setup, the package is importable from the interpreter it installed packages into,
# from any folder and with no environment variable, from this checkout (an editable install,
# tools/wheel.py), and the README's pytest example passes as written: the plugin is found through
# its entry point (no -p) and the `lmoracle` command is on the interpreter's path.
#   editable_test.sh PYTHON ROOT
set -euo pipefail
python=$1
root=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
run() { env -u PYTHONPATH -u LMO_BIN -u LMO_CASES_DIR "$@"; }

where=$(run "$python" -c "import lmoracle, os; print(os.path.realpath(lmoracle.__file__))")
if [ "$where" != "$(realpath "$root/python/lmoracle/__init__.py")" ]; then
  echo "FAIL: import lmoracle from $work gives $where, not this checkout's ($root): run tools/setup" >&2
  exit 1
fi
"$python" "$root/tests/python/readme_example.py" "$root/README.md" test_readme.py
run "$python" -m pytest -q -p no:cacheprovider test_readme.py
bindir=$(run "$python" -c "import sysconfig; print(sysconfig.get_path('scripts'))")
run "$bindir/lmoracle" verify --filter '^rmsnorm/llama3-8b$' | tail -n 1 | grep -E '^verify: [1-9][0-9]* passed, 0 failed'
echo "editable install: import, README example and the lmoracle command pass from $work"
