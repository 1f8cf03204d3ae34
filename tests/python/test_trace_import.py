"""tools/trace_import.py: FlashInfer-Trace definitions and workloads (the schema of
flashinfer-bench's docs/flashinfer_trace/, written here by hand after the dataset's
rmsnorm_h4096, fused_add_rmsnorm_h4096 and gqa_paged_decode definitions) become cases that
`lmoracle verify` runs, with the shapes, parameters and sequence lengths the files give; a
parameter the files do not give (eps, the softmax scale) is read from where the dataset keeps
it (the definition's reference code or description) or refused; what the mapping cannot take is
refused with exit code 2 naming the file and the field."""
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


# The dataset's RMSNorm reference, in its shape: the epsilon is a constant of the code.
RMSNORM_REFERENCE = """import torch

@torch.no_grad()
def run(hidden_states, weight):
    batch_size, hidden_size = hidden_states.shape
    EPS = {eps}
    x = hidden_states.to(torch.float32)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)
    y = (x * inv_rms) * weight.to(torch.float32)
    return y.to(hidden_states.dtype)
"""


def rmsnorm_definition(op_type="rmsnorm", hidden=7168, eps="1e-5", description=None):
    inputs = {"hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
              "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"}}
    if op_type == "fused_add_rmsnorm":
        inputs["residual"] = {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}
    reference = RMSNORM_REFERENCE.format(eps=eps) if eps is not None else \
        RMSNORM_REFERENCE.replace("    EPS = {eps}\n", "").replace("+ EPS", "+ eps").replace(
            "weight):", "weight, eps):")
    return {"name": f"{op_type}_h{hidden}", "op_type": op_type,
            "description": description or f"Root Mean Square Normalization with "
                                          f"hidden_size={hidden}.",
            "axes": {"batch_size": {"type": "var"},
                     "hidden_size": {"type": "const", "value": hidden}},
            "inputs": inputs,
            "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
            "reference": reference}


def paged_definition(page_size, cache=("num_pages", "page_size", "num_kv_heads", "head_dim"),
                     sm_scale_input=True, reference=None):
    cache = {"shape": list(cache), "dtype": "bfloat16"}
    inputs = {"q": {"shape": ["batch_size", "num_qo_heads", "head_dim"], "dtype": "bfloat16"},
              "k_cache": cache, "v_cache": dict(cache),
              "kv_indptr": {"shape": ["len_indptr"], "dtype": "int32"},
              "kv_indices": {"shape": ["num_kv_indices"], "dtype": "int32"}}
    if sm_scale_input:
        inputs["sm_scale"] = {"shape": None, "dtype": "float32"}
    args = "q, k_cache, v_cache, kv_indptr, kv_indices" + (", sm_scale" if sm_scale_input else "")
    return {"name": f"gqa_paged_decode_h32_kv8_d128_ps{page_size}", "op_type": "gqa_paged",
            "description": "Batched GQA decode over a paged KV cache.",
            "axes": {"batch_size": {"type": "var"}, "num_pages": {"type": "var"},
                     "len_indptr": {"type": "var"}, "num_kv_indices": {"type": "var"},
                     "num_qo_heads": {"type": "const", "value": 32},
                     "num_kv_heads": {"type": "const", "value": 8},
                     "head_dim": {"type": "const", "value": 128},
                     "page_size": {"type": "const", "value": page_size}},
            "inputs": inputs,
            "outputs": {"output": {"shape": ["batch_size", "num_qo_heads", "head_dim"],
                                   "dtype": "bfloat16"},
                        "lse": {"shape": ["batch_size", "num_qo_heads"], "dtype": "float32"}},
            "reference": reference or f"import math\nimport torch\n\ndef run({args}):\n"
                                      f"    logits = q.float() @ k_cache.float().T\n    ..."}


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
    # Workload a records eps (agreeing with the reference's EPS); b takes the reference's.
    assert [c["params"] for c in cases] == [{"rows": 1, "d": 7168, "eps": 1e-5},
                                            {"rows": 3, "d": 7168, "eps": 1e-5}]
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
    r = run_tool(write(tmp_path / "d1.json", paged_definition(1)), w)
    assert r.returncode == 0, r.stderr
    # The definition's base-2 lse has no counterpart in the oracle's op: said, not dropped.
    assert "outputs.lse" in r.stderr and "not judged" in r.stderr, r.stderr
    ps1 = json.loads(r.stdout)["cases"]
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
    (lambda d, w: d["inputs"]["weight"].update(dtype="float32"), "inputs.weight.dtype"),
    (lambda d, w: d["outputs"]["output"].update(dtype="float32"), "outputs.output.dtype"),
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
    assert cases[0]["params"] == {"rows": 8, "d": 4096, "eps": 1e-5}
    r = run_tool(d)
    assert r.returncode == 2 and "axes.batch_size" in r.stderr, r.stderr


