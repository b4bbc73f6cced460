// [unit] The tma kernel's chunked launch order (kernels::block_place): every tile of every z
// block is worked by exactly one block, the blocks of a chunk take its z blocks in turn, and a
// chunk of all the tiles is the order of a 3D grid. And the kernel's L2 hints: the policy, the
// environment variable that overrides it, and what kernel names say.
#include <cstdlib>
#include <string>
#include <vector>

#include "app/bench/bench.hpp"
#include "kernels/acoustic.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/tti.hpp"
#include "solver/cuda_propagator.hpp"
#include "tests/catch.hpp"

using Catch::Matchers::Contains;
using seisrtm::kernels::block_place;

TEST_CASE("the chunked launch order places each block on one tile and z block, chunk by chunk", "[unit]") {
  for (int tiles_x : {1, 4, 25})
    for (int tile_rows : {1, 3, 25})
      for (int z_blocks : {1, 2, 11, 25})
        for (int rows = 1; rows <= tile_rows + 1; ++rows) {
          const int tiles = tiles_x * tile_rows, chunk = tiles_x * (rows < tile_rows ? rows : tile_rows);
          INFO(tiles_x << " x " << tile_rows << " tiles, " << z_blocks << " z blocks, chunks of " << chunk << " tiles");
          std::vector<int> seen(static_cast<size_t>(tiles * z_blocks), 0);
          int last_chunk = 0, last_z = 0;
          bool in_order = true;
          for (int b = 0; b < tiles * z_blocks; ++b) {
            const auto at = block_place(b, tiles, chunk, z_blocks);
            REQUIRE(at.tile >= 0);
            REQUIRE(at.tile < tiles);
            REQUIRE(at.z_block >= 0);
            REQUIRE(at.z_block < z_blocks);
            ++seen[static_cast<size_t>(at.z_block * tiles + at.tile)];
            // Chunks in turn, and within a chunk the z blocks in turn.
            const int c = at.tile / chunk;
            if (c < last_chunk || (c == last_chunk && at.z_block < last_z)) in_order = false;
            if (c != last_chunk) last_z = 0;
            last_chunk = c;
            last_z = at.z_block;
            // A chunk of all the tiles: the order of a 3D grid (x fastest, then y, then z).
            if (chunk == tiles) {
              CHECK(at.tile == b % tiles);
              CHECK(at.z_block == b / tiles);
            }
          }
          CHECK(in_order);
          for (int v : seen) REQUIRE(v == 1);
        }
}

TEST_CASE("the tti tma launch order's policy: the most whole tile rows the resident blocks cover", "[unit]") {
  using seisrtm::kernels::tti_chunk_rows_policy;
  // 132 resident blocks (one an SM of a 132-SM GPU), 800 cells in x: 25 tiles a row: 5 rows (125
  // tiles, no more than are resident), not the 6 rows that hold them all.
  CHECK(tti_chunk_rows_policy(132, 25) == 5);
  CHECK(tti_chunk_rows_policy(125, 25) == 5);
  CHECK(tti_chunk_rows_policy(149, 25) == 5);
  CHECK(tti_chunk_rows_policy(150, 25) == 6);
  // Fewer resident blocks than a row's tiles: one row.
  CHECK(tti_chunk_rows_policy(24, 25) == 1);
  CHECK(tti_chunk_rows_policy(1, 25) == 1);
  for (int resident : {1, 7, 132, 264, 1000})
    for (int tiles_x : {1, 3, 25, 400}) {
      const int rows = tti_chunk_rows_policy(resident, tiles_x);
      INFO(resident << " resident, " << tiles_x << " tiles a row: " << rows << " rows");
      CHECK(rows >= 1);
      CHECK((rows == 1 || rows * tiles_x <= resident));  // never more tiles than are resident
      CHECK((rows + 1) * tiles_x > resident);            // and the most whole rows that fit
    }
}

