// peers_bench.cu: single-GPU peer benchmark of cuCollections' cuco::static_map and BGHT's
// bght::bcht<uint32_t, uint32_t>, on the same key/value streams as gpuhash-bench
// (tools/bench/bench.h): key(i) = bench_mix32((uint32_t)(i ^ seed)), present i in [0, n),
// absent i in [n, 2n); value(i) = (uint32_t)(bench_mix64(i ^ seed ^ SALT) | 1) (odd, never 0).
//
// Build (bench/peers/build.sh, after fetching the two libraries as bench/peers/README.md says):
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-extended-lambda --expt-relaxed-constexpr
//        -include cccl3_compat.cuh -Icuco/include -Ibght/include peers_bench.cu -o peers-bench
#include <bght/bcht.hpp>
#include <cuco/static_map.cuh>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#ifndef CUCO_COMMIT
#define CUCO_COMMIT "dc0f9fc20c2a544e53099e640a681b347532391a"
#endif
#ifndef BGHT_COMMIT
#define BGHT_COMMIT "7584547fcba6e980e8c80beb1694e52310ade16c"
#endif

#define CK(call)                                                                           \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, \
                   __LINE__, cudaGetErrorString(e_));                                      \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

// ---------------------------------------------------------------- streams (gpuhash bench.h)
#define BENCH_SALT_VALUES 0x9e3779b97f4a7c15ull
__host__ __device__ inline uint32_t bench_mix32(uint32_t x)
{
  x = (x ^ (x >> 16)) * 0x45d9f3bu;
  x = (x ^ (x >> 16)) * 0x45d9f3bu;
  return x ^ (x >> 16);
}
__host__ __device__ inline uint64_t bench_mix64(uint64_t x)
{
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__host__ __device__ inline uint32_t key_of(uint64_t i, uint64_t seed)
{
  return bench_mix32((uint32_t)(i ^ seed));
}
__host__ __device__ inline uint32_t value_of(uint64_t i, uint64_t seed)
{
  return (uint32_t)((bench_mix64(i ^ seed ^ BENCH_SALT_VALUES) | 1) & 0xffffffffull);
}
// inverse of bench_mix32 (x ^= x >> 16 is its own inverse; multiply by the modular inverse)
static uint32_t unmix32(uint32_t y)
{
  uint32_t a = 0x45d9f3bu, inv = a;
  for (int k = 0; k < 5; ++k) inv *= 2u - a * inv;
  y = y ^ (y >> 16);
  y *= inv;
  y = y ^ (y >> 16);
  y *= inv;
  return y ^ (y >> 16);
}

__global__ void gen_kernel(uint32_t* present, uint32_t* absent, uint32_t* values, uint64_t n,
                           uint64_t seed)
{
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    present[i] = key_of(i, seed);
    absent[i]  = key_of(n + i, seed);
    values[i]  = value_of(i, seed);
  }
}
// counts out[i] != expect(i): expected value (expect_values) or the constant `miss`
__global__ void check_kernel(const uint32_t* out, const uint32_t* expect_values, uint32_t miss,
                             uint64_t n, unsigned long long* count)
{
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    uint32_t e = expect_values ? expect_values[i] : miss;
    local += (out[i] != e);
  }
  if (local) atomicAdd(count, local);
}
__global__ void check_bool_kernel(const bool* out, bool expect, uint64_t n,
                                  unsigned long long* count)
{
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    local += (out[i] != expect);
  if (local) atomicAdd(count, local);
}

// pairs read from the two separate arrays (gpuhash takes keys and values as separate arrays)
template <class Pair>
struct pair_at {
  const uint32_t* k;
  const uint32_t* v;
  __host__ __device__ Pair operator()(std::size_t i) const { return Pair{k[i], v[i]}; }
};

// ---------------------------------------------------------------- harness
struct Ctx {
  uint64_t n, seed;
  uint32_t *present, *absent, *values, *out;
  bool* bout;
  unsigned long long* dcount;
  int reps, warmup;
  FILE* json;
  std::string gpu;
  cudaEvent_t e0, e1;
};

