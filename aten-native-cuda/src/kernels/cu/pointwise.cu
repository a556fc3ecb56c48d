// Element-wise kernels: the loops (contiguous and strided) and the
// operators they apply, with PyTorch's CUDA semantics.
//
// A rendered source instantiates one loop with one operator in an
// `extern "C"` entry point. Operators are functors templated on the compute
// type `C` (float for the 16-bit floats, the dtype itself otherwise): the
// loop converts every input element to `C` with `at_convert`, applies the
// operator, and converts its result to the output type.
//
// Launch contract: any grid and block size; the loops are grid-stride.
// Contiguous loops take a 64-bit element count and vectorise by 4 elements
// when every pointer is aligned to 4 elements (a uniform test per launch),
// finishing with a scalar tail. Strided loops take a 32-bit element count
// and an `at_strided_params` (dims innermost first, element strides, operand
// 0 the output); they require every offset to stay below 2^31 and the grid
// to hold at most 2^31 threads, so that the 32-bit index never wraps.

#define AT_VEC 4

template <class T, int N>
struct alignas(sizeof(T) * N) at_vec {
  T val[N];
};

template <class T>
__device__ __forceinline__ bool at_vec_aligned(const T* p) {
  return reinterpret_cast<unsigned long long>(p) % (sizeof(T) * AT_VEC) == 0;
}

// Sizes and strides of a strided launch. `magic` and `shift` make dividing
// by `sizes[d]` a multiply-high and a shift (PyTorch's `IntDivider`):
// n / d == (umulhi(n, magic) + n) >> shift for every n below 2^31.
struct at_strided_params {
  unsigned int sizes[8];
  unsigned int magic[8];
  unsigned int shift[8];
  unsigned int strides[8][4];
};

// The element offsets of linear index `linear` for the first NARGS operands.
template <int NDIM, int NARGS>
__device__ __forceinline__ void at_offsets(const at_strided_params& p, unsigned int linear,
                                           unsigned int (&off)[NARGS]) {
#pragma unroll
  for (int k = 0; k < NARGS; ++k) {
    off[k] = 0;
  }
#pragma unroll
  for (int d = 0; d < NDIM; ++d) {
    const unsigned int q = (__umulhi(linear, p.magic[d]) + linear) >> p.shift[d];
    const unsigned int r = linear - q * p.sizes[d];
#pragma unroll
    for (int k = 0; k < NARGS; ++k) {
      off[k] += r * p.strides[d][k];
    }
    linear = q;
  }
}

__device__ __forceinline__ long long at_first_index() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long at_grid_step() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
}

// ---------------------------------------------------------------- loops

template <class Out, class C, class In, class Op>
__device__ __forceinline__ void at_unary_contig(Out* __restrict__ out, const In* __restrict__ in,
                                                long long n, Op op) {
  const long long first = at_first_index();
  const long long step = at_grid_step();
  long long done = 0;
  if (at_vec_aligned(out) && at_vec_aligned(in)) {
    const long long nvec = n / AT_VEC;
    for (long long v = first; v < nvec; v += step) {
      const at_vec<In, AT_VEC> x = reinterpret_cast<const at_vec<In, AT_VEC>*>(in)[v];
      at_vec<Out, AT_VEC> y;
#pragma unroll
      for (int k = 0; k < AT_VEC; ++k) {
        y.val[k] = at_convert<Out>(op(at_convert<C>(x.val[k])));
      }
      reinterpret_cast<at_vec<Out, AT_VEC>*>(out)[v] = y;
    }
    done = nvec * AT_VEC;
  }
  for (long long i = done + first; i < n; i += step) {
    out[i] = at_convert<Out>(op(at_convert<C>(in[i])));
  }
}

