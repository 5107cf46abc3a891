//! The `twophase` command on the CPU: every dtype through .npy and raw against std's stable sort, values, argsort, merge, search, bench, info and the demo.

mod cli_support;

use cli_support::*;

/// Keys per fixture: several CPU tiles of the merge passes would need more, but these runs are
/// debug builds; a few thousand keys still cross the CPU sort's run boundaries on two threads.
const KEYS: usize = 3001;

/// `keys` sorted stably by `cmp`, reversed order when `descending` (still stable).
fn reference<T: TestKey>(keys: &[T], cmp: Compare<T>, descending: bool) -> Vec<T> {
    let mut sorted = keys.to_vec();
    if descending {
        sorted.sort_by(|a, b| cmp(b, a));
    } else {
        sorted.sort_by(cmp);
    }
    sorted
}

fn bits<T: TestKey>(keys: &[T]) -> Vec<u64> {
    keys.iter().map(TestKey::bits).collect()
}

/// One dtype sorted through .npy and raw, ascending and descending (and in NumPy's order for
/// floats), each output compared bit for bit with std's stable sort.
fn round_trip<T: TestKey>(seed: u64) {
    let dir = temp_dir();
    let dir = dir.path();
    let keys = T::keys(KEYS, seed);
    write_npy(&path(dir, "in.npy"), T::DESCR, &keys);
    write_raw(&path(dir, "in.raw"), &keys);
    let mut orders = vec![
        (vec![], T::total_cmp as Compare<T>, false),
        (vec!["--descending"], T::total_cmp, true),
    ];
    if T::NAME.starts_with('f') {
        orders.push((vec!["--float-order", "numpy"], T::numpy_cmp, false));
        orders.push((
            vec!["--float-order", "numpy", "--descending"],
            T::numpy_cmp,
            true,
        ));
    }
    for (flags, cmp, descending) in orders {
        let expected = bits(&reference(&keys, cmp, descending));
        let mut args = vec!["sort", "in.npy", "-o", "out.npy", "--cpu"];
        args.extend(&flags);
        run_ok(dir, &args);
        let (descr, sorted) = read_npy::<T>(&path(dir, "out.npy"));
        assert_eq!(descr, T::DESCR, "{} {flags:?}", T::NAME);
        assert_eq!(bits(&sorted), expected, "{} .npy {flags:?}", T::NAME);

        let mut args = vec!["sort", "in.raw", "--dtype", T::NAME, "-o", "out.raw"];
        args.extend(&flags);
        run_ok(dir, &args);
        let sorted: Vec<T> = read_raw(&path(dir, "out.raw"));
        assert_eq!(bits(&sorted), expected, "{} raw {flags:?}", T::NAME);
    }
    // Without -o the output goes beside the input, `.sorted` before the extension; raw in,
    // .npy out when the name says so.
    run_ok(dir, &["sort", "in.npy"]);
    let (_, sorted) = read_npy::<T>(&path(dir, "in.sorted.npy"));
    let expected = bits(&reference(&keys, T::total_cmp, false));
    assert_eq!(bits(&sorted), expected);
    run_ok(
        dir,
        &["sort", "in.raw", "--dtype", T::NAME, "-o", "from_raw.npy"],
    );
    let (descr, sorted) = read_npy::<T>(&path(dir, "from_raw.npy"));
    assert_eq!(descr, T::DESCR);
    assert_eq!(bits(&sorted), expected);
}

#[test]
fn every_dtype_round_trips_through_npy_and_raw() {
    round_trip::<u8>(1);
    round_trip::<u16>(2);
    round_trip::<u32>(3);
    round_trip::<u64>(4);
    round_trip::<i8>(5);
    round_trip::<i16>(6);
    round_trip::<i32>(7);
    round_trip::<i64>(8);
    round_trip::<f32>(9);
    round_trip::<f64>(10);
}

#[test]
fn big_endian_npy_is_read_and_written_native() {
    let dir = temp_dir();
    let dir = dir.path();
    let keys = i32::keys(KEYS, 11);
    write_npy(&path(dir, "big.npy"), ">i4", &keys);
    run_ok(dir, &["sort", "big.npy", "-o", "out.npy"]);
    let (descr, sorted) = read_npy::<i32>(&path(dir, "out.npy"));
    assert_eq!(descr, "<i4");
    assert_eq!(sorted, reference(&keys, i32::total_cmp, false));
}

