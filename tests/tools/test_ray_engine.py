"""The Ray RLlib engine: `actuator-gym train --engine ray` on a local 2-CPU cluster (one run shared by
the module: Ray's start-up is the slow part), RLlib's actor mapped to the safe policy format, the CPU
sizing and the settings' checks."""

import csv
import json
import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from actuator_gym.runtime.episode_stats import EPISODE_STATS, LOG_PREFIX
from actuator_gym.tools.cli import main
from actuator_gym.tools.ray_engine import actor_cpus, check_settings, rllib_actor_state, settings_from_train
from actuator_gym.tools.training import SavedPolicy, evaluate, make_env

EXPERIMENT = Path(__file__).resolve().parents[1] / "data" / "ray_pendulum_short.yaml"
PEND = "actuator_gym/Pendulum-v0"


@pytest.fixture(scope="module")
def ray_run(tmp_path_factory):
    """`train --engine ray --env-runners 2 --envs-per-runner 16 --learners 2` on a 2-CPU local cluster."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    out = tmp_path_factory.mktemp("ray")
    try:
        rc = main(["train", "--engine", "ray", "--experiment", str(EXPERIMENT), "--env-runners", "2",
                   "--envs-per-runner", "16", "--learners", "2", "--out", str(out)])
    finally:
        ray.shutdown()
    return rc, out / "train"


def test_ray_cli_run_completes_and_writes_the_engine_files(ray_run):
    rc, out = ray_run
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    # 2 runners x 16 worlds x 32 steps (n_steps) = 1024 steps per iteration; 3072 (total_timesteps) = 3 iterations
    assert summary["engine"] == "ray" and summary["task"] == PEND and summary["seed"] == 7
    assert summary["timesteps"] == 3072 and summary["iterations"] == 3 and summary["env_steps_per_iteration"] == 1024
    assert summary["learners"] == 2 and summary["cpus_per_env_runner"] == 0.5 and summary["cpus_per_learner"] == 0.5
    with open(out / "learning_curve.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["timesteps", "mean_eval_return"]
    assert [int(r[0]) for r in rows[1:]] == [0, 1024, 2048, 3072]  # eval_every 1024
    assert float(rows[-1][1]) == pytest.approx(summary["final_eval_return"], abs=1e-5)
    assert (out / "learning_curve.png").read_bytes()[:4] == b"\x89PNG"
    with open(out / "progress.csv") as f:
        progress = list(csv.DictReader(f))
    assert [int(r["timesteps"]) for r in progress] == [1024, 2048, 3072]
    assert all(float(r["samples_per_s"]) > 0 for r in progress)


def test_ray_env_runners_are_separate_processes_with_disjoint_world_seeds(ray_run):
    _, out = ray_run
    summary = json.loads((out / "summary.json").read_text())
    runners = summary["env_runners"]
    assert [r["index"] for r in runners] == [0, 1] and [r["worker_index"] for r in runners] == [1, 2]
    pids = {r["pid"] for r in runners}
    assert len(pids) == 2 and summary["driver_pid"] not in pids and os.getpid() not in pids
    # seed 7, 16 worlds each: runner 0 -> 7..22, runner 1 -> 23..38 (distributed.block_seed)
    assert runners[0]["world_seeds"] == list(range(7, 23))
    assert runners[1]["world_seeds"] == list(range(23, 39))
    # each runner stepped its own batched env: at least its 3 x 16 x 32 counted steps (+ the NEXT_STEP reset steps)
    assert all(r["env_steps"] >= 3 * 16 * 32 and r["env_step_samples_per_s"] > 0 for r in runners)


def test_ray_actuator_statistics_reach_rllib_metrics(ray_run):
    _, out = ray_run
    summary = json.loads((out / "summary.json").read_text())
    metrics = summary["actuator_metrics"]
    # 0.5 s episodes (30 steps) end within every 32-step iteration: every group's every statistic is there
    assert set(metrics) == {f"{LOG_PREFIX}/{g}/{s}" for g in ("pendulum", "all_joints") for s in EPISODE_STATS}
    p = {s: metrics[f"{LOG_PREFIX}/pendulum/{s}"] for s in EPISODE_STATS}
    assert 0.0 <= p["saturated_fraction"] <= 1.0
    assert 0.0 < p["mean_abs_effort"] <= p["peak_abs_effort"] <= 5.0 + 1e-6  # the pendulum's effort limit [N·m]
    assert p["energy"] > 0.0
    for s in EPISODE_STATS:  # one joint group: all_joints is the same record
        assert metrics[f"{LOG_PREFIX}/all_joints/{s}"] == pytest.approx(p[s])


def test_ray_saved_policy_is_the_evaluated_policy(ray_run):
    _, out = ray_run
    summary = json.loads((out / "summary.json").read_text())
    policy = SavedPolicy.load(out)
    assert policy.meta["net_arch"] == [32, 32] and policy.meta["activation"] == "tanh"
    env = make_env(PEND, episode_length_s=0.5)
    # the engine's last evaluation (1 episode, seed + 1000) re-run from the saved files
    assert evaluate(policy, env, 1, 7 + 1000) == pytest.approx(summary["final_eval_return"], abs=1e-5)
    env.close()


def test_rllib_bare_id_needs_actuator_gym_imported_in_the_env_runners():
    """docs/adapters.md, RLlib: the bare id trains when the config names an actuator_gym class (the
    callback: unpickling it imports actuator_gym, which registers the ids, in each env runner); without
    one the runner's make_vec raises NamespaceNotFound and RLlib's driver fails with an IndexError."""
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig

    from actuator_gym.adapters import ActuatorMetricsCallback

    def config(*callbacks):
        return (PPOConfig().environment(PEND, env_config={"episode_length_s": 0.1})
                .env_runners(num_env_runners=1, num_envs_per_env_runner=2, rollout_fragment_length=8,
                             gym_env_vectorize_mode=gym.VectorizeMode.VECTOR_ENTRY_POINT)
                .callbacks(*callbacks).training(train_batch_size_per_learner=16, minibatch_size=8, num_epochs=1))

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        algo = config(ActuatorMetricsCallback).build_algo()
        result = algo.train()
        algo.stop()
        assert result["env_runners"]["num_env_steps_sampled"] == 16
        assert result["env_runners"][f"{LOG_PREFIX}/pendulum/energy"] >= 0  # 6-step episodes ended
        with pytest.raises(IndexError):  # Ray 2.60's follow-up error; the runner's log has NamespaceNotFound
            config().build_algo()
    finally:
        ray.shutdown()


def test_rllib_actor_state_gives_the_modules_deterministic_action():
    """SavedPolicy over rllib_actor_state(module) == RLlib's own deterministic action (the Gaussian's
    mean), clipped to the action space."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    obs_space = gym.spaces.Box(-np.inf, np.inf, (5,), np.float32)
    act_space = gym.spaces.Box(np.array([-1, -2, -0.5], np.float32), np.array([1, 2, 0.5], np.float32))
    for arch, activation in (([16, 8], "tanh"), ([12], "relu")):
        config = PPOConfig().environment(observation_space=obs_space, action_space=act_space).rl_module(
            model_config=DefaultModelConfig(fcnet_hiddens=arch, fcnet_activation=activation, vf_share_layers=False,
                                            head_fcnet_hiddens=[]))
        torch.manual_seed(0)
        module = config.get_rl_module_spec().build()
        meta = {"obs_dim": 5, "act_dim": 3, "net_arch": arch, "activation": activation,
                "action_low": act_space.low.tolist(), "action_high": act_space.high.tolist()}
        policy = SavedPolicy(meta, rllib_actor_state(module.state_dict(), arch, 3))
        x = torch.randn(256, 5) * 10  # (large enough that some means leave the bounds)
        with torch.no_grad():
            logits = module.forward_inference({"obs": x})["action_dist_inputs"]
            dist = module.get_inference_action_dist_cls().from_logits(logits).to_deterministic()
            want = np.clip(dist.sample().numpy(), act_space.low, act_space.high)
        np.testing.assert_allclose(policy(x.numpy()), want, rtol=0, atol=1e-6)
        assert (policy(x.numpy()) == act_space.high).any()  # the clip acted somewhere: the test sees the bounds
    with pytest.raises(ValueError, match="no actor encoder"):
        rllib_actor_state({"pi.net.mlp.0.weight": np.zeros((6, 8))}, [8], 3)
    state = module.state_dict()
    with pytest.raises(ValueError, match="2 \\* act_dim = 4"):
        rllib_actor_state(state, [12], 2)