template <int NDIM, class Out, class C, class In, class Op>
__device__ __forceinline__ void at_unary_strided(Out* __restrict__ out, const In* __restrict__ in,
                                                 unsigned int n, const at_strided_params& p, Op op) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    unsigned int off[2];
    at_offsets<NDIM, 2>(p, i, off);
    out[off[0]] = at_convert<Out>(op(at_convert<C>(in[off[1]])));
  }
}

template <class Out, class C, class In, class Op>
__device__ __forceinline__ void at_binary_contig(Out* __restrict__ out, const In* __restrict__ a,
                                                 const In* __restrict__ b, long long n, Op op) {
  const long long first = at_first_index();
  const long long step = at_grid_step();
  long long done = 0;
  if (at_vec_aligned(out) && at_vec_aligned(a) && at_vec_aligned(b)) {
    const long long nvec = n / AT_VEC;
    for (long long v = first; v < nvec; v += step) {
      const at_vec<In, AT_VEC> x = reinterpret_cast<const at_vec<In, AT_VEC>*>(a)[v];
      const at_vec<In, AT_VEC> z = reinterpret_cast<const at_vec<In, AT_VEC>*>(b)[v];
      at_vec<Out, AT_VEC> y;
#pragma unroll
      for (int k = 0; k < AT_VEC; ++k) {
        y.val[k] = at_convert<Out>(op(at_convert<C>(x.val[k]), at_convert<C>(z.val[k])));
      }
      reinterpret_cast<at_vec<Out, AT_VEC>*>(out)[v] = y;
    }
    done = nvec * AT_VEC;
  }
  for (long long i = done + first; i < n; i += step) {
    out[i] = at_convert<Out>(op(at_convert<C>(a[i]), at_convert<C>(b[i])));
  }
}

template <int NDIM, class Out, class C, class In, class Op>
__device__ __forceinline__ void at_binary_strided(Out* __restrict__ out, const In* __restrict__ a,
                                                  const In* __restrict__ b, unsigned int n,
                                                  const at_strided_params& p, Op op) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    unsigned int off[3];
    at_offsets<NDIM, 3>(p, i, off);
    out[off[0]] = at_convert<Out>(op(at_convert<C>(a[off[1]]), at_convert<C>(b[off[2]])));
  }
}

// `where(cond, x, y)`: a selection, so no conversion at all.
template <class T>
__device__ __forceinline__ void at_where_contig(T* __restrict__ out, const bool* __restrict__ cond,
                                                const T* __restrict__ x, const T* __restrict__ y,
                                                long long n) {
  const long long first = at_first_index();
  const long long step = at_grid_step();
  long long done = 0;
  if (at_vec_aligned(out) && at_vec_aligned(cond) && at_vec_aligned(x) && at_vec_aligned(y)) {
    const long long nvec = n / AT_VEC;
    for (long long v = first; v < nvec; v += step) {
      const at_vec<bool, AT_VEC> c = reinterpret_cast<const at_vec<bool, AT_VEC>*>(cond)[v];
      const at_vec<T, AT_VEC> xv = reinterpret_cast<const at_vec<T, AT_VEC>*>(x)[v];
      const at_vec<T, AT_VEC> yv = reinterpret_cast<const at_vec<T, AT_VEC>*>(y)[v];
      at_vec<T, AT_VEC> r;
#pragma unroll
      for (int k = 0; k < AT_VEC; ++k) {
        r.val[k] = c.val[k] ? xv.val[k] : yv.val[k];
      }
      reinterpret_cast<at_vec<T, AT_VEC>*>(out)[v] = r;
    }
    done = nvec * AT_VEC;
  }
  for (long long i = done + first; i < n; i += step) {
    out[i] = cond[i] ? x[i] : y[i];
  }
}

template <int NDIM, class T>
__device__ __forceinline__ void at_where_strided(T* __restrict__ out, const bool* __restrict__ cond,
                                                 const T* __restrict__ x, const T* __restrict__ y,
                                                 unsigned int n, const at_strided_params& p) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    unsigned int off[4];
    at_offsets<NDIM, 4>(p, i, off);
    out[off[0]] = cond[off[1]] ? x[off[2]] : y[off[3]];
  }
}

