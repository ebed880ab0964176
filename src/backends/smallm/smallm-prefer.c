/* smallm's measured preferences on 132 SMs: where the stream, share or fold kernel beat the
 * configuration bf16fp32__smallm_choose picks, by shape, launch kind and M class, and the one
 * block per SM those kernels' blocks take. Pure C: the tables and the switches they make. */
#include "smallm-config.h"
#include "smallm-splits.h"
#include "launch-kind.h"

/* Where the stream kernel beat the kernel bf16fp32__smallm_choose picks on an H200 (132 SMs;
 * smallm-probe --stream-sweep, docs/smallm-notes.md sessions 10, 12, 13 and 15; session 15, with
 * x issued beside the weights in plain launches: 1024x7168 M = 8, 7 x 2, 7.10 us against the
 * decode kernel's 7.34; 2048x7168 M = 4, 7 x 2, 9.50-9.54 against 7 x 3's 9.61-9.64; session 16 at
 * M = 5-16, e.g. 512x7168 M = 8 under PDL, 3 x 2, 4.33 against the tiled kernel's 5.86, and
 * 1024x4096 M = 1-4 under PDL, 3 x 3, 0.94-0.98 of 3 x 2's time; session 17, re-swept with x
 * requested into L2 before the wait under PDL, e.g. 512x4096 M = 12 under PDL, 3 x 2, 3.86
 * against the tiled kernel's 4.21, and 2048x7168 M = 24 plain, 7 x 2 with two blocks per tile,
 * 11.40 against 3 x 3's 11.69; session 18, with the partial sums laid over the rings where they
 * would not fit after them, smallm-probe --chosen, three interleaved runs: 2048x7168 M = 16, 7 x 2,
 * 10.79 -> 10.26 plain and 9.37 -> 8.67 under PDL, 256x7168 M = 16, 7 x 2, 4.73 -> 4.41 plain and
 * 3.57 -> 3.07 under PDL, where 7 x 2 had not fit; session 19, re-swept under PDL once the
 * kernel knew its stage sizes at compile time there (smallm-stream.cu), three interleaved runs
 * against session 18's build: 2048x4096 M = 1 / 4 on 4 x 2, 5.08 / 5.54 -> 4.83 / 5.13 us, M = 5-8
 * on 3 x 3 with two blocks per tile, 5.69 / 5.90 -> 5.30 / 5.30, M = 12 / 16 on 3 x 3, 6.40 / 6.86
 * -> 6.13 / 6.40; 256x4096 M = 12 / 16 on 3 x 2, 2.77 / 2.79 -> 2.58 / 2.63; 1024x4096 M = 1-16
 * without the weights into L2, 3.49-3.89 -> 3.44-3.81; session 20, the entries of 512 x K's
 * 32 / 4 split, three interleaved runs against session 19's 32 / 8: e.g. 512x7168 M = 16 plain,
 * 7 x 2, 6.71 -> 5.35 us, 512x4096 M = 40 under PDL, 3 x 2, 7.19 -> 5.52), per launch kind
 * (plain, under programmatic dependent launch, where its weight copies start while the previous
 * kernel finishes, or either) and M class (bit 0: M = 1, 1: 2-4, 2: 5-8, 3: 9-16, 4: 17-32,
 * 5: 33-48, 6: 49-64), with the stage size and count and the blocks per tile that measured
 * fastest; the first entry that fits is taken (7-sub-chunk stages do not fit above M = 16; with
 * a ring per warp, above 32 tokens only stages of one sub-chunk do, or of three while the partial
 * sums over the rings make room, up to M = 48-58). Under PDL, small stages (3 x 2) at
 * M = 5-16 leave room on each SM for a block of the next call, which then starts its copies
 * while this one runs (1024x7168 M = 5 against 8, 5 x 2: 4.93 against 5.89 us, where the
 * stages of M = 8 no longer leave that room). Since session 84 a block of a one-wave grid takes
 * more than half an SM but where an entry asks for two (bf16fp32__smallm_one_per_sm):
 * the room left is for a smaller block of another call, not for a second one of the same. */
enum {
  PLAIN = BF16FP32__LAUNCH_PLAIN,
  PDL = BF16FP32__LAUNCH_PDL,
  EITHER = BF16FP32__LAUNCH_EITHER,
};
/* No entry sets c->stream_wl2 (the weight boxes past the first ring fill also requested into L2
 * before griddepcontrol.wait; smallm-probe --wl2). Session 17 (smallm-probe --chosen): 1024x4096
 * M = 5-16 0.90-0.93x the time, where two blocks fit an SM and the next call's block starts
 * beside this one; at 2048 x K, 1024x7168 and above M = 16, where a block fills an SM's shared
 * memory, up to 1.19x: only a second request for the same lines. Session 19, with the faster
 * stages, 1.01-1.06x at 1024x4096 M = 1-16, so only 1024x7168 M = 7-8 kept it (3 x 3, two
 * blocks per SM); session 45: in the pro decode step at batch 8 that entry took 805.4-807.8 us
 * per step, 5 x 2 one block per SM 742.3-743.4 (three interleaved rounds), so it went. */
