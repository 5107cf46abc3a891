//! What the harnesses share: a seeded generator, the partition grid, the status words, exact-size copies, the sizes around a tile, and two key runs in twelve shapes.
#pragma once
#include "cuda_emu.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

// The generator seeded by the first argument (default 1).
inline std::mt19937_64 seeded(int argc, char** argv) { return std::mt19937_64(argc > 1 ? atoll(argv[1]) : 1); }

// The partition kernel's grid for a merge of `count` items in tiles of `nv`: its boundaries (one
// more than the tiles), the lanes searching each one, and its blocks (TP_PARTITION_NT / lanes
// boundaries each).
struct partition_grid {
  size_t num_partitions;
  unsigned lanes;
  unsigned blocks;
};
inline partition_grid partition_grid_for(size_t count, size_t nv, size_t partition_nt, unsigned lanes) {
  const size_t num_partitions = (count + nv - 1) / nv + 1;
  const size_t per_block = partition_nt / lanes;
  return {num_partitions, lanes, (unsigned)((num_partitions + per_block - 1) / per_block)};
}

// The partition blocks' arrival count, 0 between launches (the kernels wrap it back).
inline unsigned g_partition_arrivals = 0;

// Lanes per boundary search of successive partition launches: one lane, groups of 4, 8 and 16
// lanes within a warp, and a whole warp, in turn.
inline unsigned next_partition_lanes() {
  static const unsigned cycle[] = {1, 4, 8, 16, 32};
  static unsigned calls = 0;
  return cycle[calls++ % 5];
}

// The call's status word, repair slots and launch generation, as a scratch holds them.
struct status_words {
  unsigned long long words[3] = {0, 0, 0};
  unsigned gen = 0;
  // The status raised since the last take, cleared.
  unsigned long long take() {
    const unsigned long long bits = words[0];
    words[0] = 0;
    return bits;
  }
};

// One call's segments in buffers of exactly their size, as the kernels take them (ends null for
// CSR starts).
struct segment_buffers {
  std::unique_ptr<unsigned long long[]> starts, ends_copy;
  const unsigned long long* ends;
};

// The values a segmented harness sorts beside its keys: each key's position, in the first bytes
// of a value of type V.
template <typename V>
std::unique_ptr<V[]> position_values(size_t count) {
  std::unique_ptr<V[]> values(new V[count]);
  for (size_t i = 0; i < count; ++i) {
    const unsigned id = (unsigned)i;
    memcpy(&values[i], &id, std::min(sizeof(id), sizeof(V)));
  }
  return values;
}

// The positions `count` sorted values carry (position_values' first bytes).
template <typename V>
std::vector<unsigned> carried_positions(const V* values, size_t count) {
  std::vector<unsigned> ids(count, 0);
  for (size_t i = 0; i < count; ++i) memcpy(&ids[i], &values[i], std::min(sizeof(unsigned), sizeof(V)));
  return ids;
}

// A copy of `v` in a buffer of exactly its size, so that ASan sees a read past its end.
template <typename T>
std::unique_ptr<T[]> exact_copy(const std::vector<T>& v) {
  std::unique_ptr<T[]> copy(new T[v.size()]);
  std::copy(v.begin(), v.end(), copy.get());
  return copy;
}

// Segments over the keys (the segmented sort's harnesses): CSR starts (ends empty) or ranges.
struct segmentation {
  std::vector<unsigned long long> starts, ends;
  bool ranges() const { return !ends.empty() || starts.empty(); }
  size_t end(size_t i, size_t count) const {
    return ranges() ? ends[i] : i + 1 < starts.size() ? starts[i + 1] : count;
  }
  // The starts and ends in buffers of exactly their size.
  segment_buffers buffers() const {
    segment_buffers b = {exact_copy(starts), exact_copy(ends), nullptr};
    b.ends = ends.empty() ? nullptr : b.ends_copy.get();
    return b;
  }
};

