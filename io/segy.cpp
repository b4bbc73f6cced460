#include "io/segy.hpp"

#include <glob.h>
#include <segyio/segy.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "base/error.hpp"
#include "io/output_file.hpp"
#include "io/segy_header.hpp"

namespace seisrtm::io {

namespace fs = std::filesystem;
using namespace segy;  // io/segy_header.hpp

namespace {

// The standard trace header fields (first bytes) that segyio reads and writes.
std::vector<int> trace_fields() {
  std::vector<int> v;
  char h[kTrace] = {};
  for (int b = 1; b <= kTrace; ++b) {
    int32_t x = 0;
    if (segy_get_field(h, b, &x) == SEGY_OK) v.push_back(b);
  }
  return v;
}

uint64_t get_raw(const unsigned char* p, int bytes, bool lsb) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[lsb ? bytes - 1 - i : i];
  return v;
}

bool valid_scalar(int s) {
  for (int v : {0, 1, 10, 100, 1000, 10000})
    if (s == v || s == -v) return true;
  return false;
}

std::string exact_dt_key() {
  return "EXACT SAMPLE INTERVAL DT = ";
}

}  // namespace

long long segy_max_samples(int revision) {
  return revision == 1 ? 32767 : 65535;
}

bool is_segy_trace_field(int byte) {
  const auto v = trace_fields();
  return std::find(v.begin(), v.end(), byte) != v.end();
}

std::string segy_trace_fields_text() {
  std::string s;
  for (int b : trace_fields()) s += (s.empty() ? "" : ", ") + std::to_string(b);
  return s;
}

SegyRun plan_segy(int revision, double dt, long long steps, const std::vector<std::array<double, 3>>& sources,
                  const std::vector<std::array<double, 3>>& receivers) {
  const std::string key = "output.segy: rev" + std::to_string(revision);
  if (receivers.empty())
    throw Error("config key '" + key +
                "' needs receivers (receivers.line, .grid or .list): a SEG-Y file holds "
                "their traces");
  if (steps + 1 > segy_max_samples(revision))
    throw Error("config key '" + key + "': " + std::to_string(steps + 1) + " samples a trace exceed the " +
                std::to_string(segy_max_samples(revision)) + " of a 16-bit count; lower time.steps");
  // The binary header's interval is a whole number of microseconds, 16 bits.
  const double us = std::round(dt * 1e6);
  if (us < 1 || us > double(segy_max_samples(revision)))
    throw Error("config key '" + key + "': dt = " + fmt(dt) + " s is " + fmt(dt * 1e6) + " us, outside the 1 to " +
                std::to_string(segy_max_samples(revision)) +
                " us a SEG-Y sample interval holds; set time.dt or output.segy: none");
  SegyRun r;
  r.revision = revision;
  r.dt = dt;
  r.steps = steps;
  r.shots = static_cast<long long>(sources.size());
  std::vector<double> xy, z;
  for (const auto* set : {&sources, &receivers})
    for (const auto& p : *set) {
      xy.push_back(p[0]);
      xy.push_back(p[1]);
      z.push_back(p[2]);
    }
  // Offsets are whole metres (bytes 37-40 have no scalar): checked to fit as well.
  const int kc = scalar_exponent(xy), kz = scalar_exponent(z);
  if (kc < 0 || kz < 0)
    throw Error("config key '" + key +
                "': a source or receiver coordinate exceeds the 32-bit range of the "
                "SEG-Y position fields (2147483647 m)");
  r.coordinate_scalar = scalar_of(kc);
  r.elevation_scalar = scalar_of(kz);
  return r;
}

