#!/usr/bin/env bash
# The GPU checks of the project in one script: the CUDA tests, the per-step timings of every
# experiment (benchmarks/gpu_steps.py) and the paper presets on --device cuda, each stage under
# its own time limit so that one slow stage cannot take the others' time.
#
#   bash benchmarks/device_check.sh [STAGE ...]     # default: every stage, in this order
#
# Stages: env tests steps profile figure1 figure2 table1 tsweep tsweep_seed validate certify
# triton cpu_bits cpu_tests cpu_wait.
# triton: the Triton kernels' compile check for sm_90 (benchmarks/triton_compile.py) and their
# tests compiled on the GPU, then the T sweep's, figure 1's and figure 2's steps with them (tiles
# TRITON_TILES) against the torch organisations. The experiments' stages use the kernels when
# the caller sets BOUNDCALC_TRITON=1, e.g.
#   BOUNDCALC_TRITON=1 bash benchmarks/device_check.sh env triton tsweep
# Limits (seconds) come from LIMIT_<STAGE> (e.g. LIMIT_FIGURE2=300); a stage that reaches its limit
# is stopped and its run directory keeps every finished cell (runs resume), so its progress lines
# and cell times say how far it got. DEADLINE (seconds from the start, default none) caps every
# limit so that the whole script ends in time (what is left goes to the later stages).
# Results go to $OUT (default /tmp/device-check): log.txt, gpu_steps.json, cpu_tests.txt,
# runs.tar.gz (each run's config, cells, results, summary, slopes, figures, tables).
# Runs on a machine with the project's dependencies installed (torch with CUDA, typer, sympy,
# pandas, matplotlib, pytest); the package itself is installed from this checkout, offline.
# cpu_tests starts the whole test suite on the host's CPU in the background (CUDA hidden), with
# the libraries the recorded outputs were made with, installed offline from the wheels in .wheels/
# (an ignored folder, carried to the device), downloaded first for the device's Python, e.g.
#   pip download -d .wheels --python-version 3.12 --only-binary=:all: \
#       --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 <CPU_WHEELS below>
# (numpy, pandas, sympy, the test tools: ≈ 46 MB); cpu_wait waits for it.
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/device-check}"
RUNS="${RUNS:-/tmp/device-check-runs}"
mkdir -p "$OUT" "$RUNS"
export PYTHONUNBUFFERED=1
PY="${PYTHON:-python3}"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(env tests steps profile figure1 figure2 table1 tsweep validate
                                   certify)

say() { echo "== $(date +%H:%M:%S) $*"; }
limit() {   # the stage's limit, capped by what is left before DEADLINE (10 s kept for the archive)
    local v="LIMIT_${1^^}" lim
    lim="${!v:-$2}"
    if [ -n "${DEADLINE:-}" ]; then
        local left=$((DEADLINE - SECONDS - 10))
        [ "$left" -lt "$lim" ] && lim=$left
        [ "$lim" -lt 1 ] && lim=1
    fi
    echo "$lim"
}
CPU_WHEELS=(numpy==2.4.6 pandas==3.1.1 sympy==1.14.0 mpmath==1.3.0 typer==0.29.2 click==8.5.1
            rich==15.0.0 hypothesis==6.170.17 dask==2026.8.0 distributed==2026.8.0
            submitit==1.5.4 pytest==9.2.0 pytest-xdist==3.8.0)
timed() {   # timed STAGE DEFAULT_LIMIT CMD...: run CMD under the stage's limit, print wall time
    local stage="$1" lim; lim="$(limit "$1" "$2")"; shift 2
    say "$stage: $* (limit ${lim}s)"
    local t0=$SECONDS rc=0
    timeout --signal=INT --kill-after=20 "$lim" "$@" || rc=$?
    say "$stage: exit $rc after $((SECONDS - t0)) s$([ $rc -eq 124 ] && echo ' (limit reached)')"
}

