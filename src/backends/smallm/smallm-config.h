/* smallm launch configuration: which rows, K slices, warps and batches a call uses.
 * Pure C (no CUDA calls), shared by the host glue, the kernel and the CPU unit test.
 * smallm-config.c defines the chooser and the kernel forms' switches (bf16fp32__smallm_use_*),
 * smallm-prefer.c the measured tables (bf16fp32__smallm_prefer_*, bf16fp32__smallm_one_per_sm). */
#ifndef BF16FP32_SMALLM_CONFIG_H
#define BF16FP32_SMALLM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define BF16FP32__SMALLM_HD __host__ __device__
#else
#define BF16FP32__SMALLM_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Calls with M up to this may run the decode kernel (smallm-decode.cu, per the split's
 * decode_mask) or else run the tiled kernel (smallm-kernel.cu); larger M run the wide kernel
 * (smallm-wide.cu) where its blocks fit. All three do the same arithmetic for every output. */
#define BF16FP32__SMALLM_DECODE_MAX_M 64
/* Limits of the kernel: tokens per call, blocks of a cluster; every block has 8 warps. */
#define BF16FP32__SMALLM_MAX_M 256
/* The kernels hold K, the K slices' bounds and the tensor maps' box coordinates as 32-bit ints,
 * and the decode kernel's look-ahead forms indexes up to 1008 elements past K: K stays 1024
 * under 2^31, so that none of them overflows. */
#define BF16FP32__SMALLM_MAX_K ((int64_t)INT32_MAX - 1023)
#define BF16FP32__SMALLM_MAX_SPLIT 8
#define BF16FP32__SMALLM_WARPS 8
#define BF16FP32__SMALLM_THREADS (32 * BF16FP32__SMALLM_WARPS)
/* Per-block shared memory at M <= 64, so that two blocks fit on an SM: with programmatic
 * dependent launch the next call's blocks then start their weight loads beside ours. */
#define BF16FP32__SMALLM_DECODE_SMEM (113u * 1024u)
/* The decode kernel's weight ring at mt <= 2 (sub-chunks in flight per lane), and the deep
 * ring's, twice that, for grids of at most one block per SM. */
#define BF16FP32__SMALLM_DECODE_RING 8
/* Weight sub-chunks (32 K each) a warp holds in registers per batch, for mt token tiles; the
 * kernel double-buffers them (compile-time, so that the arrays stay in registers). */
#define BF16FP32__SMALLM_SB_MAX(mt) ((mt) <= 4 ? 4 : (mt) <= 16 ? 2 : 1)

/* The wide kernel (smallm-wide.cu, large M): a ring of STAGES shared-memory buffers, each
 * holding a stage of consecutive 32-wide sub-chunks of the block's weight rows and tokens; each
 * warp keeps 32 rows x WARP_TOKENS(WK) tokens of all WK chains. */
#ifndef BF16FP32__SMALLM_WIDE_STAGES
#define BF16FP32__SMALLM_WIDE_STAGES 2
#endif
/* A tile kernel's stage holds `subs` (4, 5 or 7) sub-chunks, copied as one box per operand of
 * subs | 1 sub-chunks (4 leaves the box's last sub-chunk a pad that is never read): a row pitch
 * of 64 (subs | 1) bytes, 64 mod 128, keeps the 16-byte fragment reads of rows g and g + 1 in
 * different banks. */
#define BF16FP32__SMALLM_TILE_PITCH(subs) (64 * ((subs) | 1))
/* The stream kernel's largest stage: 7 sub-chunks, a box 224 wide (a box is at most 256). */
#define BF16FP32__SMALLM_STREAM_MAX_SUBS 7
/* The share kernel's shared memory begins with one 64-byte line for its barriers (weights, x's
 * rows, the late weight columns). */
#define BF16FP32__SMALLM_SHARE_BARS 64
/* The stream kernel's shared memory begins with one 64-byte line of stage barriers per warp. */
#define BF16FP32__SMALLM_STREAM_BARS (64 * BF16FP32__SMALLM_WARPS)
#define BF16FP32__SMALLM_WIDE_WARP_TOKENS(wk) ((wk) <= 4 ? 32 : 16)

