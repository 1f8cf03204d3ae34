"""tools/trace_import.py: FlashInfer-Trace definitions and workloads (the schema of
flashinfer-bench's docs/flashinfer_trace/, written here by hand) become cases that `lmoracle
verify` runs, with the shapes, parameters and sequence lengths the files give; what the
mapping cannot take is refused with exit code 2 naming the file and the field."""
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import safetensors.numpy

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "trace_import.py"


def write(path, obj):
    path.write_text(json.dumps(obj))
    return path


def write_jsonl(path, workloads):
    path.write_text("\n".join(json.dumps({"definition": "d", "workload": w, "solution": None,
                                          "evaluation": None}) for w in workloads) + "\n")
    return path


def run_tool(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True,
                          text=True)


def imported(*args):
    r = run_tool(*args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["cases"]


def verify(lmoracle_bin, tmp_path, cases):
    f = write(tmp_path / "cases.json", {"cases": cases})
    r = subprocess.run([lmoracle_bin, "verify", "--case-file", str(f), "--backend", "ref",
                        "--backend", "fast", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    return json.loads(r.stdout)


def rmsnorm_definition(op_type="rmsnorm", hidden=7168):
    inputs = {"hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
              "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"}}
    if op_type == "fused_add_rmsnorm":
        inputs["residual"] = {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}
    return {"name": f"{op_type}_h{hidden}", "op_type": op_type,
            "axes": {"batch_size": {"type": "var"},
                     "hidden_size": {"type": "const", "value": hidden}},
            "inputs": inputs,
            "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
            "reference": "def run(hidden_states, weight): ..."}


def paged_definition(page_size):
    return {"name": f"gqa_paged_decode_h32_kv8_d128_ps{page_size}", "op_type": "gqa_paged",
            "axes": {"batch_size": {"type": "var"}, "num_pages": {"type": "var"},
                     "len_indptr": {"type": "var"}, "num_kv_indices": {"type": "var"},
                     "num_qo_heads": {"type": "const", "value": 32},
                     "num_kv_heads": {"type": "const", "value": 8},
                     "head_dim": {"type": "const", "value": 128},
                     "page_size": {"type": "const", "value": page_size}},
            "inputs": {"q": {"shape": ["batch_size", "num_qo_heads", "head_dim"],
                             "dtype": "bfloat16"},
                       "kv_indptr": {"shape": ["len_indptr"], "dtype": "int32"},
                       "sm_scale": {"shape": None, "dtype": "float32"}},
            "outputs": {"output": {"shape": ["batch_size", "num_qo_heads", "head_dim"],
                                   "dtype": "bfloat16"}},
            "reference": "def run(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale): ..."}


@pytest.mark.parametrize("op_type", ["rmsnorm", "fused_add_rmsnorm"])
def test_rmsnorm_workloads_become_cases_that_verify(tmp_path, lmoracle_bin, op_type):
    d = write(tmp_path / "def.json", rmsnorm_definition(op_type))
    w = write_jsonl(tmp_path / "w.jsonl", [
        {"uuid": "a", "axes": {"batch_size": 1},
         "inputs": {"hidden_states": {"type": "random"}, "eps": {"type": "scalar",
                                                                  "value": 1e-5}}},
        {"uuid": "b", "axes": {"batch_size": 3}, "inputs": {"hidden_states": {"type": "random"}}}])
    cases = imported(d, w)
    assert [c["op"] for c in cases] == [op_type, op_type]
    assert [c["params"] for c in cases] == [{"rows": 1, "d": 7168, "eps": 1e-5},
                                            {"rows": 3, "d": 7168, "eps": 1e-6}]
    assert all(c["formats"] == ["bf16"] for c in cases)
    assert cases[0]["id"] == f"trace/{op_type}_h7168/a"
    report = verify(lmoracle_bin, tmp_path, cases)
    assert report["failed"] == 0 and report["passed"] >= 4


def test_paged_decode_lengths_come_from_the_recorded_indptr(tmp_path, lmoracle_bin):
    # Page size 1: a sequence's length is its page count; page size 16: the last page's fill.
    safetensors.numpy.save_file({"kv_indptr": np.array([0, 5, 12], dtype=np.int32),
                                 "kv_last_page_len": np.array([16, 3], dtype=np.int32)},
                                str(tmp_path / "idx.safetensors"))
    inputs = {"kv_indptr": {"type": "safetensors", "path": "idx.safetensors",
                            "tensor_key": "kv_indptr"},
              "kv_last_page_len": {"type": "safetensors", "path": "idx.safetensors",
                                   "tensor_key": "kv_last_page_len"},
              "sm_scale": {"type": "scalar", "value": 0.08838834764831845}}
    w = write_jsonl(tmp_path / "w.jsonl", [{"uuid": "u", "axes": {"batch_size": 2},
                                            "inputs": inputs}])
    ps1 = imported(write(tmp_path / "d1.json", paged_definition(1)), w)
    assert ps1[0]["op"] == "paged_attention_decode"
    assert ps1[0]["params"] == {"h": 32, "g": 8, "d": 128, "page_size": 1, "layout": "nhd",
                                "seq_lens": [5, 7], "scale": 0.08838834764831845}
    ps16 = imported(write(tmp_path / "d16.json", paged_definition(16)), w)
    assert ps16[0]["params"]["seq_lens"] == [4 * 16 + 16, 6 * 16 + 3]
    report = verify(lmoracle_bin, tmp_path, ps1)
    assert report["failed"] == 0 and report["passed"] >= 2


@pytest.mark.parametrize("mutate, field", [
    (lambda d, w: d.update(op_type="gemm"), "op_type"),
    (lambda d, w: d["axes"].pop("hidden_size"), "axes.hidden_size"),
    (lambda d, w: d["inputs"]["hidden_states"].update(dtype="int8"), "inputs.hidden_states.dtype"),
    (lambda d, w: w["inputs"].update(eps={"type": "scalar", "value": "small"}),
     "inputs.eps.value"),
])
def test_what_cannot_be_mapped_exits_2_naming_file_and_field(tmp_path, mutate, field):
    d = rmsnorm_definition()
    w = {"uuid": "a", "axes": {"batch_size": 2}, "inputs": {}}
    mutate(d, w)
    r = run_tool(write(tmp_path / "def.json", d), write_jsonl(tmp_path / "w.jsonl", [w]))
    assert r.returncode == 2
    assert field in r.stderr and ("def.json" in r.stderr or "w.jsonl" in r.stderr), r.stderr


def test_paged_decode_without_recorded_indptr_is_refused(tmp_path):
    w = write_jsonl(tmp_path / "w.jsonl", [{"uuid": "u", "axes": {"batch_size": 2},
                                            "inputs": {"kv_indptr": {"type": "random"}}}])
    r = run_tool(write(tmp_path / "d.json", paged_definition(1)), w)
    assert r.returncode == 2 and "inputs.kv_indptr" in r.stderr, r.stderr


def test_a_definition_alone_takes_its_variable_axes_from_the_command_line(tmp_path):
    d = write(tmp_path / "def.json", rmsnorm_definition(hidden=4096))
    cases = imported(d, "--axis", "batch_size=8")
    assert cases[0]["params"] == {"rows": 8, "d": 4096, "eps": 1e-6}
    r = run_tool(d)
    assert r.returncode == 2 and "axes.batch_size" in r.stderr, r.stderr