# ---- every parameter from the files, never a default ---------------------------------------

def test_llama_rmsnorm_takes_the_epsilon_its_reference_and_description_give(tmp_path):
    # rmsnorm_h4096 as the dataset has it: "Epsilon is fixed at 1e-5", EPS = 1e-5 in the code;
    # the tool once wrote 1e-6 here without a word.
    d = write(tmp_path / "def.json", rmsnorm_definition(
        hidden=4096, description="Root Mean Square Normalization with hidden_size=4096. "
                                 "Captured from Llama-3.1-8B. Epsilon is fixed at 1e-5."))
    assert imported(d, "--axis", "batch_size=16")[0]["params"] == \
        {"rows": 16, "d": 4096, "eps": 1e-5}


@pytest.mark.parametrize("eps, description, expected", [
    ("1e-6", None, 1e-6),                                  # the reference's constant alone
    ("1.0e-05", "Epsilon is fixed at 1e-5.", 1e-5),       # both, agreeing
    (None, "RMSNorm (eps = 1e-6).", 1e-6),                # the description alone
])
def test_the_epsilon_is_read_where_the_definition_keeps_it(tmp_path, eps, description,
                                                           expected):
    d = write(tmp_path / "def.json", rmsnorm_definition(eps=eps, description=description))
    assert imported(d, "--axis", "batch_size=2")[0]["params"]["eps"] == expected


def test_a_keyword_default_of_the_reference_gives_the_epsilon(tmp_path):
    d = rmsnorm_definition(eps=None)
    d["reference"] = d["reference"].replace("weight, eps):", "weight, eps=1e-6):")
    assert imported(write(tmp_path / "def.json", d), "--axis", "batch_size=2")[0]["params"][
        "eps"] == 1e-6


@pytest.mark.parametrize("op_type", ["rmsnorm", "fused_add_rmsnorm"])
def test_an_epsilon_the_files_do_not_give_is_refused_not_defaulted(tmp_path, op_type):
    # The reference takes eps as an argument and no workload records it.
    r = run_tool(write(tmp_path / "def.json", rmsnorm_definition(op_type, eps=None)),
                 "--axis", "batch_size=2")
    assert r.returncode == 2, r.stdout
    assert "def.json" in r.stderr and "epsilon" in r.stderr and "never defaulted" in r.stderr


@pytest.mark.parametrize("eps, description, workload_eps", [
    ("1e-5", "Epsilon is fixed at 1e-6.", None),   # reference and description disagree
    ("1e-5", None, 1e-6),                           # a workload records another epsilon
])
def test_disagreeing_sources_are_refused(tmp_path, eps, description, workload_eps):
    d = write(tmp_path / "def.json", rmsnorm_definition(eps=eps, description=description))
    inputs = {} if workload_eps is None else {"eps": {"type": "scalar", "value": workload_eps}}
    w = write_jsonl(tmp_path / "w.jsonl", [{"uuid": "a", "axes": {"batch_size": 2},
                                            "inputs": inputs}])
    r = run_tool(d, w)
    assert r.returncode == 2, r.stdout
    assert "expected a single value" in r.stderr and "1e-05" in r.stderr, r.stderr


def test_gemma_style_weight_is_refused(tmp_path):
    d = rmsnorm_definition()
    d["reference"] = d["reference"].replace("* weight.to(torch.float32)",
                                            "* (1.0 + weight.to(torch.float32))")
    r = run_tool(write(tmp_path / "def.json", d), "--axis", "batch_size=2")
    assert r.returncode == 2 and "reference" in r.stderr and "Gemma" in r.stderr, r.stderr


def test_every_mapped_parameter_comes_from_the_files(tmp_path):
    """Each mapped op's case carries exactly the parameters the tool's table reads, none left
    to the op's defaults."""
    sys.path.insert(0, str(TOOL.parent))
    try:
        import trace_import
    finally:
        sys.path.remove(str(TOOL.parent))
    for op_type in ("rmsnorm", "fused_add_rmsnorm"):
        c = imported(write(tmp_path / f"{op_type}.json", rmsnorm_definition(op_type)),
                     "--axis", "batch_size=2")[0]
        assert set(c["params"]) == set(trace_import.PARAMETERS[c["op"]]), c
    safetensors.numpy.save_file({"kv_indptr": np.array([0, 2, 3], dtype=np.int32)},
                                str(tmp_path / "idx.safetensors"))
    w = write_jsonl(tmp_path / "w.jsonl", [{"uuid": "u", "axes": {"batch_size": 2}, "inputs": {
        "kv_indptr": {"type": "safetensors", "path": "idx.safetensors",
                      "tensor_key": "kv_indptr"},
        "sm_scale": {"type": "scalar", "value": 0.125}}}])
    c = imported(write(tmp_path / "p.json", paged_definition(1)), w)[0]
    assert set(c["params"]) == set(trace_import.PARAMETERS[c["op"]]), c