void write_segy_shot(const std::string& path, const SegyRun& run, long long shot, const std::array<double, 3>& src,
                     const std::vector<std::array<double, 3>>& receivers, const float* traces) {
  const std::string shown = shown_name(path);
  const long long ns = run.steps + 1;  // t = 0, then the run's samples
  const int us = static_cast<int>(std::lround(run.dt * 1e6));
  auto fail = [&](const std::string& what) {
    throw Error("writing SEG-Y file '" + shown + "' failed: " + what + write_failure_reason());
  };
  Handle f(segy_open(path.c_str(), "w+b"));
  if (!f) fail("cannot create it");

  char dtbuf[40];
  std::snprintf(dtbuf, sizeof dtbuf, "%.17g", run.dt);
  const std::string rev = run.revision == 1 ? "1" : "2.0";
  std::vector<std::string> lines = {
      run.producer + ": synthetic shot gather, acoustic finite differences",
      "config " + run.config_file,
      "shot " + std::to_string(shot) + " (0-based) of " + std::to_string(run.shots) +
          "; field record (9) = " + std::to_string(run.first_record + shot),
      "grid " + std::to_string(run.shape[0]) + " x " + std::to_string(run.shape[1]) + " x " +
          std::to_string(run.shape[2]) + " cells, spacing " + fmt(run.spacing[0]) + " " + fmt(run.spacing[1]) + " " +
          fmt(run.spacing[2]) + " m",
      "grid origin (survey x y z of cell 0) " + fmt(run.origin[0]) + " " + fmt(run.origin[1]) + " " +
          fmt(run.origin[2]) + " m",
      "units: m, s (headers: us, ms); samples: pressure p, in the wavelet's units",
      exact_dt_key() + dtbuf + " S",
      "binary header 3217, trace 117: " + std::to_string(us) + " us (dt rounded to the nearest us)",
      std::to_string(ns) + " samples: sample k at t = k dt, delay (109) 0; sample 0 (t = 0) is zero",
      "format 5 (IEEE float, big-endian), fixed-length traces, one shot a file",
      "source: " + run.wavelet,
      "x, y: source 73/77, receiver 81/85, scalar 71: " + scalar_text(run.coordinate_scalar),
      "z down: source depth 49, receiver elevation 41 = -z, scalar 69: " + scalar_text(run.elevation_scalar),
      "offset (37): horizontal distance, m, rounded; < 0 for receiver x < source x",
      "channel (13) = receiver + 1; trace id (29) = 1; coord. units (89) = 1 (m)",
  };
  std::string text = text_header(lines, run.revision);
  if (segy_write_textheader(f.get(), 0, text.data()) != SEGY_OK) fail("textual header");

  char bin[kBin] = {};
  auto bset = [&](int field, int v) {
    if (segy_set_bfield(bin, field, v) != SEGY_OK) fail("binary header field " + std::to_string(field));
  };
  const int nrec = static_cast<int>(receivers.size());
  bset(SEGY_BIN_JOB_ID, 1);
  bset(SEGY_BIN_LINE_NUMBER, 1);
  bset(SEGY_BIN_REEL_NUMBER, 1);
  bset(SEGY_BIN_TRACES, std::min(nrec, 32767));
  bset(SEGY_BIN_INTERVAL, us);
  bset(SEGY_BIN_INTERVAL_ORIG, us);
  bset(SEGY_BIN_SAMPLES, static_cast<int>(ns));
  bset(SEGY_BIN_SAMPLES_ORIG, static_cast<int>(ns));
  bset(SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
  bset(SEGY_BIN_ENSEMBLE_FOLD, std::min(nrec, 32767));
  bset(SEGY_BIN_SORTING_CODE, 1);        // as recorded
  bset(SEGY_BIN_MEASUREMENT_SYSTEM, 1);  // metres
  bset(SEGY_BIN_SEGY_REVISION, run.revision == 1 ? 0x0100 : 0x0200);
  bset(SEGY_BIN_TRACE_FLAG, 1);  // fixed length
  bset(SEGY_BIN_EXT_HEADERS, 0);
  if (run.revision == 2) {
    put_rev2_fields(bin, nrec, ns, run.dt * 1e6, nrec);  // (the interval in us; one shot a file)
  }
  if (segy_write_binheader(f.get(), bin) != SEGY_OK) fail("binary header");

  const int trsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, static_cast<int>(ns));
  std::vector<float> buf(static_cast<size_t>(ns));
  for (int r = 0; r < nrec; ++r) {
    char h[kTrace] = {};
    auto set = [&](int field, long long v) {
      if (v < INT32_MIN || v > INT32_MAX || segy_set_field(h, field, static_cast<int32_t>(v)) != SEGY_OK)
        fail("trace " + std::to_string(r + 1) + " header byte " + std::to_string(field) + " = " + std::to_string(v));
    };
    const auto& p = receivers[r];
    const double dx = p[0] - src[0], dy = p[1] - src[1];
    const double off = std::hypot(dx, dy) * ((dx < 0 || (dx == 0 && dy < 0)) ? -1 : 1);
    set(SEGY_TR_SEQ_LINE, r + 1);
    set(SEGY_TR_SEQ_FILE, r + 1);
    set(SEGY_TR_FIELD_RECORD, run.first_record + shot);
    set(SEGY_TR_NUMBER_ORIG_FIELD, r + 1);
    set(SEGY_TR_ENERGY_SOURCE_POINT, run.first_record + shot);
    set(SEGY_TR_TRACE_ID, 1);  // seismic data
    set(SEGY_TR_SUMMED_TRACES, 1);
    set(SEGY_TR_STACKED_TRACES, 1);
    set(SEGY_TR_DATA_USE, 1);
    set(SEGY_TR_OFFSET, std::llround(off));
    set(SEGY_TR_RECV_GROUP_ELEV, scaled(-p[2], run.elevation_scalar));
    set(SEGY_TR_SOURCE_SURF_ELEV, 0);
    set(SEGY_TR_SOURCE_DEPTH, scaled(src[2], run.elevation_scalar));
    set(SEGY_TR_ELEV_SCALAR, run.elevation_scalar);
    set(SEGY_TR_SOURCE_GROUP_SCALAR, run.coordinate_scalar);
    set(SEGY_TR_SOURCE_X, scaled(src[0], run.coordinate_scalar));
    set(SEGY_TR_SOURCE_Y, scaled(src[1], run.coordinate_scalar));
    set(SEGY_TR_GROUP_X, scaled(p[0], run.coordinate_scalar));
    set(SEGY_TR_GROUP_Y, scaled(p[1], run.coordinate_scalar));
    set(SEGY_TR_COORD_UNITS, 1);  // length (m)
    set(SEGY_TR_DELAY_REC_TIME, 0);
    set(SEGY_TR_SAMPLE_COUNT, ns);
    set(SEGY_TR_SAMPLE_INTER, us);
    if (segy_write_traceheader(f.get(), r, h, kTrace0, trsize) != SEGY_OK)
      fail("trace header " + std::to_string(r + 1));
    buf[0] = 0.0f;
    std::copy(traces + static_cast<long long>(r) * run.steps, traces + static_cast<long long>(r + 1) * run.steps,
              buf.begin() + 1);
    if (segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, ns, buf.data()) != SEGY_OK) fail("sample conversion");
    if (segy_writetrace(f.get(), r, buf.data(), kTrace0, trsize) != SEGY_OK) fail("trace " + std::to_string(r + 1));
  }
  // segy_close flushes (checked: a full disk shows here); the fclose it then does is not
  // reported by segyio 1.8, but the data have reached the system by then.
  errno = 0;
  if (segy_close(f.release()) != SEGY_OK) fail("flush");
}

