//! `twophase::comparator!`: the CUDA body it writes compiles with NVRTC, and both predicates agree with std.

use twophase::{bytemuck, comparator, DeviceComparator};
use twophase_gpu::mergesort::MergesortTuning;
use twophase_gpu::runtime::nvrtc::{compile_cubin, nvrtc_available};
use twophase_gpu::ProgramTuning;

/// Architecture the CPU-side compile check targets (the H100's).
const ARCH: u32 = 90;

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[bytemuck(crate = "twophase::bytemuck")]
#[repr(C)]
struct Item {
    cell: u32,
    weight: u32,
}

twophase::device_key!(Item => "item", "struct item { unsigned int cell; unsigned int weight; };");

#[test]
fn the_rust_predicate_is_the_expression() {
    let by_cell_then_weight = comparator!(by_cell, |x: Item, y: Item| x.cell < y.cell
        || (x.cell == y.cell && (x.weight & 255) > (y.weight & 255)));
    let items: Vec<Item> = (0..200u32)
        .map(|i| Item {
            cell: i * 7 % 13,
            weight: i * 31 % 500,
        })
        .collect();
    let mut got = items.clone();
    twophase::cpu::mergesort_by(&mut got, |a, b| by_cell_then_weight.is_less(a, b));
    let mut want = items;
    want.sort_by(|a, b| {
        a.cell
            .cmp(&b.cell)
            .then_with(|| (b.weight & 255).cmp(&(a.weight & 255)))
    });
    assert_eq!(got, want);
}

#[test]
fn the_cuda_body_is_the_same_expression() {
    let c = comparator!(by_cell, |a: Item, b: Item| a.cell < b.cell);
    let body = c.cuda_body();
    assert!(body.contains("a.cell < b.cell"), "{body}");
    assert!(
        body.starts_with("return [&](const key_type& a, const key_type& b)"),
        "{body}"
    );
}

#[test]
#[allow(clippy::nonminimal_bool)] // `!` on purpose: the macro must carry it to CUDA
fn the_cuda_body_compiles_in_a_mergesort_with_nvrtc() {
    if !nvrtc_available() {
        assert!(std::env::var_os("CI").is_none(), "CI must have NVRTC");
        eprintln!("NVRTC not found: skipped");
        return;
    }
    let c = comparator!(by_cell, |p: Item, q: Item| (p.cell & 1023)
        < (q.cell & 1023)
        || !(p.weight >= q.weight));
    let tuning = MergesortTuning::for_types(std::mem::size_of::<Item>(), 0);
    let program = tuning.program::<Item, _>(&c, None);
    compile_cubin(&program.source, &program.name, ARCH).expect("the macro's CUDA body compiles");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_macro_sorts_on_the_gpu_as_std_does() {
    let gpu = twophase::gpu::Gpu::new(0).expect("a CUDA GPU");
    let by_cell = comparator!(by_cell, |a: Item, b: Item| a.cell < b.cell);
    let items: Vec<Item> = (0..(1u32 << 20))
        .map(|i| Item {
            cell: i.wrapping_mul(2_654_435_761) % 1000,
            weight: i,
        })
        .collect();
    let mut got = items.clone();
    gpu.mergesort(&mut got, &by_cell).expect("GPU sort");
    let mut want = items;
    want.sort_by_key(|item| item.cell); // stable: weights (positions) stay in order per cell
    assert_eq!(got, want);
}
