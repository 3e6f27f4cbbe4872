//! SQL front end.
