// Operator libraries: shared libraries built against lib_api.h, loaded at run time.
#pragma once
#include <string>
#include <vector>

namespace ndx {

// Loads the library at `path`, checks its lib_api version and that every op has its required
// functions, then registers each op (and its backward, when it has one) as a first-class op.
// Returns the op names. Nothing is registered when any check fails (ValueError). Loading the
// same path again returns the same names while the file there has the contents loaded; once
// it has changed (a rebuild), it raises ValueError: a process holds one version of a library,
// since dlopen keeps the first and its ops may live on in graphs and autograd tapes.
std::vector<std::string> load_library(const std::string& path);

// Whether `op` is a loaded library's stateful op (create_op_state): its state belongs to one
// use, so a recorded call must not share parsed attributes with another call.
bool library_op_is_stateful(const std::string& op);

}  // namespace ndx