run_stage() {
    case "$1" in
    env)
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
        "$PY" -c "import torch, sys; print(sys.version.split()[0], torch.__version__, \
torch.version.cuda, torch.cuda.get_device_name())"
        grep -m1 "model name" /proc/cpuinfo
        echo "cpu flags: $(grep -m1 -o -w 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
        "$PY" -m pip install -q --no-deps --no-build-isolation --no-index -e . 2>&1 | tail -2
        "$PY" -c "import boundcalc, boundcalc.validators; print('boundcalc', boundcalc.__version__)"
        ;;
    tests)
        timed tests 300 "$PY" -m pytest -q -p no:cacheprovider -n 4 -rs \
            tests/validators/test_cuda_paths.py \
            tests/validators/test_train.py::test_cuda_training_matches_cpu \
            tests/validators/checks/test_lemmas.py::test_device_argument_is_honoured_on_cuda \
            tests/validators/checks/test_certify.py::test_cuda_gives_the_cpu_chain
        ;;
    steps)
        timed steps 240 "$PY" benchmarks/gpu_steps.py --json "$OUT/gpu_steps.json" \
            --only "${STEPS_ONLY:-figure1,figure2,table1,tsweep}" --modes "${STEPS_MODES:-eager,graph}"
        ;;
    profile)
        timed profile 120 "$PY" benchmarks/gpu_profile.py --only "${PROFILE_ONLY:-figure1,figure2,tsweep}"
        ;;
    figure1)
        timed figure1 180 "$PY" -m boundcalc reproduce figure1 --preset paper --device cuda \
            --jobs "${JOBS_FIGURE1:-4}" --out "$RUNS/figure1-paper"
        cat "$RUNS/figure1-paper/slopes.csv" 2>/dev/null
        ;;
    figure2)
        timed figure2 300 "$PY" -m boundcalc reproduce figure2 --preset paper --device cuda \
            --jobs "${JOBS_FIGURE2:-2}" --out "$RUNS/figure2-paper"
        cat "$RUNS/figure2-paper/summary.csv" 2>/dev/null | cut -c1-160
        ;;
    table1)
        if [ ! -d "$RUNS/mnist-shaped" ]; then
            "$PY" - "$RUNS/mnist-shaped" <<'EOF'
import sys
from pathlib import Path

import numpy as np
from boundcalc.validators.data.mnist import synthetic_digits, write_idx

folder = Path(sys.argv[1])
folder.mkdir(parents=True)
images, labels = synthetic_digits(70000, seed=0)
images = np.rint(images).astype(np.uint8)
# the real files' share of digits 0 and 1 (≈ 21 %): the other images get labels 2–9
rng = np.random.default_rng(1)
other = rng.random(70000) > 0.2111
labels = np.where(other, 2 + rng.integers(0, 8, 70000), labels)
for split, part in (("train", slice(0, 60000)), ("t10k", slice(60000, 70000))):
    write_idx(folder / f"{split}-images-idx3-ubyte", images[part])
    write_idx(folder / f"{split}-labels-idx1-ubyte", labels[part].astype(np.uint8))
