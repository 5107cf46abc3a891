//! Harness: the whole mergesort (block sort, two-way, four-way and eight-way passes, as the host plans them) on random and duplicate-heavy keys under ASan, for trusted and checked comparators.
#include "cuda_emu.h"
#include "harness.h"
#include <cstdio>
#include <cstring>
#include KERNEL_SOURCE

// Every launch of one sort of `count` keys (values: each key's input position), as
// crates/gpu/src/mergesort/launch.rs makes them: the block sort, then the plan's two-way,
// four-way and eight-way passes, ping-ponging so that the last lands in `keys`, each pass with a
// fresh check generation. `force` 4 or 8 makes every pair (four-way) or triple (eight-way) of
// levels one such pass; 2 runs every level as a two-way pass. Returns the status bits the sort
// raised (none for a trusted order).
static unsigned long long run_sort(std::vector<key_type>& keys, std::vector<unsigned>& ids, int force) {
  const size_type count = keys.size();
  const size_type NV = TP_NT * TP_VT;
  std::unique_ptr<key_type[]> k0(new key_type[count]), k1(new key_type[count]);
  std::unique_ptr<value_type[]> v0(new value_type[count]), v1(new value_type[count]);
  for (size_type i = 0; i < count; ++i) {
    k0[i] = keys[i];
    unsigned id = (unsigned)i;
    memcpy(&v0[i], &id, sizeof(id) < sizeof(value_type) ? sizeof(id) : sizeof(value_type));
  }
  const size_type tiles = (count + NV - 1) / NV;
  int passes = 0;
  while (((size_type)1 << passes) < tiles) ++passes;
  const int left = force == 8 ? passes % 3 : passes;
  const int eight = force == 8 ? passes / 3 : 0;
  const int two = force == 2 ? left : left % 2, four = force == 2 ? 0 : left / 2;
  // Kernel passes after the block sort: an odd number starts in the second buffer.
  const int kernel_passes = two + four + eight;
  status_words status;
  key_type *src = k0.get(), *dst = k1.get();
  value_type *vsrc = v0.get(), *vdst = v1.get();
  const bool odd = kernel_passes % 2 == 1;
  launch((unsigned)tiles, TP_NT, [&] {
    twophase_blocksort(src, vsrc, count, odd ? dst : src, odd ? vdst : vsrc, status.words, nullptr, passes == 0);
  });
  if (odd) {
    std::swap(src, dst);
    std::swap(vsrc, vdst);
  }
  std::vector<size_type> partitions, quad_cuts, oct_cuts;
  // Two-way merge paths at every `spacing`-th output of a pass over runs of `run`.
  const auto partition = [&](size_type run, size_type spacing) {
    const size_type boundaries = (count + spacing - 1) / spacing + 1;
    partitions.assign(boundaries, (size_type)0xabababababull);
    const unsigned lanes = next_partition_lanes();
    const unsigned blocks = (unsigned)((boundaries * lanes + TP_PARTITION_NT - 1) / TP_PARTITION_NT);
    launch(blocks, TP_PARTITION_NT, [&] {
      twophase_mergesort_partition(src, count, run, spacing, boundaries, (int)lanes, partitions.data(),
                                   &g_partition_arrivals, status.words, nullptr, status.words + 1, status.gen);
    });
    return boundaries;
  };
  const auto quad_partition = [&](size_type run, size_type spacing) {
    const size_type cuts = partition(run, spacing);
    quad_cuts.assign(3 * cuts, (size_type)0xcdcdcdcdcdull);
    const unsigned lanes = next_partition_lanes();
    const unsigned blocks = (unsigned)((cuts * lanes + TP_PARTITION_NT - 1) / TP_PARTITION_NT);
    launch(blocks, TP_PARTITION_NT, [&] {
      twophase_mergesort_quad_partition(src, count, run, partitions.data(), spacing, cuts, (int)lanes, quad_cuts.data(),
                                        &g_partition_arrivals, status.words, nullptr, status.words + 1,
                                        status.words + 2, status.gen);
    });
    return cuts;
  };
  const auto swap_buffers = [&] {
    std::swap(src, dst);
    std::swap(vsrc, vdst);
  };
  // A pass's checks: a generation no earlier pass had (never 0), as InputCheck::args gives.
  const auto next_generation = [&] { status.gen = status.gen + 1 == 0 ? 1 : status.gen + 1; };
  // A pass's tile launches: one from tile 0, but the last pass (which the sort across GPUs
  // splits by output range) as two, its upper tiles first, each from its first tile.
  const auto launch_tiles = [&](size_type tiles, unsigned threads, bool last, auto tile_launch) {
    const size_type split = last ? tiles / 3 : 0;
    if (split > 0) launch((unsigned)(tiles - split), threads, [&] { tile_launch(split); });
    launch((unsigned)(split > 0 ? split : tiles), threads, [&] { tile_launch((size_type)0); });
  };
  int done = 0;
  // Two-way passes whose tile blocks search their own boundaries (all but every third, and never
  // the last: the library gives a checked order's small sorts such passes wherever another two-way
  // pass follows, a trusted order's everywhere), so that chains of them, and a pass with a
  // partition kernel after one, both run. Under a checked order each such pass records its tiles'
  // boundaries in one of two alternating halves, and the pass after checks them.
  std::vector<unsigned> records[2];
  const unsigned* prior_records = nullptr;
  for (int pass = 0; pass < two; ++pass, ++done) {
    const size_type run = NV << done;
    next_generation();
    const size_type tiles = (count + TP_PASS_NT * TP_VT - 1) / (TP_PASS_NT * TP_VT);
    const bool own = pass % 3 != 2 && pass + 1 < two;
    if (!own) partition(run, TP_PASS_NT * TP_VT);
    std::vector<unsigned>& ends = records[pass % 2];
    ends.assign(2 * tiles + 2, 0x5a5a5a5au);
    unsigned* recorded = own && CHECK_ORDER ? ends.data() : nullptr;
    const bool last = done + 1 == passes;
    // The tile kernel with the record paths where records are written or read, as the library.
    const auto tile_kernel = recorded != nullptr || prior_records != nullptr ? twophase_mergesort_tile_recorded
                                                                               : twophase_mergesort_tile;
    launch_tiles(tiles, TP_PASS_NT, last, [&](size_type first) {
      tile_kernel(src, count, run, own ? nullptr : partitions.data(), dst, vsrc, vdst, status.words, nullptr,
                  status.words + 1, status.gen, last, first, recorded, prior_records);
    });
    prior_records = recorded;
    swap_buffers();
  }
  for (int pass = 0; pass < four; ++pass, done += 2) {
    const size_type run = NV << done;
    next_generation();
    quad_partition(run, TP_QUAD_NT * TP_VT);
    const bool last = done + 2 == passes;
    launch_tiles((count + TP_QUAD_NT * TP_VT - 1) / (TP_QUAD_NT * TP_VT), TP_QUAD_NT, last, [&](size_type first) {
      twophase_mergesort_quad_tile(src, count, run, quad_cuts.data(), dst, vsrc, vdst, status.words, nullptr,
                                   status.words + 2, status.gen, last, first);
    });
    swap_buffers();
  }
  for (int pass = 0; pass < eight; ++pass, done += 3) {
    const size_type run = NV << done;
    const size_type spacing = TP_OCT_NT * TP_VT;
    next_generation();
    const size_type cuts = quad_partition(run, spacing);
    oct_cuts.assign(8 * cuts, (size_type)0xefefefefefull);
    const unsigned lanes = next_partition_lanes();
    const unsigned blocks = (unsigned)((cuts * lanes + TP_PARTITION_NT - 1) / TP_PARTITION_NT);
    launch(blocks, TP_PARTITION_NT, [&] {
      twophase_mergesort_oct_partition(src, count, run, quad_cuts.data(), spacing, cuts, (int)lanes, oct_cuts.data(),
                                       nullptr);
    });
    const bool last = done + 3 == passes;
    launch_tiles((count + spacing - 1) / spacing, TP_OCT_NT, last, [&](size_type first) {
      twophase_mergesort_oct_tile(src, count, run, oct_cuts.data(), dst, vsrc, vdst, nullptr, last, first);
    });
    swap_buffers();
  }
  if (src != k0.get()) {
    fprintf(stderr, "the last pass did not land in the input buffer\n");
    abort();
  }
  const unsigned long long raised = status.take();
  if (!CHECK_ORDER && raised != 0) {
    fprintf(stderr, "a trusted order raised a status\n");
    abort();
  }
  ids.assign(count, 0);
  for (size_type i = 0; i < count; ++i) {
    keys[i] = k0[i];
    memcpy(&ids[i], &v0[i], sizeof(unsigned) < sizeof(value_type) ? sizeof(unsigned) : sizeof(value_type));
  }
  return raised;
}

