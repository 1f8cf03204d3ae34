"""A progress line on the terminal for the module's long calls (the exact reference of a large
case can take minutes). The call runs in a worker thread — the module releases the GIL while it
computes — and this thread prints the elapsed time on stderr once a call has taken a second.
Only when stderr is a terminal and LMORACLE_PROGRESS is not "0": logs and pytest's captured
output stay clean. The oracle's C++ reports no fraction done, so the line says what runs and for
how long, not a percentage."""
import os
import sys
import threading
import time

_DELAY_S = 1.0
_PERIOD_S = 0.5


def enabled():
    if os.environ.get("LMORACLE_PROGRESS") == "0":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def run(label, fn, *args):
    """fn(*args), with a progress line on the terminal while it runs."""
    if not enabled():
        return fn(*args)
    box = {}

    def work():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed back to the caller's thread below
            box["error"] = e

    worker = threading.Thread(target=work, name="lmoracle-" + label, daemon=True)
    start = time.monotonic()
    worker.start()
    shown = False
    while worker.is_alive():
        worker.join(_PERIOD_S)
        elapsed = time.monotonic() - start
        if worker.is_alive() and elapsed >= _DELAY_S:
            sys.stderr.write(f"\rlmoracle: {label} … {elapsed:.1f} s")
            sys.stderr.flush()
            shown = True
    if shown:
        sys.stderr.write(f"\rlmoracle: {label} done in {time.monotonic() - start:.1f} s\n")
        sys.stderr.flush()
    if "error" in box:
        raise box["error"]
    return box["value"]
