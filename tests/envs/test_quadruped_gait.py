"""The quadruped's gait terms, foot bookkeeping, command resampling, episode clocks and gait figures."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import actuator_gym  # noqa: F401  (registers the ids; before mujoco)
from actuator_gym.tasks.quadruped import LEG_NAMES, QuadrupedTask, sample_commands
from actuator_gym.tasks.quadruped_terms import FootTracker, QuadrupedRewardCfg, RewardInputs, quadruped_reward
from actuator_gym.randomization.streams import EnvStreams
from actuator_gym.tools.gait import GaitRecorder, gait_figures

DT = 0.02


def _inputs(**changes):
    """Two envs, 12 joints, 4 feet; every term's input chosen so its value is easy by hand."""
    knee = np.array([[-2.7, -0.9]])
    base = dict(
        command=np.array([[0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]),  # env 0 moving, env 1 standing
        base_lin_vel_body=np.zeros((2, 3)), base_ang_vel_body=np.zeros((2, 3)),
        gravity_body=np.array([[0.1, 0.2, -0.97], [0.0, 0.0, -1.0]]), base_height=np.array([0.29, 0.19]),
        action=np.zeros((2, 12)), last_action=np.zeros((2, 12)), power=np.zeros(2),
        effort=np.full((2, 12), 2.0), joint_pos=np.full((2, 12), -1.8), joint_vel=np.full((2, 12), 0.1),
        last_joint_vel=np.zeros((2, 12)), default_joint_pos=np.full(12, -1.7), joint_range=np.repeat(knee, 12, axis=0),
        foot_height=np.array([[0.02, 0.08, 0.05, 0.10], [0.02, 0.02, 0.02, 0.02]]),
        foot_speed=np.array([[0.1, 0.2, 1.0, 0.5], [0.0, 0.0, 0.0, 0.0]]),
        contact=np.array([[True, True, False, False], [True] * 4]),
        first_contact=np.array([[True, False, True, False], [True, False, False, False]]),
        touchdown_air_time=np.array([[0.5, 0.0, 0.2, 0.0], [0.4, 0.0, 0.0, 0.0]]),
        air_time=np.zeros((2, 4)), contact_time=np.zeros((2, 4)), last_air_time=np.zeros((2, 4)),
        last_contact_time=np.zeros((2, 4)),
        terminated=np.array([False, True]),
    )
    base.update(changes)
    return RewardInputs(**base)


def test_gait_reward_terms_by_hand():
    cfg = QuadrupedRewardCfg()
    rew, t = quadruped_reward(cfg, DT, _inputs())
    w = lambda name, value: getattr(cfg, name) * value * DT  # noqa: E731
    # air time: env 0 lands two feet after 0.5 s and 0.2 s of swing (target 0.3 s): 0.2 - 0.1; env 1 stands: 0
    np.testing.assert_allclose(t["feet_air_time"], [w("feet_air_time", 0.1), 0.0])
    # slip: the two stance feet of env 0 move at 0.1 and 0.2 m/s; env 1's feet are still
    np.testing.assert_allclose(t["foot_slip"], [w("foot_slip", 0.3), 0.0])
    # clearance (target 0.08 m): (0.06 * 0.1) + 0 * 0.2 + (0.03 * 1.0) + 0 * 0.5
    np.testing.assert_allclose(t["foot_clearance"], [w("foot_clearance", 0.036), 0.0])
    # joints at -1.8 rad: the middle of the knee range, inside the soft limits
    np.testing.assert_allclose(t["joint_limits"], 0.0)
    np.testing.assert_allclose(t["torques"], w("torques", 12 * 4.0))
    np.testing.assert_allclose(t["joint_acc"], w("joint_acc", 12 * (0.1 / DT) ** 2))
    np.testing.assert_allclose(t["orientation"], [w("orientation", 0.05), 0.0])
    # trunk height: env 0 at the 0.29 m target, env 1 0.1 m below it
    np.testing.assert_allclose(t["base_height"], [0.0, w("base_height", 0.01)])
    # stand still counts only for the zero command: 12 joints 0.1 rad off the default pose
    np.testing.assert_allclose(t["stand_still"], [0.0, w("stand_still", 1.2)])
    np.testing.assert_allclose(t["termination"], [0.0, cfg.termination])
    living = sum(v for k, v in t.items() if k != "termination")
    assert (living > 0).all()
    np.testing.assert_allclose(rew, living + t["termination"])
    # soft limits: 0.9 of the knee's 1.8 rad range about its middle -1.8 -> [-2.61, -0.99] rad
    q = np.full((2, 12), -1.8)
    q[0, 2], q[1, 5] = -0.95, -2.7
    _, t = quadruped_reward(cfg, DT, _inputs(joint_pos=q))
    np.testing.assert_allclose(t["joint_limits"], [w("joint_limits", 0.04), w("joint_limits", 0.09)])


def test_only_positive_rewards_clips_the_living_reward_not_the_termination():
    jerky = _inputs(action=np.ones((2, 12)), last_action=-np.ones((2, 12)))  # |da|² = 48: -0.16 * 48 per s
    rew, t = quadruped_reward(QuadrupedRewardCfg(only_positive_rewards=True), DT, jerky)
    living = sum(v for k, v in t.items() if k != "termination")
    assert (living < 0).all()
    np.testing.assert_allclose(rew, [0.0, QuadrupedRewardCfg().termination])  # clipped to 0, then the fall's -2
    rew, _ = quadruped_reward(QuadrupedRewardCfg(only_positive_rewards=False), DT, jerky)
    np.testing.assert_allclose(rew, living + t["termination"])


def test_air_time_variance_by_hand():
    """Feet FL, FR in contact (their last swings 0.2, 0.4 s; stances so far 0.1, 0.3 s), RL, RR in the air
    (swings so far 0.2, 0.6 -> clipped 0.5 s; last stances 0.3, 0.2 s): var(0.2, 0.4, 0.2, 0.5) +
    var(0.1, 0.3, 0.3, 0.2) = 0.016875 + 0.006875 s²."""
    cfg = QuadrupedRewardCfg(air_time_variance=-1.0)
    inp = _inputs(air_time=np.array([[0.0, 0.0, 0.2, 0.6], [0.0] * 4]),
                  contact_time=np.array([[0.1, 0.3, 0.0, 0.0], [0.5] * 4]),
                  last_air_time=np.array([[0.2, 0.4, 9.0, 9.0], [0.3] * 4]),
                  last_contact_time=np.array([[9.0, 9.0, 0.3, 0.2], [0.0] * 4]))
    _, t = quadruped_reward(cfg, DT, inp)
    np.testing.assert_allclose(t["air_time_variance"], [-1.0 * 0.02375 * DT, 0.0], atol=1e-15)
    ft = FootTracker(num_envs=1, num_feet=1, contact_height=0.025)
    ft.reset([0], np.array([[[0.0, 0.0, 0.02]]]))
    for h in (0.02, 0.02, 0.05, 0.05, 0.02):  # two steps in contact, lift for two, land
        ft.update(np.array([[[0.0, 0.0, h]]]), DT)
    assert ft.last_contact_time[0, 0] == pytest.approx(2 * DT) and ft.last_air_time[0, 0] == pytest.approx(2 * DT)
    assert ft.contact_time[0, 0] == pytest.approx(DT) and ft.air_time[0, 0] == 0.0


def test_air_time_counts_at_most_air_time_max():
    """With ``air_time_max`` = 0.5 s a foot held up for 2 s earns what a 0.5 s swing earns (0.2 s over
    the 0.3 s target); without a cap (the default) its whole 1.7 s."""
    two_s = _inputs(touchdown_air_time=np.array([[2.0, 0.0, 0.2, 0.0], [0.4, 0.0, 0.0, 0.0]]))
    cfg = QuadrupedRewardCfg(air_time_max=0.5)
    _, t = quadruped_reward(cfg, DT, two_s)
    np.testing.assert_allclose(t["feet_air_time"], [cfg.feet_air_time * (0.2 - 0.1) * DT, 0.0])
    _, t = quadruped_reward(QuadrupedRewardCfg(), DT, two_s)
    np.testing.assert_allclose(t["feet_air_time"], [cfg.feet_air_time * (1.7 - 0.1) * DT, 0.0])
    with pytest.raises(ValueError, match="reward_cfg.air_time_max"):
        QuadrupedTask(num_envs=1, reward_cfg=QuadrupedRewardCfg(air_time_max=-1.0))


def test_nested_configs_take_a_mapping_of_their_fields(tmp_path):
    """``reward_cfg`` (and every nested config) from a mapping, as an experiment file or ``gym.make``
    keyword gives it: the named fields set, the others at their defaults; unknown fields and bad
    values refused by name."""
    vec = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=1, reward_cfg={"termination": -10.0, "air_time_max": 0.5},
                       obs_scales={"lin_vel": 3.0})
    cfg = vec.unwrapped.cfg
    assert cfg.reward_cfg == QuadrupedRewardCfg(termination=-10.0, air_time_max=0.5)
    assert cfg.obs_scales.lin_vel == 3.0 and cfg.obs_scales.ang_vel == type(cfg.obs_scales)().ang_vel
    vec.close()
    with pytest.raises(TypeError, match=r"reward_cfg has no field 'terminaton' \(the fields of QuadrupedRewardCfg: \["):
        QuadrupedTask(num_envs=1, reward_cfg={"terminaton": -10.0})
    with pytest.raises(ValueError, match="reward_cfg.termination"):
        QuadrupedTask(num_envs=1, reward_cfg={"termination": float("nan")})
    with pytest.raises(TypeError, match="reward_cfg must be a QuadrupedRewardCfg or a mapping of its fields"):
        QuadrupedTask(num_envs=1, reward_cfg=[1.0])
    # through an experiment file, as the command line reads it
    from actuator_gym import configs

    f = tmp_path / "exp.yaml"
    f.write_text("kind: experiment\ntask: actuator_gym/Quadruped-v0\ntask_kwargs: {reward_cfg: {termination: -10.0}}\n")
    exp = configs.load(f)
    task = QuadrupedTask(num_envs=1, **exp.task_kwargs)
    assert task.cfg.reward_cfg.termination == -10.0 and task.cfg.reward_cfg.foot_slip == QuadrupedRewardCfg().foot_slip


