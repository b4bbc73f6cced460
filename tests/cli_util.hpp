#pragma once
// Helpers of the [integration] tests that run the seisrtm binary (test_cli, test_cli_migrate):
// run it and capture what it prints and its exit code, make scratch directories, write files.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace seisrtm::test {

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr
};

// Runs SEISRTM_BINARY (the path tests/CMakeLists.txt defines) with `args`; -1 as the code when
// it did not exit normally.
inline Result run_cli(const std::string& args) {
  const std::string cmd = std::string(SEISRTM_BINARY) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
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

}  // namespace seisrtm::test