static const struct {
  int n, k, launch, mclasses, subs, stages, groups;
  /* 1: only with its stage count and where two blocks of it fit an SM (0: one block per SM,
   * bf16fp32__smallm_one_per_sm): under PDL the next call's block then starts beside
   * this one (session 18, the partial sums over the rings: 1024x7168 M = 6, 5 x 2, 5.56 -> 4.72
   * us; M = 7-8, 3 x 3 with the weights into L2, 5.59-5.63 -> 5.19-5.23; 1024x4096 M = 20,
   * 3 x 2, 5.23 -> 4.45; with the sums over the rings' start, two blocks per SM were 1-7 %
   * slower at 1024x7168 M = 20 and 40-48 and 256x7168 M = 40-48) */
  int two;
  /* c->stream_early (PDL entries): the next call may launch once this one's blocks have all
   * entered, not once they have all passed griddepcontrol.wait, so that its blocks fetch their
   * weights while this call still waits for its predecessor. Session 22 (smallm-probe --chosen,
   * three interleaved runs against these entries without it): 1024x4096 M = 1 on 4 x 2 3.55 ->
   * 3.28 us (at M = 2-4 1.01-1.05x the time, so not there), 512x7168 M = 1-8 0.90-0.95x,
   * 256x7168 M = 1-8 0.96-0.97x; everywhere else it was slower (up to 1.34x at the same M, as in
   * session 17): more calls in flight, whose blocks take the room on the SMs and the DRAM
   * bandwidth the current call's refills need. A floor kernel that only copies the weights
   * (bench/pdl-floor.cu) gains 0.15-0.6 us from it at every shape. Session 45: in the decode
   * step, where the next call is another shape's, 512x7168 at M = 1-8 lost with it (dsv4-pro
   * under PDL, three interleaved rounds: batch 1 / 4 690.0-691.1 / 726.8-727.4 us per step with
   * it, 679.6-681.2 / 717.8-719.2 without), so that entry dropped it. The entries below that
   * keep it (1024x4096 M = 1, 256x7168 M = 1-8) are not reached under PDL, where the share
   * kernel's entries take those M: no chosen configuration launches early now. */
  int early;
} stream_132[] = {
    {2048, 7168, EITHER, 0x1, 7, 3, 1, 0, 0}, {2048, 7168, EITHER, 0xe, 7, 2, 1, 0, 0},
    {2048, 7168, PLAIN, 0x8, 5, 3, 1, 0, 0},
    {1024, 7168, PLAIN, 0x7, 7, 2, 1, 0, 0}, {1024, 7168, PLAIN, 0x8, 5, 2, 1, 0, 0},
    {2048, 4096, EITHER, 0x7, 4, 2, 1, 0, 0}, {2048, 4096, PLAIN, 0x8, 5, 2, 1, 0, 0},
    /* M = 49-64: one sub-chunk, up to 4 stages, a ring per warp (session 40, smallm-probe
     * --chosen, three interleaved rounds: M = 49 / 56 / 64 9.67 / 9.94 / 10.31 -> 9.37 / 9.48 /
     * 9.70 us plainly; under PDL these stages were slower, so the PDL entry stays) */
    {2048, 4096, PLAIN, 0x40, 1, 4, 1, 0, 0},
    {256, 7168, PLAIN, 0xf, 7, 2, 1, 0, 0},  {256, 7168, PLAIN, 0x10, 3, 3, 1, 0, 0},
    {384, 7168, PLAIN, 0x10, 3, 2, 1, 0, 0},  {2048, 7168, PLAIN, 0x10, 7, 2, 2, 0, 0},
    /* PDL: session 46 put 2048x7168 M = 2-4, 2048x4096 M = 5-8 and 512x7168 M = 1-5 on their
     * plain stagings (their EITHER entries), 1024x7168 M = 1-4 on 7 x 2 as plainly, 2048x4096
     * M = 33-48 on two blocks per tile, and dropped two-per-SM at 1024x7168 M = 6 and 1024x4096
     * M = 17-21: chosen in one-shape graphs, they lost in the decode step (dsv4-pro under PDL,
     * three interleaved rounds, batch 1 / 2 / 4 / 6 678 / 699 / 717 / 753 -> 669 / 692 / 707 /
     * 734 us per step; dsv4-flash batch 5 / 8 / 17 / 48 395 / 398 / 470 / 621 -> 388 / 382 /
     * 463 / 606; level elsewhere). Session 84, with every batch of the step on one stream (an H100
     * SXM, three interleaved rounds): 1024x7168 M = 1-4 on 5 x 2 instead of 7 x 2 took 0.19-0.37 us
     * off each call alone and added 18-36 us to the pro step at batch 1-4 (4.5-11 with 4 MB
     * fillers), so 7 x 2 stays. */
    {2048, 7168, PDL, 0xf, 5, 3, 1, 0, 0},
    {1024, 7168, PDL, 0x3, 7, 2, 1, 0, 0},
    {1024, 7168, PDL, 0xc, 5, 2, 1, 0, 0},
    {2048, 4096, PDL, 0x8, 3, 3, 1, 0, 0},
    {1024, 4096, PDL, 0x1, 4, 2, 1, 1, 1},   {1024, 4096, PDL, 0xf, 3, 2, 1, 0, 0},
    {512, 4096, PLAIN, 0x8, 4, 2, 1, 0, 0},  {512, 4096, PDL, 0x3, 4, 2, 1, 0, 0},
    {512, 4096, PDL, 0xc, 3, 3, 1, 0, 0},    {512, 7168, EITHER, 0xf, 7, 2, 1, 0, 0},
    {512, 7168, PLAIN, 0x10, 5, 2, 1, 0, 0},
    {512, 4096, EITHER, 0x10, 3, 3, 1, 0, 0}, {512, 7168, EITHER, 0x10, 3, 3, 1, 0, 0},
    {512, 4096, EITHER, 0x60, 3, 2, 1, 0, 0}, {512, 7168, EITHER, 0x60, 3, 2, 1, 0, 0},
    {512, 4096, EITHER, 0x60, 1, 3, 1, 0, 0}, {512, 7168, EITHER, 0x60, 1, 3, 1, 0, 0},
    {384, 7168, PDL, 0xf, 3, 2, 1, 0, 0},
    {256, 7168, PDL, 0x7, 7, 2, 1, 0, 1},    {256, 7168, PDL, 0x8, 3, 2, 1, 0, 0},
    {256, 4096, PDL, 0x7, 4, 2, 1, 0, 0},    {256, 4096, PDL, 0x8, 3, 2, 1, 0, 0},
    {256, 4096, PDL, 0x60, 1, 3, 1, 0, 0},   {2048, 4096, PDL, 0x20, 3, 3, 2, 0, 0},
    {2048, 4096, PDL, 0x60, 3, 2, 2, 0, 0},
    /* M = 17-64; at N = 2048 first two blocks per tile (session 13: 2048x7168 M = 32 / 48 / 64
     * 13.5 / 16.5 / 16.9 us -> 12.9 / 14.3 / 15.1, 2048x4096 M = 48-64 2-3 % faster); stages of
     * 3 sub-chunks at M = 33-48 where the partial sums over the rings let two of them fit (session
     * 18: 1024x7168 M = 33 / 40 / 48 10.11 / 10.19 / 10.24 -> 9.25 / 9.53 / 10.06 plain, 256x7168
     * M = 33 / 48 / 56 6.67 / 6.81 / 6.88 -> 6.28 / 6.51 / 6.67, and 2048x4096 M = 33 / 40 under
     * PDL, a ring per warp, 9.71 / 9.83 -> 8.43 / 8.57: the PDL entry above) */
    {2048, 7168, EITHER, 0x70, 3, 3, 2, 0, 0}, {2048, 4096, EITHER, 0x60, 3, 3, 2, 0, 0},
    {2048, 7168, EITHER, 0x10, 3, 3, 1, 0, 0}, {2048, 4096, EITHER, 0x10, 3, 3, 1, 0, 0},
    {1024, 7168, EITHER, 0x10, 3, 2, 1, 0, 0}, {1024, 4096, EITHER, 0x10, 3, 2, 1, 0, 0},
    {1024, 7168, EITHER, 0x20, 3, 2, 1, 0, 0}, {256, 7168, EITHER, 0x60, 3, 2, 1, 0, 0},
    {2048, 7168, EITHER, 0x60, 1, 3, 1, 0, 0}, {2048, 4096, EITHER, 0x60, 1, 3, 1, 0, 0},
    {1024, 7168, EITHER, 0x60, 1, 3, 1, 0, 0}, {1024, 4096, EITHER, 0x60, 1, 3, 1, 0, 0},
    {384, 7168, EITHER, 0x60, 1, 3, 1, 0, 0},  {256, 7168, EITHER, 0x60, 1, 3, 1, 0, 0},
};