def test_base_height_term_by_hand():
    cfg = QuadrupedRewardCfg(base_height=-30.0, base_height_target=0.3)
    _, t = quadruped_reward(cfg, DT, _inputs())
    np.testing.assert_allclose(t["base_height"], [-30.0 * 0.01**2 * DT, -30.0 * 0.11**2 * DT])


def test_reward_terms_switch_off_with_zero_weight():
    cfg = QuadrupedRewardCfg(feet_air_time=0.0, foot_slip=0.0, foot_clearance=0.0)
    _, t = quadruped_reward(cfg, DT, _inputs())
    for name in ("feet_air_time", "foot_slip", "foot_clearance"):
        np.testing.assert_array_equal(t[name], 0.0)


def test_foot_tracker_bookkeeping_by_hand():
    """Contact below 2.5 cm; air time counts the steps in the air; a touchdown reports it; a reset clears one env."""
    ft = FootTracker(num_envs=2, num_feet=1, contact_height=0.025)
    z = lambda a, b, x=(0.0, 0.0): np.array([[[x[0], 0.0, a]], [[x[1], 0.0, b]]])  # noqa: E731
    ft.reset([0, 1], z(0.02, 0.02))
    assert ft.contact.tolist() == [[True], [True]] and ft.air_time.max() == 0
    heights = [(0.05, 0.05), (0.09, 0.06), (0.04, 0.02), (0.02, 0.02)]
    xs = [(0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.01, 0.004)]
    seen = []
    for (a, b), x in zip(heights, xs):
        ft.update(z(a, b, x), DT)
        seen.append((ft.contact[:, 0].tolist(), ft.first_contact[:, 0].tolist(), ft.air_time[:, 0].copy(),
                     ft.touchdown_air_time[:, 0].copy()))
    # env 1 lifts for 2 steps and lands at step 3: its touchdown reports 2 * dt of air time
    assert seen[2][1] == [False, True] and seen[2][3] == pytest.approx([0.0, 2 * DT])
    np.testing.assert_allclose(ft.last_swing_peak[1, 0], 0.06)
    # env 0 lifts for 3 steps and lands at step 4
    np.testing.assert_allclose(seen[2][2], [3 * DT, 0.0])
    assert seen[3][1] == [True, False] and seen[3][3] == pytest.approx([3 * DT, 0.0])
    np.testing.assert_allclose(ft.last_swing_peak[0, 0], 0.09)
    # stance speed: 1 cm and 4 mm over one step
    np.testing.assert_allclose(ft.speed[:, 0], [0.01 / DT, 0.004 / DT])
    # env 0 lifts again, then env 1 is reset (in the air); env 0 keeps its bookkeeping
    ft.update(z(0.06, 0.03, (0.01, 0.004)), DT)
    before = ft.air_time[0].copy(), ft.contact[0].copy()
    ft.reset([1], z(0.0, 0.10, (0.01, 0.004))[1:])
    assert ft.air_time[0] == before[0] and ft.contact[0] == before[1]
    assert ft.air_time[1, 0] == 0 and not ft.contact[1, 0]
    ft.update(z(0.06, 0.10, (0.01, 0.004)), DT)
    assert ft.speed[1, 0] == 0.0  # no speed across the reset


