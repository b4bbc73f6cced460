#pragma once
// Pictures of slices, gathers and images: 8-bit RGB PNG, written with stored (uncompressed)
// deflate blocks so no image library is needed.
#include <cstdint>
#include <string>
#include <vector>

namespace seisrtm::io {

enum class Colormap { seismic, gray };

// Writes a rows x cols float image (row-major, row 0 at the top). `clip` sets the colour
// range: [-clip, clip] for seismic, [lo, hi] from the data for gray when clip <= 0.
// Each pixel is repeated `scale` times in both directions.
void write_png(const std::string& path, const std::vector<float>& values, long long rows,
               long long cols, Colormap map, float clip, int scale = 1);

// The raw RGB encoder (rows x cols x 3 bytes).
void write_png_rgb(const std::string& path, const std::vector<uint8_t>& rgb, long long rows,
                   long long cols);

// Nearest-neighbour resampling of a rows x cols image to out_rows x out_cols.
std::vector<float> resample_nearest(const std::vector<float>& v, long long rows, long long cols,
                                    long long out_rows, long long out_cols);

// A robust colour clip for seismic data: the given percentile of |values|.
float percentile_abs(const std::vector<float>& values, double fraction);

}  // namespace seisrtm::io