TEST_CASE("the tma kernel's L2 hints: the policy, the tuning and what a kernel name says", "[unit]") {
  using seisrtm::kernels::Storage;
  using seisrtm::kernels::tma_l2_hint_policy;
  // Hints where they measured faster (fp32 storage in plain memory, every order), none elsewhere.
  for (int radius : {1, 2, 4, 8}) {
    CHECK(tma_l2_hint_policy(radius, false, Storage::fp32) == 2);
    CHECK(tma_l2_hint_policy(radius, true, Storage::fp32) == 0);
    CHECK(tma_l2_hint_policy(radius, false, Storage::fp16) == 0);
    CHECK(tma_l2_hint_policy(radius, true, Storage::fp16) == 0);
  }
  seisrtm::TmaTuning t;
  CHECK(seisrtm::tma_l2_hint(t, 4, false, Storage::fp32) == 2);  // unset: the policy
  CHECK(seisrtm::tma_chunk_rows(t) == -1);
  for (int v : {0, 1, 2}) {
    t.l2_hint = v;
    CHECK(seisrtm::tma_l2_hint(t, 4, false, Storage::fp32) == v);
    CHECK(seisrtm::tma_l2_hint(t, 4, true, Storage::fp16) == v);
  }
  t.chunk_rows = 0;
  CHECK(seisrtm::tma_chunk_rows(t) == 0);
  // The fused step's shape: wide in plain memory on an H100 (3.35 TB/s), compact on an H200
  // (4.81 TB/s) and in compressible memory; a device that reports no bandwidth takes wide.
  using seisrtm::kernels::FusedShape;
  CHECK(seisrtm::fused_shape_for(seisrtm::TmaTuning{}, false, 3.35e12) == FusedShape::wide);
  CHECK(seisrtm::fused_shape_for(seisrtm::TmaTuning{}, false, 0) == FusedShape::wide);
  CHECK(seisrtm::fused_shape_for(seisrtm::TmaTuning{}, false, 4.81e12) == FusedShape::compact);
  CHECK(seisrtm::fused_shape_for(seisrtm::TmaTuning{}, true, 3.35e12) == FusedShape::compact);
  seisrtm::TmaTuning forced;
  forced.fused_shape = FusedShape::wide;
  CHECK(seisrtm::fused_shape_for(forced, false, 4.81e12) == FusedShape::wide);
  // Names say which hints a kernel takes (none with fp16 storage) and a forced launch order.
  CHECK(seisrtm::tma_settings_text(0, -1, false, false).empty());
  CHECK(seisrtm::tma_settings_text(2, -1, false, false) == ", L2 hints: p_prev and m evict-first, p evict-last");
  CHECK(seisrtm::tma_settings_text(1, -1, false, false) == ", L2 hints: p_prev and m evict-first");
  CHECK(seisrtm::tma_settings_text(2, -1, true, false).empty());
  CHECK(seisrtm::tma_settings_text(1, -1, true, false).empty());
  CHECK(seisrtm::tma_settings_text(0, 0, false, false) == ", launch order: whole layers");
  CHECK(seisrtm::tma_settings_text(2, 3, false, false) ==
        ", L2 hints: p_prev and m evict-first, p evict-last, launch order: chunks of 3 tile rows");
  // vti/tti: their loads read once a step are the per-cell volumes, and p and q are re-read.
  CHECK(seisrtm::tma_settings_text(2, -1, false, true) ==
        ", L2 hints: the per-cell volumes evict-first, p and q evict-last");
  CHECK(seisrtm::tma_settings_text(1, 0, false, true) ==
        ", L2 hints: the per-cell volumes evict-first, launch order: whole layers");
  CHECK(seisrtm::tma_settings_text(2, 1, true, true) == ", launch order: chunks of 1 tile rows");
}

