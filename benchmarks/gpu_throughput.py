"""Throughput of the Warp backends with actuators at every substep (no task-layer Python).

For each (task model, num_envs): a ``MujocoWarpBackend`` and an ``ActuatorCollection`` on the same
device, stepped by ``DeviceLoop`` (state read through torch views, efforts written into
``qfrc_applied``, physics substep; CUDA graphs where allowed). Measured side by side in one run:

* ``explicit``: actuators + physics per substep;
* ``physics``: physics only (the same backend, efforts held);
* ``native``: the task's actuators compiled into MuJoCo-Warp's own (``execution="native"``: the
  one native side, :class:`~actuator_gym.backends.native_side.NativeSide`, and the substep engine's native
  strategy): targets into ``ctrl`` once, ``decimation`` substeps in one
  ``step`` call, the telemetry read back from ``actuator_force`` -- no actuator kernels of ours;
* actuator share = 1 - physics / (explicit or native) (median of repeats).

env-steps/s counts control steps (``decimation`` substeps) of every env. Usage:

    python benchmarks/gpu_throughput.py --device cuda:0 --sizes quadruped:1024,quadruped:4096,pendulum:4096
    python benchmarks/gpu_throughput.py --device cpu --sizes pendulum:4,quadruped:4 --steps 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import mujoco
import torch

from actuator_gym import ActuatorCollection
from actuator_gym.runtime.device_loop import DeviceLoop
from actuator_gym.backends.mujoco_warp import MujocoWarpBackend
from actuator_gym.backends.native_side import NativeSide
from actuator_gym.runtime.substep import SubstepEngine


def _setup(task: str):
    if task == "pendulum":
        from actuator_gym.tasks.pendulum import PendulumCfg

        cfg = PendulumCfg()
    elif task == "quadruped":
        from actuator_gym.tasks.quadruped import QuadrupedCfg

        cfg = QuadrupedCfg()
    else:
        raise ValueError(f"unknown task {task!r} (pendulum, quadruped)")
    model = mujoco.MjModel.from_xml_string(cfg.model_xml())
    model.opt.timestep = cfg.physics_dt
    return model, cfg


def _native(model, cfg, num_envs: int, device: str):
    """``(step, backend)``: one control step of ``cfg``'s actuators run natively on MuJoCo-Warp."""
    coll = ActuatorCollection(cfg.actuators, joint_names=NativeSide.joint_names(model), num_envs=num_envs, seed=0)
    native = NativeSide.for_task(coll, None, model, cfg.model_xml(), "native", "gpu_throughput", "mujoco_warp")
    be = MujocoWarpBackend(native.model, num_envs, device=device)
    native.attach(be)
    coll.target_command.position[:] = torch.as_tensor(be.joints.default_pos, dtype=coll.target_command.position.dtype)
    engine = SubstepEngine(coll, be, cfg.physics_dt, cfg.decimation, native=native)
    engine.reset_envs()

    def step():
        engine.advance()
        engine.telemetry()  # the info's telemetry, read from the engine's outputs
    return step, be


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(task: str, num_envs: int, device: str, steps: int, repeats: int) -> dict:
    model, cfg = _setup(task)
    be = MujocoWarpBackend(model, num_envs, device=device)
    coll = ActuatorCollection(cfg.actuators, joint_names=be.joint_names, num_envs=num_envs, device=be.device, seed=0)
    coll.target_command.position[:] = torch.as_tensor(be.joints.default_pos, dtype=torch.float32, device=be.device)
    loop = DeviceLoop(be, coll)
    dec = cfg.decimation
    loop.run(2 * dec)  # compile / load kernels, capture graphs
    be.step(2, derived=False)
    native_step, nbe = _native(model, cfg, num_envs, device)
    for _ in range(2):
        native_step()
    full, phys, nat = [], [], []
    for _ in range(repeats):  # the three side by side in every repeat
        _sync(be.device)
        t0 = time.perf_counter()
        for _ in range(steps):
            loop.run(dec)
        _sync(be.device)
        t1 = time.perf_counter()
        for _ in range(steps):
            be.step(dec, derived=False)
        _sync(be.device)
        t2 = time.perf_counter()
        for _ in range(steps):
            native_step()
        _sync(nbe.device)
        t3 = time.perf_counter()
        full.append(t1 - t0)
        phys.append(t2 - t1)
        nat.append(t3 - t2)
    f, p, n = statistics.median(full), statistics.median(phys), statistics.median(nat)
    return {
        "task": task, "num_envs": num_envs, "device": str(be.device), "decimation": dec,
        "env_steps_per_s": steps * num_envs / f, "substeps_per_s": steps * dec / f,
        "physics_only_env_steps_per_s": steps * num_envs / p,
        "actuator_share": max(0.0, 1.0 - p / f), "captured": dict(loop.captured), "note": loop.note,
        "native_env_steps_per_s": steps * num_envs / n, "native_actuator_share": max(0.0, 1.0 - p / n),
    }


def mjlab_peer(num_envs: int, device: str, steps: int) -> str:
    """mjlab's Go1 flat-velocity task at ``num_envs`` (only where mjlab is installed)."""
    try:
        import mjlab  # noqa: F401
    except ImportError:
        return "mjlab: not installed here (peer unmeasured)"
    try:  # pragma: no cover - needs mjlab and a GPU
        import gymnasium as gym
        import mjlab.tasks  # noqa: F401  (registers the tasks)

        env = gym.make("Mjlab-Velocity-Flat-Unitree-Go1", num_envs=num_envs, device=device)
        env.reset()
        act = torch.zeros(env.action_space.shape, device=device)
        for _ in range(5):
            env.step(act)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            env.step(act)
        torch.cuda.synchronize()
        return f"mjlab Go1 flat velocity: {steps * num_envs / (time.perf_counter() - t0):,.0f} env-steps/s at {num_envs} envs"
    except Exception as exc:
        return f"mjlab: installed but the peer run failed: {exc!r}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--sizes", default="quadruped:1024,quadruped:4096,pendulum:4096")
    ap.add_argument("--steps", type=int, default=50, help="control steps per timed repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-envs", type=int, default=4096, help="mjlab env count (0: skip)")
    args = ap.parse_args(argv)
    print(f"torch {torch.__version__}, device {args.device}, {args.steps} control steps x {args.repeats} repeats (medians)")
    print(f"{'task':10s} {'envs':>6s} {'actuators':>9s} {'env-steps/s':>12s} {'physics-only':>13s} "
          f"{'actuator share':>15s} {'vs physics':>10s}  captured")
    for item in args.sizes.split(","):
        task, n = item.split(":")
        r = measure(task, int(n), args.device, args.steps, args.repeats)
        cap = ",".join(k for k, v in r["captured"].items() if v) or "none"
        p = r["physics_only_env_steps_per_s"]
        for kind, rate, share, note in (("explicit", r["env_steps_per_s"], r["actuator_share"], f"{cap} ({r['note'] or 'all'})"),
                                        ("native", r["native_env_steps_per_s"], r["native_actuator_share"],
                                         "MuJoCo-Warp's actuators (no kernels of ours)")):
            print(f"{task:10s} {r['num_envs']:6d} {kind:>9s} {rate:12,.0f} {p:13,.0f} {100 * share:14.1f}% "
                  f"{rate / p:9.2f}x  {note}")
    if args.peer_envs:
        print(mjlab_peer(args.peer_envs, args.device, args.steps))


if __name__ == "__main__":
    main()
