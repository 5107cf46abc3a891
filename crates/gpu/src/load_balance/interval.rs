//! The load-balancing search on device buffers: segment ids, interval expand, gather, scatter and move, a user snippet.

use std::mem::{align_of, size_of};

use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::{LoadBalanceOp, LoadBalanceTuning, OpArgs, TileCall, OP_ARGS};
use crate::error::GpuError;
use crate::key::DeviceValue;
use crate::runtime::device::Gpu;
use crate::search::{check_len, DeviceIndex, SearchScratch};

impl Gpu {
    /// Load-balancing search on the device: for each of the `total` work items, the segment it
    /// belongs to in `segments` (length `total`), given `scan`, the exclusive scan of the segment
    /// sizes (`scan[s]` = first item of segment `s`: starts at 0, non-decreasing, at most
    /// `total`). Empty segments are skipped over. Asynchronous.
    ///
    /// The scan is checked on the device: the items of a tile whose part of the scan is invalid
    /// are not written, every id written is below `scan.len()`, and [`SearchScratch::check`]
    /// reports an invalid scan.
    pub fn load_balance_search_device<I, S, O>(
        &self,
        scan: &S,
        total: usize,
        segments: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
        O: DevicePtrMut<I>,
    {
        self.load_balance_search_device_tuned(
            scan,
            total,
            segments,
            LoadBalanceTuning::shipped(),
            scratch,
        )
    }

    /// [`load_balance_search_device`](Self::load_balance_search_device) with an explicit tuning.
    pub fn load_balance_search_device_tuned<I, S, O>(
        &self,
        scan: &S,
        total: usize,
        segments: &mut O,
        tuning: LoadBalanceTuning,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
        O: DevicePtrMut<I>,
    {
        check_len("segment ids", total, segments.len())?;
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (out_ptr, _o) = segments.device_ptr_mut(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::Segments {
                segments: out_ptr,
                ranks: 0,
            },
            None,
            &LoadBalanceOp::none(),
            tuning,
            scratch,
        )
    }

    /// [`load_balance_search_device`](Self::load_balance_search_device) that also writes each
    /// item's rank inside its segment to `ranks` (length `total`). Checked and reported as that
    /// call is.
    pub fn load_balance_search_with_ranks_device<I, S, O, R>(
        &self,
        scan: &S,
        total: usize,
        segments: &mut O,
        ranks: &mut R,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
        O: DevicePtrMut<I>,
        R: DevicePtrMut<I>,
    {
        check_len("segment ids", total, segments.len())?;
        check_len("ranks", total, ranks.len())?;
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (out_ptr, _o) = segments.device_ptr_mut(&stream);
        let (ranks_ptr, _r) = ranks.device_ptr_mut(&stream);
        self.launch_builtin::<I>(
            (scan_ptr, scan.len()),
            total,
            TileCall::Segments {
                segments: out_ptr,
                ranks: ranks_ptr,
            },
            None,
            scratch,
        )
    }

    /// Interval expand on the device: `out[item] = values[segment of item]` for the `total`
    /// items of the segments described by `scan` (one value per segment). Asynchronous.
    ///
    /// The scan is checked on the device: the items of a tile whose part of the scan is invalid
    /// are not written, and [`SearchScratch::check`] reports it.
    pub fn interval_expand_device<I, V, S, W, O>(
        &self,
        scan: &S,
        values: &W,
        total: usize,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        W: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("expand output", total, out.len())?;
        if values.len() < scan.len() {
            return Err(GpuError::SizeMismatch {
                what: "values (one per segment)",
                expected: scan.len(),
                got: values.len(),
            });
        }
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (values_ptr, _v) = values.device_ptr(&stream);
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        self.launch_builtin::<I>(
            (scan_ptr, scan.len()),
            total,
            TileCall::Expand {
                values: values_ptr,
                out: out_ptr,
            },
            Some((size_of::<V>(), align_of::<V>())),
            scratch,
        )
    }

    /// Interval gather on the device: for each segment `s` (sizes by `scan`, `total` items),
    /// `out[scan[s] + r] = input[gather[s] + r]` for `r < size(s)`. Asynchronous.
    ///
    /// The scan and the positions are checked on the device: items of a tile whose part of the
    /// scan is invalid, or whose `gather[s] + r` lies past `input.len()`, are not written, and
    /// [`SearchScratch::check`] reports it.
    #[allow(clippy::too_many_arguments)] // Four buffers are the operation's inputs and outputs.
    pub fn interval_gather_device<I, V, S, G, In, O>(
        &self,
        scan: &S,
        total: usize,
        gather: &G,
        input: &In,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        G: DevicePtr<I>,
        In: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("gather output", total, out.len())?;
        check_len("gather positions", scan.len(), gather.len())?;
        let (gather_ptr, _g) = gather.device_ptr(self.stream());
        self.move_device::<I, V, S, In, O>(scan, total, (gather_ptr, 0), input, out, scratch)
    }

    /// Interval scatter on the device: for each segment `s`,
    /// `out[scatter[s] + r] = input[scan[s] + r]` for `r < size(s)` (`input` holds the `total`
    /// items). Asynchronous.
    ///
    /// The scan and the positions are checked on the device: items of a tile whose part of the
    /// scan is invalid, or whose `scatter[s] + r` lies past `out.len()`, are not written, and
    /// [`SearchScratch::check`] reports it.
    #[allow(clippy::too_many_arguments)] // Four buffers are the operation's inputs and outputs.
    pub fn interval_scatter_device<I, V, S, G, In, O>(
        &self,
        scan: &S,
        total: usize,
        scatter: &G,
        input: &In,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        G: DevicePtr<I>,
        In: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("scatter input", total, input.len())?;
        check_len("scatter positions", scan.len(), scatter.len())?;
        let (scatter_ptr, _t) = scatter.device_ptr(self.stream());
        self.move_device::<I, V, S, In, O>(scan, total, (0, scatter_ptr), input, out, scratch)
    }

    /// Interval move on the device: for each segment `s`,
    /// `out[scatter[s] + r] = input[gather[s] + r]` for `r < size(s)`. Asynchronous.
    ///
    /// The scan and the positions are checked on the device: items of a tile whose part of the
    /// scan is invalid, or whose `gather[s] + r` passes `input.len()` or `scatter[s] + r` passes
    /// `out.len()`, are not written, and [`SearchScratch::check`] reports it.
    #[allow(clippy::too_many_arguments)] // Five buffers are the operation's inputs and outputs.
    pub fn interval_move_device<I, V, S, G, T, In, O>(
        &self,
        scan: &S,
        total: usize,
        gather: &G,
        scatter: &T,
        input: &In,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        G: DevicePtr<I>,
        T: DevicePtr<I>,
        In: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        check_len("gather positions", scan.len(), gather.len())?;
        check_len("scatter positions", scan.len(), scatter.len())?;
        let (gather_ptr, _g) = gather.device_ptr(self.stream());
        let (scatter_ptr, _t) = scatter.device_ptr(self.stream());
        let positions = (gather_ptr, scatter_ptr);
        self.move_device::<I, V, S, In, O>(scan, total, positions, input, out, scratch)
    }

    /// Run the user snippet `op` once per work item with its (item, segment, rank), the segments
    /// given by the device scan `scan` and `total`; `args` (at most [`OP_ARGS`] values, the rest
    /// zero) reach the snippet as `args.p[i]`. Asynchronous.
    ///
    /// The scan is checked on the device: the snippet runs only for the items of tiles whose part
    /// of the scan is valid, always with `item < total`, `segment < scan.len()` and
    /// `rank <= item`; [`SearchScratch::check`] reports an invalid scan.
    pub fn load_balance_for_each_device<I, S>(
        &self,
        scan: &S,
        total: usize,
        op: &LoadBalanceOp,
        args: &[u64],
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        S: DevicePtr<I>,
    {
        if args.len() > OP_ARGS {
            return Err(GpuError::SizeMismatch {
                what: "snippet arguments (at most OP_ARGS)",
                expected: OP_ARGS,
                got: args.len(),
            });
        }
        let mut packed = OpArgs::default();
        packed.0[..args.len()].copy_from_slice(args);
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        self.launch_load_balance::<I>(
            scan_ptr,
            scan.len(),
            total,
            TileCall::ForEach { args: packed },
            None,
            op,
            LoadBalanceTuning::shipped(),
            scratch,
        )
    }

    /// The moves of interval gather, scatter and move: `out[scatter[s] + r] = input[gather[s] +
    /// r]`, with the positions' device addresses (0: the identity, `scan[s]`), which the caller
    /// keeps alive for the call.
    fn move_device<I, V, S, In, O>(
        &self,
        scan: &S,
        total: usize,
        (gather, scatter): (u64, u64),
        input: &In,
        out: &mut O,
        scratch: &mut SearchScratch,
    ) -> Result<(), GpuError>
    where
        I: DeviceIndex,
        V: DeviceValue,
        S: DevicePtr<I>,
        In: DevicePtr<V>,
        O: DevicePtrMut<V>,
    {
        let stream = self.stream().clone();
        let (scan_ptr, _s) = scan.device_ptr(&stream);
        let (input_ptr, _i) = input.device_ptr(&stream);
        let out_count = out.len() as u64;
        let (out_ptr, _o) = out.device_ptr_mut(&stream);
        self.launch_builtin::<I>(
            (scan_ptr, scan.len()),
            total,
            TileCall::Move {
                gather,
                scatter,
                input: (input_ptr, input.len() as u64),
                output: (out_ptr, out_count),
            },
            Some((size_of::<V>(), align_of::<V>())),
            scratch,
        )
    }
}
