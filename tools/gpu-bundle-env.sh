# Sourced by the scripts of a bundle made by tools/gpu-bundle (bash): unpacks the payload, then
# sets the library path: the bundle's libraries first, then the one library it does not carry,
# cuBLAS (lmoracle's attention-bench yardstick, 0.5 GB), from the machine's CUDA toolkit or from
# PyTorch's CUDA wheels; and LMO_CASES_DIR, the built-in cases. A machine without cuBLAS runs
# everything but lmoracle; env.sh says so on stderr.
bundle_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The payload, unpacked once (it travels as xz, under a tenth of its size). Without the xz
# program (tar -J needs it), Python's lzma and tarfile modules unpack it.
bundle_root=${LMO_BUNDLE_ROOT:-$bundle_dir/unpacked}
bundle_unpack() {
  if command -v xz >/dev/null; then
    tar -xJf "$bundle_dir/payload.tar.xz" -C "$bundle_root"
  else
    python3 -c 'import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2], **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))' \
      "$bundle_dir/payload.tar.xz" "$bundle_root"
  fi
}
if [ ! -f "$bundle_root/.unpacked" ]; then
  mkdir -p "$bundle_root" && bundle_unpack && touch "$bundle_root/.unpacked" ||
    echo "env.sh: cannot unpack the payload into $bundle_root" >&2
fi
bundle_cublas=
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-*/lib64 \
         /usr/lib/x86_64-linux-gnu /opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib \
         /opt/*/.venv/lib/python3*/site-packages/nvidia/cublas/lib \
         /usr/local/lib/python3*/dist-packages/nvidia/cublas/lib; do
  if [ -e "$d/libcublas.so.13" ] && [ -e "$d/libcublasLt.so.13" ]; then
    bundle_cublas=$d
    break
  fi
done
[ -n "$bundle_cublas" ] || echo "env.sh: no libcublas.so.13 found: lmoracle will not start" >&2
export LD_LIBRARY_PATH="$bundle_root/lib${bundle_cublas:+:$bundle_cublas}"
export LMO_CASES_DIR="$bundle_root/cases"
