// mma-order: does mma.sync.m16n8k16 (bf16 operands, fp32 accumulator) give the same bits
// whatever k each of its 16 positions holds, as long as A and B hold the same k there? If it
// does for any permutation, the library's summation order is a choice of which 16 k each MMA
// adds, not where they sit: then an order in which MMA 1 adds k = 0-15 of a 32-wide sub-chunk
// and MMA 2 k = 16-31 reads its fragments by ldmatrix or wgmma from the layout a tensor-map copy
// leaves (no moves, no rewrite of x), and by 8-byte loads straight from global memory (lane t:
// k = 4t .. 4t + 3 at positions 2t, 2t + 1, 2t + 8, 2t + 9), all with the same bits.
// Each trial: random A (16 x 16), B (16 k x 8), C (16 x 8); d = C + A.B once per permutation
// class, compared bit for bit with the natural placement. Operands' exponents are drawn from
// a narrow and a wide range (the wide one makes any alignment or truncation of the products
// show); in half of each range's trials pairs of products cancel exactly.
// docs/smallm-notes.md, session 71.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude -Ibench bench/mma-order.cu -o mma-order
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "backends/smallm/smallm-fragments.cuh"
#include "bench-cuda.cuh"
#include "internal.h" /* bf16fp32__bf16_to_float */

constexpr int TRIALS = 8192;
constexpr int VARIANTS = 8; /* random instances of each random class */

struct Trial {
  uint16_t a[16][16]; /* [row][k] */
  uint16_t b[16][8];  /* [k][token] */
  float c[16][8];
};

