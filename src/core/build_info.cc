// The build's version and options. CMake passes what only it knows (build type, CUDA
// architectures) as definitions of this file alone, and its generated ndx/version.h is on this
// file's include path alone, so neither touches any other translation unit's command line.
#include "ndx/build_info.h"

#include <cblas.h>
#include <hwy/targets.h>

#include <string>

#include "ndx/runtime.h"
#include "ndx/version.h"

#ifdef NDX_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#ifndef NDX_BUILD_TYPE
#define NDX_BUILD_TYPE "unknown"
#endif

namespace ndx {
namespace {

std::string compiled_simd_targets() {
  std::string names;
  for (int i = 0; i < 63; ++i) {
    const int64_t bit = int64_t{1} << i;
    if ((HWY_TARGETS & bit) == 0) continue;
    if (!names.empty()) names += ' ';
    names += hwy::TargetName(bit);
  }
  return names;
}

std::string blas_description() {
  // OpenBLAS reports its version, the kernel core it picked and its threading, e.g.
  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64".
  const char* config = openblas_get_config();
  return config ? config : "OpenBLAS";
}

std::string onednn_description() {
#ifdef NDX_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  std::string s = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                  std::to_string(v->patch);
  return s + (onednn_enabled() ? " (on)" : " (off: NDX_DNNL=0)");
#else
  return "not built (libdnnl-dev was not found)";
#endif
}

std::string cuda_description() {
#ifdef NDX_CUDA
  std::string s = "built for sm_" NDX_CUDA_ARCHS_STRING;
  const int gpus = num_gpus();
  return s + (gpus > 0 ? ", " + std::to_string(gpus) + " GPU(s) visible"
                       : ", no GPU: " + gpu_unavailable_reason());
#else
  return "not built (nvcc was not found)";
#endif
}

}  // namespace

const char* version_string() { return NDX_VERSION_STRING; }
int version_number() { return NDX_VERSION; }

std::vector<std::pair<std::string, std::string>> build_config() {
  return {
      {"version", NDX_VERSION_STRING},
#ifdef __clang__
      {"compiler", "Clang " __clang_version__},
#else
      {"compiler", "GCC " __VERSION__},
#endif
      {"build type", NDX_BUILD_TYPE},
      {"SIMD targets built", compiled_simd_targets()},
      {"SIMD target running", simd_target()},
      {"threads", std::to_string(num_threads())},
      {"BLAS", blas_description()},
      {"oneDNN", onednn_description()},
      {"CUDA", cuda_description()},
  };
}

}  // namespace ndx
