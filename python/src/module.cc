// The _flowrag extension module (binding.h). numpy is imported first: the
// embedders exchange float32 arrays.
#include <pybind11/pybind11.h>

#include "binding.h"

PYBIND11_MODULE(_flowrag, m) {
  m.doc() = "flowrag's C++ engine; use the flowrag package, which wraps it.";
  pybind11::module_::import("numpy");
  flowrag::py_binding::BindModels(m);
  flowrag::py_binding::BindOptions(m);
  flowrag::py_binding::BindResults(m);
  flowrag::py_binding::BindEngine(m);
}
