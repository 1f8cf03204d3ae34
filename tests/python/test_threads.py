"""Long work releases the GIL: another Python thread runs while the oracle computes."""
import threading
import time

import lmoracle
from lmoracle import _progress


def _ticks_during(call):
    """(seconds the call took, ticks a 1 ms ticker thread recorded while it ran)."""
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    start = time.monotonic()
    t.start()
    call()
    end = time.monotonic()
    done.set()
    t.join()
    return end - start, len([s for s in ticks if start < s < end])


def test_other_threads_run_during_a_reference_call():
    # The call must last well over the interpreter's 5 ms switch interval for the ticks to tell a
    # released GIL from a held one. The exact GELU got faster than any fixed size would stay
    # (certified balls), so the size doubles until one call takes over 300 ms on this machine.
    n = 16384
    while True:
        x = lmoracle.case("gelu", n=n)
        seconds, inside = _ticks_during(lambda: lmoracle.reference("gelu", x, n=n))
        if seconds > 0.3 or n >= 16384 * 256:
            break
        n *= 2
    assert seconds > 0.3, f"reference of {n} GELUs took only {seconds:.3f} s"
    # A thread blocked on the GIL would tick a handful of times at most (the interpreter's switch
    # interval applies only between bytecodes); a free one ticks about once per 1-2 ms.
    assert inside > seconds / 0.01, f"{inside} ticks in {seconds:.3f} s"


def test_progress_line_runs_the_call_and_passes_errors(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "enabled", lambda: True)
    monkeypatch.setattr(_progress, "_DELAY_S", 0.0)
    assert _progress.run("sleep", lambda s: (time.sleep(s), 7)[1], 0.6) == 7
    assert "lmoracle: sleep done in" in capsys.readouterr().err

    def boom():
        raise ValueError("bad")

    try:
        _progress.run("boom", boom)
    except ValueError as e:
        assert str(e) == "bad"
    else:
        raise AssertionError("the worker's error was lost")