TEST_CASE("launch_order: every tile and z block placed once, for a sweep of sizes and chunk rows", "[unit]") {
  using seisrtm::kernels::launch_order;
  for (int tiles_x : {1, 3, 25})
    for (int tile_rows : {1, 4, 25})
      for (int z_blocks : {1, 2, 7})
        for (int rows : {0, 1, 2, 5, 30}) {
          INFO(tiles_x << " x " << tile_rows << " tiles, " << z_blocks << " z blocks, chunk rows " << rows);
          const auto order = launch_order(nullptr, 512, 0, tiles_x, tile_rows, z_blocks, rows);
          const int tiles = tiles_x * tile_rows;
          REQUIRE(order.grid.x == static_cast<unsigned>(tiles * z_blocks));
          REQUIRE(order.grid.y == 1u);
          CHECK(order.chunk == tiles_x * (rows == 0 || rows > tile_rows ? tile_rows : rows));
          std::vector<int> seen(static_cast<size_t>(tiles * z_blocks), 0);
          for (unsigned b = 0; b < order.grid.x; ++b) {
            const auto at = block_place(static_cast<int>(b), tiles, order.chunk, z_blocks);
            REQUIRE(at.tile >= 0);
            REQUIRE(at.tile < tiles);
            REQUIRE(at.z_block >= 0);
            REQUIRE(at.z_block < z_blocks);
            ++seen[static_cast<size_t>(at.z_block * tiles + at.tile)];
          }
          for (int v : seen) REQUIRE(v == 1);
        }
}

TEST_CASE("the shared-memory check refuses a kernel beyond the device's limit, naming both byte counts", "[unit]") {
  using seisrtm::kernels::check_shared_limit;
  using seisrtm::kernels::kSharedPerBlockCc90;
  const seisrtm::kernels::KernelShape shape{"acoustic", 4, 2};
  CHECK(kSharedPerBlockCc90 == 232448);
  CHECK_NOTHROW(check_shared_limit(shape, 101376, 101376));
  CHECK_NOTHROW(check_shared_limit(shape, 175232, kSharedPerBlockCc90));
  // A fake device limit below the kernel's needs (an sm_89 card's 99 KB against 171 KB).
  CHECK_THROWS_WITH(check_shared_limit(shape, 175232, 101376), Contains("acoustic") && Contains("radius 4") &&
                                                                   Contains("2-byte") && Contains("175232") &&
                                                                   Contains("101376"));
}

TEST_CASE("bench --rtm's bytes a backward level: the fused step's 7 volumes, the separate kernels' 8", "[unit]") {
  using seisrtm::app::bench::backward_bytes_per_cell;
  // fp32: 28 B a cell, and the image and illumination read and written every 18th level.
  CHECK(backward_bytes_per_cell(true, false, 18) == Approx(28.0 + 16.0 / 18));
  CHECK(backward_bytes_per_cell(true, false, 1) == Approx(44.0));
  // The separate kernels: two 16-byte steps, and the imaging kernel reads both fields again.
  CHECK(backward_bytes_per_cell(false, false, 1) == Approx(56.0));
  CHECK(backward_bytes_per_cell(false, false, 2) == Approx(32.0 + 12.0));
  // fp16 storage halves the fields and the model, not the float image.
  CHECK(backward_bytes_per_cell(true, true, 1) == Approx(30.0));
  CHECK(backward_bytes_per_cell(false, true, 2) == Approx(16.0 + 10.0));
  CHECK(backward_bytes_per_cell(true, false, 0) == Approx(44.0));  // an unresolved interval counts as 1
}

TEST_CASE("bench --rtm migrates once without gathers, then with them where asked", "[unit]") {
  using seisrtm::app::bench::rtm_gather_counts;
  // Without --gathers one migration a run (each used to run twice: {0, 0}).
  CHECK(rtm_gather_counts(0) == std::vector<long long>{0});
  CHECK(rtm_gather_counts(-1) == std::vector<long long>{0});
  CHECK(rtm_gather_counts(8) == std::vector<long long>{0, 8});
}

TEST_CASE("bench's median: the middle value, the mean of the two middle ones for an even count", "[unit]") {
  using seisrtm::app::bench::median;
  CHECK(median({3.0, 1.0, 2.0}) == 2.0);
  // Two runs (bench --rtm --repeat 2): their mean, neither the faster nor the slower.
  CHECK(median({2.25, 2.21}) == Approx(2.23));
  CHECK(median({4.0, 1.0, 3.0, 2.0}) == Approx(2.5));
  CHECK(median({}) == 0.0);
}
