//! Sorts and merges across GPUs (need a CUDA GPU; run with --include-ignored): against std's stable sort of the shards' concatenation, exact output shard sizes.

mod common;

use common::{
    assert_invalid_input, broken_u32_comparators, gpu, multiset, rng, u32_pattern_keys, PATTERNS,
};
use rand::rngs::StdRng;
use rand::Rng;
use rayon::prelude::*;
use twophase::gpu::{CudaComparator, DeviceComparator, DeviceKey, Gpu, GpuError, GpuGroup, Less};
use twophase_gpu::cudarc::driver::{CudaContext, CudaSlice, DeviceRepr};
use twophase_partition::shard_boundary;

/// The handles under test: one per device where the machine has two or more (the NCCL
/// exchange), else `fallback` handles on device 0 (the copies between handles of one device).
fn handles(fallback: usize) -> Vec<Gpu> {
    let devices = CudaContext::device_count().map_or(0, |count| count as usize);
    if devices >= 2 {
        (0..devices)
            .map(|d| Gpu::new(d).expect("open device"))
            .collect()
    } else {
        (0..fallback).map(|_| gpu()).collect()
    }
}

/// Two handles on device 0: the copies exchange, on any machine with a GPU.
fn one_device_pair() -> Vec<Gpu> {
    vec![gpu(), gpu()]
}

/// A record sorted by a user comparator, descending by `key`; `tag` proves stability.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Tagged {
    key: u32,
    tag: u32,
}

impl DeviceKey for Tagged {
    const CUDA_TYPE: &'static str = "tagged";
    const CUDA_DEFINITION: &'static str = "struct tagged { unsigned int key; unsigned int tag; };";
}

// SAFETY: `Tagged` is two u32s, plain data with no padding.
unsafe impl DeviceRepr for Tagged {}

/// Key bytes a streamed chunk carries at least in these tests: two devices cut every piece of
/// 8 KiB or more into the most chunks, so that the windows' code runs at the tests' sizes.
const TEST_CHUNK_BYTES: usize = 1024;

/// Keys a round of a two-GPU cut reads in these tests: so few that the cuts at the tests' sizes
/// take many strided rounds (the 2^28 test keeps the shipped default).
const TEST_CUT_PROBES: usize = 3;

/// The group of all `gpus`, with the tests' chunks and cut rounds.
fn group(gpus: &[Gpu]) -> GpuGroup<'_> {
    let group = default_group(gpus);
    group.set_stream_chunk_bytes(TEST_CHUNK_BYTES);
    group.set_cut_probes(TEST_CUT_PROBES);
    group
}

/// The group of all `gpus` as shipped.
fn default_group(gpus: &[Gpu]) -> GpuGroup<'_> {
    let refs: Vec<&Gpu> = gpus.iter().collect();
    GpuGroup::new(&refs).expect("group")
}

/// `shards` uploaded, shard `i` to the group's handle `i`.
fn upload<T: DeviceRepr>(group: &GpuGroup, shards: &[Vec<T>]) -> Vec<CudaSlice<T>> {
    let parts: Vec<&[T]> = shards.iter().map(Vec::as_slice).collect();
    group.upload(&parts).expect("upload")
}

/// The output shards brought back to the host, one vector each.
fn download<T: DeviceRepr + bytemuck::Pod>(
    group: &GpuGroup,
    shards: &[CudaSlice<T>],
) -> Vec<Vec<T>> {
    let mut host = vec![T::zeroed(); shards.iter().map(CudaSlice::len).sum()];
    group.download(shards, &mut host).expect("download");
    let lengths: Vec<usize> = shards.iter().map(CudaSlice::len).collect();
    cut(&host, &lengths)
}