def test_slip_speed_follows_the_contact_point_so_rolling_is_not_slip():
    """A sphere foot (r = 2 cm) turning by 0.1 rad about y per step while its centre moves r * 0.1 along x
    rolls: its contact point moves r (theta - sin theta) (the cycloid), the centre r theta. Sliding the
    same foot without turning moves both by the centre's displacement."""
    r, th = 0.02, 0.1
    ry = np.array([[np.cos(th), 0.0, np.sin(th)], [0.0, 1.0, 0.0], [-np.sin(th), 0.0, np.cos(th)]])
    ft = FootTracker(num_envs=2, num_feet=1, contact_height=0.025, foot_radius=r)
    ft.reset([0, 1], np.full((2, 1, 3), [0.0, 0.0, r]), np.broadcast_to(np.eye(3), (2, 1, 3, 3)))
    ft.update(np.array([[[r * th, 0.0, r]], [[r * th, 0.0, r]]]), DT, np.stack([ry, np.eye(3)])[:, None])
    np.testing.assert_allclose(ft.speed[:, 0], r * th / DT)
    np.testing.assert_allclose(ft.slip_speed[:, 0], [r * (th - np.sin(th)) / DT, r * th / DT])
    assert ft.stance.all() and not ft.first_contact.any()
    # without rotations the feet are points
    pt = FootTracker(num_envs=1, num_feet=1, contact_height=0.025, foot_radius=r)
    pt.reset([0], np.zeros((1, 1, 3)))
    pt.update(np.array([[[0.003, 0.004, 0.0]]]), DT)
    np.testing.assert_allclose(pt.slip_speed, 0.005 / DT)


