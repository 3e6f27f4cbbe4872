//! GPU offload: the kernels' CPU port against the CPU operators, the
//! fallback when no GPU can run an operator, and (where a GPU is present)
//! the device against the CPU.

use crate::common;

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int32Array, Int64Array};
use arrow::record_batch::RecordBatch;
use sloth::gpu::{Device, emulate};
use sloth::prelude::*;

/// Rows with nulls in keys and values; float values are multiples of 1/4 so
/// sums are exact in any order.
fn table(rows: usize, groups: i64) -> LazyFrame {
    let k: ArrayRef =
        Arc::new(Int64Array::from_iter((0..rows as i64).map(|i| {
            (i % 17 != 3).then_some((i * 7919) % groups - groups / 3)
        })));
    let k32: ArrayRef = Arc::new(Int32Array::from_iter((0..rows as i32).map(|i| Some(i % 5))));
    let v: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..rows as i64).map(|i| (i % 13 != 0).then_some(i % 1000 - 400)),
    ));
    let x: ArrayRef = Arc::new(Float64Array::from_iter(
        (0..rows).map(|i| (i % 11 != 0).then_some((i % 64) as f64 * 0.25 - 3.0)),
    ));
    let batch = RecordBatch::try_from_iter([("k", k), ("k32", k32), ("v", v), ("x", x)]).unwrap();
    LazyFrame::from_batches_with_schema(batch.schema(), common::split(&batch, 5)).unwrap()
}

fn query(lf: LazyFrame, key: &str) -> LazyFrame {
    lf.group_by([col(key)]).agg([
        col("v").sum().alias("sv"),
        col("x").sum().alias("sx"),
        col("v").min().alias("minv"),
        col("x").max().alias("maxx"),
        col("x").mean().alias("mx"),
        col("v").count().alias("cv"),
        count_star().alias("n"),
    ])
}

fn on(device: Device, lf: &LazyFrame) -> (String, Vec<sloth::exec::NodeMetrics>) {
    let (df, m) = lf
        .clone()
        .with_device(device)
        .collect_with_metrics()
        .unwrap();
    (df.to_sorted_csv().unwrap(), m)
}

/// The note (device and why) of the first operator named `name`.
fn note_of(metrics: &[sloth::exec::NodeMetrics], name: &str) -> String {
    metrics
        .iter()
        .find(|m| m.name.starts_with(name))
        .map(|m| m.extra.clone())
        .unwrap()
}

fn aggregate_note(metrics: &[sloth::exec::NodeMetrics]) -> String {
    note_of(metrics, "HashAggregate")
}

/// Joins of `rows` left rows for each kind the kernels run, on one key and
/// on two (nulls in the first, packed alike on both sides), and with the
/// sides reversed.
fn join_cases(rows: usize) -> Vec<(JoinType, LazyFrame)> {
    let left = table(rows, rows as i64 / 8);
    let right = table(rows / 4, rows as i64 / 10).select([
        col("k").alias("rk"),
        col("k32").alias("rk32"),
        col("v").alias("rv"),
    ]);
    [
        JoinType::Inner,
        JoinType::Left,
        JoinType::Semi,
        JoinType::Anti,
    ]
    .into_iter()
    .flat_map(|how| {
        let one = left.clone().join(&right, [col("k")], [col("rk")], how);
        let two = left.clone().join(
            &right,
            [col("k"), col("k32")],
            [col("rk"), col("rk32")],
            how,
        );
        // The larger input on the right (an inner join builds on the left).
        let reversed = right.clone().join(&left, [col("rk")], [col("k")], how);
        [(how, one), (how, two), (how, reversed)]
    })
    .collect()
}

/// Each of `join_cases(rows)` on `device` gives the CPU's rows, and its
/// note says it ran where `marker` says.
fn check_joins(rows: usize, device: Device, marker: &str) {
    for (how, lf) in join_cases(rows) {
        let (cpu, _) = on(Device::Cpu, &lf);
        let (got, m) = on(device, &lf);
        assert_eq!(cpu, got, "{how:?}");
        let note = note_of(&m, "HashJoin");
        assert!(note.contains(marker), "{how:?}: {note}");
    }
}

