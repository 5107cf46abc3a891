//! GPU fault recovery (needs a CUDA GPU; run with --include-ignored): a kernel faults on purpose, the context is reported lost, and the GPU opens again and sorts correctly in the same process, or, where the driver refuses any new context in the process, every way in says so.

mod common;

use common::rng;
use rand::Rng;
use twophase::gpu::{Gpu, GpuError, Less};

/// Keys per sort: several tiles of the block sort, so that every pass kind runs.
const KEYS: usize = 100_000;

/// Random keys and their std-sorted copy.
fn keys_and_sorted(rng: &mut impl Rng) -> (Vec<u32>, Vec<u32>) {
    let keys: Vec<u32> = (0..KEYS).map(|_| rng.gen()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    (keys, sorted)
}

/// `gpu` sorts random keys as std does.
fn sorts_correctly(gpu: &Gpu, rng: &mut impl Rng) {
    let (mut keys, sorted) = keys_and_sorted(rng);
    gpu.mergesort(&mut keys, &Less)
        .expect("sort on a working GPU");
    assert_eq!(keys, sorted);
}

/// The default GPU (`twophase::sort`) sorts random keys as std does.
fn default_gpu_sorts_correctly(rng: &mut impl Rng) {
    let (mut keys, sorted) = keys_and_sorted(rng);
    twophase::sort(&mut keys).expect("sort on the default GPU");
    assert_eq!(keys, sorted);
}

/// The call named by a [`GpuError::ContextLost`], or a panic naming what came instead.
fn lost_call(result: Result<(), GpuError>) -> String {
    match result {
        Err(GpuError::ContextLost { call, cause }) => {
            eprintln!("context lost: {cause} in {call}");
            call
        }
        Err(other) => panic!("expected ContextLost, got {other}"),
        Ok(()) => panic!("expected ContextLost, got Ok"),
    }
}

/// One test, so that nothing else runs on the device while its context is lost and reset.
#[test]
#[ignore = "needs a CUDA GPU"]
fn deliberate_fault_reports_the_loss_and_the_gpu_opens_again() {
    let mut rng = rng();
    let gpu = Gpu::new(0).expect("a CUDA GPU");
    sorts_correctly(&gpu, &mut rng);
    default_gpu_sorts_correctly(&mut rng);

    // The fault: reported as a lost context, naming the kernel that lost it.
    let call = lost_call(gpu.fault_for_test());
    assert!(call.contains("twophase_fault_for_test"), "{call}");
    assert!(gpu.is_lost());

    // Every later call on the handle says the same, naming the same call.
    let (mut keys, _) = keys_and_sorted(&mut rng);
    let later = gpu.mergesort(&mut keys, &Less).expect_err("a lost handle");
    assert!(later.is_context_lost(), "{later}");
    assert!(later.to_string().contains("context is lost"), "{later}");
    assert_eq!(lost_call(Err(later)), call);
    assert_eq!(lost_call(gpu.synchronize()), call);
    // Reopening: it works, or the driver keeps the device lost for the whole process (the H100
    // with driver 580 refuses every new context after an illegal address, primary or not). Then
    // every way in says so, naming the call that lost it, and nothing else is left to test.
    match Gpu::new(0) {
        Ok(_) => {}
        Err(e @ GpuError::DeviceLostForProcess { .. }) => {
            let text = e.to_string();
            assert!(text.contains("restart the process"), "{text}");
            assert!(text.contains("twophase_fault_for_test"), "{text}");
            assert!(e.is_context_lost(), "{text}");
            assert!(twophase::gpu::default_gpu().is_none());
            let (mut keys, _) = keys_and_sorted(&mut rng);
            let via_default = twophase::sort(&mut keys).expect_err("no GPU left");
            assert!(
                matches!(via_default, GpuError::DeviceLostForProcess { .. }),
                "{via_default}"
            );
            eprintln!("the driver keeps the device lost for this process: {text}");
            return;
        }
        Err(e) => panic!("the GPU reopens, or says that only a new process can: {e}"),
    }
    let default = twophase::gpu::default_gpu().expect("the default GPU reopens");
    assert!(!default.is_lost(), "the default GPU was reopened");

    // The default GPU shared the lost context: its next use opens it again and works.
    default_gpu_sorts_correctly(&mut rng);

    // A new handle works too, also after the lost one is dropped.
    let reopened = Gpu::new(0).expect("the GPU opens again");
    sorts_correctly(&reopened, &mut rng);
    drop(gpu);
    sorts_correctly(&reopened, &mut rng);
    default_gpu_sorts_correctly(&mut rng);

    // A second fault, through the default GPU, loses every handle of its context (the primary
    // context, reset; or, where the driver would not reset it, a context of the default GPU's
    // own, and then the other handles keep working); the GPU opens a second time.
    let default = twophase::gpu::default_gpu().expect("the default GPU");
    let shares_context = default.context().cu_ctx() == reopened.context().cu_ctx();
    eprintln!(
        "reopened on {} context(s)",
        if shares_context {
            "one shared"
        } else {
            "separate"
        }
    );
    let call = lost_call(default.fault_for_test());
    assert!(call.contains("twophase_fault_for_test"), "{call}");
    if shares_context {
        assert!(reopened.is_lost(), "handles of one context share its loss");
        assert!(lost_call(reopened.synchronize()).contains("twophase_fault_for_test"));
    } else {
        sorts_correctly(&reopened, &mut rng);
    }
    default_gpu_sorts_correctly(&mut rng);
    sorts_correctly(&Gpu::new(0).expect("the GPU opens a third time"), &mut rng);
}