/* The wgmma kernel (smallm-wgmma-sm90a.cu): the wide kernel's tiles on warpgroup MMAs, each
 * warpgroup 64 rows x WG tokens (32 or 64) of all WK chains (WK = 4 or 8; 64 tokens at WK = 4
 * only), with a ring of WG_STAGES buffers and the stage's x tile rewritten as core matrices. */
#ifndef BF16FP32__SMALLM_WG_STAGES
#define BF16FP32__SMALLM_WG_STAGES 3
#endif

/* The split fixes every output's summation order, so it depends on (N, K, SM count) only,
 * never on M: that is what makes the backend batch-invariant. */
typedef struct bf16fp32__smallm_split {
  int rows;   /* R: rows of w (output columns) per block: 16, 32, 64 or 128, dividing N */
  int ksplit; /* S: blocks of one cluster, each summing one K slice (1..8) */
  int kwarps; /* WK = 128 / R: warp groups of a block; group g sums its own contiguous range
                 of the slice's 32-wide sub-chunks (bf16fp32__smallm_chain), in increasing
                 order (the 8 / WK warps of a group own 16 rows each) */
  int decode_mask; /* which token tilings run the decode kernel: bit b for mt = 2^b (b = 0..3,
                      M <= 64); the other M run the tiled kernel. Both sum alike, so this is
                      speed only, never bits. */
} bf16fp32__smallm_split;

