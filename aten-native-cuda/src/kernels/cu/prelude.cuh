// The prelude of every kernel source: the 16-bit float types, conversions
// with c10's semantics, compute and accumulate types, numeric limits, warp
// shuffles and the block-wide reduction every reduction and row kernel uses.
//
// NVRTC without a CUDA toolkit has no cuda_fp16.h or cuda_bf16.h (they are
// not among its builtin headers), so the two 16-bit float types are defined
// here with the toolkit's names, size and alignment: a kernel compiled from
// this prelude takes the same arguments as one compiled against the real
// headers. Both compute in float, as PyTorch's `opmath_type` does.

struct __align__(2) __half {
  unsigned short __x;
};

struct __align__(2) __nv_bfloat16 {
  unsigned short __x;
};

__device__ __forceinline__ float at_half2float(__half h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.__x));
  return f;
}

// Round to nearest even, NaN kept a NaN: what `c10::Half(float)` does.
__device__ __forceinline__ __half at_float2half(float f) {
  __half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.__x) : "f"(f));
  return h;
}

__device__ __forceinline__ float at_bfloat162float(__nv_bfloat16 b) {
  return __uint_as_float(static_cast<unsigned int>(b.__x) << 16);
}

// c10's `round_to_nearest_even`: a NaN becomes the canonical quiet NaN,
// everything else rounds its low 16 bits to nearest, ties to even. Written
// with integer arithmetic so that it needs no sm_80 conversion instruction.
__device__ __forceinline__ __nv_bfloat16 at_float2bfloat16(float f) {
  __nv_bfloat16 b;
  if (f != f) {
    b.__x = 0x7FC0u;
    return b;
  }
  unsigned int u = __float_as_uint(f);
  unsigned int bias = ((u >> 16) & 1u) + 0x7FFFu;
  b.__x = static_cast<unsigned short>((u + bias) >> 16);
  return b;
}

// The type a 16-bit float widens to before any other conversion or
// arithmetic; every other type is its own.
__device__ __forceinline__ float at_upcast(__half v) { return at_half2float(v); }
__device__ __forceinline__ float at_upcast(__nv_bfloat16 v) { return at_bfloat162float(v); }
template <class T>
__device__ __forceinline__ T at_upcast(T v) { return v; }

// Conversion of an already widened value to `To`, with c10's
// `static_cast_with_inter_type` rules: 16-bit floats are reached through
// float (so a double rounds twice, as in PyTorch), and uint8 through int64
// (so a negative float wraps as it does for the other integer types).
template <class To>
struct AtConvert {
  template <class From>
  __device__ __forceinline__ static To apply(From v) { return static_cast<To>(v); }
};
template <>
struct AtConvert<__half> {
  template <class From>
  __device__ __forceinline__ static __half apply(From v) {
    return at_float2half(static_cast<float>(v));
  }
};
template <>
struct AtConvert<__nv_bfloat16> {
  template <class From>
  __device__ __forceinline__ static __nv_bfloat16 apply(From v) {
    return at_float2bfloat16(static_cast<float>(v));
  }
};
template <>
struct AtConvert<unsigned char> {
  template <class From>
  __device__ __forceinline__ static unsigned char apply(From v) {
    return static_cast<unsigned char>(static_cast<long long>(v));
  }
};

// `c10::convert<To>(v)` for any pair of the ten dtypes.
template <class To, class From>
__device__ __forceinline__ To at_convert(From v) {
  return AtConvert<To>::apply(at_upcast(v));
}

// Copying a 16-bit float into itself keeps its bits (a NaN's payload too),
// as a byte copy in PyTorch does.
template <>
__device__ __forceinline__ __half at_convert<__half, __half>(__half v) { return v; }
template <>
__device__ __forceinline__ __nv_bfloat16 at_convert<__nv_bfloat16, __nv_bfloat16>(__nv_bfloat16 v) {
  return v;
}

template <class T>
struct AtIsFloat {
  static constexpr bool value = false;
};
template <>
struct AtIsFloat<float> {
  static constexpr bool value = true;
};
template <>
struct AtIsFloat<double> {
  static constexpr bool value = true;
};

template <class T>
struct AtIsBool {
  static constexpr bool value = false;
};
template <>
struct AtIsBool<bool> {
  static constexpr bool value = true;
};

// v < 0, without NVRTC's "pointless comparison" warning on unsigned types.
template <class T>
__device__ __forceinline__ bool at_negative(T v) {
  if constexpr (T(-1) < T(0)) {
    return v < T(0);
  } else {
    return false;
  }
}

template <class T>
__device__ __forceinline__ bool at_isnan(T v) {
  if constexpr (AtIsFloat<T>::value) {
    return v != v;
  } else {
    return false;
  }
}

