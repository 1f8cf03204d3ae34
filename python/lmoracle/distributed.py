"""`golden`, `verify` and `check` over a Ray cluster (docs/scale.md).

Ray is an optional dependency (`pip install ray`): this module imports it when called. Each task
runs the lmoracle command line of the package installed on the worker (`python -m lmoracle`), in a
folder of its own, and hands its files back through Ray's object store, so the workers need no
shared file system. The driver merges the results with the program's own merge, so that

- `golden(out, blocks=N)` writes into `out` the very files and manifest.json that one
  `lmoracle golden` run writes (one task per case and per part of its rows: `--blocks I/N`,
  joined by `lmoracle golden --merge`, byte for byte);
- `verify()` returns the report of one `lmoracle verify --json` run (one task per case; the rows
  in the cases' order, the counts summed, the skips merged by reason), its seconds the sums of
  the tasks';
- `check(pairs)` returns one `lmoracle check --json` report per (golden, actual) pair.

A task that fails other than on bad input (a worker lost, a process killed) is retried up to
`retries` times; bad input (exit code 2) is not retried and raises ValueError with the
program's message. `progress(done, total, what)` is called as tasks finish; by default a line on
stderr when it is a terminal.

The case filter is Python's `re.search` over case IDs, as `lmoracle.cases` reads it."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import _api

__all__ = ["golden", "verify", "check", "case_ids"]


class _Retryable(RuntimeError):
    """A task's process ended other than with exit code 0, 1 or 2 (killed, crashed)."""


def _ray():
    try:
        import ray
    except ImportError as e:  # pragma: no cover - the message is the point
        raise ImportError("lmoracle.distributed needs Ray: pip install ray") from e
    return ray


def _ensure_ray(address):
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return ray


_META = set(".^$|?*+()[]{}\\")


def _exact(case_id):
    """An ECMAScript regular expression matching exactly this ID (the program's --filter)."""
    return "^" + "".join("\\" + ch if ch in _META else ch for ch in case_id) + "$"


def _case_sources(case_files, cases_dir):
    """{file name: text} of the case files a task needs; {} for the built-in cases."""
    files = {}
    for f in case_files:
        with open(f, encoding="utf-8") as fh:
            files["%03d-%s" % (len(files), os.path.basename(f))] = fh.read()
    if cases_dir:
        for name in sorted(os.listdir(cases_dir)):
            if name.endswith(".json"):
                with open(os.path.join(cases_dir, name), encoding="utf-8") as fh:
                    files["%03d-%s" % (len(files), name)] = fh.read()
    return files


def case_ids(filter=None, case_files=(), cases_dir=None):
    """The IDs of the cases a run covers, in the case files' order: the built-in cases, or those
    of `case_files` / `cases_dir`, whose ID matches `filter` (re.search)."""
    sources = _case_sources(case_files, cases_dir)
    if sources:
        with tempfile.TemporaryDirectory() as d:
            for name, text in sources.items():
                with open(os.path.join(d, name), "w", encoding="utf-8") as fh:
                    fh.write(text)
            ids = [c["id"] for c in json.loads(_api._core.load_cases(d))]
    else:
        ids = [c.id for c in _api.cases()]
    rx = re.compile(filter) if filter is not None else None
    return [i for i in ids if rx is None or rx.search(i)]


