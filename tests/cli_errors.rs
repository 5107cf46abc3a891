//! The `twophase` command on bad input: each case a one-line error naming the problem, exit status 1, and no output left behind, not even a temporary file; an interrupted run leaves none either.

mod cli_support;

use std::path::Path;

use cli_support::*;

/// A .npy file of any header, written by hand: version 1.0, `descr` and `shape` as Python
/// literals, `data` after the header.
fn handmade_npy(path: &Path, descr: &str, shape: &str, data: &[u8]) {
    /// The header's total length is a multiple of this (the format's alignment).
    const ALIGN: usize = 64;
    /// Magic, version and the header length's two bytes.
    const PREAMBLE: usize = 10;
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while !(PREAMBLE + dict.len() + 1).is_multiple_of(ALIGN) {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).expect("write the fixture");
}

/// `args` fail with `message` in `dir`, and leave exactly the files `before` there.
fn fails_cleanly(dir: &Path, args: &[&str], message: &str) {
    let before = files_in(dir);
    run_fails(dir, args, message);
    assert_eq!(files_in(dir), before, "twophase {args:?} left files behind");
}

#[test]
fn bad_files_are_one_line_errors_with_no_output() {
    let dir = temp_dir();
    let dir = dir.path();
    let keys: Vec<u32> = (0..100).rev().collect();
    write_npy(&path(dir, "u32.npy"), "<u4", &keys);
    write_raw(&path(dir, "u32.raw"), &keys);
    handmade_npy(&path(dir, "complex.npy"), "<c8", "(2,)", &[0; 16]);
    handmade_npy(&path(dir, "text.npy"), "<U3", "(2,)", &[0; 24]);
    handmade_npy(&path(dir, "f16.npy"), "<f2", "(2,)", &[0; 4]);
    write_npy_shaped(&path(dir, "matrix.npy"), "<u4", &[10, 10], &keys);
    handmade_npy(&path(dir, "scalar.npy"), "<u4", "()", &[0; 4]);
    handmade_npy(&path(dir, "short.npy"), "<u4", "(100,)", &[0; 396]);
    handmade_npy(&path(dir, "long.npy"), "<u4", "(100,)", &[0; 404]);
    std::fs::write(path(dir, "odd.raw"), [0u8; 401]).expect("write");
    std::fs::write(path(dir, "garbage.npy"), b"\x93NUMPY\x01\x00\xff").expect("write");
    std::fs::create_dir(path(dir, "folder")).expect("mkdir");

    let cases: &[(&[&str], &str)] = &[
        (&["sort", "complex.npy", "-o", "o.npy"], "'<c8', which is not sorted here"),
        (&["sort", "text.npy", "-o", "o.npy"], "'<U3', which is not sorted here"),
        (&["sort", "f16.npy", "-o", "o.npy"], "'<f2', which is not sorted here"),
        (&["sort", "u32.npy", "--dtype", "i32", "-o", "o.npy"], "holds u32, but --dtype says i32"),
        (&["sort", "matrix.npy", "-o", "o.npy"], "has shape (10, 10); only 1-D arrays"),
        (&["sort", "scalar.npy", "-o", "o.npy"], "has shape (); only 1-D arrays"),
        (&["sort", "short.npy", "-o", "o.npy"], "truncated: the header promises 100 u32 elements (400 bytes) but only 396 bytes follow it"),
        (&["sort", "long.npy", "-o", "o.npy"], "4 bytes follow the 100 u32 elements"),
        (&["sort", "garbage.npy", "-o", "o.npy"], "unreadable .npy header"),
        (&["sort", "u32.raw", "-o", "o.raw"], "not a .npy file; give the element type of raw input with --dtype"),
        (&["sort", "odd.raw", "--dtype", "u32", "-o", "o.raw"], "401 bytes is not a whole number of u32 elements"),
        (&["sort", "odd.raw", "--dtype", "u64", "-o", "o.raw"], "not a whole number of u64 elements"),
        (&["sort", "missing.npy", "-o", "o.npy"], "missing.npy: No such file"),
        (&["sort", "folder", "-o", "o.npy"], "not a regular file"),
        (&["sort", "u32.npy", "-o", "nowhere/o.npy"], "nowhere/o.npy"),
        (&["merge", "u32.npy", "u32.npy", "-o", "m.npy"], "u32.npy: not sorted in ascending order: element 1 (98) belongs before element 0 (99)"),
    ];
    for (args, message) in cases {
        fails_cleanly(dir, args, message);
    }
}

