// The walk-queue kernel (delay-only units with a floor, global step table) and its
// instantiation picker (FindQueueKernel); the host launchers are in gpu/search_launch.cu,
// the device functions it shares with the other kernels in walk_common.cuh.
// Walk queue: a warp keeps the numbers that must walk on in a ring in shared memory and
// its lanes take the next one as soon as their own is done, so lanes stay busy (the plain
// kernel runs each tile of 32 as long as its slowest number, with about 16 of 32 lanes
// active). Whenever fewer than 32 numbers are queued, the warp sets up its next tile of 32
// positions with every lane busy (sieve entry, first jump, work hash, first check) and
// queues those that must walk on. Ladder entries (delay above the ladder floor) go
// straight to the ladder buffer, unfiltered by tile: the engine uses this kernel for units
// with a floor above 0 only, whose ladders are sparse. Global-memory step table.
#include "gpu/kernels/find_kernels.h"
#include "gpu/kernels/walk_common.cuh"

namespace collatz::gpu {
namespace {

// Idle lanes take queued numbers, then every live lane takes one step of its walk.
// Returns false (nothing done) when no lane is live after the pops. (Waiting until 4, 8 or
// 12 lanes are idle, to pop less often, measured the same.)
template <int kLayout>
__device__ __forceinline__ bool PopAndStep(const LaunchParams& P, const LaunchParams* shared_params, QueueRing& ring,
                                           const uint4* steps, int S, unsigned lanes_below, uint32_t& head,
                                           uint32_t& queued, bool& live, uint64_t& hi, uint64_t& lo, uint32_t& s,
                                           uint32_t& rel) {
  const uint32_t mask = (1u << S) - 1;
  const unsigned idle = __ballot_sync(0xFFFFFFFFu, !live);
  if (idle != 0 && queued != 0) {
    WarpRingTake(idle, !live, lanes_below, head, queued, [&](uint32_t slot) {
      lo = ring.lo[slot];
      hi = ring.hi[slot];
      rel = ring.rel[slot];
      s = ring.s[slot];
      live = true;
    });
  }
  if (__ballot_sync(0xFFFFFFFFu, live) == 0) return false;
  if (live) {
    const uint4 e = __ldg(steps + (static_cast<uint32_t>(lo) & mask));
    if (!StepMulAdd(hi, lo, S, e.y, e.x)) {
      FinishRel<kLayout>(shared_params, rel, 0, true);
      live = false;
    } else {
      s += e.z;
      uint32_t d = 0;
      const int outcome = Check(P, hi, lo, s, &d);
      if (outcome != kContinue) {
        if (outcome == kFinished) FinishRel<kLayout>(shared_params, rel, d, false);
        live = false;
      }
    }
  }
  return true;
}

// Queues the numbers of a set-up round that must walk on (outcome kContinue).
__device__ __forceinline__ void PushWalking(QueueRing& ring, unsigned lanes_below, uint32_t head, uint32_t& queued,
                                            bool walks, uint64_t hi, uint64_t lo, uint32_t rel, uint32_t s) {
  WarpRingPush(walks, lanes_below, head, queued, [&](uint32_t slot) {
    ring.lo[slot] = lo;
    ring.hi[slot] = hi;
    ring.rel[slot] = rel;
    ring.s[slot] = static_cast<uint16_t>(s);
  });
}

template <int kThreads, bool kSieved, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks * kThreads > COLLATZ_THREADS_PER_SM
                                                ? COLLATZ_THREADS_PER_SM / kThreads
                                                : kMinBlocks) QueueKernel(const LaunchParams P) {
  constexpr int kWarps = kThreads / 32;
  __shared__ QueueRing rings[kWarps];
  __shared__ LaunchParams shared_params;  // for the out-of-line rare paths
  if (threadIdx.x == 0) shared_params = P;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31;
  const unsigned lanes_below = (1u << lane) - 1;
  QueueRing& ring = rings[threadIdx.x / 32];
  const int S = P.tables.step_bits;
  const uint4* steps = reinterpret_cast<const uint4*>(P.tables.steps);
  // Per-thread totals; 32-bit where a launch's 2^32 positions bound them (fewer registers).
  uint32_t candidates = 0;  // tallies of finished numbers go straight to the accumulators
  unsigned long long hash = 0;
  // Tiles relative to the launch's first (fewer than 2^32). First-block launches: a tile
  // is 32 consecutive positions. Sieved launches: a tile is a column of 32 sieve entries
  // (residues) over column_cycles consecutive cycles, taken one cycle per round: the first
  // round does the multiply-add 3^p h + c, every later one adds modulus * 3^p (h grows by
  // modulus per cycle), and the entry is loaded once per column.
  uint32_t tile = blockIdx.x * kWarps + threadIdx.x / 32;
  const uint32_t tiles = static_cast<uint32_t>(P.tile_end - P.tile_begin);
  uint32_t column_left = 0;  // warp-uniform: rounds left in the current column
  uint64_t col_lo = 0, col_hi = 0, delta_lo = 0, delta_hi = 0, col_pos = 0;
  uint32_t col_s = 0;
  bool col_entry = false, col_overflow = false;
  uint32_t head = 0, queued = 0;  // warp-uniform: the ring holds slots head .. head + queued - 1
  bool live = false;
  uint64_t hi = 0, lo = 0;
  uint32_t s = 0, rel = 0;
  while (true) {
    if (queued < 32 && (tile < tiles || column_left != 0)) {
      // Set up 32 more positions, every lane busy. N itself is not kept: the rare paths
      // that need it (host finish, tail, ladder) recompute it from the position.
      uint64_t pos;
      bool in_launch;
      if (kSieved) {
        if (column_left == 0) {
          const uint32_t group = tile / P.tiles_per_cycle;
          const uint32_t index = (tile - group * P.tiles_per_cycle) * 32 + lane;
          tile += gridDim.x * kWarps;
          const uint64_t cycle = P.first_tile_cycle + static_cast<uint64_t>(group) * P.column_cycles;
          const uint64_t cycles_left = P.last_cycle + 1 - cycle;
          column_left = cycles_left < P.column_cycles ? static_cast<uint32_t>(cycles_left) : P.column_cycles;
          col_entry = index < P.cycle_len;
          col_pos = cycle * P.cycle_len + index;
          col_overflow = false;
          if (col_entry) {
            const SieveEntry e = P.entries[index];
            const uint64_t n_rel = cycle * P.cycle_stride + e.offset;
            const uint64_t n_lo = P.base_lo + n_rel;
            const uint64_t n_hi = P.base_hi + (n_lo < n_rel ? 1 : 0);
            const int k = P.sieve_bits;
            col_hi = n_hi >> k;
            col_lo = (n_lo >> k) | (n_hi << (64 - k));
            if (col_hi == 0) {  // h < 2^64: a 64x64-bit product, which cannot overflow
              const uint64_t h = col_lo;
              col_lo = h * e.pow3 + e.c;
              col_hi = __umul64hi(h, e.pow3) + (col_lo < e.c ? 1 : 0);
            } else {
              col_overflow = !MulAdd(col_hi, col_lo, e.pow3, e.c);
            }
            col_s = e.steps;
            delta_lo = e.pow3 * P.column_modulus;
            delta_hi = __umul64hi(e.pow3, P.column_modulus);
          }
        } else {
          // Next cycle: v += modulus * 3^p (128-bit; a carry out means the value left 128
          // bits, and so do all later ones: they are finished on the host).
          const uint64_t new_lo = col_lo + delta_lo;
          const uint64_t carry = new_lo < col_lo ? 1 : 0;
          const uint64_t new_hi = col_hi + delta_hi + carry;
          col_overflow |= new_hi < col_hi || (new_hi == col_hi && (delta_hi | carry) != 0);
          col_lo = new_lo;
          col_hi = new_hi;
          col_pos += P.cycle_len;
        }
        --column_left;
        pos = col_pos;
        in_launch = col_entry;
      } else {
        pos = (P.tile_begin + tile) * 32 + lane;
        tile += gridDim.x * kWarps;
        in_launch = true;
      }
      in_launch = in_launch && pos >= P.pos_begin && pos < P.pos_end;
      const uint32_t my_rel = static_cast<uint32_t>(pos - P.pos_begin);
      int outcome = kStopped;
      uint64_t v_hi = 0, v_lo = 0;
      uint32_t v_s = 0;
      if (in_launch) {
        ++candidates;
        bool overflow = false;
        if (kSieved) {
          v_lo = col_lo;
          v_hi = col_hi;
          v_s = col_s;
          overflow = col_overflow;
          hash += WorkHashTerm(v_lo);  // the low 64 bits of 3^p h + c, exact even on overflow
        } else {
          v_lo = static_cast<uint64_t>(P.period) * (pos / P.npat) + P.pattern[pos % P.npat];
          hash += WorkHashTerm(v_lo);
        }
        uint32_t d = 0;
        if (overflow) {
          FinishRel<kSieved ? kSievedRel : kFirstBlockRel>(&shared_params, my_rel, 0, true);
        } else {
          outcome = Check(P, v_hi, v_lo, v_s, &d);
          if (outcome == kFinished) FinishRel<kSieved ? kSievedRel : kFirstBlockRel>(&shared_params, my_rel, d, false);
        }
      }
      PushWalking(ring, lanes_below, head, queued, outcome == kContinue, v_hi, v_lo, my_rel, v_s);
    }
    if (!PopAndStep<kSieved ? kSievedRel : kFirstBlockRel>(P, &shared_params, ring, steps, S, lanes_below, head, queued,
                                                           live, hi, lo, s, rel)) {
      if (tile >= tiles && column_left == 0) break;
    }
  }
  AddTotals<kThreads>(P, candidates, 0, 0, hash);
}

// The walk-queue kernel of a register cap (resident threads per SM; 0: none).
template <int kThreads, bool kSieved>
cudaError_t QueueKernelFor(int threads_per_sm, void (**kernel)(LaunchParams)) {
  switch (threads_per_sm) {
    case 0: *kernel = QueueKernel<kThreads, kSieved, 1>; break;
    case 1280: *kernel = QueueKernel<kThreads, kSieved, (1280 / kThreads > 0 ? 1280 / kThreads : 1)>; break;
    case 1536: *kernel = QueueKernel<kThreads, kSieved, 1536 / kThreads>; break;
    case 2048: *kernel = QueueKernel<kThreads, kSieved, 2048 / kThreads>; break;
    default: *kernel = nullptr; return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

template <int kThreads>
cudaError_t QueueKernelSized(bool sieved, int threads_per_sm, LaunchKernelFn* kernel) {
  return sieved ? QueueKernelFor<kThreads, true>(threads_per_sm, kernel)
                : QueueKernelFor<kThreads, false>(threads_per_sm, kernel);
}

}  // namespace

cudaError_t FindQueueKernel(int block_threads, bool sieved, int threads_per_sm, LaunchKernelFn* kernel) {
  switch (block_threads) {
    case 128: return QueueKernelSized<128>(sieved, threads_per_sm, kernel);
    case 256: return QueueKernelSized<256>(sieved, threads_per_sm, kernel);
    case 512: return QueueKernelSized<512>(sieved, threads_per_sm, kernel);
    default: *kernel = nullptr; return cudaErrorInvalidValue;
  }
}

}  // namespace collatz::gpu
