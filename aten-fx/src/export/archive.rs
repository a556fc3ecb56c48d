//! The `.pt2` zip archive: its entries, all under one top folder, read by
//! their path below it (`models/model.json`), with the format checks of
//! `torch.export.load` (`archive_format`, `byteorder`).

use std::io::{Read, Seek};

use c10_core::{Error, Result};
use zip::ZipArchive;

/// Something a zip archive is read from.
trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// An open `.pt2` archive.
pub(crate) struct Archive {
    zip: ZipArchive<Box<dyn Source>>,
    /// The top folder, with its trailing `/` (empty for an archive whose
    /// entries sit at the top).
    root: String,
    /// How errors name the archive (its path).
    label: String,
}

/// The largest entry read into memory (a guard against a corrupt size).
const MAX_ENTRY: u64 = 1 << 40;

impl Archive {
    /// Opens the archive at `path`.
    pub(crate) fn open(path: &std::path::Path) -> Result<Archive> {
        let label = path.display().to_string();
        let file = std::fs::File::open(path)
            .map_err(|e| Error::runtime(format!("{label}: cannot open: {e}")))?;
        Archive::new(Box::new(std::io::BufReader::new(file)), label)
    }

    /// Reads an archive held in memory; `label` names it in errors.
    pub(crate) fn from_bytes(bytes: Vec<u8>, label: &str) -> Result<Archive> {
        Archive::new(Box::new(std::io::Cursor::new(bytes)), label.to_string())
    }

    fn new(source: Box<dyn Source>, label: String) -> Result<Archive> {
        let zip = ZipArchive::new(source)
            .map_err(|e| Error::runtime(format!("{label}: not a zip archive: {e}")))?;
        // The top folder is the one holding `archive_format`.
        let root = zip
            .file_names()
            .filter_map(|n| n.ok())
            .find_map(|n| {
                let n: &str = &n;
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
        let mut archive = Archive { zip, root, label };
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
        self.zip
            .index_for_name(&format!("{}{path}", self.root))
            .is_some()
    }

    /// The entries directly in `folder` (below the top folder), by name.
    pub(crate) fn files_in(&self, folder: &str) -> Vec<String> {
        let prefix = format!("{}{folder}/", self.root);
        self.zip
            .file_names()
            .filter_map(|n| n.ok())
            .filter_map(|n| {
                n.strip_prefix(&prefix)
                    .filter(|rest| !rest.is_empty() && !rest.contains('/'))
                    .map(str::to_string)
            })
            .collect()
    }

    /// The bytes of the entry `path` (below the top folder).
    pub(crate) fn read(&mut self, path: &str) -> Result<Vec<u8>> {
        let full = format!("{}{path}", self.root);
        let label = &self.label;
        let mut entry = self.zip.by_name(&full).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => {
                Error::runtime(format!("{label}: missing entry `{full}`"))
            }
            e => Error::runtime(format!("{label}: entry `{full}`: {e}")),
        })?;
        let size = entry.size();
        if size > MAX_ENTRY {
            return Err(Error::runtime(format!(
                "{label}: entry `{full}`: implausible size {size}"
            )));
        }
        // The declared size is only a hint: the read stops where the data does.
        let mut bytes = Vec::with_capacity(size.min(1 << 30) as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| Error::runtime(format!("{label}: entry `{full}`: {e}")))?;
        Ok(bytes)
    }

    /// The entry `path` as UTF-8 text.
    pub(crate) fn read_text(&mut self, path: &str) -> Result<String> {
        let bytes = self.read(path)?;
        String::from_utf8(bytes)
            .map_err(|_| self.error(format!("entry `{}{path}` is not UTF-8 text", self.root)))
    }

    /// The full name of the entry `path`, for messages.
    pub(crate) fn entry_name(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }
}
