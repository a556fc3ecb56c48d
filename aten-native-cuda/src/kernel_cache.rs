//! The compiled-kernel cache: PTX keyed by a hash of everything that
//! decides it (the source, the target architecture, the NVRTC version and
//! the compile options), kept in process and on disk.
//!
//! The in-process cache is a `Mutex<HashMap>` from key to PTX; the lock is
//! never held while compiling, so two threads asking for the same new
//! kernel may both compile it and the second insert is a no-op.
//!
//! The disk cache is a folder of files named by the key's hex digest:
//! `$ATEN_KERNEL_CACHE` when set (empty, `0` or `off` turn it off), else
//! `$XDG_CACHE_HOME/aten/kernels`, else `~/.cache/aten/kernels`. A file is
//! written to a temporary name in the same folder and renamed into place,
//! so a reader sees a whole file or none; each file repeats its key and
//! carries the PTX's length and checksum, so a truncated, corrupted or
//! foreign file reads as a miss. Disk errors never fail a compilation: the
//! disk cache is an optimisation.

use c10_core::Result;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The environment variable naming the disk cache's folder.
pub const CACHE_DIR_ENV: &str = "ATEN_KERNEL_CACHE";

/// The first line of every cache file; bump the version when the format
/// or the key's inputs change.
const FILE_MAGIC: &str = "ATEN-PTX-CACHE 1";

/// A 128-bit digest of what decides a kernel's PTX.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey(u128);

impl CacheKey {
    /// The key of `source` compiled for `arch` by NVRTC `nvrtc_version`
    /// with `options`. Each field is hashed with its length, so no two
    /// different inputs are hashed as the same bytes.
    pub fn new(source: &str, arch: &str, nvrtc_version: (i32, i32), options: &[&str]) -> CacheKey {
        let mut h = Fnv128::new();
        h.field(FILE_MAGIC.as_bytes());
        h.field(&nvrtc_version.0.to_le_bytes());
        h.field(&nvrtc_version.1.to_le_bytes());
        h.field(arch.as_bytes());
        h.field(&(options.len() as u64).to_le_bytes());
        for option in options {
            h.field(option.as_bytes());
        }
        h.field(source.as_bytes());
        CacheKey(h.finish())
    }

    /// The key as 32 lowercase hex digits (the disk cache's file name).
    pub fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({})", self.hex())
    }
}

/// FNV-1a, 128 bits: stable across processes and Rust versions (unlike
/// `DefaultHasher`), dependency-free, and wide enough that a few thousand
/// kernels never collide by accident.
struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;

    fn new() -> Self {
        Fnv128(Self::OFFSET)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u128::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    fn field(&mut self, bytes: &[u8]) {
        self.bytes(&(bytes.len() as u64).to_le_bytes());
        self.bytes(bytes);
    }

    fn finish(&self) -> u128 {
        self.0
    }
}

/// FNV-1a, 64 bits: the checksum of a cache file's PTX.
fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The disk cache's folder given the environment (`var` reads one
/// variable): `None` when it is turned off or no home folder is known.
pub fn cache_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(dir) = var(CACHE_DIR_ENV) {
        if dir.is_empty() || dir == "0" || dir == "off" {
            return None;
        }
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = var("XDG_CACHE_HOME") {
        // The XDG spec says a relative value is invalid and to be ignored.
        let xdg = PathBuf::from(xdg);
        if xdg.is_absolute() {
            return Some(xdg.join("aten").join("kernels"));
        }
    }
    let home = var("HOME").filter(|h| !h.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".cache")
            .join("aten")
            .join("kernels"),
    )
}

/// PTX files in one folder, one per key.
#[derive(Clone, Debug)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache { dir: dir.into() }
    }

    /// The cache the process environment names (see the module doc), or
    /// `None` when it is turned off.
    pub fn from_env() -> Option<DiskCache> {
        cache_dir_from(|name| std::env::var_os(name)).map(DiskCache::new)
    }

    /// The cache's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `key`'s PTX.
    pub fn path(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(format!("{}.ptx", key.hex()))
    }

    /// The PTX stored for `key`, or `None` for a miss: no file, an
    /// unreadable one, or one whose header, length or checksum is wrong.
    pub fn load(&self, key: &CacheKey) -> Option<String> {
        let bytes = fs::read(self.path(key)).ok()?;
        parse_file(&bytes, key)
    }

    /// Stores `ptx` for `key`: written to a temporary file in the folder
    /// and renamed over the final name, so readers never see a partial
    /// file.
    pub fn store(&self, key: &CacheKey, ptx: &str) -> io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        fs::create_dir_all(&self.dir)?;
        let temp = self.dir.join(format!(
            ".{}.{}.{}.tmp",
            key.hex(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(render_file(key, ptx).as_bytes())?;
            file.flush()?;
            drop(file);
            fs::rename(&temp, self.path(key))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written
    }
}

fn render_file(key: &CacheKey, ptx: &str) -> String {
    format!(
        "{FILE_MAGIC}\nkey {}\nlen {}\nsum {:016x}\n\n{ptx}",
        key.hex(),
        ptx.len(),
        checksum(ptx.as_bytes())
    )
}

fn parse_file(bytes: &[u8], key: &CacheKey) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (header, body) = text.split_once("\n\n")?;
    let mut lines = header.lines();
    if lines.next()? != FILE_MAGIC {
        return None;
    }
    if lines.next()?.strip_prefix("key ")? != key.hex() {
        return None;
    }
    let len: usize = lines.next()?.strip_prefix("len ")?.parse().ok()?;
    let sum = u64::from_str_radix(lines.next()?.strip_prefix("sum ")?, 16).ok()?;
    if lines.next().is_some() || body.len() != len || checksum(body.as_bytes()) != sum {
        return None;
    }
    Some(body.to_string())
}

