//! Arrow IPC bytes → sloth's ipc reader: footer and metadata checks, then
//! every column of every row read.
#![no_main]

#[path = "common.rs"]
mod common;
#[path = "files.rs"]
mod files;

use libfuzzer_sys::fuzz_target;
use sloth::LazyFrame;

fuzz_target!(|data: &[u8]| {
    common::unwinding_panics();
    let path = files::file_with(data, "arrow");
    common::check(
        LazyFrame::scan_ipc(&path).and_then(|lf| lf.collect()),
        &data.len(),
    );
});