def test_task_feet_from_the_physics_and_a_reset_leaves_other_envs_alone():
    kw = dict(num_envs=3, seed=4, autoreset_mode="disabled", episode_length_s=10.0)
    a, b = QuadrupedTask(**kw), QuadrupedTask(**kw)
    rng = np.random.default_rng(0)
    for i in range(40):
        act = rng.uniform(-0.3, 0.3, (3, 12))
        a.step(act)
        b.step(act)
        if i == 19:
            a.reset(options={"reset_mask": np.array([False, True, False])})
            assert a.feet.air_time[1].max() == 0 and a.feet.first_contact[1].sum() == 0
    for k in ("air_time", "contact", "touchdown_air_time", "speed", "height"):
        np.testing.assert_array_equal(getattr(a.feet, k)[[0, 2]], getattr(b.feet, k)[[0, 2]])
    for k in a.reward_terms:
        np.testing.assert_array_equal(a.reward_terms[k][[0, 2]], b.reward_terms[k][[0, 2]])
    assert (b.feet.touchdown_air_time > 0).any()  # the random actions did lift and land feet
    # foot centres = MuJoCo's *_foot sites of every world
    pos = a.foot_positions()
    for i in range(3):
        d = a.backend.data(i)
        sites = np.array([d.site(f"{leg}_foot").xpos for leg in LEG_NAMES])
        np.testing.assert_allclose(pos[i], sites, atol=1e-9)
    np.testing.assert_array_equal(a.feet.height, pos[..., 2])


