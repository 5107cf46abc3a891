//! Harness: the segmented sort's check and short-path kernels (every segment of at most TP_SHORT_MAX keys sorted by one thread) on CSR starts and ranges under ASan.
#include "cuda_emu.h"
#include "harness.h"
#include <cstdio>
#include <cstring>
#include KERNEL_SOURCE

// The call's control words, up to the long-segment flag (kernels/segmented_sort.cu).
constexpr size_t CONTROL_WORDS = CONTROL_LONG_SEGMENT + 1;
// Keys a block of the short kernel spans at most when its segments are adjacent.
constexpr size_t BLOCK_SPAN = (size_t)TP_SHORT_NT * TP_SHORT_MAX;

// The segmentations of the cases, over n keys: every segment TP_SHORT_MAX keys; lengths 0 to
// TP_SHORT_MAX (a trailing CSR end offset at times); every key its own segment; the same with one
// segment one key longer than TP_SHORT_MAX (the tile path's, the short kernel must not move a
// key); ranges with small gaps; ranges with gaps wider than a block's span (each thread then
// moves its own segment); invalid starts (decreasing: nothing may move).
enum shape { ALL_FULL, RANDOM_LENGTHS, ONES, ONE_TOO_LONG, RANGES_NEAR, RANGES_FAR, INVALID, SHAPES };

static segmentation segments_of(std::mt19937_64& rng, size_t n, int shape) {
  segmentation s;
  const size_t max_len = TP_SHORT_MAX;
  if (shape == RANGES_NEAR || shape == RANGES_FAR) {
    size_t at = rng() % 3;
    while (at < n) {
      const size_t len = std::min<size_t>(rng() % (max_len + 1), n - at);
      s.starts.push_back(at);
      s.ends.push_back(at + len);
      const size_t gap = shape == RANGES_FAR && rng() % 8 == 0 ? BLOCK_SPAN + rng() % 100 : rng() % 4;
      at += len + gap;
    }
    return s;
  }
  for (size_t at = 0; at < n || s.starts.empty();) {
    s.starts.push_back(at);
    if (n == 0) break;
    size_t len = shape == ALL_FULL ? max_len : shape == ONES ? 1 : rng() % (max_len + 1);
    at += std::min(len, n - at);
  }
  if (shape == RANDOM_LENGTHS && rng() % 2 == 0) s.starts.push_back(n);  // trailing end offset
  if (shape == ONE_TOO_LONG && n > max_len) {
    // Merge around a random start so that one segment is exactly max_len + 1 long.
    const size_t first = rng() % (n - max_len);
    std::vector<size_type> starts;
    for (size_type st : s.starts) {
      if (st < first || st > first + max_len + 1) starts.push_back(st);
    }
    starts.push_back(first);
    if (first + max_len + 1 < n) starts.push_back(first + max_len + 1);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    s.starts = starts;
  }
  if (shape == INVALID && s.starts.size() > 2) std::swap(s.starts[1], s.starts[2]);
  return s;
}

// The check and the short kernel over `keys` (with each key's position as its value).
static void run_short(std::vector<key_type>& keys, std::vector<unsigned>& ids, const segmentation& seg,
                      unsigned* control, status_words& status) {
  const size_t count = keys.size(), nseg = seg.starts.size();
  std::unique_ptr<key_type[]> k = exact_copy(keys);
  std::unique_ptr<value_type[]> v = position_values<value_type>(count);
  const segment_buffers segs = seg.buffers();
  const size_type *starts = segs.starts.get(), *ends_ptr = segs.ends;
  std::fill(control, control + CONTROL_WORDS, 0u);
  // The check strides too (the host gives it a few blocks an SM).
  launch(std::min<size_t>((nseg + TP_PARTITION_NT - 1) / TP_PARTITION_NT, 2), TP_PARTITION_NT, [&] {
    twophase_segsort_check(starts, ends_ptr, nseg, count, control, status.words);
  });
  // Fewer blocks than groups (the host gives a few an SM): the blocks stride over the groups.
  launch(std::min<size_t>((nseg + TP_SHORT_NT - 1) / TP_SHORT_NT, 3), TP_SHORT_NT, [&] {
    twophase_segsort_short(k.get(), v.get(), starts, ends_ptr, nseg, count, control);
  });
  keys.assign(k.get(), k.get() + count);
  ids = carried_positions(v.get(), count);
}

int main(int argc, char** argv) {
  std::mt19937_64 rng = seeded(argc, argv);
  status_words status;
  unsigned control[CONTROL_WORDS];
  int failures = 0, cases = 0;
  for (size_t n : {size_t(1), size_t(2), size_t(TP_SHORT_MAX + 1), size_t(1000), BLOCK_SPAN + 1, 3 * BLOCK_SPAN + 77}) {
    for (int shape = 0; shape < SHAPES; ++shape) {
      for (int few = 0; few < 2; ++few) {
        ++cases;
        const segmentation seg = segments_of(rng, n, shape);
        std::vector<key_type> in(n);
        for (auto& x : in) x = (key_type)(few ? rng() % 4 : rng());
        std::vector<key_type> out(in);
        std::vector<unsigned> ids;
        run_short(out, ids, seg, control, status);
        const unsigned long long bits = status.take();
        bool ok = true;
        const bool invalid = shape == INVALID && seg.starts.size() > 2 && seg.starts[1] > seg.starts[2];
        const bool short_path = !invalid && !(shape == ONE_TOO_LONG && n > TP_SHORT_MAX);
        ok &= (bits != 0) == invalid;
        if (!invalid) ok &= (control[CONTROL_LONG_SEGMENT] == 0) == short_path;
        // The short kernel marks the call taken (no block runs, and the host launches none, without segments).
        if (!invalid && !seg.starts.empty()) ok &= ((control[CONTROL_INVALID] & SHORT_TAKEN_BIT) != 0) == short_path;
        // Every key outside the segments (and every key where the short path was not taken) in place.
        std::vector<char> inside(n, 0);
        if (short_path) {
          for (size_t i = 0; i < seg.starts.size(); ++i) {
            for (size_t p = seg.starts[i]; p < seg.end(i, n); ++p) inside[p] = 1;
          }
        }
        for (size_t p = 0; p < n; ++p) {
          if (!inside[p]) ok &= memcmp(&in[p], &out[p], sizeof(key_type)) == 0 && (!TP_HAS_VALUES || ids[p] == p);
        }
        for (size_t i = 0; short_path && i < seg.starts.size(); ++i) {
          const size_t first = seg.starts[i], last = seg.end(i, n);
          // A permutation of the segment; under a strict weak order, std::stable_sort's answer.
          ok &= permutes_range(in, out, ids, first, last, TP_HAS_VALUES);
          if (COMPARATOR_CONSISTENT) ok &= stable_sorts_range(in, out, ids, first, last, TP_HAS_VALUES, key_compare());
        }
        if (!ok) {
          ++failures;
          printf("FAIL n=%zu shape=%d few=%d segments=%zu bits=%llx long=%u\n", n, shape, few, seg.starts.size(),
                 bits, control[CONTROL_LONG_SEGMENT]);
        }
      }
    }
  }
  printf("%s: %d of %d cases failed\n", argv[0], failures, cases);
  return failures != 0;
}
