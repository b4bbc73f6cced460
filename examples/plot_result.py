#!/usr/bin/env python3
"""Plots a seisrtm result file (HDF5) with h5py and matplotlib, for post-processing in Python.

    build/seisrtm run configs/quickstart.yaml
    python3 examples/plot_result.py out/quickstart.h5 --out plots

Writes into --out (default: plots/), each file named after the result's stem:
  <stem>_gather.png     traces of shot 0: time (s) down, receiver position (m) across
  <stem>_model_xz.png   the model's vp, x-z slice through the first shot (a migration's too)
  <stem>_snapshots.png  wavefield snapshots of shot 0, x-z slices (when the run wrote snapshots)
  <stem>_image_xz.png   the migrated image, x-z slice (a `seisrtm migrate` result)
It writes into its own directory so that it never touches seisrtm's own pictures beside the .h5.
The layout it reads is docs/guide/run.md's Output table: volumes are [z, y, x], traces [shot, receiver,
time], positions [n, 3] as [x, y, z] in m; the root attributes `spacing` and `origin` are [x, y, z].
"""
import argparse
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def symmetric_clip(values, percentile=99.0):
    """A colour range [-c, c] centred on zero: c is a percentile of |values| (1 where all are 0)."""
    c = float(np.percentile(np.abs(values), percentile)) if values.size else 0.0
    return c if c > 0 and np.isfinite(c) else 1.0


def receiver_axis(positions):
    """The receivers' positions along the axis on which they spread most (m), its label and the
    order that sorts them; receiver indices where that coordinate repeats (an areal grid)."""
    spread = positions.max(axis=0) - positions.min(axis=0)
    axis = int(np.argmax(spread))
    coord = positions[:, axis]
    order = np.argsort(coord, kind="stable")
    if len(np.unique(coord)) == len(coord):
        return coord[order], "receiver %s (m)" % "xyz"[axis], order
    return np.arange(len(coord), dtype=float), "receiver index", np.arange(len(coord))


def cell_edges(centres):
    """Edges of the cells around sample positions (for pcolormesh on uneven spacing)."""
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = 0.5 * (centres[1:] + centres[:-1])
    return np.concatenate([[2 * centres[0] - mid[0]], mid, [2 * centres[-1] - mid[-1]]])


def xz_extent(f, nz, nx):
    """imshow extent [left, right, bottom, top] in m for a [z, x] slice, depth down."""
    h = f.attrs["spacing"]
    o = f.attrs["origin"] if "origin" in f.attrs else np.zeros(3)
    return [o[0] - h[0] / 2, o[0] + (nx - 0.5) * h[0], o[2] + (nz - 0.5) * h[2], o[2] - h[2] / 2]


def slice_y_index(f, ny):
    """The y index of the first shot (the centre where there is none)."""
    h = f.attrs["spacing"]
    o = f.attrs["origin"] if "origin" in f.attrs else np.zeros(3)
    if "sources/positions" in f and len(f["sources/positions"]) > 0:
        y = f["sources/positions"][0][1]
        return int(np.clip(round((y - o[1]) / h[1]), 0, ny - 1))
    return ny // 2


def plot_gather(f, png):
    traces = f["traces"][0]  # [receiver, time] of shot 0
    t = f["time"][:]
    x, label, order = receiver_axis(f["receivers/positions"][:])
    gather = traces[order].T  # [time, receiver]
    clip = symmetric_clip(gather)
    fig, ax = plt.subplots(figsize=(7, 6), constrained_layout=True)
    m = ax.pcolormesh(cell_edges(x), cell_edges(t), gather, cmap="seismic", vmin=-clip, vmax=clip, shading="flat")
    ax.invert_yaxis()  # time down
    ax.set_xlabel(label)
    ax.set_ylabel("time (s)")
    ax.set_title("shot 0 gather (colour clip \u00b1%.3g)" % clip)
    fig.colorbar(m, ax=ax, label="pressure")
    fig.savefig(png, dpi=100)
    plt.close(fig)


def plot_volume_xz(f, dataset, png, title, colorbar_label, symmetric):
    vol = f[dataset]
    nz, ny, nx = vol.shape
    iy = slice_y_index(f, ny)
    xz = vol[:, iy, :]
    fig, ax = plt.subplots(figsize=(8, 4.5), constrained_layout=True)
    if symmetric:
        clip = symmetric_clip(xz)
        m = ax.imshow(xz, extent=xz_extent(f, nz, nx), cmap="gray_r", vmin=-clip, vmax=clip, aspect="equal")
    else:
        m = ax.imshow(xz, extent=xz_extent(f, nz, nx), cmap="viridis", aspect="equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("depth z (m)")
    o = f.attrs["origin"] if "origin" in f.attrs else np.zeros(3)
    ax.set_title("%s, x-z at y = %.0f m" % (title, o[1] + iy * f.attrs["spacing"][1]))
    fig.colorbar(m, ax=ax, label=colorbar_label)
    fig.savefig(png, dpi=100)
    plt.close(fig)


def plot_snapshots(f, png, most=6):
    snaps = f["snapshots/shot_0000"]  # [snapshot, z, y, x]
    times = f["snapshots/time"][:]
    ns, nz, ny, nx = snaps.shape
    iy = slice_y_index(f, ny)
    picks = np.unique(np.linspace(0, ns - 1, min(ns, most)).round().astype(int))
    slices = [snaps[k, :, iy, :] for k in picks]
    clip = symmetric_clip(np.stack(slices))  # one colour scale for all: amplitudes compare
    fig, axes = plt.subplots(1, len(picks), figsize=(4 * len(picks), 3.5), squeeze=False, constrained_layout=True)
    for ax, k, s in zip(axes[0], picks, slices):
        m = ax.imshow(s, extent=xz_extent(f, nz, nx), cmap="seismic", vmin=-clip, vmax=clip, aspect="equal")
        ax.set_title("t = %.3f s" % times[k])
        ax.set_xlabel("x (m)")
    axes[0][0].set_ylabel("depth z (m)")
    fig.colorbar(m, ax=axes[0].tolist(), label="pressure")
    fig.savefig(png, dpi=100)
    plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result", help="a .h5 file written by seisrtm run or seisrtm migrate")
    p.add_argument("--out", default="plots", help="directory for the PNGs (created; default: plots)")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.result))[0]
    written = []

    def out(kind):
        written.append(os.path.join(args.out, "%s_%s.png" % (stem, kind)))
        return written[-1]

    with h5py.File(args.result, "r") as f:
        if "traces" in f and f["traces"].shape[0] > 0:
            plot_gather(f, out("gather"))
        if "model/vp" in f:
            plot_volume_xz(f, "model/vp", out("model_xz"), "vp", "vp (m/s)", symmetric=False)
        if "snapshots/shot_0000" in f and f["snapshots/shot_0000"].shape[0] > 0:
            plot_snapshots(f, out("snapshots"))
        if "image/laplacian" in f:
            plot_volume_xz(f, "image/laplacian", out("image_xz"), "image", "-lap(normalised image) (1/m^2)", True)
    if not written:
        sys.exit("plot_result.py: '%s' has none of /traces, /model/vp, /snapshots, /image" % args.result)
    for w in written:
        print("wrote", w)


if __name__ == "__main__":
    main(sys.argv[1:])
