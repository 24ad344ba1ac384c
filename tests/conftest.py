import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("ACTUATOR_GYM_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CONFORMANCE = SHARED / "conformance"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer tests (still run by make test)")


@pytest.fixture(scope="session")
def conformance_dir():
    if not CONFORMANCE.is_dir():
        pytest.fail(f"reference traces not found at {CONFORMANCE} (set ACTUATOR_GYM_SHARED)")
    return CONFORMANCE


def assert_close_rel(ours, ref, tol=2e-5, what=""):
    import numpy as np

    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    err = np.abs(ours - ref) / np.maximum(np.abs(ref), 1.0)
    worst = np.unravel_index(np.argmax(err), err.shape)
    assert err.max() <= tol, f"{what}: max rel error {err.max():.3g} at {worst}: ours {ours[worst]} ref {ref[worst]}"
