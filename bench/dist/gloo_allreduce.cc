// Allreduce bandwidth of Gloo (TCP transport, ring algorithm) between processes on one
// machine, to choose ndx's CPU collective library (bench/dist/README.md).
//   gloo_allreduce RANK SIZE RENDEZVOUS_DIR
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s RANK SIZE RENDEZVOUS_DIR\n", argv[0]);
    return 2;
  }
  const int rank = std::atoi(argv[1]), size = std::atoi(argv[2]);
  auto device = gloo::transport::tcp::CreateDevice("127.0.0.1");
  gloo::rendezvous::FileStore store(argv[3]);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);
  for (size_t bytes = 4096; bytes <= (size_t{64} << 20); bytes *= 4) {
    const size_t n = bytes / sizeof(float);
    std::vector<float> buf(n, 1.0f);
    const int iters = std::max<int>(5, static_cast<int>((size_t{256} << 20) / bytes));
    std::vector<double> times;
    for (int it = 0; it < iters + 2; ++it) {
      gloo::AllreduceOptions opts(context);
      opts.setOutput(buf.data(), n);
      opts.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      const auto t0 = std::chrono::steady_clock::now();
      gloo::allreduce(opts);
      const auto t1 = std::chrono::steady_clock::now();
      if (it >= 2) times.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double t = times[times.size() / 2];
    const double busbw = 2.0 * (size - 1) / size * bytes / t / 1e9;
    if (rank == 0)
      std::printf("gloo %10zu bytes  %9.3f ms  busbw %6.2f GB/s\n", bytes, t * 1e3, busbw);
  }
  return 0;
}
