//! The load-balancing search on host slices: the scan and positions checked, then staged through the device.

use super::TileCall;
use crate::error::check_len;
use crate::error::GpuError;
use crate::key::DeviceValue;
use crate::primitive::value_layout;
use crate::runtime::device::Gpu;
use crate::runtime::staging::Staged;
use crate::runtime::status::messages;
use crate::search::{check_values_per_segment, HostIndex};

/// Check a host segment scan: starts at 0, non-decreasing, at most `total`, at least one segment
/// when there are items. The error names `scan` and the first entry that breaks the rule.
fn check_host_scan<I: HostIndex>(scan: &[I], total: usize) -> Result<(), GpuError> {
    let invalid = |detail: String| {
        Err(GpuError::InvalidInput(format!(
            "{}: {detail}",
            messages::SCAN_INVALID
        )))
    };
    if scan.is_empty() && total > 0 {
        return invalid(format!(
            "it is empty, and {total} work items need a segment"
        ));
    }
    if let Some(&first) = scan.first() {
        if first.to_u64() != 0 {
            return invalid(format!("scan[0] = {}", first.to_u64()));
        }
    }
    if let Some(s) = scan.windows(2).position(|w| w[0].to_u64() > w[1].to_u64()) {
        return invalid(format!(
            "scan[{}] = {} < scan[{s}] = {}",
            s + 1,
            scan[s + 1].to_u64(),
            scan[s].to_u64()
        ));
    }
    if let Some(&last) = scan.last() {
        if last.to_u64() > total as u64 {
            return invalid(format!(
                "scan[{}] = {} > total = {total}",
                scan.len() - 1,
                last.to_u64()
            ));
        }
    }
    Ok(())
}

/// Check host gather or scatter positions (one per segment of the valid `scan`) against a buffer
/// of `len` elements: every `positions[s] + size(s)` of a non-empty segment at most `len`,
/// computed without overflow. The error is `message` with the first segment that passes the
/// buffer.
fn check_host_positions<I: HostIndex>(
    message: &str,
    scan: &[I],
    total: usize,
    positions: &[I],
    len: usize,
) -> Result<(), GpuError> {
    for (s, position) in positions.iter().enumerate() {
        let start = scan[s].to_u64();
        let end = scan.get(s + 1).map_or(total as u64, |e| e.to_u64());
        let size = end.saturating_sub(start);
        if size == 0 {
            // An empty segment moves nothing: its position is never used (as on the device).
            continue;
        }
        let fits = position
            .to_u64()
            .checked_add(size)
            .is_some_and(|end| end <= len as u64);
        if !fits {
            return Err(GpuError::InvalidInput(format!(
                "{message}: segment {s} at position {} with {size} items, buffer of {len}",
                position.to_u64()
            )));
        }
    }
    Ok(())
}

/// The segments of an interval move on host slices, and where each is read and written: segment
/// `s` holds the items `scan[s] .. scan[s + 1]` (the last one up to `total`), and moves from
/// `gather[s]` in the input to `scatter[s]` in the output.
#[derive(Clone, Copy, Debug)]
pub struct IntervalMove<'a, I> {
    /// The exclusive scan of the segment sizes: starts at 0, non-decreasing, at most `total`.
    pub scan: &'a [I],
    /// The number of items of all segments.
    pub total: usize,
    /// One input position per segment; `None`: each segment's own position `scan[s]` (the input
    /// then holds exactly `total` elements).
    pub gather: Option<&'a [I]>,
    /// One output position per segment; `None`: each segment's own position `scan[s]` (the
    /// output then holds exactly `total` elements).
    pub scatter: Option<&'a [I]>,
}

impl<'a, I> IntervalMove<'a, I> {
    /// The segments of `scan` and `total`, each read from and written to its own position
    /// `scan[s]` until [`gather`](Self::gather) or [`scatter`](Self::scatter) says otherwise.
    pub const fn new(scan: &'a [I], total: usize) -> Self {
        Self {
            scan,
            total,
            gather: None,
            scatter: None,
        }
    }

