#pragma once
// Reverse-time migration (DESIGN.md section 4, docs/ADJOINT.md): observed data and a smooth
// model in, a depth image out. Per shot: a forward pass of the source field that keeps what
// the backward pass needs (boundary planes or snapshots), then a backward pass that rebuilds
// the source field S in reverse time while the adjoint receiver field R is driven by the
// time-reversed data, and images I += S R, illumination += S^2. Shots stack.
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "io/output_file.hpp"
#include "solver/exact_stack.hpp"
#include "solver/image_gathers.hpp"
#include "solver/problem.hpp"
#include "solver/survey.hpp"

namespace seisrtm {

// The cells outside the damping zone (damping s = 0): where the source field can be run
// backwards exactly and where the image is formed.
CellBox interior_box(const Problem& pb);
// The interior less R cells on every face that borders a damping zone: the cells a backward
// step computes; the R-thick shell between the two is restored from the boundary store.
CellBox inner_box(const Problem& pb);
// Where the backward pass's source field is rebuilt, the cells the image's gradients may read
// (isic): the whole grid's interior box; for a z slab of it, that box in the slab's z, its
// neighbours' planes (halo, exchanged after every step) included.
struct Slab;
CellBox rebuilt_box(const Problem& global, const Slab* slab = nullptr);
// migration.imaging_condition isic with the other keys, on any backend: the acoustic equation,
// migration.mode boundary (the source field's two rebuilt levels give its time derivative), no
// gathers (they are cross-correlations). Throws naming the keys.
void check_imaging_condition(const MigrationConfig& mc, Equation equation);
// The layout of the image gathers of migration.gathers over the interior box (empty: none).
GatherLayout gather_layout(const Problem& pb);
// The angles of the angle gathers (degrees): i angle_step for i = 0, 1, ... up to max_angle.
std::vector<double> gather_angles(const GathersConfig& gc);
// Host bytes of the image gathers of migration.gathers: 4 an offset gathers' value for a shot's,
// 16 for the exact stack, 8 for a shot waiting and one being added, 4 for the rounded gathers
// (32); and 4 an angle gathers' value.
double gather_host_bytes(const Problem& pb);
// The values of a volume (x fastest) inside a box, x fastest.
std::vector<float> extract_box(const Grid& g, const CellBox& box, const float* volume);

// The problem and the data of a migration, everything at the migration's dt.
struct MigrationInput {
  Problem problem;            // shots and receivers from the data file, its wavelet resampled
  std::vector<float> traces;  // [shot][receiver][step]; sample n at t = (n + 1) dt; muted
  std::string data_file;
  double data_dt = 0;  // s
  long long data_samples = 0;
  long long muted_samples = 0;                // samples zeroed by the mute (all traces)
  long long live_samples = 0;                 // samples of the receivers' rows (not a spread's padding)
  DataFilter data_filter = DataFilter::none;  // as applied: never automatic
  double f_max = 0;                           // Hz, highest useful frequency of the data's wavelet
};

// What data_filter auto means for a receiver spread: derivative when the spread's smaller
// horizontal extent along its principal axes (the square root of the smaller eigenvalue of the
// x-y covariance) is at least half the larger (an area), half_derivative for a line or a narrow
// swath in any direction, none for a single point.
DataFilter resolve_data_filter(DataFilter key, const std::vector<std::array<double, 3>>& receivers);

// Reads and checks the data file of c.migration, builds the problem (sources and receivers
// from the file, steps = the record length when time.steps is auto), resamples traces and
// wavelet to the problem's dt and applies the mute. Throws Error naming file/dataset/key.
// `check_memory` (optional) runs once the problem and the data's shape are known and before
// the traces are read: the place to refuse a run that does not fit.
// What migration.data declares, read before its traces: for the plan and its refusals.
struct DataShape {
  std::string file;  // migration.data as given (a SEG-Y glob included)
  long long shots = 0, receivers = 0, samples = 0;
  double dt = 0;  // s, the data's sample interval
  // "data file 'f' (2 shots x 12 receivers x 200 samples of 0.002 s)"
  std::string describe() const;
};
using MemoryCheck = std::function<void(const Problem& problem, const DataShape& data)>;
MigrationInput prepare_migration(const Config& c, const MemoryCheck& check_memory = {});

// Direct-arrival mute weight at time t for a trace at `offset` m (MuteConfig).
double mute_weight(double t, double offset, double velocity, double t0, double taper);

// Host memory of a CPU migration, bytes.
struct MigrationPlan {
  MigrationMode mode = MigrationMode::boundary;
  double volume_bytes = 0;   // one float volume
  double volumes_bytes = 0;  // model, two wavefield pairs, image, illumination, outputs
  double data_bytes = 0;     // observed data at both sample rates
  double store_bytes = 0;    // boundary store (p, or p and q for vti and tti) or snapshots, one shot
  double total_bytes = 0;
  double available_bytes = 0;  // MemAvailable
  long long max_steps = 0;     // the most steps whose store would fit
  std::string describe() const;
};
// The plan for the data file's `data`; when it does not fit, throws Error naming the data file,
// its shape and dt, the numbers, and the record length that would fit (or, when not even two
// steps do, what else to shrink).
MigrationPlan plan_migration(const Problem& pb, const DataShape& data, double available_bytes);
// MemAvailable of /proc/meminfo in bytes (0 when unknown).
double available_host_memory();

class Migrator {
 public:
  virtual ~Migrator() = default;
  virtual std::string name() const = 0;
  // Reports the current pass ("forward", "backward") and the steps done in it.
  using Progress = std::function<void(const std::string& pass, long long done)>;
  // Migrates one shot: `data` is [receiver][step] at the problem's dt; adds sum S R to `image`
  // and sum S^2 to `illumination` over the imaging time levels (every image_interval steps),
  // inside interior_box only.
  virtual void migrate_shot(long long shot, const float* data, float* image, float* illumination,
                            const Progress& progress) = 0;
  // A backend that can keep the stack itself (the GPU: no copy of two volumes per shot)
  // returns true; until take_stack, migrate_shot then adds to that stack and ignores its image
  // and illumination arguments. take_stack writes the stack into image and illumination.
  virtual bool begin_stack() { return false; }
  virtual void take_stack(float* /*image*/, float* /*illumination*/) {}
  // Ends a stack begun by begin_stack without taking it (the ranks agreed on no own stacks).
  virtual void drop_stack() {}
  // Image gathers (migration.gathers, solver/image_gathers.hpp): where the next migrate_shot
  // adds its shot's subsurface-offset gathers, gather_layout(problem).values() floats in that
  // layout; null (the default): none. A migrator that cannot form them refuses in its constructor.
  void gathers_into(float* gathers) { gathers_ = gathers; }

