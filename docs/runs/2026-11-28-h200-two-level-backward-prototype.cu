// Two backward levels of one field a pass (temporal blocking), R = 4, fp32, damping: the
// standalone prototype measured in docs/BENCHMARKS.md, "RTM" (its output: the .txt beside it).
// Not part of the build. From the repository root, on a compute capability 9.0 GPU:
//   nvcc -std=c++20 -O3 -arch=sm_90a -I. docs/runs/2026-11-28-h200-two-level-backward-prototype.cu -o k2
//   ./k2 <n> <z_block, 0: whole column> <two-level passes timed> <check against a reference: 1/0>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/tma_ring.cuh"

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

namespace d = seisrtm::kernels::detail;

constexpr int R = 4, BX = 32, BY = 16, RY = 2, TY = BY * RY;  // output tile 32 x 32
constexpr int AX = BX + 2 * R, AY = TY + 2 * R;               // step A region 40 x 40
constexpr int IX = BX + 4 * R, IY = TY + 4 * R;               // input tile 48 x 48
constexpr int L = 2, SIN = R + 1 + L, FS = 3, IS = 2 * R + 2;
constexpr int IN_F = IX * IY, PW_F = 2 * AX * AY, I_F = AX * AY;
constexpr int HALO = AX * AY - BX * TY;  // 576
constexpr size_t SMEM = size_t(SIN) * IN_F * 4 + size_t(FS) * PW_F * 4 + size_t(IS) * I_F * 4 + 128;

struct Args {
  const float* s1;  // level n+1 (read; halos)
  const float* s2;  // level n+2
  const float* m;
  float* out_i;  // level n
  float* out_o;  // level n-1
  const float* dx;
  const float* dy;
  const float* dz;
  int nx, ny, nz;
  long long sy, sz;
  float cx[R + 1], cy[R + 1], cz[R + 1];
};

__device__ __forceinline__ float leap(float p, float pp, float m, float lap, float s) {
  if (s == 0.0f) return 2.0f * p - pp + m * lap;
  const float num = 2.0f * p - (1.0f - s) * pp + m * lap;
  if (num == 0.0f) return num;
  return num / (1.0f + s);
}

__device__ __forceinline__ void halo_cell(int h, int& ax, int& ay) {
  if (h < 8 * AX) {
    const int rr = h / AX;
    ay = rr < R ? rr : AY - 2 * R + rr;  // rows 0..3, 36..39
    ax = h % AX;
  } else {
    const int h2 = h - 8 * AX, c = h2 % 8;
    ay = R + h2 / 8;
    ax = c < R ? c : AX - 2 * R + c;
  }
}

__global__ void __launch_bounds__(512, 1)
    k2(const __grid_constant__ CUtensorMap map_in, const __grid_constant__ CUtensorMap map_s2,
       const __grid_constant__ CUtensorMap map_m, const Args a, int z_block) {
  extern __shared__ __align__(128) float raw[];
  __shared__ alignas(8) uint64_t bar[SIN];
  __shared__ alignas(8) uint64_t pbar[FS];
  float* ring = raw + d::ring_offset<float>(raw);
  float* pw = ring + SIN * IN_F;
  float* iring = pw + FS * PW_F;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  const int tiles_x = (a.nx + BX - 1) / BX, tiles = tiles_x * ((a.ny + TY - 1) / TY);
  const int tile = blockIdx.x % tiles, zblk = blockIdx.x / tiles;
  const int x0 = tile % tiles_x * BX, y0 = tile / tiles_x * TY;
  const int z0 = zblk * z_block, z1 = min(a.nz, z0 + z_block);
  const int jA0 = z0 - R;
  const int iters = (z1 - z0) + 2 * R;
  const int in_planes = iters + R;
  if (tid == 0) {
    d::init_ring(bar, SIN, 1);
    d::init_ring(pbar, FS, 1);
    d::fence_ring_init();
  }
  __syncthreads();
  auto issue = [&](int q, int s) {
    d::expect_bytes(&bar[s], IN_F * 4);
    const int32_t c[3] = {x0 - 2 * R, y0 - 2 * R, jA0 + q};
    d::load_box(ring + s * IN_F, &map_in, c, &bar[s]);
  };
  auto issue_pw = [&](int q, int g) {
    d::expect_bytes(&pbar[g], PW_F * 4);
    const int32_t c[3] = {x0 - R, y0 - R, jA0 + q};
    d::load_box(pw + g * PW_F, &map_s2, c, &pbar[g]);
    d::load_box(pw + g * PW_F + AX * AY, &map_m, c, &pbar[g]);
  };
  if (tid == 0) {
    for (int q = 0; q < min(SIN, in_planes); ++q) issue(q, q);
    for (int q = 0; q < min(FS, iters); ++q) issue_pw(q, q);
  }
  // Step A cells: 2 own (rows), up to 2 halo.
  constexpr int NA = 4;
  int cax[NA], cay[NA];
  bool has[NA];
  cax[0] = tx + R, cay[0] = ty * RY + R;
  cax[1] = tx + R, cay[1] = ty * RY + 1 + R;
  has[0] = has[1] = true;
  for (int k = 0; k < 2; ++k) {
    const int h = tid + k * 512;
    has[2 + k] = h < HALO;
    if (has[2 + k])
      halo_cell(h, cax[2 + k], cay[2 + k]);
    else
      cax[2 + k] = cay[2 + k] = R;
  }
  float behind[NA][R];
  float dxy[NA];
  bool inside[NA];
  long long col[NA];
#pragma unroll
  for (int c = 0; c < NA; ++c) {
    const int gx = x0 - R + cax[c], gy = y0 - R + cay[c];
    inside[c] = has[c] && gx >= 0 && gx < a.nx && gy >= 0 && gy < a.ny;
    const int cgx = min(max(gx, 0), a.nx - 1), cgy = min(max(gy, 0), a.ny - 1);
    col[c] = (long long)cgy * a.sy + cgx;
    dxy[c] = a.dx[cgx] + a.dy[cgy];
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const int z = jA0 - 1 - k;
      behind[c][k] = (inside[c] && z >= 0 && z < a.nz) ? a.s1[z * a.sz + col[c]] : 0.0f;
    }
  }
  float mq[2][R];
