#pragma once
// Parts of a survey (docs/guide/migrate.md "Parts of a survey"). `migrate --shots` migrates some
// of the data's shots; its file keeps, beside the images of those shots, their exact stack:
//
//   /stack/image, /stack/illumination   [z, y, x, word]  int64: the 128-bit sums
//                                       (exact_stack.hpp), low word first, two's complement
//   /stack/shots                        [part_shot]      int64: the shots in the sums
//   attributes of /stack                identity (text: what parts must share to add up),
//                                       exponents (int64 [image, illumination]: the grid)
//
// `seisrtm stack` adds parts exactly: the same bits as one migration of all their shots,
// whatever the split, the ranks, the order.
#include <hdf5.h>

#include <string>
#include <vector>

#include "solver/exact_stack.hpp"
#include "solver/migration.hpp"

namespace seisrtm {

// What parts must share: the resolved config but where files go and come from (output.*,
// migration.data's path) and the solver keys that keep a shot's bits (backend, which comes from
// the migrator, threads, device, memory, graphs, decomposition); the backend as resolved with
// its kernel (the migrator's name up to its settings: "cpu", "cuda tma"); a hash of the data as
// migrated (every shot's traces after filter and mute).
std::string stack_identity(const MigrationInput& in, const std::string& migrator);

void write_stack_part(hid_t root, const MigrationInput& in, const ExactStack& stack,
                      const std::vector<long long>& shots, const std::string& migrator);

// The parts' exact stacks added, for `in`'s survey. Refuses (Error naming the files) a file
// that is not a part, parts whose identity differs from `in`'s (naming the first difference),
// and parts that share a shot (naming it). `shots` receives the union, sorted; `migrator` the
// parts' migrator.
ExactStack sum_parts(const MigrationInput& in, const std::vector<std::string>& files, std::vector<long long>& shots,
                     std::string& migrator);

// The journal of a migration in progress, `<directory>/<name>.resume` beside its outputs: the
// exact stack of the shots added so far and those shots, with the identity of the migration
// (stack_identity). Written whole under a temporary name, flushed to the disk and renamed over
// the last (then the directory flushed): a kill at any moment leaves the last journal or the one
// before, never part of one. `migrate` run again reads it and migrates only the shots not in it:
// the exact stack makes the image bit for bit the one of a run never stopped. Removed once the
// outputs are committed. Format (little-endian): "seisrtm resume 1\n", the identity's length
// (8 bytes) and text, the exponents, cells, shot count and shots (8 bytes each), the image's and
// the illumination's sums (16 bytes a cell), a checksum of all of it (8 bytes: FNV-1a over 64-bit words).
class ResumeJournal {
 public:
  ResumeJournal(std::string path, std::string identity);
  const std::string& path() const { return path_; }
  // The stack and shots of an earlier journal into `stack` (made for the grid) and `shots`;
  // false when there is none. Error naming the file for a journal that is damaged, and naming
  // the first difference for one of another migration's settings or data.
  bool load(ExactStack& stack, std::vector<long long>& shots) const;
  // Due after each added shot while saving takes at most 1/20 of the time between saves.
  bool due() const;
  void save(const ExactStack& stack, const std::vector<long long>& shots);
  void remove() const;

 private:
  std::string path_, identity_;
  double last_end_ = -1, last_seconds_ = 0;  // s (steady clock)
};

// --shots: comma-separated shot indices and ranges A:B (A to B-1), A: (to the last) and :B,
// 0-based, of a survey of `count` shots; sorted, each once. Error naming --shots otherwise.
std::vector<long long> parse_shot_list(const std::string& text, long long count);

}  // namespace seisrtm
