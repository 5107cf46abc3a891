//! The load-balancing search on device buffers: segment ids (and ranks), the interval operations (expand, gather, scatter, move), a user snippet.

use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::{LoadBalanceOp, LoadBalanceTuning, OpArgs, TileCall, OP_ARGS};
use crate::error::check_len;
use crate::error::GpuError;
use crate::key::DeviceValue;
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use crate::search::{check_values_per_segment, DeviceIndex, SearchScratch};

/// An interval operation on device buffers, with its inputs: what
/// [`Gpu::interval_device`] writes to its output `out`, segment by segment (segment `s` holds
/// the items `scan[s] .. scan[s] + size(s)`).
pub enum Interval<'a, I, V> {
    /// Interval expand: `out[item] = values[segment of item]` (one value per segment).
    Expand {
        /// At least one value per segment.
        values: &'a dyn DevicePtr<V>,
    },
    /// Interval gather: `out[scan[s] + r] = input[gather[s] + r]` for `r < size(s)`.
    Gather {
        /// One position in `input` per segment.
        gather: &'a dyn DevicePtr<I>,
        /// The values gathered from.
        input: &'a dyn DevicePtr<V>,
    },
    /// Interval scatter: `out[scatter[s] + r] = input[scan[s] + r]` for `r < size(s)`.
    Scatter {
        /// One position in `out` per segment.
        scatter: &'a dyn DevicePtr<I>,
        /// The `total` items scattered.
        input: &'a dyn DevicePtr<V>,
    },
    /// Interval move: `out[scatter[s] + r] = input[gather[s] + r]` for `r < size(s)`.
    Move {
        /// One position in `input` per segment.
        gather: &'a dyn DevicePtr<I>,
        /// One position in `out` per segment.
        scatter: &'a dyn DevicePtr<I>,
        /// The values moved.
        input: &'a dyn DevicePtr<V>,
    },
}

impl<'a, I, V> Interval<'a, I, V> {
    /// The source of the values (`values` or `input`) and the gather and scatter positions
    /// (`None`: a segment's own position `scan[s]`).
    #[allow(clippy::type_complexity)] // The operation's three inputs, each as it is given.
    fn inputs(
        &self,
    ) -> (
        &'a dyn DevicePtr<V>,
        Option<&'a dyn DevicePtr<I>>,
        Option<&'a dyn DevicePtr<I>>,
    ) {
        match *self {
            Interval::Expand { values } => (values, None, None),
            Interval::Gather { gather, input } => (input, Some(gather), None),
            Interval::Scatter { scatter, input } => (input, None, Some(scatter)),
            Interval::Move {
                gather,
                scatter,
                input,
            } => (input, Some(gather), Some(scatter)),
        }
    }
}

