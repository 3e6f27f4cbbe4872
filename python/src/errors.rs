//! `SlothError` → Python exceptions.
//!
//! The exception classes live in Python (`sloth/exceptions.py`) because
//! each derives from both `sloth.SlothError` and the built-in a Python user
//! catches (`FileNotFoundError`, `ValueError`, `KeyError`-like
//! `LookupError`, `MemoryError`); the message is the CLI's, without its
//! `error: ` prefix.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use sloth::SlothError;

/// The Python exception for `error`.
pub fn to_py_err(error: SlothError) -> PyErr {
    let class = match &error {
        SlothError::FileNotFound { .. } => "SlothFileNotFoundError",
        SlothError::SqlSyntax(_) => "SqlSyntaxError",
        SlothError::ColumnNotFound { .. } => "ColumnNotFoundError",
        SlothError::TableNotFound { .. } | SlothError::UnreadableTable { .. } => {
            "TableNotFoundError"
        }
        SlothError::TypeMismatch(_) => "SlothTypeError",
        SlothError::NotSupported(_) => "NotSupportedError",
        SlothError::Plan(_) | SlothError::Config(_) => "InvalidInputError",
        SlothError::MemoryLimit(_) => "MemoryLimitError",
        SlothError::Data(_) => "DataError",
        SlothError::Cancelled => "QueryCancelled",
        _ => "SlothError",
    };
    let message = error.to_string();
    Python::attach(|py| {
        py.import("sloth.exceptions")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.call1((message.clone(),)))
            .map(PyErr::from_value)
            .unwrap_or_else(|_| PyRuntimeError::new_err(message))
    })
}

/// `result` with its error made a Python exception.
pub trait IntoPyResult<T> {
    /// The same value, or the Python exception for the error.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for sloth::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py_err)
    }
}
