//! Parquet bytes → sloth's parquet reader: footer and metadata checks, then
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
    let path = files::file_with(data, "parquet");
    common::check(
        LazyFrame::scan_parquet(&path).and_then(|lf| lf.collect()),
        &data.len(),
    );
});
