/* The built-in tuning table: measurements shipped with the library, used for the (location,
 * N, K) pairs a user's tuning file does not cover when this machine's hardware matches.
 * Generated data: regenerate with `bf16fp32 tune --suite FILE --emit-c src/tune-builtin.c`. */
#include "tune-table.h"

const bf16fp32__tune_builtin bf16fp32__tune_builtin_table = {
    .header =
        {
            .format = 1,
            .library = "",
            .has_gpu = false,
            .has_cpu = false,
        },
    .entries = NULL,
    .count = 0,
};
