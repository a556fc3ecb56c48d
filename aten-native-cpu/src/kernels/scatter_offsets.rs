//! Updating the elements at a list of storage offsets of a tensor in
//! place: the write loop behind `index_put_`, the scatter family and
//! `masked_scatter_` (the counterpart of [`super::gather_offsets`]).
//! Values arrive in memory the kernel owns (read from their tensors
//! beforehand), so the destination's storage is the only one borrowed;
//! every offset is checked against that storage first.

use c10_core::{Element, Error, Result, StorageBorrow, TensorLayout};

/// For `i` in order, `element[offsets[i]] = combine(element[offsets[i]],
/// value(i))` in `dst`'s storage (`dst` is the snapshot of the layout the
/// offsets were computed from; its elements are `T`s). Repeated offsets
/// combine in order (the last assignment wins, sums accumulate).
pub(crate) fn update_offsets<T: Element, V>(
    dst: &TensorLayout,
    offsets: &[i64],
    value: impl Fn(usize) -> V,
    mut combine: impl FnMut(T, V) -> T,
) -> Result<()> {
    if offsets.is_empty() {
        return Ok(());
    }
    if dst.itemsize() != std::mem::size_of::<T>() {
        return Err(Error::internal(
            "update_offsets: the element type differs from the tensor's",
        ));
    }
    let available = (dst.storage().nbytes() / dst.itemsize()) as i64;
    if offsets.iter().any(|&o| o < 0 || o >= available) {
        return Err(Error::internal(
            "update_offsets: offset outside the storage",
        ));
    }
    StorageBorrow::hold([(dst.storage(), true)], || {
        let base = dst
            .storage()
            .data_ptr()
            .ok_or_else(|| Error::runtime("tensor has no data"))?
            .as_ptr() as *mut T;
        for (i, &off) in offsets.iter().enumerate() {
            // SAFETY: `off` was checked to index an element of the storage
            // (kept alive by `dst`), which holds `T`s (the caller's dtype
            // dispatch, width checked above); the exclusive borrow keeps
            // every other reader and writer away, and the values come from
            // memory the caller owns, not from this storage.
            unsafe {
                let p = base.add(off as usize);
                *p = combine(*p, value(i));
            }
        }
        Ok(())
    })?
}
