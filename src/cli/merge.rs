//! `twophase merge`: the stable merge of two sorted files, each checked to be sorted first.

use twophase::DeviceComparator;

use super::array::{self, ArrayFile};
use super::backend::{self, Runner};
use super::dtype::with_key_type;
use super::error::CliError;
use super::keys::{cpu_merge_in_order, Key, Order, OrderVisitor};
use super::output::PendingOutput;
use super::report::Reporter;
use super::sort::{check_sorted, read_keys, write_output};
use super::{device, memory, MergeArgs};

/// `twophase merge`.
pub fn run(args: &MergeArgs) -> Result<(), CliError> {
    let mut report = Reporter::new(args.report.quiet, args.report.timings);
    let runner = backend::choose(args.backend.choice(), &mut report)?;
    let mut output = PendingOutput::create(&args.output)?;
    let a = array::open(&args.a, args.dtype, None, "A")?;
    let b = array::open(&args.b, args.dtype, Some(a.dtype), "B")?;
    check_same_dtype(&a, &b)?;
    memory::check_fits("the merge", a.data_bytes() + b.data_bytes())?;
    let order = args.order.order();
    let merged = with_key_type!(a.dtype, K => {
        let a_keys: Vec<K> = read_keys(&mut report, "read A", &a)?;
        let b_keys: Vec<K> = read_keys(&mut report, "read B", &b)?;
        let merged = K::visit_order(
            order,
            MergeVisitor {
                runner,
                order,
                inputs: [(&a, &a_keys), (&b, &b_keys)],
                report: &mut report,
            },
        )?;
        write_output(&mut report, &mut output, K::DTYPE, &merged)
    });
    merged?;
    output.commit()?;
    report.finish();
    Ok(())
}

/// An error unless `b` holds `a`'s dtype: two files of one merge or search hold one type.
pub fn check_same_dtype(a: &ArrayFile, b: &ArrayFile) -> Result<(), CliError> {
    if a.dtype == b.dtype {
        return Ok(());
    }
    Err(CliError::bad_input(
        &b.path,
        format!(
            "holds {} but {} holds {}: both inputs must have one dtype",
            b.dtype,
            a.path.display(),
            a.dtype
        ),
    ))
}

/// The merge of two files' keys under the comparator of an order.
struct MergeVisitor<'a, K> {
    runner: Runner,
    order: Order,
    inputs: [(&'a ArrayFile, &'a [K]); 2],
    report: &'a mut Reporter,
}

impl<K: Key> OrderVisitor<K> for MergeVisitor<'_, K> {
    type Output = Result<Vec<K>, CliError>;

    fn visit<C: DeviceComparator<K>>(self, comp: &C) -> Self::Output {
        let MergeVisitor {
            runner,
            order,
            inputs,
            report,
        } = self;
        report.phase("check order", None, || {
            inputs
                .iter()
                .try_for_each(|(file, keys)| check_sorted(file, keys, comp, order))
        })?;
        let [(_, a), (_, b)] = inputs;
        match runner {
            Runner::Gpu(gpu) => device::merge(gpu, a, b, comp, report),
            Runner::Cpu => report.phase("merge", None, || Ok(cpu_merge_in_order(a, b, order))),
        }
    }
}
