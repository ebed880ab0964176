/* Built-in rules: per device family, which backend auto tries first for a shape range. Data,
 * not branches; measured tuning results (tune files) override them. First match wins. */
#include <stdio.h>
#include <string.h>

#include "backends/smallm/smallm-splits.h"
#include "context.h"
#include "launch-kind.h"

typedef struct rule {
  const char *family; /* "sm_90", "cuda" (any other GPU), "cpu" */
  int64_t m_max, n_min, n_max, k_min, k_max; /* the box of shapes it covers */
  int scope;      /* ALL_SMS, or SPLIT_MEASURED / SMS_132 (below): the GPUs it applies to */
  int launch;     /* ANY_LAUNCH, or PLAIN_ONLY / PDL_ONLY: the contexts' launch kind (below) */
  const char *backend;
  const char *why;
} rule;

#define ANY INT64_MAX

enum {
  ANY_LAUNCH = BF16FP32__LAUNCH_EITHER, /* either launch kind */
  PLAIN_ONLY = BF16FP32__LAUNCH_PLAIN,  /* a context that launches plainly */
  PDL_ONLY = BF16FP32__LAUNCH_PDL,      /* one that launches with programmatic dependent launch */
};

enum {
  ALL_SMS,        /* any GPU of the family */
  SPLIT_MEASURED, /* where smallm has a measured split for (N, K) and the SM count */
  SMS_132,        /* GPUs of 132 SMs, where smallm's generic table applies (smallm-config.c) */
};