/// The in-process cache in front of an optional disk cache.
#[derive(Debug)]
pub struct KernelCache {
    memory: Mutex<HashMap<CacheKey, String>>,
    disk: Option<DiskCache>,
}

impl KernelCache {
    /// A cache backed by `disk` (or memory only).
    pub fn new(disk: Option<DiskCache>) -> KernelCache {
        KernelCache {
            memory: Mutex::new(HashMap::new()),
            disk,
        }
    }

    /// The process-wide cache, its disk folder taken from the environment
    /// when first used.
    pub fn global() -> &'static KernelCache {
        static GLOBAL: OnceLock<KernelCache> = OnceLock::new();
        GLOBAL.get_or_init(|| KernelCache::new(DiskCache::from_env()))
    }

    /// The disk cache behind this one, if any.
    pub fn disk(&self) -> Option<&DiskCache> {
        self.disk.as_ref()
    }

    /// The PTX for `key`: from memory, else from disk, else from
    /// `compile`, whose success is stored in both. A failed compilation is
    /// not cached.
    pub fn get_or_compile(
        &self,
        key: CacheKey,
        compile: impl FnOnce() -> Result<String>,
    ) -> Result<String> {
        if let Some(ptx) = self.lock().get(&key) {
            return Ok(ptx.clone());
        }
        let ptx = match self.disk.as_ref().and_then(|disk| disk.load(&key)) {
            Some(ptx) => ptx,
            None => {
                let ptx = compile()?;
                if let Some(disk) = &self.disk {
                    // Best effort: a read-only or full disk only costs the
                    // next process a compilation.
                    let _ = disk.store(&key, &ptx);
                }
                ptx
            }
        };
        self.lock().entry(key).or_insert_with(|| ptx.clone());
        Ok(ptx)
    }

    /// The number of kernels held in memory.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no kernel is held in memory.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, String>> {
        // The map stays consistent even if a holder panicked: every
        // operation on it is a single insert or lookup.
        self.memory.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c10_core::Error;
    use std::cell::Cell;

    /// A fresh folder under the system's temporary directory, removed on
    /// drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            static N: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "aten-kernel-cache-test-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&dir);
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    const PTX: &str = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.0\n.target sm_90\n\
                       .visible .entry k()\n{\n\tret;\n}\n";

    fn key(source: &str) -> CacheKey {
        CacheKey::new(source, "compute_90", (13, 0), &["-std=c++17"])
    }

    #[test]
    fn keys_depend_on_every_input() {
        let base = key("src");
        assert_eq!(base, key("src"));
        assert_ne!(base, key("src2"));
        assert_ne!(
            base,
            CacheKey::new("src", "compute_80", (13, 0), &["-std=c++17"])
        );
        assert_ne!(
            base,
            CacheKey::new("src", "compute_90", (13, 1), &["-std=c++17"])
        );
        assert_ne!(base, CacheKey::new("src", "compute_90", (13, 0), &[]));
        // Field boundaries count: moving bytes between fields changes the key.
        assert_ne!(
            CacheKey::new("ab", "c", (13, 0), &[]),
            CacheKey::new("b", "ca", (13, 0), &[])
        );
        assert_eq!(base.hex().len(), 32);
    }

    #[test]
    fn stores_and_loads_ptx() {
        let tmp = TempDir::new("roundtrip");
        let disk = DiskCache::new(tmp.0.join("nested").join("kernels"));
        let k = key("roundtrip");
        assert_eq!(disk.load(&k), None);
        disk.store(&k, PTX).unwrap();
        assert_eq!(disk.load(&k).as_deref(), Some(PTX));
        // Storing again replaces the file.
        disk.store(&k, "other ptx").unwrap();
        assert_eq!(disk.load(&k).as_deref(), Some("other ptx"));
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(disk.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from(format!("{}.ptx", k.hex()))]);
    }

    #[test]
    fn damaged_files_are_misses() {
        let tmp = TempDir::new("damaged");
        let disk = DiskCache::new(&tmp.0);
        let k = key("damaged");
        disk.store(&k, PTX).unwrap();
        let path = disk.path(&k);
        let whole = fs::read(&path).unwrap();

        // Truncated anywhere: in the header or in the PTX.
        for cut in [0, 5, FILE_MAGIC.len() + 3, whole.len() / 2, whole.len() - 1] {
            fs::write(&path, &whole[..cut]).unwrap();
            assert_eq!(disk.load(&k), None, "truncated at {cut}");
        }
        // One byte of the PTX flipped.
        let mut flipped = whole.clone();
        let last = flipped.len() - 3;
        flipped[last] ^= 0x01;
        fs::write(&path, &flipped).unwrap();
        assert_eq!(disk.load(&k), None);
        // Extra bytes after the PTX.
        let mut longer = whole.clone();
        longer.extend_from_slice(b"junk");
        fs::write(&path, &longer).unwrap();
        assert_eq!(disk.load(&k), None);
        // Not UTF-8.
        fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(disk.load(&k), None);
        // Another key's file under this key's name.
        let other = key("other");
        fs::write(&path, render_file(&other, PTX)).unwrap();
        assert_eq!(disk.load(&k), None);
        // A file from a different format version.
        fs::write(
            &path,
            render_file(&k, PTX).replacen(FILE_MAGIC, "ATEN-PTX-CACHE 0", 1),
        )
        .unwrap();
        assert_eq!(disk.load(&k), None);
        // And the intact file loads again.
        fs::write(&path, &whole).unwrap();
        assert_eq!(disk.load(&k).as_deref(), Some(PTX));
    }

    #[test]
    fn memory_then_disk_then_compile() {
        let tmp = TempDir::new("layers");
        let k = key("layers");
        let calls = Cell::new(0);
        let compile = || {
            calls.set(calls.get() + 1);
            Ok(PTX.to_string())
        };

        let cache = KernelCache::new(Some(DiskCache::new(&tmp.0)));
        assert_eq!(cache.get_or_compile(k, compile).unwrap(), PTX);
        assert_eq!(calls.get(), 1);
        assert_eq!(cache.get_or_compile(k, compile).unwrap(), PTX);
        assert_eq!(calls.get(), 1, "served from memory");
        assert_eq!(cache.len(), 1);

        // A new process (a new cache on the same folder) reads the disk.
        let fresh = KernelCache::new(Some(DiskCache::new(&tmp.0)));
        assert_eq!(fresh.get_or_compile(k, compile).unwrap(), PTX);
        assert_eq!(calls.get(), 1, "served from disk");

        // A damaged file is recompiled and rewritten.
        fs::write(fresh.disk().unwrap().path(&k), "ATEN-PTX-CACHE 1\nkey").unwrap();
        let again = KernelCache::new(Some(DiskCache::new(&tmp.0)));
        assert_eq!(again.get_or_compile(k, compile).unwrap(), PTX);
        assert_eq!(calls.get(), 2);
        assert_eq!(again.disk().unwrap().load(&k).as_deref(), Some(PTX));
    }

    #[test]
    fn failures_are_not_cached_and_disk_errors_are_ignored() {
        let tmp = TempDir::new("errors");
        // A file where the folder should be: every store fails.
        fs::write(&tmp.0, "not a folder").unwrap();
        let cache = KernelCache::new(Some(DiskCache::new(tmp.0.join("kernels"))));
        let k = key("errors");
        let err = cache
            .get_or_compile(k, || Err(Error::runtime("broken kernel")))
            .unwrap_err();
        assert_eq!(err.message(), "broken kernel");
        assert!(cache.is_empty());
        assert_eq!(
            cache.get_or_compile(k, || Ok(PTX.to_string())).unwrap(),
            PTX
        );
        assert_eq!(cache.len(), 1);
        let _ = fs::remove_file(&tmp.0);
    }

    #[test]
    fn cache_folder_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            cache_dir_from(env(&[(CACHE_DIR_ENV, "/tmp/k"), ("HOME", "/home/u")])),
            Some(PathBuf::from("/tmp/k"))
        );
        for off in ["", "0", "off"] {
            let pairs: &'static [(&'static str, &'static str)] = match off {
                "" => &[(CACHE_DIR_ENV, ""), ("HOME", "/home/u")],
                "0" => &[(CACHE_DIR_ENV, "0"), ("HOME", "/home/u")],
                _ => &[(CACHE_DIR_ENV, "off"), ("HOME", "/home/u")],
            };
            assert_eq!(cache_dir_from(env(pairs)), None, "{off:?}");
        }
        assert_eq!(
            cache_dir_from(env(&[("XDG_CACHE_HOME", "/xdg"), ("HOME", "/home/u")])),
            Some(PathBuf::from("/xdg/aten/kernels"))
        );
        assert_eq!(
            cache_dir_from(env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/home/u")])),
            Some(PathBuf::from("/home/u/.cache/aten/kernels"))
        );
        assert_eq!(cache_dir_from(env(&[])), None);
    }
}
