#pragma once
// Error norms and trace comparisons.
#include <cstddef>
#include <vector>

namespace seisrtm::validation {

// ||a - b||_2 / ||b||_2 (b the reference); 0 when both are zero.
double relative_l2(const float* a, const float* b, std::size_t n);
double relative_l2(const std::vector<double>& a, const std::vector<double>& b);
double max_abs_difference(const float* a, const float* b, std::size_t n);
double max_abs(const float* a, std::size_t n);
// <a, b> / (|a| |b|) at zero lag.
double normalised_correlation(const std::vector<double>& a, const std::vector<double>& b);
// Index of the largest |value|.
std::size_t peak_index(const std::vector<double>& a);
double energy(const std::vector<double>& a);

}  // namespace seisrtm::validation
