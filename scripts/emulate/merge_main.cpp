//! Harness: two-phase merge kernels on adversarial inputs under ASan.
#include "cuda_emu.h"
#include "harness.h"
#include <algorithm>
#include <cstdio>
#include <random>
#include KERNEL_SOURCE

static std::vector<unsigned> g_out_vals;
static void run_merge(const std::vector<key_type>& a, const std::vector<key_type>& b,
                                    std::vector<key_type>& out, unsigned long long* words, unsigned gen) {
  const size_t NV = TP_NT * TP_VT;
  size_t count = a.size() + b.size();
  std::unique_ptr<key_type[]> ap = exact_copy(a), bp = exact_copy(b), o(new key_type[count]);
  for (size_t i = 0; i < count; ++i) o[i] = (key_type)0xDEADBEEFu;
#if TP_HAS_VALUES
  std::unique_ptr<value_type[]> av(new value_type[a.size()]), bv(new value_type[b.size()]), ov(new value_type[count]);
  for (size_t i = 0; i < a.size(); ++i) { unsigned t = (unsigned)i; memcpy(&av[i], &t, 4); }
  for (size_t i = 0; i < b.size(); ++i) { unsigned t = (unsigned)(a.size() + i); memcpy(&bv[i], &t, 4); }
  for (size_t i = 0; i < count; ++i) { unsigned t = 0xFFFFFFFFu; memcpy(&ov[i], &t, 4); }
  value_type *avp = av.get(), *bvp = bv.get(), *ovp = ov.get();
#else
  value_type *avp = nullptr, *bvp = nullptr, *ovp = nullptr;
#endif
  if (count > 0) {
    std::vector<size_type> partitions;
    const partition_grid grid =
        launch_partitions(count, NV, TP_PARTITION_NT, partitions, [&](size_type num_partitions, size_type* pp, size_type lanes, unsigned* arrivals) {
          twophase_merge_partition(ap.get(), a.size(), bp.get(), b.size(), NV, num_partitions, pp, lanes,
                                   arrivals, words, words + 1, gen);
        });
    launch(grid.num_partitions - 1, TP_NT, [&] {
      twophase_merge_tile(ap.get(), a.size(), bp.get(), b.size(), partitions.data(), o.get(), avp, bvp, ovp, words,
                          words + 1, gen);
    });
  }
  out.assign(o.get(), o.get() + count);
  g_out_vals.assign(count, 0);
#if TP_HAS_VALUES
  for (size_t i = 0; i < count; ++i) memcpy(&g_out_vals[i], &ov[i], 4);
#endif
}

// The strided samples of a cut across devices: every step-th key from `first`, side by side,
// for a few spans (first sample only, a tight stride, a stride past a block of threads).
static bool gather_matches() {
  std::vector<key_type> keys(5000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = (key_type)(i * 2654435761u);
  const size_type spans[][3] = {{0, 1, 1}, {7, 3, 1000}, {0, 17, 295}, {4999, 1, 1}, {1, 1, 4999}};
  bool ok = true;
  for (const auto& span : spans) {
    const size_type first = span[0], step = span[1], count = span[2];
    std::unique_ptr<key_type[]> in = exact_copy(keys), out(new key_type[count]);
    const unsigned blocks = (unsigned)((count + TP_PARTITION_NT - 1) / TP_PARTITION_NT);
    launch(blocks, TP_PARTITION_NT, [&] { twophase_merge_gather(in.get(), first, step, count, out.get()); });
    bool span_ok = true;
    for (size_type j = 0; j < count; ++j) span_ok &= memcmp(&out[j], &keys[first + j * step], sizeof(key_type)) == 0;
    if (!span_ok) printf("FAIL gather first=%llu step=%llu count=%llu\n", first, step, count);
    ok &= span_ok;
  }
  return ok;
}

int main(int argc, char** argv) {
  if (!gather_matches()) return 1;
  auto passed = [](size_t n, int mode, const std::vector<key_type>& a, const std::vector<key_type>& b,
                   const std::vector<key_type>& out, unsigned long long bits) {
    std::vector<key_type> all(a);
    all.insert(all.end(), b.begin(), b.end());
    std::vector<key_type> got(out);
    std::sort(all.begin(), all.end());
    std::sort(got.begin(), got.end());
    bool ok = all == got;
#if TP_HAS_VALUES
    {  // values: a permutation of the source positions, each paired with its own key
      std::vector<unsigned> v(g_out_vals);
      for (size_t i = 0; i < out.size(); ++i) {
        unsigned s = v[i];
        key_type k = s < a.size() ? a[s] : (s - a.size() < b.size() ? b[s - a.size()] : key_type());
        if (s >= a.size() + b.size() || memcmp(&k, &out[i], sizeof(key_type)) != 0) { ok = false; break; }
      }
      std::sort(v.begin(), v.end());
      for (size_t i = 0; i < v.size(); ++i) ok &= v[i] == i;
    }
#endif
    bool a_bad = !sorted_under(a, key_compare()), b_bad = !sorted_under(b, key_compare());
    ok &= detected(a_bad, b_bad, bits);
    if (!a_bad && !b_bad && COMPARATOR_CONSISTENT) {
      std::vector<key_type> want;
      std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(want), key_compare());
      ok &= bits == 0 && want == out;
    }
    if (!ok) printf("FAIL n=%zu mode=%d bits=%llx a_bad=%d b_bad=%d\n", n, mode, bits, a_bad, b_bad);
    return ok;
  };
  return check_two_runs<key_type, key_type>(argc, argv, TP_NT * TP_VT, run_merge, passed);
}