def test_actor_cpus_fit_the_cluster():
    assert actor_cpus(2, 2, 1) == 0.66  # 2 runners + 1 learner on 2 cores: 3 x 0.66 <= 2
    assert actor_cpus(2, 2, 2) == 0.5
    assert actor_cpus(2, 1, 0) == 1.0  # never more than one CPU each
    assert actor_cpus(64, 8, 2) == 1.0
    for cpus, k, l in ((2, 2, 1), (2, 2, 2), (3, 7, 0), (1.5, 4, 3)):
        assert actor_cpus(cpus, k, l) * (k + l) <= cpus
    with pytest.raises(ValueError, match="do not fit on 1 CPU"):
        actor_cpus(1, 150, 0)


def test_ray_settings_are_checked_and_mapped_from_experiments():
    s = check_settings({"env_runners": 3, "net_arch": (8, 8)})
    assert s["env_runners"] == 3 and s["net_arch"] == [8, 8] and s["learners"] == 0
    bad = [({"env_runners": 0}, "env_runners must be a positive integer"), ({"learners": -1}, "learners must be an integer in \\[0, 1024\\]"),
           ({"gamma": 1.5}, "gamma must be a number in \\(0, 1\\]"), ({"activation": "elu"}, "activation must be one of"),
           ({"cpus_per_learner": 0.0}, "cpus_per_learner must be a number in \\[0.01"), ({"address": ""}, "address must be"),
           ({"num_env_runners": 2}, "unknown key\\(s\\) \\['num_env_runners'\\] for engine 'ray'; allowed:")]
    for settings, msg in bad:
        with pytest.raises(ValueError, match=msg):
            check_settings(settings)
    assert check_settings({"address": "ray://head:10001"})["address"] == "ray://head:10001"  # from code: allowed
    train = {"total_timesteps": 100, "num_envs": 4, "n_steps": 8, "batch_size": 16, "learning_rate": 0.01,
             "gamma": 0.9, "eval_every": 50, "eval_episodes": 2, "net_arch": [4], "algo": "ppo"}
    assert settings_from_train(train) == {"total_timesteps": 100, "envs_per_runner": 4, "rollout_fragment_length": 8,
                                          "minibatch_size": 16, "learning_rate": 0.01, "gamma": 0.9, "eval_every": 50,
                                          "eval_episodes": 2, "net_arch": [4]}


