// Row kernels over contiguous [rows, cols] matrices, one block per row:
// softmax and log_softmax along the last dimension, and layer_norm's
// forward with its per-row mean and rstd.
//
// Values accumulate in the accumulate type `A` (float for the 16-bit
// floats). Launch contract: a block size that is a multiple of 32, at most
// 1024; any grid size (blocks walk rows grid-stride).

template <class A>
struct at_max_ops {
  typedef A acc_t;
  __device__ __forceinline__ A identity() const { return AtLimits<A>::lowest(); }
  __device__ __forceinline__ A combine(A a, A b) const { return a > b ? a : b; }
  __device__ __forceinline__ A shfl_down(A a, int offset) const { return at_shfl_down(a, offset); }
};

template <class A>
struct at_add_ops {
  typedef A acc_t;
  __device__ __forceinline__ A identity() const { return A(0); }
  __device__ __forceinline__ A combine(A a, A b) const { return a + b; }
  __device__ __forceinline__ A shfl_down(A a, int offset) const { return at_shfl_down(a, offset); }
};

// softmax: exp(x - max) / sum(exp(x - max)); log_softmax: (x - max) -
// log(sum(exp(x - max))), PyTorch's epilogues. `Out` may be wider than
// `In` (softmax with half_to_float).
template <bool LOG, class Out, class In, class A>
__device__ __forceinline__ void at_softmax_rows(Out* __restrict__ out, const In* __restrict__ in,
                                                long long rows, long long cols) {
  const at_max_ops<A> max_ops{};
  const at_add_ops<A> add_ops{};
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const In* x = in + row * cols;
    Out* y = out + row * cols;
    A m = max_ops.identity();
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
      m = max_ops.combine(m, at_convert<A>(x[j]));
    }
    m = at_block_allreduce(m, max_ops);
    A sum = A(0);
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
      sum += exp(at_convert<A>(x[j]) - m);
    }
    sum = at_block_allreduce(sum, add_ops);
    if constexpr (LOG) {
      const A logsum = log(sum);
      for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        y[j] = at_convert<Out>(at_convert<A>(x[j]) - m - logsum);
      }
    } else {
      for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        y[j] = at_convert<Out>(exp(at_convert<A>(x[j]) - m) / sum);
      }
    }
  }
}

// native_layer_norm's forward over the last `cols` elements of each row:
// mean and rstd = rsqrt(max(var, 0) + eps) with the biased variance, both
// written in the accumulate type, and y = (x - mean) * rstd * weight +
// bias. `weight` and `bias` may be null (absent).
template <class T, class A>
__device__ __forceinline__ void at_layer_norm_rows(T* __restrict__ y, A* __restrict__ mean_out,
                                                   A* __restrict__ rstd_out, const T* __restrict__ x,
                                                   const T* __restrict__ weight,
                                                   const T* __restrict__ bias, long long rows,
                                                   long long cols, A eps) {
  const at_welford_ops<A> ops{};
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    at_welford<A> w = ops.identity();
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
      w = ops.reduce(w, at_convert<A>(xr[j]), j);
    }
    w = at_block_allreduce(w, ops);
    const A mean = w.mean;
    const A var = w.m2 / static_cast<A>(cols);
    const A rstd = rsqrt((var > A(0) ? var : A(0)) + eps);
    if (threadIdx.x == 0) {
      mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
      const A gamma = weight != nullptr ? at_convert<A>(weight[j]) : A(1);
      const A beta = bias != nullptr ? at_convert<A>(bias[j]) : A(0);
      yr[j] = at_convert<T>((at_convert<A>(xr[j]) - mean) * rstd * gamma + beta);
    }
  }
}