/* What a block may take for two to fit an SM: each also holds the 1 KB the system reserves. */
static size_t half_sm(size_t smem_limit) { return (smem_limit + 1024) / 2 - 1024; }

static int m_class(int64_t m) {
  return m == 1 ? 0 : m <= 4 ? 1 : m <= 8 ? 2 : m <= 16 ? 3 : m <= 32 ? 4 : m <= 48 ? 5 : 6;
}

/* Above M = 64, where the stream kernel in blocks of 64 tokens (bf16fp32__smallm_use_stream_tokens)
 * beat the wide kernel on an H200 in plain launches and under PDL alike, by 5 % or more
 * (smallm-probe --stream-tokens, docs/smallm-notes.md, session 21; e.g. 2048x4096 M = 96, stages
 * of 1 sub-chunk x 3 with two blocks per tile, 13.09 / 12.30 us against 18.07 / 16.69; 1024x7168
 * M = 65, 1 x 3, 16.97 / 16.93 against 19.66 / 19.49), for M in [m_from, m_upto]. */
static const struct {
  int n, k, m_from, m_upto, subs, stages, groups;
} tokens_132[] = {
    {2048, 4096, 65, 160, 1, 3, 2}, {2048, 7168, 65, 128, 1, 3, 2}, {2048, 7168, 129, 192, 3, 3, 2},
    {1024, 7168, 65, 128, 1, 3, 1}, {1024, 4096, 65, 96, 1, 3, 1},
};

/* The stream kernel with exactly `stages` stages, the partial sums after the rings where they
 * fit, else over them (the `two` entries' layout: both blocks in half an SM each). */
static int exact_stages(bf16fp32__smallm_config *c, int64_t m, int subs, int stages, int groups,
                        size_t smem_limit) {
  if (bf16fp32__smallm_use_stream_at(c, m, subs, stages, groups, 0, smem_limit) == 0) return 0;
  return bf16fp32__smallm_use_stream_at(c, m, subs, stages, groups, 1, smem_limit);
}

void bf16fp32__smallm_prefer_stream(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                    int sm_count, int use_pdl, size_t smem_limit) {
  if (sm_count != 132 || m < 1) return;
  if (m > BF16FP32__SMALLM_DECODE_MAX_M) {
    for (size_t i = 0; i < sizeof tokens_132 / sizeof tokens_132[0]; i++)
      if (tokens_132[i].n == n && tokens_132[i].k == k && m >= tokens_132[i].m_from &&
          m <= tokens_132[i].m_upto &&
          bf16fp32__smallm_use_stream_tokens(c, m, n, k, tokens_132[i].subs, tokens_132[i].stages,
                                             tokens_132[i].groups, smem_limit) == 0)
        return;
    return;
  }
  const size_t half = half_sm(smem_limit);
  for (size_t i = 0; i < sizeof stream_132 / sizeof stream_132[0]; i++) {
    if (stream_132[i].n != n || stream_132[i].k != k ||
        !bf16fp32__launch_applies(stream_132[i].launch, use_pdl) ||
        !(stream_132[i].mclasses >> m_class(m) & 1))
      continue;
    bf16fp32__smallm_config t = *c; /* c stays as chosen where no entry fits */
    const int subs = stream_132[i].subs, stages = stream_132[i].stages;
    const int groups = stream_132[i].groups;
    const int fit = stream_132[i].two ? exact_stages(&t, m, subs, stages, groups, half)
                                       : bf16fp32__smallm_use_stream(&t, m, subs, stages, groups,
                                                                     smem_limit);
    if (fit == 0) {
      *c = t;
      c->stream_early = stream_132[i].early;
      if (!stream_132[i].two) bf16fp32__smallm_one_per_sm(c, sm_count, smem_limit);
      return;
    }
  }
}

