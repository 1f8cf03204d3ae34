"""lmoracle.distributed on a local Ray cluster of 2 workers: golden over tasks per case and per
part of its rows is byte for byte one `lmoracle golden` run (with a worker lost on the way and
its task retried), verify over tasks per case is one `lmoracle verify` run's report, check of
pairs gives each pair's report, and bad input is refused at once, not retried."""
import json
import os
import subprocess
import sys

import pytest

ray = pytest.importorskip("ray")
from lmoracle import distributed  # noqa: E402

CASES = {"cases": [
    {"id": "r/rms7", "op": "rmsnorm", "seed": 5, "formats": ["bf16", "f32"],
     "params": {"rows": 7, "d": 48, "eps": 1e-5}},
    {"id": "r/rms2", "op": "rmsnorm", "seed": 6, "formats": ["f16"],
     "params": {"rows": 2, "d": 32, "eps": 1e-6}},
    {"id": "r/softmax", "op": "softmax", "seed": 8, "formats": ["bf16"],
     "params": {"rows": 5, "n": 64}},
    {"id": "r/silu", "op": "silu", "seed": 3, "formats": ["bf16"], "params": {"n": 40}},
]}


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def cli(*args, cwd=None):
    r = subprocess.run([sys.executable, "-m", "lmoracle", *args], capture_output=True, text=True,
                       cwd=cwd)
    return r.returncode, r.stdout + r.stderr


def files_of(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


def test_golden_over_ray_is_one_run_byte_for_byte(cluster, tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES))
    code, out = cli("golden", "--case-file", str(cases), "--out", str(tmp_path / "one"))
    assert code == 0, out
    lost = tmp_path / "lost-worker"
    seen = []
    manifest = distributed.golden(str(tmp_path / "ray"), case_files=[str(cases)], blocks=3,
                                  progress=lambda done, total, what: seen.append((done, total)),
                                  _crash_first=str(lost))
    assert lost.exists()  # the first task's worker died, and the task ran again
    assert seen[-1] == (12, 12) and len(seen) == 12  # 4 cases × 3 parts
    one, many = files_of(tmp_path / "one"), files_of(tmp_path / "ray")
    assert sorted(one) == sorted(many) == sorted(
        ["manifest.json", "r+rms7.safetensors", "r+rms2.safetensors", "r+softmax.safetensors",
         "r+silu.safetensors"])
    for name in one:
        assert one[name] == many[name], name
    assert [f["case"] for f in manifest["files"]] == ["r/rms2", "r/rms7", "r/silu", "r/softmax"]


def test_golden_over_ray_refuses_bad_input_without_retrying(cluster, tmp_path):
    cases = tmp_path / "bad.json"
    cases.write_text(json.dumps({"cases": [
        {"id": "b/x", "op": "rmsnorm", "seed": 1, "formats": ["bf16"],
         "params": {"rows": 2, "d": 8, "eps": -1.0}}]}))
    with pytest.raises(ValueError, match="bad.json"):
        distributed.case_ids(case_files=[str(cases)])
    with pytest.raises(ValueError, match="blocks"):
        distributed.golden(str(tmp_path / "o"), blocks=0)
    with pytest.raises(ValueError, match="no case ID matches"):
        distributed.golden(str(tmp_path / "o"), filter="^no-such-case$")


def test_verify_over_ray_is_one_runs_report(cluster, tmp_path):
    pattern = "^(rmsnorm/llama3-8b|softmax/attention-row|silu/.*)$"
    code, out = cli("verify", "--filter", pattern, "--json", cwd=str(tmp_path))
    assert code == 0, out
    one = json.loads(out)
    many = distributed.verify(filter=pattern, progress=lambda *a: None)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa
    assert strip(many["rows"]) == strip(one["rows"])
    for k in ("cases", "passed", "failed", "skipped", "skips"):
        assert many[k] == one[k], k
    assert one["passed"] > 0 and one["failed"] == 0


def test_check_over_ray_judges_each_pair(cluster, tmp_path):
    import numpy as np
    from safetensors.numpy import load_file, save_file
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES))
    code, out = cli("golden", "--case-file", str(cases), "--filter", "^r/rms7$", "--out",
                    str(tmp_path / "g"))
    assert code == 0, out
    golden = str(tmp_path / "g" / "r+rms7.safetensors")
    y = load_file(golden)["out.y.f32"]
    save_file({"out.y": y}, str(tmp_path / "good.safetensors"))
    bad = y.copy()
    bad[3, 5] = np.float32(bad[3, 5] * 1.001)
    save_file({"out.y": bad}, str(tmp_path / "bad.safetensors"))
    good_r, bad_r = distributed.check([(golden, str(tmp_path / "good.safetensors")),
                                       (golden, str(tmp_path / "bad.safetensors"))],
                                      progress=lambda *a: None)
    assert good_r["pass"] and good_r["case"] == "r/rms7"
    assert not bad_r["pass"]
    assert bad_r["outputs"][0]["failed"] == 1
