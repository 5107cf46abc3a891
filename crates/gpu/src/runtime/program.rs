//! Kernel programs: the CUDA sources of `kernels/`, assembled per instantiation behind one generated prelude.

use std::fmt::Write as _;

use super::shape::PARTITION_THREADS;
use crate::compare::{sanitize, DeviceComparator};
use crate::error::GpuError;
use crate::key::{cuda_value_type, DeviceKey};

/// `kernels/partition.cuh`: phase 1 (merge path), twin of crates/partition.
pub const PARTITION_CUH: &str = include_str!("../../kernels/partition.cuh");
/// `kernels/serial.cuh`: phase 2 (serial merge), twin of crates/serial.
pub const SERIAL_CUH: &str = include_str!("../../kernels/serial.cuh");
/// `kernels/cta_merge.cuh`: one tile of a merge per CTA.
pub const CTA_MERGE_CUH: &str = include_str!("../../kernels/cta_merge.cuh");

/// A program's entry points: `entry_points! { ALL = [NAME = "entry", ...]; }` declares a public
/// `&str` constant per kernel, named and documented as listed, and the public array `ALL` of
/// them all in that order (what the program loads), so that each name is written once.
macro_rules! entry_points {
    (
        $(#[$all_meta:meta])*
        $all:ident = [
            $($(#[$meta:meta])* $name:ident = $entry:literal,)+
        ];
    ) => {
        $($(#[$meta])* pub const $name: &str = $entry;)+
        $(#[$all_meta])*
        pub const $all: [&str; [$($entry),+].len()] = [$($name),+];
    };
}

pub(crate) use entry_points;

/// Byte layout `(size, align)` of a primitive's values: `None` for keys only.
pub type ValueLayout = Option<(usize, usize)>;

/// One program instantiation: its cache key, its source name and its source.
pub struct Program {
    pub key: String,
    pub name: String,
    pub source: String,
}

fn value_type(values: ValueLayout) -> String {
    values.map_or_else(
        || "unsigned char".to_owned(),
        |(size, align)| cuda_value_type(size, align),
    )
}

/// Starts the cache key of a program whose key or value type is zero-sized; the rest of the first
/// line says which. [`check_not_zero_sized`] refuses such a key before anything is compiled.
const ZERO_SIZED_MARK: &str = "zero-sized:";

/// Refuse zero-sized keys and values ([`GpuError::InvalidInput`]): the kernels move whole
/// elements, and CUDA has no zero-sized type to match them. Every program built through
/// [`program_id`] is checked by [`Gpu::kernels`](crate::Gpu); primitives that build their own
/// program id call this on their value layout.
pub fn check_layout<K: DeviceKey>(values: ValueLayout) -> Result<(), GpuError> {
    match zero_sized_message::<K>(values) {
        Some(message) => Err(GpuError::InvalidInput(message)),
        None => Ok(()),
    }
}

/// Refuse a value layout of zero bytes ([`GpuError::InvalidInput`]), for primitives without a
/// key type (the load-balancing moves).
pub fn check_value_layout(values: ValueLayout) -> Result<(), GpuError> {
    match values {
        Some((0, _)) => Err(GpuError::InvalidInput(
            "`values` are zero-sized: the GPU primitives move elements of at least one byte".into(),
        )),
        _ => Ok(()),
    }
}

fn zero_sized_message<K: DeviceKey>(values: ValueLayout) -> Option<String> {
    if std::mem::size_of::<K>() == 0 {
        return Some(format!(
            "the key type `{}` is zero-sized: the GPU primitives sort and merge keys of at least \
             one byte",
            std::any::type_name::<K>()
        ));
    }
    check_value_layout(values).err().map(|e| match e {
        GpuError::InvalidInput(message) => message,
        other => other.to_string(),
    })
}

/// [`GpuError::InvalidInput`] when `key` (from [`program_id`]) names a zero-sized key or value.
pub(crate) fn check_not_zero_sized(key: &str) -> Result<(), GpuError> {
    match key.strip_prefix(ZERO_SIZED_MARK) {
        Some(rest) => Err(GpuError::InvalidInput(
            rest.lines().next().unwrap_or_default().to_owned(),
        )),
        None => Ok(()),
    }
}

/// The source name of a program:
/// `twophase_<primitive>_<type>_<values>_<detail>_nt<threads>_vt<vt>.cu`. `<type>` is `cuda_type`
/// with every character but letters, digits and `_` replaced by `_`; `<values>` is
/// `v<size>a<align>` for a value layout and `without_values` for none; `detail`, what else tells
/// the programs of one primitive apart (the comparator's name, the operation), is taken as it is.
pub fn program_name(
    primitive: &str,
    cuda_type: &str,
    values: ValueLayout,
    without_values: &str,
    detail: &str,
    threads: u32,
    vt: u32,
) -> String {
    let value_tag = values.map_or(without_values.to_owned(), |(size, align)| {
        format!("v{size}a{align}")
    });
    let cuda_type = sanitize(cuda_type);
    format!("twophase_{primitive}_{cuda_type}_{value_tag}_{detail}_nt{threads}_vt{vt}.cu")
}

/// The cache key and source name of `primitive`'s program for key `K`, comparator `comp`, value
/// layout and launch shape, without building its source (the per-call path: the source is only
/// assembled on a cache miss). The key holds the Rust size and alignment of `K`, which the
/// program checks; a zero-sized key or value marks it for refusal (see [`check_layout`]).
pub fn program_id<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    primitive: &str,
    comp: &C,
    values: ValueLayout,
    threads: u32,
    vt: u32,
) -> (String, String) {
    let comparator = sanitize(&comp.name());
    let name = program_name(
        primitive,
        K::CUDA_TYPE,
        values,
        "keys",
        &comparator,
        threads,
        vt,
    );
    let zero_sized = zero_sized_message::<K>(values)
        .map(|message| format!("{ZERO_SIZED_MARK}{message}\n"))
        .unwrap_or_default();
    let (helpers, body) = (comp.cuda_helpers(), comp.cuda_body());
    let value_type = value_type(values);
    // Sized once and filled in place: a small call's latency includes this key (format! would
    // grow it through several reallocations).
    let mut key = String::with_capacity(
        zero_sized.len()
            + name.len()
            + K::CUDA_DEFINITION.len()
            + value_type.len()
            + helpers.len()
            + body.len()
            + KEY_NUMBERS_BYTES,
    );
    key.push_str(&zero_sized);
    key.push_str(&name);
    // Writing to a String cannot fail.
    let _ = write!(
        key,
        "|k{}a{}|",
        std::mem::size_of::<K>(),
        std::mem::align_of::<K>()
    );
    for part in [K::CUDA_DEFINITION, &value_type, &helpers, &body] {
        key.push_str(part);
        key.push('|');
    }
    let _ = write!(
        key,
        "{}|{}",
        comp.equivalents_identical(),
        crate::compare::is_trusted(comp)
    );
    (key, name)
}

/// Room in a program key for its numbers, flags and separators ([`program_id`]).
const KEY_NUMBERS_BYTES: usize = 64;

/// File-name labels that `#line` gives user-supplied CUDA in a generated program, so that NVRTC's
/// messages point at the snippet: a warning located in one of them fails the compilation
/// ([`compile_cubin`](super::nvrtc::compile_cubin)).
pub const SNIPPET_LABELS: [&str; 3] = ["comparator ", "key type ", "load-balance op "];

/// A `#line` file name: the label with the characters a C string literal or a log line would
/// garble replaced by `_`.
fn line_file(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c == '"' || c == '\\' || c == '(' || c == ')' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Append user-supplied CUDA `text` to the generated `source` of program `program_name` under a
/// `#line` marker naming it `label` (one of [`SNIPPET_LABELS`] followed by a name), then a
/// `#line` marker back to the generated file, so that NVRTC reports lines of the snippet as
/// `label(line)` and those of the generated file as before.
pub fn push_user_snippet(source: &mut String, label: &str, text: &str, program_name: &str) {
    source.push_str(&format!("#line 1 \"{}\"\n", line_file(label)));
    source.push_str(text);
    if !text.ends_with('\n') {
        source.push('\n');
    }
    // The marker sets the number of the line after it: the physical line after its own.
    let next_line = source.matches('\n').count() + 2;
    source.push_str(&format!(
        "#line {next_line} \"{}\"\n",
        line_file(program_name)
    ));
}

/// `text` as the inside of a C string literal.
fn c_string_body(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '_',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// `static_assert`s that the CUDA type `cuda_type` (typedef'd as `typedef_name`) has the Rust
/// type's size, and an alignment no larger than the Rust type's (device accesses can only rely on
/// the alignment the Rust buffers have), naming both types in the message.
fn layout_asserts(
    role: &str,
    typedef_name: &str,
    cuda_type: &str,
    rust_type: &str,
    size: usize,
    align: usize,
) -> String {
    let cuda_type = c_string_body(cuda_type);
    let rust_type = c_string_body(rust_type);
    format!(
        "static_assert(sizeof({typedef_name}) == {size}, \"twophase: the CUDA {role} type \
         `{cuda_type}` must be {size} bytes, the size of the Rust {role} type `{rust_type}`\");\n\
         static_assert(alignof({typedef_name}) <= {align}, \"twophase: the CUDA {role} type \
         `{cuda_type}` must be aligned to at most {align} bytes, the alignment of the Rust {role} \
         type `{rust_type}`\");\n"
    )
}

/// `primitive`'s program: a prelude defining `key_type`, `key_compare`, `value_type`, `TP_NT`,
/// `TP_VT`, `TP_HAS_VALUES` and `TP_PARTITION_NT`, followed by `sources` in order. The user's
/// CUDA (the key definition, the comparator's helpers and body) sits under `#line` markers
/// ([`push_user_snippet`]), and the prelude `static_assert`s that the CUDA key and value types
/// have the Rust types' layout.
pub fn program<K: DeviceKey, C: DeviceComparator<K> + ?Sized>(
    primitive: &str,
    sources: &[&str],
    comp: &C,
    values: ValueLayout,
    threads: u32,
    vt: u32,
) -> Program {
    let (key, name) = program_id::<K, C>(primitive, comp, values, threads, vt);
    let comparator = comp.name();
    let mut source = format!(
        "// {name}: generated by twophase-gpu.\n\
         #define TP_NT {threads}\n#define TP_VT {vt}\n#define TP_HAS_VALUES {has_values}\n\
         #define TP_PARTITION_NT {pnt}\n\
         template <int N, int A> struct alignas(A) twophase_value_bytes {{ unsigned char bytes[N]; }};\n",
        has_values = values.is_some(),
        pnt = PARTITION_THREADS,
    );
    if !K::CUDA_DEFINITION.is_empty() {
        let label = format!("key type {}", K::CUDA_TYPE);
        push_user_snippet(&mut source, &label, K::CUDA_DEFINITION, &name);
    }
    source.push_str(&format!(
        "typedef {key_type} key_type;\ntypedef {value_type} value_type;\n",
        key_type = K::CUDA_TYPE,
        value_type = value_type(values),
    ));
    source.push_str(&layout_asserts(
        "key",
        "key_type",
        K::CUDA_TYPE,
        std::any::type_name::<K>(),
        std::mem::size_of::<K>(),
        std::mem::align_of::<K>(),
    ));
    if let Some((size, align)) = values {
        source.push_str(&layout_asserts(
            "value",
            "value_type",
            &value_type(values),
            "value",
            size,
            align,
        ));
    }
    let helpers = comp.cuda_helpers();
    if !helpers.is_empty() {
        let label = format!("comparator {comparator} helpers");
        push_user_snippet(&mut source, &label, &helpers, &name);
    }
    source.push_str(&format!(
        "struct key_compare {{\n  static constexpr bool equivalents_identical = {identical};\n  static constexpr bool trusted_order = {trusted};\n  __device__ __forceinline__ bool operator()(const key_type& a, const key_type& b) const {{\n",
        identical = comp.equivalents_identical(),
        trusted = crate::compare::is_trusted(comp),
    ));
    push_user_snippet(
        &mut source,
        &format!("comparator {comparator}"),
        &comp.cuda_body(),
        &name,
    );
    source.push_str("  }\n};\n");
    for part in sources {
        source.push_str(part);
        source.push('\n');
    }
    Program { key, name, source }
}

/// Builds one primitive's program for a key type, comparator and value layout (at that
/// primitive's shipped tuning), so that [`shipped_programs`] lists every primitive's instantiations
/// from one list of types.
pub trait ProgramFactory {
    fn program<K: DeviceKey>(&self, comp: &dyn DeviceComparator<K>, values: ValueLayout)
        -> Program;
}

/// Value layouts the library ships kernels for ahead of use: keys only, 4-byte and 8-byte values
/// (other layouts compile on first use).
pub const SHIPPED_VALUE_LAYOUTS: [ValueLayout; 3] = [None, Some((4, 4)), Some((8, 8))];

/// Every instantiation of one primitive the library ships: each primitive key type × built-in
/// comparator × shipped value layout. CI compiles all of them with NVRTC.
pub fn shipped_programs(factory: &impl ProgramFactory) -> Vec<Program> {
    use crate::compare::{Greater, Less, TotalOrder, TotalOrderDesc};
    fn push<K: DeviceKey>(
        out: &mut Vec<Program>,
        factory: &impl ProgramFactory,
        comps: &[&dyn DeviceComparator<K>],
    ) {
        for &comp in comps {
            for values in SHIPPED_VALUE_LAYOUTS {
                out.push(factory.program::<K>(comp, values));
            }
        }
    }
    let mut out = Vec::new();
    push::<u8>(&mut out, factory, &[&Less, &Greater]);
    push::<i8>(&mut out, factory, &[&Less, &Greater]);
    push::<u16>(&mut out, factory, &[&Less, &Greater]);
    push::<i16>(&mut out, factory, &[&Less, &Greater]);
    push::<u32>(&mut out, factory, &[&Less, &Greater]);
    push::<i32>(&mut out, factory, &[&Less, &Greater]);
    push::<u64>(&mut out, factory, &[&Less, &Greater]);
    push::<i64>(&mut out, factory, &[&Less, &Greater]);
    push::<f32>(&mut out, factory, &[&TotalOrder, &TotalOrderDesc]);
    push::<f64>(&mut out, factory, &[&TotalOrder, &TotalOrderDesc]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CudaComparator, Less};

    #[test]
    fn the_prelude_checks_the_layout_and_marks_the_snippets() {
        let program = program::<u32, _>("probe", &[], &Less, Some((8, 8)), 128, 4);
        let source = &program.source;
        assert_contains_all(
            source,
            &[
                "static_assert(sizeof(key_type) == 4,",
                "static_assert(alignof(key_type) <= 4,",
                "static_assert(sizeof(value_type) == 8,",
                "static_assert(alignof(value_type) <= 8,",
                "the Rust key type `u32`",
                "#line 1 \"comparator less\"\nreturn a < b;\n",
            ],
        );
        assert!(program.key.contains("|k4a4|"), "{}", program.key);
        assert_line_markers_resume(source, &program.name);
    }

    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Pair {
        key: u32,
        tag: u32,
    }

    crate::device_key!(Pair => "pair", "struct pair { unsigned int key; unsigned int tag; };");

    /// Asserts that `source` holds every one of `parts`, naming the one missing.
    fn assert_contains_all(source: &str, parts: &[&str]) {
        for part in parts {
            assert!(source.contains(part), "no {part:?} in:\n{source}");
        }
    }

    /// Every `#line <n> "<program name>"` marker gives the physical number of the line after it,
    /// so that NVRTC's line numbers in the generated file stay true.
    fn assert_line_markers_resume(source: &str, name: &str) {
        let back = format!("\"{name}\"");
        let mut markers = 0;
        for (index, line) in source.lines().enumerate() {
            if let Some(rest) = line.strip_prefix("#line ") {
                if rest.ends_with(&back) {
                    let number: usize = rest.split(' ').next().expect("n").parse().expect("n");
                    assert_eq!(number, index + 2, "marker on line {}", index + 1);
                    markers += 1;
                }
            }
        }
        assert!(markers > 0, "no marker back to {name}");
    }

    #[test]
    fn a_user_key_and_comparator_get_their_own_line_markers() {
        let comp = CudaComparator::new("by_key", "return a.key < b.key;", |a: &Pair, b: &Pair| {
            a.key < b.key
        });
        let program = program::<Pair, _>("probe", &["// tail"], &comp, None, 128, 4);
        let source = &program.source;
        assert_contains_all(
            source,
            &[
                "#line 1 \"key type pair\"\nstruct pair",
                "#line 1 \"comparator by_key\"\nreturn a.key",
                "the CUDA key type `pair` must be 8 bytes",
                "Pair`", // the Rust type is named
            ],
        );
        assert_line_markers_resume(source, &program.name);
    }

    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Nothing;

    crate::device_key!(Nothing => "nothing", "struct nothing {};");

    #[test]
    fn zero_sized_keys_and_values_are_refused() {
        let comp = CudaComparator::new("never", "return false;", |_: &Nothing, _: &Nothing| false);
        let (key, _) = program_id::<Nothing, _>("probe", &comp, None, 128, 4);
        let err = check_not_zero_sized(&key).expect_err("zero-sized key");
        assert!(
            matches!(&err, GpuError::InvalidInput(m) if m.contains("Nothing`")),
            "{err}"
        );
        assert!(check_layout::<Nothing>(None).is_err());
        let (key, _) = program_id::<u32, _>("probe", &Less, Some((0, 1)), 128, 4);
        let err = check_not_zero_sized(&key).expect_err("zero-sized values");
        assert!(
            matches!(&err, GpuError::InvalidInput(m) if m.contains("`values`")),
            "{err}"
        );
        assert!(check_layout::<u32>(Some((0, 1))).is_err());
        assert!(check_value_layout(Some((0, 1))).is_err());
        let (key, _) = program_id::<u32, _>("probe", &Less, Some((4, 4)), 128, 4);
        assert!(check_not_zero_sized(&key).is_ok());
        assert!(check_layout::<u32>(Some((4, 4))).is_ok());
    }
}