#[test]
fn kernel_port_matches_the_cpu_operator() {
    for (rows, groups) in [(1, 1), (1000, 7), (20_000, 5000), (50_000, 40_000)] {
        for key in ["k", "k32"] {
            let lf = query(table(rows, groups), key);
            let (cpu, _) = on(Device::Cpu, &lf);
            let (emulated, m) = on(Device::Emulate, &lf);
            assert_eq!(cpu, emulated, "rows={rows} groups={groups} key={key}");
            assert!(
                aggregate_note(&m).contains("emulated-gpu"),
                "{}",
                aggregate_note(&m)
            );
        }
    }
}

#[test]
fn unsupported_operators_run_on_the_cpu_and_say_why() {
    let lf = table(100, 10)
        .group_by([col("k"), col("x")])
        .agg([col("v").sum()]);
    let (cpu, _) = on(Device::Cpu, &lf);
    let (emulated, m) = on(Device::Emulate, &lf);
    assert_eq!(cpu, emulated);
    assert!(aggregate_note(&m).contains("not an integer column"));
}

/// Several integer keys (nulls in them included) are packed into the one
/// key the kernels hash, and unpacked into the key columns of the output.
#[test]
fn multi_column_integer_keys_group_on_the_kernels() {
    for (rows, groups) in [(1000, 7), (20_000, 5000)] {
        let lf = table(rows, groups)
            .with_columns([col("v").alias("v_key")])
            .group_by([col("k"), col("k32"), col("v_key")])
            .agg([col("x").sum().alias("sx"), count_star().alias("n")]);
        let (cpu, _) = on(Device::Cpu, &lf);
        let (emulated, m) = on(Device::Emulate, &lf);
        assert_eq!(cpu, emulated, "rows={rows}");
        let note = aggregate_note(&m);
        assert!(note.contains("emulated-gpu"), "{note}");
    }
}

/// Keys whose value ranges multiply past 64 bits stay on the CPU, which
/// says so.
#[test]
fn keys_too_wide_to_pack_run_on_the_cpu() {
    let a: ArrayRef = Arc::new(Int64Array::from(vec![i64::MIN + 1, 0, i64::MAX, 0]));
    let b: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3, 2]));
    let batch = RecordBatch::try_from_iter([("a", a), ("b", b)]).unwrap();
    let lf = LazyFrame::from_batches(vec![batch])
        .unwrap()
        .group_by([col("a"), col("b")])
        .agg([count_star().alias("n")]);
    let (cpu, _) = on(Device::Cpu, &lf);
    let (emulated, m) = on(Device::Emulate, &lf);
    assert_eq!(cpu, emulated);
    let note = aggregate_note(&m);
    assert!(note.contains("do not pack into 64 bits"), "{note}");
}

/// Forcing the GPU where it cannot run (no driver here, or any failure)
/// gives the CPU's result and the reason.
#[test]
fn forced_gpu_falls_back_with_the_same_result() {
    let lf = query(table(5000, 100), "k");
    let (cpu, _) = on(Device::Cpu, &lf);
    let (gpu, m) = on(Device::Gpu, &lf);
    assert_eq!(cpu, gpu);
    let note = aggregate_note(&m);
    match sloth::gpu::skip_reason() {
        Some(why) => {
            eprintln!("GPU tests skipped: {why}");
            assert!(note.contains("device=cpu") && note.contains(&why), "{note}");
        }
        None => assert!(note.contains("device=gpu"), "{note}"),
    }
}

#[test]
fn join_kernel_port_matches_a_nested_loop_join() {
    let build: Vec<i64> = (0..500).map(|i| i % 97).collect();
    let probe: Vec<i64> = (0..800).map(|i| (i * 31) % 130).collect();
    // Row 5 of the build side and row 7 of the probe side are null.
    let mut bvalid = vec![0xffu8; 500usize.div_ceil(8)];
    bvalid[0] &= !(1 << 5);
    let mut pvalid = vec![0xffu8; 800usize.div_ceil(8)];
    pvalid[0] &= !(1 << 7);
    let (b, p, counts) = emulate::join((&build, Some(&bvalid)), (&probe, Some(&pvalid))).unwrap();
    let mut got: Vec<(i64, i64)> = b.into_iter().zip(p).collect();
    got.sort();
    let mut want = Vec::new();
    for (j, pk) in probe.iter().enumerate() {
        for (i, bk) in build.iter().enumerate() {
            if bk == pk && i != 5 && j != 7 {
                want.push((i as i64, j as i64));
            }
        }
    }
    want.sort();
    assert_eq!(got, want);
    for (j, c) in counts.iter().enumerate() {
        assert_eq!(
            *c as usize,
            want.iter().filter(|(_, p)| *p == j as i64).count()
        );
    }
}

