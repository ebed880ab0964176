/* `bf16fp32 bench`: times every backend, auto and the vendor baseline on a shape suite by the
 * protocol of MEASURING.md (GPU) or against oneDNN (CPU), or one decode step of a model. */
#ifndef BF16FP32_TOOLS_BENCH_H
#define BF16FP32_TOOLS_BENCH_H

/* argv[0] is "bench". Returns the exit code: 0, 1 (a failure or a wrong result), 2 (usage). */
int bench_main(int argc, char **argv);

#endif
