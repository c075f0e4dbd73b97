#!/usr/bin/env bash
# Prepare a run of vkml on a GPU machine that has no iree-base-compiler and no network.
#
# Run HERE, in a checkout with the dev venv (the compiler) and a Vulkan device (lavapipe will
# do). It fills three folders that git ignores, for the device tool to carry:
#   .whl/      the iree-base-runtime wheel (CPython 3.12, x86-64) of the release installed here
#   .gl/       the Vulkan loader (and GL) debs, per /work/.library/device/README.md
#   .gpucache/ a vkml compile cache holding every module run.sh needs, compiled for the GPU's
#              IREE Vulkan target ($VKML_PRECOMPILE_VULKAN, default ampere+f64: NVIDIA)
#   .gpuaot/   exported modules (vkml.aot) for that target, with their inputs and cpu's results
# by running, on vulkan:0 here, exactly what run.sh runs there. Then, on the GPU machine:
#   bash scripts/gpu/run.sh          (carry: .gl .whl .gpucache .gpuaot)
#
# The cache keys hash the sources of vkml/passes and vkml/dialect and the MLIR that vkml/frontend
# lowers: run this after the last change to vkml/ that the GPU run should see.
# KEEP_CACHE=1 keeps .gpucache's entries from an earlier run instead of starting empty.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
export VKML_PRECOMPILE_VULKAN=${VKML_PRECOMPILE_VULKAN:-ampere+f64}
RUNTIME=$("$PY" -c 'from importlib.metadata import version; print(version("iree-base-runtime"))')

exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
for path in /.whl/ /.gl/ /.gpucache/ /.gpuaot/; do
    grep -qxF "$path" "$exclude" 2>/dev/null || echo "$path" >>"$exclude"
done

echo "== wheel: iree-base-runtime==$RUNTIME for CPython 3.12 (the cache keys name this release)"
mkdir -p .whl
if ! ls .whl/iree_base_runtime-"$RUNTIME"-*.whl >/dev/null 2>&1; then
    rm -f .whl/iree_base_runtime-*.whl
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux1_x86_64 -d .whl "iree-base-runtime==$RUNTIME"
fi
ls .whl

echo "== Vulkan loader debs (amd64)"
mkdir -p .gl
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
    mkdir -p /tmp/amd64/partial
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    # shellcheck disable=SC2086
    apt-get $o -qq update
    # shellcheck disable=SC2086
    (cd .gl && apt-get $o -qq download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
ls .gl

echo "== compile cache .gpucache for $VKML_PRECOMPILE_VULKAN (and this machine's vulkan:0)"
[ "${KEEP_CACHE:-0}" = 1 ] || rm -rf .gpucache
export VKML_CACHE_DIR=$PWD/.gpucache PYTHONUNBUFFERED=1
# the same phases as run.sh, with the same arguments: the same graphs, hence the same
# keys. A failure is reported, not fatal: what compiled is cached either way.
# every dtype and the lavapipe-exhaustive cases too: on a GPU they are seconds
"$PY" -m pytest -p no:cacheprovider -m "exhaustive or not exhaustive" tests/py/devices/test_vulkan_device.py \
    tests/py/runtime/test_vulkan_reports.py tests/py/frontend/test_vulkan_contracts.py \
    tests/py/nn/test_compiled_step.py::test_replayed_steps_equal_rebuilt_steps_on_vulkan || echo "(pytest exit $?)"
"$PY" -m pytest -p no:cacheprovider -k "not cpu" tests/py/frontend/test_convolution.py || echo "(pytest exit $?)"
"$PY" -m vkml.examples.digits --device vulkan:0 --no-progress \
    --plot /tmp/vkml-digits-prepare.png || echo "(digits exit $?)"
# the CNN's modules: its steps replay one module, so a short run compiles all of them
"$PY" -m vkml.examples.cnn --device vulkan:0 --no-progress --steps 3 \
    --plot /tmp/vkml-cnn-prepare.png || echo "(cnn exit $?)"
"$PY" scripts/gpu/bench.py --device vulkan:0 --repeats 2 --no-peers || echo "(bench.py exit $?)"
"$PY" scripts/gpu/throughput.py --device vulkan:0 --repeats 1 --no-peers || echo "(throughput.py exit $?)"
"$PY" scripts/gpu/builder.py --device vulkan:0 --repeats 1 --no-peers || echo "(builder.py exit $?)"
"$PY" scripts/gpu/turn_cost.py --device vulkan:0 --repeats 1 || echo "(turn_cost.py exit $?)"
"$PY" scripts/gpu/realize_profile.py --device vulkan:0 --calls 5 --top 3 >/dev/null || echo "(realize_profile.py exit $?)"
"$PY" scripts/gpu/ulp_report.py --device vulkan:0 >/dev/null || echo "(ulp_report.py exit $?)"
# exported modules for the GPU's target (run.sh's aot phase loads them there)
"$PY" scripts/gpu/aot.py prepare .gpuaot --target "vulkan:${VKML_PRECOMPILE_VULKAN%%,*}"

echo "== sizes (the device tool carries at most 64 MiB with the working tree)"
du -sh .gpucache .gpuaot .whl .gl
du -cb .gpucache .gpuaot .whl .gl | awk 'END { printf "total: %.1f MiB\n", $1 / 1048576 }'
echo "cache entries: $(find .gpucache -name '*.vmfb' | wc -l)"
echo
echo "next, on the GPU machine (device tool, carry [\".gl\", \".whl\", \".gpucache\", \".gpuaot\"]):"
echo "    bash scripts/gpu/run.sh"
