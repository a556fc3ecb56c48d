//! Compiling kernel sources to PTX with NVRTC, through cudarc's
//! dynamically loaded `libnvrtc`.
//!
//! cudarc opens the library at its first call and panics when it is
//! missing, so every entry point here probes for it first (once per
//! process) and returns an error instead: a machine without CUDA gets
//! "NVRTC library not found ...", never a panic. Sources are compiled as
//! C++17 for the `--gpu-architecture` the caller names (`compute_90`
//! gives PTX any Hopper or later GPU can load); a failed compilation
//! returns NVRTC's log in the error.
//!
//! [`compile`] goes through the process-wide [`KernelCache`] (memory, then
//! disk, keyed by the source, the architecture, the options and the NVRTC
//! version); [`compile_uncached`] always runs NVRTC, and
//! [`compile_uncached_with_log`] also returns NVRTC's warnings.

use crate::kernel_cache::{CacheKey, KernelCache};
use c10_core::{Error, Result};
use cudarc::nvrtc::{result, sys};
use std::ffi::{c_char, CString};
use std::sync::OnceLock;

/// The C++ dialect every kernel source is compiled as.
pub const CXX_STANDARD: &str = "-std=c++17";

/// Whether libnvrtc can be loaded (probed once per process).
pub fn is_available() -> bool {
    probe().is_ok()
}

fn probe() -> Result<()> {
    static PROBE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            // cudarc's probe panics, rather than failing, when it opens a
            // libnvrtc that lacks one of the symbols it binds (a library
            // older than CUDA 13); that counts as absent too.
            let present = std::panic::catch_unwind(|| {
                // SAFETY: the probe only opens the library under its
                // candidate names and looks up its symbols; it calls none
                // of its functions.
                unsafe { sys::is_culib_present() }
            });
            match present {
                Ok(true) => Ok(()),
                Ok(false) => Err(
                    "NVRTC library not found: no libnvrtc (CUDA 13, e.g. libnvrtc.so.13) on the \
                     dynamic loader's path. Install the CUDA toolkit's NVRTC or the PyPI wheel \
                     nvidia-cuda-nvrtc and add its lib folder to LD_LIBRARY_PATH"
                        .to_string(),
                ),
                Err(_) => Err(
                    "NVRTC library not usable: the libnvrtc found lacks functions of CUDA 13's \
                     NVRTC; put CUDA 13's libnvrtc first on LD_LIBRARY_PATH"
                        .to_string(),
                ),
            }
        })
        .clone()
        .map_err(Error::runtime)
}

/// The loaded NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32)> {
    static VERSION: OnceLock<(i32, i32)> = OnceLock::new();
    probe()?;
    if let Some(&v) = VERSION.get() {
        return Ok(v);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the probe found a complete library, so cudarc's loader
    // succeeds; nvrtcVersion only writes two ints through the valid
    // pointers it is given.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    status
        .result()
        .map_err(|e| Error::runtime(format!("nvrtcVersion failed: {e:?}")))?;
    Ok(*VERSION.get_or_init(|| (major, minor)))
}

fn options(arch: &str) -> Vec<String> {
    vec![
        CXX_STANDARD.to_string(),
        format!("--gpu-architecture={arch}"),
    ]
}

fn check_text(what: &str, text: &str) -> Result<()> {
    if text.contains('\0') {
        return Err(Error::runtime(format!(
            "NVRTC cannot take a {what} containing a NUL byte"
        )));
    }
    Ok(())
}

/// What a successful compilation returns: the PTX and NVRTC's log (empty
/// unless NVRTC warned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// The PTX text.
    pub ptx: String,
    /// NVRTC's log: its warnings, if any.
    pub log: String,
}

/// An NVRTC program, destroyed on drop. It keeps the source and name it
/// was created from alive, as NVRTC may refer to them until then.
struct Program {
    handle: sys::nvrtcProgram,
    _source: CString,
    _name: CString,
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `handle` came from `create_program` and is destroyed only
        // here, once.
        let _ = unsafe { result::destroy_program(self.handle) };
    }
}

