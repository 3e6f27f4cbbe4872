//! TPC-H tables via `tpchgen-arrow`, generated in parallel parts.

use std::path::Path;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;
use tpchgen::generators::*;
use tpchgen_arrow::*;

use crate::error::{Result, SlothError};
use crate::io::{BATCH_SIZE, FileFormat, FileSink};

/// The eight TPC-H tables.
pub const TPCH_TABLES: [&str; 8] = [
    "nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem",
];

/// Parts a table is generated in: about 750K lineitem rows each, at most
/// `most` (a table held in memory is generated in one wave of parts; a
/// table written to a file streams, so its parts stay small at any scale).
fn part_count(table: &str, sf: f64, most: i32) -> i32 {
    match table {
        "nation" | "region" => 1,
        _ => ((sf * 8.0).ceil() as i32).clamp(1, most),
    }
}

fn check_scale(sf: f64) -> Result<()> {
    if sf.is_nan() || sf <= 0.0 {
        return Err(SlothError::plan(format!(
            "scale factor must be positive, got {sf}"
        )));
    }
    Ok(())
}

fn generate_part(
    table: &str,
    sf: f64,
    part: i32,
    parts: i32,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    macro_rules! gen_table {
        ($arrow:ident, $gen:ident) => {{
            let it = $arrow::new($gen::new(sf, part, parts)).with_batch_size(BATCH_SIZE);
            ($arrow::schema_ref(), it.collect::<Result<Vec<_>, _>>()?)
        }};
    }
    Ok(match table {
        "nation" => gen_table!(NationArrow, NationGenerator),
        "region" => gen_table!(RegionArrow, RegionGenerator),
        "part" => gen_table!(PartArrow, PartGenerator),
        "supplier" => gen_table!(SupplierArrow, SupplierGenerator),
        "partsupp" => gen_table!(PartSuppArrow, PartSuppGenerator),
        "customer" => gen_table!(CustomerArrow, CustomerGenerator),
        "orders" => gen_table!(OrderArrow, OrderGenerator),
        "lineitem" => gen_table!(LineItemArrow, LineItemGenerator),
        other => {
            return Err(SlothError::plan(format!(
                "unknown TPC-H table '{other}'; tables: {}",
                TPCH_TABLES.join(", ")
            )));
        }
    })
}

/// One TPC-H table at scale factor `sf`, in memory.
pub fn tpch_table(table: &str, sf: f64) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    check_scale(sf)?;
    let parts = part_count(table, sf, 64);
    let pieces: Vec<(SchemaRef, Vec<RecordBatch>)> = (1..=parts)
        .into_par_iter()
        .map(|p| generate_part(table, sf, p, parts))
        .collect::<Result<_>>()?;
    let schema = pieces[0].0.clone();
    Ok((schema, pieces.into_iter().flat_map(|(_, b)| b).collect()))
}

/// Writes all eight tables as `<out>/<table>.parquet` (or `.csv`), calling
/// `progress(table)` after each.
///
/// Each table streams into its file: parts of about 750K lineitem rows
/// are generated a few at a time in parallel and written in order, so
/// memory holds those parts only, at any scale.
pub fn write_tpch(sf: f64, out: &Path, format: &str, mut progress: impl FnMut(&str)) -> Result<()> {
    let format = match format {
        "parquet" => FileFormat::Parquet,
        "csv" => FileFormat::Csv,
        other => {
            return Err(SlothError::unsupported(format!(
                "output format '{other}' (use parquet or csv)"
            )));
        }
    };
    check_scale(sf)?;
    std::fs::create_dir_all(out)?;
    let ahead = rayon::current_num_threads().max(1);
    for table in TPCH_TABLES {
        let ext = if format == FileFormat::Csv {
            "csv"
        } else {
            "parquet"
        };
        let parts = part_count(table, sf, 100_000);
        let mut sink = None;
        for first in (1..=parts).step_by(ahead) {
            let last = (first + ahead as i32 - 1).min(parts);
            let pieces: Vec<(SchemaRef, Vec<RecordBatch>)> = (first..=last)
                .into_par_iter()
                .map(|p| generate_part(table, sf, p, parts))
                .collect::<Result<_>>()?;
            for (schema, batches) in pieces {
                let sink = match &mut sink {
                    Some(s) => s,
                    None => sink.insert(FileSink::create(
                        out.join(format!("{table}.{ext}")),
                        format,
                        &schema,
                    )?),
                };
                batches.iter().try_for_each(|b| sink.write(b))?;
            }
        }
        if let Some(sink) = sink {
            sink.finish()?;
        }
        progress(table);
    }
    Ok(())
}
