# seisrtm on NVIDIA's CUDA 13 development image. Not built in CI here (no Docker engine there);
# .ci/check-dockerfile checks in CI that its packages are .ci/install-deps's and its cmake commands
# .ci/build's, and runs its configure step.
FROM nvidia/cuda:13.0.0-devel-ubuntu24.04
# Unpinned like .ci/install-deps: the image takes the base release's versions (Catch2 3.4.0 on
# Ubuntu 24.04; tests/catch.hpp bridges Catch2 v2 and v3).
# hadolint ignore=DL3008
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake ninja-build g++ libhdf5-dev libyaml-cpp-dev libcli11-dev catch2 \
      libsegyio-dev nlohmann-json3-dev libpugixml-dev libgd-dev libpng-dev zlib1g-dev libopenmpi-dev openmpi-bin python3 python3-venv clang-format \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /seisrtm
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build
ENTRYPOINT ["/seisrtm/build/seisrtm"]
CMD ["info"]
