//! `twophase search`: the lower (or upper) bound of each sorted needle in a sorted haystack, as int64.

use twophase::{DeviceComparator, SearchBound};

use super::array::{self, ArrayFile};
use super::backend::{self, Runner};
use super::dtype::with_key_type;
use super::error::CliError;
use super::keys::{Key, Order, OrderVisitor};
use super::merge::check_same_dtype;
use super::output::PendingOutput;
use super::report::Reporter;
use super::sort::{check_sorted, read_keys, write_output};
use super::{device, memory, Dtype, SearchArgs};

/// The element type of the bounds written, as NumPy's `searchsorted` returns them.
const BOUND_DTYPE: Dtype = Dtype::I64;

/// `twophase search`.
pub fn run(args: &SearchArgs) -> Result<(), CliError> {
    let mut report = Reporter::new(args.report.quiet, args.report.timings);
    let runner = backend::choose(args.backend.choice(), &mut report)?;
    let mut output = PendingOutput::create(&args.output)?;
    let haystack = array::open(&args.haystack, args.dtype, None, "HAYSTACK")?;
    let needles = array::open(&args.needles, args.dtype, Some(haystack.dtype), "NEEDLES")?;
    check_same_dtype(&haystack, &needles)?;
    let bounds_bytes = (needles.len * BOUND_DTYPE.size()) as u64;
    memory::check_fits(
        "the search",
        haystack.data_bytes() + needles.data_bytes() + bounds_bytes,
    )?;
    let bound = if args.upper {
        SearchBound::Upper
    } else {
        SearchBound::Lower
    };
    let order = args.order.order();
    let written = with_key_type!(haystack.dtype, K => {
        let haystack_keys: Vec<K> = read_keys(&mut report, "read haystack", &haystack)?;
        let needle_keys: Vec<K> = read_keys(&mut report, "read needles", &needles)?;
        let bounds = K::visit_order(
            order,
            SearchVisitor {
                runner,
                order,
                bound,
                haystack: (&haystack, &haystack_keys),
                needles: (&needles, &needle_keys),
                report: &mut report,
            },
        )?;
        write_output(&mut report, &mut output, BOUND_DTYPE, &bounds)
    });
    written?;
    output.commit()?;
    report.finish();
    Ok(())
}

/// A sorted search of one file's keys in another's under the comparator of an order.
struct SearchVisitor<'a, K> {
    runner: Runner,
    order: Order,
    bound: SearchBound,
    haystack: (&'a ArrayFile, &'a [K]),
    needles: (&'a ArrayFile, &'a [K]),
    report: &'a mut Reporter,
}

impl<K: Key> OrderVisitor<K> for SearchVisitor<'_, K> {
    type Output = Result<Vec<u64>, CliError>;

    fn visit<C: DeviceComparator<K>>(self, comp: &C) -> Self::Output {
        let SearchVisitor {
            runner,
            order,
            bound,
            haystack: (haystack_file, haystack),
            needles: (needles_file, needles),
            report,
        } = self;
        report.phase("check order", None, || {
            check_sorted(haystack_file, haystack, comp, order)?;
            check_sorted(needles_file, needles, comp, order)
        })?;
        match runner {
            Runner::Gpu(gpu) => device::sorted_search(gpu, needles, haystack, bound, comp, report),
            Runner::Cpu => report.phase("search", None, || {
                let bounds = twophase::cpu::sorted_search_by(needles, haystack, bound, |x, y| {
                    comp.is_less(x, y)
                });
                Ok(bounds.into_iter().map(|b| b as u64).collect())
            }),
        }
    }
}