#[test]
fn the_device_flag_parses_and_rejects_unknown_names() {
    assert_eq!("gpu".parse::<Device>().unwrap(), Device::Gpu);
    let err = "tpu".parse::<Device>().unwrap_err().to_string();
    assert!(err.contains("cpu, gpu, auto, emulate"), "{err}");
}

/// On a machine with a GPU: device results equal CPU results on the
/// db-benchmark group-by questions the kernels support.
#[test]
fn gpu_matches_cpu_on_db_benchmark_groupby() {
    if let Some(why) = sloth::gpu::skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let x = LazyFrame::from_batches(sloth::datagen::h2o_groupby(200_000, 100).unwrap()).unwrap();
    for q in [
        x.clone()
            .group_by([col("id4")])
            .agg([col("v1").sum().alias("v1")]),
        x.clone()
            .group_by([col("id6")])
            .agg([col("v1").sum(), col("v3").mean()]),
        x.clone()
            .group_by([col("id4")])
            .agg([col("v1").min(), col("v2").max(), count_star()]),
        // Two keys, packed into one.
        x.clone()
            .group_by([col("id4"), col("id6")])
            .agg([col("v3").sum(), col("v1").max()]),
        // The most groups of the table (id6), counted.
        x.clone().group_by([col("id6")]).agg([count_star()]),
    ] {
        let (cpu, _) = on(Device::Cpu, &q);
        let (gpu, m) = on(Device::Gpu, &q);
        assert!(
            aggregate_note(&m).contains("device=gpu"),
            "{}",
            aggregate_note(&m)
        );
        // Float sums may differ in the last bits (atomics add in any order).
        assert_eq!(cpu.lines().count(), gpu.lines().count());
        for (a, b) in cpu.lines().zip(gpu.lines()) {
            for (x, y) in a.split(',').zip(b.split(',')) {
                match (x.parse::<f64>(), y.parse::<f64>()) {
                    (Ok(x), Ok(y)) => {
                        assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{a} vs {b}")
                    }
                    _ => assert_eq!(x, y),
                }
            }
        }
    }
}

/// On a machine with a GPU: device joins equal CPU joins for each kind,
/// with one key and with two packed keys.
#[test]
fn gpu_matches_cpu_on_joins() {
    if let Some(why) = sloth::gpu::skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    check_joins(30_000, Device::Gpu, "device=gpu");
}

#[test]
fn join_kernel_port_matches_the_cpu_join_for_each_kind() {
    check_joins(3000, Device::Emulate, "emulated-gpu");
}

/// Every TPC-H query with group-bys and joins offered to the kernels' CPU
/// port gives the CPU's answer (operators the kernels do not support fall
/// back).
#[test]
fn tpch_through_the_kernel_port_matches_the_cpu() {
    let ctx = common::tpch_context(OptimizerOptions::default());
    for q in 1..=22 {
        let sql = std::fs::read_to_string(format!("queries/tpch/q{q:02}.sql")).unwrap();
        let lf = ctx.sql(sql.trim().trim_end_matches(';')).unwrap();
        let cpu = common::rows_of(&lf.clone().with_device(Device::Cpu).collect().unwrap());
        let emulated = common::rows_of(&lf.with_device(Device::Emulate).collect().unwrap());
        assert_eq!(cpu, emulated, "q{q:02}");
    }
}

/// The first node of `plan` (pre-order) whose description starts with `name`.
fn find<'a>(
    plan: &'a sloth::physical::PhysicalPlan,
    name: &str,
) -> Option<&'a sloth::physical::PhysicalPlan> {
    if plan.describe().starts_with(name) {
        return Some(plan);
    }
    plan.children().into_iter().find_map(|c| find(c, name))
}

