// Operator libraries: shared libraries built against lib_api.h, loaded at run time.
#pragma once
#include <string>
#include <vector>

namespace ndx {

// Loads the library at `path`, checks its lib_api version and that every op has its required
// functions, then registers each op (and its backward, when it has one) as a first-class op.
// Returns the op names. Nothing is registered when any check fails. Loading the same path
// again returns the same names.
std::vector<std::string> load_library(const std::string& path);

}  // namespace ndx