/* One launch: the split plus the M-dependent batching (which never changes the sums). */
typedef struct bf16fp32__smallm_config {
  bf16fp32__smallm_split split;
  int mt;      /* 8-token MMA tiles per warp: 1, 2, 4, 8, 16 or 32 (every warp has all tokens) */
  int mpad;    /* tokens staged: 8 * mt (rows past M are zeros) */
  int sb;      /* sub-chunks per warp per batch (<= BF16FP32__SMALLM_SB_MAX(mt)) */
  int xk;      /* K elements of x staged per batch: sb * kwarps * 32 */
  int nb;      /* batches of the longest slice */
  int dbuf;    /* x batches double-buffered (else one buffer, reloaded between batches) */
  int threads; /* BF16FP32__SMALLM_THREADS */
  int grid_x;  /* = ksplit (the cluster) */
  int grid_y;  /* = N / rows */
  size_t xbuf_bytes; /* one x batch buffer */
  size_t smem_bytes; /* dynamic shared memory of one block */
  /* The decode kernel (m <= BF16FP32__SMALLM_DECODE_MAX_M): */
  int decode;         /* 1: run it (the fields above then only give mt, mpad and the grid) */
  int deep;           /* 1: twice the weight sub-chunks in flight per lane (mt <= 2, a grid of
                         at most one block per SM, more sub-chunks per warp than the usual ring) */
  size_t decode_smem; /* the partial sums: kwarps * mpad * (rows + 4) floats */
  /* The wide kernel (set by bf16fp32__smallm_use_wide; of the fields above it uses only the
   * split, and sets its own threads and grid at launch): */
  int wide;          /* 1: run it */
  int wide_rows;     /* weight rows per block (a multiple of 32 dividing N) */
  int wide_tokens;   /* tokens per block (a multiple of BF16FP32__SMALLM_WIDE_WARP_TOKENS(WK));
                        warps: rows / 32 * tokens / WARP_TOKENS */
  size_t wide_smem;  /* 128 bytes for the ring's barriers, then the ring or the block sums
                        (tokens * (rows + 4) floats), whichever is larger; with groups, the ring
                        and then one such set per chain of a group */
  int wide_subs;     /* sub-chunks per ring buffer: 4, 5 or 7 (bf16fp32__smallm_use_tile_subs) */
  int wide_groups;   /* P: with one K slice, a cluster of P blocks shares each output tile, rank
                        r summing chains r WK / P .. (r + 1) WK / P - 1 (set by
                        bf16fp32__smallm_use_groups); 1: one block sums all chains */
  /* The wgmma kernel (set by bf16fp32__smallm_use_wgmma; uses the wide_ fields too): */
  int wgmma;         /* 1: run it instead of the wide kernel */
  int wg_tokens;     /* tokens per warpgroup: 32 or 64 */
  /* The stream kernel (set by bf16fp32__smallm_use_stream; uses the split, mt, mpad and grid): */
  int stream;          /* 1: run it */
  int stream_subs;     /* sub-chunks per stage, 1 to 7 (an odd count: the whole box, no pad) */
  int stream_stages;   /* ring stages per ring */
  int stream_groups;   /* 1: a ring per warp; 2: a cluster of two blocks shares 32 rows, the two
                          warps of a chain one ring (bf16fp32__smallm_use_stream) */
  size_t stream_smem;  /* the rings' barriers, the rings and the partial sums (after the rings,
                          or over them: stream_over) */
  int stream_over;     /* 1: the partial sums over the rings, once every warp is done with its
                          ring (with groups, or where the block would not fit otherwise) */
  int stream_wl2;      /* 1: under programmatic dependent launch, the weight boxes past the first
                          ring fill are also requested into L2 before griddepcontrol.wait (set by
                          smallm-probe; no table entry since session 45) */
  int stream_tblocks;  /* blocks along the tokens, 64 tokens each but the last: 1 up to M = 64,
                          more above (bf16fp32__smallm_use_stream_tokens) */
  int stream_early;    /* 1: under programmatic dependent launch, the next call may launch once
                          every block has entered, not once every block has passed its wait */
  int stream_pair;     /* 1: paired launches (bf16fp32__smallm_stream_pair) */
  /* The share kernel (set by bf16fp32__smallm_use_share; uses the split, mt, mpad and grid): */
  int share;           /* 1: run it */
  int share_pitch;     /* bytes per weight or token row in shared memory: the longest slice's
                          sub-chunks, rounded up to odd, times 64 */
  size_t share_smem;   /* its barriers, then the weight and token rows (the partial sums over
                          them once the block is done with them) */
  int share_xreg;      /* 1: each lane reads its x fragments from global memory into registers
                          after griddepcontrol.wait (no token rows in shared memory) */
  int share_xwide;     /* with share_xreg: a warp's range is longer than
                          BF16FP32__SMALLM_XREG_SUBS sub-chunks (one token tile only; set by
                          bf16fp32__smallm_use_share, not a choice of its own) */
  int share_wpre;      /* 1, 2: each lane reads its weight fragments from shared memory into
                          registers before griddepcontrol.wait (1) or once x's rows are on
                          their way (2); 0: next to x's, sub-chunk by sub-chunk */
  int share_late;      /* the last share_late warp groups' weight columns are copied after
                          griddepcontrol.wait, the others' before it; 0: all before it
                          (bf16fp32__smallm_share_late) */
  int share_late_l2;   /* 1: under programmatic dependent launch the late columns are also
                          requested into L2 before the wait, so that their copies after it
                          read L2 (bf16fp32__smallm_share_late) */
  int share_tiles;     /* the split's row blocks (same K slice, neighbours along N) one share
                          block holds: 1, or 2 with each warp summing its rows of both (the
                          grid along N halved; bf16fp32__smallm_share_tiles) */
  /* The fold kernel (set by bf16fp32__smallm_use_fold; uses the split, the grid (one block
   * per BF16FP32__SMALLM_FOLD_ROWS rows, no cluster) and mpad): */
  int fold;          /* 1: run it */
  int fold_pitch;    /* bytes per weight row in shared memory: the row's sub-chunks (every
                        slice but the last ends at one's end) rounded up to an odd count, x 64 */
  size_t fold_smem;  /* its barrier, then the rows (the chains' sums over them at the end) */
  int fold_xn;       /* x's sub-chunks a lane holds per chain: 4 or 8 (the longest chain's) */
} bf16fp32__smallm_config;

/* The fold kernel's weight rows per block (one 16-row MMA tile), its largest M, and the most
 * sub-chunks of x a lane holds per chain (its instances hold 4 or 8). */
#define BF16FP32__SMALLM_FOLD_ROWS 16
#define BF16FP32__SMALLM_FOLD_MAX_M 8
#define BF16FP32__SMALLM_FOLD_MAX_SUBS 8

