"""The command lines' argument parsing: a parser whose usage errors are one line, and option types
that refuse a value outside their range naming it (``actuator-gym`` and ``actuator-gym fit``)."""

from __future__ import annotations

import argparse
import math

__all__ = ["OneLineParser", "int_at_least", "float_in"]


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line: ``PROG: error: ... (see PROG --help)``."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def int_at_least(lo: int):
    """An option type: an integer ``>= lo``."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {v}")
        return v

    parse.__name__ = f"integer >= {lo}"
    return parse


def float_in(lo: float, hi: float, lo_open: bool = False):
    """An option type: a finite number in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi):
            raise argparse.ArgumentTypeError(f"must be a number in {'(' if lo_open else '['}{lo:g}, {hi:g}], got {text!r}")
        return v

    parse.__name__ = "number"
    return parse