template <class T>
__device__ __forceinline__ void at_fill_contig(T* __restrict__ out, long long n, T value) {
  const long long first = at_first_index();
  const long long step = at_grid_step();
  long long done = 0;
  if (at_vec_aligned(out)) {
    const long long nvec = n / AT_VEC;
    at_vec<T, AT_VEC> r;
#pragma unroll
    for (int k = 0; k < AT_VEC; ++k) {
      r.val[k] = value;
    }
    for (long long v = first; v < nvec; v += step) {
      reinterpret_cast<at_vec<T, AT_VEC>*>(out)[v] = r;
    }
    done = nvec * AT_VEC;
  }
  for (long long i = done + first; i < n; i += step) {
    out[i] = value;
  }
}

template <int NDIM, class T>
__device__ __forceinline__ void at_fill_strided(T* __restrict__ out, unsigned int n,
                                                const at_strided_params& p, T value) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    unsigned int off[1];
    at_offsets<NDIM, 1>(p, i, off);
    out[off[0]] = value;
  }
}

// ---------------------------------------------------------- unary operators

// The dtype-converting copy: `C` is the input type itself, so the value
// goes straight from the input to the output type.
template <class C>
struct op_identity {
  __device__ __forceinline__ C operator()(C a) const { return a; }
};

template <class C>
struct op_neg {
  __device__ __forceinline__ C operator()(C a) const { return static_cast<C>(-a); }
};

template <class C>
struct op_abs {
  __device__ __forceinline__ C operator()(C a) const {
    if constexpr (AtIsFloat<C>::value) {
      return fabs(a);
    } else {
      return at_negative(a) ? static_cast<C>(-a) : a;
    }
  }
};

// (0 < a) - (a < 0): zero for zero and NaN, as in PyTorch's CUDA kernel.
template <class C>
struct op_sign {
  __device__ __forceinline__ C operator()(C a) const {
    if constexpr (AtIsFloat<C>::value) {
      return static_cast<C>((C(0) < a) - (a < C(0)));
    } else {
      return static_cast<C>(static_cast<int>(C(0) < a) - static_cast<int>(at_negative(a)));
    }
  }
};

#define AT_FLOAT_UNARY(NAME, EXPR)                                 \
  template <class C>                                               \
  struct NAME {                                                    \
    __device__ __forceinline__ C operator()(C a) const { return EXPR; } \
  };

AT_FLOAT_UNARY(op_exp, exp(a))
AT_FLOAT_UNARY(op_expm1, expm1(a))
AT_FLOAT_UNARY(op_log, log(a))
AT_FLOAT_UNARY(op_log1p, log1p(a))
AT_FLOAT_UNARY(op_log2, log2(a))
AT_FLOAT_UNARY(op_sqrt, sqrt(a))
AT_FLOAT_UNARY(op_rsqrt, rsqrt(a))
AT_FLOAT_UNARY(op_reciprocal, C(1) / a)
AT_FLOAT_UNARY(op_sin, sin(a))
AT_FLOAT_UNARY(op_cos, cos(a))
AT_FLOAT_UNARY(op_tan, tan(a))
AT_FLOAT_UNARY(op_tanh, tanh(a))
AT_FLOAT_UNARY(op_sigmoid, C(1) / (C(1) + exp(-a)))
AT_FLOAT_UNARY(op_erf, erf(a))
// gelu(approximate='none'): x * 0.5 * (1 + erf(x / sqrt(2))).
AT_FLOAT_UNARY(op_gelu_erf, a * C(0.5) * (C(1) + erf(a * C(0.70710678118654752440))))
// silu: x / (1 + exp(-x)).
AT_FLOAT_UNARY(op_silu, a / (C(1) + exp(-a)))