    /// Segment `s` read from `gather[s]` in the input (one position per segment).
    pub const fn gather(self, gather: &'a [I]) -> Self {
        Self {
            gather: Some(gather),
            ..self
        }
    }

    /// Segment `s` written to `scatter[s]` in the output (one position per segment).
    pub const fn scatter(self, scatter: &'a [I]) -> Self {
        Self {
            scatter: Some(scatter),
            ..self
        }
    }
}

impl Gpu {
    /// Host convenience: the segment of each of `total` work items (see
    /// [`load_balance_search_device`](Self::load_balance_search_device)); the scan is checked
    /// (starts at 0, non-decreasing, at most `total`).
    pub fn load_balance_search<I: HostIndex>(
        &self,
        scan: &[I],
        total: usize,
    ) -> Result<Vec<I>, GpuError> {
        let (segments, _) = self.load_balance_host(scan, total, false)?;
        Ok(segments)
    }

    /// Host convenience: each work item's `(segment, rank)`, as two vectors.
    pub fn load_balance_search_with_ranks<I: HostIndex>(
        &self,
        scan: &[I],
        total: usize,
    ) -> Result<(Vec<I>, Vec<I>), GpuError> {
        self.load_balance_host(scan, total, true)
    }

    fn load_balance_host<I: HostIndex>(
        &self,
        scan: &[I],
        total: usize,
        with_ranks: bool,
    ) -> Result<(Vec<I>, Vec<I>), GpuError> {
        check_host_scan(scan, total)?;
        let mut segments = bytemuck::zeroed_vec::<I>(total);
        let mut ranks = bytemuck::zeroed_vec::<I>(if with_ranks { total } else { 0 });
        if total == 0 {
            return Ok((segments, ranks));
        }
        let buffers = [
            Staged::Upload(bytemuck::cast_slice(scan)),
            Staged::Download(bytemuck::cast_slice_mut(&mut segments)),
            Staged::Download(bytemuck::cast_slice_mut(&mut ranks)),
        ];
        self.search_through_staging(buffers, |[scan_ptr, seg_ptr, rank_ptr], scratch| {
            let call = TileCall::Segments {
                segments: seg_ptr,
                ranks: if with_ranks { rank_ptr } else { 0 },
            };
            self.launch_load_balance::<I>((scan_ptr, scan.len()), total, call, None, None, scratch)
        })?;
        Ok((segments, ranks))
    }

    /// Host convenience: interval expand (`values[s]` replicated once per item of segment `s`).
    pub fn interval_expand<I: HostIndex, V: DeviceValue>(
        &self,
        scan: &[I],
        values: &[V],
        total: usize,
    ) -> Result<Vec<V>, GpuError> {
        check_host_scan(scan, total)?;
        check_values_per_segment(scan.len(), values.len())?;
        let mut out = bytemuck::zeroed_vec::<V>(total);
        self.interval_host(scan, total, IntervalHost::Expand(values), &mut out)?;
        Ok(out)
    }

    /// Host convenience: interval move ([`IntervalMove`]). For each segment `s` of size `n`,
    /// `output[scatter[s] .. + n] = input[gather[s] .. + n]`, where a missing `gather`
    /// (`scatter`) means the segment's own position `scan[s]`. Output entries no segment writes
    /// keep their values. Positions are checked against `input` and `output`.
    pub fn interval_move<I: HostIndex, V: DeviceValue>(
        &self,
        moves: IntervalMove<'_, I>,
        input: &[V],
        output: &mut [V],
    ) -> Result<(), GpuError> {
        let (scan, total) = (moves.scan, moves.total);
        check_host_scan(scan, total)?;
        match moves.gather {
            None => check_len("interval move input", total, input.len())?,
            Some(gather) => {
                check_len("gather positions", scan.len(), gather.len())?;
                check_host_positions(messages::GATHER_INVALID, scan, total, gather, input.len())?;
            }
        }
        match moves.scatter {
            None => check_len("interval move output", total, output.len())?,
            Some(scatter) => {
                check_len("scatter positions", scan.len(), scatter.len())?;
                check_host_positions(
                    messages::SCATTER_INVALID,
                    scan,
                    total,
                    scatter,
                    output.len(),
                )?;
            }
        }
        let what = IntervalHost::Move {
            gather: moves.gather,
            scatter: moves.scatter,
            input,
        };
        self.interval_host(scan, total, what, output)
    }