#pragma unroll
  for (int r = 0; r < 2; ++r)
#pragma unroll
    for (int k = 0; k < R; ++k) mq[r][k] = 0.0f;
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  int s_cur = 0, s_wait = R % SIN, g_cur = 0;
  uint32_t par = 0, gpar = 0;
  for (int q = 0; q < min(R, in_planes); ++q) d::wait_stage(&bar[q], 0);
  for (int it = 0; it < iters; ++it) {
    const int j = jA0 + it;
    d::wait_stage(&pbar[g_cur], gpar);
    d::wait_stage(&bar[s_wait], par);
    const float* fr[R];
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      int sk = s_cur + k;
      if (sk >= SIN) sk -= SIN;
      fr[k - 1] = ring + sk * IN_F;
    }
    const float* ctr = ring + s_cur * IN_F;
    const float* pwg = pw + g_cur * PW_F;
    float* islot = iring + (it % IS) * I_F;
    const bool zin = j >= 0 && j < a.nz;
    const float dzj = a.dz[min(max(j, 0), a.nz - 1)];
    float prevB[2], mB[2];
#pragma unroll
    for (int c = 0; c < NA; ++c) {
      if (c >= 2 && !has[c]) continue;
      const int o = (cay[c] + R) * IX + cax[c] + R;
      const float cur = ctr[o];
      float lap = c0 * cur;
#pragma unroll
      for (int k = 1; k <= R; ++k)
        lap += a.cx[k] * (ctr[o - k] + ctr[o + k]) + a.cy[k] * (ctr[o - k * IX] + ctr[o + k * IX]) +
               a.cz[k] * (behind[c][k - 1] + fr[k - 1][o]);
      const int pa = cay[c] * AX + cax[c];
      const float s2 = pwg[pa], mm = pwg[AX * AY + pa];
      const float v = (inside[c] && zin) ? leap(cur, s2, mm, lap, dxy[c] + dzj) : 0.0f;
      islot[pa] = v;
      if (c < 2) {
        prevB[c] = behind[c][R - 1];
        mB[c] = mq[c][R - 1];
#pragma unroll
        for (int k = R - 1; k > 0; --k) mq[c][k] = mq[c][k - 1];
        mq[c][0] = mm;
        if (inside[c] && j >= z0 && j < z1) a.out_i[j * a.sz + col[c]] = v;
      }
#pragma unroll
      for (int k = R - 1; k > 0; --k) behind[c][k] = behind[c][k - 1];
      behind[c][0] = cur;
    }
    __syncthreads();
    if (tid == 0) {
      if (it + SIN < in_planes) issue(it + SIN, s_cur);
      if (it + FS < iters) issue_pw(it + FS, g_cur);
    }
    if (++s_cur == SIN) s_cur = 0;
    if (++s_wait == SIN) s_wait = 0, par ^= 1;
    if (++g_cur == FS) g_cur = 0, gpar ^= 1;
    // Step B at zb = j - R.
    const int zb = j - R;
    if (zb >= z0) {
      const int sb = (it - R) % IS;
      const float* ib = iring + sb * I_F;
      const float dzb = a.dz[zb];
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int pa = cay[c] * AX + cax[c];
        const float cur = ib[pa];
        float lap = c0 * cur;
#pragma unroll
        for (int k = 1; k <= R; ++k) {
          const float* zm = iring + ((it - R - k + IS) % IS) * I_F;
          const float* zp = iring + ((it - R + k) % IS) * I_F;
          lap += a.cx[k] * (ib[pa - k] + ib[pa + k]) + a.cy[k] * (ib[pa - k * AX] + ib[pa + k * AX]) +
                 a.cz[k] * (zm[pa] + zp[pa]);
        }
        const float v = leap(cur, prevB[c], mB[c], lap, dxy[c] + dzb);
        if (inside[c]) a.out_o[zb * a.sz + col[c]] = v;
      }
    }
  }
}

