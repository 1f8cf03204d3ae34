"""Packs the Python package from a build tree into a wheel (tools/wheel runs it, then auditwheel).

    python3 tools/wheel.py --build build --out DIR             # lmoracle-V-py3-none-linux_ARCH.whl
    python3 tools/wheel.py --build build --out DIR --editable  # lmoracle-V-py3-none-any.whl
    python3 tools/wheel.py --build build --install-editable    # tools/setup: install it here

The binary wheel holds python/lmoracle's files, the build's liblmoracle_capi.so (stripped) and the
built-in cases (lmoracle/cases); it is tagged py3-none: the library is loaded through ctypes and
names no CPython symbol, so one wheel serves every Python 3. Its shared-library dependencies are
still the system's here: auditwheel vendors them next.

The editable wheel (tools/setup installs it) holds no code: a .pth that puts the checkout's
python/ and the build's build/python on sys.path (the package spans both, __init__.py), and the
metadata that registers the `lmoracle` command and the pytest plugin.

Both are reproducible: entries in a fixed order with a fixed time stamp."""
import argparse
import base64
import hashlib
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
LIBRARY = "liblmoracle_capi.so"
EPOCH = (1980, 1, 1, 0, 0, 0)


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(lmoracle VERSION ([0-9.]+)", text).group(1)


def metadata(ver):
    return "\n".join([
        "Metadata-Version: 2.1",
        "Name: lmoracle",
        f"Version: {ver}",
        "Summary: Deterministic reference simulator and test oracle for transformer-LM math",
        "Requires-Python: >=3.9",
        "Requires-Dist: numpy",
        "Requires-Dist: ml_dtypes",
        "Provides-Extra: hypothesis",
        'Requires-Dist: hypothesis; extra == "hypothesis"',
        "",
    ])


ENTRY_POINTS = """[console_scripts]
lmoracle = lmoracle.__main__:main

[pytest11]
lmoracle.pytest_plugin = lmoracle.pytest_plugin
"""


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(path, files, tag, purelib, ver):
    """files: archive name → bytes (and mode)."""
    info = f"lmoracle-{ver}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = (metadata(ver).encode(), 0o644)
    files[f"{info}/WHEEL"] = ("\n".join([
        "Wheel-Version: 1.0", "Generator: lmoracle tools/wheel.py",
        f"Root-Is-Purelib: {'true' if purelib else 'false'}", f"Tag: {tag}", ""]).encode(), 0o644)
    files[f"{info}/entry_points.txt"] = (ENTRY_POINTS.encode(), 0o644)
    files[f"{info}/top_level.txt"] = (b"lmoracle\n", 0o644)
    record = [record_line(n, d) for n, (d, _) in sorted(files.items())]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = (("\n".join(record) + "\n").encode(), 0o644)
    # dist-info last, as the wheel specification recommends.
    names = sorted(files, key=lambda n: (n.startswith(info), n))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for n in names:
            data, mode = files[n]
            zi = zipfile.ZipInfo(n, EPOCH)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100000 | mode) << 16
            z.writestr(zi, data)
    return path


def package_files(build):
    files = {}
    for p in sorted((ROOT / "python" / "lmoracle").glob("*.py")):
        files[f"lmoracle/{p.name}"] = (p.read_bytes(), 0o644)
    lib = pathlib.Path(build) / "python" / "lmoracle" / LIBRARY
    if not lib.is_file():
        sys.exit(f"tools/wheel.py: {lib}: not built (tools/setup builds it)")
    with tempfile.TemporaryDirectory() as tmp:
        stripped = pathlib.Path(tmp) / LIBRARY
        shutil.copyfile(lib, stripped)
        # Symbol tables only: the library exports its C ABI and nothing else needs them.
        subprocess.run(["strip", "--strip-unneeded", str(stripped)], check=True)
        files[f"lmoracle/{LIBRARY}"] = (stripped.read_bytes(), 0o755)
    for p in sorted((ROOT / "cases").glob("*.json")):
        files[f"lmoracle/cases/{p.name}"] = (p.read_bytes(), 0o644)
    return files


def editable_pth(build):
    return f"{ROOT / 'python'}\n{pathlib.Path(build).resolve() / 'python'}\n".encode()


def installed_pth():
    """The installed editable package's .pth contents, or None."""
    import importlib.metadata
    try:
        dist = importlib.metadata.distribution("lmoracle")
    except importlib.metadata.PackageNotFoundError:
        return None
    pth = pathlib.Path(dist.locate_file("lmoracle-editable.pth"))
    return pth.read_bytes() if pth.is_file() else None


def install_editable(build):
    """Installs the editable wheel into this interpreter unless it already points here."""
    if installed_pth() == editable_pth(build):
        return
    ver = version()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_wheel(pathlib.Path(tmp) / f"lmoracle-{ver}-py3-none-any.whl",
                           {"lmoracle-editable.pth": (editable_pth(build), 0o644)},
                           "py3-none-any", True, ver)
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
               "--root-user-action=ignore", str(path)]
        # A Debian interpreter is "externally managed" (PEP 668): as tools/setup's packages.
        if subprocess.run(pip, stderr=subprocess.DEVNULL).returncode != 0:
            subprocess.run(pip + ["--break-system-packages"], check=True)
    print(f"tools/setup: the lmoracle package is importable from {sys.executable} "
          f"(an editable install of {ROOT})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the build tree (tools/setup's build/)")
    ap.add_argument("--out", help="the folder the wheel is written to")
    ap.add_argument("--editable", action="store_true",
                    help="a wheel that points at this checkout and build instead of copying them")
    ap.add_argument("--install-editable", action="store_true",
                    help="install the editable wheel into this interpreter (tools/setup)")
    a = ap.parse_args()
    if a.install_editable:
        install_editable(a.build)
        return
    if not a.out:
        ap.error("--out is required")
    ver = version()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.editable:
        path = out / f"lmoracle-{ver}-py3-none-any.whl"
        write_wheel(path, {"lmoracle-editable.pth": (editable_pth(a.build), 0o644)},
                    "py3-none-any", True, ver)
    else:
        arch = platform.machine()
        path = out / f"lmoracle-{ver}-py3-none-linux_{arch}.whl"
        write_wheel(path, package_files(a.build), f"py3-none-linux_{arch}", False, ver)
    print(path)


if __name__ == "__main__":
    main()