/// `auto` offers only operators the kernels support, so with a GPU present
/// every other operator keeps the CPU's fused paths.
#[test]
fn auto_offers_only_supported_operators() {
    let t = table(100, 10);
    let supported = t
        .clone()
        .group_by([col("k")])
        .agg([col("v").sum(), col("x").max()]);
    let expression_arg = t
        .clone()
        .group_by([col("k")])
        .agg([(col("v") * lit(2i64)).sum()]);
    let two_keys = t
        .clone()
        .group_by([col("k"), col("k32")])
        .agg([col("v").sum()]);
    let join = t.clone().join(
        &t.clone().select([col("k").alias("rk")]),
        [col("k")],
        [col("rk")],
        JoinType::Semi,
    );
    let full = t.clone().join(
        &t.clone().select([col("k").alias("rk")]),
        [col("k")],
        [col("rk")],
        JoinType::Full,
    );
    let node = |lf: &LazyFrame, name: &str| {
        let p = lf.physical_plan().unwrap();
        sloth::gpu::supports(find(&p, name).unwrap())
    };
    assert!(node(&supported, "HashAggregate"));
    assert!(!node(&expression_arg, "HashAggregate"));
    assert!(node(&two_keys, "HashAggregate"));
    let float_key = t.clone().group_by([col("x")]).agg([col("v").sum()]);
    assert!(!node(&float_key, "HashAggregate"));
    assert!(node(&join, "HashJoin"));
    assert!(!node(&full, "HashJoin"));
}

/// The kernels compile with NVRTC for the architectures sloth targets, and
/// every kernel the host launches is in the PTX. This needs NVRTC but no
/// driver or GPU; CI installs NVRTC and sets `SLOTH_REQUIRE_NVRTC=1` so
/// the check cannot be skipped there. When `ptxas` is found (on `PATH`, or
/// `SLOTH_PTXAS`), the PTX is also assembled for the H100/H200's `sm_90`.
#[cfg(feature = "cuda")]
#[test]
fn the_kernels_compile_with_nvrtc() {
    use sloth::gpu::cuda;
    let mut launched: Vec<String> = [
        "fill_u64",
        "gb_assign",
        "gb_gather",
        "join_build",
        "join_count",
        "join_emit",
    ]
    .map(String::from)
    .into();
    let ops = [
        ("i64", "sum"),
        ("i64", "min"),
        ("i64", "max"),
        ("u64", "count"),
    ];
    for (lane, op) in ops
        .iter()
        .chain(&[("f64", "sum"), ("f64", "min"), ("f64", "max")])
    {
        for shared in [false, true] {
            launched.push(cuda::value_kernel(op, lane, shared));
        }
    }
    let mut ptx_90 = String::new();
    for arch in ["sm_80", "sm_90"] {
        let ptx = match cuda::compile_kernels(arch) {
            Err(why) if why.contains("no NVRTC") => {
                assert!(
                    std::env::var_os("SLOTH_REQUIRE_NVRTC").is_none(),
                    "SLOTH_REQUIRE_NVRTC is set but {why}"
                );
                eprintln!("skipped: {why}");
                return;
            }
            other => other.unwrap().to_src(),
        };
        for name in &launched {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "{arch}: no kernel {name}"
            );
        }
        ptx_90 = ptx;
    }
    let ptxas = std::env::var("SLOTH_PTXAS").unwrap_or_else(|_| "ptxas".into());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kernels.ptx");
    std::fs::write(&file, &ptx_90).unwrap();
    match std::process::Command::new(&ptxas)
        .args(["-arch=sm_90", "-v", "-o"])
        .arg(dir.path().join("kernels.cubin"))
        .arg(&file)
        .output()
    {
        Err(e) => eprintln!("ptxas not run ({ptxas}: {e})"),
        Ok(out) => {
            let log = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "ptxas failed:\n{log}");
            // Registers spilled to local memory would cost every row.
            for line in log.lines().filter(|l| l.contains("spill stores")) {
                assert!(
                    line.trim()
                        .starts_with("0 bytes stack frame, 0 bytes spill"),
                    "{line}"
                );
            }
            eprintln!("{log}");
        }
    }
}

