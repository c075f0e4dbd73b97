#!/usr/bin/env bash
# Run vkml's Vulkan contract tests, the digits demo and scripts/gpu/bench.py on a GPU machine
# that has no iree-base-compiler and no network, from the modules scripts/gpu/prepare.sh
# compiled into .gpucache. On the GPU machine, as root, in the repo root, with .gl .whl
# .gpucache carried:
#
#     bash scripts/gpu/run.sh
#
# Logs go to $OUT (at most 8 files): summary.txt, setup.log, env.txt, pytest.log, digits.log
# (the digits and CNN demos),
# bench.md, ulp.md, aot.md. Each phase's exit status is in summary.txt; a failed phase does not stop
# the next. Nothing is compiled there: a graph missing from .gpucache fails with a CompileError
# that names it.
#
# To rehearse here (lavapipe standing in for the GPU, the compiler hidden):
#     SKIP_SETUP=1 HIDE_COMPILER=1 PYTHON=.venv/bin/python bash scripts/gpu/run.sh
# after filling .gpucache for lavapipe (scripts/gpu/prepare.sh does that too).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/vkml-gpu-run}
mkdir -p "$OUT"
export PY=${PYTHON:-python3}
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export PYTHONUNBUFFERED=1 VKML_CACHE_DIR=$PWD/.gpucache
unset VKML_PRECOMPILE_VULKAN
# worst case, every phase at its limit: 60 + 30 + 45 + 150 + 60 + 90 + 120 + 150 + 150 + 60 + 120 + 60 + 60 + 60 s = under
# 21 minutes;
# in practice about 5

# phase NAME LIMIT_S LOG COMMAND...: run with a time limit, output to LOG, status to SUMMARY;
# COMMAND may be one of this file's functions (exported below)
phase() {
    local name=$1 limit=$2 log=$3 start rc
    shift 3
    start=$(date +%s)
    timeout --kill-after=5 "$limit" bash -c '"$@"' bash "$@" >>"$log" 2>&1
    rc=$?
    echo "$name: exit $rc after $(($(date +%s) - start)) s (log: $(basename "$log"))" | tee -a "$SUMMARY"
    return $rc
}

setup() {
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl
}

# vulkan:0 must be the GPU (the tests and demo name it): report what the loader gives
vulkan0() {
    "$PY" -c '
import sys
from vkml.runtime.vulkan_loader import vulkan_device_reports
reports = vulkan_device_reports()
print("vulkan:0 =", reports[0].name if reports else None, "of", len(reports), "devices")
sys.exit(0 if reports and (reports[0].vendor_id == 0x10DE or sys.argv[1] == "any") else 1)
' "$1"
}

export -f setup vulkan0

if [ "${SKIP_SETUP:-0}" != 1 ]; then
    phase setup 60 "$OUT/setup.log" setup
    export PYTHONPATH=/tmp/site:$PWD
    if ! vulkan0 nvidia >>"$OUT/setup.log" 2>&1; then
        # the README's fallback: the driver's ICD file is not where the loader looks
        for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
            /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
            if [ -f "$icd" ]; then
                export VK_DRIVER_FILES=$icd
                export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
                break
            fi
        done
        phase "vulkan:0 is NVIDIA with VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}" 30 \
            "$OUT/setup.log" vulkan0 nvidia
    fi
else
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
if [ "${HIDE_COMPILER:-0}" = 1 ]; then
    # a rehearsal here: iree.compiler cannot be imported, as on the GPU machine
    mkdir -p /tmp/vkml-hide-compiler
    echo 'import sys; sys.modules["iree.compiler"] = None' >/tmp/vkml-hide-compiler/sitecustomize.py
    export PYTHONPATH=/tmp/vkml-hide-compiler:$PYTHONPATH
fi

