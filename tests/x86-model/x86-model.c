/* The model's tile state and tile instructions (x86-model.h), and its bf16 arithmetic. */
#include "x86-model.h"

#include <stdatomic.h>
#include <stdio.h>

/* What the instructions fault on, counted over all threads; the first one's text kept. */
static _Atomic long faults;
static _Atomic int first_taken;
static char first[160];

long x86_model_faults(void) { return atomic_load(&faults); }
const char *x86_model_first_fault(void) { return atomic_load(&faults) ? first : ""; }

void x86_model_fault(const char *what) {
  if (!atomic_exchange(&first_taken, 1)) snprintf(first, sizeof first, "%s", what);
  atomic_fetch_add(&faults, 1);
}

/* Palette 1 of the first AMX processors: 8 tiles of up to 16 rows of 64 bytes. */
#define TILES 8
#define MAX_ROWS 16
#define MAX_COLSB 64

/* LDTILECFG's 64-byte operand. */
typedef struct config_bytes {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} config_bytes;

/* A thread's tiles, as the instructions leave them. */
typedef struct tile_state {
  int configured;
  int rows[TILES], colsb[TILES];
  uint8_t data[TILES][MAX_ROWS][MAX_COLSB];
} tile_state;

static _Thread_local tile_state tiles;

int x86_model_tiles_configured(void) { return tiles.configured; }

void x86_model_tile_release(void) { memset(&tiles, 0, sizeof tiles); }

void x86_model_tile_loadconfig(const void *config) {
  config_bytes c;
  memcpy(&c, config, sizeof c);
  if (c.palette == 0) { /* the initial state, as TILERELEASE leaves it */
    x86_model_tile_release();
    return;
  }
  if (c.start_row != 0) { /* legal: a restart after an interrupt, which the model does not do */
    x86_model_fault("LDTILECFG: a restart row (start_row), not modelled");
    return;
  }
  int ok = c.palette == 1;
  for (int i = 0; i < 14; i++) ok &= c.reserved[i] == 0;
  for (int t = 0; t < 16; t++) {
    const int rows = c.rows[t], colsb = c.colsb[t];
    if (t >= TILES) ok &= rows == 0 && colsb == 0;
    else ok &= rows <= MAX_ROWS && colsb <= MAX_COLSB && (rows == 0) == (colsb == 0);
  }
  if (!ok) {
    x86_model_fault("LDTILECFG: a configuration the hardware refuses (#GP)");
    return;
  }
  memset(&tiles, 0, sizeof tiles);
  tiles.configured = 1;
  for (int t = 0; t < TILES; t++) tiles.rows[t] = c.rows[t], tiles.colsb[t] = c.colsb[t];
}

/* Tile t exists and is configured; else the instruction faults (#UD). */
static int usable(int t, const char *op) {
  if (t >= 0 && t < TILES && tiles.configured && tiles.rows[t] > 0) return 1;
  char what[96];
  snprintf(what, sizeof what, "%s: tile %d used unconfigured (#UD)", op, t);
  x86_model_fault(what);
  return 0;
}

void x86_model_tile_loadd(int t, const void *base, int64_t stride) {
  if (!usable(t, "TILELOADD")) return;
  memset(tiles.data[t], 0, sizeof tiles.data[t]);
  for (int r = 0; r < tiles.rows[t]; r++)
    memcpy(tiles.data[t][r], (const char *)base + r * stride, (size_t)tiles.colsb[t]);
}

void x86_model_tile_stored(int t, void *base, int64_t stride) {
  if (!usable(t, "TILESTORED")) return;
  for (int r = 0; r < tiles.rows[t]; r++)
    memcpy((char *)base + r * stride, tiles.data[t][r], (size_t)tiles.colsb[t]);
}

void x86_model_tile_zero(int t) {
  if (usable(t, "TILEZERO")) memset(tiles.data[t], 0, sizeof tiles.data[t]);
}

static uint16_t bf16_at(int t, int row, int index) {
  uint16_t h;
  memcpy(&h, &tiles.data[t][row][2 * index], 2);
  return h;
}

/* TDPBF16PS c += a b: a's row m (k pairs) with b's rows (pair n of each); per output element, the
 * even and the odd products in two chains over k, their sum then added to c. */
void x86_model_tile_dpbf16ps(int c, int a, int b) {
  if (!usable(c, "TDPBF16PS") || !usable(a, "TDPBF16PS") || !usable(b, "TDPBF16PS")) return;
  if (c == a || c == b || a == b || tiles.colsb[a] % 4 || tiles.colsb[c] % 4 ||
      tiles.colsb[a] / 4 != tiles.rows[b] || tiles.colsb[c] != tiles.colsb[b] ||
      tiles.rows[c] != tiles.rows[a]) {
    x86_model_fault("TDPBF16PS: tiles whose shapes do not agree, or one tile twice (#UD)");
    return;
  }
  for (int m = 0; m < tiles.rows[c]; m++)
    for (int n = 0; n < tiles.colsb[c] / 4; n++) {
      float chain[2] = {0.0f, 0.0f};
      for (int k = 0; k < tiles.colsb[a] / 4; k++)
        for (int e = 0; e < 2; e++)
          chain[e] = x86_model_fma(x86_model_bf16(bf16_at(a, m, 2 * k + e)),
                                   x86_model_bf16(bf16_at(b, k, 2 * n + e)), chain[e]);
      float sum;
      memcpy(&sum, &tiles.data[c][m][4 * n], 4);
      sum = x86_model_ftz(x86_model_ftz(sum) + x86_model_ftz(chain[0] + chain[1]));
      memcpy(&tiles.data[c][m][4 * n], &sum, 4);
    }
}

float x86_model_ftz(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
  memcpy(&f, &u, 4);
  return f;
}

float x86_model_bf16(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return x86_model_ftz(f);
}

float x86_model_fma(float a, float b, float c) {
  return x86_model_ftz((float)((double)x86_model_ftz(c) + (double)a * (double)b));
}