print("generated MNIST-shaped IDX files:", images.shape, np.bincount(labels))
EOF
        fi
        timed table1 300 "$PY" -m boundcalc reproduce table1 --preset paper --device cuda \
            --data "$RUNS/mnist-shaped" --out "$RUNS/table1-paper"
        ;;
    tsweep)
        timed tsweep 300 "$PY" -m boundcalc reproduce tsweep --preset paper --device cuda \
            --jobs "${JOBS_TSWEEP:-2}" --out "$RUNS/tsweep-paper"
        ;;
    tsweep_seed)   # the paper preset's cells of one seed (a tenth of the preset)
        timed tsweep_seed 300 "$PY" -m boundcalc reproduce tsweep --preset paper --device cuda \
            --seeds "${TSWEEP_SEED:-1}" --out "$RUNS/tsweep-paper-seed${TSWEEP_SEED:-1}"
        ;;
    validate)
        timed validate 200 "$PY" -m boundcalc validate all --m 16 --n 64 --rho 2 --device cuda
        ;;
    certify)
        timed certify 120 "$PY" -m boundcalc validate theorem1 --certify --m 64 --n 256 --device cuda
        ;;
    triton)
        timed triton_compile 120 "$PY" benchmarks/triton_compile.py --json "$OUT/triton_compile.json"
        timed triton_tests 240 "$PY" -m pytest -q -p no:cacheprovider -rs \
            tests/validators/kernel/test_gpu_kernel.py tests/validators/kernel/test_gpu_recurrence.py \
            tests/validators/experiments/test_figure2.py -k "kernel or triton or recurrence"
        timed triton_steps 300 "$PY" benchmarks/gpu_steps.py --json "$OUT/gpu_steps_triton.json" \
            --only tsweep,figure1,figure2 --modes graph,triton \
            --triton-tiles "${TRITON_TILES:-32x32x4,16x32x4,64x32x4,32x64x4,32x32x8}"
        ;;
    cpu_tests)
        rm -rf /tmp/cpu-site
        "$PY" -m pip install -q --no-index --find-links .wheels --target /tmp/cpu-site \
            "${CPU_WHEELS[@]}" 2>&1 | tail -3
        local lim; lim="$(limit cpu_tests 420)"
        say "cpu_tests: the whole suite on the CPU in the background (limit ${lim}s)"
        ( PYTHONPATH=/tmp/cpu-site CUDA_VISIBLE_DEVICES="" timeout --signal=INT --kill-after=15 \
            "$lim" "$PY" -m pytest -q -p no:cacheprovider -n "${CPU_WORKERS:-6}" \
            --dist worksteal --durations=10 > "$OUT/cpu_tests.txt" 2>&1
          echo "exit $? after $((SECONDS - T0_CPU)) s" >> "$OUT/cpu_tests.txt" ) &
        CPU_PID=$!
        ;;
    cpu_wait)
        [ -n "${CPU_PID:-}" ] && wait "$CPU_PID"
        tail -4 "$OUT/cpu_tests.txt" 2>/dev/null
        ;;
    cpu_bits)   # the CPU's bit-sensitive tests on this machine's processor (no GPU)
        CUDA_VISIBLE_DEVICES="" timed cpu_bits 300 "$PY" -m pytest -q -p no:cacheprovider \
            -n 4 tests/boundcalc/cli/test_recorded_outputs.py tests/test_docstring_examples.py
        ;;
    *) echo "unknown stage $1"; return 2 ;;
    esac
}

T0_CPU=$SECONDS
for stage in "${stages[@]}"; do
    if [ "$stage" = cpu_tests ] || [ "$stage" = cpu_wait ]; then   # not in a pipeline's
        # subshell: the background job is this shell's, to wait for
        run_stage "$stage" >> "$OUT/log.txt" 2>&1
        tail -4 "$OUT/log.txt"
    else
        run_stage "$stage" 2>&1 | tee -a "$OUT/log.txt"
    fi
done
# cells too (a run split by seeds over several sessions is gathered from its cells), unless that
# makes the archive larger than what comes back from the device (16 MiB a file)
tar -czf "$OUT/runs.tar.gz" -C "$RUNS" --exclude="*.npz" --exclude=mnist-shaped . 2>/dev/null
if [ "$(stat -c %s "$OUT/runs.tar.gz")" -gt 15000000 ]; then
    tar -czf "$OUT/runs.tar.gz" -C "$RUNS" --exclude=cells --exclude="*.npz" \
        --exclude=mnist-shaped . 2>/dev/null
fi
say "done; $(du -sh "$OUT/runs.tar.gz" | cut -f1) of runs in $OUT/runs.tar.gz"
