//! merge_lab: time the merge partition + tile kernels of several cubins on one input, interleaved.
// usage: merge_lab <log2 total> <mode: 0 u32 keys, 1 u32 keys + u32 values, 2 u64 keys> <reps> <rounds> abi:name:cubin...  (abi: b = base, c = checked)
#include <cuda.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
constexpr unsigned POISON = 0xdeadbeefu;  // output poison: a kernel that skips an output is caught
constexpr int PARTITION_THREADS = 128;    // TP_PARTITION_NT of the generated programs
constexpr int WARMUP_LAUNCHES = 20;       // per variant, before any timing
constexpr int ROUND_WARMUP_LAUNCHES = 5;  // per variant and round, untimed
constexpr unsigned long long SEED = 12345;
constexpr size_t MIN_TILE = 1024;         // no shipped merge tile is smaller: bounds the partitions
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s; cuGetErrorString(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1); } } while (0)
struct Variant { bool checked; std::string name; CUmodule mod; CUfunction part, tile; int nt, vt, pnt; std::vector<float> ms; bool bad = false; };  // bad: wrong output, not timed
static int attr(CUfunction f, CUfunction_attribute a) { int v; CK(cuFuncGetAttribute(&v, a, f)); return v; }
template <typename K> int run(int argc, char** argv) {
  int lg = atoi(argv[1]); bool pairs = atoi(argv[2]) == 1; int reps = atoi(argv[3]); int rounds = atoi(argv[4]);
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  std::vector<Variant> vs;
  for (int i = 5; i < argc; ++i) {
    std::string s = argv[i]; size_t c1 = s.find(':'), c2 = s.find(':', c1 + 1);
    Variant v; v.checked = s[0] == 'c'; v.name = s.substr(c1 + 1, c2 - c1 - 1);
    CK(cuModuleLoad(&v.mod, s.substr(c2 + 1).c_str()));
    CK(cuModuleGetFunction(&v.part, v.mod, "twophase_merge_partition")); CK(cuModuleGetFunction(&v.tile, v.mod, "twophase_merge_tile"));
    // NT / VT from the name (..._ntX_vtY.cu-sm90.cubin)
    const char* p = strstr(argv[i], "_nt"); v.nt = atoi(p + 3); v.vt = atoi(strstr(p, "_vt") + 3); v.pnt = PARTITION_THREADS;
    printf("%-10s regs tile %d part %d nt %d vt %d\n", v.name.c_str(), attr(v.tile, CU_FUNC_ATTRIBUTE_NUM_REGS), attr(v.part, CU_FUNC_ATTRIBUTE_NUM_REGS), v.nt, v.vt);
    vs.push_back(v);
  }
  size_t total = size_t(1) << lg, na = total / 2, nb = total - na;
  std::mt19937_64 rng(SEED);
  std::vector<K> a(na), b(nb); std::vector<unsigned> va(na), vb(nb);
  for (auto& x : a) x = rng();
  for (auto& x : b) x = rng();
  std::sort(a.begin(), a.end()); std::sort(b.begin(), b.end());
  for (size_t i = 0; i < na; ++i) va[i] = i;  // values name their source: A positions, then B's
  for (size_t i = 0; i < nb; ++i) vb[i] = 0x80000000u + i;
  std::vector<K> ref(total); std::vector<unsigned> refv(total);
  { size_t i = 0, j = 0, k = 0; while (k < total) { bool ta = j >= nb || (i < na && !(b[j] < a[i])); if (ta) { ref[k] = a[i]; refv[k++] = va[i++]; } else { ref[k] = b[j]; refv[k++] = vb[j++]; } } }
  CUdeviceptr da, db, dva, dvb, dout, dvout, dpart, dwords;
  CK(cuMemAlloc(&da, na * sizeof(K))); CK(cuMemAlloc(&db, nb * sizeof(K))); CK(cuMemAlloc(&dva, na * 4)); CK(cuMemAlloc(&dvb, nb * 4));
  CK(cuMemAlloc(&dout, total * sizeof(K))); CK(cuMemAlloc(&dvout, total * 4)); CK(cuMemAlloc(&dpart, (total / MIN_TILE + 2) * 8)); CK(cuMemAlloc(&dwords, 64));
  CK(cuMemcpyHtoD(da, a.data(), na * sizeof(K))); CK(cuMemcpyHtoD(db, b.data(), nb * sizeof(K))); CK(cuMemcpyHtoD(dva, va.data(), na * 4)); CK(cuMemcpyHtoD(dvb, vb.data(), nb * 4));
  CK(cuMemsetD8(dwords, 0, 64));
  CK(cuCtxSynchronize());
  CUstream st; CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  unsigned generation = 0;
  auto launch = [&](Variant& v) {
    unsigned long long acount = na, bcount = nb, nv = (unsigned long long)v.nt * v.vt;
    unsigned long long tiles = (total + nv - 1) / nv, nparts = tiles + 1;
    CUdeviceptr status = dwords, repair = dwords + 8; generation = generation + 1;
    CUdeviceptr vA = pairs ? dva : 0, vB = pairs ? dvb : 0, vO = pairs ? dvout : 0;
    unsigned pblocks = v.checked ? (unsigned)((nparts - 1 + v.pnt - 2) / (v.pnt - 1)) : (unsigned)((nparts + v.pnt - 1) / v.pnt);
    void* pp[10] = {&da, &acount, &db, &bcount, &nv, &nparts, &dpart, &status, &repair, &generation};
    CK(cuLaunchKernel(v.part, pblocks, 1, 1, v.pnt, 1, 1, 0, st, pp, nullptr));
    void* tp[12] = {&da, &acount, &db, &bcount, &dpart, &dout, &vA, &vB, &vO, &status, &repair, &generation};
    CUlaunchConfig cfg = {}; CUlaunchAttribute at[1]; at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; at[0].value.programmaticStreamSerializationAllowed = 1;
    cfg.gridDimX = (unsigned)tiles; cfg.gridDimY = cfg.gridDimZ = 1; cfg.blockDimX = v.nt; cfg.blockDimY = cfg.blockDimZ = 1; cfg.hStream = st; cfg.attrs = at; cfg.numAttrs = 1;
    CK(cuLaunchKernelEx(&cfg, v.tile, tp, nullptr));
  };
  // correctness: poisoned output, then compare
  std::vector<K> got(total); std::vector<unsigned> gotv(total);
  bool any_wrong = false;
  for (auto& v : vs) {
    CK(cuMemsetD32Async(dout, POISON, total * sizeof(K) / 4, st)); CK(cuMemsetD32Async(dvout, POISON, total, st));
    launch(v); CK(cuStreamSynchronize(st));
    CK(cuMemcpyDtoH(got.data(), dout, total * sizeof(K))); if (pairs) CK(cuMemcpyDtoH(gotv.data(), dvout, total * 4));
    unsigned long long w[2]; CK(cuMemcpyDtoH(w, dwords, 16));
    bool ok = got == ref && (!pairs || gotv == refv) && w[0] == 0;
    printf("%-10s correct %s status %llu\n", v.name.c_str(), ok ? "yes" : "NO", w[0]);
    if (!ok) for (size_t k = 0; k < total; ++k) if (got[k] != ref[k] || (pairs && gotv[k] != refv[k])) {
      printf("first mismatch at %zu: key %llu want %llu, value %u want %u\n", k, (unsigned long long)got[k], (unsigned long long)ref[k], gotv[k], refv[k]); break; }
    if (!ok) { v.bad = true; any_wrong = true; }
  }
  // Only variants that merged correctly are timed: a wrong kernel's time means nothing.
  vs.erase(std::remove_if(vs.begin(), vs.end(), [](const Variant& v) { return v.bad; }), vs.end());
  for (auto& v : vs) for (int i = 0; i < WARMUP_LAUNCHES; ++i) launch(v);
  CK(cuStreamSynchronize(st));
  for (int r = 0; r < rounds; ++r)
    for (auto& v : vs) {
      for (int i = 0; i < ROUND_WARMUP_LAUNCHES; ++i) launch(v);
      for (int i = 0; i < reps; ++i) {
        CK(cuEventRecord(e0, st)); launch(v); CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1));
        float ms; CK(cuEventElapsedTime(&ms, e0, e1)); v.ms.push_back(ms);
      }
    }
  // copy rate for reference
  std::vector<float> cp;
  for (int i = 0; i < reps; ++i) { CK(cuEventRecord(e0, st)); CK(cuMemcpyDtoDAsync(dout, da, na * sizeof(K), st)); CK(cuMemcpyDtoDAsync(dout + na * sizeof(K), db, nb * sizeof(K), st)); CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1)); float ms; CK(cuEventElapsedTime(&ms, e0, e1)); cp.push_back(ms); }
  std::sort(cp.begin(), cp.end());
  double bytes = total * (sizeof(K) + (pairs ? 4.0 : 0.0)) * 2;
  printf("copy of the keys: median %.4f ms\n", cp[cp.size() / 2]);
  float base = 0;
  for (auto& v : vs) {
    std::sort(v.ms.begin(), v.ms.end()); float med = v.ms[v.ms.size() / 2];
    if (base == 0) base = med;
    printf("%-10s 2^%d %s median %.4f ms  p10 %.4f p90 %.4f  %.1f GB/s  %+.2f%% vs first\n", v.name.c_str(), lg, pairs ? "pairs" : "keys", med,
           v.ms[v.ms.size() / 10], v.ms[v.ms.size() * 9 / 10], bytes / (med * 1e-3) / 1e9, (med / base - 1) * 100);
  }
  return any_wrong ? 1 : 0;
}

int main(int argc, char** argv) { return atoi(argv[2]) == 2 ? run<unsigned long long>(argc, argv) : run<unsigned>(argc, argv); }
