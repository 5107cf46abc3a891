//! The GPU side of a command, on device buffers so that each phase is timed apart: compile, host to device, the primitive, device to host.

use std::mem::{align_of, size_of};

use twophase::gpu::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use twophase::gpu::{
    Gpu, MergeAlgorithm, MergeBuffers, MergeScratch, MergeTuning, MergesortScratch,
    MergesortTuning, SearchScratch, SortBuffers,
};
use twophase::{DeviceComparator, DeviceValue, SearchBound};

use super::error::{Bytes, CliError};
use super::keys::Key;
use super::report::Reporter;

/// Device memory a sort needs per byte of its keys and values: the data and the mergesort's
/// ping-pong scratch of the same size. A merge or search needs its inputs and outputs, less.
const DEVICE_WORKING_SPACE_FACTOR: u64 = 2;

/// Refuse work needing `bytes` of device memory ([`DEVICE_WORKING_SPACE_FACTOR`] times the
/// data) where the device has less free, before anything is copied.
fn check_device_memory(gpu: &Gpu, what: &str, bytes: u64) -> Result<(), CliError> {
    let (free, _total) = gpu.context().mem_get_info()?;
    let needed = bytes.saturating_mul(DEVICE_WORKING_SPACE_FACTOR);
    if needed > free as u64 {
        return Err(CliError::Usage(format!(
            "{what} needs about {} of GPU memory and {} is free on the GPU; use --cpu",
            Bytes(needed),
            Bytes(free as u64)
        )));
    }
    Ok(())
}

/// Copy `host` to a new device buffer of at least one element (the driver allocates no empty
/// buffer): its first `host.len()` elements are the data.
fn upload<T: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    host: &[T],
) -> Result<CudaSlice<T>, CliError> {
    let mut device = gpu.stream().alloc_zeros::<T>(host.len().max(1))?;
    gpu.stream()
        .memcpy_htod(host, &mut device.slice_mut(..host.len()))?;
    Ok(device)
}

/// Bytes of a slice.
fn bytes_of<T>(data: &[T]) -> u64 {
    std::mem::size_of_val(data) as u64
}

/// Stable sort of `keys` (and `values` with them) under `comp` on `gpu`, in phases.
pub fn sort<K, V, C>(
    gpu: &Gpu,
    keys: &mut [K],
    values: Option<&mut [V]>,
    comp: &C,
    report: &mut Reporter,
) -> Result<(), CliError>
where
    K: Key,
    V: DeviceValue + DeviceRepr + ValidAsZeroBits,
    C: DeviceComparator<K>,
{
    let count = keys.len();
    if count < 2 {
        return Ok(());
    }
    let value_bytes = if values.is_some() { size_of::<V>() } else { 0 };
    let data_bytes = bytes_of(keys) + values.as_deref().map_or(0, bytes_of);
    check_device_memory(gpu, "the sort", data_bytes)?;
    let layout = values
        .is_some()
        .then_some((size_of::<V>(), align_of::<V>()));
    report.phase("compile kernels", None, || {
        let tuning = gpu.shipped_mergesort_tuning_for::<K, C>(comp, value_bytes, count);
        Ok(gpu.prepare::<K, C, MergesortTuning>(comp, layout, tuning)?)
    })?;
    let (mut device_keys, device_values) =
        report.phase("host to device", Some(data_bytes), || {
            let device_keys = upload(gpu, keys)?;
            let device_values = values.as_deref().map(|v| upload(gpu, v)).transpose()?;
            gpu.synchronize()?;
            Ok((device_keys, device_values))
        })?;
    let mut device_values = device_values;
    report.phase("sort", None, || {
        let mut scratch = MergesortScratch::new();
        match &mut device_values {
            Some(device_values) => gpu.sort_device(
                SortBuffers::pairs(&mut device_keys, device_values),
                comp,
                None,
                &mut scratch,
            )?,
            None => gpu.sort_device(
                SortBuffers::keys(&mut device_keys),
                comp,
                None,
                &mut scratch,
            )?,
        }
        // Waits for the sort and reports a comparator found inconsistent.
        Ok(scratch.check(gpu)?)
    })?;
    report.phase("device to host", Some(data_bytes), || {
        gpu.stream().memcpy_dtoh(&device_keys, keys)?;
        if let (Some(device_values), Some(values)) = (&device_values, values) {
            gpu.stream().memcpy_dtoh(device_values, values)?;
        }
        Ok(gpu.synchronize()?)
    })
}

