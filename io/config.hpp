#pragma once
// The one configuration schema of seisrtm. Defaults live here, in the member initialisers, and
// nowhere else; `to_yaml` writes the resolved configuration (defaults included) that every
// output file stores. Units: metres, seconds, m/s, Hz.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "io/config_enums.hpp"

namespace seisrtm {

struct GridConfig {
  std::array<long long, 3> shape{0, 0, 0};  // cells [nx, ny, nz], damping zone included
  std::array<double, 3> spacing{0, 0, 0};   // m [hx, hy, hz]
  // m: the survey coordinates [x, y, z] of cell (0, 0, 0) (eastings, northings, depth below the
  // datum). Every position of the config (shots, receivers, layer tops, bodies, depth slice), of
  // the data and of the outputs is in survey coordinates; the solver works relative to cell 0
  // (solver/problem.cpp, local_positions).
  std::array<double, 3> origin{0, 0, 0};
};

struct TimeConfig {
  long long steps = 0;       // number of time steps
  std::optional<double> dt;  // s; empty = auto from the stability limit
  double safety = 0.8;       // fraction of the largest stable dt used by dt: auto
};

struct PhysicsConfig {
  // acoustic: isotropic. vti, tti: the pseudo-acoustic p/q system of validation/cpu_tti.hpp with
  // a vertical (vti) or tilted (tti) symmetry axis; model.epsilon and model.delta (and
  // model.theta, model.phi for tti) then describe the anisotropy.
  Equation equation = Equation::acoustic;
  int space_order = 8;  // 2, 4, 8 or 16
};

// One layer of a `layers` volume. In YAML the value key is the volume's name: {top: 0, vp: 1500}
// under model.vp, {top: 0, epsilon: 0.1} under model.epsilon.
struct LayerConfig {
  double top = 0;                   // m, depth of the layer's top at the grid's centre (x, y)
  double value = 0;                 // the volume's value in the layer (vp: m/s, theta: degrees, ...)
  std::array<double, 2> dip{0, 0};  // degrees: the top deepens along +x and +y by tan(dip)
};

// An ellipsoid of constant value laid over the volume (a salt body, a high-velocity lens); the
// value key is the volume's name, as for layers.
struct BodyConfig {
  std::array<double, 3> center{0, 0, 0};  // m
  std::array<double, 3> radii{0, 0, 0};   // m, semi-axes along x, y, z
  double value = 0;                       // the volume's value inside
};

// One model volume (model.vp, model.epsilon, ...): how its value varies over the grid, in the
// volume's own units.
struct VolumeConfig {
  VolumeType type = VolumeType::constant;
  double value = 0;     // constant; gradient: value at z = 0
  double gradient = 0;  // gradient: d value / dz, per m
  std::vector<LayerConfig> layers;
  std::string file;                // HDF5 file (file)
  std::string dataset;             // dataset in that file, shape [nz, ny, nx]
  std::vector<BodyConfig> bodies;  // over constant, gradient and layers volumes
  double smoothing = 0;            // vp only; m; > 0: Gaussian smoothing of slowness with this standard deviation
};

// A constant volume of `value`; `dataset` is its default dataset name for type file.
inline VolumeConfig constant_volume(double value, const char* dataset) {
  VolumeConfig v;
  v.value = value;
  v.dataset = dataset;
  return v;
}

struct ModelConfig {
  VolumeConfig vp = constant_volume(2000, "vp");  // m/s
  // physics.equation vti and tti only. Thomsen's epsilon and delta (dimensionless); the symmetry
  // axis's tilt from vertical theta and its azimuth phi from +x towards +y, in degrees (tti only).
  VolumeConfig epsilon = constant_volume(0, "epsilon"), delta = constant_volume(0, "delta");
  VolumeConfig theta = constant_volume(0, "theta"), phi = constant_volume(0, "phi");
  // vti, tti: where delta > epsilon (the system grows without bound there), set delta to
  // epsilon instead of refusing the model.
  bool clamp_delta = false;
};

struct BoundaryConfig {
  // Cells, inside the grid, on every face but a free surface. 30 cells with a round-trip
  // attenuation of 0.03 gave the least reflected energy in the scan of docs/BOUNDARY.md.
  int damping_width = 30;
  double reflection = 0.03;   // normal-incidence round-trip amplitude attenuation of the zone
  bool free_surface = false;  // p = 0 at z = 0
};

struct WaveletConfig {
  WaveletType type = WaveletType::ricker;
  double peak_frequency = 10;       // Hz
  std::optional<double> delay;      // s; empty = 1.2 / peak_frequency
  std::string file;                 // HDF5 file (file)
  std::string dataset = "wavelet";  // 1D dataset; optional attribute dt (s) to resample
};

struct SourceConfig {
  WaveletConfig wavelet;
  Interpolation interpolation = Interpolation::trilinear;
  std::vector<std::array<double, 3>> shots;  // m
  // The field record number of the first shot (SEG-Y bytes 9 and 17, /sources/record); the
  // others follow in order: the parts of a survey run one by one keep their numbers apart.
  long long first_record = 1;
};

struct ReceiverLine {
  std::array<double, 3> start{0, 0, 0};
  std::array<double, 3> end{0, 0, 0};
  long long count = 0;
};

struct ReceiverGrid {
  std::array<double, 3> origin{0, 0, 0};
  std::array<double, 2> spacing{0, 0};  // m along x and y
  std::array<long long, 2> count{0, 0};
};

struct ReceiverConfig {
  Interpolation interpolation = Interpolation::trilinear;
  ReceiverLayout layout = ReceiverLayout::none;
  ReceiverLine line;
  ReceiverGrid grid;
  std::vector<std::array<double, 3>> list;
  // line, grid, list: x and y are offsets from each shot's x and y (a towed streamer, a rolling
  // spread: the spread moves with its shot), z as given (a cable depth).
  bool relative = false;
  // per_shot: the spread of each shot, [x, y, z] m, one list a shot of sources.shots.
  std::vector<std::vector<std::array<double, 3>>> per_shot;
};

struct OutputConfig {
  std::string directory = "out";
  // seisrtm run's default; a migration config's is migration_name, so that with both defaults
  // (out/) the image never takes the place of the run's files (seisrtm.h5, seisrtm_shot_*.sgy),
  // nor the run the image's: neither name's files are members of the other's set.
  std::string name = "seisrtm";
  static constexpr const char* migration_name = "seisrtm_migration";
  long long snapshot_interval = 0;  // steps; 0 = no snapshots
  bool traces = true;
  bool model = true;
  bool pictures = true;
  // run: a SEG-Y copy of every shot gather, <name>_shot_NNNN.sgy (io/segy.hpp); migrate: the
  // image as a SEG-Y cube, <name>_image.sgy (io/segy_cube.hpp): none | rev1 | rev2.
  SegyRevision segy = SegyRevision::none;
  // A journal of the finished shots (run) or of the stack (migrate), <name>.resume, so that the
  // same command resumes after a kill; false: none (the disk holds a run's outputs once).
  bool resume = true;
};

struct SolverConfig {
  SolverBackend backend = SolverBackend::automatic;
  int threads = 0;                                // CPU threads; 0 = all
  SolverKernel kernel = SolverKernel::automatic;  // cuda; auto = tma
  int z_block = 32;                               // cuda: planes per block along z; 0 = the whole column
  SolverMemory memory = SolverMemory::plain;      // cuda
  // fp32 | fp16: wavefields and model in 16 bits, arithmetic in fp32 (forward runs of acoustic,
  // vti and tti, acoustic migrations; kernels/acoustic.hpp, Storage; the CPU backend emulates it,
  // validation/half.hpp).
  SolverStorage storage = SolverStorage::fp32;
  bool graphs = true;  // cuda: time loop as CUDA graphs
  int device = 0;      // cuda: the CUDA device index (CUDA_VISIBLE_DEVICES applies)
  // Under mpirun: none = shots across ranks; z = every shot over all ranks, the grid split into
  // z slabs (solver/decomposition.hpp).
  Decomposition decomposition = Decomposition::none;
};

// Direct-arrival mute of the observed data: zero above t = offset / velocity + t0 - taper, a
// cosine ramp up to t = offset / velocity + t0, untouched below.
struct MuteConfig {
  bool enabled = false;
  double velocity = 0;          // m/s
  std::optional<double> t0;     // s; empty = auto: twice the peak time of the source wavelet
  std::optional<double> taper;  // s; empty = auto: half the peak time of the source wavelet
};

// Common-image gathers (solver/image_gathers.hpp): subsurface-offset gathers at every x_every-th
// x and y_every-th y cell of the imaged box, for half-offsets -offsets..offsets cells along x,
// and angle gathers from them at 0, angle_step, ... up to max_angle degrees.
struct GathersConfig {
  long long offsets = 0;  // H in cells; 0: no gathers
  long long x_every = 10, y_every = 1;
  double max_angle = 60, angle_step = 2;  // degrees
  bool enabled() const { return offsets > 0; }
};

// Trace header bytes (1-based, the first byte of a standard field) that carry the geometry of
// SEG-Y data; defaults from SEG-Y rev 1/2. Surveys that keep a value elsewhere move it here.
struct SegyHeaderConfig {
  int shot = 9;  // field record number: traces are grouped into shots by it
  int source_x = 73, source_y = 77;
  int source_depth = 49;      // source depth below the surface, positive down
  int source_elevation = 45;  // surface elevation at the source
  int receiver_x = 81, receiver_y = 85;
  int receiver_elevation = 41;  // receiver group elevation (z = -elevation)
  int coordinate_scalar = 71;   // applies to x and y
  int elevation_scalar = 69;    // applies to elevations and depths
};

// Reverse-time migration (seisrtm migrate): present only in migration configs.
struct MigrationConfig {
  std::string data;                              // HDF5 file written by seisrtm run (traces, positions, dt)
  MigrationMode mode = MigrationMode::boundary;  // how the source field is rebuilt
  // Steps between imaging time levels; 0 = auto: the largest k with 1 / (k dt) > 2 f_max (the
  // zero-lag sum of S R is then the same as at every step, up to the wavelet's band limit).
  long long image_interval = 0;
  double illumination_epsilon = 1e-3;  // stabiliser, fraction of the largest illumination
  MuteConfig mute;
  // Data filter (-i w)^alpha before back-propagation (docs/ADJOINT.md): the correlation image
  // of an areal spread is rotated by 90 degrees in phase (derivative, alpha = 1, undoes it),
  // of a line by 45 (half_derivative, alpha = 1/2). auto picks by the receivers' spread.
  DataFilter data_filter = DataFilter::automatic;
  std::optional<double> depth_slice;  // m; empty = auto: the depth of the strongest image
  // GPU, tma, space order <= 8: one fused kernel per backward step (both fields and imaging);
  // false: separate kernels; auto: fused in fp32 storage (io/config_enums.hpp, FusedStep). With
  // image_interval auto (imaging every k-th step) the fused step is the faster in fp32; with
  // imaging every step the slower (docs/BENCHMARKS.md, "RTM").
  FusedStep fused = FusedStep::automatic;
  // What the image sums (io/config_enums.hpp); isic: acoustic, boundary mode.
  ImagingCondition imaging_condition = ImagingCondition::correlation;
  // GPU, boundary mode: where the boundary store lives. auto: on the device when it fits, else
  // in pinned host memory (copied through a ring of device slots while the passes run).
  StoreLocation store = StoreLocation::automatic;
  // Boundary mode: the shells of all N - 2 saved levels (store, N shells: 6000-8000 steps at
  // 800^3 do not fit), or checkpoints of the full state every checkpoint_interval levels and one
  // segment's shells at a time, re-run from its checkpoint (checkpoint: ceil(N / K) states + K
  // shells + one more wave, about one more forward pass; the same image bit for bit). auto:
  // the store where it fits (GPU: the device or the host), else checkpoints.
  Reconstruction reconstruction = Reconstruction::automatic;
  // The boundary store's element in fp32 storage: fp32, or bf16 / fp16 (half the bytes a level).
  StorePrecision store_precision = StorePrecision::fp32;
  // checkpoint: levels between checkpoints (K); 0 = auto: the K with the fewest bytes held,
  // about sqrt(N state / shell) (solver/rtm_schedule.hpp, auto_checkpoint_interval).
  long long checkpoint_interval = 0;
  // checkpoint: levels between the group checkpoints of two levels (K1, rounded down to a
  // multiple of K; below 2 K: one level); 0 = auto: one level where its checkpoints fit the host
  // (the CPU: always), else the K1 with the fewest (solver/rtm_schedule.hpp, CheckpointPlan).
  long long coarse_checkpoint_interval = 0;
  // checkpoint, GPU: where the checkpoints go (io/config_enums.hpp) and the directory of those
  // on disk (empty: none; required for disk).
  CheckpointLocation checkpoint_location = CheckpointLocation::automatic;
  std::string checkpoint_directory;
  // SEG-Y data (migration.data ends in .sgy or .segy, a glob allowed): where the geometry is in
  // the trace headers, and the source wavelet, which SEG-Y does not carry (required then).
  SegyHeaderConfig segy_headers;
  std::optional<WaveletConfig> wavelet;
  GathersConfig gathers;
};

// Plausibility checks that refuse a run before it starts; each can be switched off for the rare
// real case outside them (solver/problem.cpp, check_physical_ranges).
struct ChecksConfig {
  // model.vp within [100, 10000] m/s, and at least 2 grid points per wavelength at the
  // wavelet's highest useful frequency. false: both become warnings.
  bool physical_ranges = true;
};

struct Config {
  GridConfig grid;
  TimeConfig time;
  PhysicsConfig physics;
  ModelConfig model;
  BoundaryConfig boundary;
  SourceConfig sources;
  ReceiverConfig receivers;
  OutputConfig output;
  SolverConfig solver;
  ChecksConfig checks;
  std::optional<MigrationConfig> migration;  // migration configs only
  std::string source_file;                   // the YAML file this came from (not part of the schema)
};

// Parses and checks a config file, applying `key.path=value` overrides first.
// Throws seisrtm::Error naming the key or file on any problem.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
Config parse_config(const std::string& yaml_text, const std::vector<std::string>& overrides = {},
                    const std::string& origin = "<string>");
// The resolved configuration, defaults included, as YAML.
std::string to_yaml(const Config& c);

}  // namespace seisrtm
