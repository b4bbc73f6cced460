#pragma once
// Per-variant launchers of the TTI step, instantiated for radius 1, 2, 4, 8 and tilted (tti) or
// not (vti) in their own files.
#include "kernels/tti.hpp"

namespace seisrtm::kernels {
template <int Radius, bool Tilted, class T>
void launch_tti_naive(const TtiArgsT<T>& a, cudaStream_t stream);
template <int Radius, bool Tilted, class T>
void launch_tti_tma(const TtiArgsT<T>& a, int z_block, const TtiMaps& maps, cudaStream_t stream);
}  // namespace seisrtm::kernels
