// oneDNN's batch normalization (forward training + backward) on 32x32x56x56 float32, in plain
// NCHW and in the channel-blocked nChw8c layout: the measurement behind batch_norm running on
// ndx's own row kernels rather than on oneDNN (README, "Neural-network op speed").
//
//   g++ -O2 -std=c++17 bench/dnnl_batch_norm.cc -ldnnl -o /tmp/dnnl_bn
//   OMP_NUM_THREADS=1 /tmp/dnnl_bn; OMP_NUM_THREADS=1 /tmp/dnnl_bn blocked
//   ONEDNN_VERBOSE=1 ... shows the implementation oneDNN picks (ncsp_bnorm for NCHW).
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using dnnl::memory;

namespace {

void fill(memory& m, int period) {
  auto* p = static_cast<float*>(m.get_data_handle());
  const size_t n = m.get_desc().get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % period) * 0.01f;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const bool blocked = argc > 1 && std::strcmp(argv[1], "blocked") == 0;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const memory::desc md({32, 32, 56, 56}, memory::data_type::f32,
                        blocked ? memory::format_tag::nChw8c : memory::format_tag::nchw);
  const auto flags = dnnl::normalization_flags::use_scale_shift;
  const dnnl::batch_normalization_forward::primitive_desc fpd(
      {dnnl::prop_kind::forward_training, md, 1e-5f, flags}, eng);
  const dnnl::batch_normalization_backward::primitive_desc bpd(
      {dnnl::prop_kind::backward, md, md, 1e-5f, flags}, eng, fpd);
  dnnl::batch_normalization_forward fwd(fpd);
  dnnl::batch_normalization_backward bwd(bpd);
  memory x(md, eng), y(md, eng), dy(md, eng), dx(md, eng), mean(fpd.mean_desc(), eng),
      var(fpd.variance_desc(), eng), ss(fpd.weights_desc(), eng), dss(bpd.diff_weights_desc(), eng);
  fill(x, 97), fill(dy, 89), fill(ss, 7);
  std::vector<double> tf, tb;
  for (int it = 0; it < 15; ++it) {
    auto t = std::chrono::steady_clock::now();
    fwd.execute(s, {{DNNL_ARG_SRC, x},
                    {DNNL_ARG_DST, y},
                    {DNNL_ARG_MEAN, mean},
                    {DNNL_ARG_VARIANCE, var},
                    {DNNL_ARG_SCALE_SHIFT, ss}});
    s.wait();
    tf.push_back(ms_since(t));
    t = std::chrono::steady_clock::now();
    bwd.execute(s, {{DNNL_ARG_SRC, x},
                    {DNNL_ARG_DIFF_DST, dy},
                    {DNNL_ARG_MEAN, mean},
                    {DNNL_ARG_VARIANCE, var},
                    {DNNL_ARG_SCALE_SHIFT, ss},
                    {DNNL_ARG_DIFF_SRC, dx},
                    {DNNL_ARG_DIFF_SCALE_SHIFT, dss}});
    s.wait();
    tb.push_back(ms_since(t));
  }
  // What keeping ndx's NCHW arrays would add in the blocked case: one reorder per array.
  const memory::desc plain({32, 32, 56, 56}, memory::data_type::f32, memory::format_tag::nchw);
  memory src(plain, eng);
  fill(src, 97);
  dnnl::reorder to_blocked(src, x);
  std::vector<double> tr;
  for (int it = 0; it < 15; ++it) {
    const auto t = std::chrono::steady_clock::now();
    to_blocked.execute(s, src, x);
    s.wait();
    tr.push_back(ms_since(t));
  }
  for (auto* v : {&tf, &tb, &tr}) std::sort(v->begin(), v->end());
  std::printf("%s: forward %.3f ms, backward %.3f ms, one reorder from nchw %.3f ms (medians)\n",
              blocked ? "nChw8c" : "nchw", tf[7], tb[7], tr[7]);
}