// The partition kernel's launch over `count` items in tiles of `nv`, `partition_nt` threads a
// block, each boundary searched by the lanes next_partition_lanes() gives: `parts` gets the grid's
// boundaries, poisoned, and every block runs partition(num_partitions, parts, lanes, arrivals).
// Returns the grid (its boundaries: one more than the tiles).
template <typename size_type, typename partition_t>
partition_grid launch_partitions(size_t count, size_t nv, size_t partition_nt, std::vector<size_type>& parts,
                                 partition_t partition) {
  const partition_grid grid = partition_grid_for(count, nv, partition_nt, next_partition_lanes());
  parts.assign(grid.num_partitions, (size_type)0xabababababull);
  size_type* pp = parts.data();
  launch(grid.blocks, (unsigned)partition_nt,
         [&] { partition(grid.num_partitions, pp, (size_type)grid.lanes, &g_partition_arrivals); });
  if (g_partition_arrivals != 0) {
    fprintf(stderr, "partition arrivals not back at 0: %u\n", g_partition_arrivals);
    abort();
  }
  return grid;
}

// Sizes from `first` (0 or 1) to nine tiles of `nv`, each side of a tile's end included.
inline std::vector<size_t> sizes_around_tiles(size_t nv, size_t first) {
  std::vector<size_t> sizes;
  for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(3), nv - 1, nv, nv + 1, 3 * nv + 7, 9 * nv + 5}) {
    if (n >= first) sizes.push_back(n);
  }
  return sizes;
}

// Shapes of two_runs.
enum run_shape {
  SORTED,            // both sorted
  A_REVERSED,        // a descending
  B_ENDS_SWAPPED,    // b sorted but its first and last keys swapped
  RANDOM,            // both unsorted
  FEW_RANDOM,        // unsorted, four distinct keys
  FEW_SORTED,        // sorted, four distinct keys (many ties)
  A_PAIR_SWAPPED,    // a sorted but one adjacent pair swapped
  B_PAIR_SWAPPED,    // b likewise
  A_SPAN_REVERSED,   // a sorted but a span of 2 to 200 keys reversed (walks miss around it)
  B_SPAN_REVERSED,   // b likewise
  A_FEW_B_SWAPPED,   // a holds 0 to 3 keys (none: no needles), b the rest, one adjacent pair swapped
  B_FEW_A_REVERSED,  // b holds 0 to 3 keys, a the rest, descending
  RUN_SHAPES
};

// Two runs for an input of n + 1 keys in `shape`: a holds ceil(n / 2) keys and b n / 2 + 1, or,
// in the uneven shapes, one of them 0 to 3 keys and the other the rest.
template <typename key_t>
void two_runs(std::mt19937_64& rng, size_t n, int shape, std::vector<key_t>& a, std::vector<key_t>& b) {
  constexpr size_t FEW_KEYS = 4;  // the uneven shapes' short run holds fewer
  const size_t short_keys = std::min<size_t>(rng() % FEW_KEYS, n + 1);
  const size_t a_keys = shape == A_FEW_B_SWAPPED    ? short_keys
                        : shape == B_FEW_A_REVERSED ? n + 1 - short_keys
                                                    : n / 2 + (n & 1);
  a.assign(a_keys, key_t());
  b.assign(n + 1 - a_keys, key_t());
  const bool few = shape == FEW_RANDOM || shape == FEW_SORTED;
  for (auto& x : a) x = (key_t)(few ? rng() % 4 : rng());
  for (auto& x : b) x = (key_t)(few ? rng() % 4 : rng());
  if (shape != RANDOM && shape != FEW_RANDOM) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
  }
  if (shape == A_REVERSED || shape == B_FEW_A_REVERSED) std::reverse(a.begin(), a.end());
  if (shape == B_ENDS_SWAPPED && b.size() > 2) std::swap(b[0], b[b.size() - 1]);
  if (shape == A_PAIR_SWAPPED && a.size() > 2) {
    const size_t i = rng() % (a.size() - 1);
    std::swap(a[i], a[i + 1]);
  }
  if ((shape == B_PAIR_SWAPPED && b.size() > 2) || (shape == A_FEW_B_SWAPPED && b.size() >= 2)) {
    const size_t i = rng() % (b.size() - 1);
    std::swap(b[i], b[i + 1]);
  }
  std::vector<key_t>* spanned = shape == A_SPAN_REVERSED ? &a : shape == B_SPAN_REVERSED ? &b : nullptr;
  if (spanned != nullptr && spanned->size() > 2) {
    const size_t first = rng() % spanned->size();
    const size_t last = std::min(spanned->size(), first + 2 + rng() % 199);
    std::reverse(spanned->begin() + first, spanned->begin() + last);
  }
}

