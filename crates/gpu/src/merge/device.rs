//! The device-buffer merge call: the two-phase merge or a textbook variant, on `MergeBuffers`.

use crate::compare::DeviceComparator;
use crate::error::GpuError;
use crate::key::DeviceKey;
use crate::merge::{DeviceMergeBuffers, MergeScratch, MergeTuning};
use crate::primitive::ProgramTuning;
use crate::runtime::device::Gpu;
use crate::variants::textbook::{MergeVariant, TextbookMergeTuning};

impl Gpu {
    /// Merge the sorted device sequences of `buffers`
    /// ([`MergeBuffers::keys`](crate::MergeBuffers::keys): `a` and `b` into `out`, of length
    /// `a.len() + b.len()`; [`MergeBuffers::pairs`](crate::MergeBuffers::pairs): each value
    /// moved with its key), stably (ties: A first), with `algorithm`: the two-phase merge at its
    /// tuning, or a [`MergeVariant`] (the textbook kernels at theirs). Asynchronous on this
    /// handle's stream.
    ///
    /// Whatever the keys and the comparator, `out` receives a permutation of `a` and `b`, in
    /// unspecified order where the inputs are not sorted under `comp` (or the comparator answers
    /// inconsistently). Every algorithm records that in the scratch (whose partitions both the
    /// two-phase merge and the textbook kernels' block cuts use): [`MergeScratch::check`] (which
    /// synchronizes) reports it as `InvalidInput` naming `a` or `b`, or the comparator.
    pub fn merge_device<K, C, M>(
        &self,
        buffers: M,
        comp: &C,
        algorithm: MergeAlgorithm,
        scratch: &mut MergeScratch,
    ) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        M: DeviceMergeBuffers<K>,
    {
        match algorithm {
            MergeAlgorithm::TwoPhase(tuning) => buffers.with_args(self, |args| {
                let outputs = args.a_count + args.b_count;
                let tuning = tuning.unwrap_or_else(|| self.merge_tuning::<K>(M::VALUES, outputs));
                self.launch_merge::<K, C>(args, comp, M::VALUES, tuning, scratch)
            }),
            MergeAlgorithm::Variant(variant, tuning) => {
                let tuning = tuning.unwrap_or(TextbookMergeTuning::for_layout::<K>(M::VALUES));
                buffers.with_args(self, |args| {
                    self.launch_merge_variant::<K, C>(
                        variant,
                        args,
                        comp,
                        M::VALUES,
                        tuning,
                        scratch,
                        None,
                    )
                })
            }
        }
    }
}

/// Which merge [`Gpu::merge_device`] runs, at which tuning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MergeAlgorithm {
    /// The two-phase merge at this tuning (`None`: the one shipped for the key and value types on
    /// the device, [`Gpu::merge_tuning`]).
    TwoPhase(Option<MergeTuning>),
    /// The variant's merge: a textbook kernel at this tuning (`None`: the shipped
    /// [`TextbookMergeTuning::for_types`]), or for [`MergeVariant::TwoPhase`] the two-phase
    /// merge at its shipped tuning (this one unused).
    Variant(MergeVariant, Option<TextbookMergeTuning>),
}

impl Default for MergeAlgorithm {
    /// The two-phase merge at its shipped tuning.
    fn default() -> Self {
        MergeAlgorithm::TwoPhase(None)
    }
}

impl From<MergeVariant> for MergeAlgorithm {
    /// The variant at its shipped tuning.
    fn from(variant: MergeVariant) -> Self {
        MergeAlgorithm::Variant(variant, None)
    }
}