/// Assert that `out` are the exact output shards of the stable sort of `expected_sorted` (the
/// shards' concatenation sorted by std): shard `i` holds ranks [i n / p, (i + 1) n / p).
fn assert_exact_shards<T: PartialEq + std::fmt::Debug>(
    out: &[Vec<T>],
    expected_sorted: &[T],
    what: &str,
) {
    let (p, n) = (out.len(), expected_sorted.len());
    for (i, shard) in out.iter().enumerate() {
        let (begin, end) = (shard_boundary(i, p, n), shard_boundary(i + 1, p, n));
        assert_eq!(shard.len(), end - begin, "{what}: output shard {i} size");
        if shard[..] != expected_sorted[begin..end] {
            let at = shard
                .iter()
                .zip(&expected_sorted[begin..end])
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            panic!(
                "{what}: output shard {i} differs at {at}: {:?} vs {:?}",
                shard.get(at),
                expected_sorted.get(begin + at)
            );
        }
    }
}

/// Shard lengths of `n` keys over `p` shards in one of several splits: even, skewed, the first
/// shard empty, everything in the last.
fn split_lengths(rng: &mut StdRng, n: usize, p: usize, split: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = match split {
        0 => (0..=p).map(|i| shard_boundary(i, p, n)).collect(),
        1 => {
            let mut c: Vec<usize> = (0..p - 1).map(|_| rng.gen_range(0..=n)).collect();
            c.extend([0, n]);
            c
        }
        2 => {
            // The first shard empty, the others even.
            let mut c = vec![0];
            c.extend((0..p).map(|i| shard_boundary(i, p - 1, n)));
            c
        }
        _ => {
            let mut c = vec![0; p];
            c.push(n);
            c
        }
    };
    cuts.sort_unstable();
    cuts.windows(2).map(|w| w[1] - w[0]).collect()
}

/// `keys` cut into shards of `lengths`.
fn cut<T: Copy>(keys: &[T], lengths: &[usize]) -> Vec<Vec<T>> {
    let mut at = 0;
    lengths
        .iter()
        .map(|&len| {
            let shard = keys[at..at + len].to_vec();
            at += len;
            shard
        })
        .collect()
}

/// The sharded sort of `keys` in shards of `lengths` against std's stable sort.
fn check_sort<K, C>(gpus: &[Gpu], keys: &[K], lengths: &[usize], comp: &C, what: &str)
where
    K: DeviceKey + DeviceRepr + PartialEq + std::fmt::Debug,
    C: DeviceComparator<K>,
{
    check_sort_in(&group(gpus), keys, lengths, comp, what);
}

