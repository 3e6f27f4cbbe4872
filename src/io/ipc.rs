//! Arrow IPC (Feather v2) files: their schema and their batches.
//!
//! arrow-ipc validates the arrays it builds, but a damaged footer or
//! message can still make it panic before then (an `unwrap` on a missing
//! buffer, an impossible bit width). Both reads run under `catch_unwind`,
//! so a damaged file is a one-line error that names it, like any other
//! malformed input, never an internal error. A damaged block length is
//! checked before the read: arrow-ipc allocates a block's declared size
//! first, and a failed allocation aborts the process (no panic to catch).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use arrow::datatypes::SchemaRef;
use arrow::ipc::reader::FileReader;
use arrow::record_batch::RecordBatch;

use super::{nullable_schema, open};
use crate::error::{Result, SlothError};

fn data_error(path: &Path, e: impl std::fmt::Display) -> SlothError {
    SlothError::Data(format!(
        "malformed Arrow IPC file '{}': {e}",
        path.display()
    ))
}

/// Runs `read` over `path`, turning an error or a panic of the reader into
/// an error that names the file.
fn guarded<T>(path: &Path, read: impl FnOnce() -> Result<T>) -> Result<T> {
    SlothError::catching_panics(read).map_err(|e| match e {
        SlothError::Internal(m) => data_error(path, m),
        SlothError::Arrow(e) => data_error(path, e),
        other => other,
    })
}

/// The file's schema, every field nullable.
pub(super) fn read_schema(path: &Path) -> Result<SchemaRef> {
    let mut file = open(path)?;
    // Opening reads the dictionaries' blocks.
    check_blocks(path, &mut file)?;
    guarded(path, || {
        let reader = FileReader::try_new(file, None).map_err(|e| data_error(path, e))?;
        Ok(nullable_schema(&reader.schema()))
    })
}

/// Every batch of the file, with only the `projection` columns if given.
pub(super) fn read(path: &Path, projection: Option<&[usize]>) -> Result<Vec<RecordBatch>> {
    let mut file = open(path)?;
    check_blocks(path, &mut file)?;
    guarded(path, || {
        let reader = FileReader::try_new(file, projection.map(|p| p.to_vec()))
            .map_err(|e| data_error(path, e))?;
        reader.map(|b| b.map_err(|e| data_error(path, e))).collect()
    })
}

/// Checks that every block the footer lists (record batches and
/// dictionaries) lies within the file. A footer that cannot be read is
/// left to the reader, which reports it.
fn check_blocks(path: &Path, file: &mut File) -> Result<()> {
    let Some(footer) = footer_bytes(file)? else {
        return Ok(());
    };
    let Ok(footer) = arrow::ipc::root_as_footer(&footer) else {
        return Ok(());
    };
    let len = file.metadata()?.len();
    let blocks = footer.recordBatches().into_iter().flatten();
    for block in blocks.chain(footer.dictionaries().into_iter().flatten()) {
        let end = u64::try_from(block.offset()).ok().and_then(|offset| {
            offset
                .checked_add(u64::try_from(block.metaDataLength()).ok()?)?
                .checked_add(u64::try_from(block.bodyLength()).ok()?)
        });
        if end.is_none_or(|end| end > len) {
            return Err(data_error(
                path,
                format!(
                    "a block of {} + {} bytes at offset {} lies outside the file ({len} bytes)",
                    block.metaDataLength(),
                    block.bodyLength(),
                    block.offset()
                ),
            ));
        }
    }
    Ok(())
}

/// The footer's flatbuffer (before its length and the closing magic),
/// `None` where the file is too short to hold one; the file is left at
/// its start.
fn footer_bytes(file: &mut File) -> Result<Option<Vec<u8>>> {
    let len = file.metadata()?.len();
    if len < 10 {
        return Ok(None);
    }
    let mut tail = [0u8; 10];
    file.seek(SeekFrom::End(-10))?;
    file.read_exact(&mut tail)?;
    let footer = match arrow::ipc::reader::read_footer_length(tail) {
        Ok(n) if n as u64 + 10 <= len => {
            let mut footer = vec![0u8; n];
            file.seek(SeekFrom::End(-10 - n as i64))?;
            file.read_exact(&mut footer)?;
            Some(footer)
        }
        _ => None,
    };
    file.seek(SeekFrom::Start(0))?;
    Ok(footer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_or_error_of_the_reader_names_the_file() {
        let path = Path::new("/data/t.arrow");
        let e = guarded::<()>(path, || {
            panic!("called `Option::unwrap()` on a `None` value")
        });
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("malformed Arrow IPC file '/data/t.arrow'"),
            "{e}"
        );
        assert!(e.contains("unwrap"), "{e}");
    }
}