env_report() {
    echo "PYTHONPATH=$PYTHONPATH VK_DRIVER_FILES=${VK_DRIVER_FILES:-} VKML_CACHE_DIR=$VKML_CACHE_DIR"
    nvidia-smi -L 2>&1 || true
    "$PY" -c '
import importlib, importlib.util, sys
from importlib.metadata import version
print("python", sys.version.split()[0])
for name in ("iree-base-runtime", "numpy", "ml_dtypes", "pytest", "scikit-learn", "matplotlib"):
    try:
        print(name, version(name))
    except Exception as exc:
        print(name, "MISSING", exc)
try:
    import iree.compiler
    print("iree.compiler: importable (nothing should need it)")
except ImportError as exc:
    print("iree.compiler: not importable:", exc)
import vkml
from vkml.compiler.cache import default_cache
from vkml.compiler.keys import iree_version, vkml_version
dev = vkml.device("vulkan:0")
print("vulkan:0 target:", dev.target.name, dev.target.flags, "driver", dev.target.driver)
print("cache:", default_cache().info(), "keys name IREE", iree_version(), "vkml", vkml_version())
'
    echo
    # vkml devices, or the raw reports if the command line cannot start without the compiler
    "$PY" -m vkml devices || "$PY" -c '
from vkml.runtime.vulkan_loader import vulkan_device_reports
for r in vulkan_device_reports():
    print(r.as_dict())'
}
export -f env_report
phase environment 45 "$OUT/env.txt" env_report

phase "pytest (Vulkan op x dtype contract, reports)" 150 "$OUT/pytest.log" \
    "$PY" -m pytest -p no:cacheprovider -rfEs -m "exhaustive or not exhaustive" \
    tests/py/devices/test_vulkan_device.py \
    tests/py/runtime/test_vulkan_reports.py tests/py/frontend/test_vulkan_contracts.py \
    tests/py/nn/test_compiled_step.py::test_replayed_steps_equal_rebuilt_steps_on_vulkan
# the convolution's contract and 16-bit accumulation on the GPU (its comparisons with torch
# skip there: no torch; its cpu cases need a compiler)
phase "pytest (convolution contract)" 60 "$OUT/pytest.log" \
    "$PY" -m pytest -p no:cacheprovider -rfEs -k "not cpu" tests/py/frontend/test_convolution.py
phase "digits demo on vulkan:0" 90 "$OUT/digits.log" \
    "$PY" -m vkml.examples.digits --device vulkan:0 --no-progress --plot /tmp/digits.png
phase "cnn demo on vulkan:0" 120 "$OUT/digits.log" \
    "$PY" -m vkml.examples.cnn --device vulkan:0 --no-progress --plot /tmp/cnn.png
phase "bench" 150 "$OUT/bench.md" "$PY" scripts/gpu/bench.py --device vulkan:0
phase "throughput" 150 "$OUT/bench.md" "$PY" scripts/gpu/throughput.py --device vulkan:0
phase "realize profile" 60 "$OUT/bench.md" "$PY" scripts/gpu/realize_profile.py --device vulkan:0
phase "builder while" 120 "$OUT/bench.md" "$PY" scripts/gpu/builder.py --device vulkan:0
phase "turn cost" 60 "$OUT/bench.md" "$PY" scripts/gpu/turn_cost.py --device vulkan:0
phase "ulp report" 60 "$OUT/ulp.md" "$PY" scripts/gpu/ulp_report.py --device vulkan:0
# the reference device needs no compiler: every program of the op suite on it, under this
# machine's NumPy (a newer one than CI's found a reference that raised)
reference_programs() {
    "$PY" -c '
import sys
sys.path.insert(0, "tests/py")
import numpy as np, vkml
from support import op_programs as ops
failed = 0
for dtype in ops.ALL:
    data = ops.inputs(dtype)
    t = {k: vkml.tensor(v, device=vkml.reference) for k, v in data.items()}
    for name, (_, fn) in ops.programs(dtype).items():
        try:
            fn(t).numpy()
        except Exception as exc:
            failed += 1
            print(f"{dtype} {name}: {type(exc).__name__}: {exc}")
print(f"numpy {np.__version__}: {failed} programs failed on reference")
sys.exit(1 if failed else 0)
'
}
export -f reference_programs
phase "every op program on reference" 60 "$OUT/aot.md" reference_programs
phase "exported modules (vkml.aot) on vulkan:0" 60 "$OUT/aot.md" \
    "$PY" scripts/gpu/aot.py check .gpuaot --device vulkan:0

echo "--- summary"
cat "$SUMMARY"
echo "--- bench"
cat "$OUT/bench.md"
echo "--- aot"
cat "$OUT/aot.md"
grep -h "^result:\|passed\|failed\|CompileError" "$OUT/digits.log" "$OUT/pytest.log" | tail -20