/// Stable merge of the sorted `a` and `b` under `comp` on `gpu`, in phases.
pub fn merge<K, C>(
    gpu: &Gpu,
    a: &[K],
    b: &[K],
    comp: &C,
    report: &mut Reporter,
) -> Result<Vec<K>, CliError>
where
    K: Key,
    C: DeviceComparator<K>,
{
    let mut merged: Vec<K> = bytemuck::zeroed_vec(a.len() + b.len());
    let data_bytes = bytes_of(a) + bytes_of(b);
    check_device_memory(gpu, "the merge", data_bytes)?;
    report.phase("compile kernels", None, || {
        let tuning = gpu.merge_tuning::<K>(None, a.len() + b.len());
        Ok(gpu.prepare::<K, C, MergeTuning>(comp, None, tuning)?)
    })?;
    let (device_a, device_b, mut device_out) =
        report.phase("host to device", Some(data_bytes), || {
            let device_a = upload(gpu, a)?;
            let device_b = upload(gpu, b)?;
            let device_out = gpu.stream().alloc_zeros::<K>(merged.len().max(1))?;
            gpu.synchronize()?;
            Ok((device_a, device_b, device_out))
        })?;
    report.phase("merge", None, || {
        let mut scratch = MergeScratch::new();
        let mut out = device_out.slice_mut(..merged.len());
        gpu.merge_device(
            MergeBuffers::keys(
                &device_a.slice(..a.len()),
                &device_b.slice(..b.len()),
                &mut out,
            ),
            comp,
            MergeAlgorithm::TwoPhase(None),
            &mut scratch,
        )?;
        Ok(scratch.check(gpu)?)
    })?;
    report.phase("device to host", Some(bytes_of(&merged)), || {
        gpu.stream()
            .memcpy_dtoh(&device_out.slice(..merged.len()), &mut merged)?;
        Ok(gpu.synchronize()?)
    })?;
    Ok(merged)
}

/// The `bound` of each of the sorted `needles` in the sorted `haystack` under `comp` on `gpu`.
pub fn sorted_search<K, C>(
    gpu: &Gpu,
    needles: &[K],
    haystack: &[K],
    bound: SearchBound,
    comp: &C,
    report: &mut Reporter,
) -> Result<Vec<u64>, CliError>
where
    K: Key,
    C: DeviceComparator<K>,
{
    let mut bounds = vec![0u64; needles.len()];
    if needles.is_empty() {
        return Ok(bounds);
    }
    let data_bytes = bytes_of(needles) + bytes_of(haystack);
    check_device_memory(gpu, "the search", data_bytes + bytes_of(&bounds))?;
    report.phase("compile kernels", None, || {
        // One needle in an empty haystack: the same program as the search below, compiled (or
        // fetched from the cache) so that the search's time is its own.
        let needle = upload(gpu, &needles[..1])?;
        let empty = gpu.stream().alloc_zeros::<K>(1)?;
        let mut out = gpu.stream().alloc_zeros::<u64>(1)?;
        let mut scratch = SearchScratch::new();
        gpu.sorted_search_device(
            &needle,
            &empty.slice(..0),
            &mut out,
            bound,
            comp,
            None,
            &mut scratch,
        )?;
        Ok(scratch.check(gpu)?)
    })?;
    let (device_needles, device_haystack, mut device_bounds) =
        report.phase("host to device", Some(data_bytes), || {
            let device_needles = upload(gpu, needles)?;
            let device_haystack = upload(gpu, haystack)?;
            let device_bounds = gpu.stream().alloc_zeros::<u64>(bounds.len())?;
            gpu.synchronize()?;
            Ok((device_needles, device_haystack, device_bounds))
        })?;
    report.phase("search", None, || {
        let mut scratch = SearchScratch::new();
        gpu.sorted_search_device(
            &device_needles,
            &device_haystack.slice(..haystack.len()),
            &mut device_bounds,
            bound,
            comp,
            None,
            &mut scratch,
        )?;
        Ok(scratch.check(gpu)?)
    })?;
    report.phase("device to host", Some(bytes_of(&bounds)), || {
        gpu.stream().memcpy_dtoh(&device_bounds, &mut bounds)?;
        Ok(gpu.synchronize()?)
    })?;
    Ok(bounds)
}
