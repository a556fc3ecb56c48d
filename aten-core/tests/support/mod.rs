//! Helpers the parallel tests share.

/// A `rayon` pool of `threads` threads.
pub fn pool_of(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}