/// Sort keys with values of dtype `V` (values: each key's position, as `V`), stable: equal keys
/// keep their values in input order.
fn values_are_stable<V: TestKey + TryFrom<usize>>(descending: bool) {
    let dir = temp_dir();
    let dir = dir.path();
    let keys = u16::keys(KEYS, 12);
    // Each key's position, modulo a bound every value type holds.
    let values: Vec<V> = (0..KEYS)
        .map(|i| V::try_from(i % 100).ok().expect("fits every value type"))
        .collect();
    write_npy(&path(dir, "k.npy"), u16::DESCR, &keys);
    write_npy(&path(dir, "v.npy"), V::DESCR, &values);
    let mut args = vec![
        "sort",
        "k.npy",
        "--values",
        "v.npy",
        "-o",
        "ks.npy",
        "--values-output",
        "vs.npy",
    ];
    if descending {
        args.push("--descending");
    }
    run_ok(dir, &args);
    let mut pairs: Vec<(u16, usize)> = keys.iter().copied().zip(0..).collect();
    if descending {
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0));
    } else {
        pairs.sort_by_key(|p| p.0);
    }
    let (_, sorted_keys) = read_npy::<u16>(&path(dir, "ks.npy"));
    let (descr, sorted_values) = read_npy::<V>(&path(dir, "vs.npy"));
    assert_eq!(descr, V::DESCR);
    let expected_keys: Vec<u16> = pairs.iter().map(|p| p.0).collect();
    let expected_values: Vec<u64> = pairs.iter().map(|p| values[p.1].bits()).collect();
    assert_eq!(sorted_keys, expected_keys, "{}", V::NAME);
    assert_eq!(bits(&sorted_values), expected_values, "{}", V::NAME);
}

#[test]
fn values_move_with_their_keys_stably_at_every_width() {
    values_are_stable::<u8>(false);
    values_are_stable::<i16>(true);
    values_are_stable::<u32>(false);
    values_are_stable::<i64>(true);
}

#[test]
fn float_values_keep_their_bits_and_raw_values_take_their_dtype() {
    let dir = temp_dir();
    let dir = dir.path();
    let keys = u8::keys(KEYS, 13);
    let values = f64::keys(KEYS, 14);
    write_raw(&path(dir, "k.raw"), &keys);
    write_raw(&path(dir, "v.raw"), &values);
    run_ok(
        dir,
        &[
            "sort",
            "k.raw",
            "--dtype",
            "u8",
            "--values",
            "v.raw",
            "--values-dtype",
            "f64",
        ],
    );
    let mut order: Vec<usize> = (0..KEYS).collect();
    order.sort_by_key(|&i| keys[i]);
    let sorted_values: Vec<f64> = read_raw(&path(dir, "v.sorted.raw"));
    let expected: Vec<u64> = order.iter().map(|&i| values[i].to_bits()).collect();
    assert_eq!(bits(&sorted_values), expected);
}

#[test]
fn argsort_is_the_stable_permutation() {
    let dir = temp_dir();
    let dir = dir.path();
    let keys = f32::keys(KEYS, 15);
    write_npy(&path(dir, "k.npy"), f32::DESCR, &keys);
    for (flag, descending) in [(None, false), (Some("--descending"), true)] {
        let mut args = vec!["sort", "k.npy", "--argsort", "-o", "perm.npy"];
        args.extend(flag);
        run_ok(dir, &args);
        let (descr, permutation) = read_npy::<i64>(&path(dir, "perm.npy"));
        assert_eq!(descr, "<i8");
        let mut expected: Vec<i64> = (0..KEYS as i64).collect();
        if descending {
            expected.sort_by(|&a, &b| keys[b as usize].total_cmp(&keys[a as usize]));
        } else {
            expected.sort_by(|&a, &b| keys[a as usize].total_cmp(&keys[b as usize]));
        }
        assert_eq!(permutation, expected, "{flag:?}");
    }
}

/// A std-style comparator.
type Compare<T> = fn(&T, &T) -> std::cmp::Ordering;

/// The stable merge of sorted `a` and `b` under `cmp` (A first on ties): std's stable sort of
/// their concatenation.
fn merged<T: TestKey>(a: &[T], b: &[T], cmp: Compare<T>) -> Vec<T> {
    let mut out = [a, b].concat();
    out.sort_by(cmp);
    out
}

#[test]
fn merge_is_stable_in_every_order() {
    let dir = temp_dir();
    let dir = dir.path();
    let (a, b) = (f64::keys(KEYS, 16), f64::keys(KEYS / 2, 17));
    let cases: [(&[&str], Compare<f64>); 3] = [
        (&[], f64::total_cmp),
        (&["--descending"], |x, y| y.total_cmp(x)),
        (&["--float-order", "numpy"], f64::numpy_cmp),
    ];
    for (flags, cmp) in cases {
        let (mut sa, mut sb) = (a.clone(), b.clone());
        sa.sort_by(cmp);
        sb.sort_by(cmp);
        write_npy(&path(dir, "a.npy"), f64::DESCR, &sa);
        write_raw(&path(dir, "b.raw"), &sb);
        // B is raw: it takes A's dtype.
        let mut args = vec!["merge", "a.npy", "b.raw", "-o", "m.npy"];
        args.extend(flags);
        run_ok(dir, &args);
        let (_, out) = read_npy::<f64>(&path(dir, "m.npy"));
        assert_eq!(bits(&out), bits(&merged(&sa, &sb, cmp)), "{flags:?}");
    }
}

