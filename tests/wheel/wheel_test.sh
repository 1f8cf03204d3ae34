#!/usr/bin/env bash
# tools/wheel's wheel, as a user on another machine gets it: built from this build tree, installed
# with `pip install --no-deps` into a fresh virtual environment (no system site-packages) next to
# numpy, ml_dtypes and pytest only, then
#   - its library resolves every vendored dependency inside the wheel (ldd): nothing of MPFR,
#     GMP, Highway or OpenBLAS from the system, only what manylinux takes as the system's
#     (glibc's libraries, and libstdc++ and libgcc_s, which Highway's dispatch library needs;
#     the package's own library links its C++ runtime statically: test_capi.py);
#   - `python -m lmoracle verify --filter '^rmsnorm/'` and the `lmoracle` console script pass;
#   - the README's pytest example passes, with the plugin from the wheel's entry point (torch,
#     5 GB, is not installed again: the environment reads it from this interpreter's
#     site-packages, placed after its own, and the test checks lmoracle came from the wheel);
#   - pip accepts the wheel for CPython 3.12 on a glibc 2.39 machine (the GPU machine's Python).
# Prints the wheel's size and the seconds each step took.
#   wheel_test.sh PYTHON ROOT
set -euo pipefail
python=$1
root=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
took() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$1" "$(now)"; }
pin() { grep -E "^$1==" "$root/tools/requirements.txt" | sed 's/ *#.*//'; }
fail() { echo "FAIL: $*" >&2; exit 1; }

t=$(now)
"$root/tools/wheel" "$work/dist" >"$work/wheel.log" 2>&1 || { cat "$work/wheel.log"; fail "tools/wheel"; }
wheel=$(ls "$work"/dist/lmoracle-*manylinux*.whl)
echo "wheel: $(basename "$wheel"), $(stat -c %s "$wheel") bytes, built in $(took "$t")"

"$python" -m venv "$work/venv"
py=$work/venv/bin/python
t=$(now)
"$py" -m pip install -q --no-deps "$wheel"
echo "pip install --no-deps of the wheel into a fresh venv: $(took "$t")"
"$py" -m pip install -q "$(pin numpy)" "$(pin ml_dtypes)" "$(pin pytest)"

site=$("$py" -c "import sysconfig; print(sysconfig.get_path('platlib'))")
lib=$site/lmoracle/liblmoracle_capi.so
[ -f "$lib" ] || fail "$lib: not installed"
ldd "$lib" | tee "$work/ldd.txt"
# Every resolved library: inside the environment, or one of glibc's (and the loader, vdso).
while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  [ "$path" = "not" ] && fail "ldd: $name not found"
  case "$path" in
    "$site"/*) ;;
    */libc.so.*|*/libm.so.*|*/libpthread.so.*|*/libdl.so.*|*/librt.so.*|*/ld-linux*) ;;
    */libstdc++.so.6|*/libgcc_s.so.1) ;;  # manylinux's baseline: needed by libhwy only
    *) fail "ldd: $name resolves to the system's $path" ;;
  esac
done <"$work/ldd.txt"
for vendored in mpfr gmp hwy openblas; do
  grep -q "lib$vendored" "$work/ldd.txt" || fail "ldd: the library does not link lib$vendored"
done
readelf -d "$lib" | grep -q 'NEEDED.*libstdc++' && fail "the library needs the system's libstdc++"

cd "$work"
run() { env -u PYTHONPATH -u LMO_BIN -u LMO_CASES_DIR "$@"; }
out=$(run "$py" -m lmoracle verify --filter '^rmsnorm/')
echo "$out" | tail -n 1
echo "$out" | tail -n 1 | grep -qE '^verify: [1-9][0-9]* passed, 0 failed' || fail "python -m lmoracle verify"
run "$work/venv/bin/lmoracle" list >/dev/null || fail "the lmoracle console script"

# torch from this interpreter, after the environment's own packages in sys.path.
system_site=$("$python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
echo "$system_site" >"$site/zz_system_torch.pth"
"$python" "$root/tests/python/readme_example.py" "$root/README.md" test_readme.py
from=$(run "$py" -c "import lmoracle, torch; print(lmoracle.__file__)")
case "$from" in "$site"/*) ;; *) fail "lmoracle imported from $from, not the wheel" ;; esac
run "$py" -m pytest -q -p no:cacheprovider test_readme.py

# pip matches each --platform exactly: name every tag a glibc 2.39 machine accepts.
platforms=()
for n in $(seq 17 39); do platforms+=(--platform "manylinux_2_${n}_x86_64"); done
"$py" -m pip install -q --dry-run --no-deps --ignore-installed --target "$work/py312" \
  --python-version 3.12 --implementation cp "${platforms[@]}" \
  --only-binary=:all: "$wheel" || fail "pip refuses the wheel for CPython 3.12"
echo "the wheel installs and passes; pip accepts it for CPython 3.12 (manylinux_2_39)"
