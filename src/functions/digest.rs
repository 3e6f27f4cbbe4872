//! Message digests of text: `md5(s)` and `sha256(s)`, each the hash of the
//! string's UTF-8 bytes as lower-case hex (as PostgreSQL and DuckDB give
//! them).

use std::fmt::Write;

use md5::Md5;
use sha2::{Digest, Sha256};

use super::string::MapText;
use crate::expr::ScalarFunc;

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![MD5, SHA256]
}

/// `md5(s)`: 32 hex digits.
pub const MD5: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["md5"],
    map: hex_digest::<Md5>,
});
/// `sha256(s)`: 64 hex digits.
pub const SHA256: ScalarFunc = ScalarFunc::new(&MapText {
    names: &["sha256"],
    map: hex_digest::<Sha256>,
});

fn hex_digest<D: Digest>(s: &str, buf: &mut String) {
    for byte in D::digest(s.as_bytes()) {
        write!(buf, "{byte:02x}").expect("writing to a String");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::value::Value;
    use crate::expr::{Expr, col};
    use crate::functions::test_util::{eval, strings};
    use arrow::array::{Array, AsArray};

    #[test]
    fn digests_are_the_published_test_vectors_on_both_paths() {
        // RFC 1321 and FIPS 180-2 test vectors.
        let cases = [
            (MD5, "", "d41d8cd98f00b204e9800998ecf8427e"),
            (MD5, "abc", "900150983cd24fb0d6963f7d28e17f72"),
            (
                SHA256,
                "abc",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
        ];
        for (f, input, want) in cases {
            let out = eval(
                Expr::Function(f, vec![col("s")]),
                &[("s", strings(&[Some(input), None]))],
            );
            let out = out.as_string::<i32>();
            assert_eq!(out.value(0), want, "{}({input:?})", f.name());
            assert!(out.is_null(1));
            let row = f.function().invoke_row(&[Value::Str(input.into())]);
            assert_eq!(
                format!("{:?}", row.unwrap().unwrap()),
                format!("{:?}", Value::Str(want.into()))
            );
        }
    }
}
