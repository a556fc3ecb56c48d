//! The allocator's statistics, as `torch.cuda.memory_stats()` reports them:
//! [`Stat`] (current, peak, allocated and freed totals), [`StatType`] (all,
//! small pool, large pool), [`StatArray`] and [`DeviceStats`], with the
//! flattening into `memory_stats()`'s `"allocated_bytes.all.current"` keys.

use std::collections::BTreeMap;
use std::ops::{Index, IndexMut};

use super::size::PoolKind;

/// Converts a byte or block count to the `i64` PyTorch keeps statistics in;
/// no count the allocator sees comes near `i64::MAX`, and saturating keeps
/// a corrupt count from wrapping.
fn to_i64(amount: usize) -> i64 {
    i64::try_from(amount).unwrap_or(i64::MAX)
}

/// One statistic (PyTorch's `Stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    /// The current value.
    pub current: i64,
    /// The highest value since the last peak reset.
    pub peak: i64,
    /// The sum of all increases since the last reset of accumulated stats.
    pub allocated: i64,
    /// The sum of all decreases since the last reset of accumulated stats.
    pub freed: i64,
}

impl Stat {
    /// Adds `amount` to the current value.
    pub fn increase(&mut self, amount: usize) {
        let amount = to_i64(amount);
        self.current = self.current.saturating_add(amount);
        self.peak = self.peak.max(self.current);
        self.allocated = self.allocated.saturating_add(amount);
    }

    /// Subtracts `amount` from the current value.
    pub fn decrease(&mut self, amount: usize) {
        let amount = to_i64(amount);
        self.current = self.current.saturating_sub(amount);
        debug_assert!(
            self.current >= 0,
            "Negative tracked stat in CUDA allocator (likely logic error)."
        );
        self.freed = self.freed.saturating_add(amount);
    }

    /// Forgets the increase and decrease totals.
    pub fn reset_accumulated(&mut self) {
        self.allocated = 0;
        self.freed = 0;
    }

    /// Sets the peak to the current value.
    pub fn reset_peak(&mut self) {
        self.peak = self.current;
    }

    fn insert_into(&self, map: &mut BTreeMap<String, i64>, prefix: &str) {
        map.insert(format!("{prefix}.current"), self.current);
        map.insert(format!("{prefix}.peak"), self.peak);
        map.insert(format!("{prefix}.allocated"), self.allocated);
        map.insert(format!("{prefix}.freed"), self.freed);
    }
}

/// Which blocks a statistic counts (PyTorch's `StatType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatType {
    /// Every block (`"all"`).
    Aggregate,
    /// Blocks of the small pool (`"small_pool"`).
    SmallPool,
    /// Blocks of the large pool (`"large_pool"`).
    LargePool,
}

impl StatType {
    /// All kinds, in PyTorch's order.
    pub const ALL: [StatType; 3] = [
        StatType::Aggregate,
        StatType::SmallPool,
        StatType::LargePool,
    ];

    /// The name `memory_stats()` uses.
    pub fn name(self) -> &'static str {
        match self {
            StatType::Aggregate => "all",
            StatType::SmallPool => "small_pool",
            StatType::LargePool => "large_pool",
        }
    }

    fn index(self) -> usize {
        match self {
            StatType::Aggregate => 0,
            StatType::SmallPool => 1,
            StatType::LargePool => 2,
        }
    }
}

/// One statistic per [`StatType`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatArray([Stat; 3]);

impl StatArray {
    /// Adds `amount` to the aggregate and to `pool`'s statistic.
    pub fn increase(&mut self, pool: PoolKind, amount: usize) {
        self[StatType::Aggregate].increase(amount);
        self[pool_stat(pool)].increase(amount);
    }

    /// Subtracts `amount` from the aggregate and from `pool`'s statistic.
    pub fn decrease(&mut self, pool: PoolKind, amount: usize) {
        self[StatType::Aggregate].decrease(amount);
        self[pool_stat(pool)].decrease(amount);
    }

    /// Moves the statistic by the net change of `added` and `removed`.
    pub fn adjust(&mut self, pool: PoolKind, added: usize, removed: usize) {
        if added > removed {
            self.increase(pool, added - removed);
        } else if removed > added {
            self.decrease(pool, removed - added);
        }
    }

    fn for_each(&mut self, f: impl Fn(&mut Stat)) {
        self.0.iter_mut().for_each(f);
    }

    fn insert_into(&self, map: &mut BTreeMap<String, i64>, name: &str) {
        for kind in StatType::ALL {
            self[kind].insert_into(map, &format!("{name}.{}", kind.name()));
        }
    }
}

fn pool_stat(pool: PoolKind) -> StatType {
    match pool {
        PoolKind::Small => StatType::SmallPool,
        PoolKind::Large => StatType::LargePool,
    }
}

impl Index<StatType> for StatArray {
    type Output = Stat;

    fn index(&self, kind: StatType) -> &Stat {
        &self.0[kind.index()]
    }
}

impl IndexMut<StatType> for StatArray {
    fn index_mut(&mut self, kind: StatType) -> &mut Stat {
        &mut self.0[kind.index()]
    }
}