/* The shapes the kernel handles (DESIGN: shape.align is the pointers' common alignment). */
int bf16fp32__smallm_shape_ok(int64_t m, int64_t n, int64_t k, int64_t ldx, int64_t ldw,
                              int64_t ldo, int align);

/* The split for (n, k) on a device with sm_count multiprocessors. Returns 0, or -1 when n is
 * not a multiple of 16 or the sizes are not positive. */
int bf16fp32__smallm_choose_split(int64_t n, int64_t k, int sm_count, bf16fp32__smallm_split *s);

/* The full configuration for (m, n, k); smem_limit is the per-block opt-in limit. Returns 0,
 * or -1 when the shape is not handled or nothing fits in smem_limit. */
int bf16fp32__smallm_choose(int64_t m, int64_t n, int64_t k, int sm_count, size_t smem_limit,
                            bf16fp32__smallm_config *c);

/* The same with the split given (rows 16..128 dividing n, kwarps = 128 / rows, ksplit 1..8
 * and at most the number of 32-wide sub-chunks, decode_mask 0..15): for tests and timing
 * experiments. */
int bf16fp32__smallm_choose_with(int64_t m, int64_t n, int64_t k, const bf16fp32__smallm_split *split,
                                 size_t smem_limit, bf16fp32__smallm_config *c);

/* Switches c (chosen for this n) to the wide kernel with blocks of rows x tokens. Returns 0,
 * or -1 when rows or tokens do not fit (rows a multiple of 32 dividing n, tokens a multiple of
 * the warp's, at most 8 warps, at most 256 of each (one bulk-copy box), shared memory within
 * smem_limit). Any block shape sums alike: for tests and timing experiments. */
int bf16fp32__smallm_use_wide(bf16fp32__smallm_config *c, int64_t n, int rows, int tokens,
                              size_t smem_limit);

/* Splits each wide-kernel tile of c over a cluster of `groups` blocks, each summing WK / groups
 * of the slice's chains; rank 0 adds its chains as one block would, the others keep each chain's
 * sum apart, and the cluster adds them after rank 0's in chain order, so the sums are those of
 * one block (bits included). Returns 0, or -1 when c is not the wide kernel on one K slice, WK
 * is not a multiple of groups, the pull would take more than 8 sets, or the shared memory does
 * not fit smem_limit. For splits of one slice, whose single block per tile walks all of K. */
int bf16fp32__smallm_use_groups(bf16fp32__smallm_config *c, int groups, size_t smem_limit);

/* Switches c (chosen for m <= 64 tokens, not the wide kernel) to the stream kernel: the decode
 * kernel's sums with the weights and x brought in by bulk copies, in stages of `subs` sub-chunks
 * (1 to 7; an even count leaves its box's last sub-chunk a pad), up to `stages` per ring (at
 * least 2 within smem_limit). groups = 2: a cluster of two blocks shares each 32 rows, rank r
 * summing chains 4r .. 4r + 3 and the two warps of a chain sharing a ring (so x is fetched once
 * per 32 rows), the chains added in chain order as one block adds them; only for splits of 16
 * rows, one K slice. Returns 0, or -1 when c is the wide kernel, m does not match its token
 * tiles, subs, stages or groups are out of range or do not apply, or nothing fits. */
int bf16fp32__smallm_use_stream(bf16fp32__smallm_config *c, int64_t m, int subs, int stages,
                                int groups, size_t smem_limit);

/* Switches c (chosen for (m, n, k), m <= 64: only its split is kept) to the share kernel: each
 * block copies its whole share of the weights (its rows' K slice, one bulk copy per row) into
 * shared memory at entry, which under programmatic dependent launch is before
 * griddepcontrol.wait, and x's slice after it: one copy per token row, or with xreg (m <= 16)
 * each lane's fragments into registers (where no warp's range is longer than
 * BF16FP32__SMALLM_XREG_SUBS sub-chunks, or BF16FP32__SMALLM_XREG_WIDE_SUBS at m <= 8: then
 * c->share_xwide); then the decode kernel's sums. wpre (not with xreg,
 * the same range limit): c->share_wpre. Returns 0, or -1 (c unchanged) when m is not 1-64, xreg
 * or wpre does not apply, or the rows do not fit smem_limit. */
