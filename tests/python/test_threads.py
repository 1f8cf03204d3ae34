"""Long work releases the GIL: another Python thread runs while the oracle computes."""
import threading
import time

import lmoracle
from lmoracle import _progress


def test_other_threads_run_during_a_reference_call():
    x = lmoracle.case("gelu/exact", format="f32")
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    start = time.monotonic()
    t.start()
    lmoracle.reference("gelu/exact", x)  # 16384 MPFR erfs, ~0.9 s
    end = time.monotonic()
    done.set()
    t.join()
    inside = [s for s in ticks if start < s < end]
    # The call takes well over 200 ms; a thread blocked on the GIL would tick a handful of times
    # at most (the interpreter's 5 ms switch interval applies only between bytecodes).
    assert end - start > 0.2 and len(inside) > (end - start) / 0.01


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
