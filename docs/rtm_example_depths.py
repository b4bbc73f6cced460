"""Depths of the migration example's reflectors in its image, for the table of docs/MIGRATION.md
(needs h5py and numpy).

    build/seisrtm run configs/rtm/true_model.yaml && build/seisrtm migrate configs/rtm/migrate.yaml
    python3 docs/rtm_example_depths.py out/rtm/migrate.h5

For each interface of configs/rtm/true_model.yaml at x = 450, 700 and 950 m (y = 345 m): the
largest positive sample of the Laplacian image within 20 m of the true depth (a velocity
increase images positive), refined by a parabola through it and its two neighbours.
"""
import math
import sys

import h5py
import numpy as np

f = h5py.File(sys.argv[1])
h = f.attrs["spacing"]
img = f["image/laplacian"][()]  # [z][y][x]
nz, ny, nx = img.shape
iy = int(round(345 / h[1]))
xc = (nx - 1) * h[0] / 2


def interfaces(x):
    return [
        ("250 m interface", 250.0),
        ("dipping 10 deg", 480 + math.tan(math.radians(10)) * (x - xc)),
        ("lens top", 640 - 70 * math.sqrt(max(0.0, 1 - ((x - 700) / 150) ** 2))) if abs(x - 700) < 150 else None,
        ("deep dipping" + (" (under the lens)" if abs(x - 700) < 150 else ""),
         800 + math.tan(math.radians(-6)) * (x - xc)),
    ]


print("| x (m) | interface | true depth (m) | image (m) | error (m) |")
print("|---|---|---|---|---|")
for x in (450, 700, 950):
    col = img[:, iy, int(round(x / h[0]))].astype(np.float64)
    for item in interfaces(x):
        if item is None:
            continue
        name, z = item
        lo, hi = int(math.floor((z - 20) / h[2])), int(math.ceil((z + 20) / h[2]))
        k = lo + int(np.argmax(col[lo:hi + 1]))
        a, b, c = col[k - 1], col[k], col[k + 1]
        zi = h[2] * (k + 0.5 * (a - c) / (a - 2 * b + c))
        print(f"| {x} | {name} | {z:.1f} | {zi:.1f} | {zi - z:+.1f} |")
