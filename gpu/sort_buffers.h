// The device storage of a CUB radix sort of (64-bit key, 32-bit value) pairs with double
// buffers (no third copy), as the sieve builder and the join map build use it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "gpu/cuda_memory.h"

namespace collatz {

struct KeyValueSortBuffers {
  DeviceArray<uint64_t> key_buffers[2];
  DeviceArray<uint32_t> value_buffers[2];
  DeviceArray<unsigned char> temp;
  uint64_t* keys[2] = {nullptr, nullptr};
  uint32_t* values[2] = {nullptr, nullptr};

  // Device bytes for `count` pairs and the sort's scratch.
  static size_t Bytes(uint64_t count, size_t temp_bytes) {
    return count * 2 * (sizeof(uint64_t) + sizeof(uint32_t)) + temp_bytes;
  }
  Status Allocate(uint64_t count, size_t temp_bytes) {
    for (int i = 0; i < 2; ++i) {
      STATUS_TRY(key_buffers[i].Allocate(count));
      STATUS_TRY(value_buffers[i].Allocate(count));
      keys[i] = key_buffers[i].get();
      values[i] = value_buffers[i].get();
    }
    return temp.Allocate(temp_bytes);
  }
};

}  // namespace collatz
