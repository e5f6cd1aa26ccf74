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

// Where an allocation lives: device memory, or page-locked host memory for asynchronous copies.
struct DeviceMemory {
  static cudaError_t Allocate(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
  static void Free(void* p) { cudaFree(p); }
};
struct PinnedHostMemory {
  static cudaError_t Allocate(void** p, size_t bytes) { return cudaMallocHost(p, bytes); }
  static void Free(void* p) { cudaFreeHost(p); }
};

// An owned array of n Ts in Memory; Allocate replaces any earlier one.
template <typename T, typename Memory>
class CudaArray {
 public:
  CudaArray() = default;
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;
  ~CudaArray() { Free(); }
  Status Allocate(size_t n) {
    Free();
    if (n == 0) n = 1;
    CUDA_TRY(Memory::Allocate(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
    size_ = n;
    return Status::Ok();
  }
  void Free() {
    if (ptr_ != nullptr) Memory::Free(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

template <typename T>
class DeviceArray : public CudaArray<T, DeviceMemory> {
 public:
  Status Upload(const std::vector<T>& v) {
    STATUS_TRY(this->Allocate(v.size()));
    if (!v.empty()) CUDA_TRY(cudaMemcpy(this->get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return Status::Ok();
  }
};

template <typename T>
using PinnedArray = CudaArray<T, PinnedHostMemory>;

}  // namespace collatz