#[test]
fn search_gives_lower_and_upper_bounds() {
    let dir = temp_dir();
    let dir = dir.path();
    let mut haystack = i16::keys(KEYS, 18);
    let mut needles = i16::keys(KEYS / 3, 19);
    haystack.sort();
    needles.sort();
    write_npy(&path(dir, "h.npy"), i16::DESCR, &haystack);
    write_npy(&path(dir, "n.npy"), i16::DESCR, &needles);
    run_ok(dir, &["search", "h.npy", "n.npy", "-o", "lower.npy"]);
    run_ok(
        dir,
        &["search", "h.npy", "n.npy", "-o", "upper.raw", "--upper"],
    );
    let (descr, lower) = read_npy::<i64>(&path(dir, "lower.npy"));
    assert_eq!(descr, "<i8");
    let upper: Vec<i64> = read_raw(&path(dir, "upper.raw"));
    let expected_lower: Vec<i64> = needles
        .iter()
        .map(|x| haystack.partition_point(|h| h < x) as i64)
        .collect();
    let expected_upper: Vec<i64> = needles
        .iter()
        .map(|x| haystack.partition_point(|h| h <= x) as i64)
        .collect();
    assert_eq!(lower, expected_lower);
    assert_eq!(upper, expected_upper);
}

#[test]
fn sorting_in_place_replaces_the_input() {
    let dir = temp_dir();
    let dir = dir.path();
    let keys = u64::keys(KEYS, 20);
    write_npy(&path(dir, "k.npy"), u64::DESCR, &keys);
    run_ok(dir, &["sort", "k.npy", "-o", "k.npy", "--timings"]);
    let (_, sorted) = read_npy::<u64>(&path(dir, "k.npy"));
    assert_eq!(sorted, reference(&keys, u64::total_cmp, false));
    assert_eq!(files_in(dir), ["k.npy"]);
}

#[test]
fn timings_name_every_phase() {
    let dir = temp_dir();
    let dir = dir.path();
    write_raw(&path(dir, "k.raw"), &u32::keys(KEYS, 21));
    let output = run_ok(
        dir,
        &["sort", "k.raw", "--dtype", "u32", "--timings", "--cpu"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    for phase in ["read", "sort", "write", "total"] {
        assert!(
            stderr.lines().any(|l| l.starts_with(phase)),
            "{phase}: {stderr}"
        );
    }
}

#[test]
fn bench_quick_writes_a_table_a_csv_and_a_plot() {
    let dir = temp_dir();
    let dir = dir.path();
    let output = run_ok(
        dir,
        &["bench", "--quick", "--max", "16", "--out", "b", "--cpu"],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    for primitive in ["sort", "merge", "sorted_search", "load_balance"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(primitive)),
            "{primitive}: {stdout}"
        );
    }
    let csv = std::fs::read_to_string(path(dir, "b/bench.csv")).expect("the CSV");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("group,variant,key,n,ms,gkeys_per_s"));
    // Four primitives, three CPU variants each, at the one size 2^16.
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 12, "{csv}");
    assert!(rows.iter().all(|r| r.split(',').nth(3) == Some("65536")));
    let svg = std::fs::read_to_string(path(dir, "b/bench.svg")).expect("the plot");
    assert!(svg.starts_with("<svg") && svg.contains("stable sort"));
}

#[test]
fn info_names_the_backend_and_checks_it() {
    let dir = temp_dir();
    let output = run_ok(dir.path(), &["info"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let backend = match twophase::backend() {
        twophase::Backend::Gpu => "backend:      gpu",
        twophase::Backend::Cpu => "backend:      cpu",
    };
    assert!(stdout.contains(backend), "{stdout}");
    for line in ["driver:", "NVRTC:", "devices:", "kernel cache:", "check:"] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
}

#[test]
fn the_demo_runs_verified_and_points_at_info_and_bench() {
    let dir = temp_dir();
    let output = run_ok(dir.path(), &["-n", "5000"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.matches("verified against std").count(),
        2,
        "{stdout}"
    );
    assert!(stdout.contains("twophase info") && stdout.contains("twophase bench"));
    run_fails(dir.path(), &["--n", "1"], "--n must be at least 2");
}
