//! Harness: load-balancing search kernels on adversarial scans and positions under ASan.
#include "cuda_emu.h"
#include "harness.h"
#include <cstdio>
#include <random>
#include KERNEL_SOURCE

struct lbs_result {
  std::vector<index_type> segments, ranks, segments_alone;
  std::vector<value_type> moved, expanded;
  unsigned long long bits_search, bits_alone, bits_expand, bits_move;
};

// The value interval expand replicates for segment s.
static value_type segment_value(size_t s) { return (value_type)(0x5eed0000ull + s * 7); }

static void partition(const index_type* scan, size_t nseg, size_t total, std::vector<size_type>& parts,
                      unsigned long long* words, unsigned gen) {
  const size_t NV = TP_NT * TP_VT;
  launch_partitions(total + nseg, NV, TP_PARTITION_NT, parts, [&](size_type num_partitions, size_type* pp, size_type lanes, unsigned* arrivals) {
    twophase_lbs_partition(scan, nseg, total, NV, num_partitions, pp, lanes, arrivals, words, words + 1, gen);
  });
}

static lbs_result run(const std::vector<size_t>& scan_in, size_t total, const std::vector<size_t>* gather,
                      const std::vector<size_t>* scatter, size_t in_len, size_t out_len, unsigned long long* words,
                      unsigned& gen) {
  const size_t NV = TP_NT * TP_VT;
  size_t nseg = scan_in.size();
  std::unique_ptr<index_type[]> scan(new index_type[nseg]);
  for (size_t i = 0; i < nseg; ++i) scan[i] = (index_type)scan_in[i];
  size_t num_tiles = (total + nseg + NV - 1) / NV;
  lbs_result r;
  std::unique_ptr<index_type[]> seg(new index_type[total]), rank(new index_type[total]);
  for (size_t i = 0; i < total; ++i) seg[i] = rank[i] = (index_type)~0ull;
  std::vector<size_type> parts;
  ++gen;
  partition(scan.get(), nseg, total, parts, words, gen);
  const size_type* pp = parts.data();
  launch(num_tiles, TP_NT, [&] { twophase_lbs_tile(scan.get(), nseg, total, pp, seg.get(), rank.get(), words, words + 1, gen); });
  r.segments.assign(seg.get(), seg.get() + total);
  r.ranks.assign(rank.get(), rank.get() + total);
  r.bits_search = words[0];
  words[0] = 0;
  // Segments alone (no ranks): the hand-out without them.
  for (size_t i = 0; i < total; ++i) seg[i] = (index_type)~0ull;
  ++gen;
  partition(scan.get(), nseg, total, parts, words, gen);
  pp = parts.data();
  launch(num_tiles, TP_NT, [&] { twophase_lbs_tile(scan.get(), nseg, total, pp, seg.get(), nullptr, words, words + 1, gen); });
  r.segments_alone.assign(seg.get(), seg.get() + total);
  r.bits_alone = words[0];
  words[0] = 0;
  // Expand.
  std::unique_ptr<value_type[]> values(new value_type[nseg]), expanded(new value_type[total]);
  for (size_t s = 0; s < nseg; ++s) values[s] = segment_value(s);
  for (size_t i = 0; i < total; ++i) expanded[i] = (value_type)~0ull;
  ++gen;
  partition(scan.get(), nseg, total, parts, words, gen);
  pp = parts.data();
  launch(num_tiles, TP_NT, [&] {
    twophase_interval_expand(scan.get(), nseg, total, pp, values.get(), expanded.get(), words, words + 1, gen);
  });
  r.expanded.assign(expanded.get(), expanded.get() + total);
  r.bits_expand = words[0];
  words[0] = 0;
  // Move.
  std::unique_ptr<index_type[]> g(gather ? new index_type[nseg] : nullptr), s(scatter ? new index_type[nseg] : nullptr);
  for (size_t i = 0; i < nseg; ++i) {
    if (gather) g[i] = (index_type)(*gather)[i];
    if (scatter) s[i] = (index_type)(*scatter)[i];
  }
  std::unique_ptr<value_type[]> in(new value_type[in_len]), out(new value_type[out_len]);
  for (size_t i = 0; i < in_len; ++i) memset(&in[i], (int)(i & 0x7f) + 1, sizeof(value_type));
  for (size_t i = 0; i < out_len; ++i) memset(&out[i], 0, sizeof(value_type));
  ++gen;
  partition(scan.get(), nseg, total, parts, words, gen);
  pp = parts.data();
  launch(num_tiles, TP_NT, [&] {
    twophase_interval_move(scan.get(), nseg, total, pp, g.get(), s.get(), in.get(), in_len, out.get(), out_len, words,
                           words + 1, gen);
  });
  r.moved.assign(out.get(), out.get() + out_len);
  r.bits_move = words[0];
  words[0] = 0;
  return r;
}

