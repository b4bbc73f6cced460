#include "solver/device_points.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "solver/slab_overlap.hpp"

namespace seisrtm {

namespace {

long long padded(const VolumeDims& d, long long cell) {
  const long long ix = cell % d.nx, iy = (cell / d.nx) % d.ny, iz = cell / (d.nx * d.ny);
  return (iz * d.ny + iy) * d.nxp + ix;
}

}  // namespace

void make_injection(const Problem& pb, const PointSet& ps, double scale, const VolumeDims& d, DeviceInjection& out,
                    const SlabOverlap* parts) {
  std::map<long long, std::vector<std::pair<int, float>>> by_cell;
  const double dt2 = pb.dt * pb.dt;
  for (long long i = 0; i < ps.size(); ++i)
    for (long long e = ps.offset[i]; e < ps.offset[i + 1]; ++e) {
      const long long c = ps.cell[e];
      const long long ix = c % d.nx, iy = (c / d.nx) % d.ny, iz = c / (d.nx * d.ny);
      if (pb.free_surface && iz == 0) continue;
      const double sdamp = double(pb.damping[0][ix]) + pb.damping[1][iy] + pb.damping[2][iz];
      const double v = pb.vp[c];
      by_cell[padded(d, c)].push_back(
          {static_cast<int>(i), static_cast<float>(v * v * dt2 * ps.weight[e] * scale / (1 + sdamp))});
    }
  std::vector<long long> cells;
  std::vector<int> offset{0}, row;
  std::vector<float> coef;
  for (const auto& [cell, list] : by_cell) {
    cells.push_back(cell);
    for (const auto& [rw, cf] : list) row.push_back(rw), coef.push_back(cf);
    offset.push_back(static_cast<int>(row.size()));
  }
  if (parts) {
    long long sp[4];
    parts->split(cells.data(), static_cast<long long>(cells.size()), d.nxp * d.ny, sp);
    for (int k = 0; k < 4; ++k) out.split[k] = static_cast<int>(sp[k]);
  }
  out.cells = upload(cells);
  out.offset = upload(offset);
  out.row = upload(row);
  out.coef = upload(coef);
  out.inj = {out.cells.as<long long>(), out.offset.as<int>(), out.row.as<int>(), out.coef.as<float>(),
             static_cast<int>(cells.size())};
}

SourceEntries source_entries(const Problem& pb, const PointSet& src, const VolumeDims& d, const SlabOverlap* parts) {
  SourceEntries out;
  std::vector<long long>& cells = out.cells;
  std::vector<float>& coef = out.coef;
  const double dt2 = pb.dt * pb.dt;
  for (long long e = src.offset[0]; e < src.offset[1]; ++e) {
    const long long c = src.cell[e];
    const long long ix = c % d.nx, iy = (c / d.nx) % d.ny, iz = c / (d.nx * d.ny);
    if (pb.free_surface && iz == 0) continue;
    const double s = double(pb.damping[0][ix]) + pb.damping[1][iy] + pb.damping[2][iz];
    const double v = pb.vp[c];
    cells.push_back(padded(d, c));
    coef.push_back(static_cast<float>(v * v * dt2 * src.weight[e] / pb.cell_volume() / (1 + s)));
  }
  if (!parts) return out;
  std::vector<long long> order(cells.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<long long>(i);
  auto edge = [&](long long i) {
    const long long iz = cells[static_cast<size_t>(i)] / (d.nxp * d.ny);
    return (iz >= parts->lo(0) && iz < parts->hi(0)) || (iz >= parts->lo(2) && iz < parts->hi(2));
  };
  std::stable_partition(order.begin(), order.end(), edge);
  std::vector<long long> c2;
  std::vector<float> w2;
  for (long long i : order) {
    c2.push_back(cells[static_cast<size_t>(i)]);
    w2.push_back(coef[static_cast<size_t>(i)]);
  }
  out.edge_entries = static_cast<int>(std::count_if(order.begin(), order.end(), edge));
  cells.swap(c2);
  coef.swap(w2);
  return out;
}

void upload_source(const SourceEntries& e, PointSource& out) {
  out.cells = upload(e.cells);
  out.coef = upload(e.coef);
  out.entries = static_cast<int>(e.cells.size());
  out.edge_entries = e.edge_entries;
}

Recording make_recording(const PointSet& ps, const VolumeDims& d) {
  std::vector<long long> cells;
  for (long long c : ps.cell) cells.push_back((c / (d.nx * d.ny) * d.ny + (c / d.nx) % d.ny) * d.nxp + c % d.nx);
  std::vector<int> offset(ps.offset.begin(), ps.offset.end());
  Recording r;
  r.cells = upload(cells);
  r.coef = upload(ps.weight);
  r.offset = upload(offset);
  r.args = {r.cells.as<long long>(), r.coef.as<float>(), r.offset.as<int>(), 0, static_cast<int>(ps.size())};
  return r;
}

}  // namespace seisrtm
