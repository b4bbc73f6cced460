#pragma once
// Per-variant launchers, instantiated for radius 1, 2, 4 and 8 in their own files.
#include "kernels/acoustic.hpp"

namespace seisrtm::kernels {
template <int Radius, class T>
void launch_naive(const AcousticArgsT<T>& a, cudaStream_t stream);
template <int Radius>
void launch_smem(const AcousticArgs& a, int z_block, cudaStream_t stream);
template <int Radius, class T>
void launch_tma(const AcousticArgsT<T>& a, int z_block, const TmaMaps& maps, TmaShape shape, cudaStream_t stream);
}  // namespace seisrtm::kernels
