"""The one progress bar of the long commands: a line per tenth off a terminal, one redrawn line on it."""

import io

from benchmark import progress_bar
from benchmark.progress_bar import ProgressBar, clock


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_a_line_is_written_at_each_tenth_and_at_the_end():
    stream = io.StringIO()
    bar = ProgressBar(stream, 100, "evaluate")
    for _ in range(100):
        bar.advance("ok")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # the first item, then each tenth
    assert lines[-1].startswith("evaluate [" + "#" * progress_bar.WIDTH + "] 100/100 ok · ")


def test_off_a_terminal_a_slow_run_still_writes_a_line_every_few_seconds(monkeypatch):
    stream = io.StringIO()
    bar = ProgressBar(stream, 1000, "simulate", unit="episodes")
    bar.show(1)
    bar.show(2)
    assert len(stream.getvalue().splitlines()) == 1
    monkeypatch.setattr(progress_bar, "LOG_EVERY", 0.0)
    bar.show(3)
    assert stream.getvalue().splitlines()[-1].startswith("simulate [") and " 3/1000 episodes · " in stream.getvalue()


def test_on_a_terminal_one_line_is_redrawn_and_closed():
    stream = Terminal()
    bar = ProgressBar(stream, 3, "neutralise")
    for _ in range(3):
        bar.advance()
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n") and text.count("\n") == 1


def test_the_time_left_is_estimated_from_the_items_done_since_the_bar_started(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress_bar.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    bar = ProgressBar(stream, 10, "simulate", already_done=4)
    now[0] = 120.0
    bar.show(6, final=True)  # two items in 20 s: the four left take 40 s
    assert stream.getvalue().rstrip().endswith("6/10 · 20s · ETA 40s")


def test_clock_reads_minutes_and_seconds():
    assert clock(7.9) == "7s" and clock(245) == "4m05s"
