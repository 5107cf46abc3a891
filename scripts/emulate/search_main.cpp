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
  // Exact-size copies so ASan sees reads past the ends.
  std::unique_ptr<key_type[]> n = exact_copy(needles), h = exact_copy(haystack);
  std::unique_ptr<index_type[]> o(new index_type[needles.size()]);
  for (size_t i = 0; i < needles.size(); ++i) o[i] = (index_type)0xDEADBEEFu;
  std::vector<size_type> partitions;
  const partition_grid grid =
      launch_partitions(count, NV, TP_PARTITION_NT, partitions, [&](size_type num_partitions, size_type* pp, size_type lanes, unsigned* arrivals) {
        twophase_search_partition(n.get(), needles.size(), h.get(), haystack.size(), NV, num_partitions, pp, lanes,
                                  arrivals, words,
                                  words + 1, gen);
      });
  launch(grid.num_partitions - 1, TP_NT, [&] {
    twophase_search_tile(n.get(), needles.size(), h.get(), haystack.size(), partitions.data(), o.get(), words,
                         words + 1, gen);
  });
  out.assign(o.get(), o.get() + needles.size());
}

int main(int argc, char** argv) {
  // a: the needles, b: the haystack.
  auto passed = [](size_t n, int mode, const std::vector<key_type>& a, const std::vector<key_type>& b,
                   const std::vector<index_type>& out, unsigned long long bits) {
    bool in_range = true;
    for (auto r : out) in_range &= (size_t)r <= b.size();
    bool a_bad = !sorted_under(a, key_compare()), b_bad = !sorted_under(b, key_compare());
    bool ok = in_range && detected(a_bad, b_bad, bits);
    if (!a_bad && !b_bad && COMPARATOR_CONSISTENT) {
      ok &= bits == 0;
      for (size_t i = 0; i < a.size(); ++i) {
        size_t want = TP_UPPER ? std::upper_bound(b.begin(), b.end(), a[i], key_compare()) - b.begin()
                               : std::lower_bound(b.begin(), b.end(), a[i], key_compare()) - b.begin();
        if (want != (size_t)out[i]) { ok = false; break; }
      }
    }
    if (!ok) printf("FAIL n=%zu mode=%d bits=%llx in_range=%d a_bad=%d b_bad=%d\n", n, mode, bits, in_range, a_bad, b_bad);
    return ok;
  };
  return check_two_runs<key_type, index_type>(argc, argv, TP_NT * TP_VT, run_search, passed);
}
