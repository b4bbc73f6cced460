#pragma once
// Shared code of the [integration] tests that run the seisrtm binary (test_cli, test_cli_migrate):
// run it and capture what it prints and its exit code, make scratch directories, write files.
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/catch.hpp"

namespace seisrtm::test {

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr
};

// Runs the shell command `cmd` (stderr into the output); -1 as the code when it did not exit
// normally.
inline Result run_shell(const std::string& cmd) {
  Result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs SEISRTM_BINARY (the path tests/CMakeLists.txt defines) with `args`.
inline Result run_cli(const std::string& args) {
  return run_shell(std::string(SEISRTM_BINARY) + " " + args);
}

// The whole of dataset `name` of an HDF5 file as floats.
inline std::vector<float> read_dataset(const std::string& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t s = H5Dget_space(d);
  std::vector<float> v(static_cast<size_t>(H5Sget_simple_extent_npoints(s)));
  REQUIRE(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

// An empty directory `prefix` + `name` in the system's temporary directory, emptied first if it
// is there from an earlier run.
inline std::filesystem::path fresh_dir(const std::string& prefix, const std::string& name) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() / (prefix + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// Writes `text` to `file`; returns the file's path.
inline std::string write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file) << text;
  return file.string();
}

// A seisrtm process started in the background (test_faults): its pid and what it prints
// (stdout and stderr), read line by line.
struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
};

struct SpawnOptions {
  // Bytes; >= 0: RLIMIT_FSIZE with SIGXFSZ ignored, so a write past it fails with EFBIG (a
  // full disk, without root).
  long long file_size_limit = -1;
  std::vector<std::pair<std::string, std::string>> env;  // set in the child only
};

// Starts SEISRTM_BINARY with `args`, each one argument as given (no shell).
inline Child spawn_cli(const std::vector<std::string>& args, const SpawnOptions& o = {}) {
  int fd[2];
  REQUIRE(pipe(fd) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[0]);
    close(fd[1]);
    if (o.file_size_limit >= 0) {
      signal(SIGXFSZ, SIG_IGN);  // an ignored disposition survives exec
      const rlimit r{rlim_t(o.file_size_limit), rlim_t(o.file_size_limit)};
      setrlimit(RLIMIT_FSIZE, &r);
    }
    for (const auto& [k, v] : o.env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(SEISRTM_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(SEISRTM_BINARY, argv.data());
    _exit(127);
  }
  close(fd[1]);
  return {pid, fdopen(fd[0], "r")};
}

// Reads lines of `c` until one contains `needle` (true) or the output ends (false); the lines
// read are appended to `seen`.
inline bool read_until(Child& c, const std::string& needle, std::string& seen) {
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), c.out)) {
    seen += buf.data();
    if (std::string(buf.data()).find(needle) != std::string::npos) return true;
  }
  return false;
}

// Reads the rest of what `c` prints and waits for it; -1 as the code when it did not exit
// normally (killed by a signal).
inline Result wait_cli(Child& c, std::string seen = {}) {
  Result r;
  r.output = std::move(seen);
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), c.out)) r.output += buf.data();
  fclose(c.out);
  int status = 0;
  waitpid(c.pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// An HDF5 file whose dataset `name` declares `dims` (chunked, nothing written: a few KiB on
// disk whatever it declares); dt > 0: with the attribute dt (s), as a wavelet file carries it.
inline std::string write_declared(const std::filesystem::path& file, const std::string& name,
                                  const std::vector<hsize_t>& dims, double dt = 0) {
  const hid_t f = H5Fcreate(file.string().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t s = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t p = H5Pcreate(H5P_DATASET_CREATE);
  const std::vector<hsize_t> chunk(dims.size(), 1);
  H5Pset_chunk(p, static_cast<int>(dims.size()), chunk.data());
  const hid_t d = H5Dcreate2(f, name.c_str(), H5T_IEEE_F32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
  REQUIRE(d >= 0);
  if (dt > 0) {
    const hid_t as = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(d, "dt", H5T_NATIVE_DOUBLE, as, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(a >= 0);
    H5Awrite(a, H5T_NATIVE_DOUBLE, &dt);
    H5Aclose(a);
    H5Sclose(as);
  }
  H5Dclose(d);
  H5Pclose(p);
  H5Sclose(s);
  H5Fclose(f);
  REQUIRE(std::filesystem::file_size(file) < 64 * 1024);
  return file.string();
}

// The regular files of `dir` by name: inode (a rename over the name changes it) and bytes.
inline std::map<std::string, std::pair<ino_t, std::string>> files_of(const std::filesystem::path& dir) {
  std::map<std::string, std::pair<ino_t, std::string>> m;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    struct stat st {};
    stat(e.path().c_str(), &st);
    std::ifstream f(e.path(), std::ios::binary);
    m[e.path().filename().string()] = {st.st_ino, std::string(std::istreambuf_iterator<char>(f), {})};
  }
  return m;
}

// Temporaries of any run: <final>.<pid>.<random>.partial.
inline std::vector<std::string> temporaries(const std::filesystem::path& dir) {
  std::vector<std::string> v;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".partial") != std::string::npos) v.push_back(e.path().filename());
  return v;
}

}  // namespace seisrtm::test