int main(int argc, char** argv) {
  std::mt19937_64 rng = seeded(argc, argv);
  const size_t NV = TP_NT * TP_VT;
  int failures = 0;
  // Block-sort tiles 2..9 each side of their end (1..4 levels: an eight-way pass alone, or after
  // a two-way or four-way one), and 17 tiles (five levels: four-way then eight-way, or five
  // two-way passes).
  std::vector<size_t> sizes;
  for (size_t tiles : {2, 3, 5, 8, 9}) {
    sizes.push_back(tiles * NV - 1);
    sizes.push_back(tiles * NV + 1);
  }
  sizes.push_back(8 * NV);
  sizes.push_back(16 * NV + 7);
  for (size_t n : sizes) {
    // The eight-way passes are planned for trusted orders only.
    for (int force : CHECK_ORDER ? std::vector<int>{2, 4} : std::vector<int>{2, 4, 8}) {
      for (int distinct : {0, 3, 1000}) {
        std::vector<key_type> input(n);
        for (auto& k : input) {
          const unsigned long long r = rng();
          const unsigned long long bits = distinct ? r % distinct : r;
          memcpy(&k, &bits, sizeof(k) < sizeof(bits) ? sizeof(k) : sizeof(bits));
        }
        std::vector<key_type> keys(input);
        std::vector<unsigned> ids;
        const unsigned long long raised = run_sort(keys, ids, force);
        // A permutation; under a strict weak order, std's stable sort and no status raised.
        bool ok = permutes_range(input, keys, ids, 0, n, TP_HAS_VALUES);
        if (COMPARATOR_CONSISTENT) ok &= raised == 0 && stable_sorts_range(input, keys, ids, 0, n, TP_HAS_VALUES, key_compare());
        if (!ok) {
          ++failures;
          printf("FAIL n=%zu force=%d distinct=%d\n", n, force, distinct);
        }
      }
    }
  }
  printf("%s: %d failures\n", argv[0], failures);
  return failures != 0;
}
