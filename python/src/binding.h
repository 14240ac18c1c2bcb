// The _flowrag extension module: one Bind* function per part, called in
// this order by module.cc. The public Python API is the pure-Python
// package python/flowrag/, which validates arguments and wraps these.
#ifndef FLOWRAG_PYTHON_BINDING_H_
#define FLOWRAG_PYTHON_BINDING_H_

#include <pybind11/pybind11.h>

#include "flowrag/matrix.h"

namespace flowrag::py_binding {

namespace pybind11_ns = pybind11;

// Embedder / ChatModel and the Python callables as them (py_models.h).
void BindModels(pybind11_ns::module_& m);
// EngineOptions, IndexOptions, QueryOptions, AnswerOptions, EvalOptions and
// the OpenAI-compatible client options: plain fields, read and written.
void BindOptions(pybind11_ns::module_& m);
// The result types of types.h and eval.h: read-only fields, their names in
// the class attribute `_fields` (the package's to_dict() walks them).
void BindResults(pybind11_ns::module_& m);
// REQUIRES: the GIL. A (rows, cols) float32 NumPy array copy of `m`.
pybind11_ns::object MatrixToArray(const FloatMatrix& m);
// Engine (open, index, query, ask, delete, stats, embed, close), methods(),
// method_options() and evaluate().
void BindEngine(pybind11_ns::module_& m);

}  // namespace flowrag::py_binding

#endif  // FLOWRAG_PYTHON_BINDING_H_