static unsigned long long check(Ctx& c, const uint32_t* expect_values, uint32_t miss)
{
  CK(cudaMemset(c.dcount, 0, sizeof(unsigned long long)));
  check_kernel<<<1024, 256>>>(c.out, expect_values, miss, c.n, c.dcount);
  CK(cudaGetLastError());
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, c.dcount, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}
static unsigned long long check_bool(Ctx& c, bool expect)
{
  CK(cudaMemset(c.dcount, 0, sizeof(unsigned long long)));
  check_bool_kernel<<<1024, 256>>>(c.bout, expect, c.n, c.dcount);
  CK(cudaGetLastError());
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, c.dcount, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

// runs prep() untimed then op() timed with events on stream 0, warmup + reps times
template <class Prep, class Op>
static std::vector<float> timeit(Ctx& c, Prep prep, Op op)
{
  std::vector<float> ms;
  for (int r = 0; r < c.warmup + c.reps; ++r) {
    prep();
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(c.e0, 0));
    op();
    CK(cudaEventRecord(c.e1, 0));
    CK(cudaEventSynchronize(c.e1));
    CK(cudaGetLastError());
    float t = 0;
    CK(cudaEventElapsedTime(&t, c.e0, c.e1));
    if (r >= c.warmup) ms.push_back(t);
  }
  return ms;
}

static void report(Ctx& c, const char* table, const char* config, const char* commit, double alpha,
                   std::size_t capacity, const char* op, std::vector<float> ms,
                   unsigned long long mismatches, const char* note = "")
{
  std::sort(ms.begin(), ms.end());
  double med = ms.size() % 2 ? ms[ms.size() / 2]
                             : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  double real_load = (double)c.n / (double)capacity;
  double gops      = (double)c.n / (med * 1e-3) / 1e9;
  std::printf("%-18s %-22s alpha=%.2f load=%.4f cap=%-10zu %-14s median=%9.3f ms  min=%9.3f  "
              "max=%9.3f  %7.3f G/s  mismatches=%llu%s%s\n",
              table, config, alpha, real_load, capacity, op, med, ms.front(), ms.back(), gops,
              mismatches, note[0] ? "  " : "", note);
  std::fflush(stdout);
  if (c.json) {
    std::fprintf(c.json,
                 "{\"table\":\"%s\",\"config\":\"%s\",\"alpha\":%.4f,\"real_load\":%.6f,"
                 "\"capacity\":%zu,\"op\":\"%s\",\"n\":%llu,\"median_ms\":%.6f,\"min_ms\":%.6f,"
                 "\"max_ms\":%.6f,\"gops\":%.6f,\"mismatches\":%llu,\"reps\":%d,\"gpu\":\"%s\","
                 "\"commit\":\"%s\"%s%s%s}\n",
                 table, config, alpha, real_load, capacity, op, (unsigned long long)c.n, med,
                 ms.front(), ms.back(), gops, mismatches, c.reps, c.gpu.c_str(), commit,
                 note[0] ? ",\"note\":\"" : "", note, note[0] ? "\"" : "");
    std::fflush(c.json);
  }
}

// ---------------------------------------------------------------- cuco::static_map
template <class Probe>
using cuco_map_t = cuco::static_map<uint32_t,
                                    uint32_t,
                                    cuco::extent<std::size_t>,
                                    cuda::thread_scope_device,
                                    thrust::equal_to<uint32_t>,
                                    Probe,
                                    cuco::cuda_allocator<cuco::pair<uint32_t, uint32_t>>,
                                    cuco::storage<1>>;  // static_map's default window size 1

template <class Probe>
static void run_cuco(Ctx& c, const char* config, double alpha, uint32_t empty_key,
                     uint32_t erased_key)
{
  using map_t          = cuco_map_t<Probe>;
  const uint32_t EMPTY_VALUE = 0;  // values are odd
  std::size_t req      = (std::size_t)std::ceil((double)c.n / alpha);
  map_t map{req,
            cuco::empty_key<uint32_t>{empty_key},
            cuco::empty_value<uint32_t>{EMPTY_VALUE},
            cuco::erased_key<uint32_t>{erased_key}};
  CK(cudaDeviceSynchronize());
  const std::size_t cap = map.capacity();
  const char* T         = "cuco::static_map";
  auto pairs            = thrust::make_transform_iterator(
    thrust::make_counting_iterator<std::size_t>(0),
    pair_at<cuco::pair<uint32_t, uint32_t>>{c.present, c.values});
  auto noprep = [] {};

  // insert into a cleared table
  auto ms = timeit(
    c, [&] { map.clear(); }, [&] { map.insert_async(pairs, pairs + c.n); });
  std::size_t sz = map.size();
  report(c, T, config, CUCO_COMMIT, alpha, cap, "insert", ms,
         sz > c.n ? sz - c.n : c.n - sz);

  ms = timeit(c, noprep, [&] { map.find_async(c.present, c.present + c.n, c.out); });
  report(c, T, config, CUCO_COMMIT, alpha, cap, "find_present", ms, check(c, c.values, 0));

  ms = timeit(c, noprep, [&] { map.find_async(c.absent, c.absent + c.n, c.out); });
  report(c, T, config, CUCO_COMMIT, alpha, cap, "find_absent", ms, check(c, nullptr, EMPTY_VALUE));

  ms = timeit(c, noprep, [&] { map.contains_async(c.present, c.present + c.n, c.bout); });
  report(c, T, config, CUCO_COMMIT, alpha, cap, "contains_present", ms, check_bool(c, true));

  // erase all n keys of a filled table (refill untimed)
  ms = timeit(
    c,
    [&] {
      map.clear();
      map.insert_async(pairs, pairs + c.n);
    },
    [&] { map.erase_async(c.present, c.present + c.n); });
  sz = map.size();
  report(c, T, config, CUCO_COMMIT, alpha, cap, "erase", ms, sz);
}

