//! Arrow IPC (Feather v2) files: their schema and their batches.
//!
//! arrow-ipc validates the arrays it builds, but a damaged footer or
//! message can still make it panic before then (an `unwrap` on a missing
//! buffer, an impossible bit width). Both reads run under `catch_unwind`,
//! so a damaged file is a one-line error that names it, like any other
//! malformed input, never an internal error.

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
    let file = open(path)?;
    guarded(path, || {
        let reader = FileReader::try_new(file, None).map_err(|e| data_error(path, e))?;
        Ok(nullable_schema(&reader.schema()))
    })
}

/// Every batch of the file, with only the `projection` columns if given.
pub(super) fn read(path: &Path, projection: Option<&[usize]>) -> Result<Vec<RecordBatch>> {
    let file = open(path)?;
    guarded(path, || {
        let reader = FileReader::try_new(file, projection.map(|p| p.to_vec()))
            .map_err(|e| data_error(path, e))?;
        reader.map(|b| b.map_err(|e| data_error(path, e))).collect()
    })
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
