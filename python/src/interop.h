// DLPack export and import, and the memory-overlap test (interop.cc).
#pragma once
#include "convert.h"  // Python.h first

namespace ndx::py {

// ndarray.__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) and
// ndarray.__dlpack_device__() (methods of the ndarray type).
PyObject* dlpack_method(PyObject* self, PyObject* args, PyObject* kwargs);
PyObject* dlpack_device_method(PyObject* self, PyObject*);

// Adds _from_dlpack and _memory_overlap to the module.
bool init_interop(PyObject* module);

}  // namespace ndx::py