def test_commands_resample_in_episode_with_standing_commands_under_a_seed():
    kw = dict(command_resample_s=0.1, standing_command_prob=0.5, episode_length_s=5.0, joint_pos_noise=0.0)
    task = QuadrupedTask(num_envs=3, seed=7, **kw)
    twin = QuadrupedTask(num_envs=1, seed=8, **kw)  # env 1 of the first: its own stream, seed 7 + 1
    cmds, twin_cmds = [task.commands.copy()], [twin.commands.copy()]
    for _ in range(20):
        task.step(np.zeros((3, 12)))
        twin.step(np.zeros((1, 12)))
        cmds.append(task.commands.copy())
        twin_cmds.append(twin.commands.copy())
    cmds = np.array(cmds)
    changed = np.any(cmds[1:] != cmds[:-1], axis=2)  # (20, 3): after step t+1
    # every 5 steps (0.1 s at 50 Hz); a standing command may repeat as zero
    assert not changed[[i for i in range(20) if (i + 1) % 5]].any()
    assert changed[[4, 9, 14, 19]].sum() >= 8
    np.testing.assert_array_equal(cmds[:, 1], np.array(twin_cmds)[:, 0])
    lo, hi = np.array(task.cfg.command_ranges).T
    assert ((cmds >= lo) & (cmds <= hi)).all()
    # standing commands: about half of the draws with standing_command_prob = 0.5
    rng = EnvStreams(400, np.arange(400)).for_envs(np.arange(400))
    zero = np.all(sample_commands(rng, 400, task.cfg.command_ranges, 0.5) == 0, axis=1)
    assert 0.4 < zero.mean() < 0.6


def test_command_ramp_reaches_each_drawn_command_linearly():
    """``command_ramp_s`` = 5 steps, a draw every 10: the draws are those of the abrupt task (the same
    streams), the episode's first command holds at once, and each later one is reached on the 5th
    step after its draw, in equal fifths from the command in force; the observation shows it."""
    kw = dict(num_envs=3, seed=5, command_resample_s=0.2, standing_command_prob=0.3, joint_pos_noise=0.0)
    abrupt, ramped = QuadrupedTask(**kw), QuadrupedTask(command_ramp_s=0.1, **kw)
    np.testing.assert_array_equal(ramped.commands, abrupt.commands)
    cmds, targets = [ramped.commands.copy()], [abrupt.commands.copy()]
    for _ in range(30):
        abrupt.step(np.zeros((3, 12)))
        obs, *_ = ramped.step(np.zeros((3, 12)))
        np.testing.assert_array_equal(ramped.command_target, abrupt.commands)
        np.testing.assert_allclose(obs[:, 45:48], ramped.commands * [2.0, 2.0, 0.25], rtol=1e-6)
        cmds.append(ramped.commands.copy())
        targets.append(abrupt.commands.copy())
    cmds, targets = np.array(cmds), np.array(targets)
    for draw in (10, 20):  # commands after step t are cmds[t]; the draws come after steps 10 and 20
        start, goal = cmds[draw - 1], targets[draw]
        assert np.abs(goal - start).max() > 0.1
        for k in range(1, 6):
            np.testing.assert_allclose(cmds[draw - 1 + k], start + (goal - start) * k / 5, atol=1e-12)
        np.testing.assert_array_equal(cmds[draw + 4: draw + 10], np.broadcast_to(goal, (6, 3, 3)))
    np.testing.assert_array_equal(cmds[:9], targets[:9])  # the first command: no ramp
    with pytest.raises(ValueError, match="command_ramp_s"):
        QuadrupedTask(num_envs=1, command_ramp_s=-1.0)


