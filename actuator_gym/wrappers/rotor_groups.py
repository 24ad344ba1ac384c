"""Rotor groups of a Gymnasium MuJoCo env: which rotors a ``ThrusterCfg`` drives, and how their
thrust reaches the env (used by :class:`~actuator_gym.wrappers.ActuatorWrapper`).

Rotor names are resolved per group, against the model:

1. the **sites driven by the env's own MuJoCo actuators** (site transmission, e.g.
   ``<motor site="rotor_0" gear="0 0 1 0 0 0" ctrlrange="0 10"/>``), in actuator order: the thrust
   goes through ``data.ctrl`` (:class:`~actuator_gym.runtime.rotors.CtrlWriter`, ``ctrl = thrust / (gain *
   |gear[:3]|)``); a gear torque component (``gear="0 0 1 0 0 0.07"``) gives the yaw reaction. The
   actuators must be plain motors (fixed gain, no bias, no activation dynamics), and their
   ``ctrlrange`` / ``forcerange``, when limited, must hold the whole ``thrust_range`` (MuJoCo would
   otherwise clip the rotor force silently);
2. if the group's regexes match none of those sites: the model's **bodies**: the thrust acts along
   each rotor body's z axis through its ``xfrc_applied`` (:class:`~actuator_gym.runtime.rotors.BodyForceWriter`;
   no reaction torque).

Initial thrust (``initial_thrust``), at every reset, whatever ``k_f`` is drawn (the rotor speed is
``sqrt(thrust / k_f)``): ``None`` starts every rotor idle, at ``max(T_min, 0)``; a thrust ``T0`` [N]
starts them at ``T0``, e.g. the hover thrust.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mujoco
import numpy as np

from .._checks import check_real
from ..actuators.thruster import ThrusterCfg
from ..actuators.params import match_names
from ..runtime.rotors import BodyForceWriter, CtrlWriter, RotorGroup, RotorGroups, rotor_group_seeds

__all__ = ["site_actuators", "rotor_initial_thrust", "env_rotor_groups"]

_TRN_SITE = int(mujoco.mjtTrn.mjTRN_SITE)


def site_actuators(model: mujoco.MjModel) -> list[tuple[int, str]]:
    """``(actuator id, site name)`` of the model's actuators with a site transmission, in actuator order."""
    out = []
    for a in range(model.nu):
        if int(model.actuator_trntype[a]) == _TRN_SITE:
            sid = int(model.actuator_trnid[a, 0])
            out.append((a, mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SITE, sid) or f"site{sid}"))
    return out


def _newtons_per_ctrl(model: mujoco.MjModel, acts: list[int], rotors: list[str], cfg: ThrusterCfg, group: str) -> np.ndarray:
    """Thrust [N] per unit of ctrl of each rotor's actuator, every actuator checked (plain motor,
    limits holding the thrust range)."""
    out = []
    lo, hi = cfg.thrust_range
    for a, r in zip(acts, rotors):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator{a}"
        where = f"ActuatorWrapper: rotor group '{group}': rotor '{r}' (actuator '{name}')"
        if (int(model.actuator_gaintype[a]) != int(mujoco.mjtGain.mjGAIN_FIXED)
                or int(model.actuator_biastype[a]) != int(mujoco.mjtBias.mjBIAS_NONE)
                or int(model.actuator_dyntype[a]) != int(mujoco.mjtDyn.mjDYN_NONE)):
            raise ValueError(f"{where} must be a plain motor (fixed gain, no bias, no activation dynamics) "
                             "so that its force is proportional to ctrl")
        gain = float(model.actuator_gainprm[a, 0])
        lever = float(np.linalg.norm(model.actuator_gear[a, 0:3]))
        if gain <= 0 or lever <= 0:
            raise ValueError(f"{where}: needs a gain > 0 and a force gear (gear[0:3] != 0), got gain {gain}, "
                             f"gear {model.actuator_gear[a].tolist()}")
        for flag, rng, scale, what in ((model.actuator_ctrllimited, model.actuator_ctrlrange, gain * lever, "ctrlrange"),
                                       (model.actuator_forcelimited, model.actuator_forcerange, lever, "forcerange")):
            if flag[a]:
                a_lo, a_hi = (float(v) * scale for v in rng[a])
                if lo < a_lo - 1e-9 * max(1.0, abs(a_lo)) or hi > a_hi + 1e-9 * max(1.0, abs(a_hi)):
                    raise ValueError(
                        f"{where}: its {what} {rng[a].tolist()} delivers thrust in [{a_lo:g}, {a_hi:g}] N, which does "
                        f"not hold thrust_range {cfg.thrust_range} N (MuJoCo would clip the rotor force); widen the "
                        f"{what} or narrow thrust_range"
                    )
        out.append(gain * lever)
    return np.asarray(out)


def rotor_initial_thrust(cfg: ThrusterCfg, initial_thrust: float | None, group: str) -> float:
    """The thrust [N] the group's rotors start at (module docstring)."""
    if initial_thrust is None:
        return max(cfg.thrust_range[0], 0.0)
    return check_real(initial_thrust, f"initial_thrust of rotor group '{group}' [N]", "ActuatorWrapper", low=0.0)


def env_rotor_groups(model: mujoco.MjModel, data: mujoco.MjData, cfgs: Mapping[str, ThrusterCfg], *,
                     num_substeps: int, seed: int | None, initial_thrust: Any = None) -> RotorGroups:
    """The :class:`~actuator_gym.runtime.rotors.RotorGroups` of ``cfgs`` on one env (``model``, ``data``;
    batch of one). ``initial_thrust``: None, a number [N] or ``{group: number or None}``."""
    if isinstance(initial_thrust, Mapping):
        unknown = sorted(set(initial_thrust) - set(cfgs))
        if unknown:
            raise ValueError(f"ActuatorWrapper: initial_thrust names unknown rotor groups {unknown}; rotor groups are {list(cfgs)}")
    sites = site_actuators(model)
    site_names = [n for _, n in sites]
    body_names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}" for b in range(model.nbody)]
    ctrl, xmat, xfrc = data.ctrl[None], data.xmat[None], data.xfrc_applied[None]  # views, batch of one
    groups = []
    for (g, cfg), s in zip(cfgs.items(), rotor_group_seeds(seed, len(cfgs))):
        where = f"ActuatorWrapper: rotor group '{g}'"
        ids = match_names(cfg.thruster_names_expr, site_names, f"{where}: thruster_names_expr")
        if ids:
            names = [site_names[i] for i in ids]
            acts = [sites[i][0] for i in ids]
            writer: Any = CtrlWriter(ctrl, acts, _newtons_per_ctrl(model, acts, names, cfg, g))
        else:
            ids = [i for i in match_names(cfg.thruster_names_expr, body_names, f"{where}: thruster_names_expr") if i > 0]
            if not ids:
                raise ValueError(
                    f"{where}: thruster_names_expr {cfg.thruster_names_expr} matches none of the sites driven by the "
                    f"env's actuators {site_names} nor any body {body_names[1:]}"
                )
            names = [body_names[i] for i in ids]
            writer = BodyForceWriter(xmat, xfrc, ids)
        t0 = initial_thrust.get(g) if isinstance(initial_thrust, Mapping) else initial_thrust
        groups.append(RotorGroup(g, cfg, names, writer, num_envs=1, physics_dt=float(model.opt.timestep),
                                 initial_thrust=rotor_initial_thrust(cfg, t0, g), seed=s))
    return RotorGroups(groups, num_substeps, float(model.opt.timestep))
