"""ParaView's own XDMF reader on a run with snapshots: the reader ParaView's OpenDataFile picks
(Xdmf3ReaderS for .xmf) must load the wavefield p at every snapshot time, with the grid's shape
and finite, non-zero values. Run by tests/python/test_paraview_xdmf.sh under pvpython.

    pvpython paraview_xdmf.py <run.xmf> <nx> <ny> <nz> <snapshots>
"""
import math
import sys

from paraview import servermanager
from paraview.simple import OpenDataFile

xmf, nx, ny, nz, snapshots = sys.argv[1], *map(int, sys.argv[2:6])
reader = OpenDataFile(xmf)
print("reader:", reader.GetXMLName())
times = list(reader.TimestepValues)
if len(times) != snapshots:
    sys.exit(f"{xmf}: {len(times)} time steps, {snapshots} snapshots written")
for t in times:
    reader.UpdatePipeline(t)
    data = servermanager.Fetch(reader)
    while data.IsA("vtkMultiBlockDataSet"):
        data = data.GetBlock(0)
    array = data.GetPointData().GetArray("p")
    if tuple(data.GetDimensions()) != (nx, ny, nz) or array is None:
        sys.exit(f"{xmf} at t = {t} s: dimensions {data.GetDimensions()}, array p {array is not None}: "
                 f"expected ({nx}, {ny}, {nz}) with p")
    lo, hi = array.GetRange()
    if not (math.isfinite(lo) and math.isfinite(hi)) or max(abs(lo), abs(hi)) == 0:
        sys.exit(f"{xmf} at t = {t} s: p ranges over [{lo}, {hi}]")
    print(f"t = {t:.4f} s: p in [{lo:.3g}, {hi:.3g}] on {nx} x {ny} x {nz}")
print("ok")
