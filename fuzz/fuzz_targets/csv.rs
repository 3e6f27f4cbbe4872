//! CSV bytes → sloth's CSV reader (schema inference, quotes, escapes,
//! dates), then every row read.
#![no_main]

#[path = "common.rs"]
mod common;
#[path = "files.rs"]
mod files;

use libfuzzer_sys::fuzz_target;
use sloth::LazyFrame;

fuzz_target!(|data: &[u8]| {
    common::unwinding_panics();
    let path = files::file_with(data, "csv");
    common::check(
        LazyFrame::scan_csv(&path).and_then(|lf| lf.collect()),
        &String::from_utf8_lossy(data),
    );
});
