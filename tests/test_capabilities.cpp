// [unit] What the GPU kernels implement (solver/capabilities.hpp): every variant against every
// equation, storage, pass and device generation, the one place the commands ask.
#include <initializer_list>
#include <string>

#include "io/config.hpp"
#include "solver/capabilities.hpp"
#include "tests/catch.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;

TEST_CASE("cannot_implement: the kernels each equation, storage, pass and GPU has", "[unit]") {
  GpuInfo hopper, ada;
  hopper.present = ada.present = true;
  hopper.name = "H100", hopper.cc_major = 9, hopper.tma = true;
  ada.name = "L40S", ada.cc_major = 8, ada.cc_minor = 9, ada.tma = false;
  using kernels::Storage;
  using kernels::Variant;
  for (Equation eq : {Equation::acoustic, Equation::vti, Equation::tti})
    for (Storage st : {Storage::fp32, Storage::fp16})
      for (bool migration : {false, true})
        for (bool slabs : {false, true})
          for (Variant v : {Variant::naive, Variant::smem, Variant::tma})
            for (const GpuInfo* g : std::initializer_list<const GpuInfo*>{&hopper, &ada, nullptr}) {
              const bool acoustic = eq == Equation::acoustic, half = st == Storage::fp16;
              // The table the kernels and the migrator implement: smem is the acoustic fp32
              // kernel; the migrator's fp16 fields are the acoustic ones on one device; tma
              // needs compute capability 9.0 (asked only with a device).
              const bool runs = !(v == Variant::smem && (!acoustic || half)) &&
                                !(migration && half && (!acoustic || slabs)) && !(v == Variant::tma && g == &ada);
              const std::string why = cannot_implement({v, eq, st, migration, slabs}, g);
              INFO(to_text(eq) << (half ? " fp16" : " fp32") << (migration ? " migration" : " forward")
                               << (slabs ? " slabs " : " ") << variant_name(v) << " on " << (g ? g->name : "any GPU")
                               << ": " << why);
              CHECK(why.empty() == runs);
            }
  // The reasons say what would run instead.
  CHECK_THAT(cannot_implement({Variant::tma, Equation::acoustic}, &ada),
             Contains("compute capability 9.0") && Contains("L40S is 8.9") && Contains("smem or naive"));
  CHECK_THAT(cannot_implement({Variant::tma, Equation::tti}, &ada), Contains("use auto, naive") && !Contains("smem"));
  CHECK_THAT(cannot_implement({Variant::smem, Equation::vti}, nullptr), Contains("vti has no smem variant"));
  CHECK_THAT(cannot_implement({Variant::smem, Equation::acoustic, Storage::fp16}, nullptr),
             Contains("fp16 storage has no smem variant"));
  CHECK(variant_named("smem") == Variant::smem);
  CHECK(variant_of(SolverKernel::naive) == Variant::naive);
  CHECK(variant_of(SolverKernel::smem) == Variant::smem);
  CHECK(variant_of(SolverKernel::tma) == Variant::tma);
  CHECK_THROWS(variant_of(SolverKernel::automatic));
  CHECK_THROWS_WITH(variant_named("fast"), Contains("'fast' is not a kernel variant"));
}

TEST_CASE("migration.fused: auto takes the fused step in fp32 storage and the separate kernels in fp16", "[unit]") {
  using kernels::Storage;
  CHECK(fused_step_asked(FusedStep::automatic, Storage::fp32));
  CHECK_FALSE(fused_step_asked(FusedStep::automatic, Storage::fp16));
  CHECK(fused_step_asked(FusedStep::on, Storage::fp32));
  CHECK(fused_step_asked(FusedStep::on, Storage::fp16));
  CHECK_FALSE(fused_step_asked(FusedStep::off, Storage::fp32));
  CHECK_FALSE(fused_step_asked(FusedStep::off, Storage::fp16));
  // The config's words: true, false and auto (the default).
  CHECK(from_text<FusedStep>("true") == FusedStep::on);
  CHECK(from_text<FusedStep>("false") == FusedStep::off);
  CHECK(from_text<FusedStep>("auto") == FusedStep::automatic);
  CHECK(MigrationConfig{}.fused == FusedStep::automatic);
}
