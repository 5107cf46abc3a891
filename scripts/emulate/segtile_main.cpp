//! Harness: the segmented sort's tile path (check, plan, block sort by (segment, key), then each merge level's partitions, their check, its merge and its four-way merge) on CSR starts and ranges under ASan.
#include "cuda_emu.h"
#include "harness.h"
#include <cstdio>
#include <cstring>
#include KERNEL_SOURCE

// The call's control words, up to the four-way list counts (kernels/segmented_sort.cu).
constexpr size_t CONTROL_WORDS = CONTROL_FOUR_WAY_COUNTS + SEGSORT_MAX_LEVELS;
// Keys of one block-sort tile.
constexpr size_t NV = (size_t)TP_NT * TP_VT;
// Blocks the strided kernels get (the host gives them a few an SM): fewer than their work, so
// that each block strides over several items.
constexpr unsigned STRIDED_BLOCKS = 2;

// The segmentations of the cases, over n keys: lengths uniform in 1..200; lengths up to three
// tiles (segments across tiles and runs, straddling every level); one segment of all the keys;
// ranges of up to two tiles with gaps of up to a tile and a half between them (tiles wholly in a
// gap); lengths 0..3 with many empty segments; a long segment among one-key ones; invalid starts
// (decreasing: nothing may move).
enum shape { UNIFORM_200, UP_TO_3_TILES, ALL_ONE, RANGES_GAPS, EMPTIES, LONG_AMONG_ONES, INVALID, SHAPES };

static segmentation segments_of(std::mt19937_64& rng, size_t n, int shape) {
  segmentation s;
  if (shape == RANGES_GAPS) {
    for (size_t at = rng() % 3; at < n;) {
      const size_t len = std::min<size_t>(rng() % (2 * NV), n - at);
      s.starts.push_back(at);
      s.ends.push_back(at + len);
      at += len + rng() % (NV + NV / 2);
    }
    return s;
  }
  if (shape == LONG_AMONG_ONES) {
    const size_t first = n > 2 ? rng() % (n / 2) : 0, last = first + (n - first) / 2 + 1;
    for (size_t at = 0; at < n; at = at < first || at >= last ? at + 1 : last) s.starts.push_back(at);
    if (s.starts.empty()) s.starts.push_back(0);
    return s;
  }
  for (size_t at = 0; at < n || s.starts.empty();) {
    s.starts.push_back(at);
    if (n == 0 || shape == ALL_ONE) break;
    const size_t len = shape == UNIFORM_200 ? 1 + rng() % 200
                       : shape == EMPTIES  ? rng() % 4
                                           : 1 + rng() % (3 * NV);
    at += std::min(len, n - at);
  }
  if (shape == INVALID && s.starts.size() > 2) std::swap(s.starts[1], s.starts[2]);
  return s;
}

