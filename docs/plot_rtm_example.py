"""Figure of the migration example for docs/MIGRATION.md (needs h5py, numpy, matplotlib).

    build/seisrtm run configs/rtm/true_model.yaml && build/seisrtm migrate configs/rtm/migrate.yaml
    python3 docs/plot_rtm_example.py out/rtm docs/img/rtm_example.png
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

out, png = sys.argv[1], sys.argv[2]
true = h5py.File(f"{out}/true_model.h5")
mig = h5py.File(f"{out}/migrate.h5")
h = mig.attrs["spacing"]
iy = int(round(345 / h[1]))
vp = true["model/vp"][:, iy, :]
img = mig["image/laplacian"][:, iy, :]
nz, nx = img.shape
x = np.arange(nx) * h[0]
z = np.arange(nz) * h[2]
ext = [0, x[-1], z[-1], 0]
xc, yc = (nx - 1) * h[0] / 2, 345.0
interfaces = {  # the true model's interfaces along y = 345 m (configs/rtm/true_model.yaml)
    "250 m": np.full_like(x, 250.0),
    "dip 10 deg": 480 + np.tan(np.radians(10)) * (x - xc),
    "dip -6, 3 deg": 800 + np.tan(np.radians(-6)) * (x - xc) + np.tan(np.radians(3)) * (yc - 345.0),
}
lens = np.linspace(0, 2 * np.pi, 200)

fig, ax = plt.subplots(1, 2, figsize=(13, 4.8), constrained_layout=True)
m = ax[0].imshow(vp, extent=ext, cmap="viridis", aspect="equal")
fig.colorbar(m, ax=ax[0], label="vp (m/s)")
ax[0].set_title("true model, x-z at y = 345 m")
clip = np.percentile(np.abs(img[30:]), 99.5)
m = ax[1].imshow(img, extent=ext, cmap="gray_r", vmin=-clip, vmax=clip, aspect="equal")
fig.colorbar(m, ax=ax[1], label="-lap(normalised image) (1/m^2)")
for name, zi in interfaces.items():
    ax[1].plot(x, zi, "r--", lw=0.7)
ax[1].plot(700 + 150 * np.cos(lens), 640 + 70 * np.sin(lens), "r--", lw=0.7)
ax[1].set_title("RTM image (5 shots), true interfaces dashed")
for a in ax:
    a.set_xlabel("x (m)")
    a.set_ylabel("depth z (m)")
    a.set_xlim(160, x[-1] - 160)
    a.set_ylim(z[-1] - 160, 0)
fig.savefig(png, dpi=110)
