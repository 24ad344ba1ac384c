"""PPO training through Stable-Baselines3 and a safe, library-free policy format.

A trained policy is saved as two files in a folder:

* ``policy.json`` -- observation/action sizes and bounds, layer sizes, activation, task id, and
  (format 2) the observation normalizer's ``epsilon``;
* ``policy.pt``  -- the actor's weights only (a flat ``{name: tensor}`` dict; with a normalizer
  also ``obs_normalizer.mean`` / ``obs_normalizer.std``), loaded with
  ``torch.load(weights_only=True)``: no pickled code is ever executed.

:class:`SavedPolicy` rebuilds the deterministic actor
(``action = clip(action_net(mlp((obs - mean) / (std + epsilon))))``, the normalization only when
saved) from those files with plain torch; no RL library is needed to run it.

Formats: ``actuator-gym-policy/1`` (tanh or relu MLP, no normalizer: what Stable-Baselines3 runs
write) and ``actuator-gym-policy/2`` (adds the ``elu`` activation and ``obs_normalization``: what
rsl_rl runs write). A writer emits the lowest version that holds the policy, so a file readable by
an older actuator-gym stays so; this reader reads both.
"""

from __future__ import annotations

import contextlib
import json
import time
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import gymnasium as gym
import numpy as np
import torch

from .._safe_io import atomic_path, clear_outputs, output_dir, parse_json_object, read_bytes, write_atomic, zip_sizes
from ..configs import bundled_policies

__all__ = ["SavedPolicy", "save_policy", "train_ppo", "make_env", "make_vec_env", "evaluate", "write_learning_curve"]

_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU}
_V1_ACTIVATIONS = ("tanh", "relu")
SB3_MODEL_FILE = "sb3_model.zip"
"""Stable-Baselines3's own archive beside the safe policy files (``PPO.load`` reads it; being a
pickle-bearing format, load it only from a folder you trust)."""


def make_env(task: str, actuators: Mapping[str, Any] | None = None, **kwargs: Any) -> gym.Env:
    """A single env: our tasks take ``actuators=`` directly; other Gymnasium MuJoCo envs are
    wrapped in :class:`~actuator_gym.wrappers.ActuatorWrapper` when actuators are given."""
    if task.startswith("actuator_gym/"):
        if actuators is not None:
            kwargs["actuators"] = dict(actuators)
        return gym.make(task, **kwargs)
    env = gym.make(task, **kwargs)
    if actuators is not None:
        from ..wrappers import ActuatorWrapper

        env = ActuatorWrapper(env, actuators=dict(actuators))
    return env


