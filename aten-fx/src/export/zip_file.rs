//! The zip container of a `.pt2` archive, read from one buffer (a mapped
//! file or bytes in memory): the end-of-central-directory record (and its
//! zip64 form), the central directory (with zip64 extra fields), and each
//! entry's local header, all read once when the archive opens.
//!
//! `torch.export.save` stores every entry uncompressed (method 0), at a
//! 64-byte-aligned offset, with data descriptors (the sizes are in the
//! central directory, not the local header) and zip64 records. Entries are
//! found by the central directory, so padding between them (PyTorch's `FB`
//! extra fields) is never parsed as data. The data ranges of the entries
//! must be disjoint: the program lends weight entries to tensors, and an
//! overlap would give two tensors one memory.

use std::collections::HashMap;

/// One stored entry: where its data lies in the buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ZipEntry {
    /// The entry's full name (`model/data/weights/weight_0`).
    pub(crate) name: String,
    /// The offset of its first data byte.
    pub(crate) data_offset: usize,
    /// Its size in bytes.
    pub(crate) size: usize,
    /// The CRC-32 the central directory records.
    pub(crate) crc32: u32,
}

/// The entries of a zip archive, by name.
#[derive(Debug, Default)]
pub(crate) struct ZipIndex {
    entries: Vec<ZipEntry>,
    by_name: HashMap<String, usize>,
}

const EOCD: u32 = 0x0605_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;
/// The zip64 extended-information extra field.
const ZIP64_EXTRA: u16 = 0x0001;

/// Little-endian reads at checked offsets.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn slice(&self, at: usize, len: usize, what: &str) -> Result<&'a [u8], String> {
        at.checked_add(len)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or_else(|| format!("{what} at offset {at} runs past the end of the file"))
    }
    fn u16(&self, at: usize, what: &str) -> Result<u16, String> {
        let b = self.slice(at, 2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, at: usize, what: &str) -> Result<u32, String> {
        let b = self.slice(at, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&self, at: usize, what: &str) -> Result<u64, String> {
        let b = self.slice(at, 8, what)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }
}

fn to_usize(v: u64, what: &str) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("{what} {v} is too large"))
}

/// Where the central directory is and how many entries it holds.
struct Directory {
    offset: usize,
    size: usize,
    entries: usize,
}

/// Finds the end-of-central-directory record (the last one: a comment may
/// follow it) and, when it defers to zip64, the zip64 record.
fn directory(r: &Reader<'_>) -> Result<Directory, String> {
    let len = r.bytes.len();
    if len < 22 {
        return Err("too short for a zip archive (no end-of-central-directory record)".into());
    }
    // The record is 22 bytes plus a comment of at most 65,535.
    let lowest = len.saturating_sub(22 + 0xFFFF);
    let eocd = (lowest..=len - 22)
        .rev()
        .find(|&at| r.u32(at, "record").is_ok_and(|sig| sig == EOCD))
        .ok_or("no end-of-central-directory record")?;
    let disk = r.u16(eocd + 4, "end-of-central-directory record")?;
    let entries = r.u16(eocd + 10, "end-of-central-directory record")?;
    let size = r.u32(eocd + 12, "end-of-central-directory record")?;
    let offset = r.u32(eocd + 16, "end-of-central-directory record")?;
    let locator = eocd.checked_sub(20);
    let zip64 = locator.filter(|&at| r.u32(at, "zip64 locator").is_ok_and(|s| s == ZIP64_LOCATOR));
    if let Some(locator) = zip64 {
        let at = to_usize(r.u64(locator + 8, "zip64 locator")?, "zip64 record offset")?;
        if r.u32(at, "zip64 end-of-central-directory record")? != ZIP64_EOCD {
            return Err(format!(
                "the zip64 locator points at offset {at}, which holds no zip64 end-of-central-directory record"
            ));
        }
        let disks = r.u32(at + 16, "zip64 end-of-central-directory record")?;
        if disks != 0 {
            return Err("multi-disk zip archives are not supported".into());
        }
        return Ok(Directory {
            entries: to_usize(r.u64(at + 32, "zip64 record")?, "entry count")?,
            size: to_usize(r.u64(at + 40, "zip64 record")?, "central directory size")?,
            offset: to_usize(r.u64(at + 48, "zip64 record")?, "central directory offset")?,
        });
    }
    if disk != 0 {
        return Err("multi-disk zip archives are not supported".into());
    }
    if entries == 0xFFFF || size == 0xFFFF_FFFF || offset == 0xFFFF_FFFF {
        return Err(
            "the end-of-central-directory record defers to a zip64 record that is missing".into(),
        );
    }
    Ok(Directory {
        entries: entries.into(),
        size: to_usize(size.into(), "central directory size")?,
        offset: to_usize(offset.into(), "central directory offset")?,
    })
}