int main(int argc, char** argv) {
  std::mt19937_64 rng = seeded(argc, argv);
  const size_t NV = TP_NT * TP_VT;
  status_words status;
  unsigned long long* words = status.words;
  unsigned& gen = status.gen;
  int failures = 0;
  // Segment sizes: short with a third empty; mostly empty (tiles of many more starts than
  // items); long (segments spanning tiles, so that tiles start inside them).
  enum { SHORT, MOSTLY_EMPTY, LONG, SIZE_SHAPES };
  for (int trial = 0; trial < SIZE_SHAPES * (int)sizes_around_tiles(NV, 1).size(); ++trial) {
    const int shape = trial % SIZE_SHAPES;
    const size_t total = sizes_around_tiles(NV, 1)[trial / SIZE_SHAPES];
    // Valid scan with empty segments.
    std::vector<size_t> counts;
    size_t left = total;
    while (left > 0) {
      size_t c = shape == SHORT          ? (rng() % 3 == 0 ? 0 : rng() % 17)
                 : shape == MOSTLY_EMPTY ? (rng() % 8 == 0 ? rng() % 5 : 0)
                                         : (rng() % 4 == 0 ? 0 : rng() % (3 * NV));
      c = std::min<size_t>(left, c);
      counts.push_back(c);
      left -= c;
    }
    counts.insert(counts.begin(), 0);
    counts.push_back(0);
    std::vector<size_t> scan(counts.size());
    size_t acc = 0;
    for (size_t i = 0; i < counts.size(); ++i) { scan[i] = acc; acc += counts[i]; }
    for (int mode = 0; mode < 8; ++mode) {
      std::vector<size_t> sc = scan;
      const char* label = "valid";
      if (mode == 1) { sc[0] = 1 + total / 2; label = "nonzero start"; }
      if (mode == 2 && sc.size() > 3) { size_t at = 1 + rng() % (sc.size() - 2); sc[at] = sc[at + 1] + 1 + rng() % (total + 1); label = "decreasing"; }
      if (mode == 3) { sc.back() = total + 1 + rng() % 100; label = "past total"; }
      if (mode == 4) { sc.back() = (size_t)(index_type)~0ull - rng() % 3; label = "huge"; }
      if (mode == 5) { std::reverse(sc.begin() + 1, sc.end()); label = "reversed"; }
      if (mode == 6) { for (auto& x : sc) x = rng() % (total + 1); label = "random"; }
      // mode 7: valid scan, bad positions
      bool valid = true;
      if (sc[0] != 0) valid = false;
      for (size_t i = 1; i < sc.size(); ++i) if (sc[i] < sc[i - 1]) valid = false;
      if (sc.back() > total) valid = false;
      std::vector<size_t> gather(sc.size()), scatter(sc.size());
      for (size_t i = 0; i < sc.size(); ++i) { gather[i] = sc[i]; scatter[i] = sc[i]; }
      size_t victim = 0;
      bool bad_pos = false;
      if (mode == 7) {
        while (victim < counts.size() && counts[victim] == 0) ++victim;
        if (victim < counts.size()) {
          gather[victim] = (size_t)(index_type)~0ull - rng() % 3;
          scatter[victim] = total - counts[victim] + 1;
          bad_pos = true;
        }
        label = "bad positions";
      }
      lbs_result r = run(sc, total, &gather, &scatter, total, total, words, gen);
      bool ok = true;
      if (valid) {
        ok &= r.bits_search == 0 && r.bits_alone == 0 && r.bits_expand == 0;
        for (size_t item = 0; item < total; ++item) {
          size_t s = std::upper_bound(sc.begin(), sc.end(), item) - sc.begin() - 1;
          ok &= (size_t)r.segments[item] == s && (size_t)r.ranks[item] == item - sc[s];
          ok &= (size_t)r.segments_alone[item] == s && r.expanded[item] == segment_value(s);
        }
        if (bad_pos) ok &= (r.bits_move & 16) != 0; else ok &= r.bits_move == 0;
        if (!bad_pos) {
          // identity move: out == in
          for (size_t i = 0; i < total; ++i) { unsigned char want = (unsigned char)((i & 0x7f) + 1); ok &= ((unsigned char*)&r.moved[i])[0] == want; }
        }
      } else {
        ok &= (r.bits_search & 8) != 0;
        ok &= (r.bits_alone & 8) != 0 && (r.bits_expand & 8) != 0;
        ok &= (r.bits_move & 8) != 0;
        for (size_t i = 0; i < total; ++i) {
          bool untouched = r.segments[i] == (index_type)~0ull && r.ranks[i] == (index_type)~0ull;
          bool in_range = (size_t)r.segments[i] < sc.size() && (size_t)r.ranks[i] <= i;
          ok &= untouched || in_range;
          ok &= r.segments_alone[i] == (index_type)~0ull || (size_t)r.segments_alone[i] < sc.size();
          bool expanded_untouched = r.expanded[i] == (value_type)~0ull;
          ok &= expanded_untouched || (r.expanded[i] >= segment_value(0) && r.expanded[i] < segment_value(sc.size()) &&
                                       (r.expanded[i] - segment_value(0)) % 7 == 0);
        }
      }
      if (!ok) {
        ++failures;
        printf("FAIL shape=%d total=%zu %s bits=%llx/%llx/%llx/%llx\n", shape, total, label, r.bits_search,
               r.bits_alone, r.bits_expand, r.bits_move);
      }
    }
  }
  printf("%s: %d failures\n", argv[0], failures);
  return failures != 0;
}