/* sm_90 entries follow the H200 benchmarks: smallm where it beat cuBLAS in the same run, cuBLAS
 * elsewhere. At M <= 4 smallm was 0.996-1.49x cuBLAS on the nine DSV4 shapes
 * (docs/bench-h200.txt) and 1.04-1.11x at 4096x4096 and 7168x2048, but 0.95-0.97x at
 * 1536x7168, where its untuned split fills 96 of 132 SMs (docs/bench-other-h200.txt; `bf16fp32
 * tune` fixes such shapes). At N <= 384 it was 1.09-1.33x cuBLAS at M = 64 on eight shapes,
 * DSV4's and router shapes of other sizes (1.22-1.53x at M = 32 on DSV4's).
 *
 * The SPLIT_MEASURED entries follow the H100's benchmark too: on the DSV4 (N, K), where smallm has
 * splits and stagings measured on 132 SMs (smallm-splits.h), plainly launched and with no tuned
 * table, smallm took 0.56-0.96x cuBLAS's time at M = 8, 16 and 32 on all nine, on an H100 SXM
 * (session 79) and on the H200 (session 76); at M = 64 it was slower at four of them on either. At
 * M = 33-64 it stays faster at 512x4096 and 1024x4096: on the H200 0.79-0.97x cuBLAS's time
 * (session 80, rules alone; its tune agrees, docs/tune-h200.tsv), and 20-100 us off dsv4-flash's
 * decode step at batch 33-64; on the H100 0.79-0.93x at M = 33-64 (session 81). Other shapes of
 * that size run an untuned split: 1536x7168 took 1.12-1.26x cuBLAS's time at M = 16-32 on the
 * H200.
 *
 * The PDL_ONLY entries: under PDL smallm stays faster further. At M = 33-48 on all nine DSV4
 * shapes (rules alone, at the four that the entries above leave to cuBLAS there 0.88-0.99x
 * cuBLAS's time on the H200 in session 80 and 0.86-0.97x on the H100 in session 81, where plainly
 * it took 0.95-1.11x) and at 2048x4096 up to M = 64 (M = 56 and 64: 0.93-0.98x on both cards,
 * plainly 1.01-1.12x); the H100's PDL decode steps at batch 33-64 were 48-231 us faster with these
 * (session 81). Session 84 (H100, rules alone, two interleaved rounds) weighed each PDL entry in
 * three step models, as session 56 did the tuned table's: back to back, and with 4 MB fillers
 * before every GEMM that let it launch after their reads or at their entry. These two win in
 * two of the three (pro batch 40 / 48: back to back 237 / 220 us and with fillers triggering at
 * entry 70 / 36 faster, after their reads 64 / 81 slower; flash, 2048x4096 at M = 49-64, batch
 * 56-64: back to back 48-55 and at entry 17 faster, after the reads 9-14 slower). Two that
 * session 82 added lost in two and went: 1024x7168 and 2048x7168 at M = 49-64 (pro batch
 * 56 / 64: back to back 134 / 100 us faster, after the reads 94 / 142 and at entry 11 / 52
 * slower, where auto took 1.04 / 1.11x cuBLAS's time per step) and the 256x4096 router at
 * M = 65-128 (flash batch 72-128: back to back 39-52 faster, after the reads 8-59 and at entry
 * 31-58 slower).
 *
 * The small-K entries follow the H100 alone (session 89, docs/smallm-notes.md; the H200 not
 * measured), where the entries below them came from K = 2048-7168. At N = 64, 256 and 1024 and
 * M = 1, 16 and 64 (N = 64: 1 and 16), smallm took 1.02-2.6x cuBLAS's time at K = 96-384
 * (cuBLAS's calls 2.3-3.1 us: fixed costs), and at K = 512 and 640 0.89-0.94x at N = 256 and
 * M = 1 but 1.01-2.5x at N = 1024 or M = 16 and 64 (0.95x at N = 256, K = 640, M = 16); at N = 64
 * and 256, K = 768, it was 1.09-1.20x faster than cuBLAS.
 *
 * The SMS_132 entries follow the H100 alone too (session 90, smallm with the generic table of
 * smallm-config.c; shapes no DSV4 entry names): at N <= 768 and M <= 16 smallm took 0.65-0.97x
 * cuBLAS's time at K = 6144 (two runs); at M <= 8 and N = 1280-2048 0.86-1.00x at K = 1536-6144
 * (M = 12-16 there 0.93-1.14x, left to cuBLAS); at M = 24-32 and N = 512-896 0.79-1.01x at
 * K = 1024-4096 but 0.98-1.08x at K = 768 and up to 1.41x at K = 6144. Under PDL, back to back (no
 * step model weighed these), smallm took 0.37-1.02x cuBLAS's time at M <= 32, N = 512-2048 and
 * K = 768-2560, but up to 1.54x at K = 4096 (N = 1280-1536, M = 24-32).
 *
 * The boxes with lower bounds and a launch kind follow session 91 (N = 1536-4096, K = 1024-6144,
 * M = 1-16, both cards; smallm's speed over cuBLAS's in the same run, docs/smallm-notes.md).
 * Plainly: at M <= 16, N = 1536-3072, K = 3072-5120 1.00-1.26 (H100) and 0.99-1.32 (H200), and at
 * M <= 8 up to N = 4096 and K = 6144 1.00-1.26 and 1.06-1.32, where the generic table runs the
 * stream kernel; but at M <= 4, N = 2560-4096, K = 1536-2560 0.90-0.99 and 0.90-1.04 (the
 * chooser's kernel), so cuBLAS there. Under PDL, with the generic table's PDL stream entries (the
 * H200's figures for N >= 2560 from tune): M <= 16 at N = 2049-3072, K = 1024-2560 1.12-1.71 and
 * 1.18-2.14; at N = 1536-4096, K = 2561-4096 1.11-1.86 and 1.00-2.08; at N = 3072-4096 up to
 * K = 6144 1.09-1.34 and 1.08-1.40; M <= 12 at N = 1536-2560, K = 4097-5120 1.10-1.61 and
 * 1.00-1.58; M <= 16 at N = 1536-2048, K = 5120-6144 (where the table's stream entries run from
 * M = 9) 1.20-1.61 on the H100 (the H200 ran the old forms alone: the share kernel 1.45-1.57 at
 * M <= 4). Left to cuBLAS under PDL: N = 2560 at K = 6144 (0.88-0.96 on the H200, 1.02-1.18 on
 * the H100), M = 13-16 at N = 2049-2560, K = 4097-5120 (0.94 at N = 2560) and at N = 1536-2048,
 * K = 4097-5119, between the share kernel's 1.53 at K = 4096 and 0.96 at K = 5120 (M = 16).
 *
 * Session 92 (H100; the H200 where named, from session 91's grid) measured past those shapes, and
 * the generic table gained PDL entries there (smallm-config.c): under PDL at N = 5120-16384, with
 * smallm at M <= 4 (the rule above) 0.81-1.10 before them, tune's times of the new forms against
 * the bench's cuBLAS 1.03-1.40 at K = 1024 (M <= 16), 0.96-1.29 at K = 2048 (M <= 4; at M = 5-8
 * 1.11-1.15 at N = 6144-8192, 0.99-1.02 elsewhere) and 0.95-1.12 from K = 4096 (M <= 8; 0.95-0.99
 * at N = 5120, K = 4096), so M <= 16 at K = 1024-2047, M <= 8 at N = 6144-8192, K = 2048-4095
 * (M <= 4 by the rule above everywhere; at N = 5120, M = 8 parity, 1.00) and at N = 6144-16384,
 * K = 4096-6144. The bench of that box reached to K = 8192: 1.01-1.05 at K = 4096, but at M = 5-8
 * 0.96-1.06 at K = 7168-8192 (neither way on the whole), so cuBLAS there (K = 6144 not measured);
 * at M <= 4 the 5 x 3 stages run there by the rule above, 0.97-1.06 at N = 8192-16384,
 * K = 7168-8192 (0.97-1.04 with the chooser's kernel before; 8192x7168 1.00 -> 0.98), 1.02-1.06 at
 * N = 6144 (0.91-0.96) and 0.94-1.07 at N = 5120 (0.82-0.88). At N = 512-1024 past K = 8192 (two
 * runs each): smallm 0.89-0.92 plainly at 512x16384 (0.99-1.06 at 1024x16384), so cuBLAS there;
 * under PDL 0.77-0.84 at 1024x16384 and at 1024x12288 M = 5-8, so cuBLAS there, but with the new
 * entries 1.04-1.06 at 1024x12288 M <= 4 and 1.07-1.11 at 1024x8192. From K = 8192 on smallm also
 * took (two or three runs each) 1.13-1.15 plainly and 1.78-1.81 under PDL at 512x8192 M = 16,
 * 1.06-1.08 plainly and 1.13-1.21 under PDL at 2048 x 8192-12288 M = 16, and 1.02-1.14 under PDL
 * at 4096 x 8192-16384 M = 8-16 (the boxes reach down to just above N = 1536 and 3072, where
 * session 91's boxes end: N = 1537-2047 and 3073-4095 are not measured at these K). At M = 24-32,
 * N = 1024, K = 2560-3072 smallm took 1.09-1.13 plainly (K = 2560 on the H200, 3072 on the H100;
 * 1.005-1.03 at 2560 on the H100), at M = 9-16, N = 1025-1280, K = 1024-4096 1.01-1.08 (H100) and
 * 1.04-1.14 (H200) plainly, under PDL at N = 1280, K = 4096, M = 12-16 1.54-1.63 on both, and at
 * M = 24-32, N = 1024-2048, K = 3072 1.11-1.69 (H100). Plainly at N >= 5120 and M <= 4 smallm took
 * 0.93-1.05 of cuBLAS's speed on the H100 (1.04-1.11 at 7168x2048 on the H200, above): left so.
 *
 * Session 93 (H100): narrow weights from K = 8192, where the rule "M <= 64, narrow weights" had
 * been measured up to K = 7168 only. Before the generic table's entries there (smallm-config.c)
 * smallm took at M = 48-64 0.54-0.85 of cuBLAS's speed plainly and 0.58-0.98 under PDL
 * (N = 128-384, K = 8192-16384), at M = 9-32 from K = 10240 plainly 0.78-0.99 (0.90-0.94 at
 * 128x16384, M = 9-16) and at K = 16384, M = 24-32 under PDL 0.89-0.95; at M <= 8 1.10-1.43
 * plainly (0.99-1.01 at 128x16384) and 1.19-1.97 under PDL, at M = 9-16 under PDL 1.16-1.83. With
 * the entries (tune against the bench's cuBLAS): M = 9-32 plainly 1.00-1.32 and under PDL
 * 1.03-2.06, M = 33-48 to K = 12288 1.01-1.36, past it 0.96-0.99; at M = 49-64 forms up to 1.07
 * plainly and 1.21 under PDL at K = 8192 but 0.77-1.05 past it. Session 94 (H100), auto with
 * these rules: 0.97-1.45 plainly and 1.00-2.18 under PDL from K = 8192 at N = 256-384; at
 * K = 7680, still under the rule "narrow weights", smallm took 0.81-0.89 plainly and 0.93-1.02
 * under PDL at M = 40-64 (1.04-1.46 and 1.43-2.00 at M <= 32), so the boxes start past
 * K = 7168 (DSV4's routers, tuned, stay under that rule); at 128x8192 smallm took 1.26-1.58
 * plainly and 1.62-2.06 under PDL at M <= 32, 0.84-0.87 and 0.98-1.01 at M = 40-64. With the
 * generic table's entries at N = 128-255 from K = 8192 (x's rows over one row block at
 * M = 17-48; tune against the bench's cuBLAS): plainly 1.21-1.37 at M = 24 to K = 10240, 1.09-1.15
 * at 12288 (M = 25-32 not tuned; M = 9-16 1.11-1.29 with the chooser's kernel), 0.90-1.16 at
 * M = 40; under PDL 1.22-1.99 at M = 24-40 to K = 12288. At N = 256-384, K = 4097-7168 the
 * rule "narrow weights" gives smallm, whose entries there are new too (smallm-config.c).
 * Session 95 (H100), auto with those: plainly 1.03-1.27 at M = 40-64, K = 4608-6656 and
 * 1.21-1.39 at M = 24, N = 128-192, K = 8192-10240; under PDL 1.20-1.64 and 1.23-1.97. At
 * N = 128-192 the rules still gave cuBLAS where smallm's forms won in tune (against the bench's
 * cuBLAS): at K = 7680, M = 40-64, x's rows over one row block 1.09-1.18 plainly and 1.36-1.55
 * under PDL; under PDL at K = 10240, M = 56, 1 x 4 stages 1.18-1.21; past K = 12288 at M = 24
 * plainly 3 x 3 stages 1.07-1.08 (K = 14336-16384) and under PDL x's rows 1.53-1.56 (14336), 3 x 3
 * 1.26 (16384); at 12288, M = 24, x's rows 1.09-1.15 plainly (session 94). Plainly past
 * K = 12288 M = 25-32 takes 3 x 2 stages, not timed (1.04-1.05 at M = 24): cuBLAS there. Plainly
 * at M <= 8 smallm took 1.05-1.06 at K = 14336 but 0.97-0.98 at 192x16384 (0.97-1.00 at
 * 128x16384): cuBLAS there past K = 14336, ahead of the M <= 4 rule. Session 97 (H200, auto):
 * at N = 256-384, K = 12288, M = 40-48 smallm took 0.88-1.02 plainly and 0.95-1.11 under PDL
 * (the H100 1.01-1.09 and 1.05-1.25; smallm's times alike, cuBLAS's 6-19 % shorter on the H200),
 * 0.99-1.07 and 1.10-1.27 at K = 10240: cuBLAS at M = 33-48 past K = 10240. Plainly at M = 32,
 * N = 128-192 past K = 12288 smallm took 1.05-1.10 at K = 14336 (H200) and 1.06-1.08 (H100), but
 * at K = 16384 0.96 at 128x16384 (H200) and 0.97-1.01 (H100): smallm at M = 25-32 to 14336.
 * Session 98 (H100, tune against the bench's cuBLAS, as in sessions 95 and 97): under PDL at
 * N = 256-384, K = 7680-8192, M = 56-64, x's rows over one row block took 1.15-1.29 where
 * cuBLAS ran (the chooser's kernel 0.93-1.01); cuBLAS took 7.00-7.84 us there on the H200
 * (session 97), 7.03-8.41 on the H100, so x's rows' times on the H100 (5.45-6.93 us) would be
 * 1.13-1.30x faster than cuBLAS on the H200 too: smallm at M = 49-64 under PDL to K = 8192.
 * Session 99 (H100, at N = 128-192, K = 8192-14336, M = 24-64, two runs alike): plainly at
 * K = 8704-9728, M = 33-56 smallm took 1.02-1.13 of cuBLAS's speed (x's rows over one row block;
 * 0.77 at M = 64 from K = 9216, where they do not fit) and at K = 10240, M = 33-40 1.03-1.06
 * (0.99-1.01 at M = 48); under PDL at K = 10752-12288, M = 56, the stream kernel on 3 x 2 stages
 * 1.05-1.20 (tune against the bench's cuBLAS; smallm-config.c), where cuBLAS ran. At this N
 * cuBLAS's times on the H200 (session 97, K = 8192-12288, M = 24-64) were the H100's within 3 %
 * and smallm's 1-3 % shorter, so the H100's ratios should hold there (not yet run on it). */