// The lowest and highest values of a compute type (infinities for floats):
// the identities of max and min.
template <class T>
struct AtLimits;
template <>
struct AtLimits<float> {
  __device__ __forceinline__ static float lowest() { return __int_as_float(0xff800000); }
  __device__ __forceinline__ static float highest() { return __int_as_float(0x7f800000); }
};
template <>
struct AtLimits<double> {
  __device__ __forceinline__ static double lowest() {
    return __longlong_as_double(0xfff0000000000000ULL);
  }
  __device__ __forceinline__ static double highest() {
    return __longlong_as_double(0x7ff0000000000000ULL);
  }
};
template <>
struct AtLimits<signed char> {
  __device__ __forceinline__ static signed char lowest() { return -128; }
  __device__ __forceinline__ static signed char highest() { return 127; }
};
template <>
struct AtLimits<unsigned char> {
  __device__ __forceinline__ static unsigned char lowest() { return 0; }
  __device__ __forceinline__ static unsigned char highest() { return 255; }
};
template <>
struct AtLimits<short> {
  __device__ __forceinline__ static short lowest() { return -32768; }
  __device__ __forceinline__ static short highest() { return 32767; }
};
template <>
struct AtLimits<int> {
  __device__ __forceinline__ static int lowest() { return -2147483647 - 1; }
  __device__ __forceinline__ static int highest() { return 2147483647; }
};
template <>
struct AtLimits<long long> {
  __device__ __forceinline__ static long long lowest() { return -9223372036854775807LL - 1; }
  __device__ __forceinline__ static long long highest() { return 9223372036854775807LL; }
};
template <>
struct AtLimits<bool> {
  __device__ __forceinline__ static bool lowest() { return false; }
  __device__ __forceinline__ static bool highest() { return true; }
};

// Warp shuffles of any compute type: types narrower than int travel as int
// (integral promotion picks the int overload) and come back truncated.
template <class T>
__device__ __forceinline__ T at_shfl_down(T v, int offset) {
  return static_cast<T>(__shfl_down_sync(0xffffffffu, v, offset));
}
template <class T>
__device__ __forceinline__ T at_shfl_up(T v, int offset) {
  return static_cast<T>(__shfl_up_sync(0xffffffffu, v, offset));
}

// Reduces `v` across the block with `ops.combine`, one warp shuffle tree per
// warp and then one over the warps' partials. The result is valid in thread
// 0 only. Every thread of the block must call it (it synchronises), and the
// block size must be a multiple of 32, at most 1024.
template <class Ops>
__device__ __forceinline__ typename Ops::acc_t at_block_reduce(typename Ops::acc_t v, const Ops& ops) {
  typedef typename Ops::acc_t A;
  __shared__ A partials[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = ops.combine(v, ops.shfl_down(v, offset));
  }
  // A previous call may still be reading the partials.
  __syncthreads();
  if (lane == 0) {
    partials[warp] = v;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x >> 5;
    v = lane < warps ? partials[lane] : ops.identity();
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      v = ops.combine(v, ops.shfl_down(v, offset));
    }
  }
  return v;
}

// `at_block_reduce` with the result handed to every thread of the block.
template <class Ops>
__device__ __forceinline__ typename Ops::acc_t at_block_allreduce(typename Ops::acc_t v, const Ops& ops) {
  __shared__ typename Ops::acc_t result;
  v = at_block_reduce(v, ops);
  if (threadIdx.x == 0) {
    result = v;
  }
  __syncthreads();
  v = result;
  // The next call's thread 0 must not overwrite `result` before every
  // thread has read it.
  __syncthreads();
  return v;
}

// Welford's running mean and sum of squared deviations, shared by var and
// layer_norm; `count` is a float of the accumulate type, as PyTorch's
// WelfordData.nf.
template <class A>
struct at_welford {
  A mean;
  A m2;
  A count;
};

template <class A>
struct at_welford_ops {
  typedef at_welford<A> acc_t;
  typedef A in_t;
  __device__ __forceinline__ acc_t identity() const {
    acc_t w;
    w.mean = A(0);
    w.m2 = A(0);
    w.count = A(0);
    return w;
  }
  __device__ __forceinline__ acc_t reduce(acc_t acc, A x, long long) const {
    const A count = acc.count + A(1);
    const A delta = x - acc.mean;
    const A mean = acc.mean + delta / count;
    acc.m2 += delta * (x - mean);
    acc.mean = mean;
    acc.count = count;
    return acc;
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const {
    if (a.count == A(0)) {
      return b;
    }
    if (b.count == A(0)) {
      return a;
    }
    const A delta = b.mean - a.mean;
    const A count = a.count + b.count;
    const A nb_over_n = b.count / count;
    acc_t r;
    r.mean = a.mean + delta * nb_over_n;
    r.m2 = a.m2 + b.m2 + delta * delta * a.count * nb_over_n;
    r.count = count;
    return r;
  }
  __device__ __forceinline__ acc_t shfl_down(acc_t a, int offset) const {
    acc_t r;
    r.mean = at_shfl_down(a.mean, offset);
    r.m2 = at_shfl_down(a.m2, offset);
    r.count = at_shfl_down(a.count, offset);
    return r;
  }
};