/* Where the share kernel beat the choice above on an H200, by M class as above, with x's token
 * rows in shared memory or (xreg) x's fragments in registers (smallm-probe --chosen against
 * --share, three interleaved runs; docs/smallm-notes.md, sessions 23 and 24). Under programmatic
 * dependent launch its blocks request all their weights (with late groups, all but those
 * groups' columns) before griddepcontrol.wait; launched plainly its loop starts once all of them
 * are in, which pays only at some shapes above M = 8.
 * Session 24's build, whose eight warps share the copies' issue: under PDL 256x4096 M = 12-64
 * 0.91-0.95x the time, 256x7168 M = 1-32 0.80-0.97x, 384x7168 M = 1-24 0.77-0.99x, 512x4096
 * M = 1-32 0.94-0.98x, 512x7168 M = 24 0.94x; plainly 256x4096 M = 48-64 0.93-0.95x, 256x7168
 * M = 24-32 0.96-0.97x, 384x7168 M = 12-32 0.96-0.97x, 512x4096 M = 12-32 0.96-0.99x. Where a
 * block needs more than half an SM (512x7168 M <= 16, 1024x7168, 2048x4096) it was slower. */
static const struct {
  int n, k, launch, mclasses, xreg;
  /* c->share_wpre: the weight fragments into registers before the wait (1) or while x's rows
   * arrive (2); session 25 (smallm-probe --chosen, three interleaved runs against 0): under PDL
   * 1 at M = 17-32 0.90-0.93x the time at 256x7168, 384x7168 and 256x4096, 0.95-0.97x at
   * 512x4096; 2 at 256x4096 M = 1-8 0.96x and plainly at M = 48-64 0.96-0.97x, and at 256x7168
   * M = 48-64 0.93-0.94x; the other share cells within 1 % or slower (up to 1.2x at 512x4096
   * and 384x7168 M <= 8) */
  int wpre;
  /* c->share_late (bf16fp32__smallm_share_late): session 26 (smallm-probe --share-late, then
   * the table against session 25's, three interleaved runs each): under PDL 1024x4096 M = 2-4
   * with x's rows and 2 late groups of 8 0.97x the time of x in registers and none, M = 1 0.99x
   * the stream kernel's; plainly 384x7168 M = 12-32 with 2 late of 4 0.97-0.98x, 512x4096
   * M = 1-8 (against the stream and decode kernels) 0.98-0.99x; 1024x4096 M = 5-8 with 1 late,
   * 512x4096 M = 16-32 and 256x7168 M = 24-32 within 1 %; every other share cell under PDL
   * 1.06-1.37x slower with any late group. */
  int late;
  /* c->share_late_l2: the late columns also requested into L2 before the wait; session 30
   * (smallm-probe --late-l2, five interleaved rounds, medians, under PDL): at 1024x4096 with x's
   * rows, 4 late groups with the requests against the 2 without them that the table had,
   * M = 1 / 2 / 3 / 4 3.28 / 3.29 / 3.33 / 3.32 -> 3.23 / 3.25 / 3.32 / 3.33 us (M = 6 / 8 with
   * 3 late 3.48 / 3.44 -> 3.35 / 3.49, so not there); at the other shapes up to M = 16 (three
   * rounds) they took up to 0.5 us off most late counts, but none came below the table's choice
   * (session 31 replaced them at 1024x4096 by two row blocks per block, below) */
  int l2;
  /* c->share_tiles (bf16fp32__smallm_share_tiles): session 31 (smallm-probe --share-tiles, five
   * interleaved rounds, medians, under PDL): at 1024x4096 two row blocks per block, x in
   * registers, no late group, against the table's 4 late groups via L2 (M = 1-4) and x in
   * registers (M = 5-16), M = 1 / 2 / 4 / 6 / 8 / 12 / 16 3.25 / 3.28 / 3.37 / 3.48 / 3.45 / 3.57 /
   * 3.59 -> 3.02 / 3.04 / 3.08 / 3.09 / 3.10 / 3.50 / 3.58 us: 64 blocks of 133 KB, so that the
   * next call's 64 find SMs of their own; at M = 20 (x's rows) 4.47 against 4.32. Elsewhere two
   * row blocks were slower or within 3 % (256 x K, 512 x K, 384x7168 at M = 1-64). In the
   * dsv4-flash decode step under PDL (bench --decode-step) the step took 358 / 381 / 438 us at
   * batch 1 / 4 / 16 against 368 / 388 / 455 with the entries it replaced. Session 47 took two
   * row blocks to the routers and 512x4096 under PDL by the decode step (three interleaved rounds,
   * medians): 384x7168 and 512x4096 at M = 1-16, and 256x4096 at M = 1-4 (which then drops its
   * weight pre-read), took dsv4-flash at batch 1 / 2 / 4 / 8 / 12 / 16 from 356 / 371 / 379 / 380 /
   * 416 / 429 to 344 / 364 / 373 / 372 / 404 / 414 us per step and dsv4-pro at batch 1 / 2 / 4 / 8 /
   * 16 from 667 / 692 / 706 / 742 / 832 to 665 / 690 / 704 / 735 / 818; both level at batch 24-64.
   * Slower in the step: 256x4096 at M = 5-8 (2 us per step), 9-16 and 33-64 (18-25 us), and at
   * M = 17-32 256x4096, 384x7168 and 512x4096 without the pre-read (2-19 us). Then the pre-read
   * alone (call 5, three rounds): at 256x4096 M = 33-64 with it, flash at batch 48 / 64 604.5 /
   * 649.7 -> 602.2 / 635.9 us per step; at 512x4096 M = 17-32 without it, batch 24 / 32 469.6 /
   * 488.6 -> 464.0 / 485.4. Kept as they were: the pre-read at 256x4096 M = 17-32 and 384x7168
   * M = 17-32 (6-33 us per step slower without it), none at 256x4096 M = 5-8 (3-4 us slower). */
  int tiles;
} share_132[] = {
    {256, 4096, PDL, 0x3, 0, 0, 0, 0, 2},    {256, 4096, PDL, 0x4, 0, 2, 0, 0, 1},
    {256, 4096, PDL, 0x8, 0, 0, 0, 0, 1},    {256, 4096, PDL, 0x10, 0, 1, 0, 0, 1},
    {256, 4096, EITHER, 0x60, 0, 2, 0, 0, 1}, {256, 7168, PDL, 0x10, 0, 1, 0, 0, 1},
    {256, 7168, PDL, 0x60, 0, 2, 0, 0, 1},   {256, 7168, PDL, 0xf, 0, 0, 0, 0, 1},
    {384, 7168, PDL, 0x10, 0, 1, 0, 0, 1},   {384, 7168, PDL, 0xf, 0, 0, 0, 0, 2},
    {512, 4096, PDL, 0x10, 0, 0, 0, 0, 1},   {512, 4096, PDL, 0xf, 0, 0, 0, 0, 2},
    {512, 7168, PDL, 0x10, 0, 0, 0, 0, 1},   {1024, 4096, PDL, 0xf, 1, 0, 0, 0, 2},
    {256, 7168, PLAIN, 0x10, 0, 0, 0, 0, 1},
    {384, 7168, PLAIN, 0x18, 0, 0, 2, 0, 1}, {512, 4096, PLAIN, 0x7, 0, 0, 2, 0, 1},
    {512, 4096, PLAIN, 0x18, 0, 0, 0, 0, 1}};

