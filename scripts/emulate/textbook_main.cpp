//! Harness: textbook merge kernels (partition launch, then basic, tiled or circular) on adversarial inputs under ASan.
#include "cuda_emu.h"
#include "harness.h"
#include <cstdio>
#include <map>
#include <random>
#include KERNEL_SOURCE

using namespace textbook;

int main(int argc, char** argv) {
  std::mt19937_64 rng = seeded(argc, argv);
  unsigned long long words[3] = {0, 0, 0};
  unsigned gen = 0;
  int failures = 0;
  // Each side of a tile's and of a block's end, and last pieces that two or three threads share
  // (VT + 1, TILE + 2 * VT + 1: neighbours whose common co-rank a second search could answer
  // differently).
  size_t sizes[] = {1, 2, 3, VT + 1, TILE - 1, TILE, TILE + 1, TILE + 2 * VT + 1, (size_t)BLOCK_OUTPUTS - 1,
                    (size_t)BLOCK_OUTPUTS, (size_t)BLOCK_OUTPUTS + 1, 3 * (size_t)BLOCK_OUTPUTS + 7};
  for (size_t n : sizes) {
    for (int mode = 0; mode < 5; ++mode) {
      // 0 sorted, 1 a reversed, 2 b swapped ends, 3 both random, 4 few distinct random
      size_t split = rng() % (n + 1);
      std::vector<key_type> av(split), bv(n - split);
      for (auto& x : av) x = (key_type)(mode == 4 ? rng() % 4 : rng());
      for (auto& x : bv) x = (key_type)(mode == 4 ? rng() % 4 : rng());
      if (mode <= 2) { std::sort(av.begin(), av.end()); std::sort(bv.begin(), bv.end()); if (COMPARATOR_CONSISTENT) { std::sort(av.begin(), av.end(), key_compare()); std::sort(bv.begin(), bv.end(), key_compare()); } }
      if (mode == 1) std::reverse(av.begin(), av.end());
      if (mode == 2 && bv.size() > 2) std::swap(bv[0], bv.back());
      for (int variant = 0; variant < 3; ++variant) {
        std::unique_ptr<key_type[]> a(new key_type[av.size()]), b(new key_type[bv.size()]), out(new key_type[n]);
        std::unique_ptr<value_type[]> avals(new value_type[av.size()]), bvals(new value_type[bv.size()]), ovals(new value_type[n]);
        std::copy(av.begin(), av.end(), a.get());
        std::copy(bv.begin(), bv.end(), b.get());
        for (size_t i = 0; i < av.size(); ++i) memcpy(&avals[i], &i, std::min(sizeof(value_type), sizeof(size_t)));
        for (size_t i = 0; i < bv.size(); ++i) { size_t v = i | (1ull << 30); memcpy(&bvals[i], &v, std::min(sizeof(value_type), sizeof(size_t))); }
        for (size_t i = 0; i < n; ++i) { out[i] = (key_type)0xDEADBEEF; memset(&ovals[i], 0xee, sizeof(value_type)); }
        ++gen;
        // The block cuts: one partition launch at the kernel's block spacing (the host's
        // launch_phases), then one block per cut.
        const size_type per_block = variant == 0 ? (size_type)TILE : BLOCK_OUTPUTS;
        auto* ap = a.get(); auto* bp = b.get(); auto* op = out.get(); auto* avp = avals.get(); auto* bvp = bvals.get(); auto* ovp = ovals.get();
        size_t ac = av.size(), bc = bv.size();
        std::vector<size_type> partitions;
        const partition_grid grid = launch_partitions(
            n, per_block, TP_PARTITION_NT, partitions, [&](size_type num_partitions, size_type* pp, size_type lanes, unsigned* arrivals) {
              twophase_textbook_partition(ap, ac, bp, bc, per_block, num_partitions, pp, lanes, arrivals, words, words + 1, gen);
            });
        const size_type* pp = partitions.data();
        launch(grid.num_partitions - 1, NT, [&] {
          if (variant == 0) twophase_merge_basic(ap, ac, bp, bc, pp, op, avp, bvp, ovp, words, words + 1, gen);
          if (variant == 1) twophase_merge_tiled(ap, ac, bp, bc, pp, op, avp, bvp, ovp, words, words + 1, gen);
          if (variant == 2) twophase_merge_circular(ap, ac, bp, bc, pp, op, avp, bvp, ovp, words, words + 1, gen);
        });
        unsigned long long bits = words[0];
        words[0] = 0;
        // Permutation of (key, value) pairs.
        std::map<std::pair<unsigned long long, unsigned long long>, long> ms;
        auto val = [](const value_type& v) { unsigned long long x = 0; memcpy(&x, &v, std::min(sizeof(value_type), sizeof(x))); return x; };
        for (size_t i = 0; i < ac; ++i) ms[{(unsigned long long)a[i], TP_HAS_VALUES ? val(avals[i]) : 0}]++;
        for (size_t i = 0; i < bc; ++i) ms[{(unsigned long long)b[i], TP_HAS_VALUES ? val(bvals[i]) : 0}]++;
        for (size_t i = 0; i < n; ++i) ms[{(unsigned long long)out[i], TP_HAS_VALUES ? val(ovals[i]) : 0}]--;
        bool perm = true;
        for (auto& [k, c] : ms) perm &= c == 0;
        auto sorted = [](const std::vector<key_type>& v) {
          for (size_t i = 1; i < v.size(); ++i) if (key_compare()(v[i], v[i - 1])) return false;
          return true;
        };
        bool a_bad = !sorted(av), b_bad = !sorted(bv);
        bool ok = perm;
        // Detection, where the comparator is a strict weak order (CHECK_DETECTION): an unsorted
        // input is named, or the comparator's status raised for it.
        if (CHECK_DETECTION && (a_bad || b_bad)) ok &= bits != 0;
        if (CHECK_DETECTION && a_bad && !(bits & 4)) ok &= (bits & 1) != 0;
        if (CHECK_DETECTION && b_bad && !(bits & 4)) ok &= (bits & 2) != 0;
        if (!a_bad && !b_bad && COMPARATOR_CONSISTENT) {
          ok &= bits == 0;
          std::vector<key_type> want(n);
          std::merge(av.begin(), av.end(), bv.begin(), bv.end(), want.begin(), key_compare());
          for (size_t i = 0; i < n; ++i) ok &= want[i] == out[i];
        }
        if (!ok) { ++failures; printf("FAIL n=%zu mode=%d variant=%d bits=%llx perm=%d a_bad=%d b_bad=%d\n", n, mode, variant, bits, perm, a_bad, b_bad); }
      }
    }
  }
  printf("%s: %d failures\n", argv[0], failures);
  return failures != 0;
}
