//! `twophase sort`: a stable sort of a file of keys, with the values of a second file or the indices of the permutation moved with them.

use std::path::{Path, PathBuf};

use twophase::gpu::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use twophase::{DeviceComparator, DeviceValue};

use super::array::{self, ArrayFile};
use super::backend::{self, Runner};
use super::dtype::with_key_type;
use super::error::CliError;
use super::keys::{cpu_sort_in_order, Key, Order, OrderVisitor};
use super::output::PendingOutput;
use super::report::Reporter;
use super::{device, memory, Dtype, SortArgs};

/// The element type of the permutation `--argsort` writes, as NumPy's `argsort` returns it.
const INDEX_DTYPE: Dtype = Dtype::I64;

/// `name.sorted.ext` beside `input` (`name.sorted` without an extension).
pub fn sorted_name(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match input.extension() {
        Some(ext) => format!("{stem}.sorted.{}", ext.to_string_lossy()),
        None => format!("{stem}.sorted"),
    };
    input.with_file_name(name)
}

/// Read `file` as keys `K` in this machine's byte order, under a progress bar named `phase`.
pub fn read_keys<K: Key>(
    report: &mut Reporter,
    phase: &str,
    file: &ArrayFile,
) -> Result<Vec<K>, CliError> {
    report.bytes_phase(phase, file.data_bytes(), |bar| {
        array::read(file, bar, K::swap_bytes)
    })
}

/// Write `data` as elements of `dtype` to `out`, under the progress bar `write`.
pub fn write_output<T: bytemuck::Pod>(
    report: &mut Reporter,
    out: &mut PendingOutput,
    dtype: Dtype,
    data: &[T],
) -> Result<(), CliError> {
    let bytes = std::mem::size_of_val(data) as u64;
    report.bytes_phase("write", bytes, |bar| {
        array::write(out, &dtype.npy_descr(), data, bar)
    })
}

/// An error for `file` when `keys` are not sorted under `comp`, naming the first pair out of
/// order.
pub fn check_sorted<K: Key, C: DeviceComparator<K>>(
    file: &ArrayFile,
    keys: &[K],
    comp: &C,
    order: Order,
) -> Result<(), CliError> {
    match super::keys::first_unsorted(keys, comp) {
        None => Ok(()),
        Some(i) => Err(CliError::bad_input(
            &file.path,
            format!(
                "not sorted in {}: element {i} ({}) belongs before element {} ({})",
                order.describe(file.dtype),
                keys[i],
                i - 1,
                keys[i - 1]
            ),
        )),
    }
}

/// `twophase sort`.
pub fn run(args: &SortArgs) -> Result<(), CliError> {
    let mut report = Reporter::new(args.report.quiet, args.report.timings);
    let runner = backend::choose(args.backend.choice(), &mut report)?;
    let output_path = args
        .output
        .clone()
        .unwrap_or_else(|| sorted_name(&args.input));
    let values_output_path = args.values.as_ref().map(|values| {
        args.values_output
            .clone()
            .unwrap_or_else(|| sorted_name(values))
    });
    if values_output_path.as_ref() == Some(&output_path) {
        return Err(CliError::Usage(format!(
            "the sorted keys and the sorted values would both go to {}",
            output_path.display()
        )));
    }
    // The outputs first: a folder that cannot be written into fails before any work.
    let mut output = PendingOutput::create(&output_path)?;
    let mut values_output = values_output_path
        .as_deref()
        .map(PendingOutput::create)
        .transpose()?;
    let keys_file = array::open(&args.input, args.dtype, None, "input")?;
    let values_file = args
        .values
        .as_deref()
        .map(|values| array::open(values, args.values_dtype, args.dtype, "--values"))
        .transpose()?;
    let mut working_bytes = keys_file.data_bytes();
    if let Some(values_file) = &values_file {
        if values_file.len != keys_file.len {
            return Err(CliError::bad_input(
                &values_file.path,
                format!(
                    "holds {} values for the {} keys of {}",
                    values_file.len,
                    keys_file.len,
                    keys_file.path.display()
                ),
            ));
        }
        working_bytes += values_file.data_bytes();
    }
    if args.argsort {
        working_bytes += (keys_file.len * INDEX_DTYPE.size()) as u64;
    }
    memory::check_fits(
        &format!("sorting {}", keys_file.path.display()),
        working_bytes,
    )?;
    let mut job = SortJob {
        runner,
        order: args.order.order(),
        report: &mut report,
        output: &mut output,
    };
    with_key_type!(keys_file.dtype, K => match (&values_file, &mut values_output) {
        (Some(values_file), Some(values_output)) => {
            job.sort_with_values::<K>(&keys_file, values_file, values_output)
        }
        _ if args.argsort => job.argsort::<K>(&keys_file),
        _ => job.sort_keys::<K>(&keys_file),
    })?;
    output.commit()?;
    if let Some(values_output) = values_output {
        values_output.commit()?;
    }
    report.finish();
    Ok(())
}

/// One sort's settings and its output of keys (or of the permutation).
struct SortJob<'a> {
    runner: Runner,
    order: Order,
    report: &'a mut Reporter,
    output: &'a mut PendingOutput,
}

