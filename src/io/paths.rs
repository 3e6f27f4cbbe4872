//! What a table path names: one file, every readable file of a directory,
//! or the files a glob in the last path component matches
//! (`logs/2024-*.parquet`, `data/part-?.csv`).

use std::path::{Path, PathBuf};

use crate::error::{Result, SlothError};

/// Extensions sloth reads, lower case.
pub const READABLE_EXTENSIONS: &[&str] =
    &["parquet", "pq", "csv", "tsv", "arrow", "ipc", "feather"];

/// True when `path` has an extension sloth reads.
pub fn is_readable_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| READABLE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The files `path` names, sorted: itself; a directory's readable files;
/// or a glob's matches (`*` any run of characters, `?` one). A glob or a
/// directory that yields no file is an error naming it.
pub fn expand(path: &Path) -> Result<Vec<PathBuf>> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let is_glob = name.contains(['*', '?']);
    if !is_glob && !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let dir = if is_glob {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    } else {
        path
    };
    let entries = std::fs::read_dir(dir).map_err(|e| SlothError::FileNotFound {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| match is_glob {
            true => p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| glob_match(name.as_bytes(), n.as_bytes())),
            false => is_readable_file(p),
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(SlothError::FileNotFound {
            path: path.display().to_string(),
            reason: if is_glob {
                "no file matches".into()
            } else {
                format!("no {} file in it", READABLE_EXTENSIONS.join("/"))
            },
        });
    }
    Ok(files)
}

/// `*` and `?` matching of a file name, by backtracking to the last `*`.
fn glob_match(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_as_shells_do() {
        assert!(glob_match(b"*.parquet", b"part-0.parquet"));
        assert!(glob_match(b"part-?.csv", b"part-7.csv"));
        assert!(!glob_match(b"part-?.csv", b"part-10.csv"));
        assert!(glob_match(b"a*b*c", b"aXXbYYc"));
        assert!(!glob_match(b"*.csv", b"x.csv.bak"));
        assert!(glob_match(b"*", b""));
    }

    #[test]
    fn a_glob_and_a_directory_expand_to_sorted_files() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["b.csv", "a.csv", "notes.txt"] {
            std::fs::write(dir.path().join(f), "x\n1\n").unwrap();
        }
        let names = |v: Vec<PathBuf>| -> Vec<String> {
            v.iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(expand(&dir.path().join("*.csv")).unwrap()),
            ["a.csv", "b.csv"]
        );
        assert_eq!(names(expand(dir.path()).unwrap()), ["a.csv", "b.csv"]);
        let none = expand(&dir.path().join("*.parquet"))
            .unwrap_err()
            .to_string();
        assert!(none.contains("no file matches"), "{none}");
    }
}
