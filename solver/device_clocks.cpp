#include "solver/device_clocks.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <thread>

namespace seisrtm {

namespace {

// NVML's C interface, the few functions used (nvml.h; return 0 is NVML_SUCCESS).
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
struct Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  int (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;
  int (*power)(NvmlDevice, unsigned*) = nullptr;
  int (*power_limit)(NvmlDevice, unsigned*) = nullptr;
  int (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
};

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

}  // namespace

std::string ClockSummary::text() const {
  if (samples == 0) return "";
  char s[256];
  int n = std::snprintf(s, sizeof s, "SM clock %.0f MHz (%u at the least", mean_sm_mhz, min_sm_mhz);
  if (top_sm_mhz > 0) n += std::snprintf(s + n, sizeof s - n, "; highest %u", top_sm_mhz);
  n += std::snprintf(s + n, sizeof s - n, "), %.0f W", mean_power_w);
  if (power_limit_w > 0) n += std::snprintf(s + n, sizeof s - n, " of %.0f", power_limit_w);
  n += std::snprintf(s + n, sizeof s - n, ", held by power %.0f%% of the time", 100 * power_held);
  if (thermal_held > 0) std::snprintf(s + n, sizeof s - n, ", by heat or slowdown %.0f%%", 100 * thermal_held);
  return s;
}

ClockSummary summarize_clocks(const std::vector<ClockSample>& samples, SampleClock::time_point from,
                              SampleClock::time_point to, unsigned top_sm_mhz, double power_limit_w) {
  // Each sample in the span as a summary of its own, combined.
  std::vector<ClockSummary> each;
  for (const ClockSample& s : samples) {
    if (s.at < from || s.at > to) continue;
    ClockSummary one;
    one.samples = 1;
    one.mean_sm_mhz = one.min_sm_mhz = s.sm_mhz;
    one.mean_power_w = s.power_mw / 1000.0;
    one.power_held = (s.reasons & ClockReason::kPower) != 0;
    one.thermal_held = (s.reasons & ClockReason::kThermal) != 0;
    each.push_back(one);
  }
  ClockSummary c = combine_clocks(each);
  c.top_sm_mhz = top_sm_mhz;
  c.power_limit_w = power_limit_w;
  return c;
}

ClockSummary combine_clocks(const std::vector<ClockSummary>& spans) {
  ClockSummary c;
  double mhz = 0, w = 0, power = 0, thermal = 0;
  for (const ClockSummary& s : spans) {
    c.top_sm_mhz = std::max(c.top_sm_mhz, s.top_sm_mhz);
    c.power_limit_w = std::max(c.power_limit_w, s.power_limit_w);
    if (s.samples == 0) continue;
    c.min_sm_mhz = c.samples == 0 ? s.min_sm_mhz : std::min(c.min_sm_mhz, s.min_sm_mhz);
    c.samples += s.samples;
    mhz += s.mean_sm_mhz * s.samples;
    w += s.mean_power_w * s.samples;
    power += s.power_held * s.samples;
    thermal += s.thermal_held * s.samples;
  }
  if (c.samples == 0) return c;
  c.mean_sm_mhz = mhz / c.samples;
  c.mean_power_w = w / c.samples;
  c.power_held = power / c.samples;
  c.thermal_held = thermal / c.samples;
  return c;
}

struct ClockSampler::Impl {
  Nvml nvml;
  NvmlDevice device = nullptr;
  bool started = false;  // nvmlInit succeeded: shut it down at the end
  std::string reason;
  unsigned top_mhz = 0;
  double limit_w = 0;
  std::chrono::milliseconds period{0};
  mutable std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  std::vector<ClockSample> samples;
  std::thread thread;

  // Here rather than in ~ClockSampler, so that a constructor that throws also stops the thread
  // and lets NVML go.
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    wake.notify_all();
    if (thread.joinable()) thread.join();
    if (started) nvml.shutdown();
    if (nvml.lib) dlclose(nvml.lib);
  }

  // Opens NVML and finds the CUDA device by its PCI bus id; "" or why not.
  std::string open(int cuda_device) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) {
      cudaGetLastError();
      return "CUDA device " + std::to_string(cuda_device) + " has no PCI bus id";
    }
    nvml.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml.lib) return std::string("NVML could not be loaded (") + dlerror() + ")";
    if (!bind(nvml.lib, "nvmlInit_v2", nvml.init) || !bind(nvml.lib, "nvmlShutdown", nvml.shutdown) ||
        !bind(nvml.lib, "nvmlDeviceGetHandleByPciBusId_v2", nvml.by_pci_bus_id) ||
        !bind(nvml.lib, "nvmlDeviceGetClockInfo", nvml.clock) ||
        !bind(nvml.lib, "nvmlDeviceGetMaxClockInfo", nvml.max_clock) ||
        !bind(nvml.lib, "nvmlDeviceGetPowerUsage", nvml.power) ||
        !bind(nvml.lib, "nvmlDeviceGetEnforcedPowerLimit", nvml.power_limit) ||
        !(bind(nvml.lib, "nvmlDeviceGetCurrentClocksEventReasons", nvml.reasons) ||
          bind(nvml.lib, "nvmlDeviceGetCurrentClocksThrottleReasons", nvml.reasons)))
      return "this NVML lacks a function the sampler reads";
    if (nvml.init() != 0) return "NVML did not start";
    started = true;
    if (nvml.by_pci_bus_id(bus, &device) != 0) return std::string("NVML does not know the GPU at ") + bus;
    unsigned mhz = 0, mw = 0;
    if (nvml.clock(device, kNvmlClockSm, &mhz) != 0) return "NVML does not give this GPU's SM clock";
    if (nvml.max_clock(device, kNvmlClockSm, &top_mhz) != 0) top_mhz = 0;
    if (nvml.power_limit(device, &mw) == 0) limit_w = mw / 1000.0;
    return "";
  }

  void run() {
    for (;;) {
      ClockSample s;
      s.at = SampleClock::now();
      // A sample without its clock is dropped; a failed power or reason reading leaves 0 in it.
      const bool read = nvml.clock(device, kNvmlClockSm, &s.sm_mhz) == 0;
      nvml.power(device, &s.power_mw);
      nvml.reasons(device, &s.reasons);
      std::unique_lock<std::mutex> lock(mutex);
      if (read) samples.push_back(s);
      if (wake.wait_for(lock, period, [&] { return stop; })) return;
    }
  }
};

ClockSampler::ClockSampler(int cuda_device, std::chrono::milliseconds period) : impl_(std::make_unique<Impl>()) {
  impl_->period = period;
  impl_->reason = impl_->open(cuda_device);
  if (!impl_->reason.empty()) return;
  try {
    impl_->thread = std::thread([this] { impl_->run(); });
  } catch (const std::system_error& e) {
    impl_->reason = std::string("no thread to sample on (") + e.what() + ")";
  }
}

ClockSampler::~ClockSampler() = default;

bool ClockSampler::active() const {
  return impl_->reason.empty();
}

std::chrono::milliseconds ClockSampler::period() const {
  return impl_->period;
}

const std::string& ClockSampler::reason() const {
  return impl_->reason;
}

ClockSummary ClockSampler::between(SampleClock::time_point from, SampleClock::time_point to) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return summarize_clocks(impl_->samples, from, to, impl_->top_mhz, impl_->limit_w);
}

}  // namespace seisrtm
