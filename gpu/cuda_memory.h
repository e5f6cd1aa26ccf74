// Host-side helpers shared by the GPU engines: CUDA errors as Status, and owners of device
// and pinned host allocations. Host code only (.cc files); kernels live in .cu files.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace collatz {

inline Status CudaStatus(const char* what, cudaError_t e) {
  return Status::Internal(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(e) + " (" +
                          cudaGetErrorString(e) + ")");
}

// Returns a Status error from the enclosing function when a CUDA call fails.
#define CUDA_TRY(expr)                                                 \
  do {                                                                 \
    const cudaError_t cuda_err_ = (expr);                              \
    if (cuda_err_ != cudaSuccess) return CudaStatus(#expr, cuda_err_); \
  } while (0)

// Returns from the enclosing function when a Status is not ok.
#define STATUS_TRY(expr)       \
  do {                         \
    Status st_ = (expr);       \
    if (!st_.ok()) return st_; \
  } while (0)

// A device allocation; Allocate replaces any earlier one.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { Free(); }
  Status Allocate(size_t n) {
    Free();
    if (n == 0) n = 1;
    CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
    size_ = n;
    return Status::Ok();
  }
  Status Upload(const std::vector<T>& v) {
    STATUS_TRY(Allocate(v.size()));
    if (!v.empty()) CUDA_TRY(cudaMemcpy(ptr_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return Status::Ok();
  }
  void Free() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

// Page-locked host memory for asynchronous copies; Allocate replaces any earlier one.
template <typename T>
class PinnedArray {
 public:
  PinnedArray() = default;
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  ~PinnedArray() { Free(); }
  Status Allocate(size_t n) {
    Free();
    if (n == 0) n = 1;
    CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
    size_ = n;
    return Status::Ok();
  }
  void Free() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace collatz
