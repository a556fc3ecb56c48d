// Inclusive scans (cumsum, cumprod) along one dimension, one block per row.
//
// Input and output are viewed as [outer, len, inner] through their own
// element strides (`at_scan_shape`); row r = outer * inner_size + inner. A
// block walks its rows grid-stride and each row in chunks of blockDim.x
// elements: a warp-shuffle scan inside each warp, a scan of the warp totals
// by warp 0 through shared memory, and a running carry between chunks.
// Values accumulate in the accumulate type `A` (float for the 16-bit
// floats, int64 for integers and bool).
//
// Launch contract: a block size that is a multiple of 32, at most 1024; any
// grid size.

struct at_scan_shape {
  long long num_rows;
  long long inner_size;
  long long len;
  long long in_outer_stride;
  long long in_inner_stride;
  long long in_stride;
  long long out_outer_stride;
  long long out_inner_stride;
  long long out_stride;
};

template <class A>
struct at_scan_add {
  __device__ __forceinline__ A identity() const { return A(0); }
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

template <class A>
struct at_scan_mul {
  __device__ __forceinline__ A identity() const { return A(1); }
  __device__ __forceinline__ A operator()(A a, A b) const { return a * b; }
};

template <class Out, class In, class A, class Op>
__device__ __forceinline__ void at_scan_rows(Out* __restrict__ out, const In* __restrict__ in,
                                             const at_scan_shape& s, Op op) {
  __shared__ A warp_totals[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  for (long long row = blockIdx.x; row < s.num_rows; row += gridDim.x) {
    const long long outer = row / s.inner_size;
    const long long inner = row - outer * s.inner_size;
    const In* src = in + outer * s.in_outer_stride + inner * s.in_inner_stride;
    Out* dst = out + outer * s.out_outer_stride + inner * s.out_inner_stride;
    A carry = op.identity();
    for (long long start = 0; start < s.len; start += blockDim.x) {
      const long long j = start + threadIdx.x;
      A v = j < s.len ? at_convert<A>(src[j * s.in_stride]) : op.identity();
#pragma unroll
      for (int offset = 1; offset < 32; offset <<= 1) {
        const A t = at_shfl_up(v, offset);
        if (lane >= offset) {
          v = op(t, v);
        }
      }
      if (lane == 31) {
        warp_totals[warp] = v;
      }
      __syncthreads();
      if (warp == 0) {
        A t = lane < warps ? warp_totals[lane] : op.identity();
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) {
          const A u = at_shfl_up(t, offset);
          if (lane >= offset) {
            t = op(u, t);
          }
        }
        if (lane < warps) {
          warp_totals[lane] = t;
        }
      }
      __syncthreads();
      const A before = warp > 0 ? op(carry, warp_totals[warp - 1]) : carry;
      if (j < s.len) {
        dst[j * s.out_stride] = at_convert<Out>(op(before, v));
      }
      carry = op(carry, warp_totals[warps - 1]);
      // The next chunk overwrites the warp totals.
      __syncthreads();
    }
  }
}
