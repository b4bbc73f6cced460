#!/usr/bin/env bash
# [integration] ParaView's Xdmf3 reader (what OpenDataFile picks for .xmf) loads every snapshot of a
# run: a tiny CPU run with 3 snapshots, then tests/python/paraview_xdmf.py under pvpython.
#   bash tests/python/test_paraview_xdmf.sh <seisrtm binary> <source dir> <work dir>
# Without pvpython (Debian's python3-paraview, about 235 packages, is not one of the project's
# dependencies) the test exits 77, which CTest reports as skipped; any other failure fails.
set -euo pipefail
seisrtm=$1 src=$2 work=$3/paraview_xdmf
if ! command -v pvpython > /dev/null; then
  echo "test_paraview_xdmf: skipped: no pvpython (apt-get install python3-paraview to run it)"
  exit 77
fi
rm -rf "$work"
"$seisrtm" run "$src/configs/quickstart.yaml" --quiet --backend cpu --output "$work" --set grid.shape=[40,30,20] --set boundary.damping_width=5 \
  --set 'sources.shots=[[200,150,50]]' --set receivers.line.start=[50,150,20] --set receivers.line.end=[350,150,20] \
  --set time.steps=90 --set output.snapshot_interval=30 --set output.pictures=false
timeout 300 pvpython "$src/tests/python/paraview_xdmf.py" "$work/quickstart.xmf" 40 30 20 3