 protected:
  float* gathers_ = nullptr;
};

// The three images of a stack: correlation (sum S R), normalised by the illumination
// (I / (sum S^2 + eps max sum S^2)) and Laplacian-filtered (-lap of the normalised image).
struct Images {
  std::vector<float> correlation, illumination, normalized, laplacian;
};
Images finish_images(const Problem& pb, std::vector<float> correlation, std::vector<float> illumination,
                     double epsilon);

// Migrates `shots` (in that order) into an exact stack (exact_stack.hpp) on rank 0 (empty on the
// other ranks): each shot images into zeroed volumes that are then added, so the stack is the
// same bits whichever shots run where, in whatever order or parts. `seconds`: all passes.
class ResumeJournal;
// A migration resumed from its journal (rank 0): the journal's stack and shots, and the journal
// that stack_shots saves to after each shot it adds (where due).
struct StackResume {
  ExactStack stack;  // the journal's, or zeroed without one (empty: stack_shots makes one)
  std::vector<long long> shots;
  ResumeJournal* journal = nullptr;
};
ExactStack stack_shots(const MigrationInput& in, Migrator& migrator, bool quiet, const std::vector<long long>& shots,
                       double& seconds, StackResume* resume = nullptr);
// Every shot, the stack rounded to float (image and illumination). Returns the seconds.
double stack_shots(const MigrationInput& in, Migrator& migrator, bool quiet, std::vector<float>& image,
                   std::vector<float>& illumination);

struct MigrationSummary {
  std::string h5_path, xdmf_path, segy_path;  // segy_path: the image cube (output.segy), or empty
  std::vector<std::string> pictures;          // and the other files of the set (the gathers' SEG-Y)
  double seconds = 0;                         // all passes of all shots
  double depth_slice = 0;                     // m
  double wall_seconds = 0;                    // the shots from the first to the last stacked, on every rank
};

// Migrates every shot, stacks, writes <name>.h5 (images, illumination, model, config), the
// XDMF sidecar, PNG slices and (output.segy) the image as a SEG-Y cube <name>_image.sgy, all
// under temporary names until complete.
// options.shots: a part of the survey, whose file also holds its exact stack (stack_parts.hpp).
MigrationSummary migrate_survey(const MigrationInput& in, Migrator& migrator, const RunOptions& options);
// The end of migrate_survey, shared with `seisrtm stack`: the stack rounded, the images, the
// file (with the part's exact stack unless `shots` is every shot), pictures, SEG-Y cube, XDMF,
// committed as a set. sum.seconds is written to the file; paths and the depth slice go to sum.
void write_migration(io::OutputSet& set, const MigrationInput& in, const ExactStack& stack,
                     const std::vector<long long>& shots, const std::string& producer, const std::string& migrator,
                     MigrationSummary& sum);
std::vector<long long> all_shots(const Problem& pb);

}  // namespace seisrtm
