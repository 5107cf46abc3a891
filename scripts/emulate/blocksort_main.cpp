//! Harness: the mergesort's block sort (its register sorts and in-tile merge levels, with their walk checks) on adversarial inputs under ASan.
#include "cuda_emu.h"
#include "harness.h"
#include <cstdio>
#include <cstring>
#include KERNEL_SOURCE

// Each tile of keys (and their tile positions as values, when the program carries values) through
// twophase_blocksort; returns the status raised.
static void run_blocksort(const std::vector<key_type>& in, std::vector<key_type>& out, std::vector<unsigned>& ids,
                          status_words& status) {
  const size_t NV = TP_NT * TP_VT;
  const size_t count = in.size();
  std::unique_ptr<key_type[]> keys_in(new key_type[count]), keys_out(new key_type[count]);
  std::copy(in.begin(), in.end(), keys_in.get());
  std::unique_ptr<value_type[]> vals_in(new value_type[count]), vals_out(new value_type[count]);
  for (size_t i = 0; i < count; ++i) {
    unsigned id = (unsigned)i;
    memcpy(&vals_in[i], &id, sizeof(id) < sizeof(value_type) ? sizeof(id) : sizeof(value_type));
  }
  launch((count + NV - 1) / NV, TP_NT, [&] {
    twophase_blocksort(keys_in.get(), vals_in.get(), count, keys_out.get(), vals_out.get(), status.words,
                       /*guard=*/nullptr, /*image_out=*/0);
  });
  out.assign(keys_out.get(), keys_out.get() + count);
  ids.assign(count, 0);
  for (size_t i = 0; i < count; ++i) {
    memcpy(&ids[i], &vals_out[i], sizeof(unsigned) < sizeof(value_type) ? sizeof(unsigned) : sizeof(value_type));
  }
}

int main(int argc, char** argv) {
  std::mt19937_64 rng = seeded(argc, argv);
  const size_t NV = TP_NT * TP_VT;
  status_words status;
  int failures = 0;
  for (size_t n : {size_t(1), size_t(2), size_t(3), NV - 1, NV, NV + 1, 2 * NV + 5}) {
    for (int shape = 0; shape < RUN_SHAPES; ++shape) {
      std::vector<key_type> a, b;
      two_runs(rng, n, shape, a, b);
      a.insert(a.end(), b.begin(), b.end());  // one input: a then b
      std::vector<key_type> out;
      std::vector<unsigned> ids;
      run_blocksort(a, out, ids, status);
      const unsigned long long bits = status.take();
      bool ok = true;
      for (size_t t = 0; t * NV < a.size(); ++t) {
        const size_t first = t * NV, last = std::min(a.size(), first + NV);
        // A permutation of the tile; under a strict weak order, std::stable_sort's answer.
        ok &= permutes_range(a, out, ids, first, last, TP_HAS_VALUES);
        if (COMPARATOR_CONSISTENT) ok &= stable_sorts_range(a, out, ids, first, last, TP_HAS_VALUES, key_compare());
      }
      if (COMPARATOR_CONSISTENT) ok &= bits == 0;
      if (!ok) {
        ++failures;
        printf("FAIL n=%zu shape=%d bits=%llx\n", n, shape, bits);
      }
    }
  }
  printf("%s: %d failures\n", argv[0], failures);
  return failures != 0;
}