#[test]
fn inputs_that_do_not_go_together_are_refused() {
    let dir = temp_dir();
    let dir = dir.path();
    let sorted: Vec<i32> = (0..100).collect();
    write_npy(&path(dir, "i32.npy"), "<i4", &sorted);
    write_npy(
        &path(dir, "i64.npy"),
        "<i8",
        &(0..100i64).collect::<Vec<_>>(),
    );
    write_npy(&path(dir, "short.npy"), "<u2", &[1u16, 2, 3]);
    write_npy(&path(dir, "unsorted.npy"), "<i4", &[3i32, 1, 2]);
    let cases: &[(&[&str], &str)] = &[
        (
            &["merge", "i32.npy", "i64.npy", "-o", "m.npy"],
            "i64.npy: holds i64 but i32.npy holds i32: both inputs must have one dtype",
        ),
        (
            &["search", "i32.npy", "unsorted.npy", "-o", "s.npy"],
            "unsorted.npy: not sorted in ascending order",
        ),
        (
            &["sort", "i32.npy", "--values", "short.npy", "-o", "k.npy"],
            "short.npy: holds 3 values for the 100 keys of i32.npy",
        ),
        (
            &[
                "sort",
                "i32.npy",
                "--values",
                "i64.npy",
                "-o",
                "x.npy",
                "--values-output",
                "x.npy",
            ],
            "would both go to x.npy",
        ),
    ];
    for (args, message) in cases {
        fails_cleanly(dir, args, message);
    }
    // Integers are merged in their own order whatever --float-order says.
    run_ok(
        dir,
        &[
            "merge",
            "i32.npy",
            "i32.npy",
            "-o",
            "m.npy",
            "--float-order",
            "numpy",
        ],
    );
}

#[test]
fn files_larger_than_memory_allows_are_refused() {
    let dir = temp_dir();
    let dir = dir.path();
    write_raw(&path(dir, "k.raw"), &[7u64; 1000]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_twophase"))
        .args(["sort", "k.raw", "--dtype", "u64", "-o", "o.raw"])
        .current_dir(dir)
        .env("TWOPHASE_MEMORY_AVAILABLE", "20000")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(EXIT_FAILURE), "{stderr}");
    assert!(
        stderr.contains("sorting k.raw needs about 23.4 KiB of memory and 19.5 KiB is available"),
        "{stderr}"
    );
    assert_eq!(files_in(dir), ["k.raw"]);
}

#[test]
fn the_gpu_asked_for_where_there_is_none_says_why() {
    if twophase::backend() == twophase::Backend::Gpu {
        // A machine with a GPU runs --gpu; tests/gpu_*.rs cover it there.
        return;
    }
    let dir = temp_dir();
    let dir = dir.path();
    write_raw(&path(dir, "k.raw"), &[1u32, 2]);
    fails_cleanly(
        dir,
        &["sort", "k.raw", "--dtype", "u32", "--gpu"],
        "the GPU cannot be used: the CUDA driver library",
    );
}

#[test]
fn contradictory_flags_are_usage_errors() {
    let dir = temp_dir();
    let output = twophase(dir.path(), &["sort", "k.npy", "--cpu", "--gpu"]);
    assert_eq!(output.status.code(), Some(2));
    let output = twophase(
        dir.path(),
        &["sort", "k.npy", "--argsort", "--values", "v.npy"],
    );
    assert_eq!(output.status.code(), Some(2));
    let output = twophase(dir.path(), &["sort", "k.raw", "--dtype", "u128"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(files_in(dir.path()).is_empty());
}

/// An interrupted run removes its unfinished output: the input is a FIFO nobody writes, so the
/// run waits in its read, its temporary output already created, until Ctrl-C.
#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_no_output() {
    use std::time::{Duration, Instant};
    /// How long the run may take to create its temporary output.
    const START_TIMEOUT: Duration = Duration::from_secs(30);
    /// How often the folder is looked at meanwhile.
    const POLL: Duration = Duration::from_millis(10);
    /// Exit status after Ctrl-C.
    const EXIT_INTERRUPTED: i32 = 130;

    let dir = temp_dir();
    let dir = dir.path();
    let status = std::process::Command::new("mkfifo")
        .arg(path(dir, "in.raw"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_twophase"))
        .args(["sort", "in.raw", "--dtype", "u32", "-o", "out.raw"])
        .current_dir(dir)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the twophase binary runs");
    let start = Instant::now();
    while !files_in(dir).iter().any(|f| f.ends_with(".tmp")) {
        assert!(
            start.elapsed() < START_TIMEOUT,
            "no temporary output appeared"
        );
        std::thread::sleep(POLL);
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let output = child.wait_with_output().expect("the run ends");
    assert_eq!(output.status.code(), Some(EXIT_INTERRUPTED));
    assert!(String::from_utf8_lossy(&output.stderr).contains("interrupted; no output written"));
    assert_eq!(files_in(dir), ["in.raw"]);
}
