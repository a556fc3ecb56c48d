//! Opening the files a user names: only regular files, read no further
//! than the size they had when opened. A FIFO would block the open (or the
//! read) forever, and a device such as `/dev/zero` never ends.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use c10_core::{Error, Result};

/// Opens `path` for reading if it is a regular file; its size comes with
/// it. `label` names it in errors.
pub fn open_regular_file(path: &Path, label: &str) -> Result<(File, u64)> {
    // `stat` first: opening a FIFO for reading blocks until a writer comes.
    let kind = std::fs::metadata(path)
        .map_err(|e| Error::runtime(format!("{label}: cannot open: {e}")))?;
    if !kind.is_file() {
        return Err(not_regular(label));
    }
    let file =
        File::open(path).map_err(|e| Error::runtime(format!("{label}: cannot open: {e}")))?;
    // Checked again on the open file: the path may have changed meanwhile.
    let meta = file
        .metadata()
        .map_err(|e| Error::runtime(format!("{label}: cannot open: {e}")))?;
    if !meta.is_file() {
        return Err(not_regular(label));
    }
    Ok((file, meta.len()))
}

/// The bytes of the regular file at `path`: as many as its size when it
/// was opened, in a buffer reserved fallibly.
pub fn read_regular_file(path: &Path, label: &str) -> Result<Vec<u8>> {
    let (file, len) = open_regular_file(path, label)?;
    let len = usize::try_from(len).map_err(|_| Error::runtime(format!("{label}: too large")))?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(len).map_err(|_| {
        Error::runtime(format!(
            "{label}: {}",
            c10_core::tensor_impl::out_of_memory(len)
        ))
    })?;
    file.take(len as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::runtime(format!("{label}: cannot read: {e}")))?;
    Ok(bytes)
}

fn not_regular(label: &str) -> Error {
    Error::runtime(format!("{label}: not a regular file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_without_reading() {
        let err = read_regular_file(Path::new("/dev/zero"), "zero").unwrap_err();
        assert_eq!(err.message(), "zero: not a regular file");
        let dir = std::env::temp_dir();
        let err = read_regular_file(&dir, "dir").unwrap_err();
        assert_eq!(err.message(), "dir: not a regular file");
        let err = read_regular_file(Path::new("/no/such/file"), "gone").unwrap_err();
        assert!(err.message().starts_with("gone: cannot open"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let path = std::env::temp_dir().join(format!("aten-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no `mkfifo` here
        }
        let err = read_regular_file(&path, "fifo").unwrap_err();
        assert_eq!(err.message(), "fifo: not a regular file");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_regular_file_is_read_whole() {
        let path = std::env::temp_dir().join(format!("aten-regular-{}", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(read_regular_file(&path, "f").unwrap(), b"abc");
        std::fs::remove_file(&path).unwrap();
    }
}