int bf16fp32__smallm_use_share(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                               int xreg, int wpre, size_t smem_limit);

/* Sets c->share_late and c->share_late_l2 for the share kernel chosen in c: the weight columns of
 * the last `late` of its kwarps warp groups are copied after griddepcontrol.wait (on a barrier of
 * their own, which only those groups' warps wait for), so that under programmatic dependent
 * launch fewer of a call's reads are still in flight when the previous call ends: the wait is
 * released only once they have landed (docs/smallm-notes.md, session 26). With l2 = 1 those
 * columns are also requested into L2 before the wait, which holds the wait far less than a copy
 * into shared memory (bench/pdl-drain.cu), so that their copies after it read L2 (session 30).
 * Returns 0, or -1 (c unchanged) when c is not the share kernel, late is not 0 to kwarps - 1,
 * l2 is not 0 or 1 or is 1 with no late group, or late > 0 where the weight fragments are read
 * into registers (share_wpre 1 or 2) or x's are held in the wide form (share_xwide). */
int bf16fp32__smallm_share_late(bf16fp32__smallm_config *c, int late, int l2);

/* Bytes of c's share-kernel shared memory (at its end) that the push's receive slots take. */
size_t bf16fp32__smallm_share_recv(const bf16fp32__smallm_config *c, int64_t m);

/* Sets c->share_tiles for the share kernel chosen in c for m tokens: with tiles = 2 each block
 * holds two neighbouring row blocks of the split (same K slice), its warps summing their rows of
 * both with the same x fragments, so that the grid has half the blocks (under programmatic
 * dependent launch the next call's blocks then find SMs of their own: docs/smallm-notes.md,
 * session 31); every output is summed as before (bits included). Returns 0, or -1 (c unchanged) when c is not the share
 * kernel, tiles is not 1 or 2, the weight fragments are read into registers (share_wpre), the
 * row blocks do not pair up, or the rows do not fit smem_limit. */
int bf16fp32__smallm_share_tiles(bf16fp32__smallm_config *c, int64_t m, int tiles,
                                 size_t smem_limit);

/* Switches c (chosen for (m, n, k): only its split is kept) to the fold kernel: a block holds
 * BF16FP32__SMALLM_FOLD_ROWS weight rows over all K slices of the split and sums all of their
 * ksplit x kwarps chains, which its eight warps share (2 or 4 each), then adds them in the
 * block and cluster sums' order, with no cluster (smallm-fold.cu); the bits are every other
 * kernel's. Returns 0, or -1 (c unchanged) when m is not 1 to BF16FP32__SMALLM_FOLD_MAX_M, the
 * chains are not 16 or 32, one is longer than 8 sub-chunks, or the rows do not fit smem_limit. */
int bf16fp32__smallm_use_fold(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                              size_t smem_limit);

/* Switches c, chosen by bf16fp32__smallm_choose_for's other tables for (m, n, k), to the fold
 * kernel where that measured faster on the H200 (the launch kind use_pdl). */
void bf16fp32__smallm_prefer_fold(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                  int sm_count, int use_pdl, size_t smem_limit);

/* bf16fp32__smallm_use_stream with exactly `stages` stages and the partial sums after the rings
 * (over = 0) or over them (over = 1): the variants' form (smallm-variant.h). Returns 0, or -1
 * where that does not apply or fit. */
int bf16fp32__smallm_use_stream_at(bf16fp32__smallm_config *c, int64_t m, int subs, int stages,
                                   int groups, int over, size_t smem_limit);

/* Raises the stream or share kernel's shared memory (c->stream_smem, c->share_smem) past half
 * of what an SM holds where two of its blocks would fit one SM and its grid is at most one
 * block per SM (sm_count): started while a predecessor's blocks still held the SMs (under PDL,
 * behind a kernel that lets it launch early), such blocks cost a decode step up to 4.9 us per
 * call more (two to an SM, as read from the step times; the placement was not traced), though
 * back-to-back calls of one shape gain from it (the next call's block starts beside this one).
 * The tables' defaults and the variants of their form (smallm-variant.c) take it; a stream
 * entry marked `two` (which asks for two blocks per SM) and paired launches do not. */