bool is_segy_path(const std::string& data) {
  std::string ext = fs::path(data).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".sgy" || ext == ".segy";
}

std::vector<std::string> segy_files(const std::string& data) {
  if (data.find_first_of("*?[") == std::string::npos) {
    if (!fs::exists(data)) throw Error("data file '" + data + "' (migration.data) does not exist");
    return {data};
  }
  glob_t g{};
  const int rc = ::glob(data.c_str(), 0, nullptr, &g);
  std::vector<std::string> v;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) v.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  if (v.empty()) throw Error("migration.data = '" + data + "' matches no file (a glob such as out/run_shot_*.sgy)");
  std::sort(v.begin(), v.end());
  return v;
}

namespace {

struct TraceRef {
  size_t file = 0;
  int index = 0;  // 0-based in its file
};

struct ShotTraces {
  long long record = 0;
  std::array<double, 3> source{};
  std::vector<TraceRef> traces;
  std::vector<std::array<double, 3>> receivers;
};

// One file's layout, from its textual and binary headers.
struct FileLayout {
  std::string path;
  bool lsb = false;
  int format = 0;
  long long samples = 0;
  double dt = 0;
  int trsize = 0;
  long trace0 = 0;
  int traces = 0;
};

const char* format_name(int f) {
  switch (f) {
    case 1:
      return "4-byte IBM float";
    case 2:
      return "4-byte integer";
    case 3:
      return "2-byte integer";
    case 4:
      return "4-byte fixed point with gain";
    case 5:
      return "4-byte IEEE float";
    case 6:
      return "8-byte IEEE float";
    case 8:
      return "1-byte integer";
    default:
      return "not a SEG-Y format code";
  }
}

FileLayout read_layout(const std::string& path) {
  FileLayout L;
  L.path = path;
  auto bad = [&](const std::string& why) -> Error { return Error("SEG-Y file '" + path + "': " + why); };
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw bad("cannot be read: " + ec.message());
  if (size < static_cast<uintmax_t>(kTrace0))
    throw bad("holds " + std::to_string(size) +
              " bytes, less than the 3600-byte file header (3200 textual + 400 "
              "binary): truncated or not SEG-Y");
  unsigned char raw[kTrace0];
  {
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(raw), kTrace0)) throw bad("cannot read its 3600-byte file header");
  }
  // Rev 2's byte order constant 16909060 (bytes 3297-3300) reads 0x04030201 in a little-endian file.
  L.lsb = get_raw(raw + 3296, 4, false) == 0x04030201u;
  Handle f(segy_open(path.c_str(), "rb"));
  if (!f) throw bad("cannot be opened");
  if (L.lsb && segy_set_format(f.get(), SEGY_LSB) != SEGY_OK) throw bad("cannot be read little-endian");
  char bin[kBin];
  if (segy_binheader(f.get(), bin) != SEGY_OK) throw bad("cannot read the binary header");
  int32_t v = 0;
  segy_get_bfield(bin, SEGY_BIN_FORMAT, &v);
  L.format = v;
  if (L.format != SEGY_IEEE_FLOAT_4_BYTE && L.format != SEGY_IBM_FLOAT_4_BYTE)
    throw bad("binary header bytes 3225-3226 (data sample format) = " + std::to_string(L.format) + " (" +
              format_name(L.format) + "); seisrtm reads 5 (4-byte IEEE float) and 1 (4-byte IBM float)");
  int32_t rev = 0, ext_text = 0, trace_flag = 0;
  segy_get_bfield(bin, SEGY_BIN_SEGY_REVISION, &rev);
  segy_get_bfield(bin, SEGY_BIN_EXT_HEADERS, &ext_text);
  segy_get_bfield(bin, SEGY_BIN_TRACE_FLAG, &trace_flag);
  const int major = (rev >> 8) & 0xff;
  if (ext_text < 0)
    throw bad("binary header bytes 3505-3506 (extended textual headers) = " + std::to_string(ext_text) +
              " (a variable count); seisrtm reads files with a fixed count, 0 or more");
  const unsigned char* b = raw + kText;
  if (major >= 2 && get_raw(b + 3507 - 3201, 4, L.lsb) != 0)
    throw bad("binary header bytes 3507-3510 (additional trace headers) = " +
              std::to_string(get_raw(b + 3507 - 3201, 4, L.lsb)) +
              "; seisrtm reads traces with the standard "
              "240-byte header only (0)");
  segy_get_bfield(bin, SEGY_BIN_SAMPLES, &v);
  L.samples = static_cast<uint16_t>(v);
  std::string samples_field = "binary header bytes 3221-3222 (samples per trace)";
  if (major >= 2 && get_raw(b + 3269 - 3201, 4, L.lsb) != 0) {
    L.samples = static_cast<long long>(get_raw(b + 3269 - 3201, 4, L.lsb));
    samples_field = "binary header bytes 3269-3272 (rev 2 extended samples per trace)";
  }
  if (L.samples < 1) throw bad(samples_field + " = 0; it must give the samples of every trace");
  // segyio holds a trace's size in bytes in an int: the 240-byte header and 4 bytes a sample
  // (formats 1 and 5) stay below 2^31 up to (2^31 - 1 - 240) / 4 samples. A 32-bit count past
  // that wraps the size (2^30 + 11 samples read as traces of 11) and plans a read of GiB.
  constexpr long long kMaxSamples = (static_cast<long long>(INT32_MAX) - kTrace) / 4;
  if (L.samples > kMaxSamples)
    throw bad(samples_field + " = " + std::to_string(L.samples) + ": a trace of 240 + 4 x " +
              std::to_string(L.samples) + " bytes exceeds the " + std::to_string(INT32_MAX) +
              " bytes a trace may hold; valid: 1 to " + std::to_string(kMaxSamples) +
              " samples (a corrupt or mis-declared header)");
  segy_get_bfield(bin, SEGY_BIN_INTERVAL, &v);
  double us = static_cast<uint16_t>(v);
  if (major >= 2) {
    uint64_t bits = get_raw(b + 3273 - 3201, 8, L.lsb);
    double ext;
    std::memcpy(&ext, &bits, 8);
    if (bits != 0 && std::isfinite(ext) && ext > 0) us = ext;
  }
  if (!(us > 0))
    throw bad("binary header bytes 3217-3218 (sample interval) = 0 us; it must be the positive sample interval");
  L.dt = us * 1e-6;
  // The exact dt that seisrtm writes into the textual header, when it agrees with the header's
  // rounded microseconds (EBCDIC, or ASCII in rev 2).
  char text[kText + 1] = {};
  if (raw[0] == 'C') {
    std::memcpy(text, raw, kText);
  } else if (segy_read_textheader(f.get(), text) != SEGY_OK) {
    throw bad("cannot read the textual header");
  }
  const std::string t(text, kText);
  const auto at = t.find(exact_dt_key());
  if (at != std::string::npos) {
    const double exact = std::strtod(t.c_str() + at + exact_dt_key().size(), nullptr);
    if (exact > 0 && std::abs(exact * 1e6 - us) <= 0.5 + 1e-9 * us) L.dt = exact;
  }
  L.trace0 = segy_trace0(bin);
  L.trsize = segy_trsize(L.format, static_cast<int>(L.samples));
  if (segy_set_format(f.get(), L.format | (L.lsb ? SEGY_LSB : 0)) != SEGY_OK) throw bad("unsupported format");
  const long long body = static_cast<long long>(size) - L.trace0;
  const long long per = kTrace + static_cast<long long>(L.trsize);
  if (body <= 0) throw bad("holds no traces after its " + std::to_string(L.trace0) + "-byte file header");
  if (body % per != 0)
    throw bad(std::to_string(body) + " bytes of traces after the " + std::to_string(L.trace0) +
              "-byte file header are not a whole number of traces of " + std::to_string(per) +
              " bytes (240-byte "
              "header + " +
              std::to_string(L.samples) + " samples x 4 bytes, " + samples_field + "): trace " +
              std::to_string(body / per + 1) + " is cut short after " + std::to_string(body % per) +
              " bytes (a truncated file, or traces of varying length)");
  if (body / per > INT32_MAX) throw bad("holds more than 2^31 traces");
  L.traces = static_cast<int>(body / per);
  (void)trace_flag;
  return L;
}

}  // namespace

