#pragma once
// Smoothing of a velocity model for migration: the true model reused as a smooth background.
#include <vector>

#include "solver/grid.hpp"

namespace seisrtm {

// Gaussian smoothing of slowness 1/v with standard deviation `length` m on every axis
// (separable, truncated at 3 standard deviations, edges extended with their last value);
// vp is replaced by 1 / smoothed slowness. Slowness, not velocity, is averaged because
// traveltimes add up slowness along a ray, so kinematics are preserved at long wavelengths.
void smooth_slowness(const Grid& g, double length, std::vector<float>& vp);

}  // namespace seisrtm