impl ZipIndex {
    /// Reads the directory of the zip archive held in `bytes`.
    pub(crate) fn parse(bytes: &[u8]) -> Result<ZipIndex, String> {
        let r = Reader { bytes };
        let dir = directory(&r)?;
        let end = dir
            .offset
            .checked_add(dir.size)
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| {
                format!(
                    "the central directory ({} bytes at offset {}) runs past the end of the file ({} bytes)",
                    dir.size,
                    dir.offset,
                    bytes.len()
                )
            })?;
        // Each central record takes at least 46 bytes: a count beyond what
        // the directory can hold is corrupt, not a reason to reserve memory.
        if dir.entries > dir.size / 46 {
            return Err(format!(
                "the central directory claims {} entries in {} bytes",
                dir.entries, dir.size
            ));
        }
        let mut index = ZipIndex::default();
        let mut at = dir.offset;
        for k in 0..dir.entries {
            let entry = index_entry(&r, &mut at, end, k)?;
            if index.by_name.insert(entry.name.clone(), k).is_some() {
                return Err(format!("entry `{}` appears twice", entry.name));
            }
            index.entries.push(entry);
        }
        index.check_disjoint()?;
        Ok(index)
    }

    /// No two entries' data share a byte.
    fn check_disjoint(&self) -> Result<(), String> {
        let mut order: Vec<&ZipEntry> = self.entries.iter().filter(|e| e.size > 0).collect();
        order.sort_by_key(|e| e.data_offset);
        for pair in order.windows(2) {
            if pair[0].data_offset + pair[0].size > pair[1].data_offset {
                return Err(format!(
                    "the data of entries `{}` and `{}` overlap",
                    pair[0].name, pair[1].name
                ));
            }
        }
        Ok(())
    }

    /// The entry named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&ZipEntry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// Every entry's name, in directory order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }
}

/// The central record at `*at` (the `k`-th), advancing past it; its local
/// header is read for where the data starts.
fn index_entry(r: &Reader<'_>, at: &mut usize, end: usize, k: usize) -> Result<ZipEntry, String> {
    let what = "central directory record";
    let here = *at;
    if here.checked_add(46).is_none_or(|e| e > end) || r.u32(here, what)? != CENTRAL {
        return Err(format!(
            "central directory record {k} at offset {here} is missing or corrupt"
        ));
    }
    let flags = r.u16(here + 8, what)?;
    let method = r.u16(here + 10, what)?;
    let crc32 = r.u32(here + 16, what)?;
    let mut compressed = u64::from(r.u32(here + 20, what)?);
    let mut size = u64::from(r.u32(here + 24, what)?);
    let name_len = usize::from(r.u16(here + 28, what)?);
    let extra_len = usize::from(r.u16(here + 30, what)?);
    let comment_len = usize::from(r.u16(here + 32, what)?);
    let mut local = u64::from(r.u32(here + 42, what)?);
    let name_bytes = r.slice(here + 46, name_len, what)?;
    let name = std::str::from_utf8(name_bytes)
        .map_err(|_| format!("the name of entry {k} is not UTF-8"))?
        .to_string();
    let extra = r.slice(here + 46 + name_len, extra_len, what)?;
    let next = here + 46 + name_len + extra_len + comment_len;
    if next > end {
        return Err(format!(
            "central directory record of `{name}` runs past the directory"
        ));
    }
    *at = next;
    // Zip64: the fields saturated in the record come, in this order, from
    // the extended-information extra field.
    if size == 0xFFFF_FFFF || compressed == 0xFFFF_FFFF || local == 0xFFFF_FFFF {
        let mut fields = zip64_field(extra).ok_or_else(|| {
            format!("entry `{name}`: sizes defer to a zip64 extra field that is missing")
        })?;
        let mut take = |v: &mut u64| -> Result<(), String> {
            if *v == 0xFFFF_FFFF {
                let (head, rest) = fields
                    .split_first_chunk::<8>()
                    .ok_or_else(|| format!("entry `{name}`: zip64 extra field too short"))?;
                *v = u64::from_le_bytes(*head);
                fields = rest;
            }
            Ok(())
        };
        take(&mut size)?;
        take(&mut compressed)?;
        take(&mut local)?;
    }
    if flags & 1 != 0 {
        return Err(format!("entry `{name}` is encrypted"));
    }
    if method != 0 {
        return Err(format!(
            "entry `{name}` is compressed (method {method}); .pt2 archives store their entries uncompressed"
        ));
    }
    if compressed != size {
        return Err(format!(
            "entry `{name}` is stored but its compressed size {compressed} differs from its size {size}"
        ));
    }
    let local = to_usize(local, "local header offset")?;
    let lwhat = "local file header";
    if r.u32(local, lwhat)? != LOCAL {
        return Err(format!(
            "entry `{name}`: no local file header at offset {local}"
        ));
    }
    let local_name = usize::from(r.u16(local + 26, lwhat)?);
    let local_extra = usize::from(r.u16(local + 28, lwhat)?);
    let data_offset = local + 30 + local_name + local_extra;
    let size = to_usize(size, "entry size")?;
    r.slice(data_offset, size, &format!("the data of entry `{name}`"))?;
    Ok(ZipEntry {
        name,
        data_offset,
        size,
        crc32,
    })
}

