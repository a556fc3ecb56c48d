//! The `.pt2` zip archive: its entries, all under one top folder, read by
//! their path below it (`models/model.json`), with the format checks of
//! `torch.export.load` (`archive_format`, `byteorder`).
//!
//! A file is mapped into memory (privately: writes to a tensor made from it
//! never reach the file) and weight entries are lent to tensors in place
//! ([`Archive::lend`]), so a model's weights are never copied into a second
//! buffer; an entry that cannot be lent (misaligned, or bools, whose bytes
//! must be checked) is copied instead.

use std::any::Any;
use std::collections::HashSet;
use std::ptr::NonNull;
use std::sync::Arc;

use c10_core::{Error, Result, Storage};

use super::zip_file::{crc32, ZipEntry, ZipIndex};

/// Where an archive's bytes live.
enum Buffer {
    /// A private, copy-on-write mapping of the file.
    Mapped(#[allow(dead_code)] memmap2::MmapMut),
    /// Bytes in memory.
    Owned(#[allow(dead_code)] Vec<u8>),
}

/// An archive's bytes, addressed only through `base`: the buffer is never
/// touched again once `base` is taken (so that tensors lent parts of it
/// write through `base` alone).
struct Bytes {
    /// Keeps the memory alive; never read after `base` is taken.
    _buffer: Buffer,
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: `Bytes` owns its memory (a mapping or a vector, both `Send`);
// the pointer is only an address into it.
unsafe impl Send for Bytes {}
// SAFETY: shared access only reads `base` and `len`; the memory behind them
// is read through `Archive::data` for entries not lent, and written only by
// the storages lent disjoint entries, under their borrow flags.
unsafe impl Sync for Bytes {}

impl Bytes {
    fn new(mut buffer: Buffer) -> Bytes {
        let (base, len) = match &mut buffer {
            Buffer::Mapped(m) => (m.as_mut_ptr(), m.len()),
            Buffer::Owned(v) => (v.as_mut_ptr(), v.len()),
        };
        Bytes {
            base: NonNull::new(base).unwrap_or(NonNull::dangling()),
            len,
            _buffer: buffer,
        }
    }
}

/// An open `.pt2` archive.
pub(crate) struct Archive {
    bytes: Arc<Bytes>,
    index: ZipIndex,
    /// The top folder, with its trailing `/` (empty for an archive whose
    /// entries sit at the top).
    root: String,
    /// How errors name the archive (its path).
    label: String,
    /// Entries whose memory a storage now holds: never read again here.
    lent: HashSet<String>,
}

impl Archive {
    /// Opens the archive at `path`, mapped into memory (or read, where the
    /// file cannot be mapped).
    pub(crate) fn open(path: &std::path::Path) -> Result<Archive> {
        let label = path.display().to_string();
        let (file, len) = super::open_regular_file(path, &label)?;
        // SAFETY: a private mapping: writes through it never reach the file,
        // and the file is treated as immutable while the program lives (as
        // `torch.load(mmap=True)` treats it); nothing else in this process
        // maps it writable.
        let mapped = (len > 0)
            .then(|| unsafe { memmap2::MmapOptions::new().map_copy(&file) })
            .and_then(|m| m.ok());
        let buffer = match mapped {
            Some(m) => Buffer::Mapped(m),
            None => Buffer::Owned(super::read_regular_file(path, &label)?),
        };
        Archive::new(Bytes::new(buffer), label)
    }

    /// Reads an archive held in memory; `label` names it in errors.
    pub(crate) fn from_bytes(bytes: Vec<u8>, label: &str) -> Result<Archive> {
        Archive::new(Bytes::new(Buffer::Owned(bytes)), label.to_string())
    }

    fn new(bytes: Bytes, label: String) -> Result<Archive> {
        // SAFETY: nothing has been lent yet: the whole buffer is only read.
        let all = unsafe { std::slice::from_raw_parts(bytes.base.as_ptr(), bytes.len) };
        let index = ZipIndex::parse(all)
            .map_err(|e| Error::runtime(format!("{label}: not a zip archive: {e}")))?;
        // The top folder is the one holding `archive_format`.
        let root = index
            .names()
            .find_map(|n| {
                if n == "archive_format" {
                    Some(String::new())
                } else {
                    n.strip_suffix("/archive_format")
                        .filter(|r| !r.contains('/'))
                        .map(|r| format!("{r}/"))
                }
            })
            .ok_or_else(|| {
                Error::runtime(format!(
                    "{label}: not a .pt2 archive: no `archive_format` entry"
                ))
            })?;
        let archive = Archive {
            bytes: Arc::new(bytes),
            index,
            root,
            label,
            lent: HashSet::new(),
        };
        let format = archive.read_text("archive_format")?;
        if format.trim() != "pt2" {
            return Err(archive.error(format!(
                "unsupported archive format `{}` (expected `pt2`)",
                format.trim()
            )));
        }
        if archive.has("byteorder") {
            let order = archive.read_text("byteorder")?;
            if order.trim() != "little" {
                return Err(archive.error(format!(
                    "unsupported byte order `{}` (only `little` is supported)",
                    order.trim()
                )));
            }
        }
        Ok(archive)
    }

    /// An error about the archive.
    pub(crate) fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::runtime(format!("{}: {message}", self.label))
    }

    /// The archive's label (its path).
    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    /// Whether the entry `path` (below the top folder) exists.
    pub(crate) fn has(&self, path: &str) -> bool {
        self.index.get(&self.entry_name(path)).is_some()
    }

    /// The entries directly in `folder` (below the top folder), by name.
    pub(crate) fn files_in(&self, folder: &str) -> Vec<String> {
        let prefix = format!("{}{folder}/", self.root);
        self.index
            .names()
            .filter_map(|n| {
                n.strip_prefix(&prefix)
                    .filter(|rest| !rest.is_empty() && !rest.contains('/'))
                    .map(str::to_string)
            })
            .collect()
    }

    fn entry(&self, path: &str) -> Result<&ZipEntry> {
        let full = self.entry_name(path);
        self.index
            .get(&full)
            .ok_or_else(|| self.error(format!("missing entry `{full}`")))
    }

    /// The data of `entry`, which has not been lent.
    fn data(&self, entry: &ZipEntry) -> Result<&[u8]> {
        if self.lent.contains(&entry.name) {
            return Err(Error::internal(format!(
                "{}: entry `{}` is read after its memory was lent to a tensor",
                self.label, entry.name
            )));
        }
        // SAFETY: the index checked that the range lies inside the buffer;
        // the entry was not lent, and lent entries are disjoint from it (the
        // index refuses overlapping entries), so no storage writes these
        // bytes while the slice lives.
        Ok(unsafe {
            std::slice::from_raw_parts(self.bytes.base.as_ptr().add(entry.data_offset), entry.size)
        })
    }

    /// The bytes of the entry `path` (below the top folder), checked
    /// against the CRC-32 the archive records.
    pub(crate) fn read(&self, path: &str) -> Result<&[u8]> {
        let entry = self.entry(path)?;
        let data = self.data(entry)?;
        if crc32(data) != entry.crc32 {
            return Err(self.error(format!(
                "entry `{}`: CRC-32 mismatch (the archive is corrupt)",
                entry.name
            )));
        }
        Ok(data)
    }

    /// The entry `path` as UTF-8 text.
    pub(crate) fn read_text(&self, path: &str) -> Result<&str> {
        let bytes = self.read(path)?;
        std::str::from_utf8(bytes)
            .map_err(|_| self.error(format!("entry `{}{path}` is not UTF-8 text", self.root)))
    }

    /// A storage over the bytes of the entry `path` in place, or `None`
    /// when they are not aligned as a storage must be (then read and copy
    /// them). Each entry is lent once; it cannot be read afterwards.
    pub(crate) fn lend(&mut self, path: &str) -> Result<Option<Storage>> {
        let entry = self.entry(path)?.clone();
        if self.lent.contains(&entry.name) {
            return Err(Error::internal(format!(
                "{}: entry `{}` is lent twice",
                self.label, entry.name
            )));
        }
        // SAFETY: `data_offset` lies inside the buffer (checked by the index).
        let ptr = unsafe { self.bytes.base.add(entry.data_offset) };
        if !(ptr.as_ptr() as usize).is_multiple_of(c10_core::storage::ALIGNMENT) {
            return Ok(None);
        }
        let owner: Arc<dyn Any + Send + Sync> = self.bytes.clone();
        // SAFETY: the range lies inside the buffer, which `owner` keeps
        // alive; it is initialized (file or vector bytes) and writable (a
        // private mapping or an owned vector). No other storage covers it:
        // entries are disjoint and each is lent once, and the archive reads
        // no lent entry again (`lent`, checked by `data`).
        let storage = unsafe { Storage::from_external_cpu(ptr, entry.size, owner)? };
        self.lent.insert(entry.name);
        Ok(Some(storage))
    }

    /// The full name of the entry `path`, for messages.
    pub(crate) fn entry_name(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::zip_file::tests::write_zip;

    fn archive_file(name: &str, entries: &[(&str, &[u8])]) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("aten-fx-{}-{name}.pt2", std::process::id()));
        std::fs::write(&path, write_zip(entries, true)).unwrap();
        path
    }

    #[test]
    fn weights_are_lent_in_place_once_and_never_read_again() {
        let weights: Vec<u8> = (0..64u8).collect();
        let path = archive_file(
            "lend",
            &[("m/archive_format", b"pt2"), ("m/data/weights/w", &weights)],
        );
        let mut archive = Archive::open(&path).unwrap();
        let storage = archive
            .lend("data/weights/w")
            .unwrap()
            .expect("aligned in the map");
        assert_eq!(storage.nbytes(), 64);
        // The storage's bytes are the file's, in place.
        let ptr = storage.data_ptr().unwrap();
        // SAFETY: the storage is alive and nothing writes it in this test.
        let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), 64) };
        assert_eq!(bytes, &weights[..]);
        let e = archive.read("data/weights/w").unwrap_err();
        assert!(e.message().contains("after its memory was lent"), "{e}");
        let e = archive.lend("data/weights/w").unwrap_err();
        assert!(e.message().contains("lent twice"), "{e}");
        // Other entries are still read, checked against their CRC.
        assert_eq!(archive.read_text("archive_format").unwrap(), "pt2");
        drop(archive);
        // The storage outlives the archive: the mapping stays.
        // SAFETY: as above.
        let again = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), 64) };
        assert_eq!(again, &weights[..]);
        drop(storage);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_corrupt_entry_fails_its_crc() {
        let mut bytes = write_zip(
            &[("m/archive_format", b"pt2"), ("m/models/model.json", b"{}")],
            false,
        );
        let at = bytes.windows(2).rposition(|w| w == b"{}").unwrap();
        bytes[at] = b'[';
        let archive = Archive::from_bytes(bytes, "bad.pt2").unwrap();
        let e = archive.read("models/model.json").unwrap_err();
        assert!(e.message().contains("CRC-32 mismatch"), "{e}");
    }
}