// Every launch of the tile path over `keys` (each key's position as its value), as
// crates/gpu/src/segmented_sort/launch.rs makes them: the control words cleared, the check, the
// short kernel (which stands aside where a segment is longer than it takes), the straddles, the
// plan, the block sort, then per level the partitions, their check (checked comparators), the
// merge and, at even levels below the last (trusted comparators), the four-way cuts and merge.
// Returns the status bits raised.
static unsigned long long run_tile_path(std::vector<key_type>& keys, std::vector<unsigned>& ids,
                                        const segmentation& seg) {
  const size_t count = keys.size(), nseg = seg.starts.size();
  const size_t num_tiles = (count + NV - 1) / NV;
  unsigned levels = 0;
  while (((size_t)1 << levels) < num_tiles) ++levels;
  std::unique_ptr<key_type[]> k = exact_copy(keys), k2(new key_type[count]);
  std::unique_ptr<value_type[]> v = position_values<value_type>(count), v2(new value_type[count]);
  const segment_buffers segs = seg.buffers();
  const size_type *starts = segs.starts.get(), *ends_ptr = segs.ends;
  std::vector<unsigned> control(CONTROL_WORDS, 0u);
  std::vector<unsigned long long> masks(std::max<size_t>(num_tiles, 1), 0xa5a5a5a5a5ull);
  std::vector<size_type> straddles(2 * std::max<size_type>(straddle_offset(num_tiles, levels), 1), 0xabababull);
  std::vector<unsigned> lists(std::max<size_t>(2 * levels * num_tiles, 1), 0xcdcdcdcdu);
  std::vector<size_type> partitions(num_tiles + 1, 0xefefefull);
  std::vector<size_type> cuts(3 * (num_tiles + 1), 0xcbcbcbull);
  // The first four-way level (every other one from it): 0, as far from shipped tunings as can be.
  const unsigned four_way = CHECK_ORDER ? ~0u : 0;
  status_words status;
  launch(STRIDED_BLOCKS, TP_PARTITION_NT, [&] {
    twophase_segsort_check(starts, ends_ptr, nseg, count, control.data(), status.words);
  });
  launch(STRIDED_BLOCKS, TP_SHORT_NT, [&] {
    twophase_segsort_short(k.get(), v.get(), starts, ends_ptr, nseg, count, control.data());
  });
  launch((unsigned)std::max<size_type>((straddle_offset(num_tiles, levels) + TP_PARTITION_NT - 1) / TP_PARTITION_NT, 1),
         TP_PARTITION_NT, [&] {
           twophase_segsort_straddles(starts, ends_ptr, nseg, count, num_tiles, masks.data(), straddles.data(),
                                      control.data(), lists.data(), levels, four_way);
         });
  launch((unsigned)std::max<size_t>((num_tiles + TP_PARTITION_NT - 1) / TP_PARTITION_NT, 1), TP_PARTITION_NT, [&] {
    twophase_segsort_plan(starts, ends_ptr, nseg, count, num_tiles, masks.data(), straddles.data(),
                          control.data(), lists.data(), levels, four_way);
  });
  launch((unsigned)num_tiles, TP_NT, [&] {
    twophase_segsort_blocksort(k.get(), v.get(), k2.get(), v2.get(), starts, ends_ptr, nseg, count,
                               masks.data(), control.data(), status.words);
  });
  for (unsigned level = 0; level < levels; ++level) {
    const size_type* level_straddles = straddles.data() + 2 * straddle_offset(num_tiles, level);
    const unsigned* list = lists.data() + (size_t)level * num_tiles;
    const bool four_way_level = level >= four_way && (level - four_way) % 2 == 0 && level + 1 < levels;
    // As the shipped small sorts: a trusted order's merge searches its own partitions where no
    // four-way cut reads them.
    const unsigned own_partitions = !CHECK_ORDER && !four_way_level;
    if (!own_partitions) {
      launch(STRIDED_BLOCKS, TP_PARTITION_NT, [&] {
        twophase_segsort_partition(k.get(), k2.get(), count, num_tiles, masks.data(), level_straddles,
                                   control.data(), list, partitions.data(), level);
      });
    }
    if (CHECK_ORDER) {
      launch(STRIDED_BLOCKS, TP_PARTITION_NT, [&] {
        twophase_segsort_verify(count, level_straddles, list, partitions.data(), control.data(), status.words,
                                level);
      });
    }
    launch(STRIDED_BLOCKS, TP_NT, [&] {
      twophase_segsort_merge(k.get(), k2.get(), v.get(), v2.get(), count, masks.data(), level_straddles,
                             control.data(), list, partitions.data(), status.words, level, own_partitions);
    });
    if (four_way_level) {
      const unsigned* four_way_list = lists.data() + (size_t)(levels + level) * num_tiles;
      launch(STRIDED_BLOCKS, TP_PARTITION_NT, [&] {
        twophase_segsort_four_way_cuts(k.get(), k2.get(), v.get(), v2.get(), count, masks.data(), control.data(),
                                       four_way_list, partitions.data(), cuts.data(), status.words, level);
      });
      launch(STRIDED_BLOCKS, TP_NT, [&] {
        twophase_segsort_four_way_merge(k.get(), k2.get(), v.get(), v2.get(), count, masks.data(), control.data(),
                                        four_way_list, partitions.data(), cuts.data(), status.words, level);
      });
    }
  }
  keys.assign(k.get(), k.get() + count);
  ids = carried_positions(v.get(), count);
  return status.take();
}

int main(int argc, char** argv) {
  std::mt19937_64 rng = seeded(argc, argv);
  int failures = 0, cases = 0;
  // One key; a tile each side of its end; several tiles (two to four levels).
  for (size_t n : {size_t(1), NV - 1, NV + 1, 3 * NV + 5, 9 * NV + 7}) {
    for (int shape = 0; shape < SHAPES; ++shape) {
      for (int few = 0; few < 2; ++few) {
        ++cases;
        const segmentation seg = segments_of(rng, n, shape);
        std::vector<key_type> in(n);
        for (auto& x : in) {
          const unsigned long long bits = few ? rng() % 4 : rng();
          memcpy(&x, &bits, std::min(sizeof(x), sizeof(bits)));
        }
        std::vector<key_type> out(in);
        std::vector<unsigned> ids;
        const unsigned long long bits = run_tile_path(out, ids, seg);
        const bool invalid = shape == INVALID && seg.starts.size() > 2 && seg.starts[1] > seg.starts[2];
        bool ok = !invalid || bits != 0;
        if (COMPARATOR_CONSISTENT && !invalid) ok &= bits == 0;
        // Keys outside every segment (all of them where the segments are invalid) in place.
        std::vector<char> inside(n, 0);
        for (size_t i = 0; !invalid && i < seg.starts.size(); ++i) {
          for (size_t p = seg.starts[i]; p < seg.end(i, n); ++p) inside[p] = 1;
        }
        for (size_t p = 0; p < n; ++p) {
          if (!inside[p]) ok &= memcmp(&in[p], &out[p], sizeof(key_type)) == 0 && (!TP_HAS_VALUES || ids[p] == p);
        }
        // Each segment a permutation of its keys; under a strict weak order, std's stable sort.
        for (size_t i = 0; !invalid && i < seg.starts.size(); ++i) {
          const size_t first = seg.starts[i], last = seg.end(i, n);
          ok &= permutes_range(in, out, ids, first, last, TP_HAS_VALUES);
          if (COMPARATOR_CONSISTENT) ok &= stable_sorts_range(in, out, ids, first, last, TP_HAS_VALUES, key_compare());
        }
        if (!ok) {
          ++failures;
          printf("FAIL n=%zu shape=%d few=%d segments=%zu bits=%llx\n", n, shape, few, seg.starts.size(), bits);
        }
      }
    }
  }
  printf("%s: %d of %d cases failed\n", argv[0], failures, cases);
  return failures != 0;
}