    fn interval_host<I: HostIndex, V: DeviceValue>(
        &self,
        scan: &[I],
        total: usize,
        what: IntervalHost<'_, I, V>,
        out: &mut [V],
    ) -> Result<(), GpuError> {
        if total == 0 {
            return Ok(());
        }
        let (src, gather, scatter): (&[V], &[I], &[I]) = match what {
            IntervalHost::Expand(values) => (values, &[], &[]),
            IntervalHost::Move {
                gather,
                scatter,
                input,
            } => (input, gather.unwrap_or(&[]), scatter.unwrap_or(&[])),
        };
        let out_count = out.len() as u64;
        let buffers = [
            Staged::Upload(bytemuck::cast_slice(scan)),
            Staged::Upload(bytemuck::cast_slice(src)),
            Staged::Upload(bytemuck::cast_slice(gather)),
            Staged::Upload(bytemuck::cast_slice(scatter)),
            Staged::InPlace(bytemuck::cast_slice_mut(out)),
        ];
        self.search_through_staging(
            buffers,
            |[scan_ptr, src_ptr, gather_ptr, scatter_ptr, out_ptr], scratch| {
                let call = match what {
                    IntervalHost::Expand(_) => TileCall::Expand {
                        values: src_ptr,
                        out: out_ptr,
                    },
                    IntervalHost::Move {
                        gather, scatter, ..
                    } => TileCall::Move {
                        gather: if gather.is_some() { gather_ptr } else { 0 },
                        scatter: if scatter.is_some() { scatter_ptr } else { 0 },
                        input: (src_ptr, src.len() as u64),
                        output: (out_ptr, out_count),
                    },
                };
                let layout = value_layout::<V>();
                self.launch_load_balance::<I>(
                    (scan_ptr, scan.len()),
                    total,
                    call,
                    layout,
                    None,
                    scratch,
                )
            },
        )
    }
}

/// What a host interval call moves.
enum IntervalHost<'a, I, V> {
    Expand(&'a [V]),
    Move {
        gather: Option<&'a [I]>,
        scatter: Option<&'a [I]>,
        input: &'a [V],
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<(), GpuError>) -> String {
        match result {
            Err(GpuError::InvalidInput(message)) => message,
            other => panic!("expected InvalidInput, got {other:?}"),
        }
    }

    #[test]
    fn host_scans_that_break_the_rules_name_the_scan() {
        check_host_scan::<usize>(&[0, 0, 2, 5], 5).expect("valid");
        check_host_scan::<usize>(&[], 0).expect("no items, no segments");
        for (scan, total) in [
            (vec![1usize, 2], 4),
            (vec![0, 3, 2], 4),
            (vec![0, 5], 4),
            (vec![0, usize::MAX], 4),
            (vec![], 3),
        ] {
            let text = message(check_host_scan(&scan, total));
            assert!(text.contains(messages::SCAN_INVALID), "{scan:?}: {text}");
        }
    }

    #[test]
    fn host_positions_are_checked_without_overflow() {
        let scan = [0usize, 2, 2];
        let total = 5;
        // Sizes 2, 0, 3.
        check_host_positions("p", &scan, total, &[0usize, 99, 2], 5).expect("in range");
        check_host_positions("p", &scan, total, &[3usize, 0, 0], 5).expect("ends at the buffer");
        for positions in [
            [4usize, 0, 0],
            [0, 0, 3],
            [usize::MAX, 0, 0],
            [usize::MAX - 1, 0, 0],
            [0, 0, usize::MAX - 2],
        ] {
            let text = message(check_host_positions(
                messages::GATHER_INVALID,
                &scan,
                total,
                &positions,
                5,
            ));
            assert!(
                text.contains(messages::GATHER_INVALID),
                "{positions:?}: {text}"
            );
        }
        // An empty segment may sit anywhere, even at usize::MAX.
        check_host_positions("p", &scan, total, &[0usize, usize::MAX, 0], 5)
            .expect("empty segment");
    }
}
