// What this build of ndx is: its version (CMake's project version, the one source of it) and
// the options it was built with, for ndx.__version__, ndx.show_config() and NDXGetVersion().
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace ndx {

// "MAJOR.MINOR.PATCH", and MAJOR * 10000 + MINOR * 100 + PATCH (NDX_VERSION in ndx/version.h).
const char* version_string();
int version_number();

// The build's options and the libraries it uses, as (name, value) rows in a fixed order:
// version, compiler, build type, SIMD targets built and the one running, threads, BLAS,
// oneDNN, CUDA. Values are plain text.
std::vector<std::pair<std::string, std::string>> build_config();

}  // namespace ndx