// gelu(approximate='tanh'): 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
template <class C>
struct op_gelu_tanh {
  __device__ __forceinline__ C operator()(C a) const {
    const C beta = C(0.79788456080286535588);
    const C kappa = C(0.044715);
    const C cube = a * a * a;
    return C(0.5) * a * (C(1) + tanh(beta * (a + kappa * cube)));
  }
};

// relu is clamp_min(x, 0): NaN stays NaN.
template <class C>
struct op_relu {
  __device__ __forceinline__ C operator()(C a) const {
    if (at_isnan(a)) {
      return a;
    }
    return a > C(0) ? a : C(0);
  }
};

// Rounding: the identity on integers, as PyTorch's integer overloads are.
#define AT_ROUNDING_UNARY(NAME, FN)                                  \
  template <class C>                                                 \
  struct NAME {                                                      \
    __device__ __forceinline__ C operator()(C a) const {             \
      if constexpr (AtIsFloat<C>::value) {                           \
        return FN(a);                                                \
      } else {                                                       \
        return a;                                                    \
      }                                                              \
    }                                                                \
  };

AT_ROUNDING_UNARY(op_floor, floor)
AT_ROUNDING_UNARY(op_ceil, ceil)
AT_ROUNDING_UNARY(op_trunc, trunc)
// Half to even, in the current (nearest) rounding mode.
AT_ROUNDING_UNARY(op_round, nearbyint)

template <class C>
struct op_logical_not {
  __device__ __forceinline__ bool operator()(C a) const { return !static_cast<bool>(a); }
};

template <class C>
struct op_bitwise_not {
  __device__ __forceinline__ C operator()(C a) const {
    if constexpr (AtIsBool<C>::value) {
      return !a;
    } else {
      return static_cast<C>(~a);
    }
  }
};

// clamp(x, lo, hi) with scalar bounds: NaN inputs propagate; the bounds go
// through max and min (fmax/fmin for floats, which ignore a NaN bound, as on
// PyTorch's CUDA). A missing bound is passed as the type's lowest or highest
// value.
template <class C>
struct op_clamp {
  C lo;
  C hi;
  __device__ __forceinline__ C operator()(C a) const {
    if constexpr (AtIsFloat<C>::value) {
      if (a != a) {
        return a;
      }
      return fmin(fmax(a, lo), hi);
    } else {
      const C t = a < lo ? lo : a;
      return t > hi ? hi : t;
    }
  }
};

// --------------------------------------------------------- binary operators

template <class C>
struct op_add {
  C alpha;
  __device__ __forceinline__ C operator()(C a, C b) const { return static_cast<C>(a + alpha * b); }
};

template <class C>
struct op_sub {
  C alpha;
  __device__ __forceinline__ C operator()(C a, C b) const { return static_cast<C>(a - alpha * b); }
};

template <class C>
struct op_mul {
  __device__ __forceinline__ C operator()(C a, C b) const { return static_cast<C>(a * b); }
};

template <class C>
struct op_div_true {
  __device__ __forceinline__ C operator()(C a, C b) const { return a / b; }
};

template <class C>
struct op_div_trunc {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if constexpr (AtIsFloat<C>::value) {
      return trunc(a / b);
    } else {
      return static_cast<C>(a / b);
    }
  }
};

// PyTorch's `div_floor_floating` and `div_floor_integer`.
template <class C>
struct op_div_floor {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if constexpr (AtIsFloat<C>::value) {
      if (b == C(0)) {
        return a / b;
      }
      const C mod = fmod(a, b);
      C div = (a - mod) / b;
      if ((mod != C(0)) && ((b < C(0)) != (mod < C(0)))) {
        div -= C(1);
      }
      if (div != C(0)) {
        C floordiv = floor(div);
        if (div - floordiv > C(0.5)) {
          floordiv += C(1);
        }
        return floordiv;
      }
      return copysign(C(0), a / b);
    } else {
      if (at_negative(a) != at_negative(b)) {
        const C quot = static_cast<C>(a / b);
        const C rem = static_cast<C>(a % b);
        return rem ? static_cast<C>(quot - 1) : quot;
      }
      return static_cast<C>(a / b);
    }
  }
};

