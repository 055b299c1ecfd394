// Allreduce bandwidth of MPI (Open MPI, shared memory between processes on one machine), to
// choose ndx's CPU collective library (bench/dist/README.md).
//   mpirun -n 2 mpi_allreduce
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (size_t bytes = 4096; bytes <= (size_t{64} << 20); bytes *= 4) {
    const size_t n = bytes / sizeof(float);
    std::vector<float> buf(n, 1.0f);
    const int iters = std::max<int>(5, static_cast<int>((size_t{256} << 20) / bytes));
    std::vector<double> times;
    for (int it = 0; it < iters + 2; ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      const double t1 = MPI_Wtime();
      if (it >= 2) times.push_back(t1 - t0);
    }
    std::sort(times.begin(), times.end());
    const double t = times[times.size() / 2];
    const double busbw = 2.0 * (size - 1) / size * bytes / t / 1e9;
    if (rank == 0)
      std::printf("mpi  %10zu bytes  %9.3f ms  busbw %6.2f GB/s\n", bytes, t * 1e3, busbw);
  }
  MPI_Finalize();
  return 0;
}