void bf16fp32__smallm_one_per_sm(bf16fp32__smallm_config *c, int sm_count, size_t smem_limit);

/* Switches c, chosen for m > 64 tokens, to the stream kernel in blocks of 64 tokens (the last
 * block the rest) along a third grid dimension: each block runs as for M = 64 (the same split,
 * stages of `subs`, up to `stages`, `groups`), so every row is summed as in any other kernel.
 * Returns 0, or -1 when m is not 65-256 or the stages do not fit (bf16fp32__smallm_use_stream
 * at M = 64). */
int bf16fp32__smallm_use_stream_tokens(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                       int subs, int stages, int groups, size_t smem_limit);

/* bf16fp32__smallm_use_stream_tokens with the stages and layout exact, as
 * bf16fp32__smallm_use_stream_at. */
int bf16fp32__smallm_use_stream_tokens_at(bf16fp32__smallm_config *c, int64_t m, int64_t n,
                                          int64_t k, int subs, int stages, int groups, int over,
                                          size_t smem_limit);

/* Switches c, chosen by bf16fp32__smallm_choose for (m, n, k), to the stream kernel where that
 * measured faster on the H200: with use_pdl (programmatic dependent launch) and without it;
 * above M = 64 in blocks of 64 tokens. */
void bf16fp32__smallm_prefer_stream(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                    int sm_count, int use_pdl, size_t smem_limit);

/* Switches c, chosen by bf16fp32__smallm_choose (and bf16fp32__smallm_prefer_stream) for
 * (m, n, k), to the share kernel where that measured faster on the H200: at some shapes up to
 * M = 64, mostly under programmatic dependent launch (use_pdl). */
void bf16fp32__smallm_prefer_share(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                   int sm_count, int use_pdl, size_t smem_limit);

/* Switches c, chosen by bf16fp32__smallm_choose for a shape the tables above do not name (no
 * measured split on 132 SMs), to the share, fold or stream kernel where those measured faster
 * than the chooser's kernel on an H100 SXM, by N range, K, launch kind (use_pdl) and M up to
 * 32. */
void bf16fp32__smallm_prefer_generic(bf16fp32__smallm_config *c, int64_t m, int64_t n, int64_t k,
                                     int sm_count, int use_pdl, size_t smem_limit);

/* Paired launches. Under programmatic dependent launch a call's blocks take the room each SM
 * frees as the previous call ends, as many to an SM as fit: a call whose blocks take at most half
 * an SM then sits beside the previous call of its shape (one block each: the overlap that makes
 * such stagings fast one shape at a time) but lands two to an SM on half the SMs behind a call of
 * larger blocks (docs/smallm-notes.md, session 59: `bench/pdl-place.cu`). Paired, consecutive
 * calls alternate two footprints that fit an SM together but neither twice: one with more than
 * half the shared memory, one with more than half the registers (extra warps that leave at
 * entry). What fits is the device's (bf16fp32__smallm_stream_pair_fit). */
typedef struct bf16fp32__smallm_pair {
  int threads[2];  /* the register-heavy footprint's threads at mt = 1, 2 (their instances'
                      registers differ); 0: no pair fits this device */
  size_t smem;     /* the other footprint's dynamic shared memory (more than half an SM) */
  size_t max_smem; /* the most a paired configuration may take, for the two to fit together */
} bf16fp32__smallm_pair;

/* Whether c can be launched paired (the stream kernel, a ring per warp, mt <= 2 token tiles,
 * under PDL: use_pdl), and marks c for paired launches where it can (0, else -1). */
int bf16fp32__smallm_pair_applies(const bf16fp32__smallm_config *c, int use_pdl);
int bf16fp32__smallm_stream_pair(bf16fp32__smallm_config *c, int use_pdl);

/* The footprint of call number `call` of a paired configuration on this device: odd calls the
 * register-heavy one (c->threads), even ones the one with more shared memory (c->stream_smem).
 * Launched plainly (use_pdl = 0) c runs unpaired; where no pair fits, with its own footprint. */