/// All statistics of one device's allocator (PyTorch's `DeviceStats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Number of blocks handed out by `malloc` and not yet freed.
    pub allocation: StatArray,
    /// Number of segments obtained from the device.
    pub segment: StatArray,
    /// Number of active blocks: allocated, or freed but still awaiting the
    /// events of the streams that used them.
    pub active: StatArray,
    /// Number of free blocks that are part of a split segment (these keep
    /// their segment from being released).
    pub inactive_split: StatArray,
    /// Bytes of the allocated blocks.
    pub allocated_bytes: StatArray,
    /// Bytes of the segments obtained from the device.
    pub reserved_bytes: StatArray,
    /// Bytes of the active blocks.
    pub active_bytes: StatArray,
    /// Bytes of the free blocks of split segments.
    pub inactive_split_bytes: StatArray,
    /// Bytes the callers asked for (before rounding) in the active blocks.
    pub requested_bytes: StatArray,
    /// Device allocations retried after releasing the cache.
    pub num_alloc_retries: i64,
    /// Requests that failed with out-of-memory.
    pub num_ooms: i64,
    /// Times every outstanding event was waited for (before releasing the
    /// cache).
    pub num_sync_all_streams: i64,
    /// Successful device allocations (`cudaMalloc`).
    pub num_device_alloc: i64,
    /// Device frees (`cudaFree`).
    pub num_device_free: i64,
    /// Allocations at or above the maximum split size; the maximum split
    /// size is unlimited here, so this stays zero, as in PyTorch's default
    /// configuration.
    pub oversize_allocations: Stat,
    /// Segments at or above the maximum split size (zero, see
    /// `oversize_allocations`).
    pub oversize_segments: Stat,
}

impl DeviceStats {
    /// Sets every peak to its current value (`reset_peak_memory_stats`).
    pub fn reset_peak(&mut self) {
        for array in self.arrays_mut() {
            array.for_each(Stat::reset_peak);
        }
        self.oversize_allocations.reset_peak();
        self.oversize_segments.reset_peak();
    }

    /// Forgets the accumulated totals and the event counters
    /// (`reset_accumulated_memory_stats`).
    pub fn reset_accumulated(&mut self) {
        for array in self.arrays_mut() {
            array.for_each(Stat::reset_accumulated);
        }
        self.num_alloc_retries = 0;
        self.num_ooms = 0;
        self.num_sync_all_streams = 0;
        self.num_device_alloc = 0;
        self.num_device_free = 0;
        self.oversize_allocations.reset_accumulated();
        self.oversize_segments.reset_accumulated();
    }

    fn arrays_mut(&mut self) -> [&mut StatArray; 9] {
        [
            &mut self.allocation,
            &mut self.segment,
            &mut self.active,
            &mut self.inactive_split,
            &mut self.allocated_bytes,
            &mut self.reserved_bytes,
            &mut self.active_bytes,
            &mut self.inactive_split_bytes,
            &mut self.requested_bytes,
        ]
    }

    /// The statistics flattened as `torch.cuda.memory_stats()` returns
    /// them: `"allocated_bytes.all.current"`, `"num_ooms"`, ..., sorted by
    /// key. `max_split_size` is `-1`, PyTorch's report of an unlimited one.
    pub fn to_memory_stats(&self) -> BTreeMap<String, i64> {
        let mut map = BTreeMap::new();
        let arrays = [
            ("allocation", &self.allocation),
            ("segment", &self.segment),
            ("active", &self.active),
            ("inactive_split", &self.inactive_split),
            ("allocated_bytes", &self.allocated_bytes),
            ("reserved_bytes", &self.reserved_bytes),
            ("active_bytes", &self.active_bytes),
            ("inactive_split_bytes", &self.inactive_split_bytes),
            ("requested_bytes", &self.requested_bytes),
        ];
        for (name, array) in arrays {
            array.insert_into(&mut map, name);
        }
        self.oversize_allocations
            .insert_into(&mut map, "oversize_allocations");
        self.oversize_segments
            .insert_into(&mut map, "oversize_segments");
        map.insert("num_alloc_retries".into(), self.num_alloc_retries);
        map.insert("num_ooms".into(), self.num_ooms);
        map.insert("num_sync_all_streams".into(), self.num_sync_all_streams);
        map.insert("num_device_alloc".into(), self.num_device_alloc);
        map.insert("num_device_free".into(), self.num_device_free);
        map.insert("max_split_size".into(), -1);
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_tracks_peak_and_totals() {
        let mut stat = Stat::default();
        stat.increase(10);
        stat.increase(5);
        stat.decrease(12);
        assert_eq!(
            stat,
            Stat {
                current: 3,
                peak: 15,
                allocated: 15,
                freed: 12
            }
        );
        stat.reset_peak();
        assert_eq!(stat.peak, 3);
        stat.reset_accumulated();
        assert_eq!((stat.allocated, stat.freed), (0, 0));
    }

    #[test]
    fn memory_stats_keys() {
        let mut stats = DeviceStats::default();
        stats.allocated_bytes.increase(PoolKind::Small, 512);
        let map = stats.to_memory_stats();
        assert_eq!(map["allocated_bytes.all.current"], 512);
        assert_eq!(map["allocated_bytes.small_pool.peak"], 512);
        assert_eq!(map["allocated_bytes.large_pool.current"], 0);
        assert_eq!(map["num_ooms"], 0);
        assert_eq!(map["max_split_size"], -1);
        // 9 arrays of 3 pools of 4 values, 2 oversize stats of 4, 6 scalars.
        assert_eq!(map.len(), 9 * 3 * 4 + 2 * 4 + 6);
    }
}