impl SortJob<'_> {
    fn sort_keys<K: Key>(&mut self, keys_file: &ArrayFile) -> Result<(), CliError> {
        let mut keys: Vec<K> = read_keys(self.report, "read", keys_file)?;
        self.sort::<K, u32>(&mut keys, None)?;
        write_output(self.report, self.output, K::DTYPE, &keys)
    }

    fn sort_with_values<K: Key>(
        &mut self,
        keys_file: &ArrayFile,
        values_file: &ArrayFile,
        values_output: &mut PendingOutput,
    ) -> Result<(), CliError> {
        // Values are only moved: sorted as unsigned integers of their width, the narrow ones
        // widened to 4 bytes (fewer programs to build for the GPU, fewer sorts to compile).
        match values_file.dtype.size() {
            1 => self.sort_narrow_values::<K, u8>(keys_file, values_file, values_output),
            2 => self.sort_narrow_values::<K, u16>(keys_file, values_file, values_output),
            4 => self.sort_values::<K, u32>(keys_file, values_file, values_output),
            _ => self.sort_values::<K, u64>(keys_file, values_file, values_output),
        }
    }

    fn sort_values<K: Key, V: Word>(
        &mut self,
        keys_file: &ArrayFile,
        values_file: &ArrayFile,
        values_output: &mut PendingOutput,
    ) -> Result<(), CliError> {
        let mut keys: Vec<K> = read_keys(self.report, "read", keys_file)?;
        let mut values: Vec<V> = read_values(self.report, values_file)?;
        self.sort(&mut keys, Some(&mut values))?;
        write_output(self.report, self.output, K::DTYPE, &keys)?;
        write_output(self.report, values_output, values_file.dtype, &values)
    }

    fn sort_narrow_values<K: Key, N: Word + Into<u32> + TryFrom<u32> + Default>(
        &mut self,
        keys_file: &ArrayFile,
        values_file: &ArrayFile,
        values_output: &mut PendingOutput,
    ) -> Result<(), CliError> {
        use rayon::prelude::*;
        let mut keys: Vec<K> = read_keys(self.report, "read", keys_file)?;
        let narrow: Vec<N> = read_values(self.report, values_file)?;
        let mut values: Vec<u32> = narrow.into_par_iter().map(Into::into).collect();
        self.sort(&mut keys, Some(&mut values))?;
        // Every value came from an N: narrowing it back loses nothing.
        let narrow: Vec<N> = values
            .into_par_iter()
            .map(|v| N::try_from(v).unwrap_or_default())
            .collect();
        write_output(self.report, self.output, K::DTYPE, &keys)?;
        write_output(self.report, values_output, values_file.dtype, &narrow)
    }

    fn argsort<K: Key>(&mut self, keys_file: &ArrayFile) -> Result<(), CliError> {
        let mut keys: Vec<K> = read_keys(self.report, "read", keys_file)?;
        // Indices as narrow as the count allows (less to move), written as int64.
        let indices: Vec<u64> = match u32::try_from(keys.len()) {
            Ok(count) => {
                let mut indices: Vec<u32> = (0..count).collect();
                self.sort(&mut keys, Some(&mut indices))?;
                widen(&indices)
            }
            Err(_) => {
                let mut indices: Vec<u64> = (0..keys.len() as u64).collect();
                self.sort(&mut keys, Some(&mut indices))?;
                indices
            }
        };
        write_output(self.report, self.output, INDEX_DTYPE, &indices)
    }

    /// Sort `keys` (and `values`) on the job's backend in its order.
    fn sort<K: Key, V: Word>(
        &mut self,
        keys: &mut [K],
        values: Option<&mut [V]>,
    ) -> Result<(), CliError> {
        match self.runner {
            Runner::Gpu(gpu) => K::visit_order(
                self.order,
                GpuSort {
                    gpu,
                    keys,
                    values,
                    report: self.report,
                },
            ),
            Runner::Cpu => self.report.phase("sort", None, || {
                cpu_sort_in_order(keys, values, self.order);
                Ok(())
            }),
        }
    }
}

/// An unsigned word that values are moved as, with its byte swap (for big-endian files).
pub trait Word: DeviceValue + DeviceRepr + ValidAsZeroBits {
    fn swap_bytes(self) -> Self;
}

macro_rules! words {
    ($($t:ty),*) => {$(
        impl Word for $t {
            fn swap_bytes(self) -> Self {
                <$t>::swap_bytes(self)
            }
        }
    )*};
}
words!(u8, u16, u32, u64);

/// Read `file` as values of width `V`, under the progress bar `read values`.
fn read_values<V: Word>(report: &mut Reporter, file: &ArrayFile) -> Result<Vec<V>, CliError> {
    report.bytes_phase("read values", file.data_bytes(), |bar| {
        array::read(file, bar, V::swap_bytes)
    })
}

/// `indices` as `u64`, in parallel.
fn widen(indices: &[u32]) -> Vec<u64> {
    use rayon::prelude::*;
    indices.par_iter().map(|&i| u64::from(i)).collect()
}

/// A sort of keys (and values) on the GPU under the comparator of an order.
struct GpuSort<'a, K, V> {
    gpu: &'a twophase::gpu::Gpu,
    keys: &'a mut [K],
    values: Option<&'a mut [V]>,
    report: &'a mut Reporter,
}

impl<K: Key, V: Word> OrderVisitor<K> for GpuSort<'_, K, V> {
    type Output = Result<(), CliError>;

    fn visit<C: DeviceComparator<K>>(self, comp: &C) -> Self::Output {
        device::sort(self.gpu, self.keys, self.values, comp, self.report)
    }
}