// ---------------------------------------------------------------- BGHT bcht
static void run_bght(Ctx& c, double alpha, uint32_t empty_key)
{
  using table_t              = bght::bcht<uint32_t, uint32_t>;  // B = 16, 3 MurmurHash3_32
  const uint32_t EMPTY_VALUE = 0;
  std::size_t req            = (std::size_t)std::ceil((double)c.n / alpha);
  table_t t(req, empty_key, EMPTY_VALUE);
  CK(cudaDeviceSynchronize());
  const std::size_t cap = ((req + 15) / 16) * 16;  // bcht rounds up to a multiple of B
  const char* T         = "bght::bcht";
  const char* config    = "B16_3hash";
  auto pairs            = thrust::make_transform_iterator(
    thrust::make_counting_iterator<std::size_t>(0),
    pair_at<bght::pair<uint32_t, uint32_t>>{c.present, c.values});
  auto noprep = [] {};

  bool ok  = true;
  auto ms  = timeit(
    c, [&] { t.clear(); }, [&] { ok = t.insert(pairs, pairs + c.n) && ok; });
  std::size_t sz = t.size();
  report(c, T, config, BGHT_COMMIT, alpha, cap, "insert", ms, sz > c.n ? sz - c.n : c.n - sz,
         ok ? "" : "insert_reported_failure");

  ms = timeit(c, noprep, [&] { t.find(c.present, c.present + c.n, c.out); });
  report(c, T, config, BGHT_COMMIT, alpha, cap, "find_present", ms, check(c, c.values, 0));

  ms = timeit(c, noprep, [&] { t.find(c.absent, c.absent + c.n, c.out); });
  report(c, T, config, BGHT_COMMIT, alpha, cap, "find_absent", ms, check(c, nullptr, EMPTY_VALUE));
}

// ---------------------------------------------------------------- main
static bool has(const std::string& list, const char* name)
{
  return list == "all" || ("," + list + ",").find(std::string(",") + name + ",") != std::string::npos;
}