def make_vec_env(task: str, num_envs: int, actuators: Mapping[str, Any] | None = None, **kwargs: Any):
    """A ``VectorEnv``: our tasks use their native batched class; others a ``SyncVectorEnv``."""
    if task.startswith("actuator_gym/"):
        if actuators is not None:
            kwargs["actuators"] = dict(actuators)
        return gym.make_vec(task, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    return gym.vector.SyncVectorEnv([lambda: make_env(task, actuators, **kwargs) for _ in range(num_envs)])


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` for the block; the caller's count is restored after it,
    also when the block raises (every training engine runs inside one)."""
    before = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


LOG_DIR = "logs"
"""Sub-folder of a training run's ``out_dir`` holding SB3's log (``progress.csv``, TensorBoard events)."""
TRAIN_OUTPUTS = ("summary.json", "policy.json", "policy.pt", "learning_curve.csv", "learning_curve.png", SB3_MODEL_FILE,
                 "rsl_rl_model.pt", "progress.csv", f"{LOG_DIR}/progress.csv", f"{LOG_DIR}/events.out.tfevents.*",
                 f"{LOG_DIR}/model_*.pt")
"""The files a training run writes into its folder (glob patterns, ``summary.json`` first), which
:func:`prepare_run_dir` removes before a new run writes any; other files there are not touched."""


def prepare_run_dir(out: str | Path) -> Path:
    """A training run's folder, made ready before the run's first write: created; its ``logs/`` not a
    symbolic link (``ValueError`` naming it); an earlier run's outputs (:data:`TRAIN_OUTPUTS`) removed,
    ``summary.json`` first -- so no file of the earlier run is left beside the new run's, and an
    interrupted run leaves no ``summary.json`` (written last, by ``engines.train_policy``). Every
    engine calls it where it first writes into ``out``."""
    out = output_dir(out)
    output_dir(out, LOG_DIR, create=False)
    clear_outputs(out, TRAIN_OUTPUTS)
    return out


def log_formats() -> list[str]:
    """SB3 logger formats of a training run: ``csv`` always, ``tensorboard`` when it is installed."""
    import importlib.util

    return ["csv"] + (["tensorboard"] if importlib.util.find_spec("tensorboard") is not None else [])


POLICY_FORMAT_V1 = "actuator-gym-policy/1"
POLICY_FORMAT = "actuator-gym-policy/2"
"""The newest saved-policy format (adds ``elu`` and ``obs_normalization`` to format 1)."""
POLICY_FORMATS = (POLICY_FORMAT_V1, POLICY_FORMAT)
"""Every format :meth:`SavedPolicy.load` reads."""
POLICY_JSON_MAX_BYTES = 2**20
"""[bytes]: largest ``policy.json`` :meth:`SavedPolicy.load` reads."""
POLICY_WEIGHTS_MAX_BYTES = 256 * 2**20
"""[bytes]: largest ``policy.pt`` :meth:`SavedPolicy.load` reads."""
POLICY_MAX_DIM = 2**16
"""Largest ``obs_dim``, ``act_dim`` and ``net_arch`` width of a saved policy."""
POLICY_MAX_LAYERS = 16
"""Largest ``len(net_arch)`` of a saved policy."""
POLICY_EPSILON_RANGE = (1e-8, 1e8)
"""Allowed ``obs_normalization.epsilon`` of a saved policy: ``std + epsilon`` divides the observations
(``std`` may be 0), so a tiny epsilon gives inf / NaN actions."""
POLICY_ARCHIVE_SLACK_BYTES = 2**20
"""[bytes]: what ``policy.pt`` may hold beyond 8 bytes per parameter of the ``policy.json``
architecture (the pickled index, record headers), in its file size and in the uncompressed sizes its
zip directory declares -- both checked before ``torch.load`` inflates anything."""
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _check_meta(meta: Any, where: str) -> dict[str, Any]:
    """``policy.json``'s fields checked (types, sizes, bounds); ``ValueError`` naming ``where``."""

    def dim(key: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= POLICY_MAX_DIM:
            raise ValueError(f"{where}: {key} must be an integer in [1, {POLICY_MAX_DIM}], got {v!r}")
        return v

    if not isinstance(meta, dict):
        raise ValueError(f"{where}: must be a JSON object with obs_dim, act_dim, net_arch, action_low, action_high")
    missing = [k for k in ("obs_dim", "act_dim", "net_arch", "action_low", "action_high") if k not in meta]
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}")
    fmt = meta.get("format", POLICY_FORMAT_V1)
    if fmt not in POLICY_FORMATS:
        raise ValueError(f"{where}: format must be one of {list(POLICY_FORMATS)}, got {fmt!r}")
    for key in ("task", "activation"):
        if key in meta and not isinstance(meta[key], str):
            raise ValueError(f"{where}: {key} must be a string, got {meta[key]!r}")
    allowed = _V1_ACTIVATIONS if fmt == POLICY_FORMAT_V1 else tuple(_ACTIVATIONS)
    if meta.get("activation", "tanh") not in allowed:
        raise ValueError(f"{where}: activation must be one of {sorted(allowed)} in format {fmt!r}, got {meta.get('activation')!r}")
    norm = meta.get("obs_normalization")
    if norm is not None:
        if fmt == POLICY_FORMAT_V1:
            raise ValueError(f"{where}: obs_normalization needs format {POLICY_FORMAT!r}, the file says {fmt!r}")
        eps = norm.get("epsilon") if isinstance(norm, dict) else None
        lo, hi = POLICY_EPSILON_RANGE
        if not isinstance(norm, dict) or set(norm) != {"epsilon"} or isinstance(eps, bool) or not isinstance(eps, (int, float)) \
                or not lo <= eps <= hi:
            raise ValueError(f"{where}: obs_normalization must be null or {{\"epsilon\": a number in [{lo:g}, {hi:g}]}} "
                             f"(POLICY_EPSILON_RANGE), got {str(norm)[:80]}")
    obs, act = dim("obs_dim", meta["obs_dim"]), dim("act_dim", meta["act_dim"])
    arch = meta["net_arch"]
    if not isinstance(arch, list) or len(arch) > POLICY_MAX_LAYERS:
        raise ValueError(f"{where}: net_arch must be a list of at most {POLICY_MAX_LAYERS} layer widths, got {arch!r}")
    for i, w in enumerate(arch):
        dim(f"net_arch[{i}]", w)
    bounds = []
    for key in ("action_low", "action_high"):
        v = meta[key]
        ok = isinstance(v, list) and len(v) == act and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
        if not ok or not (np.abs(np.asarray(v, dtype=np.float64)) <= FLOAT32_MAX).all():  # the policy clips in float32
            raise ValueError(f"{where}: {key} must be a list of {act} (act_dim) finite numbers of magnitude at most "
                             f"{FLOAT32_MAX:.7g} (float32), got {str(v)[:80]}")
        bounds.append(np.asarray(v, dtype=np.float32))
    if (bounds[0] > bounds[1]).any():
        raise ValueError(f"{where}: action_low must be <= action_high element-wise")
    return {**meta, "obs_dim": obs, "act_dim": act}


class _ObsNormalizer(torch.nn.Module):
    """``(obs - mean) / (std + epsilon)``: the saved running statistics of the observations."""

    def __init__(self, dim: int, epsilon: float):
        super().__init__()
        self.epsilon = float(epsilon)
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("std", torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / (self.std + self.epsilon)


class SavedPolicy:
    """A deterministic MLP actor loaded from ``policy.json`` + ``policy.pt`` (weights only)."""

    def __init__(
        self, meta: dict[str, Any], state: Mapping[str, torch.Tensor], source: str = "policy.json", weights: str = "policy.pt"
    ):
        meta = _check_meta(meta, source)
        self.meta = meta
        act = _ACTIVATIONS[meta.get("activation", "tanh")]
        layers: list[torch.nn.Module] = []
        last = meta["obs_dim"]
        # skip_init: the layers are filled from ``state`` below, and building a policy (as the engines
        # do at every evaluation) must not draw from torch's global generator, which training samples from
        linear = lambda i, o: torch.nn.utils.skip_init(torch.nn.Linear, i, o)  # noqa: E731
        for width in meta["net_arch"]:
            layers += [linear(last, int(width)), act()]
            last = int(width)
        self.policy_net = torch.nn.Sequential(*layers)
        self.action_net = linear(last, meta["act_dim"])
        norm = meta.get("obs_normalization")
        self.obs_normalizer = _ObsNormalizer(meta["obs_dim"], norm["epsilon"]) if norm is not None else torch.nn.Identity()
        module = torch.nn.Module()
        module.policy_net, module.action_net, module.obs_normalizer = self.policy_net, self.action_net, self.obs_normalizer
        if not isinstance(state, Mapping) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
            raise ValueError(f"{weights}: must hold a {{name: tensor}} dict, got {type(state).__name__}")
        expected = {k: tuple(v.shape) for k, v in module.state_dict().items()}
        got = {k: tuple(v.shape) for k, v in state.items()}
        if got != expected:
            diff = sorted(set(expected.items()) ^ set(got.items()))[:4]
            raise ValueError(f"{weights} does not match {source}: tensors differ at {diff} (name, shape); expected {expected}")
        module.load_state_dict(dict(state), strict=True)
        for name, v in state.items():
            if not torch.isfinite(v).all():
                raise ValueError(f"{weights}: tensor {name!r} holds non-finite values")
        if norm is not None and (state["obs_normalizer.std"] < 0).any():
            raise ValueError(f"{weights}: tensor 'obs_normalizer.std' holds negative values; allowed: std >= 0")
        self.low = np.asarray(meta["action_low"], dtype=np.float32)
        self.high = np.asarray(meta["action_high"], dtype=np.float32)

    @classmethod
    def load(cls, path: str | Path) -> "SavedPolicy":
        """Load from a folder holding ``policy.json`` and ``policy.pt`` (or the path of either), or a
        bundled policy by name (:func:`actuator_gym.configs.bundled_policies`: ``"quadruped_walk"``).

        ``ValueError`` naming the file for a missing or malformed file: ``policy.json`` must be a JSON
        object with the fields written by training (sizes and bounds checked), ``policy.pt`` a
        weights-only ``{name: tensor}`` file whose shapes match it."""
        p = Path(path)
        if not p.exists() and str(path) in bundled_policies():  # a bundled policy's name
            p = bundled_policies()[str(path)]
        folder = p if p.is_dir() else p.parent
        meta_path, weights_path = folder / "policy.json", folder / "policy.pt"
        for f in (meta_path, weights_path):
            if not f.is_file():
                raise ValueError(f"saved policy: {f} not found (expected policy.json and policy.pt in {folder})")
        meta = parse_json_object(read_bytes(meta_path, POLICY_JSON_MAX_BYTES, "policy.json"), str(meta_path), "policy.json")
        meta = _check_meta(meta, str(meta_path))
        # the sizes policy.json implies bound the weights file and what it declares, before anything is inflated
        widths = [meta["obs_dim"], *meta["net_arch"], meta["act_dim"]]
        params = sum((a + 1) * b for a, b in zip(widths, widths[1:])) + (2 * meta["obs_dim"] if meta.get("obs_normalization") else 0)
        budget = min(POLICY_WEIGHTS_MAX_BYTES, 8 * params + POLICY_ARCHIVE_SLACK_BYTES)
        size = weights_path.stat().st_size
        if size > budget:
            raise ValueError(f"{weights_path}: is {size} bytes; allowed: at most {budget} (8 bytes per parameter of "
                             f"{meta_path.name}'s {params} + POLICY_ARCHIVE_SLACK_BYTES, at most POLICY_WEIGHTS_MAX_BYTES)")
        if not zipfile.is_zipfile(weights_path):
            raise ValueError(f"{weights_path}: not a weights-only tensor file: allowed: a torch.save zip archive")
        zip_sizes(weights_path, budget, f"policy.pt (for {params} parameters)")
        try:
            state = torch.load(weights_path, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - any failure of the safe loader
            raise ValueError(f"{weights_path}: not a weights-only tensor file: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}") from None
        return cls(meta, state, source=str(meta_path), weights=str(weights_path))

    @torch.inference_mode()
    def __call__(self, obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32))
        a = self.action_net(self.policy_net(self.obs_normalizer(x))).numpy()
        return np.clip(a, self.low, self.high)


def save_policy(
    folder: Path, task: str, obs_space: gym.spaces.Box, act_space: gym.spaces.Box, net_arch, activation: str,
    state: Mapping[str, torch.Tensor], obs_normalization_epsilon: float | None = None,
) -> SavedPolicy:
    """Write an actor in the safe format: ``state`` holds ``policy_net.<i>.*`` (the hidden layers,
    ``Linear`` at even ``i``), ``action_net.*`` and, with ``obs_normalization_epsilon``,
    ``obs_normalizer.mean`` / ``obs_normalizer.std``. The files are checked by loading them back
    (every engine's saver ends here); returns the loaded :class:`SavedPolicy`."""
    v2 = obs_normalization_epsilon is not None or activation not in _V1_ACTIVATIONS
    meta = {
        "format": POLICY_FORMAT if v2 else POLICY_FORMAT_V1,
        "task": task,
        "obs_dim": int(np.prod(obs_space.shape)),
        "act_dim": int(np.prod(act_space.shape)),
        "net_arch": [int(w) for w in net_arch],
        "activation": activation,
        "action_low": act_space.low.tolist(),
        "action_high": act_space.high.tolist(),
    }
    if obs_normalization_epsilon is not None:
        meta["obs_normalization"] = {"epsilon": float(obs_normalization_epsilon)}
    state = {k: v.detach().to("cpu").clone().contiguous() for k, v in state.items()}
    policy = SavedPolicy(meta, state)  # the checks of load, before anything is written
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(folder / "policy.pt") as tmp:  # each file whole or not at all, links replaced
        torch.save(state, tmp)
    write_atomic(folder / "policy.json", json.dumps(meta, indent=1))
    return policy


def write_learning_curve(folder: Path, curve: list[tuple[int, float]], title: str) -> None:
    """``learning_curve.csv`` (``timesteps,mean_eval_return``) and ``learning_curve.png``."""
    from . import plots

    write_atomic(folder / "learning_curve.csv", "timesteps,mean_eval_return\n" + "".join(f"{s},{r:.6f}\n" for s, r in curve))
    plots.learning_curve([c[0] for c in curve], [c[1] for c in curve], folder / "learning_curve.png", title)


def save_sb3_policy(model: Any, folder: Path, task: str, obs_space: gym.spaces.Box, act_space: gym.spaces.Box, net_arch) -> SavedPolicy:
    """Write an SB3 ``ActorCriticPolicy``'s deterministic actor in the safe format."""
    state = {}
    for k, v in model.policy.state_dict().items():
        if k.startswith("mlp_extractor.policy_net."):
            state["policy_net." + k[len("mlp_extractor.policy_net."):]] = v
        elif k.startswith("action_net."):
            state[k] = v
    return save_policy(folder, task, obs_space, act_space, net_arch, "tanh", state)


def evaluate(policy: Callable[[np.ndarray], np.ndarray], env: gym.Env, episodes: int, seed: int) -> float:
    """Mean undiscounted return of ``policy`` over ``episodes`` episodes."""
    total = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        ret, done = 0.0, False
        while not done:
            obs, r, term, trunc, _ = env.step(policy(obs))
            ret += float(r)
            done = term or trunc
        total.append(ret)
    return float(np.mean(total))


def train_ppo(
    task: str,
    out_dir: str | Path,
    *,
    actuators: Mapping[str, Any] | None = None,
    task_kwargs: Mapping[str, Any] | None = None,
    total_timesteps: int = 50_000,
    num_envs: int = 8,
    n_steps: int = 256,
    batch_size: int = 256,
    learning_rate: float = 3e-4,
    gamma: float = 0.99,
    eval_every: int = 10_000,
    eval_episodes: int = 5,
    net_arch=(64, 64),
    log_std_init: float = 0.0,
    seed: int = 0,
    progress: bool = True,
    algo: str = "ppo",
) -> dict[str, Any]:
    """Train PPO (Stable-Baselines3) on ``task`` and write ``policy.json``/``policy.pt`` (the safe
    format, :class:`SavedPolicy`), ``sb3_model.zip`` (Stable-Baselines3's own, ``PPO.load``),
    ``learning_curve.csv`` and ``learning_curve.png`` into ``out_dir``, and SB3's training log into
    ``out_dir/logs`` (:data:`LOG_DIR`: ``progress.csv``, plus TensorBoard event files when
    ``tensorboard`` is installed), with the actuator statistics of the finished episodes
    (``Episode_Actuator/<group>/<stat>``, :class:`~actuator_gym.adapters.ActuatorStatsCallback`)
    next to SB3's own ``rollout/`` and ``train/`` keys. ``log_std_init``: the initial log standard
    deviation of the Gaussian actions (in action units; SB3's default 0.0 is a standard deviation of
    1). Returns a report (``log_dir``: that folder; ``resume_file``: ``sb3_model.zip``)."""
    try:
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
    except ImportError:
        raise ValueError("train needs Stable-Baselines3: pip install 'actuator-gym[sb3]'") from None
    from stable_baselines3.common.logger import configure

    from ..adapters import ActuatorStatsCallback, sb3
    from .progress import Progress

    if algo != "ppo":
        raise ValueError(f"train: algo must be 'ppo', got {algo!r}")
    out = prepare_run_dir(out_dir)
    task_kwargs = dict(task_kwargs or {})
    # small MLPs: one thread is fastest (more threads only spin against the physics on small CPUs)
    with torch_threads(1):
        torch.manual_seed(seed)
        vec = make_vec_env(task, num_envs, actuators, **task_kwargs)
        venv = sb3(vec)
        venv.seed(seed)
        eval_env = make_env(task, actuators, **task_kwargs)
        n_steps = max(1, min(n_steps, max(1, total_timesteps // num_envs)))
        batch_size = min(batch_size, n_steps * num_envs)
        model = PPO(
            "MlpPolicy", venv, n_steps=n_steps, batch_size=batch_size, learning_rate=learning_rate, gamma=gamma,
            seed=seed, policy_kwargs=dict(net_arch=list(net_arch), log_std_init=float(log_std_init)), device="cpu", verbose=0,
        )
        log_dir = output_dir(out, LOG_DIR)
        model.set_logger(configure(str(log_dir), log_formats()))
        curve: list[tuple[int, float]] = []

        def act(obs):
            a, _ = model.predict(obs, deterministic=True)
            return a

        class Tracker(BaseCallback):
            def __init__(self):
                super().__init__()
                self.bar = Progress(total_timesteps, f"PPO {task}", "step", progress)
                self.next_eval = eval_every

            def _on_step(self) -> bool:
                self.bar.update(min(self.num_timesteps, total_timesteps) - self.bar.n)
                if self.num_timesteps >= self.next_eval:
                    self.next_eval += eval_every
                    curve.append((self.num_timesteps, evaluate(act, eval_env, eval_episodes, seed + 1000)))
                    self.bar.set_postfix(eval_return=f"{curve[-1][1]:.1f}")
                return True

            def _on_training_end(self) -> None:
                self.bar.close()

        t0 = time.perf_counter()
        curve.append((0, evaluate(act, eval_env, eval_episodes, seed + 1000)))
        model.learn(total_timesteps=total_timesteps, callback=[Tracker(), ActuatorStatsCallback()])
        final = (model.num_timesteps, evaluate(act, eval_env, eval_episodes, seed + 1000))  # after the last update
        if curve[-1][0] == final[0]:
            curve[-1] = final
        else:
            curve.append(final)
        wall = time.perf_counter() - t0
        save_sb3_policy(model, out, task, eval_env.observation_space, eval_env.action_space, net_arch)
        with atomic_path(out / SB3_MODEL_FILE) as tmp:  # the whole SB3 model too: PPO.load(out / "sb3_model.zip") resumes it
            model.save(tmp)
        write_learning_curve(out, curve, f"PPO (Stable-Baselines3) on {task}")
        venv.close()
        eval_env.close()
        return {"task": task, "timesteps": int(model.num_timesteps), "wall_s": wall, "curve": curve, "out_dir": str(out),
                "log_dir": str(log_dir), "resume_file": SB3_MODEL_FILE}