void bf16fp32__smallm_prefer_share(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                   int sm_count, int use_pdl, size_t smem_limit) {
  if (sm_count != 132 || m < 1 || m > BF16FP32__SMALLM_DECODE_MAX_M) return;
  for (size_t i = 0; i < sizeof share_132 / sizeof share_132[0]; i++)
    if (share_132[i].n == n && share_132[i].k == k &&
        bf16fp32__launch_applies(share_132[i].launch, use_pdl) &&
        (share_132[i].mclasses >> m_class(m) & 1)) {
      /* c stays as it was where the rows do not fit or the late groups do not apply */
      bf16fp32__smallm_config t = *c;
      if (bf16fp32__smallm_use_share(&t, m, n, k, share_132[i].xreg, share_132[i].wpre,
                                     smem_limit) == 0 &&
          bf16fp32__smallm_share_late(&t, share_132[i].late, share_132[i].l2) == 0 &&
          bf16fp32__smallm_share_tiles(&t, m, share_132[i].tiles, smem_limit) == 0) {
        bf16fp32__smallm_one_per_sm(&t, sm_count, smem_limit);
        *c = t;
      }
      return;
    }
}

/* Where the fold kernel (bf16fp32__smallm_use_fold) replaces the tables above, by launch kind
 * and M class (m_class). Session 55 on the H200 (docs/smallm-notes.md): under PDL at 512x4096,
 * the bench at M = 1 / 2 / 4 2.56 / 2.55 / 2.57 -> 2.25 / 2.33 / 2.43 us, and the dsv4-flash
 * decode step (three interleaved rounds, medians) at batch 1 / 2 / 3 / 4 345.2 / 363.4 / 368.7 /
 * 374.7 -> 335.0 / 356.1 / 361.4 / 369.2 us, level at 6-16; with the fold up to M = 6 a patched
 * build's step was 3.4 us slower at batch 6. One shape at a time it was slower than the tables'
 * choice at the other shapes (smallm-probe --fold); the dsv4-flash step file takes it at
 * 1024x4096 M = 1-8, where the step disagrees (README). */
static const struct {
  int n, k, launch, mclasses;
} fold_132[] = {{512, 4096, PDL, 0x3}};

void bf16fp32__smallm_prefer_fold(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                  int sm_count, int use_pdl, size_t smem_limit) {
  if (sm_count != 132) return;
  for (size_t i = 0; i < sizeof fold_132 / sizeof fold_132[0]; i++)
    if (fold_132[i].n == n && fold_132[i].k == k &&
        bf16fp32__launch_applies(fold_132[i].launch, use_pdl) &&
        (fold_132[i].mclasses >> m_class(m) & 1)) {
      bf16fp32__smallm_use_fold(c, m, n, k, smem_limit); /* c as it was where it does not fit */
      return;
    }
}

