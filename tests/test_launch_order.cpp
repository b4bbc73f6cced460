// [unit] The tma kernel's chunked launch order (kernels::block_place): every tile of every z
// block is worked by exactly one block, the blocks of a chunk take its z blocks in turn, and a
// chunk of all the tiles is the order of a 3D grid.
#include <vector>

#include "kernels/acoustic.hpp"
#include "tests/catch.hpp"

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