/// NVRTC's NUL-terminated output (a log or a PTX image) as a string.
fn nvrtc_text(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles one kernel source to PTX for `arch` (a virtual architecture
/// such as `compute_90`), without any cache, returning the PTX and NVRTC's
/// log. Fails with NVRTC's log when the source does not compile, and with
/// "NVRTC library not found ..." when libnvrtc cannot be loaded.
pub fn compile_uncached_with_log(source: &str, arch: &str) -> Result<Compiled> {
    check_text("kernel source", source)?;
    check_text("GPU architecture", arch)?;
    probe()?;
    let source = CString::new(source).map_err(|_| Error::internal("NUL byte in kernel source"))?;
    let name = CString::from(c"aten_kernel.cu");
    let handle = result::create_program(&source, Some(&name))
        .map_err(|e| Error::runtime(format!("nvrtcCreateProgram failed: {e:?}")))?;
    let program = Program {
        handle,
        _source: source,
        _name: name,
    };
    // SAFETY: `program.handle` is a live program (destroyed only when
    // `program` drops); the options contain no NUL byte (checked above).
    let status = unsafe { result::compile_program(program.handle, &options(arch)) };
    // SAFETY: as above; NVRTC keeps a program's log after compiling it,
    // whether or not compilation succeeded.
    let log = unsafe { result::get_program_log(program.handle) }
        .map(|raw| nvrtc_text(&raw))
        .unwrap_or_default();
    if let Err(e) = status {
        return Err(Error::runtime(format!(
            "NVRTC failed to compile the kernel source for {arch} ({:?}):\n{}",
            e.0,
            log.trim_end()
        )));
    }
    // SAFETY: as above; the compilation succeeded, so the program holds PTX.
    let ptx = unsafe { result::get_ptx(program.handle) }
        .map_err(|e| Error::runtime(format!("nvrtcGetPTX failed: {e:?}")))?;
    Ok(Compiled {
        ptx: nvrtc_text(&ptx),
        log,
    })
}

/// [`compile_uncached_with_log`] without the log.
pub fn compile_uncached(source: &str, arch: &str) -> Result<String> {
    compile_uncached_with_log(source, arch).map(|c| c.ptx)
}

/// Compiles one kernel source to PTX for `arch` through the process-wide
/// cache: a source compiled before (in this process, or in any process
/// sharing the disk cache with the same NVRTC) is not compiled again.
pub fn compile(source: &str, arch: &str) -> Result<String> {
    compile_with(KernelCache::global(), source, arch)
}

/// [`compile`] through a given cache.
pub fn compile_with(cache: &KernelCache, source: &str, arch: &str) -> Result<String> {
    check_text("kernel source", source)?;
    check_text("GPU architecture", arch)?;
    let version = version()?;
    let options = options(arch);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let key = CacheKey::new(source, arch, version, &options);
    cache.get_or_compile(key, || compile_uncached(source, arch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_bytes_are_refused_before_nvrtc_is_touched() {
        let err = compile_uncached("__global__ void k() {}\0", "compute_90").unwrap_err();
        assert!(err.message().contains("NUL byte"), "{}", err.message());
        let err = compile("__global__ void k() {}", "compute_90\0").unwrap_err();
        assert!(err.message().contains("NUL byte"), "{}", err.message());
    }

    #[test]
    fn absence_is_an_error_not_a_panic() {
        if is_available() {
            assert!(version().unwrap().0 >= 13);
        } else {
            let err =
                compile_uncached("extern \"C\" __global__ void k() {}", "compute_90").unwrap_err();
            assert!(
                err.message().starts_with("NVRTC library not"),
                "{}",
                err.message()
            );
            assert!(version().is_err());
        }
    }
}