void bf16fp32__smallm_pair_footprint(bf16fp32__smallm_config *c, const bf16fp32__smallm_pair *p,
                                     int use_pdl, unsigned call);

/* What a call of (m, n, k) runs by default: bf16fp32__smallm_choose, then the stream, share
 * and fold tables for the launch kind, then (shapes they do not name) the generic one. Returns 0,
 * or -1 when the shape is not handled. */
int bf16fp32__smallm_choose_for(int64_t m, int64_t n, int64_t k, int sm_count, int use_pdl,
                                size_t smem_limit, bf16fp32__smallm_config *c);

/* Switches c (the wide or wgmma kernel) to ring buffers of `subs` sub-chunks: 4, 5 or 7. The
 * stages only group the sub-chunks, so every stage size sums alike. Returns 0, or -1 when c is
 * not a tile kernel, subs is another count, or the ring does not fit smem_limit: for tests and
 * timing experiments. */
int bf16fp32__smallm_use_tile_subs(bf16fp32__smallm_config *c, int subs, size_t smem_limit);

/* Switches c to the wgmma kernel with blocks of rows (64 or 128) x tokens (32, 64 or 128, a
 * multiple of wg_tokens; at most 2 warpgroups). Returns 0, or -1 when the split's WK is not 4
 * or 8, or the block does not fit n or smem_limit. Sums like every other kernel. No shape
 * chooses it (the wide kernel measured faster on the H200 since session 6): for tests and
 * timing experiments. */
int bf16fp32__smallm_use_wgmma(bf16fp32__smallm_config *c, int64_t n, int rows, int tokens,
                               int wg_tokens, size_t smem_limit);

/* --- shared by the kernel and the host (the same formula on both sides) --- */

/* K slice [*k0, *k1) of cluster rank `rank`: the 32-wide sub-chunks split as evenly as integer
 * division allows; the last slice ends at k (a multiple of 8). */
static inline BF16FP32__SMALLM_HD void bf16fp32__smallm_slice(int64_t k, int ksplit, int rank,
                                                               int64_t *k0, int64_t *k1) {
  int64_t subs = (k + 31) / 32;
  int64_t a = subs * rank / ksplit * 32, b = subs * (rank + 1) / ksplit * 32;
  *k0 = a;
  *k1 = b < k ? b : k;
}

/* Every K slice's bounds, as the kernels' arguments carry them: slice r is [k[r], k[r + 1]),
 * bf16fp32__smallm_slice's, found on the host so that no block divides 64-bit values at its
 * start (docs/smallm-notes.md, session 16). */
typedef struct bf16fp32__smallm_slices {
  int k[BF16FP32__SMALLM_MAX_SPLIT + 1];
} bf16fp32__smallm_slices;
static inline void bf16fp32__smallm_fill_slices(int64_t k, int ksplit,
                                                bf16fp32__smallm_slices *s) {
  for (int r = 0; r < ksplit && r < BF16FP32__SMALLM_MAX_SPLIT; r++) {
    int64_t k0, k1;
    bf16fp32__smallm_slice(k, ksplit, r, &k0, &k1);
    s->k[r] = (int)k0;
  }
  s->k[ksplit < BF16FP32__SMALLM_MAX_SPLIT ? ksplit : BF16FP32__SMALLM_MAX_SPLIT] = (int)k;
}

/* The stream kernel's boxes hold an odd number of 32-wide sub-chunks (a stage of `subs`, rounded
 * up to odd: the last one then a pad): a row pitch of 64 x odd bytes, 64 mod 128, keeps the
 * 16-byte fragment reads of rows g and g + 1 in different banks. */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_stream_box_subs(int subs) { return subs | 1; }
/* One stage of the stream kernel's rings: wrows weight rows (16 per warp sharing the ring) and m
 * token rows of that pitch, rounded up to the 128 bytes a bulk copy's destination needs. */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_stream_stage_bytes(int64_t m, int subs,
                                                                          int wrows) {
  return (int)(((wrows + m) * 64 * bf16fp32__smallm_stream_box_subs(subs) + 127) / 128 * 128);
}

