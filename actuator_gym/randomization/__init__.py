"""Randomness: the distributions a parameter can be drawn from at every reset (:mod:`.distributions`:
``Uniform``, ``LogUniform``, ``Gaussian``, ...) and the per-env random streams every draw comes from
(:mod:`.streams`: env ``i`` of a batch seeded ``s`` draws what one env seeded ``s + i`` draws)."""

from .distributions import *  # noqa: F401,F403
from .distributions import __all__