/// The source of `kernels.cu` itself, compiled by a C++ compiler against
/// `src/gpu/simt/simt.h` (CUDA's execution model on OS threads: a block's
/// threads concurrently with real atomics and barriers), runs every
/// group-by and join kernel in `cuda.rs`'s launch order and agrees with a
/// sequential reference (`src/gpu/simt/check.cpp`). CI sets
/// `SLOTH_REQUIRE_CXX=1` so that a missing compiler fails instead of
/// skipping.
#[test]
fn the_kernel_source_runs_under_simt() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("simt-check");
    let compiled = std::process::Command::new(&cxx)
        .args([
            "-std=c++20",
            "-O2",
            "-pthread",
            "src/gpu/simt/check.cpp",
            "-o",
        ])
        .arg(&exe)
        .output();
    let compiled = match compiled {
        Err(e) => {
            assert!(
                std::env::var_os("SLOTH_REQUIRE_CXX").is_none(),
                "SLOTH_REQUIRE_CXX is set but {cxx} cannot run: {e}"
            );
            eprintln!("skipped: no C++ compiler ({cxx}: {e})");
            return;
        }
        Ok(out) => out,
    };
    assert!(
        compiled.status.success(),
        "{cxx} failed:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert!(stdout.contains("all kernels agree"), "{stdout}");
    // 8 aggregates x 3 sizes x 2 table variants, 2 overflows, 3 joins.
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok ")).count(), 53);
}

/// Keys clustered by value mislead the sample that sizes the table: the
/// first 64K rows hold 10 keys, the rest 5,000 more. The small table fills
/// and the group-by runs again with room for every row: the CPU's answer,
/// still from the kernels.
#[test]
fn a_table_sized_from_a_misleading_sample_is_retried() {
    let k: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..200_000).map(|i| if i < 1 << 16 { i % 10 } else { i % 5000 + 10 }),
    ));
    let v: ArrayRef = Arc::new(Int64Array::from_iter_values(0..200_000));
    let batch = RecordBatch::try_from_iter([("k", k), ("v", v)]).unwrap();
    let lf = LazyFrame::from_batches(vec![batch])
        .unwrap()
        .group_by([col("k")])
        .agg([col("v").sum().alias("s"), count_star().alias("n")]);
    let (cpu, _) = on(Device::Cpu, &lf);
    let (emulated, m) = on(Device::Emulate, &lf);
    assert_eq!(cpu, emulated);
    assert_eq!(cpu.lines().count(), 5011); // header + groups
    assert!(
        aggregate_note(&m).contains("emulated-gpu"),
        "{}",
        aggregate_note(&m)
    );
}

/// The kernels add integers wrapping, so a sum that could pass i64 stays
/// on the CPU, which checks it: an overflow is sum()'s error on every
/// device, and sums of large values that stay in range agree.
#[test]
fn integer_sums_that_could_overflow_run_on_the_cpu() {
    let frame = |v: Vec<i64>| {
        let k: ArrayRef = Arc::new(Int64Array::from(vec![1; v.len()]));
        let v: ArrayRef = Arc::new(Int64Array::from(v));
        let batch = RecordBatch::try_from_iter([("k", k), ("v", v)]).unwrap();
        LazyFrame::from_batches(vec![batch])
            .unwrap()
            .group_by([col("k")])
            .agg([col("v").sum().alias("s")])
    };
    let overflowing = frame(vec![1 << 62, 1 << 62, 1 << 62]);
    for device in [Device::Cpu, Device::Emulate] {
        let err = overflowing
            .clone()
            .with_device(device)
            .collect()
            .unwrap_err()
            .to_string();
        assert!(err.contains("sum() overflowed Int64"), "{device:?}: {err}");
    }
    let in_range = frame(vec![i64::MAX, -i64::MAX, 5]);
    let (cpu, _) = on(Device::Cpu, &in_range);
    let (emulated, m) = on(Device::Emulate, &in_range);
    assert_eq!(cpu, emulated);
    let note = aggregate_note(&m);
    assert!(
        note.contains("an integer sum that could overflow"),
        "{note}"
    );
}
