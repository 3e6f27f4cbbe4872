//! SQL text split into statements at the semicolons that end them: not
//! those inside quotes, quoted names or comments.

/// The byte positions of the semicolons that end statements, each with
/// whether code (anything but blanks and comments) came before it since
/// the previous one; and whether code follows the last one.
fn separators(text: &str) -> (Vec<(usize, bool)>, bool) {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let (mut i, mut has_code) = (0, false);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                has_code = true;
                i += 1;
                // A doubled quote inside stands for itself.
                while i < bytes.len() {
                    if bytes[i] == quote {
                        if bytes.get(i + 1) != Some(&quote) {
                            break;
                        }
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 1;
            }
            b';' => {
                found.push((i, has_code));
                has_code = false;
            }
            c if !c.is_ascii_whitespace() => has_code = true,
            _ => {}
        }
        i += 1;
    }
    (found, has_code)
}

/// The statements of `text`, each without its semicolon; empty ones (and
/// ones holding only comments) are left out.
pub fn split(text: &str) -> Vec<&str> {
    let (ends, code_after) = separators(text);
    let mut statements = Vec::new();
    let mut start = 0;
    for (end, has_code) in ends {
        if has_code {
            statements.push(text[start..end].trim());
        }
        start = end + 1;
    }
    if code_after {
        statements.push(text[start..].trim());
    }
    statements
}

/// True when `text` ends with a statement's semicolon (outside quotes and
/// comments), comments after it aside: the REPL then runs what it has
/// gathered.
pub fn is_complete(text: &str) -> bool {
    let (ends, code_after) = separators(text);
    !ends.is_empty() && !code_after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semicolons_in_quotes_and_comments_do_not_split() {
        let text = "select 'a;b' as \"x;y\"; -- a comment; still one\nselect 2 /* ; */ ;\n;  ";
        assert_eq!(
            split(text),
            vec![
                "select 'a;b' as \"x;y\"",
                "-- a comment; still one\nselect 2 /* ; */"
            ]
        );
        assert_eq!(
            split("select 'it''s;' ; select 3"),
            vec!["select 'it''s;'", "select 3"]
        );
        assert!(split("  ;; -- nothing\n").is_empty());
    }

    #[test]
    fn a_statement_is_complete_at_its_own_semicolon() {
        assert!(is_complete("select 1;"));
        assert!(is_complete("select 1; -- done\n"));
        assert!(!is_complete("select ';'"));
        assert!(!is_complete("select 1 -- done;"));
        assert!(is_complete("select 1; select 2;\n"));
    }
}
