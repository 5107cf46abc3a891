//! Harness: sorted search kernels on adversarial inputs under ASan.
#include "cuda_emu.h"
#include "harness.h"
#include <cstdio>
#include <random>
#include <cassert>
#include KERNEL_SOURCE

static void run_search(const std::vector<key_type>& needles, const std::vector<key_type>& haystack,
                                     std::vector<index_type>& out, unsigned long long* words, unsigned gen) {
  const size_t NV = TP_NT * TP_VT;
  size_t count = needles.size() + haystack.size();
  const partition_grid grid = partition_grid_for(count, NV, TP_PARTITION_NT);
  std::vector<size_type> partitions(grid.num_partitions, 0xabababababull);
  // Exact-size copies so ASan sees reads past the ends.
  std::unique_ptr<key_type[]> n(new key_type[needles.size()]), h(new key_type[haystack.size()]);
  std::copy(needles.begin(), needles.end(), n.get());
  std::copy(haystack.begin(), haystack.end(), h.get());
  std::unique_ptr<index_type[]> o(new index_type[needles.size()]);
  for (size_t i = 0; i < needles.size(); ++i) o[i] = (index_type)0xDEADBEEFu;
  size_type* pp = partitions.data();
  launch(grid.blocks, TP_PARTITION_NT, [&] {
    twophase_search_partition(n.get(), needles.size(), h.get(), haystack.size(), NV, grid.num_partitions, pp, words, words + 1, gen);
  });
  launch(grid.num_partitions - 1, TP_NT, [&] {
    twophase_search_tile(n.get(), needles.size(), h.get(), haystack.size(), pp, o.get(), words, words + 1, gen);
  });
  out.assign(o.get(), o.get() + needles.size());
}

int main(int argc, char** argv) {
  std::mt19937_64 rng = seeded(argc, argv);
  const size_t NV = TP_NT * TP_VT;
  status_words status;
  int failures = 0;
  // a: the needles, b: the haystack.
  for_each_two_runs<key_type>(rng, NV, [&](size_t n, int mode, const std::vector<key_type>& a,
                                            const std::vector<key_type>& b) {
    std::vector<index_type> out;
    run_search(a, b, out, status.words, ++status.gen);
    const unsigned long long bits = status.take();
    bool in_range = true;
    for (auto r : out) in_range &= (size_t)r <= b.size();
    bool a_bad = !sorted_under(a, key_compare()), b_bad = !sorted_under(b, key_compare());
    bool ok = in_range;
    if (CHECK_DETECTION && a_bad) ok &= (bits & 1) != 0;
    if (CHECK_DETECTION && b_bad) ok &= (bits & 2) != 0;
    if (!a_bad && !b_bad && COMPARATOR_CONSISTENT) {
      ok &= bits == 0;
      for (size_t i = 0; i < a.size(); ++i) {
        size_t want = TP_UPPER ? std::upper_bound(b.begin(), b.end(), a[i], key_compare()) - b.begin()
                               : std::lower_bound(b.begin(), b.end(), a[i], key_compare()) - b.begin();
        if (want != (size_t)out[i]) { ok = false; break; }
      }
    }
    if (!ok) {
      ++failures;
      printf("FAIL n=%zu mode=%d bits=%llx in_range=%d a_bad=%d b_bad=%d\n", n, mode, bits, in_range, a_bad, b_bad);
    }
  });
  printf("%s: %d failures\n", argv[0], failures);
  return failures != 0;
}