/// The body of the zip64 extended-information field among `extra`'s fields.
fn zip64_field(mut extra: &[u8]) -> Option<&[u8]> {
    while extra.len() >= 4 {
        let id = u16::from_le_bytes([extra[0], extra[1]]);
        let len = usize::from(u16::from_le_bytes([extra[2], extra[3]]));
        let body = extra.get(4..4 + len)?;
        if id == ZIP64_EXTRA {
            return Some(body);
        }
        extra = &extra[4 + len..];
    }
    None
}

/// The CRC-32 (IEEE, zip's) of `bytes`.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    // Slicing by 16: `TABLES[k][b]` is the remainder of byte `b` followed
    // by `k` zero bytes, so 16 bytes fold in with 16 independent lookups
    // instead of a chain of 16 dependent ones.
    static TABLES: std::sync::OnceLock<[[u32; 256]; 16]> = std::sync::OnceLock::new();
    let t = TABLES.get_or_init(|| {
        let mut t = [[0u32; 256]; 16];
        for (i, slot) in t[0].iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        for k in 1..16 {
            for i in 0..256 {
                let prev = t[k - 1][i];
                t[k][i] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
            }
        }
        t
    });
    let mut c = !0u32;
    let mut blocks = bytes.chunks_exact(16);
    for block in &mut blocks {
        let mut x = [0u8; 16];
        x.copy_from_slice(block);
        let head = c.to_le_bytes();
        for (b, h) in x.iter_mut().zip(head) {
            *b ^= h;
        }
        c = x
            .iter()
            .enumerate()
            .fold(0, |acc, (j, &b)| acc ^ t[15 - j][usize::from(b)]);
    }
    !blocks.remainder().iter().fold(c, |c, &b| {
        t[0][((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A zip archive of stored entries, written as `torch.export.save`
    /// writes them: data at 64-byte-aligned offsets (padded with an `FB`
    /// extra field), data descriptors, and (when `zip64`) zip64 records
    /// with the saturated 32-bit fields.
    pub(crate) fn write_zip(entries: &[(&str, &[u8])], zip64: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in entries {
            let offset = out.len();
            let header_end = offset + 30 + name.len() + 4;
            let pad = (64 - header_end % 64) % 64;
            out.extend_from_slice(&LOCAL.to_le_bytes());
            out.extend_from_slice(&[0, 0, 8, 8, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&[0; 12]);
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&((4 + pad) as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"FB");
            out.extend_from_slice(&(pad as u16).to_le_bytes());
            out.extend(std::iter::repeat_n(b'Z', pad));
            assert_eq!(out.len() % 64, 0);
            out.extend_from_slice(data);
            // The data descriptor.
            out.extend_from_slice(&0x0807_4b50u32.to_le_bytes());
            out.extend_from_slice(&crc32(data).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());

            central.extend_from_slice(&CENTRAL.to_le_bytes());
            central.extend_from_slice(&[0, 0, 0, 0, 8, 8, 0, 0, 0, 0, 0, 0]);
            central.extend_from_slice(&crc32(data).to_le_bytes());
            let (small_size, small_offset) = if zip64 {
                (0xFFFF_FFFFu32, 0xFFFF_FFFFu32)
            } else {
                (data.len() as u32, offset as u32)
            };
            central.extend_from_slice(&small_size.to_le_bytes());
            central.extend_from_slice(&small_size.to_le_bytes());
            central.extend_from_slice(&(name.len() as u16).to_le_bytes());
            central.extend_from_slice(&(if zip64 { 28u16 } else { 0 }).to_le_bytes());
            central.extend_from_slice(&[0; 10]);
            central.extend_from_slice(&small_offset.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
            if zip64 {
                central.extend_from_slice(&ZIP64_EXTRA.to_le_bytes());
                central.extend_from_slice(&24u16.to_le_bytes());
                central.extend_from_slice(&(data.len() as u64).to_le_bytes());
                central.extend_from_slice(&(data.len() as u64).to_le_bytes());
                central.extend_from_slice(&(offset as u64).to_le_bytes());
            }
        }
        let cd_offset = out.len();
        out.extend_from_slice(&central);
        let n = entries.len() as u64;
        if zip64 {
            let record = out.len();
            out.extend_from_slice(&ZIP64_EOCD.to_le_bytes());
            out.extend_from_slice(&44u64.to_le_bytes());
            out.extend_from_slice(&[30, 3, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&(central.len() as u64).to_le_bytes());
            out.extend_from_slice(&(cd_offset as u64).to_le_bytes());
            out.extend_from_slice(&ZIP64_LOCATOR.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&(record as u64).to_le_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
        }
        out.extend_from_slice(&EOCD.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&(n as u16).to_le_bytes());
        out.extend_from_slice(&(n as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&(cd_offset as u32).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    #[test]
    fn reads_plain_and_zip64_archives_with_descriptors_and_padding() {
        let entries: &[(&str, &[u8])] = &[("m/a", b"hello"), ("m/empty", b""), ("m/b", &[7; 100])];
        for zip64 in [false, true] {
            let bytes = write_zip(entries, zip64);
            let index = ZipIndex::parse(&bytes).unwrap();
            assert_eq!(index.names().collect::<Vec<_>>(), ["m/a", "m/empty", "m/b"]);
            for (name, data) in entries {
                let e = index.get(name).unwrap();
                assert_eq!(&bytes[e.data_offset..e.data_offset + e.size], *data);
                assert_eq!(e.data_offset % 64, 0, "{name}");
                assert_eq!(e.crc32, crc32(data));
            }
        }
    }

    #[test]
    fn the_crc_is_zips() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        // Every length around the 16-byte blocks, against the bytewise rule.
        let bytewise = |bytes: &[u8]| {
            !bytes.iter().fold(!0u32, |mut c, &b| {
                c ^= u32::from(b);
                for _ in 0..8 {
                    c = if c & 1 != 0 {
                        0xEDB8_8320 ^ (c >> 1)
                    } else {
                        c >> 1
                    };
                }
                c
            })
        };
        let data: Vec<u8> = (0..100u32)
            .map(|i| (i.wrapping_mul(151) ^ 0x5A) as u8)
            .collect();
        for n in 0..data.len() {
            assert_eq!(crc32(&data[..n]), bytewise(&data[..n]), "length {n}");
        }
    }

    #[test]
    fn corrupt_archives_are_errors() {
        let good = write_zip(&[("m/a", b"hello"), ("m/b", b"world")], true);
        assert!(ZipIndex::parse(b"not a zip")
            .unwrap_err()
            .contains("too short"));
        assert!(ZipIndex::parse(&[0u8; 100])
            .unwrap_err()
            .contains("no end-of-central-directory record"));
        // Every truncation is an error, never a panic.
        for cut in 0..good.len() {
            let _ = ZipIndex::parse(&good[..cut]);
        }
        // Every single-byte corruption is an error or a consistent index.
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0xA5;
            if let Ok(index) = ZipIndex::parse(&bad) {
                for name in index.names() {
                    let e = index.get(name).unwrap();
                    assert!(e.data_offset + e.size <= bad.len());
                }
            }
        }
    }

    #[test]
    fn overlapping_and_compressed_entries_are_refused() {
        let mut bytes = write_zip(&[("m/a", &[1; 64]), ("m/b", &[2; 64])], false);
        // Point the second central record's local header at the first's.
        let index = ZipIndex::parse(&bytes).unwrap();
        let first_local = 0u32;
        let cd = bytes.len() - 22 - 2 * (46 + 3);
        let second = cd + 46 + 3;
        bytes[second + 42..second + 46].copy_from_slice(&first_local.to_le_bytes());
        // Both names now resolve to the same data: refused.
        let e = ZipIndex::parse(&bytes).unwrap_err();
        assert!(e.contains("overlap"), "{e}");
        assert!(index.get("m/a").is_some());

        let mut compressed = write_zip(&[("m/a", b"x")], false);
        let cd = compressed.len() - 22 - (46 + 3);
        compressed[cd + 10] = 8;
        let e = ZipIndex::parse(&compressed).unwrap_err();
        assert!(e.contains("compressed (method 8)"), "{e}");
    }
}
