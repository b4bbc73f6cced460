# seisrtm on NVIDIA's CUDA 13 development image. Not built in CI here (no Docker engine there).
FROM nvidia/cuda:13.0.0-devel-ubuntu24.04
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake ninja-build g++ libhdf5-dev libyaml-cpp-dev libcli11-dev catch2 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /seisrtm
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build
ENTRYPOINT ["/seisrtm/build/seisrtm"]
CMD ["info"]
