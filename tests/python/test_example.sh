#!/usr/bin/env bash
# [integration] The Python example keeps working: a venv with examples/requirements.txt (h5py,
# matplotlib, numpy from PyPI), a tiny run on the CPU backend, examples/plot_result.py on its
# result, and every PNG it should write there and non-empty.
#   bash tests/python/test_example.sh <seisrtm binary> <source dir> <build dir>
# The venv is kept in <build dir>/python-venv and reused while examples/requirements.txt is
# unchanged. No python3 or no venv module (Debian's python3-venv, which .ci/install-deps
# installs) is a failure, not a skip: users of the example need the same.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 <seisrtm binary> <source dir> <build dir>" >&2
  exit 2
fi
seisrtm=$1 src=$2 build=$3
fail() { echo "test_python_example: error: $*" >&2; exit 1; }

venv="$build/python-venv"
requirements="$src/examples/requirements.txt"
stamp="$venv/seisrtm-requirements.txt"  # the requirements the venv was made with
if ! cmp -s "$requirements" "$stamp"; then
  command -v python3 > /dev/null || fail "python3 not found; install it (bash .ci/install-deps)"
  rm -rf "$venv"
  python3 -m venv "$venv" ||
    fail "'python3 -m venv $venv' failed; on Debian and Ubuntu install python3-venv (bash .ci/install-deps)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" ||
    fail "pip could not install $requirements into $venv (is PyPI reachable?)"
  cp "$requirements" "$stamp"
fi
"$venv/bin/python" -c "import h5py, matplotlib, numpy" || fail "the venv $venv lacks h5py, matplotlib or numpy"

work="$build/python-example"
rm -rf "$work"
mkdir -p "$work"
# Tiny: 32 x 30 x 28 cells, 60 steps, two snapshots; about a second on the CPU backend.
cat > "$work/tiny.yaml" <<'YAML'
grid: {shape: [32, 30, 28], spacing: 10}
time: {steps: 60}
boundary: {damping_width: 6}
model: {vp: {type: layers, layers: [{top: 0, vp: 1500}, {top: 150, vp: 2200}]}}
sources: {wavelet: {peak_frequency: 15}, shots: [[150, 150, 60]]}
receivers: {line: {start: [60, 150, 40], end: [250, 150, 40], count: 12}}
output: {name: tiny, snapshot_interval: 30}
YAML
"$seisrtm" run "$work/tiny.yaml" --backend cpu --quiet --output "$work/out" || fail "seisrtm run failed"
"$venv/bin/python" "$src/examples/plot_result.py" "$work/out/tiny.h5" --out "$work/plots" ||
  fail "examples/plot_result.py failed on $work/out/tiny.h5"
for kind in gather model_xz snapshots; do
  png="$work/plots/tiny_$kind.png"
  [ -s "$png" ] || fail "$png is missing or empty"
  [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$png is not a PNG"
done
echo "test_python_example: examples/plot_result.py wrote $(ls "$work/plots" | tr '\n' ' ')"
