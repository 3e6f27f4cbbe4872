//! What the fuzz targets share: an input that makes sloth fail with an
//! internal error (a panic of its own, which it catches and reports so)
//! is a crash, as is a panic that escapes it; any other error is an
//! answer. A panic in a dependency that sloth turns into a clean error
//! naming the file (the Arrow IPC reader's) is an answer too: the targets
//! put back Rust's own panic hook in place of libFuzzer's, which aborts
//! on every panic, caught or not.

use std::sync::Once;

use sloth::SlothError;

/// Puts back a panic hook that prints and lets the panic unwind, once.
pub fn unwinding_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|info| eprintln!("{info}"))));
}

/// Fails the run on an internal error, naming the input.
pub fn check<T>(result: Result<T, SlothError>, input: &dyn std::fmt::Debug) {
    if let Err(SlothError::Internal(message)) = result {
        panic!("internal error: {message}\ninput: {input:?}");
    }
}