/// The sharded sort of `keys` by `group` in shards of `lengths` against std's stable sort.
fn check_sort_in<K, C>(group: &GpuGroup, keys: &[K], lengths: &[usize], comp: &C, what: &str)
where
    K: DeviceKey + DeviceRepr + PartialEq + std::fmt::Debug,
    C: DeviceComparator<K>,
{
    let mut shards = upload(group, &cut(keys, lengths));
    let out = group.sort_device(&mut shards, comp).expect(what);
    let mut expected = keys.to_vec();
    let order = twophase_gpu::compare::ordering(comp);
    expected.par_sort_by(&order);
    assert_exact_shards(&download(group, &out), &expected, what);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_pattern_size_and_split_sorts_into_exact_shards() {
    let mut rng = rng();
    for gpus in [handles(3), one_device_pair()] {
        let p = gpus.len();
        for n in [0, 1, 2, 3, 1000, (1 << 16) + 1, (1 << 20) + 3] {
            for pattern in PATTERNS {
                let keys = u32_pattern_keys(&mut rng, n, pattern, 4);
                for split in 0..4 {
                    let lengths = split_lengths(&mut rng, n, p, split);
                    let what = format!("p = {p}, n = {n}, {pattern:?}, split {split} {lengths:?}");
                    check_sort(&gpus, &keys, &lengths, &Less, &what);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pairs_are_stable_across_shards_and_a_user_comparator_sorts() {
    let mut rng = rng();
    for gpus in [handles(2), one_device_pair()] {
        let group = group(&gpus);
        // Three windows a streamed merge (two devices), the last chunk the largest.
        group.set_stream_chunk_weights(&[1, 2, 3]).expect("weights");
        let p = gpus.len();
        for n in [5, 4097, (1 << 20) + 1] {
            // Duplicate-heavy keys: equal keys in every shard, their values the global index.
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..8)).collect();
            let lengths = split_lengths(&mut rng, n, p, 1);
            check_pairs(&group, &keys, &lengths, &format!("pairs p = {p}, n = {n}"));

            let records: Vec<Tagged> = (0..n)
                .map(|i| Tagged {
                    key: rng.gen_range(0..16),
                    tag: i as u32,
                })
                .collect();
            let descending = CudaComparator::new(
                "tagged_key_desc",
                "return a.key > b.key;",
                |a: &Tagged, b: &Tagged| a.key > b.key,
            );
            check_sort(&gpus, &records, &lengths, &descending, "user comparator");
        }
    }
}

/// Two devices' sorts with the exchange led from inside the last merge pass and without, on
/// shards long enough for four-way last passes (u64 keys; u32 pairs, whose values prove the
/// order of equal keys), in unequal shards: both give std's stable sort.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_sort_that_leads_its_exchange_matches_std() {
    let mut rng = rng();
    let gpus = handles(2);
    let group = group(&gpus);
    let p = gpus.len();
    // Four-way last passes at full scale; two-way ones under the sanitizers' small scale.
    let most = (1usize << 24).min(common::checks::test_scale());
    for lead in [true, false] {
        group.set_lead_exchange(lead);
        let n = most + 7;
        let keys: Vec<u64> = (0..n).map(|_| rng.gen_range(0..1 << 40)).collect();
        let lengths = split_lengths(&mut rng, n, p, 1);
        check_sort_in(&group, &keys, &lengths, &Less, &format!("u64, lead {lead}"));

        let n = most + 3;
        let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 12)).collect();
        let lengths = split_lengths(&mut rng, n, p, 1);
        check_pairs(&group, &keys, &lengths, &format!("pairs, lead {lead}"));
    }
}

/// The sharded sort of `keys` in shards of `lengths` with their global indices as values,
/// against std's stable sort of the pairs by key: every value after the equal keys' earlier
/// ones, each output shard of its exact size.
fn check_pairs(group: &GpuGroup, keys: &[u32], lengths: &[usize], what: &str) {
    let n = keys.len();
    let values: Vec<u32> = (0..n as u32).collect();
    let mut key_shards = upload(group, &cut(keys, lengths));
    let mut value_shards = upload(group, &cut(&values, lengths));
    let (out_keys, out_values) = group
        .sort_pairs_device(&mut key_shards, &mut value_shards, &Less)
        .expect(what);
    let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(values).collect();
    expected.par_sort_by_key(|pair| pair.0);
    let out_keys = download(group, &out_keys);
    for (i, shard) in out_keys.iter().enumerate() {
        assert_eq!(shard.len(), group.output_len(i, n), "{what}");
    }
    let got: Vec<(u32, u32)> = out_keys
        .concat()
        .into_iter()
        .zip(download(group, &out_values).concat())
        .collect();
    assert!(got == expected, "{what}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sorted_runs_merge_and_unsorted_runs_are_reported() {
    let mut rng = rng();
    for gpus in [handles(3), one_device_pair()] {
        let group = group(&gpus);
        let p = gpus.len();
        let n = (1 << 18) + 5;
        let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
        let lengths = split_lengths(&mut rng, n, p, 1);
        let mut runs = cut(&keys, &lengths);
        runs.iter_mut().for_each(|run| run.sort_unstable());
        let out = group
            .merge_device(&upload(&group, &runs), &Less)
            .expect("merge");
        let mut expected = keys.clone();
        expected.sort_unstable();
        assert_exact_shards(&download(&group, &out), &expected, "merge");

        // Unsorted runs: InvalidInput naming the runs.
        let unsorted = cut(&keys, &split_lengths(&mut rng, n, p, 0));
        let result = group.merge_device(&upload(&group, &unsorted), &Less);
        assert_invalid_input(result.map(|v| v.len()), "unsorted runs", "`runs`");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_inconsistent_comparator_is_invalid_input_and_keeps_every_key() {
    let mut rng = rng();
    for gpus in [handles(2), one_device_pair()] {
        let group = group(&gpus);
        let n = (1 << 16) + 3;
        let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..64)).collect();
        let shards = cut(&keys, &split_lengths(&mut rng, n, gpus.len(), 0));
        for comp in broken_u32_comparators() {
            let mut device_shards = upload(&group, &shards);
            match group.sort_device(&mut device_shards, &comp) {
                // Seen: each input shard still holds its own keys.
                Err(GpuError::InvalidInput(_)) => {
                    for (shard, after) in shards.iter().zip(download(&group, &device_shards)) {
                        assert_eq!(multiset(shard), multiset(&after), "{}", comp.name());
                    }
                }
                // Not seen: the outputs are a permutation of the keys, cut exactly.
                Ok(out) => {
                    let out = download(&group, &out);
                    for (i, shard) in out.iter().enumerate() {
                        assert_eq!(shard.len(), group.output_len(i, n), "{}", comp.name());
                    }
                    assert_eq!(multiset(&out.concat()), multiset(&keys), "{}", comp.name());
                }
                Err(other) => panic!("{}: expected InvalidInput, got {other:?}", comp.name()),
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mismatched_buffers_are_invalid_input() {
    let gpus = one_device_pair();
    let group = group(&gpus);
    let mut one = group.upload(&[&[3u32, 1, 2][..], &[]]).expect("upload");
    one.pop();
    let result = group.sort_device(&mut one, &Less).map(|v| v.len());
    assert_invalid_input(result, "one shard for two GPUs", "`shards`");
    assert!(matches!(GpuGroup::new(&[]), Err(GpuError::InvalidInput(_))));
    for weights in [&[][..], &[2, 0]] {
        let result = group.set_stream_chunk_weights(weights);
        assert_invalid_input(result, "chunk weights", "`weights`");
    }

    // Output shards of the wrong size.
    let mut shards = group.upload(&[&[3u32, 1][..], &[2]]).expect("upload");
    let mut short = group.output_shards::<u32>(2).expect("outputs");
    match group.sort_device_into(&mut shards, &mut short, &Less) {
        Err(GpuError::SizeMismatch { what, .. }) => assert_eq!(what, "out"),
        other => panic!("outputs of 2 keys for 3: expected SizeMismatch, got {other:?}"),
    }

    // On a machine of several GPUs: each shard's buffer on the other handle's context (the
    // first two devices).
    let devices: Vec<Gpu> = handles(2).into_iter().take(2).collect();
    if devices[0].context().ordinal() != devices[1].context().ordinal() {
        let group = self::group(&devices);
        let mut swapped = group.upload(&[&[3u32, 1][..], &[2]]).expect("upload");
        swapped.swap(0, 1);
        let result = group.sort_device(&mut swapped, &Less).map(|v| v.len());
        assert_invalid_input(result, "shards on the other contexts", "`shards[0]`");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_host_convenience_sorts_in_place() {
    let mut rng = rng();
    let gpus = handles(2);
    let group = group(&gpus);
    eprintln!("exchange: {}", group.exchange_name());
    for n in [0, 7, (1 << 20) + 9] {
        let mut keys: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
        let mut expected = keys.clone();
        expected.sort_unstable();
        group.sort(&mut keys, &Less).expect("sort");
        assert_eq!(keys, expected, "n = {n}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn large_shards_sort_at_2_pow_28_per_gpu() {
    let gpus = handles(2);
    let p = gpus.len();
    let per_gpu = 1usize << 28;
    let n = per_gpu * p;
    let keys: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|i| common::splitmix_u32(0x5eed, i))
        .collect();
    let group = default_group(&gpus);
    check_sort_in(&group, &keys, &vec![per_gpu; p], &Less, "2^28 a GPU");
}

/// Handles on device 0 for in-place groups of `p`: the copies exchange, with merge trees of one
/// (p = 2), two (p = 3, 4: the even count, which copies the pieces out first) and three levels.
fn same_device_handles(p: usize) -> Vec<Gpu> {
    (0..p).map(|_| gpu()).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_in_place_sort_replaces_each_shard_with_its_output_shard() {
    let mut rng = rng();
    let groups = [
        handles(2),
        same_device_handles(3),
        same_device_handles(4),
        same_device_handles(5),
    ];
    for gpus in &groups {
        let group = group(gpus);
        let p = gpus.len();
        for n in [0, 1, 3, 1000, (1 << 16) + 1, (1 << 20) + 3] {
            for pattern in PATTERNS {
                let keys = u32_pattern_keys(&mut rng, n, pattern, 4);
                let lengths = split_lengths(&mut rng, n, p, 0);
                let mut shards = upload(&group, &cut(&keys, &lengths));
                let what = format!("in place, p = {p}, n = {n}, {pattern:?}");
                group.sort_device_in_place(&mut shards, &Less).expect(&what);
                let mut expected = keys.clone();
                expected.sort_unstable();
                assert_exact_shards(&download(&group, &shards), &expected, &what);
            }
            // Pairs: duplicate-heavy keys, their values the global index.
            let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..8)).collect();
            let values: Vec<u32> = (0..n as u32).collect();
            let lengths = split_lengths(&mut rng, n, p, 0);
            let mut key_shards = upload(&group, &cut(&keys, &lengths));
            let mut value_shards = upload(&group, &cut(&values, &lengths));
            group
                .sort_pairs_device_in_place(&mut key_shards, &mut value_shards, &Less)
                .expect("pairs in place");
            let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(values).collect();
            expected.sort_by_key(|pair| pair.0);
            let got: Vec<(u32, u32)> = download(&group, &key_shards)
                .concat()
                .into_iter()
                .zip(download(&group, &value_shards).concat())
                .collect();
            assert_eq!(got, expected, "pairs in place, p = {p}, n = {n}");
        }

        // Shards that are not the output shards' sizes: SizeMismatch naming them, untouched.
        let mut uneven = upload(
            &group,
            &cut(&[3u32, 2, 1], &split_lengths(&mut rng, 3, p, 3)),
        );
        match group.sort_device_in_place(&mut uneven, &Less) {
            Err(GpuError::SizeMismatch { what, .. }) => assert_eq!(what, "shards"),
            other => panic!("uneven shards in place: expected SizeMismatch, got {other:?}"),
        }
        assert_eq!(download(&group, &uneven).concat(), [3, 2, 1]);

        // An inconsistent comparator: InvalidInput, or exact shards; the keys are all kept.
        let n = (1 << 16) + 3;
        let keys: Vec<u32> = (0..n).map(|_| rng.gen_range(0..64)).collect();
        let lengths = split_lengths(&mut rng, n, p, 0);
        for comp in broken_u32_comparators() {
            let mut shards = upload(&group, &cut(&keys, &lengths));
            match group.sort_device_in_place(&mut shards, &comp) {
                Ok(()) | Err(GpuError::InvalidInput(_)) => {}
                Err(other) => panic!("{}: expected InvalidInput, got {other:?}", comp.name()),
            }
            let after = download(&group, &shards);
            assert_eq!(
                multiset(&after.concat()),
                multiset(&keys),
                "{}",
                comp.name()
            );
        }
    }
}