/* Sub-chunks a lane of the share kernel holds in registers: a warp's whole range, up to 8
 * sub-chunks of x (share_xreg, up to 16 tokens: 2 x 8 uint4) or of its weight rows (share_wpre,
 * 2 x 8 uint4); with one token tile (M <= 8) up to 16 of x (share_xwide: 16 uint4), so that a
 * block whose weight rows take all of its shared memory needs none for x (1024x7168 with two
 * row blocks per block). */
#define BF16FP32__SMALLM_XREG_SUBS 8
#define BF16FP32__SMALLM_XREG_WIDE_SUBS 16

/* log2 of a split's warp groups, which are 1, 2, 4 or 8 (128 / rows): 0, 1, 2, 3. The kernels'
 * place arithmetic shifts by it instead of dividing: a division by a runtime value is some 150
 * cycles of a lone warp, paid at every block's start before its first load or copy (1.5-3.6 % of
 * a plain call at small N on the H200; docs/smallm-notes.md, session 16). */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_kwarps_log2(int kwarps) {
  return (kwarps >> 1) - (kwarps >> 3);
}

/* Sub-chunks [*j0, *j1) of a slice of nsubs that warp group wk of kwarps sums: contiguous
 * ranges of chain_len = ceil(nsubs / kwarps), the last ones shorter or empty. One range per
 * group (not every kwarps-th sub-chunk) keeps each group's weight reads in order along its rows,
 * and lets a kernel that visits the slice in k order finish one group's sum before the next
 * begins. */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_chain_len(int nsubs, int kwarps) {
  return (nsubs + kwarps - 1) >> bf16fp32__smallm_kwarps_log2(kwarps);
}
static inline BF16FP32__SMALLM_HD void bf16fp32__smallm_chain(int nsubs, int wk, int kwarps,
                                                               int *j0, int *j1) {
  const int per = bf16fp32__smallm_chain_len(nsubs, kwarps);
  const int a = wk * per, b = a + per;
  *j0 = a < nsubs ? a : nsubs;
  *j1 = b < nsubs ? b : nsubs;
}

/* Sub-chunks [*j0, *j1) of a slice of nsubs that rank r of `groups` sums when the wide kernel's
 * tiles are shared (bf16fp32__smallm_use_groups): the chains r * kwarps / groups onwards, as
 * many as kwarps / groups. */
static inline BF16FP32__SMALLM_HD void bf16fp32__smallm_group(int nsubs, int r, int kwarps,
                                                               int groups, int *j0, int *j1) {
  const int per = bf16fp32__smallm_chain_len(nsubs, kwarps), chains = kwarps / groups;
  const int a = r * chains * per, b = a + chains * per;
  *j0 = a < nsubs ? a : nsubs;
  *j1 = b < nsubs ? b : nsubs;
}

/* The cluster sum's shares (smallm-cluster-sum.cuh): rank q of S finishes units
 * [share(q), share(q + 1)) of a block's `units` (four rows of one token each). */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_share(int q, int units, int ksplit) {
  return units * q / ksplit;
}
/* The rank whose share holds unit u: the largest q with share(q) <= u. */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_owner(int u, int units, int ksplit) {
  return ((u + 1) * ksplit - 1) / units;
}

/* The share kernel's push (smallm-cluster-sum.cuh): each rank's slot in a receiving rank holds
 * the units that rank finishes (at most ceil(units / ksplit)), 16 bytes each. In float4s. */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_push_slot(int units, int ksplit) {
  return (units + ksplit - 1) / ksplit;
}

/* Byte offset of staged token row r in an x buffer of xk elements per row. Rows go in pairs
 * with 64 bytes between the two, so that the 16-byte reads of a warp (rows g and g + 1 in one
 * phase, 64 bytes each) fall in different banks. */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_rowoff(int r, int xk) {
  return (r >> 1) * (4 * xk + 64) + (r & 1) * (2 * xk + 64);
}

/* Bytes of `rows` staged rows (rows even). */
static inline BF16FP32__SMALLM_HD int bf16fp32__smallm_rows_bytes(int rows, int xk) {
  return (rows >> 1) * (4 * xk + 64);
}

#ifdef __cplusplus
}
#endif
#endif
