#pragma once
// A SEG-Y file opened with segyio, every call checked (test_segy, test_segy_cube): headers,
// samples and the textual header read back; trace and binary header fields set in place.
#include <segyio/segy.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/catch.hpp"

namespace seisrtm::test {

struct Segy {
  segy_file* f = nullptr;
  char bin[SEGY_BINARY_HEADER_SIZE] = {};
  int samples = 0, trsize = 0, traces = 0;
  long trace0 = 0;
  explicit Segy(const std::string& path, const char* mode = "rb") {
    f = segy_open(path.c_str(), mode);
    REQUIRE(f != nullptr);
    REQUIRE(segy_binheader(f, bin) == SEGY_OK);
    samples = segy_samples(bin);
    trace0 = segy_trace0(bin);
    trsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, samples);
    REQUIRE(segy_set_format(f, SEGY_IEEE_FLOAT_4_BYTE) == SEGY_OK);
    REQUIRE(segy_traces(f, &traces, trace0, trsize) == SEGY_OK);
  }
  Segy(const Segy&) = delete;
  Segy& operator=(const Segy&) = delete;
  ~Segy() { segy_close(f); }
  int bfield(int field) const {
    int32_t v = 0;
    REQUIRE(segy_get_bfield(bin, field, &v) == SEGY_OK);
    return v;
  }
  std::vector<char> header(int i) {
    std::vector<char> h(SEGY_TRACE_HEADER_SIZE);
    REQUIRE(segy_traceheader(f, i, h.data(), trace0, trsize) == SEGY_OK);
    return h;
  }
  static int field(const std::vector<char>& h, int byte) {
    int32_t v = 0;
    REQUIRE(segy_get_field(h.data(), byte, &v) == SEGY_OK);
    return v;
  }
  // Sets one trace header field of trace i (a file opened "r+b").
  void set(int i, int byte, int value) {
    auto h = header(i);
    REQUIRE(segy_set_field(h.data(), byte, value) == SEGY_OK);
    REQUIRE(segy_write_traceheader(f, i, h.data(), trace0, trsize) == SEGY_OK);
  }
  void set_binary(int byte, int value) {
    REQUIRE(segy_set_bfield(bin, byte, value) == SEGY_OK);
    REQUIRE(segy_write_binheader(f, bin) == SEGY_OK);
  }
  std::vector<float> trace(int i) {
    std::vector<float> v(static_cast<size_t>(samples));
    REQUIRE(segy_readtrace(f, i, v.data(), trace0, trsize) == SEGY_OK);
    REQUIRE(segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, samples, v.data()) == SEGY_OK);
    return v;
  }
  std::string text() {
    std::vector<char> t(SEGY_TEXT_HEADER_SIZE + 1);
    REQUIRE(segy_read_textheader(f, t.data()) == SEGY_OK);
    return std::string(t.data(), SEGY_TEXT_HEADER_SIZE);
  }
};

}  // namespace seisrtm::test
