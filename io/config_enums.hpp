#pragma once
// The enumerated choices of the configuration. Each enum's values are listed in the order of its
// name table, `enum_names(E{})`, which is also the order error messages and docs/CONFIG.md list
// them in: the text of a value is enum_names(E{})[value]. The text is read once, in the config
// parser (io/config.cpp), and written back by to_yaml; everything else compares the enums.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seisrtm {

// physics.equation. acoustic: isotropic; vti, tti: the pseudo-acoustic p/q system with a vertical
// or tilted symmetry axis.
enum class Equation { acoustic, vti, tti };
constexpr std::array<const char*, 3> enum_names(Equation) {
  return {"acoustic", "vti", "tti"};
}

// model.<volume>.type.
enum class VolumeType { constant, gradient, layers, file };
constexpr std::array<const char*, 4> enum_names(VolumeType) {
  return {"constant", "gradient", "layers", "file"};
}

// sources.wavelet.type, migration.wavelet.type.
enum class WaveletType { ricker, file };
constexpr std::array<const char*, 2> enum_names(WaveletType) {
  return {"ricker", "file"};
}

// sources.interpolation, receivers.interpolation.
enum class Interpolation { nearest, trilinear, hicks };
constexpr std::array<const char*, 3> enum_names(Interpolation) {
  return {"nearest", "trilinear", "hicks"};
}

// Which of receivers.line, receivers.grid, receivers.list is given (none: no receivers).
// per_shot: a spread of its own for each shot (receivers.per_shot).
enum class ReceiverLayout { line, grid, list, per_shot, none };
constexpr std::array<const char*, 5> enum_names(ReceiverLayout) {
  return {"line", "grid", "list", "per_shot", "none"};
}

// output.segy: the SEG-Y revision of the shot gathers' copy, none for no copy.
enum class SegyRevision { none, rev1, rev2 };
constexpr std::array<const char*, 3> enum_names(SegyRevision) {
  return {"none", "rev1", "rev2"};
}

// solver.backend. auto resolves to cuda where a GPU is usable, else cpu (solver/problem.cpp).
enum class SolverBackend { automatic, cpu, cuda };
constexpr std::array<const char*, 3> enum_names(SolverBackend) {
  return {"auto", "cpu", "cuda"};
}

// solver.kernel. auto resolves per equation and storage (solver/cuda_propagator.cpp).
enum class SolverKernel { automatic, naive, smem, tma };
constexpr std::array<const char*, 4> enum_names(SolverKernel) {
  return {"auto", "naive", "smem", "tma"};
}

// solver.memory.
enum class SolverMemory { plain, compressible };
constexpr std::array<const char*, 2> enum_names(SolverMemory) {
  return {"plain", "compressible"};
}

// solver.storage.
enum class SolverStorage { fp32, fp16 };
constexpr std::array<const char*, 2> enum_names(SolverStorage) {
  return {"fp32", "fp16"};
}

// solver.decomposition.
enum class Decomposition { none, z };
constexpr std::array<const char*, 2> enum_names(Decomposition) {
  return {"none", "z"};
}

// migration.mode.
enum class MigrationMode { boundary, snapshots };
constexpr std::array<const char*, 2> enum_names(MigrationMode) {
  return {"boundary", "snapshots"};
}

// migration.imaging_condition: the zero-lag cross-correlation S R, or the inverse-scattering
// condition (1 / v^2) dS/dt dR/dt - grad S . grad R (Whitmore and Crawley 2012), which removes the
// backscatter of sharp contrasts (validation/cpu_migration.cpp).
enum class ImagingCondition { correlation, isic };
constexpr std::array<const char*, 2> enum_names(ImagingCondition) {
  return {"correlation", "isic"};
}

// migration.data_filter. auto resolves by the receivers' spread (solver/migration.cpp).
enum class DataFilter { automatic, derivative, half_derivative, none };
constexpr std::array<const char*, 4> enum_names(DataFilter) {
  return {"auto", "derivative", "half_derivative", "none"};
}

// migration.fused: the backward step of a tma migration (acoustic, space order <= 8) as one fused
// kernel (true) or separate kernels (false). auto: fused in fp32 storage, separate in fp16, where
// the fused step is issue-bound and the slower (docs/BENCHMARKS.md, "RTM"; solver/cuda_migration.cpp).
enum class FusedStep { automatic, on, off };
constexpr std::array<const char*, 3> enum_names(FusedStep) {
  return {"auto", "true", "false"};
}

// migration.store. auto resolves by the device's free memory (solver/cuda_migration.cpp).
enum class StoreLocation { automatic, device, host };
constexpr std::array<const char*, 3> enum_names(StoreLocation) {
  return {"auto", "device", "host"};
}

// migration.reconstruction: how a boundary-mode backward pass gets the shells it rebuilds the
// source field from. store: every level's, kept from the forward pass; checkpoint: one segment's
// at a time, re-run from a checkpoint of the full state (solver/rtm_schedule.hpp,
// CheckpointPlan). auto: the GPU takes the store where it fits the device or the host, else
// checkpoints (solver/cuda_migration.cpp, choose_reconstruction); the CPU takes the store.
enum class Reconstruction { automatic, store, checkpoint };
constexpr std::array<const char*, 3> enum_names(Reconstruction) {
  return {"auto", "store", "checkpoint"};
}

// migration.checkpoint_location: where a checkpointed migration on the GPU keeps its checkpoints.
// host: pinned host memory; disk: files in migration.checkpoint_directory (each loaded through
// one pinned state before its segment's replay); auto: the host, in one level, else in two, else
// (with a directory) one level whose checkpoints beyond what the host holds go to the directory.
// The CPU reference keeps its checkpoints in memory.
enum class CheckpointLocation { automatic, host, disk };
constexpr std::array<const char*, 3> enum_names(CheckpointLocation) {
  return {"auto", "host", "disk"};
}

// migration.store_precision: the boundary store's element in fp32 storage, 2 bytes instead of 4.
// bf16 keeps 8 significant bits (rounded to nearest even) with float's exponent range, no scale;
// fp16 keeps 11 bits of the value over the shot's power-of-two field scale (solver/storage.hpp,
// source_field_scale: the largest injection near 2^8), below which its range would not reach. The
// rebuilt source field departs from the forward one by about the rounding of the stored boundary
// (docs/BENCHMARKS.md, "RTM").
enum class StorePrecision { fp32, bf16, fp16 };
constexpr std::array<const char*, 3> enum_names(StorePrecision) {
  return {"fp32", "bf16", "fp16"};
}

// The text of a value, as the config file spells it.
template <class E>
std::string to_text(E e) {
  return enum_names(E{})[static_cast<std::size_t>(e)];
}

// The value whose text is `text`, or nothing.
template <class E>
std::optional<E> from_text(std::string_view text) {
  const auto names = enum_names(E{});
  for (std::size_t i = 0; i < names.size(); ++i)
    if (text == names[i]) return static_cast<E>(i);
  return std::nullopt;
}

// Every value's text, in the table's order.
template <class E>
std::vector<std::string> enum_texts() {
  const auto names = enum_names(E{});
  return {names.begin(), names.end()};
}

}  // namespace seisrtm
