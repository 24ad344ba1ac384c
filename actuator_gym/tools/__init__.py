"""User-facing tools on top of the library: the command line, pendulum analyses, plots, training.

Imports point one way: tools -> envs / wrappers -> runtime.
"""
