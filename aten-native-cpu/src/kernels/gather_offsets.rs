//! Copying the elements at a list of storage offsets into a fresh
//! contiguous tensor: the loop behind `flip`, `index_select`, `gather`,
//! `tril` and `triu`. Elements move as raw values of their width, so one
//! loop serves every dtype, and every offset is checked against the
//! storage first.

use c10_core::{Error, Result, StorageBorrow, TensorBase, TensorLayout};

use super::util::layout_of;

/// Writes element `offsets[i]` of `src`'s storage (a snapshot of the
/// layout the offsets were computed from) to element `i` of the fresh
/// contiguous `out`. Every offset is checked against the storage, so no
/// offset can read outside it.
pub(crate) fn gather_offsets(src: &TensorLayout, out: &TensorBase, offsets: &[i64]) -> Result<()> {
    if offsets.is_empty() {
        return Ok(());
    }
    let ol = layout_of(out)?;
    let width = src.itemsize();
    let available = (src.storage().nbytes() / width) as i64;
    if ol.numel() != offsets.len() as i64 || ol.itemsize() != width || !ol.is_contiguous() {
        return Err(Error::internal(
            "gather_offsets: output does not match the offsets",
        ));
    }
    if offsets.iter().any(|&o| o < 0 || o >= available) {
        return Err(Error::internal(
            "gather_offsets: offset outside the storage",
        ));
    }
    StorageBorrow::hold([(src.storage(), false), (ol.storage(), true)], || {
        let src_base = src
            .storage()
            .data_ptr()
            .ok_or_else(|| Error::runtime("tensor has no data"))?
            .as_ptr();
        let dst = ol
            .data_ptr()
            .ok_or_else(|| Error::runtime("tensor has no data"))?;
        macro_rules! copy_as {
            ($t:ty) => {{
                let (s, d) = (src_base as *const $t, dst as *mut $t);
                for (i, &off) in offsets.iter().enumerate() {
                    // SAFETY: every offset was checked to index an element
                    // of `src`'s storage (which `src` keeps alive); `out` is
                    // contiguous with `offsets.len()` elements of the same
                    // width; borrows are held (exclusive for `out`).
                    unsafe { *d.add(i) = *s.add(off as usize) };
                }
            }};
        }
        match width {
            1 => copy_as!(u8),
            2 => copy_as!(u16),
            4 => copy_as!(u32),
            8 => copy_as!(u64),
            16 => copy_as!(u128),
            w => return Err(Error::runtime(format!("unsupported element size {w}"))),
        }
        Ok(())
    })?
}

/// The storage offsets, in row-major order of the output, of a gather
/// that reads element `maps[0][i0], maps[1][i1], ...` of `src` for output
/// element `(i0, i1, ...)` (one index map per dimension of `src`, each
/// entry an index into that dimension). Fails when an entry lies outside
/// its dimension.
pub(crate) fn index_map_offsets(src: &TensorLayout, maps: &[Vec<i64>]) -> Result<Vec<i64>> {
    let (sizes, strides) = (src.sizes(), src.strides());
    if maps.len() != sizes.len() {
        return Err(Error::internal("index_map_offsets: one map per dimension"));
    }
    for (map, &size) in maps.iter().zip(sizes) {
        if map.iter().any(|&i| i < 0 || i >= size) {
            return Err(Error::internal(
                "index_map_offsets: index outside its dimension",
            ));
        }
    }
    // Every index is inside its dimension: each partial sum is the offset
    // of an element of the layout, inside its storage.
    let mut partial = vec![src.storage_offset()];
    for (map, &stride) in maps.iter().zip(strides) {
        let mut next = Vec::with_capacity(partial.len() * map.len());
        for &base in &partial {
            next.extend(map.iter().map(|&i| base + i * stride));
        }
        partial = next;
    }
    Ok(partial)
}