// Calls check(n, shape, a, b) with two_runs of every size around the tiles of `nv` and every shape.
template <typename key_t, typename check_t>
void for_each_two_runs(std::mt19937_64& rng, size_t nv, check_t check) {
  for (size_t n : sizes_around_tiles(nv, 0)) {
    for (int shape = 0; shape < RUN_SHAPES; ++shape) {
      std::vector<key_t> a, b;
      two_runs(rng, n, shape, a, b);
      check(n, shape, a, b);
    }
  }
}

// Whether `v` is sorted under `comp`.
template <typename key_t, typename comp_t>
bool sorted_under(const std::vector<key_t>& v, comp_t comp) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (comp(v[i], v[i - 1])) return false;
  }
  return true;
}

// Whether out[first, last) is a permutation of in[first, last): the same keys as a multiset, byte
// for byte, and, `with_ids` (where values ride), each of ids[first, last) a position of the range,
// once, beside its own key.
template <typename key_t>
bool permutes_range(const std::vector<key_t>& in, const std::vector<key_t>& out, const std::vector<unsigned>& ids,
                    size_t first, size_t last, bool with_ids) {
  if (with_ids) {
    std::vector<char> seen(last - first, 0);
    for (size_t i = first; i < last; ++i) {
      const unsigned id = ids[i];
      if (id < first || id >= last || seen[id - first] || memcmp(&in[id], &out[i], sizeof(key_t)) != 0) return false;
      seen[id - first] = 1;
    }
  }
  const auto bytes_less = [](const key_t& x, const key_t& y) { return memcmp(&x, &y, sizeof x) < 0; };
  std::vector<key_t> want(in.begin() + first, in.begin() + last), got(out.begin() + first, out.begin() + last);
  std::sort(want.begin(), want.end(), bytes_less);
  std::sort(got.begin(), got.end(), bytes_less);
  return memcmp(want.data(), got.data(), want.size() * sizeof(key_t)) == 0;
}

// Whether out[first, last) is std::stable_sort's answer for in[first, last) under `comp`, byte for
// byte, and, `with_ids`, ids[first, last) its order of input positions.
template <typename key_t, typename comp_t>
bool stable_sorts_range(const std::vector<key_t>& in, const std::vector<key_t>& out, const std::vector<unsigned>& ids,
                        size_t first, size_t last, bool with_ids, comp_t comp) {
  std::vector<unsigned> order(last - first);
  for (size_t i = 0; i < order.size(); ++i) order[i] = (unsigned)(first + i);
  std::stable_sort(order.begin(), order.end(), [&](unsigned x, unsigned y) { return comp(in[x], in[y]); });
  for (size_t i = 0; i < order.size(); ++i) {
    if (memcmp(&out[first + i], &in[order[i]], sizeof(key_t)) != 0) return false;
    if (with_ids && ids[first + i] != order[i]) return false;
  }
  return true;
}

// Whether `bits` names each unsorted input, where the build checks detection (CHECK_DETECTION):
// bit 1 for a, bit 2 for b.
inline bool detected(bool a_bad, bool b_bad, unsigned long long bits) {
  return !CHECK_DETECTION || ((!a_bad || (bits & 1) != 0) && (!b_bad || (bits & 2) != 0));
}

// The main of a two-run harness: seeded by the first argument, for every case of for_each_two_runs
// calls run(a, b, out, words, gen) (the next launch generation) and then passed(n, shape, a, b,
// out, bits) with the status bits it raised (false: the case failed and printed its FAIL line);
// prints the failure count and returns the exit status.
template <typename key_t, typename out_t, typename run_t, typename passed_t>
int check_two_runs(int argc, char** argv, size_t nv, run_t run, passed_t passed) {
  std::mt19937_64 rng = seeded(argc, argv);
  status_words status;
  int failures = 0;
  for_each_two_runs<key_t>(rng, nv, [&](size_t n, int shape, const std::vector<key_t>& a, const std::vector<key_t>& b) {
    std::vector<out_t> out;
    run(a, b, out, status.words, ++status.gen);
    if (!passed(n, shape, a, b, out, status.take())) ++failures;
  });
  printf("%s: %d failures\n", argv[0], failures);
  return failures != 0;
}