impl Gpu {
    /// Load-balancing search on the device: for each of the `total` work items, the segment it
    /// belongs to in `segments` (length `total`), given `scan`, the exclusive scan of the segment
    /// sizes (`scan[s]` = first item of segment `s`: starts at 0, non-decreasing, at most
    /// `total`), and with `ranks` (length `total`) each item's rank inside its segment. Empty
    /// segments are skipped over. `tuning` is the tile kernel's launch shape; `None` takes
    /// [`LoadBalanceTuning::shipped`]. Asynchronous.
    ///
    /// The scan is checked on the device: the items of a tile whose part of the scan is invalid
    /// are not written, every id written is below `scan.len()`, and [`SearchScratch::check`]
    /// reports an invalid scan.
    pub fn load_balance_search_device<I: DeviceIndex>(
        &self,
        scan: &dyn DevicePtr<I>,
        total: usize,
        segments: &mut dyn DevicePtrMut<I>,
        ranks: Option<&mut dyn DevicePtrMut<I>>,
        tuning: Option<LoadBalanceTuning>,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError> {
        check_len("segment ids", total, segments.len())?;
        if let Some(ranks) = &ranks {
            check_len("ranks", total, ranks.len())?;
        }
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (segments_ptr, _o) = segments.device_ptr_mut(&stream);
        let ranks = ranks.map(|ranks| ranks.device_ptr_mut(&stream));
        let call = TileCall::Segments {
            segments: segments_ptr,
            ranks: ranks.as_ref().map_or(0, |(ptr, _)| *ptr),
        };
        self.launch_load_balance::<I>((scan_ptr, scan.len()), total, call, None, tuning, scratch)
    }

    /// An interval operation on the device (expand, gather, scatter or move: [`Interval`]) over
    /// the `total` items of the segments described by `scan`, written to `out`. `tuning` is the
    /// tile kernel's launch shape; `None` takes [`LoadBalanceTuning::shipped`]. Asynchronous.
    ///
    /// The lengths are checked here: `out` (expand, gather) or `input` (scatter) holds exactly
    /// `total` values, each position buffer one index per segment, `values` at least one value
    /// per segment. The scan and the positions are checked on the device: items of a tile whose
    /// part of the scan is invalid, or whose `gather[s] + r` passes `input.len()` or
    /// `scatter[s] + r` passes `out.len()`, are not written, and [`SearchScratch::check`]
    /// reports it.
    pub fn interval_device<I: DeviceIndex, V: DeviceValue>(
        &self,
        scan: &dyn DevicePtr<I>,
        total: usize,
        op: Interval<'_, I, V>,
        out: &mut dyn DevicePtrMut<V>,
        tuning: Option<LoadBalanceTuning>,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError> {
        match &op {
            Interval::Expand { values } => {
                check_len("expand output", total, out.len())?;
                check_values_per_segment(scan.len(), values.len())?;
            }
            Interval::Gather { gather, .. } => {
                check_len("gather output", total, out.len())?;
                check_len("gather positions", scan.len(), gather.len())?;
            }
            Interval::Scatter { scatter, input } => {
                check_len("scatter input", total, input.len())?;
                check_len("scatter positions", scan.len(), scatter.len())?;
            }
            Interval::Move {
                gather, scatter, ..
            } => {
                check_len("gather positions", scan.len(), gather.len())?;
                check_len("scatter positions", scan.len(), scatter.len())?;
            }
        }
        let (input, gather, scatter) = op.inputs();
        let stream = self.stream().clone();
        let gather = gather.map(|positions| positions.device_ptr(&stream));
        let scatter = scatter.map(|positions| positions.device_ptr(&stream));
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (input_ptr, _i) = input.device_ptr(&stream);
        let out_count = out.len() as u64;
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        let call = match op {
            Interval::Expand { .. } => TileCall::Expand {
                values: input_ptr,
                out: out_ptr,
            },
            // 0 for a missing side: the identity, `scan[s]`.
            _ => TileCall::Move {
                gather: gather.as_ref().map_or(0, |(ptr, _)| *ptr),
                scatter: scatter.as_ref().map_or(0, |(ptr, _)| *ptr),
                input: (input_ptr, input.len() as u64),
                output: (out_ptr, out_count),
            },
        };
        let layout = value_layout::<V>();
        self.launch_load_balance::<I>((scan_ptr, scan.len()), total, call, layout, tuning, scratch)
    }

    /// Run the user snippet `op` once per work item with its (item, segment, rank), the segments
    /// given by the device scan `scan` and `total`; `args` (at most [`OP_ARGS`] values, the rest
    /// zero) reach the snippet as `args.p[i]`. Asynchronous.
    ///
    /// The scan is checked on the device: the snippet runs only for the items of tiles whose part
    /// of the scan is valid, always with `item < total`, `segment < scan.len()` and
    /// `rank <= item`; [`SearchScratch::check`] reports an invalid scan.
    ///
    /// # Safety
    ///
    /// `op` is CUDA code that the kernel runs as it is, and `args` reach it as raw numbers: every
    /// memory access the snippet makes, for any (item, segment, rank) above, must be valid (in
    /// bounds of live device allocations, free of data races with other work on the device)
    /// until this stream's work is done. twophase checks the scan, not what the snippet does.
    pub unsafe fn load_balance_for_each_device<I: DeviceIndex>(
        &self,
        scan: &dyn DevicePtr<I>,
        total: usize,
        op: &LoadBalanceOp,
        args: &[u64],
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError> {
        if args.len() > OP_ARGS {
            return Err(GpuError::SizeMismatch {
                what: "snippet arguments (at most OP_ARGS)",
                expected: OP_ARGS,
                got: args.len(),
            });
        }
        let mut packed = OpArgs::default();
        packed.0[..args.len()].copy_from_slice(args);
        let (scan_ptr, _s) = scan.device_ptr(self.stream());
        let call = TileCall::ForEach { op, args: packed };
        self.launch_load_balance::<I>((scan_ptr, scan.len()), total, call, None, None, scratch)
    }
}
