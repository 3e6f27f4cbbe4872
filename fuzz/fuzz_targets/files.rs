//! Fuzz input as a file: the readers take paths.

use std::path::PathBuf;

/// A file of this process for `data`, with the extension readers go by.
pub fn file_with(data: &[u8], extension: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("sloth-fuzz-{}.{extension}", std::process::id()));
    std::fs::write(&path, data).expect("the temp directory is writable");
    path
}
