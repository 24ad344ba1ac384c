"""Progress of the long commands (``train``, ``transfer``, ``fit``): a tqdm bar on a terminal, and
progress lines when stdout is a pipe or a log file (``actuator-gym train ... > log.txt``).

A line reads ``PPO actuator_gym/Pendulum-v0: 4096/50000 steps (8 %), 812 steps/s, elapsed 00:05,
about 00:56 left`` (plus the engine's latest figures, e.g. ``eval_return -312.4``). Lines are printed
on stdout at most every :data:`PROGRESS_INTERVAL_S` seconds, as the work advances, and once at the end
of a run that printed any; the bar goes to stderr when stderr is a terminal.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Iterable, Iterator

__all__ = ["PROGRESS_INTERVAL_S", "Progress", "track"]

PROGRESS_INTERVAL_S = 10.0
"""[s]: the time between two progress lines on a stdout that is not a terminal (a line is printed at
the first update after it has passed; the commands update at least every few seconds)."""


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """``total`` units of work named ``desc``: ``update(n)`` after each ``n`` done, ``set_postfix(**figures)``
    for the latest figures, ``close()`` at the end (or use it as a context manager). ``enabled=False``:
    silent."""

    def __init__(self, total: int, desc: str, unit: str = "step", enabled: bool = True):
        from tqdm import tqdm

        self.total, self.desc, self.unit, self.n = int(total), desc, unit, 0
        self.out = sys.stdout  # the stdout of now: an engine may silence its library's console log meanwhile
        self.lines = enabled and not _isatty(self.out)
        self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False, mininterval=0.5,
                        disable=not (enabled and _isatty(sys.stderr)))
        self.postfix = ""
        self.t0 = self.last = time.perf_counter()
        self.printed = False

    def update(self, n: int = 1) -> None:
        self.n += int(n)
        self.bar.update(n)
        if self.lines and time.perf_counter() - self.last >= PROGRESS_INTERVAL_S:
            self._line()

    def set_postfix(self, **figures: Any) -> None:
        self.bar.set_postfix(**figures)
        self.postfix = "".join(f", {k} {v}" for k, v in figures.items())

    def _line(self) -> None:
        from tqdm import tqdm

        now = time.perf_counter()
        self.last, elapsed = now, now - self.t0
        rate = self.n / elapsed if elapsed > 0 else float("nan")
        left = (self.total - self.n) / rate if rate > 0 else float("nan")
        pct = 100.0 * self.n / self.total if self.total else 100.0
        eta = f"about {tqdm.format_interval(left)} left" if left == left else "time left unknown"
        print(f"{self.desc}: {self.n}/{self.total} {self.unit}s ({pct:.0f} %), {rate:.4g} {self.unit}s/s, "
              f"elapsed {tqdm.format_interval(elapsed)}, {eta}{self.postfix}", file=self.out, flush=True)
        self.printed = True

    def close(self) -> None:
        self.bar.close()
        if self.printed and self.lines:  # a run that reported progress reports its end
            self._line()
        self.lines = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def track(iterable: Iterable, total: int, desc: str, unit: str = "step", enabled: bool = True) -> Iterator:
    """The items of ``iterable`` with a :class:`Progress` of ``total`` advanced by one per item."""
    with Progress(total, desc, unit, enabled) as p:
        for item in iterable:
            yield item
            p.update(1)