def paged_workload(tmp_path, sm_scale=0.08838834764831845):
    safetensors.numpy.save_file({"kv_indptr": np.array([0, 2, 5], dtype=np.int32),
                                 "kv_last_page_len": np.array([3, 1], dtype=np.int32)},
                                str(tmp_path / "idx.safetensors"))
    inputs = {n: {"type": "safetensors", "path": "idx.safetensors", "tensor_key": n}
              for n in ("kv_indptr", "kv_last_page_len")}
    if sm_scale is not None:
        inputs["sm_scale"] = {"type": "scalar", "value": sm_scale}
    return write_jsonl(tmp_path / "w.jsonl", [{"uuid": "u", "axes": {"batch_size": 2},
                                               "inputs": inputs}])


def test_softmax_scale_from_the_reference_when_no_workload_records_it(tmp_path):
    ref = ("import math\nimport torch\n\ndef run(q, k_cache, v_cache, kv_indptr, kv_indices):\n"
           "    sm_scale = 1.0 / math.sqrt(128)\n    ...")
    d = write(tmp_path / "d.json", paged_definition(16, sm_scale_input=False, reference=ref))
    c = imported(d, paged_workload(tmp_path, sm_scale=None))[0]
    assert c["params"]["scale"] == 1.0 / 128 ** 0.5
    assert c["params"]["seq_lens"] == [16 + 3, 2 * 16 + 1]


def test_a_softmax_scale_input_the_workload_does_not_record_is_refused(tmp_path):
    r = run_tool(write(tmp_path / "d.json", paged_definition(16)),
                 paged_workload(tmp_path, sm_scale=None))
    assert r.returncode == 2 and "inputs.sm_scale" in r.stderr, r.stderr


def test_the_cache_layout_is_read_from_the_cache_shape(tmp_path):
    hnd = paged_definition(16, cache=("num_pages", "num_kv_heads", "page_size", "head_dim"))
    assert imported(write(tmp_path / "h.json", hnd), paged_workload(tmp_path))[0]["params"][
        "layout"] == "hnd"
    odd = paged_definition(16, cache=("page_size", "num_pages", "num_kv_heads", "head_dim"))
    r = run_tool(write(tmp_path / "o.json", odd), paged_workload(tmp_path))
    assert r.returncode == 2 and "inputs.k_cache.shape" in r.stderr, r.stderr


def test_a_soft_cap_in_the_reference_is_refused(tmp_path):
    ref = ("import torch\n\ndef run(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):\n"
           "    logits = 30.0 * torch.tanh(logits / 30.0)\n    ...")
    r = run_tool(write(tmp_path / "d.json", paged_definition(16, reference=ref)),
                 paged_workload(tmp_path))
    assert r.returncode == 2 and "soft cap" in r.stderr, r.stderr


def test_the_datasets_reference_function_is_judged_through_evaluate(tmp_path):
    """The definition's own `reference` (the dataset's rmsnorm_h4096 code: f32 compute, one
    rounding to bf16), run as the kernel on the imported case under every check of
    lmoracle.evaluate: it is the correctly rounded answer under the strict recipe."""
    pytest.importorskip("torch")  # the reference code is PyTorch
    import lmoracle
    d = rmsnorm_definition(hidden=4096, description="Epsilon is fixed at 1e-5.")
    d["reference"] = d["reference"].replace(
        "    batch_size, hidden_size = hidden_states.shape\n",
        "    batch_size, hidden_size = hidden_states.shape\n    assert hidden_size == 4096\n")
    case = imported(write(tmp_path / "def.json", d), "--axis", "batch_size=2")[0]
    namespace = {}
    exec(compile(d["reference"], "reference", "exec"), namespace)  # the dataset's own code
    run = namespace["run"]
    report = lmoracle.evaluate(lambda x, gamma: run(x, gamma), lmoracle.Case.from_source(case),
                               array="torch", examples=3, fixed={"d": 4096}, specials=False,
                               batch_rows=4)
    assert report.passed, str(report)
    assert report.case_id == "trace/rmsnorm_h4096/0" and report.format == "bf16"
