"""Each known-answer file in tests/data/ must be exactly what the mpmath script beside it makes:
runs every make_<name>.py in a scratch copy of this folder and compares <name>.json byte for
byte. Usage: check_regenerate.py [NAME ...] (default: every make_*.py here)."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    names = sys.argv[1:] or sorted(
        os.path.basename(p)[len("make_"):-len(".py")] for p in glob.glob(os.path.join(HERE, "make_*.py")))
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            script = os.path.join(scratch, f"make_{name}.py")
            shutil.copy(os.path.join(HERE, f"make_{name}.py"), script)
            subprocess.run([sys.executable, script], check=True, cwd=scratch)
            with open(os.path.join(scratch, f"{name}.json"), "rb") as f:
                made = f.read()
            with open(os.path.join(HERE, f"{name}.json"), "rb") as f:
                kept = f.read()
            same = made == kept
            failed += not same
            print(f"{name}.json: {'reproduced' if same else 'DIFFERS from what make_' + name + '.py makes'}")
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