// Reference: one level, direct loads, the same sums.
__global__ void k1ref(const float* p, const float* pp, const float* m, float* out, const float* dx, const float* dy,
                      const float* dz, int nx, int ny, int nz, long long sy, long long sz, Args a) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  auto at = [&](int ix, int iy, int iz) -> float {
    if (ix < 0 || ix >= nx || iy < 0 || iy >= ny || iz < 0 || iz >= nz) return 0.0f;
    return p[iz * sz + iy * sy + ix];
  };
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  for (int z = 0; z < nz; ++z) {
    const float cur = at(x, y, z);
    float lap = c0 * cur;
    for (int k = 1; k <= R; ++k)
      lap += a.cx[k] * (at(x - k, y, z) + at(x + k, y, z)) + a.cy[k] * (at(x, y - k, z) + at(x, y + k, z)) +
             a.cz[k] * (at(x, y, z - k) + at(x, y, z + k));
    const long long i = z * sz + y * sy + x;
    out[i] = leap(cur, pp[i], m[i], lap, (dx[x] + dy[y]) + dz[z]);
  }
}

using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                            const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                            CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
Encode encode_fn() {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
  return reinterpret_cast<Encode>(f);
}
CUtensorMap make_map(const float* base, int nx, int ny, int nz, int bx, int by) {
  CUtensorMap m;
  const cuuint64_t dims[3] = {cuuint64_t(nx), cuuint64_t(ny), cuuint64_t(nz)};
  const cuuint64_t str[2] = {cuuint64_t(nx) * 4, cuuint64_t(nx) * ny * 4};
  const cuuint32_t box[3] = {cuuint32_t(bx), cuuint32_t(by), 1}, el[3] = {1, 1, 1};
  CUresult r = encode_fn()(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float*>(base), dims, str, box, el,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("encode failed %d\n", int(r));
    std::exit(1);
  }
  return m;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 800;
  const int zb = argc > 2 ? std::atoi(argv[2]) : 0;
  const int pairs = argc > 3 ? std::atoi(argv[3]) : 100;
  const bool check = argc > 4 ? std::atoi(argv[4]) != 0 : true;
  const int w = 20;
  const int nx = n, ny = n, nz = n;
  const long long cells = (long long)nx * ny * nz;
  const size_t bytes = cells * 4;
  std::vector<float> h(cells);
  float* buf[5];
  for (auto& b : buf) CK(cudaMalloc(&b, bytes));
  // Fields: smooth random-ish values; m = (v dt / h)^2-ish = 0.2.
  for (int f = 0; f < 2; ++f) {
    for (long long i = 0; i < cells; ++i) {
      unsigned long long x = (unsigned long long)(i + 1) * 0x9E3779B97F4A7C15ull + f;
      x ^= x >> 29;
      x *= 0xBF58476D1CE4E5B9ull;
      x ^= x >> 32;
      h[i] = float(int(x % 2001) - 1000) * 1e-3f;
    }
    CK(cudaMemcpy(buf[f], h.data(), bytes, cudaMemcpyHostToDevice));
  }
  for (long long i = 0; i < cells; ++i) h[i] = 0.15f + 0.05f * float(i % 7) / 7.0f;
  CK(cudaMemcpy(buf[4], h.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<float> damp(n);
  for (int i = 0; i < n; ++i) {
    const int dist = i < w ? w - i : (i >= n - w ? i - (n - w - 1) : 0);
    damp[i] = dist > 0 ? 0.1f * float(dist * dist) / float(w * w) : 0.0f;
  }
  float* dd;
  CK(cudaMalloc(&dd, n * 4));
  CK(cudaMemcpy(dd, damp.data(), n * 4, cudaMemcpyHostToDevice));
  Args a{};
  const double c8[5] = {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560};
  for (int k = 0; k <= R; ++k) a.cx[k] = a.cy[k] = a.cz[k] = float(c8[k]);
  a.dx = a.dy = a.dz = dd;
  a.nx = nx, a.ny = ny, a.nz = nz, a.sy = nx, a.sz = (long long)nx * ny;
  a.m = buf[4];
  const int zblock = zb > 0 ? zb : nz;
  const int tiles = ((nx + BX - 1) / BX) * ((ny + TY - 1) / TY), zblocks = (nz + zblock - 1) / zblock;
  CK(cudaFuncSetAttribute(k2, cudaFuncAttributeMaxDynamicSharedMemorySize, int(SMEM)));
  auto run2 = [&](int in2, int in1, int o_i, int o_o) {
    Args g = a;
    g.s2 = buf[in2], g.s1 = buf[in1], g.out_i = buf[o_i], g.out_o = buf[o_o];
    const CUtensorMap mi = make_map(buf[in1], nx, ny, nz, IX, IY), ms = make_map(buf[in2], nx, ny, nz, AX, AY),
                      mm = make_map(buf[4], nx, ny, nz, AX, AY);
    k2<<<tiles * zblocks, dim3(BX, BY), SMEM>>>(mi, ms, mm, g, zblock);
    CK(cudaGetLastError());
  };
  // Check at this size against two reference levels.
  if (check) {
    float *r1, *r2;
    CK(cudaMalloc(&r1, bytes));
    CK(cudaMalloc(&r2, bytes));
    dim3 b(32, 8), gr((nx + 31) / 32, (ny + 7) / 8);
    k1ref<<<gr, b>>>(buf[1], buf[0], buf[4], r1, dd, dd, dd, nx, ny, nz, a.sy, a.sz, a);
    k1ref<<<gr, b>>>(r1, buf[1], buf[4], r2, dd, dd, dd, nx, ny, nz, a.sy, a.sz, a);
    run2(0, 1, 2, 3);
    CK(cudaDeviceSynchronize());
    std::vector<float> A(cells), B(cells);
    for (int pass = 0; pass < 2; ++pass) {
      CK(cudaMemcpy(A.data(), pass ? r2 : r1, bytes, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(B.data(), buf[pass ? 3 : 2], bytes, cudaMemcpyDeviceToHost));
      double md = 0, mx = 0;
      long long diff = 0;
      for (long long i = 0; i < cells; ++i) {
        md = std::max(md, (double)std::fabs(A[i] - B[i]));
        mx = std::max(mx, (double)std::fabs(A[i]));
        diff += A[i] != B[i];
      }
      std::printf("level %s: max |two-level - reference| %.3g of max %.3g, %lld cells differ\n", pass ? "n-1" : "n", md,
                  mx, diff);
    }
    CK(cudaFree(r1));
    CK(cudaFree(r2));
  }
  // Timing: `pairs` two-level passes rotating four buffers.
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  int q[4] = {0, 1, 2, 3};
  for (int warm = 0; warm < 3; ++warm) run2(q[0], q[1], q[2], q[3]);
  CK(cudaEventRecord(e0));
  for (int p = 0; p < pairs; ++p) {
    run2(q[0], q[1], q[2], q[3]);
    std::swap(q[0], q[2]);
    std::swap(q[1], q[3]);
  }
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  const double per_level = ms / 1e3 / (2.0 * pairs);
  // Copy bandwidth in the same run.
  CK(cudaEventRecord(e0));
  for (int k = 0; k < 10; ++k) CK(cudaMemcpyAsync(buf[2], buf[3], bytes, cudaMemcpyDeviceToDevice));
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float cms = 0;
  CK(cudaEventElapsedTime(&cms, e0, e1));
  const double copy_bw = 10.0 * 2.0 * bytes / (cms / 1e3);
  std::printf(
      "n %d z_block %d: one field, two levels a pass: %.3f ms a level (%.1f GCells/s), "
      "10 B a cell a level ideal -> %.0f%% of copy %.2f TB/s; 1000 levels of one field: %.3f s\n",
      n, zblock, per_level * 1e3, cells / per_level / 1e9, 100.0 * 10.0 * cells / per_level / copy_bw, copy_bw / 1e12,
      per_level * 1000);
  return 0;
}
