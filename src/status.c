/* The status table (names and messages from one X-macro list) and the thread-local last error. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static const char *const status_names[] = {
#define BF16FP32_STATUS_NAME(name, msg) #name,
    BF16FP32_STATUS_MAP(BF16FP32_STATUS_NAME)
#undef BF16FP32_STATUS_NAME
};

static const char *const status_messages[] = {
#define BF16FP32_STATUS_MESSAGE(name, msg) msg,
    BF16FP32_STATUS_MAP(BF16FP32_STATUS_MESSAGE)
#undef BF16FP32_STATUS_MESSAGE
};

/* Per-thread detail of the last failure: the one piece of state outside a context. */
static _Thread_local char last_error[512];

const char *bf16fp32_status_name(bf16fp32_status s) {
  if ((int)s < 0 || s >= BF16FP32_STATUS_COUNT) return "UNKNOWN_STATUS";
  return status_names[s];
}

const char *bf16fp32_status_message(bf16fp32_status s) {
  if ((int)s < 0 || s >= BF16FP32_STATUS_COUNT) return "unknown status value";
  return status_messages[s];
}

const char *bf16fp32_last_error(void) { return last_error; }

/* Counts the writes of last_error, so that a caller can tell whether the text is new: part of the
 * same per-thread record. */
static _Thread_local unsigned error_serial;

void bf16fp32__clear_error(void) {
  last_error[0] = '\0';
  error_serial++;
}

unsigned bf16fp32__error_serial(void) { return error_serial; }

bf16fp32_status bf16fp32__fail(bf16fp32_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  error_serial++;
  va_end(ap);
  return s;
}