int main(int argc, char** argv)
{
  int log2n = 27, device = 0, reps = 5, warmup = 1;
  uint64_t seed           = 24301;  // gpuhash-bench's default seed
  std::string json_path   = "peers.jsonl";
  std::string configs     = "all";  // dh_cg4,dh_cg4_murmur,lp_cg1,lp_cg4,bght
  std::vector<double> alphas{0.5, 0.8, 0.9, 0.95};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next     = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--log2n") log2n = std::atoi(next());
    else if (a == "--json") json_path = next();
    else if (a == "--reps") reps = std::atoi(next());
    else if (a == "--warmup") warmup = std::atoi(next());
    else if (a == "--seed") seed = std::strtoull(next(), nullptr, 0);
    else if (a == "--device") device = std::atoi(next());
    else if (a == "--configs") configs = next();
    else if (a == "--alphas") {
      alphas.clear();
      std::string s = next();
      for (std::size_t p = 0; p < s.size();) {
        std::size_t q = s.find(',', p);
        if (q == std::string::npos) q = s.size();
        alphas.push_back(std::atof(s.substr(p, q - p).c_str()));
        p = q + 1;
      }
    } else {
      std::printf(
        "usage: %s [--log2n 27] [--json peers.jsonl] [--reps 5] [--warmup 1] [--seed 24301]\n"
        "          [--device 0] [--alphas 0.5,0.8,0.9,0.95] [--configs all|dh_cg4,dh_cg4_murmur,lp_cg1,lp_cg4,bght]\n"
        "  --json '' disables the JSON lines output\n",
        argv[0]);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (log2n < 1 || log2n > 30 || reps < 1 || warmup < 0) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  for (double al : alphas)
    if (!(al > 0 && al < 1)) {
      std::fprintf(stderr, "alpha must be in (0,1)\n");
      return 2;
    }

  Ctx c{};
  c.n = 1ull << log2n, c.seed = seed, c.reps = reps, c.warmup = warmup;
  CK(cudaSetDevice(device));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, device));
  c.gpu = prop.name;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  std::printf("GPU: %s (device %d, sm_%d%d, %d SMs, %.1f GiB), driver %d, runtime %d\n",
              prop.name, device, prop.major, prop.minor, prop.multiProcessorCount,
              prop.totalGlobalMem / 1073741824.0, drv, rt);
  std::printf("cuCollections commit %s, BGHT commit %s, CCCL %d\n", CUCO_COMMIT, BGHT_COMMIT,
              CCCL_VERSION);

  // sentinels: keys whose preimage index is outside [0, 2n), so no generated key equals them
  const uint64_t two_n = 2 * c.n;
  std::vector<uint32_t> sent;
  for (uint64_t y = 0xFFFFFFFFull; sent.size() < 2; --y) {
    uint32_t x = unmix32((uint32_t)y);
    if (bench_mix32(x) != (uint32_t)y) {
      std::fprintf(stderr, "unmix32 broken\n");
      return 1;
    }
    uint64_t idx = (uint64_t)(x ^ (uint32_t)seed);  // (uint32_t)(idx ^ seed) == x
    if (idx >= two_n) sent.push_back((uint32_t)y);
    else std::printf("note: key 0x%08llx is generated (index %llu); not used as a sentinel\n",
                     (unsigned long long)y, (unsigned long long)idx);
  }
  const uint32_t EMPTY_KEY = sent[0], ERASED_KEY = sent[1];
  std::printf("n = 2^%d = %llu, seed %llu, reps %d (median), warmup %d; empty key 0x%08x, "
              "erased key 0x%08x, empty value 0 (values are odd)\n",
              log2n, (unsigned long long)c.n, (unsigned long long)seed, reps, warmup, EMPTY_KEY,
              ERASED_KEY);

  c.json = nullptr;
  if (!json_path.empty()) {
    c.json = std::fopen(json_path.c_str(), "w");
    if (!c.json) {
      std::perror(json_path.c_str());
      return 1;
    }
  }
  CK(cudaMalloc(&c.present, c.n * 4));
  CK(cudaMalloc(&c.absent, c.n * 4));
  CK(cudaMalloc(&c.values, c.n * 4));
  CK(cudaMalloc(&c.out, c.n * 4));
  CK(cudaMalloc(&c.bout, c.n));
  CK(cudaMalloc(&c.dcount, sizeof(unsigned long long)));
  CK(cudaEventCreate(&c.e0));
  CK(cudaEventCreate(&c.e1));
  gen_kernel<<<4096, 256>>>(c.present, c.absent, c.values, c.n, seed);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  int rc = 0;
  try {
    for (double al : alphas) {
      // cuco::default_hash_function<uint32_t> is xxhash_32 at this cuco commit
      if (has(configs, "dh_cg4"))
        run_cuco<cuco::double_hashing<4, cuco::default_hash_function<uint32_t>>>(
          c, "double_hashing_cg4", al, EMPTY_KEY, ERASED_KEY);
      if (has(configs, "dh_cg4_murmur"))  // same, with murmurhash3_32 instead of the default
        run_cuco<cuco::double_hashing<4, cuco::murmurhash3_32<uint32_t>>>(
          c, "double_hashing_cg4_murmur3", al, EMPTY_KEY, ERASED_KEY);
      if (has(configs, "lp_cg1"))
        run_cuco<cuco::linear_probing<1, cuco::default_hash_function<uint32_t>>>(
          c, "linear_probing_cg1", al, EMPTY_KEY, ERASED_KEY);
      if (has(configs, "lp_cg4"))  // cuco::static_map's default probing scheme
        run_cuco<cuco::linear_probing<4, cuco::default_hash_function<uint32_t>>>(
          c, "default_linear_probing_cg4", al, EMPTY_KEY, ERASED_KEY);
    }
    if (has(configs, "bght"))
      for (double al : alphas) run_bght(c, al, EMPTY_KEY);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "exception: %s\n", e.what());
    rc = 1;
  }
  CK(cudaDeviceSynchronize());
  cudaFree(c.present), cudaFree(c.absent), cudaFree(c.values), cudaFree(c.out), cudaFree(c.bout),
    cudaFree(c.dcount);
  if (c.json) std::fclose(c.json);
  return rc;
}
