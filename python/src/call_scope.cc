#include "call_scope.h"

namespace flowrag::py_binding {
namespace {

thread_local CallScope* current_scope = nullptr;

}  // namespace

CallScope::CallScope() : previous_(current_scope) { current_scope = this; }

CallScope::~CallScope() { current_scope = previous_; }

void CallScope::Record(py::error_already_set&& error) {
  if (current_scope == nullptr || current_scope->error_.has_value()) return;
  current_scope->error_.emplace(std::move(error));
}

void CallScope::Finish(const Status& status) {
  if (error_.has_value() && IsInterrupt(*error_)) {
    py::error_already_set error = std::move(*error_);
    error_.reset();
    error.restore();
    throw py::error_already_set();
  }
  if (status.ok()) return;
  RaiseStatus(status, error_.has_value() ? py::handle(error_->value()) : py::handle());
}

void RaiseStatus(const Status& status, py::handle cause) {
  py::object errors = py::module_::import("flowrag.errors");
  py::object exc =
      errors.attr("from_status")(std::string(StatusCodeName(status.code())), status.message());
  if (cause) {
    exc.attr("__cause__") = py::reinterpret_borrow<py::object>(cause);
  }
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

std::string DescribeError(const py::error_already_set& error) {
  std::string type = py::str(error.type().attr("__name__"));
  std::string text = py::str(error.value());
  return text.empty() ? type : type + ": " + text;
}

bool IsInterrupt(const py::error_already_set& error) {
  return !PyErr_GivenExceptionMatches(error.type().ptr(), PyExc_Exception);
}

}  // namespace flowrag::py_binding
