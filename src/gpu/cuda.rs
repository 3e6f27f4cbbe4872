//! The CUDA runtime: driver and NVRTC through `cudarc`, loaded at run time.
//!
//! [`runtime`] checks that the driver and NVRTC libraries can be loaded
//! before making any call (a machine without them gets a reason, never a
//! panic), creates a context on device 0, compiles `kernels.cu` for the
//! device's architecture once, and keeps the module for the process.

use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchArgs, LaunchConfig,
    PushKernelArg,
};

use super::emulate::{EMPTY_KEY, capacity};
use super::raw::{AggKind, JoinPairs, RawAgg, RawGroupBy, RawValues, Values};

const KERNELS: &str = include_str!("kernels.cu");
const BLOCK: u32 = 256;
/// Groups that fit the shared-memory aggregate variant (16 bytes each).
const SHARED_GROUPS: usize = 2048;

/// A device with the kernels loaded.
pub struct Gpu {
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// Device name and architecture, for reports.
    pub name: String,
    blocks: u32,
}

/// Transfer and kernel time of one operator (events, synchronized).
#[derive(Debug, Default, Clone, Copy)]
pub struct Timing {
    /// Host→device and device→host copies, ms.
    pub transfer_ms: f64,
    /// Kernels, ms.
    pub kernel_ms: f64,
}

/// The process's GPU, or why there is none.
pub fn runtime() -> Result<&'static Gpu, String> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        // Safety: these only try to dlopen the libraries.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err("no CUDA driver (libcuda) on this machine".into());
        }
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err("no NVRTC library on this machine".into());
        }
        std::panic::catch_unwind(init)
            .unwrap_or_else(|_| Err("the CUDA libraries could not be used".into()))
    })
    .as_ref()
    .map_err(|e| e.clone())
}

fn init() -> Result<Gpu, String> {
    let ctx = CudaContext::new(0).map_err(|e| format!("no usable GPU: {e}"))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| format!("device query failed: {e}"))?;
    let arch: &'static str = Box::leak(format!("sm_{major}{minor}").into_boxed_str());
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some(arch),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(KERNELS, opts)
        .map_err(|e| format!("NVRTC failed to compile the kernels: {e}"))?;
    let module = ctx
        .load_module(ptx)
        .map_err(|e| format!("loading the kernels failed: {e}"))?;
    let sms = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .unwrap_or(80);
    Ok(Gpu {
        stream: ctx.default_stream(),
        module,
        name: format!("GPU 0 ({arch}, {sms} SMs)"),
        blocks: (sms as u32) * 8,
    })
}

type DResult<T> = Result<T, String>;

/// Pushes a validity bitmap argument, or a null pointer when the column
/// has no nulls (the kernels' `is_valid` treats null as all valid).
fn push_validity<'a>(b: &mut LaunchArgs<'a>, valid: &'a Option<CudaSlice<u8>>) {
    static NULL: u64 = 0;
    match valid {
        Some(v) => b.arg(v),
        None => b.arg(&NULL),
    };
}

fn err(e: impl std::fmt::Display) -> String {
    let s = e.to_string();
    if s.contains("OUT_OF_MEMORY") {
        format!("device out of memory ({s})")
    } else {
        format!("CUDA error: {s}")
    }
}

impl Gpu {
    fn f(&self, name: &str) -> DResult<CudaFunction> {
        self.module.load_function(name).map_err(err)
    }