/* Shapes the tables above do not name (no measured split, smallm-splits.h) on 132 SMs: where the
 * share, fold or stream kernel beat the chooser's kernel (decode or tiled) on an H100 SXM, by N
 * range, K range, launch kind, M class (m_class) and kernel form; the first entry that fits
 * is taken (session 90, `bf16fp32 tune` timing every candidate at N = 256-4096, K = 1024-5120,
 * M = 1-32, then at N = 384-1536, K = 1536-6144; docs/smallm-notes.md). Plainly at N = 512-1024,
 * M <= 16, the share kernel with x in registers over two row blocks took 0.77-0.97x the chooser's
 * time (0.77-0.84x at N = 1024, M = 16, where the decode kernel took 0.97-1.16x cuBLAS's), with
 * x's rows where x does not fit registers. Where the chooser takes the decode kernel (N >= 1024)
 * x's rows over two row blocks took 0.86-0.89x at N = 1280, M = 16 (0.96-1.03x at M = 1-8, there
 * left to the decode kernel plainly) and 0.61-0.67x at N = 1024-1280, M = 24-32; at N = 512-896,
 * M = 24-32 0.80-1.00x from K = 2048 on, 1.02-1.12x below. At N = 896-1024, M <= 8 the fold kernel
 * took 0.80-0.92x (it fits there only). At N = 256 and 384 x in registers over one row block
 * 0.91-1.01x (over two 0.98-1.04x; one row block at N = 512-1024 was slower). Under PDL
 * (N = 512-3072, M = 1-32) the share kernel took 0.54-0.93x the chooser's time at M <= 16 and
 * about half at M = 32, two row blocks where they fit, else one; the fold kernel at N = 1024
 * 0.57-0.64x; at N = 1280, M <= 8, where the decode kernel took 0.67-1.11x cuBLAS's time in
 * back-to-back calls and the share kernel 0.60-0.67x at M = 12-16, the share kernel from N = 1040
 * on (then 0.55-0.95x cuBLAS's time at N = 1280, M <= 8, session 90's last run). Plainly at
 * N = 1536-4096 from K = 3072 on the stream kernel on two stages of 7 sub-chunks took 0.89-0.98x
 * the chooser's time at M <= 8 and 0.87-1.00x at M = 16 (the partial sums over the rings); below
 * K = 3072 the chooser's kernel stays (the stream stagings up to 1.26x its time, the share kernel
 * 0.96-1.16x). Session 91, under PDL: at N = 2560-4096 from K = 2560 on, the stream kernel on
 * three stages of 5 sub-chunks at M <= 8 and two of 7 at M = 9-16 took 0.65-0.99x the time of the
 * share kernel (to N = 3072) or the chooser's kernel on the H200 at 2560-4096 x 2560-6144 (tune;
 * 1.00-1.08x at N = 2560-3072, K = 2560, M = 12, where the share kernel was already 1.7-1.9x faster
 * than cuBLAS), which had taken up to 1.6x cuBLAS's time there; at N = 1536-2048 the share kernel
 * lost from M = 9 at K = 5120 and from M = 5 at K = 6144 (0.90-1.10x cuBLAS's speed on an H100 SXM,
 * where the stream kernel's forms took 0.68-0.81x its time, 1.01 and 0.93 at K = 5120, M = 12).
 * Session 92, under PDL past N = 4096 (tune on an H100 SXM at N = 5120-16384, K = 1024-8192,
 * M = 1-16, each form's time over the chooser's kernel's; "x cuBLAS" is tune's time against the
 * bench's cuBLAS in the same session, where the chooser's kernel took 0.78-1.10x cuBLAS's speed):
 * at K = 1024 the share kernel with x's rows over two row blocks, 0.61-0.84 (1.03-1.40x cuBLAS,
 * M <= 16), over one where two do not fit (to K = 2047; 0.64-0.94 at K = 1024); at K = 2048 the
 * stream kernel on two stages of 5 sub-chunks at M <= 4, 0.72-0.98 (0.96-1.29x), and of 3 at
 * M = 5-8, 0.85-0.95 (0.99-1.15x); from K = 4096 on three stages of 5 at M <= 8, 0.83-1.02
 * (0.95-1.12x). At N = 512-1024 from K = 8192 on, where neither the fold nor x in registers or
 * x's rows over two row blocks fit, x's rows over one under PDL: 0.82-0.83 of the chooser's
 * kernel's time at 1024x8192, M <= 8 (1.08-1.10x cuBLAS, the chooser's 0.90x), 0.84-0.96 at
 * 512x16384 (1.02-1.10x); plainly the chooser's kernel stays (1.07-1.10x cuBLAS at 1024x8192;
 * the share kernel took 1.23-1.25x its time). Session 93, at N = 256-384 from K = 8192 (tune on
 * an H100 SXM at K = 8192-16384, M = 12-64; each form's time against the bench's cuBLAS in the
 * same session), where the chooser's kernel runs on 64-96 blocks (x in registers fits at M <= 8,
 * and to K = 8192 at M = 9-16) and took 0.59-0.85x cuBLAS's speed at M = 48-64 and 0.78-0.99x at
 * M = 9-32 from K = 10240 plainly, 0.63-0.98x at M = 48-64 and 0.89-0.95x at K = 16384, M = 24-32
 * under PDL: under PDL x's rows over one row block where they fit (to K = 16384 at M = 16, 12288
 * at M = 33, 10240 at M = 48), 1.09-2.06x; the stream kernel on two stages of 3 sub-chunks at
 * M = 9-32 (plainly 1.00-1.32x, the bench's from K = 10240; under PDL 1.03-1.20x at K = 16384,
 * M = 24-32) and on three stages of 1 at M = 33-48 (plainly 1.01-1.11x to K = 12288, 0.97x at
 * 16384; under PDL 1.04-1.09x at 12288, 0.96-0.99x at 16384). The rules give cuBLAS at M = 49-64
 * and at M = 33-48 past K = 12288 there (rules.c). Session 94: at K = 7680 the chooser's kernel
 * took 0.81-0.89x cuBLAS's speed plainly at M = 40-64 (as at K = 8192 before the entries), so the
 * entries start past K = 7168 (DSV4's 256x7168 and 384x7168 keep their tables' entries). tune
 * there (H100, each form against the bench's cuBLAS): at N = 256-384, K = 4608-6656, M = 40-56
 * the chooser's kernel took 0.82-1.06x plainly and 0.93-1.26x under PDL, the stream kernel on
 * three stages of 1 sub-chunk 1.08-1.28x plainly and x's rows over one row block 1.26-1.65x under
 * PDL (the forms DSV4's 256x7168 and 384x7168 have there); at N = 128-192, K = 8192-12288 x's
 * rows over one row block took 1.09-1.37x plainly at M = 24 and 1.22-1.99x under PDL at M = 24-40
 * (the chooser's 0.89-1.27x and 0.71-1.68x), the stream kernel on 3 x 2 stages 1.12-1.22x under
 * PDL at M = 40, K = 12288, where x's rows do not fit past M = 40. Session 95 (tune on an H100 SXM
 * against the bench's cuBLAS, M = 24-64): at N = 256-384, K = 2048-4096 (DSV4's 256x4096 aside),
 * M = 40-64, x's rows over one row block took 1.20-1.43x plainly and 1.46-1.81x under PDL, the
 * chooser's kernel 1.08-1.28x and 1.34-1.62x; at K = 4097-7168, M = 24, x's rows over one row
 * block 1.20-1.46x plainly (the chooser's 1.07-1.36x), under PDL over one 1.77-1.96x at N = 256
 * and over two 1.74-2.01x at N = 384 (the chooser's 1.38-1.75x). At N = 128-192: at K = 7680 x's
 * rows over one row block 1.34-1.41x plainly and 2.01-2.02x under PDL at M = 24, and fit to
 * M = 64 there (1.09-1.18x and 1.36-1.55x at M = 40-64, where cuBLAS ran); under PDL at K = 10240,
 * M = 56, 1 x 4 stages 1.18-1.21x; past K = 12288 at M = 24 3 x 3 stages 1.07-1.08x plainly
 * (K = 14336-16384; three stages fit to M = 24, two to 32), under PDL x's rows 1.53-1.56x at
 * 14336 and 3 x 3 1.26x at 16384. Past M = 32 there no form reached cuBLAS plainly (0.82-0.98x)
 * and 0.94-1.04x under PDL. Session 97 (tune on an H100 SXM, M = 32 and 64): under PDL at
 * 384 x 7680-8192, M = 32 x's rows over two row blocks took 1.69-1.73x cuBLAS's speed, over one
 * 1.42x (at N = 256 1.62-1.65x and 1.70-1.72x), so the two-row-block entry at N = 320-384 reaches
 * K = 8192, the last K timed (they fit further: at M = 32 to K = 8704). Session 98 (the same
 * tune at M = 56-64): under PDL at N = 256-384, K = 7680-8192 x's rows over one row block took
 * 1.15-1.29x, the chooser's kernel 0.93-1.01x; the entry stops at K = 8192, the last K timed
 * with it (at K = 10240 it does not fit at M = 56-64; at M = 64 it fits to K = 8704). Session 99
 * (the same tune at N = 128-192, K = 8192-14336, M = 40-64): at K = 10240-12288, M = 56, where
 * x's rows over one row block do not fit, the stream kernel on 3 x 2 stages took 1.03-1.07x
 * cuBLAS's speed plainly to K = 11264 (0.94x at 128x12288, 1.03x at 192x12288) and 1.05-1.20x
 * under PDL at K = 10752-12288, the chooser's kernel 0.66-0.80x and 0.74-0.82x; 3 x 2 fits to
 * M = 59, and under PDL to K = 10240 the entry of 1 x 4 comes first (1.18-1.20x at M = 56).
 * a, b: the share kernel's x in registers and row blocks, the stream kernel's stage sub-chunks and
 * stages. */