def test_random_episode_starts_honour_the_time_limit():
    limit = 50  # 1 s at 50 Hz
    kw = dict(num_envs=12, seed=3, episode_length_s=1.0, joint_pos_noise=0.0, standing_command_prob=1.0)
    task = QuadrupedTask(random_episode_start=True, **kw)
    clocks = task.episode_step.copy()
    assert clocks.min() >= 0 and clocks.max() < limit and len(set(clocks.tolist())) > 6
    task.reset(seed=3)
    np.testing.assert_array_equal(task.episode_step, clocks)  # drawn from the envs' own streams
    ends = []
    for t in range(1, 2 * limit + 3):
        _, _, term, trunc, _ = task.step(np.zeros((12, 12)))
        assert not term.any()
        ends += [(t, i) for i in np.flatnonzero(trunc)]
    first = {i: min(t for t, j in ends if j == i) for i in range(12)}
    for i in range(12):
        assert first[i] == limit - clocks[i]  # the first episode ends early, never late
        later = sorted(t for t, j in ends if j == i and t > first[i])
        assert later[0] == first[i] + 1 + limit  # then full episodes (NEXT_STEP: one reset step between)
    plain = QuadrupedTask(random_episode_start=False, **kw)
    assert plain.episode_step.max() == 0
    task.reset(options={"reset_mask": np.arange(12) < 6})  # a partial reset: whole episodes from 0
    assert task.episode_step[:6].max() == 0


def test_random_episode_start_is_a_field_of_every_task():
    """The pendulum's envs start their first episodes at clocks from their own streams: env i of a batch
    seeded s equals a single env seeded s + i."""
    batch = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=6, random_episode_start=True)
    batch.reset(seed=11)
    clocks = batch.unwrapped.episode_step.copy()
    limit = batch.unwrapped.max_episode_steps
    assert clocks.min() >= 0 and clocks.max() < limit and len(set(clocks.tolist())) > 3
    for i in (0, 4):
        one = gym.make_vec("actuator_gym/Pendulum-v0", num_envs=1, random_episode_start=True)
        one.reset(seed=11 + i)
        assert one.unwrapped.episode_step[0] == clocks[i]
    with pytest.raises(TypeError, match="random_episode_start"):
        gym.make_vec("actuator_gym/Pendulum-v0", num_envs=1, random_episode_start="yes")


def test_bad_options_name_the_field():
    with pytest.raises(ValueError, match="standing_command_prob"):
        QuadrupedTask(num_envs=1, standing_command_prob=1.5)
    with pytest.raises(ValueError, match="reward_cfg.soft_joint_limit"):
        QuadrupedTask(num_envs=1, reward_cfg=QuadrupedRewardCfg(soft_joint_limit=0.0))
    with pytest.raises(ValueError, match="contact_height"):
        QuadrupedTask(num_envs=1, contact_height=0.0)
    with pytest.raises(TypeError, match="reward_cfg.only_positive_rewards"):
        QuadrupedTask(num_envs=1, reward_cfg=QuadrupedRewardCfg(only_positive_rewards=1))
    with pytest.raises(TypeError, match="random_episode_start"):
        QuadrupedTask(num_envs=1, random_episode_start=1)


