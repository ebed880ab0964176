// smallm-probe --stream-groups: the stream kernel with a cluster of two or four blocks per tile
// (bf16fp32__smallm_use_stream's groups; above M = 64 in token blocks) against the library's
// choice, plainly and under PDL, in --rounds interleaved rounds (median of each). Four blocks
// per tile fetch x once per 64 rows instead of 32 (groups = 2) or 16 (a ring per warp). Before
// timing, every variant's whole poisoned output is compared with the choice's, bit for bit,
// under the same launch kind ('!' marks a difference and counts as a failure). Only splits of 16
// rows over one K slice take groups (N = 2048 on the H200).
namespace groups {

struct Kind {
  int subs, stages, groups;
};
static const Kind kinds[] = {{1, 4, 2}, {3, 3, 2}, {1, 3, 4}, {1, 4, 4}, {1, 6, 4},
                             {3, 2, 4}, {3, 3, 4}, {5, 2, 4}};

// kind k for the cell (false where it does not apply or fit)
static bool variant_of(const Rot &r, const Kind &k, bf16fp32__smallm_config *c) {
  const int64_t m = r.m;
  if (bf16fp32__smallm_choose(m, r.n, r.k, g_sms, g_smem, c) != 0) return false;
  if (m > BF16FP32__SMALLM_DECODE_MAX_M)
    return bf16fp32__smallm_use_stream_tokens(c, m, r.n, r.k, k.subs, k.stages, k.groups,
                                              g_smem) == 0;
  return bf16fp32__smallm_use_stream(c, m, k.subs, k.stages, k.groups, g_smem) == 0;
}

static void timing(const std::vector<int> &mlist) {
  printf("\nstream groups (us per call, median of %d rounds, plain / pdl): N K M | choice |"
         " subs x stages g groups [smem KB]: plain pdl ...\n", g_rounds);
  for_cells(mlist, [&](Rot &r) {
    std::vector<bf16fp32__smallm_config> vs;
    std::vector<Kind> ks;
    for (const Kind &k : kinds) {
      bf16fp32__smallm_config c;
      if (variant_of(r, k, &c)) vs.push_back(c), ks.push_back(k);
    }
    if (vs.empty()) return; /* no groups at this split */
    std::vector<char> same(vs.size(), 1);
    for (int pdl = 0; pdl < 2; pdl++) {
      const std::vector<float> ref = output_of(r, nullptr, r.m, pdl);
      for (size_t v = 0; v < vs.size(); v++)
        if (!same_output(r, vs[v], ref, pdl)) same[v] = 0;
    }
    std::vector<std::vector<double>> t(2 * (vs.size() + 1));
    for (int round = 0; round < g_rounds; round++)
      for (int pdl = 0; pdl < 2; pdl++) {
        t[pdl].push_back(time_smallm(r, pdl));
        for (size_t v = 0; v < vs.size(); v++)
          t[2 * (v + 1) + pdl].push_back(time_smallm(r, pdl, &vs[v]));
      }
    std::vector<double> med;
    for (auto &a : t) {
      std::sort(a.begin(), a.end());
      med.push_back(a[a.size() / 2]);
    }
    printf("%5lld %5lld %3d | %6.2f %6.2f |", (long long)r.n, (long long)r.k, (int)r.m, med[0],
           med[1]);
    for (size_t v = 0; v < vs.size(); v++)
      printf(" %dx%dg%d[%.0f]:%.2f %.2f%s", ks[v].subs, vs[v].stream_stages, ks[v].groups,
             vs[v].stream_smem / 1024.0, med[2 * (v + 1)], med[2 * (v + 1) + 1],
             same[v] ? "" : "!");
    printf("\n");
    fflush(stdout);
  });
}

}  // namespace groups
