//! Text tables for terminals: the box-drawn layout that `DataFrame`'s
//! `Display`, the CLI and the profiler print.
//!
//! A few dozen lines instead of a table crate keep an embedding program's
//! build lean. Cells may hold several lines (a column's name over its type);
//! widths count characters.
//!
//! ```text
//! ┌──────┬─────┐
//! │ name ┆ n   │
//! ╞══════╪═════╡
//! │ bob  ┆ 1   │
//! └──────┴─────┘
//! ```

/// A table of text cells: a header row and body rows.
#[derive(Debug, Default, Clone)]
pub struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these column headers.
    pub fn new(header: Vec<String>) -> Self {
        TextTable {
            header,
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells print empty, extra ones are dropped.
    pub fn add_row(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        let mut widths = vec![0; self.header.len()];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (w, cell) in widths.iter_mut().zip(row) {
                let longest = cell.lines().map(|l| l.chars().count()).max();
                *w = (*w).max(longest.unwrap_or(0));
            }
        }
        widths
    }
}

/// One border line: `left`, then each column's `fill` run joined by `cross`.
fn border(out: &mut String, widths: &[usize], [left, fill, cross, right]: [char; 4]) {
    out.push(left);
    for (i, w) in widths.iter().enumerate() {
        if i > 0 {
            out.push(cross);
        }
        out.extend(std::iter::repeat_n(fill, w + 2));
    }
    out.push(right);
    out.push('\n');
}

/// The lines of one row, each cell padded to its column's width.
fn row_lines(out: &mut String, widths: &[usize], row: &[String]) {
    let cells: Vec<Vec<&str>> = widths
        .iter()
        .enumerate()
        .map(|(i, _)| row.get(i).map_or(vec![""], |c| c.lines().collect()))
        .collect();
    let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
    for line in 0..height {
        out.push('│');
        for (i, (w, cell)) in widths.iter().zip(&cells).enumerate() {
            if i > 0 {
                out.push('┆');
            }
            let text = cell.get(line).copied().unwrap_or("");
            out.push(' ');
            out.push_str(text);
            out.extend(std::iter::repeat_n(' ', w - text.chars().count() + 1));
        }
        out.push_str("│\n");
    }
}

impl std::fmt::Display for TextTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let widths = self.widths();
        let mut out = String::new();
        border(&mut out, &widths, ['┌', '─', '┬', '┐']);
        row_lines(&mut out, &widths, &self.header);
        border(&mut out, &widths, ['╞', '═', '╪', '╡']);
        for row in &self.rows {
            row_lines(&mut out, &widths, row);
        }
        border(&mut out, &widths, ['└', '─', '┴', '┘']);
        f.write_str(out.trim_end_matches('\n'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_padded_to_the_widest_line_of_their_column() {
        let mut t = TextTable::new(vec!["name\nUtf8".into(), "n".into()]);
        t.add_row(vec!["bob".into(), "12".into()]);
        t.add_row(vec!["alexandra".into()]);
        let expected = "\
┌───────────┬────┐
│ name      ┆ n  │
│ Utf8      ┆    │
╞═══════════╪════╡
│ bob       ┆ 12 │
│ alexandra ┆    │
└───────────┴────┘";
        assert_eq!(t.to_string(), expected);
    }

    #[test]
    fn a_table_without_rows_still_has_its_header() {
        let t = TextTable::new(vec!["a".into()]);
        assert_eq!(t.to_string(), "┌───┐\n│ a │\n╞═══╡\n└───┘");
    }
}
