// How errors cross between the engine and Python.
//
// The engine reports a Status; the binding raises it as the matching
// flowrag.Error subclass (python/flowrag/errors.py). A Python callable the
// engine calls (embedder, chat model, the Ctrl-C poll) may raise while the
// engine runs with the GIL released; its exception is kept by the
// CallScope of the binding call on the same thread and becomes the
// __cause__ of the raised error. KeyboardInterrupt and the other
// BaseExceptions that are not Exceptions (SystemExit) are raised again as
// they are, even when the engine got past them (an answer that fell back
// to the extractive answerer).
//
// Thread-safety: a CallScope belongs to the thread that made it; Record()
// from any other thread finds no scope there and does nothing (the
// exception is still described in the Status message).
#ifndef FLOWRAG_PYTHON_CALL_SCOPE_H_
#define FLOWRAG_PYTHON_CALL_SCOPE_H_

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "flowrag/status.h"

namespace flowrag::py_binding {

namespace py = pybind11;

class CallScope {
 public:
  CallScope();
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // REQUIRES: the GIL. Keeps `error` (the first one wins) in the calling
  // thread's innermost scope, if any.
  static void Record(py::error_already_set&& error);

  // REQUIRES: the GIL. Raises what the call left: a recorded interrupt
  // whatever `status` is, else `status` when it is not OK.
  void Finish(const Status& status);

 private:
  CallScope* previous_;
  std::optional<py::error_already_set> error_;
};

// REQUIRES: the GIL. Raises `status` (not OK) as a flowrag.Error subclass,
// with `cause` (may be null) as its __cause__.
[[noreturn]] void RaiseStatus(const Status& status, py::handle cause = py::handle());

// REQUIRES: the GIL. "ValueError: boom" for an exception a callable raised.
std::string DescribeError(const py::error_already_set& error);

// REQUIRES: the GIL. True for KeyboardInterrupt, SystemExit and other
// BaseExceptions that are not Exceptions.
bool IsInterrupt(const py::error_already_set& error);

}  // namespace flowrag::py_binding

#endif  // FLOWRAG_PYTHON_CALL_SCOPE_H_