def test_gait_figures_by_hand():
    # one env, two feet, 6 steps; foot 0 steps once (2 steps in the air, peak 0.07 m), foot 1 never lifts
    contact = np.array([[1, 1], [0, 1], [0, 1], [1, 1], [1, 1], [1, 1]], dtype=bool)[:, None]
    height = np.array([[0.02, 0.02], [0.05, 0.02], [0.07, 0.02], [0.02, 0.02], [0.02, 0.02], [0.02, 0.02]])[:, None]
    speed = np.array([[0.0, 0.1], [1.0, 0.1], [1.0, 0.1], [0.2, 0.1], [0.0, 0.1], [0.0, 0.1]])[:, None]
    vx = np.array([0.4, 0.5, 0.6, 0.5, 0.5, 0.3])[:, None]
    xy = np.array([[0.0, 0.0], [0.01, 0], [0.02, 0], [0.03, 0], [0.03, 0.04], [0.03, 0.04]])[:, None]
    term = np.zeros((6, 1), dtype=bool)
    f = gait_figures(contact, height, speed, vx, np.full((6, 1), 0.5), xy, term, foot_radius=0.02, foot_names=["a", "b"])
    assert f["duty_factor"] == pytest.approx({"a": 4 / 6, "b": 1.0})
    # slip over whole-step stance only: foot a's touchdown step (0.2 m/s, the end of its swing) is not stance
    assert f["slip"] == pytest.approx({"a": 0.0, "b": 0.1})
    slipping = speed.copy()
    slipping[4:, 0, 0] = 0.3
    f2 = gait_figures(contact, height, speed, vx, np.full((6, 1), 0.5), xy, term, foot_radius=0.02,
                      foot_slip_speed=slipping)
    assert f2["slip"] == pytest.approx({"0": 0.2, "1": 0.1})  # foot 0's held steps 0, 4, 5: (0 + 0.3 + 0.3) / 3
    assert f["clearance"]["a"] == pytest.approx(0.05) and np.isnan(f["clearance"]["b"])
    assert f["steps"] == {"a": 1, "b": 0}
    assert f["vx_error"] == pytest.approx(0.4 / 6) and f["distance"] == pytest.approx(0.05) and f["falls"] == 0
    # a fall at step 2 ends the record of that env there
    term[1] = True
    f = gait_figures(contact, height, speed, vx, np.full((6, 1), 0.5), xy, term, foot_radius=0.02)
    assert f["falls"] == 1 and f["steps"] == {"0": 0, "1": 0} and f["vx_error"] == pytest.approx(0.05)
    assert f["distance"] == pytest.approx(0.01)
    with pytest.raises(ValueError, match="one shape"):
        gait_figures(contact, height[:3], speed, vx, vx, xy, term, 0.02)


def test_gait_recorder_on_the_task():
    env = gym.make_vec("actuator_gym/Quadruped-v0", num_envs=2, seed=0, joint_pos_noise=0.0, standing_command_prob=1.0)
    rec = GaitRecorder(LEG_NAMES)
    for _ in range(25):
        _, _, term, _, _ = env.step(np.zeros((2, 12)))
        rec.record(env.unwrapped, term)
    f = rec.figures()
    # standing on the default pose: every foot down after landing from the 1 cm drop, no falls
    assert set(f["duty_factor"]) == set(LEG_NAMES) and min(f["duty_factor"].values()) > 0.8
    assert f["falls"] == 0 and f["num_steps"] == 25 and max(f["slip"].values()) < 0.05
    env.close()


def test_rollout_cli_writes_the_gait_figures(tmp_path, capsys):
    import json

    from actuator_gym.tools.cli import main

    assert main(["rollout", "--task", "actuator_gym/Quadruped-v0", "--policy", "zero", "--steps", "30",
                 "--out", str(tmp_path)]) == 0
    fig = json.loads((tmp_path / "rollout" / "gait.json").read_text())
    assert list(fig["duty_factor"]) == list(LEG_NAMES) and fig["num_steps"] == 30 and fig["falls"] == 0
    assert "|vx err|" in capsys.readouterr().out