__device__ __forceinline__ uint32_t pack(uint16_t lo, uint16_t hi) {
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

/* One warp per (trial, permutation): position p of the MMA holds k = perm[p] in A and B. */
__global__ void permuted_mma(const Trial *trials, const uint8_t *perms, float *out) {
  const int trial = blockIdx.x, pi = blockIdx.y, lane = threadIdx.x, g = lane >> 2, t = lane & 3;
  const Trial &tr = trials[trial];
  const uint8_t *perm = perms + 16 * pi;
  const int k0 = perm[2 * t], k1 = perm[2 * t + 1], k8 = perm[2 * t + 8], k9 = perm[2 * t + 9];
  float d[4] = {tr.c[g][2 * t], tr.c[g][2 * t + 1], tr.c[g + 8][2 * t], tr.c[g + 8][2 * t + 1]};
  mma16816(d, pack(tr.a[g][k0], tr.a[g][k1]), pack(tr.a[g + 8][k0], tr.a[g + 8][k1]),
           pack(tr.a[g][k8], tr.a[g][k9]), pack(tr.a[g + 8][k8], tr.a[g + 8][k9]),
           pack(tr.b[k0][g], tr.b[k1][g]), pack(tr.b[k8][g], tr.b[k9][g]));
  float *o = out + (static_cast<size_t>(pi) * TRIALS + trial) * 128;
  o[g * 8 + 2 * t] = d[0], o[g * 8 + 2 * t + 1] = d[1];
  o[(g + 8) * 8 + 2 * t] = d[2], o[(g + 8) * 8 + 2 * t + 1] = d[3];
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd() {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return static_cast<uint32_t>(rng_state >> 11);
}
/* a bf16 with a random sign and mantissa and an exponent in [-span, span] */
static uint16_t rnd_bf16(int span) {
  const int e = static_cast<int>(rnd() % (2 * span + 1)) - span;
  return static_cast<uint16_t>(((rnd() & 1) << 15) | ((e + 127) << 7) | (rnd() & 0x7f));
}
static void shuffle(uint8_t *p, int n) {
  for (int i = n - 1; i > 0; i--) {
    const int j = static_cast<int>(rnd() % (i + 1));
    const uint8_t s = p[i];
    p[i] = p[j], p[j] = s;
  }
}

struct Class {
  const char *name;
  int variants;
};

int main() {
  /* the permutation classes; index 0 is the natural placement every other is compared with */
  const Class classes[] = {
      {"natural (k = position)", 1},
      {"the two k of each register swapped", 1},
      {"random within positions 0-7 and within 8-15", VARIANTS},
      {"random within each group of 4 positions", VARIANTS},
      {"positions 0-7 and 8-15 exchanged", 1},
      {"lane t: k = 4t .. 4t + 3 (8-byte loads; the library's own placement)", 1},
      {"random over all 16", VARIANTS},
  };
  const int nclass = sizeof classes / sizeof classes[0];
  std::vector<uint8_t> perms;
  std::vector<int> class_of;
  for (int c = 0; c < nclass; c++)
    for (int v = 0; v < classes[c].variants; v++) {
      uint8_t p[16];
      for (int i = 0; i < 16; i++) p[i] = static_cast<uint8_t>(i);
      switch (c) {
      case 1: for (int i = 0; i < 16; i += 2) p[i] = static_cast<uint8_t>(i + 1), p[i + 1] = static_cast<uint8_t>(i); break;
      case 2: shuffle(p, 8), shuffle(p + 8, 8); break;
      case 3: for (int i = 0; i < 16; i += 4) shuffle(p + i, 4); break;
      case 4: for (int i = 0; i < 8; i++) p[i] = static_cast<uint8_t>(i + 8), p[i + 8] = static_cast<uint8_t>(i); break;
      case 5:
        for (int t = 0; t < 4; t++)
          p[2 * t] = static_cast<uint8_t>(4 * t), p[2 * t + 1] = static_cast<uint8_t>(4 * t + 1),
          p[2 * t + 8] = static_cast<uint8_t>(4 * t + 2), p[2 * t + 9] = static_cast<uint8_t>(4 * t + 3);
        break;
      case 6: shuffle(p, 16); break;
      default: break;
      }
      perms.insert(perms.end(), p, p + 16);
      class_of.push_back(c);
    }
  const int nperm = static_cast<int>(class_of.size());

  std::vector<Trial> trials(TRIALS);
  for (int i = 0; i < TRIALS; i++) {
    Trial &tr = trials[i];
    const int span = i % 2 ? 24 : 3; /* wide: products up to 2^96 apart */
    const bool cancel = i % 4 >= 2;  /* k and k + 1 cancel in A: exact zeros next to big terms */
    for (int r = 0; r < 16; r++)
      for (int k = 0; k < 16; k++) tr.a[r][k] = rnd_bf16(span);
    for (int k = 0; k < 16; k++)
      for (int n = 0; n < 8; n++) tr.b[k][n] = rnd_bf16(span);
    if (cancel)
      for (int r = 0; r < 16; r++)
        for (int k = 0; k < 16; k += 4) {
          tr.a[r][k + 1] = tr.a[r][k] ^ 0x8000;
          for (int n = 0; n < 8; n++) tr.b[k + 1][n] = tr.b[k][n];
        }
    for (int r = 0; r < 16; r++)
      for (int n = 0; n < 8; n++) {
        const int kind = rnd() % 4; /* zero, -0, small, comparable */
        tr.c[r][n] = kind == 0 ? 0.0f : kind == 1 ? -0.0f
                   : ldexpf(static_cast<float>(static_cast<int>(rnd() % 2000001) - 1000000) / 1e6f,
                            kind == 2 ? -30 : static_cast<int>(rnd() % (4 * span + 1)) - 2 * span);
      }
  }

  Trial *dt;
  uint8_t *dp;
  float *dout;
  CK(cudaMalloc(&dt, sizeof(Trial) * TRIALS));
  CK(cudaMalloc(&dp, perms.size()));
  CK(cudaMalloc(&dout, sizeof(float) * 128 * TRIALS * nperm));
  CK(cudaMemcpy(dt, trials.data(), sizeof(Trial) * TRIALS, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dp, perms.data(), perms.size(), cudaMemcpyHostToDevice));
  CK(cudaMemset(dout, 0xff, sizeof(float) * 128 * TRIALS * nperm)); /* NaN: unwritten shows */
  permuted_mma<<<dim3(TRIALS, nperm), 32>>>(dt, dp, dout);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> out(static_cast<size_t>(128) * TRIALS * nperm);
  CK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));

  /* natural placement against the fp64 sum rounded once to fp32: where they differ the
   * instruction aligns and truncates, so a placement that mattered would show there */
  long exact = 0, unwritten = 0, total = 0;
  for (int i = 0; i < TRIALS; i++)
    for (int r = 0; r < 16; r++)
      for (int n = 0; n < 8; n++) {
        double s = trials[i].c[r][n];
        for (int k = 0; k < 16; k++)
          s += static_cast<double>(bf16fp32__bf16_to_float(trials[i].a[r][k])) *
               bf16fp32__bf16_to_float(trials[i].b[k][n]);
        const float got = out[static_cast<size_t>(i) * 128 + r * 8 + n];
        unwritten += std::isnan(got);
        exact += static_cast<float>(s) == got;
        total++;
      }
  printf("natural placement: %ld of %ld outputs equal the fp64 sum rounded to fp32 (%ld unwritten)\n",
         exact, total, unwritten);

  printf("| placement | instances | outputs differing from natural (narrow / wide exponents) | trials with any |\n");
  printf("|---|---|---|---|\n");
  for (int c = 1; c < nclass; c++) {
    long diff[2] = {0, 0}, trials_diff = 0, outputs = 0;
    for (int pi = 0; pi < nperm; pi++) {
      if (class_of[pi] != c) continue;
      for (int i = 0; i < TRIALS; i++) {
        bool any = false;
        for (int e = 0; e < 128; e++) {
          const float x = out[static_cast<size_t>(i) * 128 + e];
          const float y = out[(static_cast<size_t>(pi) * TRIALS + i) * 128 + e];
          const bool same = memcmp(&x, &y, 4) == 0;
          diff[i % 2] += !same;
          any |= !same;
        }
        trials_diff += any;
        outputs += 128;
      }
    }
    printf("| %s | %d | %ld / %ld of %ld | %ld |\n", classes[c].name, classes[c].variants, diff[0],
           diff[1], outputs, trials_diff);
  }
  return 0;
}
