//! The segmentations of the segmented-sort benchmarks, drawn by a fixed generator that the CUB peer (benches/peers/cub_segmented_sort.cu) repeats bit for bit.

/// The segment-length distributions, in the order that seeds their generators (distribution `i`
/// seeds splitmix64 with `0x5E65_5E65 + i`): `all32`, every segment 32 keys; `uniform200` and
/// `uniform2000`, lengths uniform in 1..=200 and 1..=2000; `powerlaw`, Pareto lengths
/// `min(2^20, floor(u^(-1/1.2)))` for `u` uniform in (0, 1] (many tiny segments, a few of up to
/// 2^20 keys); `one`, a single segment of all the keys.
pub const SEGMENT_DISTRIBUTIONS: [&str; 5] =
    ["all32", "uniform200", "uniform2000", "powerlaw", "one"];

/// The seed of the first distribution's generator.
const SEED: u64 = 0x5E65_5E65;
/// The longest `powerlaw` segment.
const POWERLAW_CAP: u64 = 1 << 20;
/// The Pareto shape of `powerlaw`.
const POWERLAW_ALPHA: f64 = 1.2;

/// The splitmix64 generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (by a modulo, as the peer draws it).
    fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// Uniform in (0, 1]: the top 53 bits plus one, times 2^-53.
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The starts of the segments of distribution `dist` (one of [`SEGMENT_DISTRIBUTIONS`]) over `n`
/// keys: lengths drawn in order until they cover `n`, the last segment cut to end at `n`.
/// `starts[0]` is 0 and there is no trailing `n`; empty only when `n` is 0. Panics on an unknown
/// distribution.
pub fn segment_starts(dist: &str, n: usize) -> Vec<usize> {
    let index = SEGMENT_DISTRIBUTIONS
        .iter()
        .position(|&d| d == dist)
        .unwrap_or_else(|| panic!("unknown segment distribution {dist:?}"));
    let mut rng = SplitMix64(SEED + index as u64);
    let mut starts = Vec::new();
    let mut start = 0;
    while start < n {
        starts.push(start);
        let len = match index {
            0 => 32,
            1 => rng.uniform(1, 200),
            2 => rng.uniform(1, 2000),
            3 => {
                let u = rng.unit();
                (u.powf(-1.0 / POWERLAW_ALPHA).floor() as u64).min(POWERLAW_CAP)
            }
            _ => n as u64,
        };
        start += len.min((n - start) as u64) as usize;
    }
    starts
}