enum { SHARE_FORM, FOLD_FORM, STREAM_FORM };
#define K_ANY INT32_MAX
static const struct {
  int n_min, n_max, k_min, k_max, launch, mclasses, form, a, b;
} generic_132[] = {
    {896, 1024, 0, K_ANY, EITHER, 0x7, FOLD_FORM, 0, 0},
    {256, 384, 0, K_ANY, PLAIN, 0xf, SHARE_FORM, 1, 1},
    {320, 384, 4097, 8192, PDL, 0x10, SHARE_FORM, 0, 2},
    {256, 384, 7169, K_ANY, PDL, 0x38, SHARE_FORM, 0, 1},
    {256, 384, 7169, 8192, PDL, 0x40, SHARE_FORM, 0, 1},
    {256, 384, 7169, K_ANY, EITHER, 0x18, STREAM_FORM, 3, 2},
    {256, 384, 7169, K_ANY, EITHER, 0x20, STREAM_FORM, 1, 3},
    {256, 384, 4097, 7168, PDL, 0x60, SHARE_FORM, 0, 1},
    {256, 384, 4097, 7168, EITHER, 0x60, STREAM_FORM, 1, 3},
    {256, 384, 2048, 4096, EITHER, 0x60, SHARE_FORM, 0, 1},
    {256, 384, 4097, 7168, EITHER, 0x10, SHARE_FORM, 0, 1},
    {128, 255, 7169, 12288, EITHER, 0x30, SHARE_FORM, 0, 1},
    {128, 255, 7169, 10240, EITHER, 0x40, SHARE_FORM, 0, 1},
    {128, 255, 12289, K_ANY, PDL, 0x10, SHARE_FORM, 0, 1},
    {128, 255, 12289, K_ANY, EITHER, 0x10, STREAM_FORM, 3, 3},
    {128, 255, 8192, 12288, EITHER, 0x30, STREAM_FORM, 3, 2},
    {128, 255, 8193, 10240, PDL, 0x40, STREAM_FORM, 1, 4},
    {128, 255, 9729, 12288, EITHER, 0x40, STREAM_FORM, 3, 2},
    {512, 1024, 0, K_ANY, EITHER, 0xf, SHARE_FORM, 1, 2},
    {512, 1024, 0, K_ANY, EITHER, 0xf, SHARE_FORM, 0, 2},
    {1024, 1280, 0, K_ANY, EITHER, 0x18, SHARE_FORM, 0, 2},
    {512, 896, 2048, K_ANY, EITHER, 0x10, SHARE_FORM, 0, 2},
    {512, 1024, 8192, K_ANY, PDL, 0xf, SHARE_FORM, 0, 1},
    {2560, 4096, 2560, K_ANY, PDL, 0x7, STREAM_FORM, 5, 3},
    {2560, 4096, 2560, K_ANY, PDL, 0x8, STREAM_FORM, 7, 2},
    {1536, 2048, 6144, K_ANY, PDL, 0x4, STREAM_FORM, 5, 3},
    {1536, 2048, 5120, K_ANY, PDL, 0x8, STREAM_FORM, 7, 2},
    {1040, 3072, 0, K_ANY, PDL, 0x1f, SHARE_FORM, 1, 2},
    {1040, 3072, 0, K_ANY, PDL, 0x1f, SHARE_FORM, 0, 2},
    {1040, 3072, 0, K_ANY, PDL, 0x1f, SHARE_FORM, 0, 1},
    {1536, 4096, 3072, K_ANY, PLAIN, 0xf, STREAM_FORM, 7, 2},
    {5120, 16384, 4096, K_ANY, PDL, 0x7, STREAM_FORM, 5, 3},
    {5120, 16384, 2048, 4095, PDL, 0x3, STREAM_FORM, 5, 2},
    {5120, 16384, 2048, 4095, PDL, 0x4, STREAM_FORM, 3, 2},
    {5120, 16384, 1024, 2047, PDL, 0xf, SHARE_FORM, 0, 2},
    {5120, 16384, 1024, 2047, PDL, 0xf, SHARE_FORM, 0, 1},
};