// Python's modulus: the result takes the divisor's sign.
template <class C>
struct op_remainder {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if constexpr (AtIsFloat<C>::value) {
      C mod = fmod(a, b);
      if ((mod != C(0)) && ((b < C(0)) != (mod < C(0)))) {
        mod += b;
      }
      return mod;
    } else {
      C r = static_cast<C>(a % b);
      if ((r != C(0)) && (at_negative(r) != at_negative(b))) {
        r = static_cast<C>(r + b);
      }
      return r;
    }
  }
};

// C's modulus: the result takes the dividend's sign.
template <class C>
struct op_fmod {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if constexpr (AtIsFloat<C>::value) {
      return fmod(a, b);
    } else {
      return static_cast<C>(a % b);
    }
  }
};

template <class C>
struct op_maximum {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if (at_isnan(a)) {
      return a;
    }
    if (at_isnan(b)) {
      return b;
    }
    return a > b ? a : b;
  }
};

template <class C>
struct op_minimum {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if (at_isnan(a)) {
      return a;
    }
    if (at_isnan(b)) {
      return b;
    }
    return a < b ? a : b;
  }
};

// Integer powers by squaring; a negative exponent gives 1 / a rounded
// towards zero, as PyTorch's `powi` does.
template <class C>
struct op_pow {
  __device__ __forceinline__ C operator()(C a, C b) const {
    if constexpr (AtIsFloat<C>::value) {
      return pow(a, b);
    } else {
      if (at_negative(b)) {
        if (a == C(1)) {
          return C(1);
        }
        if (a == static_cast<C>(-1)) {
          return (b % 2) ? static_cast<C>(-1) : C(1);
        }
        return C(0);
      }
      C result = 1;
      while (b) {
        if (b & 1) {
          result = static_cast<C>(result * a);
        }
        b = static_cast<C>(b / 2);
        a = static_cast<C>(a * a);
      }
      return result;
    }
  }
};

template <class C>
struct op_atan2 {
  __device__ __forceinline__ C operator()(C a, C b) const { return atan2(a, b); }
};

template <class C>
struct op_bitwise_and {
  __device__ __forceinline__ C operator()(C a, C b) const { return static_cast<C>(a & b); }
};

template <class C>
struct op_bitwise_or {
  __device__ __forceinline__ C operator()(C a, C b) const { return static_cast<C>(a | b); }
};

template <class C>
struct op_bitwise_xor {
  __device__ __forceinline__ C operator()(C a, C b) const { return static_cast<C>(a ^ b); }
};

template <class C>
struct op_logical_and {
  __device__ __forceinline__ bool operator()(C a, C b) const {
    return static_cast<bool>(a) && static_cast<bool>(b);
  }
};

template <class C>
struct op_logical_or {
  __device__ __forceinline__ bool operator()(C a, C b) const {
    return static_cast<bool>(a) || static_cast<bool>(b);
  }
};

template <class C>
struct op_logical_xor {
  __device__ __forceinline__ bool operator()(C a, C b) const {
    return static_cast<bool>(a) != static_cast<bool>(b);
  }
};

#define AT_COMPARISON(NAME, OP)                                                      \
  template <class C>                                                                 \
  struct NAME {                                                                      \
    __device__ __forceinline__ bool operator()(C a, C b) const { return a OP b; }    \
  };

AT_COMPARISON(op_eq, ==)
AT_COMPARISON(op_ne, !=)
AT_COMPARISON(op_lt, <)
AT_COMPARISON(op_le, <=)
AT_COMPARISON(op_gt, >)
AT_COMPARISON(op_ge, >=)
