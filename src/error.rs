//! The one error type of sloth.
//!
//! Every fallible public function returns [`Result`]. User mistakes (an unknown
//! column, a type mismatch, a missing file, bad SQL) get a variant of their own
//! whose message names the offending thing, so the CLI can print one line and
//! exit non-zero instead of panicking.

use arrow::error::ArrowError;
use parquet::errors::ParquetError;

/// Result alias used across the crate.
pub type Result<T, E = SlothError> = std::result::Result<T, E>;

/// Everything that can go wrong while planning or running a query.
#[derive(Debug, thiserror::Error)]
pub enum SlothError {
    /// A column name that the input does not have.
    #[error("unknown column '{name}'{}; available columns: {}", did_you_mean(name, available), available.join(", "))]
    ColumnNotFound {
        /// The name that was asked for.
        name: String,
        /// The columns that do exist at that point of the plan.
        available: Vec<String>,
    },
    /// A table name that is not registered.
    #[error("unknown table '{name}'{}; registered tables: {}", did_you_mean(name, available), if available.is_empty() { "(none)".to_string() } else { available.join(", ") })]
    TableNotFound {
        /// The name that was asked for.
        name: String,
        /// The registered tables.
        available: Vec<String>,
    },
    /// A table of a registered directory whose file could not be read.
    #[error("table '{name}' could not be read: {reason}")]
    UnreadableTable {
        /// The table's name.
        name: String,
        /// The error reading its file gave.
        reason: String,
    },
    /// Operand types that an operator or function does not accept.
    #[error("type mismatch: {0}")]
    TypeMismatch(String),
    /// An input file that does not exist or cannot be opened.
    #[error("cannot open '{path}': {reason}")]
    FileNotFound {
        /// The path as given.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// A SQL statement that does not parse.
    #[error("SQL syntax error: {0}")]
    SqlSyntax(String),
    /// A SQL or API feature that sloth does not support (yet).
    #[error("not supported: {0}")]
    NotSupported(String),
    /// A plan or argument that makes no sense (e.g. a join with unequal key counts).
    #[error("invalid plan: {0}")]
    Plan(String),
    /// A bug in sloth: a panic while planning or running a query, caught
    /// and reported instead of ending the process.
    #[error("internal error: {0}")]
    Internal(String),
    /// A setting that does not exist or a value it does not take.
    #[error("invalid setting: {0}")]
    Config(String),
    /// A query that needs more memory than its limit allows, where no
    /// operator could spill the excess.
    #[error("memory limit reached: {0}")]
    MemoryLimit(String),
    /// Malformed input data (CSV that does not parse, a bad cast at run time).
    #[error("data error: {0}")]
    Data(String),
    /// An error DataFusion gave running a plan sloth handed over.
    #[error("DataFusion: {0}")]
    DataFusion(String),
    /// A query stopped by its [`crate::CancelToken`] (Ctrl-C).
    #[error("query cancelled")]
    Cancelled,
    /// Errors from arrow kernels.
    #[error("arrow error: {0}")]
    Arrow(#[from] ArrowError),
    /// Errors from the parquet reader or writer.
    #[error("parquet error: {0}")]
    Parquet(#[from] ParquetError),
    /// Other I/O errors.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// ` (did you mean 'x'?)` for the known name closest to a misspelt one
/// (edit distance at most a third of its length, and 2 at least), else
/// nothing. A qualified name (`nation.n_name`) is compared by its last part.
fn did_you_mean(name: &str, known: &[String]) -> String {
    let last = |s: &str| s.rsplit('.').next().unwrap_or(s).to_ascii_lowercase();
    let wanted = last(name);
    let limit = (wanted.chars().count() / 3).max(2);
    known
        .iter()
        .map(|k| (edit_distance(&wanted, &last(k)), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| format!(" (did you mean '{k}'?)"))
        .unwrap_or_default()
}

/// Levenshtein distance between two strings, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

impl SlothError {
    /// Shorthand for a [`SlothError::Plan`].
    pub fn plan(msg: impl Into<String>) -> Self {
        SlothError::Plan(msg.into())
    }
    /// Shorthand for a [`SlothError::NotSupported`].
    pub fn unsupported(msg: impl Into<String>) -> Self {
        SlothError::NotSupported(msg.into())
    }
    /// Shorthand for a [`SlothError::TypeMismatch`].
    pub fn types(msg: impl Into<String>) -> Self {
        SlothError::TypeMismatch(msg.into())
    }

    /// Runs `work`, turning a panic in it (or in the worker threads it
    /// waits for) into [`SlothError::Internal`] with the panic's message: a
    /// bug fails one query with a one-line error, it does not end the
    /// program that embeds sloth or the shell it runs in.
    pub fn catching_panics<T>(work: impl FnOnce() -> Result<T>) -> Result<T> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(SlothError::Internal(message))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_is_suggested_and_a_far_one_is_not() {
        let known = vec![
            "nation.n_name".to_string(),
            "nation.n_nationkey".to_string(),
        ];
        let typo = SlothError::ColumnNotFound {
            name: "n_nme".into(),
            available: known.clone(),
        };
        assert!(
            typo.to_string()
                .starts_with("unknown column 'n_nme' (did you mean 'nation.n_name'?); available"),
            "{typo}"
        );
        let far = SlothError::ColumnNotFound {
            name: "price".into(),
            available: known,
        };
        assert!(!far.to_string().contains("did you mean"), "{far}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn a_panic_becomes_an_internal_error_with_its_message() {
        let caught = SlothError::catching_panics::<()>(|| panic!("boom at {}", 7));
        assert_eq!(caught.unwrap_err().to_string(), "internal error: boom at 7");
        let on_a_worker = SlothError::catching_panics::<()>(|| {
            rayon::join(|| (), || panic!("worker"));
            Ok(())
        });
        assert_eq!(
            on_a_worker.unwrap_err().to_string(),
            "internal error: worker"
        );
        assert_eq!(SlothError::catching_panics(|| Ok(3)).unwrap(), 3);
    }
}