ObservedData read_segy(const std::string& data, const SegyHeaderConfig& hb, bool with_traces, double max_bytes) {
  const auto files = segy_files(data);
  std::vector<FileLayout> layouts;
  for (const auto& f : files) layouts.push_back(read_layout(f));
  const FileLayout& L0 = layouts[0];
  for (const auto& L : layouts)
    if (L.samples != L0.samples || L.dt != L0.dt)
      throw Error("SEG-Y file '" + L.path + "': " + std::to_string(L.samples) + " samples at dt = " + fmt(L.dt) +
                  " s, but '" + L0.path + "' has " + std::to_string(L0.samples) + " at " + fmt(L0.dt) +
                  " s (binary header bytes 3221 and 3217): the files of one data set must agree");
  const double dt = L0.dt;

  std::vector<ShotTraces> shots;
  std::map<long long, size_t> by_record;
  long long delay_samples = 0;
  bool first = true;
  int32_t delay0 = 0;
  for (size_t fi = 0; fi < layouts.size(); ++fi) {
    const FileLayout& L = layouts[fi];
    Handle f(segy_open(L.path.c_str(), "rb"));
    if (!f || segy_set_format(f.get(), L.format | (L.lsb ? SEGY_LSB : 0)) != SEGY_OK)
      throw Error("SEG-Y file '" + L.path + "' cannot be opened");
    for (int i = 0; i < L.traces; ++i) {
      char h[kTrace];
      auto bad = [&](const std::string& why) -> Error {
        return Error("SEG-Y file '" + L.path + "', trace " + std::to_string(i + 1) + ": " + why);
      };
      if (segy_traceheader(f.get(), i, h, L.trace0, L.trsize) != SEGY_OK) throw bad("cannot read its header");
      auto get = [&](int byte) {
        int32_t v = 0;
        segy_get_field(h, byte, &v);
        return v;
      };
      const int32_t ns = get(SEGY_TR_SAMPLE_COUNT);
      if (ns != 0 && static_cast<uint16_t>(ns) != static_cast<uint16_t>(L.samples))
        throw bad("bytes 115-116 (samples in this trace) = " + std::to_string(static_cast<uint16_t>(ns)) +
                  ", but the binary header (3221-3222) gives " + std::to_string(L.samples) +
                  " for every trace: seisrtm reads fixed-length traces");
      const int32_t si = get(SEGY_TR_SAMPLE_INTER);
      if (si != 0 && static_cast<uint16_t>(si) != static_cast<long long>(std::llround(dt * 1e6)))
        throw bad("bytes 117-118 (sample interval) = " + std::to_string(static_cast<uint16_t>(si)) +
                  " us, but the binary header gives " + fmt(dt * 1e6) + " us: one interval for every trace");
      // Delay recording time (109, ms), scaled by bytes 215-216 where that is set (rev 2).
      const int32_t delay = get(SEGY_TR_DELAY_REC_TIME);
      if (first) {
        delay0 = delay;
        const int32_t ts = get(SEGY_TR_SCALAR_TRACE_HEADER);
        const double t = unscaled(delay, ts) * 1e-3;
        const double m = t / dt;
        if (std::abs(m - std::round(m)) > 1e-6)
          throw bad("bytes 109-110 (delay recording time) = " + std::to_string(delay) +
                    " ms is not a whole number "
                    "of samples of dt = " +
                    fmt(dt) +
                    " s; seisrtm needs the first sample at a multiple of dt "
                    "(0 for data it wrote)");
        delay_samples = std::llround(m);
        first = false;
      } else if (delay != delay0) {
        throw bad("bytes 109-110 (delay recording time) = " + std::to_string(delay) + " ms, but trace 1 of '" +
                  L0.path + "' has " + std::to_string(delay0) + " ms: every trace must start at the same time");
      }
      const int cs = get(hb.coordinate_scalar), es = get(hb.elevation_scalar);
      if (!valid_scalar(cs))
        throw bad("bytes " + std::to_string(hb.coordinate_scalar) + " (coordinate scalar) = " + std::to_string(cs) +
                  "; valid: 1, 10, 100, 1000, 10000 (multiply), their negatives (divide) or 0 (taken as 1)");
      if (!valid_scalar(es))
        throw bad("bytes " + std::to_string(hb.elevation_scalar) + " (elevation scalar) = " + std::to_string(es) +
                  "; valid: 1, 10, 100, 1000, 10000 (multiply), their negatives (divide) or 0 (taken as 1)");
      const std::array<double, 3> s{unscaled(get(hb.source_x), cs), unscaled(get(hb.source_y), cs),
                                    unscaled(get(hb.source_depth), es) - unscaled(get(hb.source_elevation), es)};
      const std::array<double, 3> r{unscaled(get(hb.receiver_x), cs), unscaled(get(hb.receiver_y), cs),
                                    -unscaled(get(hb.receiver_elevation), es)};
      const long long record = get(hb.shot);
      auto [it, added] = by_record.try_emplace(record, shots.size());
      if (added) shots.push_back({record, s, {}, {}});
      ShotTraces& st = shots[it->second];
      auto text3 = [](const std::array<double, 3>& p) {
        return "[" + fmt(p[0]) + ", " + fmt(p[1]) + ", " + fmt(p[2]) + "] m";
      };
      if (s != st.source)
        throw bad("source position " + text3(s) + " (bytes " + std::to_string(hb.source_x) + ", " +
                  std::to_string(hb.source_y) + ", " + std::to_string(hb.source_depth) + " - " +
                  std::to_string(hb.source_elevation) + ") differs from " + text3(st.source) +
                  " of the first trace of field record " + std::to_string(record) + " (bytes " +
                  std::to_string(hb.shot) + "): every trace of a shot must carry its source position");
      st.traces.push_back({fi, i});
      st.receivers.push_back(r);
    }
  }
  if (shots.empty()) throw Error("SEG-Y data '" + data + "' holds no traces");
  const ShotTraces& s0 = shots[0];
  // One spread for every shot where every field record has shot 0's receivers in its order;
  // else a spread a shot (ObservedData::spreads), each record's traces in file order.
  bool varying = false;
  size_t most = 0;
  for (const auto& st : shots) {
    varying = varying || st.receivers != s0.receivers;
    most = std::max(most, st.receivers.size());
  }
  ObservedData o;
  o.file = data;
  o.dt = dt;
  o.shots = static_cast<long long>(shots.size());
  o.receivers = static_cast<long long>(most);
  // SEG-Y sample k is at t = delay + k dt; the project's sample n at (n + 1) dt: n = k + m - 1
  // with m = delay / dt. Samples before t = dt are dropped, times before the recording zero.
  const long long shift = delay_samples - 1;
  o.samples = L0.samples + shift;
  if (o.samples < 1)
    throw Error("SEG-Y data '" + data + "': the traces end before t = dt (delay " + std::to_string(delay0) + " ms, " +
                std::to_string(L0.samples) + " samples): nothing to migrate");
  for (const auto& st : shots) o.source_positions.push_back(st.source);
  o.receiver_positions = s0.receivers;
  if (varying)
    for (const auto& st : shots) o.spreads.push_back(st.receivers);
  const double bytes = 4.0 * double(o.shots) * double(o.receivers) * double(o.samples + L0.samples);
  if (with_traces && max_bytes > 0 && bytes > max_bytes)
    throw Error("SEG-Y data '" + data + "': " + std::to_string(o.shots) + " shots x " + std::to_string(o.receivers) +
                " receivers x " + std::to_string(L0.samples) + " samples need " + fmt(bytes / 1073741824.0) +
                " GiB of host memory to read but at most " + fmt(max_bytes / 1073741824.0) + " GiB may be used");
  if (!with_traces) return o;

  o.traces.assign(static_cast<size_t>(o.shots * o.receivers * o.samples), 0.0f);
  std::vector<float> buf(static_cast<size_t>(L0.samples));
  std::vector<Handle> open(layouts.size());
  for (size_t si = 0; si < shots.size(); ++si)
    for (size_t r = 0; r < shots[si].traces.size(); ++r) {
      const TraceRef& t = shots[si].traces[r];
      const FileLayout& L = layouts[t.file];
      if (!open[t.file]) {
        open[t.file].reset(segy_open(L.path.c_str(), "rb"));
        if (!open[t.file] || segy_set_format(open[t.file].get(), L.format | (L.lsb ? SEGY_LSB : 0)) != SEGY_OK)
          throw Error("SEG-Y file '" + L.path + "' cannot be opened");
      }
      if (segy_readtrace(open[t.file].get(), t.index, buf.data(), L.trace0, L.trsize) != SEGY_OK ||
          segy_to_native(L.format, L0.samples, buf.data()) != SEGY_OK)
        throw Error("SEG-Y file '" + L.path + "', trace " + std::to_string(t.index + 1) +
                    ": its samples cannot be read");
      float* out = o.traces.data() + (static_cast<long long>(si) * o.receivers + static_cast<long long>(r)) * o.samples;
      for (long long k = 0; k < L0.samples; ++k) {
        if (!std::isfinite(buf[k]))
          throw Error("SEG-Y file '" + L.path + "', trace " + std::to_string(t.index + 1) + ": sample " +
                      std::to_string(k) + " is NaN or infinite; every sample must be a finite number");
        const long long n = k + shift;
        if (n >= 0) out[n] = buf[k];
      }
    }
  return o;
}

}  // namespace seisrtm::io