void bf16fp32__smallm_prefer_generic(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                     int sm_count, int use_pdl, size_t smem_limit) {
  if (sm_count != 132 || bf16fp32__smallm_tuned_for(n, k, sm_count) || m < 1 ||
      m > BF16FP32__SMALLM_DECODE_MAX_M)
    return;
  for (size_t i = 0; i < sizeof generic_132 / sizeof generic_132[0]; i++) {
    if (n < generic_132[i].n_min || n > generic_132[i].n_max || k < generic_132[i].k_min ||
        k > generic_132[i].k_max || !bf16fp32__launch_applies(generic_132[i].launch, use_pdl) ||
        !(generic_132[i].mclasses >> m_class(m) & 1))
      continue;
    bf16fp32__smallm_config t = *c; /* c stays as chosen where no entry fits */
    const int a = generic_132[i].a, b = generic_132[i].b;
    int fits;
    if (generic_132[i].form == FOLD_FORM)
      fits = bf16fp32__smallm_use_fold(&t, m, n, k, smem_limit) == 0;
    else if (generic_132[i].form == STREAM_FORM)
      fits = bf16fp32__smallm_use_stream(&t, m, a, b, 1, smem_limit) == 0;
    else
      fits = bf16fp32__smallm_use_share(&t, m, n, k, a, 0, smem_limit) == 0 &&
             bf16fp32__smallm_share_tiles(&t, m, b, smem_limit) == 0;
    if (!fits) continue;
    bf16fp32__smallm_one_per_sm(&t, sm_count, smem_limit); /* stream and share, as the tables' */
    *c = t;
    return;
  }
}

/* Session 84 (an H100 SXM, rules alone, docs/smallm-notes.md): the pro router at M = 33-34 on
 * 1 x 3 stages (111.5 KB, two blocks per SM; one from M = 35 on) took 851-877 us per router-only
 * step under PDL with 4 MB fillers against 575 at M = 35, and the whole pro step 2129-2160 against
 * 1867 (back to back 1416-1419 against 1238), where one shape at a time M = 33-35 took 5.66-5.69
 * us alike. Session 85, the share kernel (an H100 SXM, three interleaved rounds, under PDL): the
 * pro router at M = 17-28 (64-96 blocks of 61-112 KB) 43-48 us faster per router-only step with
 * fillers that trigger after their reads and 44-57 with fillers that trigger at entry, 14-21
 * slower back to back; the flash router alone at M = 1-32 up to 26 us faster with either kind
 * of filler and up to 13 slower back to back; 512x4096 alone at M = 17-21 5-8 and 28 faster,
 * 7-8 slower. One shape at a time those calls took 1.10-1.17x the time (the next call's block no
 * longer starts beside this one). Plain launches within noise. */
void bf16fp32__smallm_one_per_sm(bf16fp32__smallm_config *c, int sm_count, size_t smem_limit) {
  /* past half an SM and a multiple of 16 bytes: the share kernel lays its push's receive slots
   * at the end of its shared memory */
  const size_t over_half = (half_sm(smem_limit) + 16) & ~(size_t)15;
  size_t *smem = c->stream ? &c->stream_smem : c->share ? &c->share_smem : NULL;
  if (smem && (int64_t)c->grid_x * c->grid_y <= sm_count && *smem < over_half &&
      over_half <= smem_limit)
    *smem = over_half;
}
