// seisrtm_config_reference: writes docs/CONFIG.md, the configuration reference, from the key table
// (io/config_keys.cpp) to stdout; with --check FILE, exits 1 with a message when FILE differs.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "io/config_keys.hpp"

int main(int argc, char** argv) {
  const std::string text = seisrtm::config_reference_markdown();
  if (argc == 1) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (argc != 3 || std::strcmp(argv[1], "--check") != 0) {
    std::fprintf(stderr, "usage: %s [--check docs/CONFIG.md]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::ostringstream file;
  file << in.rdbuf();
  if (in && file.str() == text) return 0;
  std::fprintf(stderr,
               "%s is not the reference the key table (io/config_keys.cpp) generates; regenerate it with\n"
               "  %s > %s\n",
               argv[2], argv[0], argv[2]);
  return 1;
}
