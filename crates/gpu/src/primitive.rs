//! What every primitive's program has in common: its tuning names it, lists its kernels, builds its source and has a shipped value per key and value type.

use std::mem::{align_of, size_of};
use std::sync::Arc;

use crate::compare::{key_image, DeviceComparator, ImageOrder, KeyImage};
use crate::error::GpuError;
use crate::key::{DeviceKey, DeviceValue};
use crate::runtime::device::Gpu;
use crate::runtime::launch::{param_asserts, ParamLayout};
use crate::runtime::module_cache::Kernels;
use crate::runtime::program::{
    program, program_id, shipped_programs, Program, ProgramFactory, ValueLayout,
};

/// The layout of values of type `V` moved with the keys.
pub(crate) const fn value_layout<V: DeviceValue>() -> ValueLayout {
    Some((size_of::<V>(), align_of::<V>()))
}

/// The size in bytes of the values of `layout` (0 for keys alone).
pub(crate) const fn value_bytes(layout: ValueLayout) -> usize {
    match layout {
        Some((size, _)) => size,
        None => 0,
    }
}

/// A primitive's tuning: it picks the primitive's program (label, launch shape, kernels,
/// source), so that one call builds, prepares, fetches or lists the programs of any primitive.
pub trait ProgramTuning: Copy + 'static {
    /// The primitive's kernel sources, in the order they follow the prelude and the tuning's
    /// defines.
    const SOURCES: &'static [&'static str];

    /// The program's label in its cache key and name: the primitive, with the parts of the
    /// tuning the launch shape does not carry.
    fn label(self) -> String;

    /// Threads per block and items per thread: the program's `TP_NT` and `TP_VT`.
    fn shape(self) -> (u32, u32);

    /// The entry points the program compiles.
    fn entries(self) -> &'static [&'static str];

    /// The tuning's `#define`s besides the launch shape, placed before the kernel sources.
    fn defines(self) -> String;

    /// The parameter blocks of the kernels the program compiles, whose layouts it asserts.
    fn params(self) -> Vec<&'static ParamLayout>;

    /// The rules of the tunings shipped for keys of `key_bytes` bytes with values of
    /// `value_bytes` bytes (0 for keys only): the first is the one for any device, the others
    /// (if any) are shipped for devices that need them.
    const SHIPPED: &'static [fn(usize, usize) -> Self];

    /// The tuning shipped for keys `K` with values of `values`' layout (`None` for keys only):
    /// the first of [`SHIPPED`](Self::SHIPPED) for their sizes.
    fn for_layout<K: DeviceKey>(values: ValueLayout) -> Self {
        (Self::SHIPPED[0])(size_of::<K>(), value_bytes(values))
    }

    /// Whether the primitive sorts keys whose order has an integer image ([`KeyImage`]) as those
    /// integers: then its program for such an order is the image's ([`key_image_of`]).
    const MAPS_KEY_IMAGES: bool = false;

    /// The program for key `K`, comparator `comp` and value layout `values` at this tuning: the
    /// defines, the sources and the asserts of the parameter blocks.
    fn program<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
        self,
        comp: &C,
        values: ValueLayout,
    ) -> Program {
        match key_image_of::<K, C, Self>(comp) {
            Some(image) if image.bits() == u32::BITS => {
                return self.program::<u32, ImageOrder>(&image.order(), values);
            }
            Some(image) => return self.program::<u64, ImageOrder>(&image.order(), values),
            None => {}
        }
        let defines = self.defines();
        let asserts = param_asserts(&self.params());
        let mut sources = vec![defines.as_str()];
        sources.extend(Self::SOURCES);
        sources.push(&asserts);
        let (threads, vt) = self.shape();
        program::<K, C>(&self.label(), &sources, comp, values, threads, vt)
    }
}

impl Gpu {
    /// Compile (or fetch from the caches) the kernels of the primitive `tuning` belongs to, for
    /// these types, comparator and tuning, ahead of the first call.
    pub fn prepare<K, C, T>(&self, comp: &C, values: ValueLayout, tuning: T) -> Result<(), GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        T: ProgramTuning,
    {
        self.program_kernels::<K, C, T>(comp, values, tuning)
            .map(|_| ())
    }

    /// The kernels of the program at `tuning`: from the caches, or compiled (the source is only
    /// assembled on a cache miss).
    pub(crate) fn program_kernels<K, C, T>(
        &self,
        comp: &C,
        values: ValueLayout,
        tuning: T,
    ) -> Result<Arc<Kernels>, GpuError>
    where
        K: DeviceKey,
        C: DeviceComparator<K> + ?Sized,
        T: ProgramTuning,
    {
        match key_image_of::<K, C, T>(comp) {
            Some(image) if image.bits() == u32::BITS => {
                return self.program_kernels::<u32, ImageOrder, T>(&image.order(), values, tuning);
            }
            Some(image) => {
                return self.program_kernels::<u64, ImageOrder, T>(&image.order(), values, tuning)
            }
            None => {}
        }
        let (threads, vt) = tuning.shape();
        let (key, name) = program_id::<K, C>(&tuning.label(), comp, values, threads, vt);
        self.kernels(
            &key,
            &name,
            || tuning.program::<K, C>(comp, values).source,
            tuning.entries(),
        )
    }
}

/// The integer image tuning `T`'s primitive sorts `comp`'s keys as, if any: where it maps key
/// images ([`ProgramTuning::MAPS_KEY_IMAGES`]) and the order has one of `K`'s width.
pub fn key_image_of<K, C, T>(comp: &C) -> Option<KeyImage>
where
    K: DeviceKey,
    C: DeviceComparator<K> + ?Sized,
    T: ProgramTuning,
{
    key_image(comp)
        .filter(|image| T::MAPS_KEY_IMAGES && image.bits() as usize == 8 * size_of::<K>())
}

/// Builds the programs of a primitive at the tuning one of its shipped rules picks, for
/// [`shipped_programs`].
struct ShippedPrograms<T> {
    rule: fn(usize, usize) -> T,
}

impl<T: ProgramTuning> ProgramFactory for ShippedPrograms<T> {
    fn program<K: DeviceKey>(
        &self,
        comp: &dyn DeviceComparator<K>,
        values: ValueLayout,
    ) -> Program {
        let tuning = (self.rule)(size_of::<K>(), value_bytes(values));
        tuning.program::<K, dyn DeviceComparator<K>>(comp, values)
    }
}

/// Every program instantiation of tuning `T`'s primitive the library ships: each primitive key
/// type × built-in comparator × shipped value layout, at each of its shipped tunings
/// ([`ProgramTuning::SHIPPED`]), once each. CI compiles all of them with NVRTC.
pub fn shipped_programs_of<T: ProgramTuning>() -> Vec<Program> {
    let mut programs = Vec::new();
    for (i, &rule) in T::SHIPPED.iter().enumerate() {
        for program in shipped_programs(&ShippedPrograms { rule }) {
            if i == 0 || !programs.iter().any(|p: &Program| p.name == program.name) {
                programs.push(program);
            }
        }
    }
    programs
}
