// Reductions over one dimension, one block per output element.
//
// The input is viewed as [outer, reduce, inner] through element strides
// (`at_reduce_shape`); output element o = outer * inner_size + inner is
// written contiguously. Each block walks its outputs grid-stride; its
// threads stride over the reduced dimension, accumulate in the operator's
// accumulate type, and combine through `at_block_reduce` (warp shuffles,
// then one warp over the warps' partials).
//
// Operators follow PyTorch's ReduceOps shape: `identity`, `reduce` (fold one
// input element, with its index), `combine` (merge two partials),
// `project` (the partial to the output value) and `shfl_down`.
//
// Launch contract: a block size that is a multiple of 32, at most 1024; any
// grid size; `reduce_size` at least 1 for argmax, argmin, amax and amin
// (PyTorch refuses an empty reduction for those before launching).

struct at_reduce_shape {
  long long num_outputs;
  long long inner_size;
  long long outer_stride;
  long long inner_stride;
  long long reduce_size;
  long long reduce_stride;
};

template <class Out, class In, class Ops>
__device__ __forceinline__ void at_reduce_rows(Out* __restrict__ out, const In* __restrict__ in,
                                               const at_reduce_shape& s, const Ops& ops) {
  typedef typename Ops::acc_t A;
  typedef typename Ops::in_t C;
  for (long long o = blockIdx.x; o < s.num_outputs; o += gridDim.x) {
    const long long outer = o / s.inner_size;
    const long long inner = o - outer * s.inner_size;
    const In* base = in + outer * s.outer_stride + inner * s.inner_stride;
    A acc = ops.identity();
    for (long long r = threadIdx.x; r < s.reduce_size; r += blockDim.x) {
      acc = ops.reduce(acc, at_convert<C>(base[r * s.reduce_stride]), r);
    }
    acc = at_block_reduce(acc, ops);
    if (threadIdx.x == 0) {
      out[o] = at_convert<Out>(ops.project(acc));
    }
  }
}

// sum, prod and mean fold in the accumulate type `A` (float for the 16-bit
// floats, int64 for integers and bool), which is also their input type.
template <class A>
struct at_sum_ops {
  typedef A acc_t;
  typedef A in_t;
  __device__ __forceinline__ A identity() const { return A(0); }
  __device__ __forceinline__ A reduce(A acc, A v, long long) const { return acc + v; }
  __device__ __forceinline__ A combine(A a, A b) const { return a + b; }
  __device__ __forceinline__ A project(A a) const { return a; }
  __device__ __forceinline__ A shfl_down(A a, int offset) const { return at_shfl_down(a, offset); }
};

template <class A>
struct at_prod_ops {
  typedef A acc_t;
  typedef A in_t;
  __device__ __forceinline__ A identity() const { return A(1); }
  __device__ __forceinline__ A reduce(A acc, A v, long long) const { return acc * v; }
  __device__ __forceinline__ A combine(A a, A b) const { return a * b; }
  __device__ __forceinline__ A project(A a) const { return a; }
  __device__ __forceinline__ A shfl_down(A a, int offset) const { return at_shfl_down(a, offset); }
};

// The sum times `factor`, which the caller computes as PyTorch's
// MeanOps does: float(num_outputs) / float(numel).
template <class A>
struct at_mean_ops {
  typedef A acc_t;
  typedef A in_t;
  A factor;
  __device__ __forceinline__ A identity() const { return A(0); }
  __device__ __forceinline__ A reduce(A acc, A v, long long) const { return acc + v; }
  __device__ __forceinline__ A combine(A a, A b) const { return a + b; }
  __device__ __forceinline__ A project(A a) const { return a * factor; }
  __device__ __forceinline__ A shfl_down(A a, int offset) const { return at_shfl_down(a, offset); }
};

// amax and amin propagate NaN (PyTorch's MaxNanFunctor / MinNanFunctor).
template <class C>
struct at_amax_ops {
  typedef C acc_t;
  typedef C in_t;
  __device__ __forceinline__ C identity() const { return AtLimits<C>::lowest(); }
  __device__ __forceinline__ C combine(C a, C b) const { return (at_isnan(a) || a > b) ? a : b; }
  __device__ __forceinline__ C reduce(C acc, C v, long long) const { return combine(acc, v); }
  __device__ __forceinline__ C project(C a) const { return a; }
  __device__ __forceinline__ C shfl_down(C a, int offset) const { return at_shfl_down(a, offset); }
};

template <class C>
struct at_amin_ops {
  typedef C acc_t;
  typedef C in_t;
  __device__ __forceinline__ C identity() const { return AtLimits<C>::highest(); }
  __device__ __forceinline__ C combine(C a, C b) const { return (at_isnan(a) || a < b) ? a : b; }
  __device__ __forceinline__ C reduce(C acc, C v, long long) const { return combine(acc, v); }
  __device__ __forceinline__ C project(C a) const { return a; }
  __device__ __forceinline__ C shfl_down(C a, int offset) const { return at_shfl_down(a, offset); }
};

// A value and its index; index -1 marks the empty partial.
template <class C>
struct at_arg {
  C value;
  long long index;
};

// argmax / argmin: NaN counts as the extreme; ties go to the lowest index
// (PyTorch's greater_or_nan / less_or_nan).
template <class C, bool MAX>
struct at_arg_ops {
  typedef at_arg<C> acc_t;
  typedef C in_t;
  __device__ __forceinline__ acc_t identity() const {
    acc_t a;
    a.value = C(0);
    a.index = -1;
    return a;
  }
  __device__ __forceinline__ bool first_wins(const acc_t& a, const acc_t& b) const {
    if (at_isnan(a.value)) {
      return !at_isnan(b.value) || a.index < b.index;
    }
    if (at_isnan(b.value)) {
      return false;
    }
    if (a.value == b.value) {
      return a.index < b.index;
    }
    return MAX ? a.value > b.value : a.value < b.value;
  }
  __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const {
    if (a.index < 0) {
      return b;
    }
    if (b.index < 0) {
      return a;
    }
    return first_wins(a, b) ? a : b;
  }
  __device__ __forceinline__ acc_t reduce(acc_t acc, C v, long long index) const {
    acc_t b;
    b.value = v;
    b.index = index;
    return combine(acc, b);
  }
  __device__ __forceinline__ long long project(acc_t a) const { return a.index; }
  __device__ __forceinline__ acc_t shfl_down(acc_t a, int offset) const {
    acc_t r;
    r.value = at_shfl_down(a.value, offset);
    r.index = at_shfl_down(a.index, offset);
    return r;
  }
};

// any / all: every input element is tested against zero (NaN is true).
template <bool ANY>
struct at_any_all_ops {
  typedef bool acc_t;
  typedef bool in_t;
  __device__ __forceinline__ bool identity() const { return !ANY; }
  __device__ __forceinline__ bool combine(bool a, bool b) const { return ANY ? (a || b) : (a && b); }
  __device__ __forceinline__ bool reduce(bool acc, bool v, long long) const { return combine(acc, v); }
  __device__ __forceinline__ bool project(bool a) const { return a; }
  __device__ __forceinline__ bool shfl_down(bool a, int offset) const { return at_shfl_down(a, offset); }
};

// var(correction): m2 / max(count - correction, 0), so too few elements
// give inf or NaN, as in PyTorch.
template <class A>
struct at_var_ops : at_welford_ops<A> {
  double correction;
  __device__ __forceinline__ A project(at_welford<A> w) const {
    const A c = static_cast<A>(correction);
    const A divisor = w.count > c ? w.count - c : A(0);
    return w.m2 / divisor;
  }
};
