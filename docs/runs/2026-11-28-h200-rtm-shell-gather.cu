// Shell gather/scatter at 800^3 (interior [20,780)^3, inner [24,776)^3): cells a thread K = 1,2,4,8.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>
template <int K, bool Gather>
__global__ void move(float* p, const unsigned* cells, long long count, float* store, const long long* level) {
  float* slot = store + (*level) * count;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long k0 = blockIdx.x * (long long)blockDim.x + threadIdx.x; k0 < count; k0 += K * stride) {
    unsigned c[K];
    float v[K];
    bool in[K];
#pragma unroll
    for (int u = 0; u < K; ++u) {
      long long k = k0 + u * stride;
      in[u] = k < count;
      c[u] = in[u] ? cells[k] : 0u;
    }
#pragma unroll
    for (int u = 0; u < K; ++u)
      if (in[u]) v[u] = Gather ? p[c[u]] : slot[k0 + u * stride];
#pragma unroll
    for (int u = 0; u < K; ++u)
      if (in[u]) {
        if (Gather)
          slot[k0 + u * stride] = v[u];
        else
          p[c[u]] = v[u];
      }
  }
}
template <int K, bool G>
float run(float* p, unsigned* cells, long long n, float* store, long long* lv, int slots) {
  int blocks = (int)std::min<long long>((n + 256LL * K - 1) / (256LL * K), 65535);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int s = 0; s < 3; ++s) {
    cudaMemcpy(lv, &s, 0, cudaMemcpyHostToDevice);
    move<K, G><<<blocks, 256>>>(p, cells, n, store, lv + s % slots);
  }
  cudaEventRecord(a);
  const int reps = 40;
  for (int s = 0; s < reps; ++s) move<K, G><<<blocks, 256>>>(p, cells, n, store, lv + s % slots);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  return ms / reps;
}
int main() {
  const long long nxp = 800, ny = 800, nz = 800;
  std::vector<unsigned> cells;
  for (long long z = 20; z < 780; ++z)
    for (long long y = 20; y < 780; ++y)
      for (long long x = 20; x < 780; ++x) {
        bool inner = x >= 24 && x < 776 && y >= 24 && y < 776 && z >= 24 && z < 776;
        if (!inner) cells.push_back((unsigned)((z * ny + y) * nxp + x));
      }
  const long long n = cells.size();
  const int slots = 16;
  float *p, *store;
  unsigned* dc;
  long long* lv;
  cudaMalloc(&p, nxp * ny * nz * 4);
  cudaMalloc(&store, n * 4 * slots);
  cudaMalloc(&dc, n * 4);
  cudaMalloc(&lv, slots * 8);
  std::vector<long long> hl(slots);
  for (int i = 0; i < slots; ++i) hl[i] = i;
  cudaMemcpy(lv, hl.data(), slots * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, cells.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemset(p, 0, nxp * ny * nz * 4);
  cudaMemset(store, 0, n * 4 * slots);
  printf("shell cells %lld (%.1f MB a level)\n", n, n * 4 / 1e6);
  printf("gather K=1 %.4f ms, K=2 %.4f, K=4 %.4f, K=8 %.4f\n", run<1, true>(p, dc, n, store, lv, slots),
         run<2, true>(p, dc, n, store, lv, slots), run<4, true>(p, dc, n, store, lv, slots),
         run<8, true>(p, dc, n, store, lv, slots));
  printf("scatter K=1 %.4f ms, K=2 %.4f, K=4 %.4f, K=8 %.4f\n", run<1, false>(p, dc, n, store, lv, slots),
         run<2, false>(p, dc, n, store, lv, slots), run<4, false>(p, dc, n, store, lv, slots),
         run<8, false>(p, dc, n, store, lv, slots));
  printf("gather K=1 %.4f ms, K=4 %.4f (again)\n", run<1, true>(p, dc, n, store, lv, slots),
         run<4, true>(p, dc, n, store, lv, slots));
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