    fn cfg(&self, n: usize, shared: u32) -> LaunchConfig {
        let needed = n.div_ceil(BLOCK as usize).max(1) as u32;
        LaunchConfig {
            grid_dim: (needed.min(self.blocks), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: shared,
        }
    }

    fn upload<T: cudarc::driver::DeviceRepr>(&self, v: &[T]) -> DResult<CudaSlice<T>> {
        self.stream.clone_htod(v).map_err(err)
    }

    fn upload_validity(&self, v: Option<&[u8]>) -> DResult<Option<CudaSlice<u8>>> {
        v.map(|v| self.upload(v)).transpose()
    }

    /// Times `f` with events around it on the stream.
    fn timed<T>(&self, f: impl FnOnce() -> DResult<T>) -> DResult<(T, f64)> {
        let ctx = self.stream.context();
        let start = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(err)?;
        let end = ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(err)?;
        start.record(&self.stream).map_err(err)?;
        let out = f()?;
        end.record(&self.stream).map_err(err)?;
        let ms = start.elapsed_ms(&end).map_err(err)?; // synchronizes both events
        Ok((out, ms as f64))
    }

    /// Group-by on one Int64 key; the kernels of `kernels.cu` in order.
    pub fn group_by(
        &self,
        keys: &[i64],
        valid: Option<&[u8]>,
        aggs: &[(AggKind, Values<'_>)],
    ) -> DResult<(RawGroupBy, Timing)> {
        let n = keys.len();
        let cap = capacity(n);
        let mask = cap as u64 - 1;
        let mut timing = Timing::default();
        let ((d_keys, d_valid, mut d_table), ms) = self.timed(|| {
            Ok((
                self.upload(keys)?,
                self.upload_validity(valid)?,
                self.upload(&vec![EMPTY_KEY; cap])?,
            ))
        })?;
        timing.transfer_ms += ms;
        let nn = n as i64;
        let (grp, groups_k) = {
            let ((grp, groups), ms) = self.timed(|| {
                let mut row_slot = self.stream.alloc_zeros::<i64>(n.max(1)).map_err(err)?;
                let mut overflow = self.stream.alloc_zeros::<i32>(1).map_err(err)?;
                let mut dense = self.stream.alloc_zeros::<i32>(cap + 2).map_err(err)?;
                let mut groups = self.stream.alloc_zeros::<i32>(1).map_err(err)?;
                let mut grp = self.stream.alloc_zeros::<i32>(n.max(1)).map_err(err)?;
                let f = self.f("gb_insert")?;
                let mut b = self.stream.launch_builder(&f);
                b.arg(&d_keys);
                push_validity(&mut b, &d_valid);
                b.arg(&nn)
                    .arg(&mut d_table)
                    .arg(&mask)
                    .arg(&mut row_slot)
                    .arg(&mut overflow);
                unsafe { b.launch(self.cfg(n, 0)) }.map_err(err)?;
                let f = self.f("gb_assign")?;
                let mut b = self.stream.launch_builder(&f);
                b.arg(&d_table).arg(&mask).arg(&mut dense).arg(&mut groups);
                unsafe { b.launch(self.cfg(cap + 2, 0)) }.map_err(err)?;
                let f = self.f("gb_null_group")?;
                let mut b = self.stream.launch_builder(&f);
                b.arg(&row_slot)
                    .arg(&nn)
                    .arg(&mask)
                    .arg(&mut dense)
                    .arg(&mut groups);
                unsafe { b.launch(self.cfg(n, 0)) }.map_err(err)?;
                let f = self.f("gb_map")?;
                let mut b = self.stream.launch_builder(&f);
                b.arg(&row_slot).arg(&dense).arg(&nn).arg(&mut grp);
                unsafe { b.launch(self.cfg(n, 0)) }.map_err(err)?;
                let over = self.stream.clone_dtoh(&overflow).map_err(err)?;
                if over[0] != 0 {
                    return Err("hash table full".into());
                }
                let g = self.stream.clone_dtoh(&groups).map_err(err)?[0] as usize;
                Ok(((grp, dense), g))
            })?;
            timing.kernel_ms += ms;
            (grp, groups)
        };
        let (grp, d_dense) = grp;
        let mut raw_aggs = Vec::with_capacity(aggs.len());
        for (kind, values) in aggs {
            let (agg, t) = self.aggregate(*kind, values, &grp, n, groups_k)?;
            timing.transfer_ms += t.transfer_ms;
            timing.kernel_ms += t.kernel_ms;
            raw_aggs.push(agg);
        }
        let ((table, dense), ms) = self.timed(|| {
            Ok((
                self.stream.clone_dtoh(&d_table).map_err(err)?,
                self.stream.clone_dtoh(&d_dense).map_err(err)?,
            ))
        })?;
        timing.transfer_ms += ms;
        Ok((
            RawGroupBy {
                table,
                dense,
                groups: groups_k,
                aggs: raw_aggs,
            },
            timing,
        ))
    }

    fn aggregate(
        &self,
        kind: AggKind,
        values: &Values<'_>,
        grp: &CudaSlice<i32>,
        n: usize,
        groups: usize,
    ) -> DResult<(RawAgg, Timing)> {
        let mut timing = Timing::default();
        let nn = n as i64;
        let g = groups.max(1);
        let mut counts = self.stream.alloc_zeros::<u64>(g).map_err(err)?;
        let values = match (kind, values) {
            (AggKind::Count, v) => {
                let (d_valid, ms) = self.timed(|| self.upload_validity(v.validity()))?;
                timing.transfer_ms += ms;
                let ((), ms) = self.timed(|| {
                    let f = self.f("agg_count")?;
                    let mut b = self.stream.launch_builder(&f);
                    b.arg(grp);
                    push_validity(&mut b, &d_valid);
                    b.arg(&nn).arg(&mut counts);
                    unsafe { b.launch(self.cfg(n, 0)) }.map(|_| ()).map_err(err)
                })?;
                timing.kernel_ms += ms;
                RawValues::None
            }
            (_, Values::F64(v, valid)) => RawValues::F64(self.value_agg(
                kind,
                (v, *valid),
                (f64::INFINITY, f64::NEG_INFINITY, 0.0, "f64"),
                (grp, n, groups),
                &mut counts,
                &mut timing,
            )?),
            (_, Values::I64(v, valid)) => RawValues::I64(self.value_agg(
                kind,
                (v, *valid),
                (i64::MAX, i64::MIN, 0, "i64"),
                (grp, n, groups),
                &mut counts,
                &mut timing,
            )?),
            (_, Values::Rows(_)) => return Err("count(*) is counted by agg_count".into()),
        };
        let (counts, ms) = self.timed(|| self.stream.clone_dtoh(&counts).map_err(err))?;
        timing.transfer_ms += ms;
        let counts = counts[..groups].to_vec();
        let values = match values {
            RawValues::F64(v) => RawValues::F64(v[..groups].to_vec()),
            RawValues::I64(v) => RawValues::I64(v[..groups].to_vec()),
            RawValues::None => RawValues::None,
        };
        Ok((RawAgg { values, counts }, timing))
    }

    /// One `agg_{sum,min,max}_{lane}` kernel over `v` (the shared-memory
    /// sum when the groups fit): per-group values, counts into `counts`.
    /// `init` is (min start, max start, sum start, lane suffix).
    fn value_agg<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy>(
        &self,
        kind: AggKind,
        (v, valid): (&[T], Option<&[u8]>),
        (min0, max0, sum0, lane): (T, T, T, &str),
        (grp, n, groups): (&CudaSlice<i32>, usize, usize),
        counts: &mut CudaSlice<u64>,
        timing: &mut Timing,
    ) -> DResult<Vec<T>> {
        let ((d_v, d_valid), ms) =
            self.timed(|| Ok((self.upload(v)?, self.upload_validity(valid)?)))?;
        timing.transfer_ms += ms;
        let (init, op) = match kind {
            AggKind::Min => (min0, "min"),
            AggKind::Max => (max0, "max"),
            _ => (sum0, "sum"),
        };
        let mut out = self.upload(&vec![init; groups.max(1)])?;
        let shared = op == "sum" && groups <= SHARED_GROUPS;
        let name = format!("agg_{op}_{lane}{}", if shared { "_shared" } else { "" });
        let smem = if shared { 16 * groups as u32 } else { 0 };
        let (nn, gi) = (n as i64, groups as i32);
        let ((), ms) = self.timed(|| {
            let f = self.f(&name)?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(grp).arg(&d_v);
            push_validity(&mut b, &d_valid);
            b.arg(&nn);
            if shared {
                b.arg(&gi);
            }
            b.arg(&mut out).arg(counts);
            unsafe { b.launch(self.cfg(n, smem)) }
                .map(|_| ())
                .map_err(err)
        })?;
        timing.kernel_ms += ms;
        let (v, ms) = self.timed(|| self.stream.clone_dtoh(&out).map_err(err))?;
        timing.transfer_ms += ms;
        Ok(v)
    }

    /// Hash join on one Int64 key: (build row, probe row) pairs and the
    /// match count of each probe row.
    pub fn join(
        &self,
        build: (&[i64], Option<&[u8]>),
        probe: (&[i64], Option<&[u8]>),
    ) -> DResult<(JoinPairs, Timing)> {
        let mut timing = Timing::default();
        let cap = capacity(build.0.len());
        let mask = cap as u64 - 1;
        let (nb, np) = (build.0.len() as i64, probe.0.len() as i64);
        let ((bk, bv, pk, pv, mut table, mut heads), ms) = self.timed(|| {
            Ok((
                self.upload(build.0)?,
                self.upload_validity(build.1)?,
                self.upload(probe.0)?,
                self.upload_validity(probe.1)?,
                self.upload(&vec![EMPTY_KEY; cap])?,
                self.upload(&vec![-1i64; cap])?,
            ))
        })?;
        timing.transfer_ms += ms;
        let ((next, counts), ms) = self.timed(|| {
            let mut next = self
                .stream
                .alloc_zeros::<i64>(build.0.len().max(1))
                .map_err(err)?;
            let mut overflow = self.stream.alloc_zeros::<i32>(1).map_err(err)?;
            let mut counts = self
                .stream
                .alloc_zeros::<u32>(probe.0.len().max(1))
                .map_err(err)?;
            let f = self.f("join_build")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&bk);
            push_validity(&mut b, &bv);
            b.arg(&nb)
                .arg(&mut table)
                .arg(&mask)
                .arg(&mut heads)
                .arg(&mut next)
                .arg(&mut overflow);
            unsafe { b.launch(self.cfg(build.0.len(), 0)) }.map_err(err)?;
            let f = self.f("join_count")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&pk);
            push_validity(&mut b, &pv);
            b.arg(&np)
                .arg(&table)
                .arg(&mask)
                .arg(&heads)
                .arg(&next)
                .arg(&mut counts);
            unsafe { b.launch(self.cfg(probe.0.len(), 0)) }.map_err(err)?;
            if self.stream.clone_dtoh(&overflow).map_err(err)?[0] != 0 {
                return Err("hash table full".into());
            }
            Ok((next, counts))
        })?;
        timing.kernel_ms += ms;
        let (counts, ms) = self.timed(|| self.stream.clone_dtoh(&counts).map_err(err))?;
        timing.transfer_ms += ms;
        let counts = counts[..probe.0.len()].to_vec();
        let mut offsets = Vec::with_capacity(counts.len());
        let mut total = 0u64;
        for &c in &counts {
            offsets.push(total);
            total += c as u64;
        }
        let t = (total as usize).max(1);
        let (d_offsets, ms) = self.timed(|| self.upload(&offsets))?;
        timing.transfer_ms += ms;
        let ((ob, op), ms) = self.timed(|| {
            let mut ob = self.stream.alloc_zeros::<i64>(t).map_err(err)?;
            let mut op = self.stream.alloc_zeros::<i64>(t).map_err(err)?;
            let f = self.f("join_emit")?;
            let mut b = self.stream.launch_builder(&f);
            b.arg(&pk);
            push_validity(&mut b, &pv);
            b.arg(&np)
                .arg(&table)
                .arg(&mask)
                .arg(&heads)
                .arg(&next)
                .arg(&d_offsets)
                .arg(&mut ob)
                .arg(&mut op);
            unsafe { b.launch(self.cfg(probe.0.len(), 0)) }.map_err(err)?;
            Ok((ob, op))
        })?;
        timing.kernel_ms += ms;
        let ((mut ob, mut op), ms) = self.timed(|| {
            Ok((
                self.stream.clone_dtoh(&ob).map_err(err)?,
                self.stream.clone_dtoh(&op).map_err(err)?,
            ))
        })?;
        timing.transfer_ms += ms;
        ob.truncate(total as usize);
        op.truncate(total as usize);
        Ok(((ob, op, counts), timing))
    }
}
