//! What a table path names: one file; every readable file of a
//! directory, and of its Hive partition directories (`year=2024/`) below;
//! or the files a glob matches (`logs/2024-*.parquet`,
//! `sales/year=*/*.parquet`, `data/**/*.csv`: `*` any run of characters
//! within a name, `?` one, `**` any number of directories).
//!
//! Names starting with `.` or `_` (temporaries of writers in progress,
//! `_SUCCESS` markers) are not part of a table unless a pattern spells the
//! dot.

use std::path::{Path, PathBuf};

use crate::error::{Result, SlothError};
use crate::io::hive::{malformed, partition_of};

/// Extensions sloth reads, lower case.
pub const READABLE_EXTENSIONS: &[&str] = &[
    "parquet", "pq", "csv", "tsv", "arrow", "ipc", "feather", "json", "ndjson", "jsonl",
];

/// True when `path` has an extension sloth reads.
pub fn is_readable_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| READABLE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

fn is_glob(part: &str) -> bool {
    part.contains(['*', '?'])
}

fn is_hidden(name: &str) -> bool {
    name.starts_with(['.', '_'])
}

/// The directory a path's files are found under: the path itself for a
/// directory, the part before the first glob component for a glob, the
/// parent for a file. Hive partitions are read from below it.
pub fn root(path: &Path) -> PathBuf {
    let mut root = PathBuf::new();
    for part in path.components() {
        if is_glob(&part.as_os_str().to_string_lossy()) {
            return root;
        }
        root.push(part);
    }
    if path.is_dir() {
        root
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}

/// The files `path` names, sorted: itself; a directory's readable files
/// (with those of its partition directories); or a glob's matches. A glob
/// or a directory that yields no file is an error naming it, as is a
/// directory beside partition directories that is not one itself.
pub fn expand(path: &Path) -> Result<Vec<PathBuf>> {
    let glob = path
        .components()
        .any(|c| is_glob(&c.as_os_str().to_string_lossy()));
    if !glob && !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    if glob {
        let root = root(path);
        let pattern: Vec<String> = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let start = if root.as_os_str().is_empty() {
            Path::new(".")
        } else {
            root.as_path()
        };
        walk(start, &pattern, &mut files)?;
    } else {
        directory_files(path, &mut files)?;
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(SlothError::FileNotFound {
            path: path.display().to_string(),
            reason: if glob {
                "no file matches".into()
            } else {
                format!("no {} file in it", READABLE_EXTENSIONS.join("/"))
            },
        });
    }
    Ok(files)
}

/// Entries of a directory: their names and paths.
type Named = Vec<(String, PathBuf)>;

/// The entries of `dir` that are files, and those that are directories.
fn entries(dir: &Path) -> Result<(Named, Named)> {
    let read = std::fs::read_dir(dir).map_err(|e| SlothError::FileNotFound {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })?;
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    for entry in read.filter_map(|e| e.ok()) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            dirs.push((name, path));
        } else if path.is_file() {
            files.push((name, path));
        }
    }
    Ok((files, dirs))
}

/// A directory's readable files and, recursively, those of its
/// `key=value` subdirectories.
fn directory_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let (files, dirs) = entries(dir)?;
    out.extend(
        files
            .into_iter()
            .filter(|(name, p)| !is_hidden(name) && is_readable_file(p))
            .map(|(_, p)| p),
    );
    let dirs: Vec<_> = dirs.into_iter().filter(|(n, _)| !is_hidden(n)).collect();
    let partitioned = dirs
        .iter()
        .any(|(name, _)| matches!(partition_of(name), Some(Ok(_))));
    for (name, sub) in dirs {
        match partition_of(&name) {
            Some(Ok(_)) => directory_files(&sub, out)?,
            Some(Err(())) => return Err(malformed(dir, &name)),
            None if partitioned => return Err(malformed(dir, &name)),
            None => {}
        }
    }
    Ok(())
}

/// The files under `dir` that the path components `pattern` match.
fn walk(dir: &Path, pattern: &[String], out: &mut Vec<PathBuf>) -> Result<()> {
    let Some((part, rest)) = pattern.split_first() else {
        return Ok(());
    };
    let (files, dirs) = entries(dir)?;
    let visible = |name: &str| !is_hidden(name) || part.starts_with(['.', '_']);
    if part == "**" {
        walk(dir, rest, out)?;
        for (_, sub) in dirs.iter().filter(|(n, _)| !is_hidden(n)) {
            walk(sub, pattern, out)?;
        }
        return Ok(());
    }
    let matches = |name: &str| visible(name) && glob_match(part.as_bytes(), name.as_bytes());
    if rest.is_empty() {
        out.extend(
            files
                .into_iter()
                .filter(|(n, _)| matches(n))
                .map(|(_, p)| p),
        );
    } else {
        for (_, sub) in dirs.into_iter().filter(|(n, _)| matches(n)) {
            walk(&sub, rest, out)?;
        }
    }
    Ok(())
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

    #[test]
    fn partition_directories_and_deep_globs_expand_to_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in [
            "year=2023/m=1/a.csv",
            "year=2023/m=2/b.csv",
            "year=2024/m=1/c.csv",
            "year=2024/m=1/.c.csv.tmp-1",
            "year=2024/_SUCCESS",
        ] {
            std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
            std::fs::write(d.join(f), "x\n1\n").unwrap();
        }
        let names = |v: Vec<PathBuf>| -> Vec<String> {
            v.iter()
                .map(|p| p.strip_prefix(d).unwrap().display().to_string())
                .collect()
        };
        let all = [
            "year=2023/m=1/a.csv",
            "year=2023/m=2/b.csv",
            "year=2024/m=1/c.csv",
        ];
        assert_eq!(names(expand(d).unwrap()), all);
        assert_eq!(names(expand(&d.join("**/*.csv")).unwrap()), all);
        assert_eq!(
            names(expand(&d.join("year=2023/*/*.csv")).unwrap()),
            all[..2]
        );
        assert_eq!(root(&d.join("year=*/m=1/*.csv")), d);
        std::fs::create_dir(d.join("misc")).unwrap();
        let e = expand(d).unwrap_err().to_string();
        assert!(e.contains("'misc' is not a key=value"), "{e}");
    }
}