static const rule rules[] = {
    {"sm_90", ANY, 0, 1024, 0, 384, ALL_SMS, ANY_LAUNCH, "cublas",
     "K <= 384, N <= 1024: a call this small is fixed costs, cuBLAS's are shorter (H100)"},
    {"sm_90", 4, 0, 384, 0, 640, ALL_SMS, ANY_LAUNCH, "smallm",
     "M <= 4, K <= 640, N <= 384: smallm faster (H100)"},
    {"sm_90", ANY, 0, 1024, 0, 640, ALL_SMS, ANY_LAUNCH, "cublas",
     "K <= 640, N <= 1024: a call this small is fixed costs, cuBLAS's are shorter (H100)"},
    {"sm_90", 4, 2560, 4096, 1536, 2560, SMS_132, PLAIN_ONLY, "cublas",
     "M <= 4, N = 2560-4096, K = 1536-2560, plainly: cuBLAS as fast or faster (H100, H200)"},
    {"sm_90", 8, 385, 768, 12289, ANY, SMS_132, PLAIN_ONLY, "cublas",
     "M <= 8, N = 385-768, K > 12288, plainly: cuBLAS faster (H100)"},
    {"sm_90", 8, 128, 255, 14337, ANY, SMS_132, PLAIN_ONLY, "cublas",
     "M <= 8, N = 128-255, K > 14336, plainly: cuBLAS as fast or faster (H100)"},
    {"sm_90", 4, 897, 1024, 8193, 12288, SMS_132, PDL_ONLY, "smallm",
     "M <= 4 under PDL, N = 897-1024, K = 8193-12288: smallm faster (H100)"},
    {"sm_90", 8, 897, 1024, 8193, ANY, SMS_132, PDL_ONLY, "cublas",
     "M <= 8 under PDL, N = 897-1024, K > 8192: cuBLAS faster (H100)"},
    {"sm_90", 4, 0, ANY, 0, ANY, ALL_SMS, ANY_LAUNCH, "smallm",
     "M <= 4: smallm on par with cuBLAS or faster"},
    {"sm_90", 16, 0, 384, 7169, ANY, SMS_132, PDL_ONLY, "smallm",
     "M <= 16 under PDL, N <= 384, K > 7168: smallm faster (H100)"},
    {"sm_90", 8, 0, 384, 7169, ANY, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 8, N <= 384, K > 7168: smallm faster (H100)"},
    {"sm_90", 64, 128, 255, 7169, 8192, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 64, N = 128-255, K = 7169-8192: smallm faster (H100)"},
    {"sm_90", 64, 128, 255, 8193, 10240, SMS_132, PDL_ONLY, "smallm",
     "M <= 64 under PDL, N = 128-255, K = 8193-10240: smallm faster (H100)"},
    {"sm_90", 56, 128, 255, 10241, 12288, SMS_132, PDL_ONLY, "smallm",
     "M <= 56 under PDL, N = 128-255, K = 10241-12288: smallm faster (H100)"},
    {"sm_90", 56, 128, 255, 8193, 9728, SMS_132, PLAIN_ONLY, "smallm",
     "M <= 56, N = 128-255, K = 8193-9728, plainly: smallm faster (H100)"},
    {"sm_90", 40, 128, 255, 9729, 10240, SMS_132, PLAIN_ONLY, "smallm",
     "M <= 40, N = 128-255, K = 9729-10240, plainly: smallm faster (H100)"},
    {"sm_90", 32, 128, 255, 12289, ANY, SMS_132, PDL_ONLY, "smallm",
     "M <= 32 under PDL, N = 128-255, K > 12288: smallm faster (H100)"},
    {"sm_90", 16, 128, 255, 12289, ANY, SMS_132, PLAIN_ONLY, "cublas",
     "M = 9-16, N = 128-255, K > 12288, plainly: cuBLAS as fast or faster (H100)"},
    {"sm_90", 24, 128, 255, 12289, ANY, SMS_132, PLAIN_ONLY, "smallm",
     "M = 17-24, N = 128-255, K > 12288, plainly: smallm faster (H100, H200)"},
    {"sm_90", 32, 128, 255, 10241, 14336, SMS_132, PLAIN_ONLY, "smallm",
     "M = 9-32, N = 128-255, K = 10241-14336, plainly (past K = 12288 M = 25-32, the rules above "
     "having M <= 24): smallm faster (H100, H200)"},
    {"sm_90", 48, 256, 384, 7169, 10240, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 48, N = 256-384, K = 7169-10240: smallm faster (H100, H200)"},
    {"sm_90", 64, 256, 384, 7169, 8192, SMS_132, PDL_ONLY, "smallm",
     "M <= 64 under PDL, N = 256-384, K = 7169-8192: smallm faster (H100)"},
    {"sm_90", 32, 256, 384, 10241, ANY, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 32, N = 256-384, K > 10240: smallm faster (H100, H200)"},
    {"sm_90", 64, 0, 384, 7169, ANY, SMS_132, ANY_LAUNCH, "cublas",
     "M <= 64, N <= 384, K > 7168, past the boxes above: cuBLAS faster (H100)"},
    {"sm_90", 64, 0, 384, 0, ANY, ALL_SMS, ANY_LAUNCH, "smallm",
     "M <= 64, narrow weights: smallm beats cuBLAS here"},
    {"sm_90", 32, 0, ANY, 0, ANY, SPLIT_MEASURED, ANY_LAUNCH, "smallm",
     "M <= 32, a DSV4 shape on 132 SMs: smallm beats cuBLAS here (H100, H200)"},
    {"sm_90", 64, 0, 1024, 0, 4096, SPLIT_MEASURED, ANY_LAUNCH, "smallm",
     "M <= 64, a DSV4 shape of K = 4096 on 132 SMs: smallm beats cuBLAS here (H100, H200)"},
    {"sm_90", 48, 0, ANY, 0, ANY, SPLIT_MEASURED, PDL_ONLY, "smallm",
     "M <= 48 under PDL, a DSV4 shape on 132 SMs: smallm beats cuBLAS here (H100, H200)"},
    {"sm_90", 64, 0, 2048, 0, 4096, SPLIT_MEASURED, PDL_ONLY, "smallm",
     "M <= 64 under PDL, a DSV4 shape of K = 4096 on 132 SMs: "
     "smallm beats cuBLAS here (H100, H200)"},
    {"sm_90", 16, 0, 1024, 0, 4096, ALL_SMS, ANY_LAUNCH, "smallm",
     "decode-sized M, narrow weights: smallm beats cuBLAS here"},
    {"sm_90", 16, 0, 768, 0, 8192, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 16, N <= 768, K <= 8192: smallm faster (H100)"},
    {"sm_90", 8, 0, 2048, 0, ANY, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 8, N <= 2048: smallm faster (H100)"},
    {"sm_90", 16, 1536, 3072, 3072, 5120, SMS_132, PLAIN_ONLY, "smallm",
     "M <= 16, N = 1536-3072, K = 3072-5120, plainly: smallm faster (H100, H200)"},
    {"sm_90", 8, 1536, 4096, 3072, 6144, SMS_132, PLAIN_ONLY, "smallm",
     "M <= 8, N = 1536-4096, K = 3072-6144, plainly: smallm faster (H100, H200)"},
    {"sm_90", 16, 2049, 3072, 1024, 2560, SMS_132, PDL_ONLY, "smallm",
     "M <= 16 under PDL, N = 2049-3072, K = 1024-2560: smallm faster (H100, H200)"},
    {"sm_90", 16, 1025, 4096, 2561, 4096, SMS_132, PDL_ONLY, "smallm",
     "M <= 16 under PDL, N = 1025-4096, K = 2561-4096: smallm faster (H100, H200)"},
    {"sm_90", 16, 3072, 4096, 4097, 6144, SMS_132, PDL_ONLY, "smallm",
     "M <= 16 under PDL, N = 3072-4096, K = 4097-6144: smallm faster (H100, H200)"},
    {"sm_90", 12, 1536, 2560, 4097, 5120, SMS_132, PDL_ONLY, "smallm",
     "M <= 12 under PDL, N = 1536-2560, K = 4097-5120: smallm faster (H100, H200)"},
    {"sm_90", 16, 1536, 2048, 5120, 6144, SMS_132, PDL_ONLY, "smallm",
     "M <= 16 under PDL, N = 1536-2048, K = 5120-6144: smallm faster (H100)"},
    {"sm_90", 16, 5120, 16384, 1024, 2047, SMS_132, PDL_ONLY, "smallm",
     "M <= 16 under PDL, N = 5120-16384, K = 1024-2047: smallm faster (H100)"},
    {"sm_90", 8, 6144, 8192, 2048, 4095, SMS_132, PDL_ONLY, "smallm",
     "M <= 8 under PDL, N = 6144-8192, K = 2048-4095: smallm faster (H100)"},
    {"sm_90", 8, 6144, 16384, 4096, 6144, SMS_132, PDL_ONLY, "smallm",
     "M <= 8 under PDL, N = 6144-16384, K = 4096-6144: smallm faster (H100)"},
    {"sm_90", 16, 1537, 2048, 8192, 12288, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 16, N = 1537-2048, K = 8192-12288: smallm faster (H100)"},
    {"sm_90", 16, 3073, 4096, 8192, 16384, SMS_132, PDL_ONLY, "smallm",
     "M <= 16 under PDL, N = 3073-4096, K = 8192-16384: smallm faster (H100)"},
    {"sm_90", 32, 0, 2048, 0, 3072, SMS_132, PDL_ONLY, "smallm",
     "M <= 32 under PDL, N <= 2048, K <= 3072: smallm faster (H100)"},
    {"sm_90", 32, 0, 1024, 0, 1023, SMS_132, ANY_LAUNCH, "cublas",
     "M <= 32, K < 1024, N <= 1024: cuBLAS as fast or faster (H100)"},
    {"sm_90", 32, 0, 896, 0, 4096, SMS_132, ANY_LAUNCH, "smallm",
     "M <= 32, N <= 896, K <= 4096: smallm faster (H100)"},
    {"sm_90", 32, 897, 1024, 2560, 3072, SMS_132, PLAIN_ONLY, "smallm",
     "M <= 32, N = 897-1024, K = 2560-3072, plainly: smallm faster (H100, H200)"},
    {"sm_90", 16, 1025, 1280, 1024, 4096, SMS_132, PLAIN_ONLY, "smallm",
     "M <= 16, N = 1025-1280, K = 1024-4096, plainly: smallm faster (H100, H200)"},
    {"sm_90", ANY, 0, ANY, 0, ANY, ALL_SMS, ANY_LAUNCH, "cublas",
     "cuBLAS: smallm is slower at this size on the H200, or does not run it"},
    {"cuda", ANY, 0, ANY, 0, ANY, ALL_SMS, ANY_LAUNCH, "cublas",
     "GPU without a tuned kernel: cuBLAS"},
    {"cpu", ANY, 0, ANY, 0, ANY, ALL_SMS, ANY_LAUNCH, "cpu-simd",
     "host call: SIMD bf16 dot products"},
};

int bf16fp32__rule_choice(const char *family, int sm_count, bool pdl, const bf16fp32__shape *s,
                          char *why, size_t why_len) {
  const char *fam = s->where == BF16FP32_HOST ? "cpu" : family;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const rule *r = &rules[i];
    if (strcmp(r->family, fam) != 0 || s->m > r->m_max || s->n < r->n_min || s->n > r->n_max ||
        s->k < r->k_min || s->k > r->k_max)
      continue;
    if (r->scope == SPLIT_MEASURED && !bf16fp32__smallm_tuned_for(s->n, s->k, sm_count)) continue;
    if (r->scope == SMS_132 && sm_count != BF16FP32__SMALLM_TUNED_SMS) continue;
    if (!bf16fp32__launch_applies(r->launch, pdl)) continue;
    int b = bf16fp32__registry_find(r->backend);
    if (b < 0) continue;
    if (why) snprintf(why, why_len, "rule %s #%zu: %s", r->family, i, r->why);
    return b;
  }
  return -1;
}
