//! Whether CUDA can be used in this process (`torch.cuda.is_available()`,
//! `torch.cuda.device_count()`), and PyTorch's errors when it cannot.
//!
//! `cudarc` opens the driver library at its first call and panics when the
//! library is missing, so the library is probed (opened by name, nothing
//! called) before any driver call; the answer is computed once.

use std::sync::OnceLock;

use c10_core::{Error, Result};

/// PyTorch's error when the driver library cannot be loaded.
pub const NO_DRIVER: &str = "Found no NVIDIA driver on your system. Please check that you have \
an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx";

/// What the probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Probe {
    /// The driver initialized and reported this many devices.
    Devices(usize),
    /// No driver library, or it failed to initialize: the error to give.
    Unavailable(String),
}

fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| {
        // SAFETY: only opens the driver library by its candidate names
        // (`dlopen`), calling nothing in it.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Probe::Unavailable(NO_DRIVER.into());
        }
        if let Err(e) = cudarc::driver::result::init() {
            return Probe::Unavailable(format!("CUDA driver initialization failed: {e:?}"));
        }
        match cudarc::driver::result::device::get_count() {
            Ok(n) => Probe::Devices(usize::try_from(n).unwrap_or(0)),
            Err(e) => Probe::Unavailable(format!("CUDA driver initialization failed: {e:?}")),
        }
    })
}

/// Whether a driver is present and at least one device usable
/// (`torch.cuda.is_available()`); never fails, never panics.
pub fn is_available() -> bool {
    device_count() > 0
}

/// The number of CUDA devices (`torch.cuda.device_count()`): 0 without a
/// driver.
pub fn device_count() -> usize {
    match probe() {
        Probe::Devices(n) => *n,
        Probe::Unavailable(_) => 0,
    }
}

/// Checks that device `index` can be used (`-1`: the current device, taken
/// as 0 here), with PyTorch's errors: no driver, no devices, an ordinal
/// out of range. Returns the ordinal.
pub fn check_device(index: i8) -> Result<usize> {
    let count = match probe() {
        Probe::Devices(n) => *n,
        Probe::Unavailable(why) => return Err(Error::runtime(why.clone())),
    };
    if count == 0 {
        return Err(Error::runtime("No CUDA GPUs are available"));
    }
    let ordinal = usize::try_from(index.max(0)).unwrap_or(0);
    if ordinal >= count {
        return Err(Error::runtime(format!(
            "CUDA error: invalid device ordinal (device {ordinal} requested, {count} available)"
        )));
    }
    Ok(ordinal)
}

/// Why CUDA tests skip on this machine, or `None` when they can run.
pub fn skip_reason() -> Option<String> {
    match probe() {
        Probe::Devices(0) => Some("the CUDA driver reports no devices".into()),
        Probe::Devices(_) => None,
        Probe::Unavailable(why) => Some(why.clone()),
    }
}