def _run_cli(args, cwd, sources):
    """`python -m lmoracle ARGS` in cwd, with the case files written there first; its exit code
    and output. Exit code 2 (bad input) is final; any other but 0 and 1 is retried."""
    case_args = []
    for name, text in sources.items():
        path = os.path.join(cwd, name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        case_args += ["--case-file", path]
    env = dict(os.environ)
    env.setdefault("LMO_CASES_DIR", _api.cases_dir())
    r = subprocess.run([sys.executable, "-m", "lmoracle"] + args + case_args, cwd=cwd, env=env,
                       capture_output=True, text=True)
    if r.returncode == 2:
        raise ValueError((r.stdout + r.stderr).strip())
    if r.returncode not in (0, 1):
        raise _Retryable("lmoracle %s: exit code %d: %s"
                         % (args[0], r.returncode, (r.stdout + r.stderr).strip()))
    return r.returncode, r.stdout


def _golden_part(case_id, index, count, sources, extra, crash_marker):
    """Part index of count of one case's golden file: {file name: bytes} and its manifest."""
    if crash_marker and not os.path.exists(crash_marker):
        open(crash_marker, "w").close()
        os._exit(137)  # the tests' lost worker: Ray retries the task
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        _run_cli(["golden", "--filter", _exact(case_id), "--blocks", "%d/%d" % (index, count),
                  "--out", out] + extra, d, sources)
        files = {}
        for name in os.listdir(out):
            with open(os.path.join(out, name), "rb") as fh:
                files[name] = fh.read()
    manifest_name = "manifest-rows-%d-of-%d.json" % (index, count)
    return files.pop(manifest_name), files


def _report(ray, pending, what, progress):
    """Waits for every task, calling progress as each ends; their results in submission order."""
    if progress is None:
        progress = _stderr_progress
    order = list(pending)
    results = {}
    left = list(pending)
    while left:
        done, left = ray.wait(left, num_returns=1)
        for ref in done:
            results[ref] = ray.get(ref)
            progress(len(results), len(order), what[ref])
    if progress is _stderr_progress and sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    return [results[r] for r in order]


def _stderr_progress(done, total, what):
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K[%d/%d] %s" % (done, total, what))
        sys.stderr.flush()


def golden(out, *, filter=None, case_files=(), cases_dir=None, blocks=1, seed=None,
           threads=None, max_cost=None, address=None, retries=3, progress=None,
           _crash_first=None):
    """Writes the golden files of the selected cases and manifest.json into `out` over a Ray
    cluster (`address`, or the one ray.init() finds or starts): one task per case and per part
    of its rows (`blocks` parts: cases whose op has no independent rows, or fewer rows than
    parts, are one task). The files are those one `lmoracle golden` run writes, byte for byte.
    Returns the manifest (a dict)."""
    ray = _ensure_ray(address)
    if not isinstance(blocks, int) or blocks < 1:
        raise ValueError("blocks: expected a positive integer, got %r" % (blocks,))
    ids = case_ids(filter, case_files, cases_dir)
    if not ids:
        raise ValueError("filter: no case ID matches %r" % (filter,))
    sources = _case_sources(case_files, cases_dir)
    extra = []
    if seed is not None:
        extra += ["--seed", str(int(seed))]
    if threads is not None:
        extra += ["--threads", str(int(threads))]
    if max_cost is not None:
        extra += ["--max-cost", repr(float(max_cost))]
    task = ray.remote(_golden_part).options(max_retries=retries,
                                            retry_exceptions=[_Retryable])
    what, pending = {}, []
    for case_id in ids:
        for i in range(blocks):
            ref = task.remote(case_id, i, blocks, sources, extra, _crash_first)
            what[ref] = "%s %d/%d" % (case_id, i, blocks)
            pending.append(ref)
    results = _report(ray, pending, what, progress)
    # Part I's files and manifest entries of every case in a folder of its own (part 0's in
    # out itself), then the program's merge.
    os.makedirs(out, exist_ok=True)
    parts_dir = os.path.join(out, ".lmoracle-parts")
    dirs = [out] + [os.path.join(parts_dir, "p%d" % i) for i in range(1, blocks)]
    entries = [[] for _ in range(blocks)]
    version = None
    for k, (manifest, files) in enumerate(results):
        i = k % blocks
        os.makedirs(dirs[i], exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(dirs[i], name), "wb") as fh:
                fh.write(data)
        m = json.loads(manifest)
        version = m["version"]
        entries[i] += m["files"]
    for i in range(blocks):
        with open(os.path.join(dirs[i], "manifest-rows-%d-of-%d.json" % (i, blocks)), "w") as fh:
            json.dump({"version": version, "files": entries[i],
                       "rows": {"index": i, "count": blocks}}, fh, indent=2)
    code, text = _run_cli(["golden", "--merge"] + dirs, out, {})
    if code != 0:  # pragma: no cover - merge exits 0 or 2
        raise RuntimeError(text)
    for name in os.listdir(out):
        if re.search(r"\.rows-\d+-of-\d+\.safetensors$", name) or name.startswith("manifest-rows-"):
            os.remove(os.path.join(out, name))
    shutil.rmtree(parts_dir, ignore_errors=True)
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _verify_case(case_id, sources, extra):
    with tempfile.TemporaryDirectory() as d:
        _, text = _run_cli(["verify", "--filter", _exact(case_id), "--json"] + extra, d, sources)
    return json.loads(text)


def verify(*, filter=None, case_files=(), cases_dir=None, backends=(), formats=(), recipe=None,
           max_cost=None, address=None, retries=3, progress=None):
    """`lmoracle verify --json` over a Ray cluster, one task per case: the report of one run
    (rows in the cases' order, counts summed, skips merged by reason in order of first
    appearance; "seconds" summed over the tasks)."""
    ray = _ensure_ray(address)
    ids = case_ids(filter, case_files, cases_dir)
    sources = _case_sources(case_files, cases_dir)
    extra = []
    for b in backends:
        extra += ["--backend", b]
    for f in formats:
        extra += ["--format", f]
    if recipe is not None:
        extra += ["--recipe", recipe]
    if max_cost is not None:
        extra += ["--max-cost", repr(float(max_cost))]
    task = ray.remote(_verify_case).options(max_retries=retries, retry_exceptions=[_Retryable])
    what, pending = {}, []
    for case_id in ids:
        ref = task.remote(case_id, sources, extra)
        what[ref] = case_id
        pending.append(ref)
    merged = {"rows": [], "cases": 0, "passed": 0, "failed": 0, "skipped": 0, "skips": [],
              "seconds": {}}
    for r in _report(ray, pending, what, progress):
        merged["rows"] += r["rows"]
        for k in ("cases", "passed", "failed", "skipped"):
            merged[k] += r[k]
        for s in r["skips"]:
            mine = next((m for m in merged["skips"] if m["reason"] == s["reason"]), None)
            if mine is None:
                merged["skips"].append({"reason": s["reason"], "backends": list(s["backends"]),
                                        "count": s["count"]})
                continue
            mine["count"] += s["count"]
            mine["backends"] += [b for b in s["backends"] if b not in mine["backends"]]
        for k, v in r["seconds"].items():
            merged["seconds"][k] = merged["seconds"].get(k, 0.0) + v
    return merged


def _check_pair(golden_bytes, actual_bytes, extra):
    with tempfile.TemporaryDirectory() as d:
        g, a = os.path.join(d, "golden.safetensors"), os.path.join(d, "actual.safetensors")
        with open(g, "wb") as fh:
            fh.write(golden_bytes)
        with open(a, "wb") as fh:
            fh.write(actual_bytes)
        _, text = _run_cli(["check", "--golden", g, "--actual", a, "--json"] + extra, d, {})
    return json.loads(text)


def check(pairs, *, recipe=None, diagnose=False, address=None, retries=3, progress=None):
    """`lmoracle check --json` of each (golden file, actual file) pair over a Ray cluster: one
    report per pair, in order."""
    ray = _ensure_ray(address)
    extra = (["--recipe", recipe] if recipe is not None else []) + (
        ["--diagnose"] if diagnose else [])
    task = ray.remote(_check_pair).options(max_retries=retries, retry_exceptions=[_Retryable])
    what, pending = {}, []
    for g, a in pairs:
        with open(g, "rb") as fg, open(a, "rb") as fa:
            ref = task.remote(fg.read(), fa.read(), extra)
        what[ref] = os.path.basename(a)
        pending.append(ref)
    return _report(ray, pending, what, progress)
