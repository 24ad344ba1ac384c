#!/usr/bin/env bash
# Device check for a lent GPU (budget: under 8 minutes of device time; the torchrun section adds ~2). Also runs on the CPU:
#   bash benchmarks/gpu_check.sh                 # CUDA: backend tests on cuda:0, throughput at 1024/4096 envs, mjlab peer
#   bash benchmarks/gpu_check.sh --device cpu    # Warp's CPU device, tiny sizes (what CI/dev machines can run)
# Offline machines: install wheels carried along first, e.g. pip install --no-index --find-links wheels/ mjlab
set -u
DEVICE=cuda:0
if [ "${1:-}" = "--device" ]; then DEVICE="${2:?--device needs a value}"; fi
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python
if [ -d wheels ]; then "$PY" -m pip install --no-index --find-links wheels/ mjlab >/dev/null 2>&1 || echo "mjlab wheels did not install (peer will be skipped)"; fi
echo "== backend tests on $DEVICE"
ACTUATOR_GYM_WARP_DEVICE=$DEVICE timeout 240 "$PY" -m pytest -q -p no:cacheprovider tests/backends/test_backend_warp.py tests/backends/test_native_warp.py tests/backends/test_backend_newton.py 2>&1 | tail -15
echo "== throughput on $DEVICE (explicit: actuators at every substep; native: MuJoCo-Warp's own actuators)"
if [ "${DEVICE%%:*}" = "cpu" ]; then
  timeout 300 "$PY" benchmarks/gpu_throughput.py --device cpu --sizes pendulum:4,quadruped:4 --steps 5 --repeats 3 --peer-envs 0
else
  timeout 300 "$PY" benchmarks/gpu_throughput.py --device "$DEVICE" --sizes quadruped:1024,quadruped:4096,pendulum:4096 --steps 50 --repeats 3 --peer-envs 4096
fi
echo "== torchrun: skrl's and rsl_rl's distributed modes, one rank per GPU, each rank's own batched env (docs/distributed.md)"
if [ "${DEVICE%%:*}" = "cpu" ]; then  # rsl_rl's distributed mode is NCCL-only: one process on the CPU
  timeout 120 "$PY" -m actuator_gym.tools.torchrun_train --experiment tests/data/ray_pendulum_short.yaml --device cpu --iterations 1 --out /tmp/ag_torchrun_check
else
  NGPU=$("$PY" -c "import torch; print(max(1, torch.cuda.device_count()))")
  timeout 240 "$PY" -m torch.distributed.run --standalone --nproc-per-node "$NGPU" -m actuator_gym.tools.torchrun_train \
    --experiment quadruped_torchrun --library skrl --iterations 2 --out /tmp/ag_torchrun_check_skrl
  timeout 300 "$PY" -m torch.distributed.run --standalone --nproc-per-node "$NGPU" -m actuator_gym.tools.torchrun_train \
    --experiment quadruped_torchrun --iterations 3 --out /tmp/ag_torchrun_check
fi
[ -f /tmp/ag_torchrun_check/summary.json ] && "$PY" -c "import json; d=json.load(open('/tmp/ag_torchrun_check/summary.json')); print({k: d[k] for k in ('world_size', 'timesteps', 'samples_per_s')}); [print(r) for r in d['ranks']]"
