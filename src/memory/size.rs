//! Byte sizes as people write them: `4GB`, `512 MiB`, `1.5GiB`, `75%`.

use crate::error::{Result, SlothError};

/// Units and their factors. `KB`/`MB`/... are powers of 1000 and
/// `KiB`/`MiB`/... powers of 1024, as in DuckDB's `memory_limit`.
const UNITS: &[(&str, u64)] = &[
    ("b", 1),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
];

/// Parses a byte size: a number with an optional unit (`4GB`, `512 MiB`,
/// `1.5GiB`, `1000000`), or a percentage of `total` (`75%`) when a total
/// is known.
pub fn parse_bytes(text: &str, total: Option<u64>) -> Result<u64> {
    let bad = || {
        SlothError::Config(format!(
            "'{text}' is not a size; write e.g. 4GB, 512MiB or 75%"
        ))
    };
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let unit = unit.trim();
    let bytes = if unit == "%" {
        let total = total.ok_or_else(|| {
            SlothError::Config(format!(
                "'{text}': the machine's memory is unknown, so give a size such as 4GB"
            ))
        })?;
        if number > 100.0 {
            return Err(SlothError::Config(format!(
                "'{text}' is more than all of the memory"
            )));
        }
        total as f64 * number / 100.0
    } else {
        let factor = match unit {
            "" => 1,
            u => UNITS.iter().find(|(name, _)| *name == u).ok_or_else(bad)?.1,
        };
        number * factor as f64
    };
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// A byte count for people: `512 B`, `1.5 KiB`, `4 GiB`, `3.7 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const BINARY: &[&str] = &["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    let mut value = bytes as f64;
    while value >= 1024.0 && unit + 1 < BINARY.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value} {}", BINARY[unit])
    } else {
        format!("{value:.1} {}", BINARY[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_decimal_and_binary_units() {
        assert_eq!(parse_bytes("4GB", None).unwrap(), 4_000_000_000);
        assert_eq!(parse_bytes("4 GiB", None).unwrap(), 4 << 30);
        assert_eq!(parse_bytes("512mib", None).unwrap(), 512 << 20);
        assert_eq!(parse_bytes("1.5KiB", None).unwrap(), 1536);
        assert_eq!(parse_bytes("1000", None).unwrap(), 1000);
        assert_eq!(parse_bytes("50%", Some(1000)).unwrap(), 500);
    }

    #[test]
    fn bad_sizes_are_one_line_errors() {
        for bad in ["4 gigs", "", "GB", "-1GB", "1.2.3MB", "1e400"] {
            let e = parse_bytes(bad, Some(100)).unwrap_err().to_string();
            assert!(e.contains("not a size"), "{bad}: {e}");
        }
        assert!(parse_bytes("150%", Some(100)).is_err());
        assert!(
            parse_bytes("50%", None)
                .unwrap_err()
                .to_string()
                .contains("unknown")
        );
    }

    #[test]
    fn sizes_format_for_people_and_parse_back() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(4 << 30), "4 GiB");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        for n in [512u64, 4 << 30, 1536, 3 << 20] {
            assert_eq!(parse_bytes(&format_bytes(n), None).unwrap(), n);
        }
    }
}