@pytest.mark.parametrize("settings, match", [
    ({"env_runners": 5000}, r"train_ray: env_runners must be a positive integer \(at most 1024, ConfigLimits.max_env_runners\), got 5000"),
    ({"num_cpus": 100000}, r"train_ray: num_cpus must be a positive integer \(at most 1024, ConfigLimits.max_cpus\), got 100000"),
    ({"envs_per_runner": 10**8}, r"train_ray: envs_per_runner must be a positive integer \(at most 65536, ConfigLimits.max_num_envs\)"),
    ({"iterations": 10**12}, r"train_ray: iterations must be a positive integer \(at most 10000000, ConfigLimits.max_iterations\)"),
    ({"iterations": 10**7, "envs_per_runner": 1024},
     r"train_ray: iterations \* 131072 env steps per iteration = 1310720000000; allowed: at most 1000000000000 \(ConfigLimits.max_timesteps\)"),
    ({"total_timesteps": 10**13}, r"train_ray: total_timesteps must be a positive integer \(at most 1000000000000, ConfigLimits.max_timesteps\)"),
    ({"rollout_fragment_length": 2**23}, r"train_ray: env_runners \* envs_per_runner \* rollout_fragment_length = 134217728; allowed: at most 16777216"),
    ({"num_epochs": 10**6}, r"train_ray: num_epochs must be a positive integer \(at most 1000, ConfigLimits.max_epochs\)"),
    ({"eval_episodes": 10**6}, r"train_ray: eval_episodes must be a positive integer \(at most 10000, ConfigLimits.max_eval_episodes\)"),
    ({"gpus_per_learner": 100}, r"train_ray: gpus_per_learner must be an integer in \[0, 8\], got 100"),
    ({"cpus_per_env_runner": 2000.0}, r"train_ray: cpus_per_env_runner must be a number in \[0.01, 1024\] \(ConfigLimits.max_cpus\)"),
])
def test_ray_settings_past_their_bounds_are_refused_naming_the_bound(settings, match):
    with pytest.raises(ValueError, match=match):
        check_settings(settings)


def test_ray_bounds_are_config_limits():
    from actuator_gym.configs import ConfigLimits, ray_settings

    big = ConfigLimits(max_env_runners=8192, max_cpus=8192, max_rollout_steps=2**26)
    assert ray_settings({"env_runners": 5000, "num_cpus": 5000}, limits=big)["env_runners"] == 5000
    with pytest.raises(ValueError, match="at most 4, ConfigLimits.max_env_runners"):
        ray_settings({"env_runners": 5}, limits=ConfigLimits(max_env_runners=4))


def test_ray_bad_options_fail_before_ray_starts(tmp_path, capsys):
    import ray

    from actuator_gym.tools.ray_engine import train_ray

    with pytest.raises(SystemExit) as exc:
        main(["train", "--engine", "ray", "--task", PEND, "--env-runners", "0"])
    assert exc.value.code == 2 and "--env-runners: must be an integer >= 1, got 0" in capsys.readouterr().err
    assert main(["train", "--task", PEND, "--env-runners", "2", "--address", "auto"]) == 2  # the default engine: sb3
    assert "--env-runners, --address: only with --engine ray (this run's engine: sb3)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="minibatch_size must be a positive integer"):
        train_ray(PEND, tmp_path, settings={"minibatch_size": 0})
    with pytest.raises(ValueError, match="the last world's seed reaches 2\\*\\*64"):
        train_ray(PEND, tmp_path, seed=2**64 - 8, settings={"env_runners": 2, "envs_per_runner": 8})
    assert not ray.is_initialized() and not any(tmp_path.iterdir())  # nothing started, nothing written
