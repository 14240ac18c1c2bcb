#include "py_models.h"

#include <pybind11/numpy.h>

#include <cmath>

#include "call_scope.h"

namespace flowrag::py_binding {
namespace {

bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// Drops `fn` under the GIL; leaks it while the interpreter shuts down.
void DropCallable(py::object* fn) {
  if (!Py_IsInitialized() || Finalizing()) {
    fn->release();
    return;
  }
  py::gil_scoped_acquire gil;
  *fn = py::object();
}

// The first `max_chars` code points of `text` on one line, "..." when cut.
std::string Snippet(const std::string& text, size_t max_chars = 40) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80 && chars++ == max_chars) return out + "...";
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : text[i];
  }
  return out;
}

int64_t EstimatedTokens(const std::string& text) {
  int64_t points = 0;
  for (char c : text) points += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return (points + 3) / 4;
}

std::string TypeName(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

// A failed call of a callable: Cancelled for an interrupt, else Unavailable.
Status CallFailed(const std::string& who, py::error_already_set&& error) {
  const bool interrupt = IsInterrupt(error);
  const std::string what = DescribeError(error);
  CallScope::Record(std::move(error));
  if (interrupt) return Status::Cancelled(who + ": interrupted (" + what + ")");
  return Status::Unavailable(who + " raised " + what);
}

}  // namespace

py::str Utf8Str(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

PyEmbedder::PyEmbedder(py::object fn, std::string name, size_t dimension)
    : fn_(std::move(fn)), name_(std::move(name)), dimension_(dimension) {}

PyEmbedder::~PyEmbedder() { DropCallable(&fn_); }

Result<FloatMatrix> PyEmbedder::Embed(std::span<const std::string> texts) {
  if (texts.empty()) return FloatMatrix(0, Dimension());
  const std::string who = "embedder \"" + ModelId() + "\"";
  py::gil_scoped_acquire gil;
  try {
    py::list batch(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) batch[i] = Utf8Str(texts[i]);
    py::object answer = fn_(batch);
    return ToMatrix(answer, texts);
  } catch (py::error_already_set& e) {
    return CallFailed(who, std::move(e));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(who + ": " + e.what());
  }
}

Result<FloatMatrix> PyEmbedder::ToMatrix(py::handle answer, std::span<const std::string> texts) {
  using Array = py::array_t<float, py::array::c_style | py::array::forcecast>;
  const std::string who = "embedder \"" + ModelId() + "\"";
  const size_t n = texts.size();
  const std::string expected = "(" + std::to_string(n) + ", dim)";
  Array a = Array::ensure(answer);
  if (!a) {
    return Status::InvalidArgument(who + " returned " + TypeName(answer) +
                                   ": expected an array of numbers of shape " + expected);
  }
  if (a.ndim() != 2 || static_cast<size_t>(a.shape(0)) != n || a.shape(1) == 0) {
    std::string shape;
    for (py::ssize_t d = 0; d < a.ndim(); ++d)
      shape += (d ? ", " : "") + std::to_string(a.shape(d));
    if (a.ndim() == 1) shape += ",";
    return Status::InvalidArgument(who + " returned an array of shape (" + shape + ") for " +
                                   std::to_string(n) + " texts: expected " + expected);
  }
  const size_t dim = static_cast<size_t>(a.shape(1));
  size_t known = 0;
  if (!dimension_.compare_exchange_strong(known, dim) && known != dim) {
    return Status::InvalidArgument(who + " returned " + std::to_string(dim) +
                                   " columns: expected " + std::to_string(known) +
                                   " (its dimension)");
  }
  FloatMatrix m(n, dim);
  const float* src = a.data();
  for (size_t i = 0; i < n; ++i) {
    float* row = m.row(i);
    double norm = 0.0;
    for (size_t j = 0; j < dim; ++j) {
      const float v = src[i * dim + j];
      if (!std::isfinite(v)) {
        return Status::InvalidArgument(who + " returned a value that is not finite in row " +
                                       std::to_string(i) + " (text \"" + Snippet(texts[i]) + "\")");
      }
      row[j] = v;
      norm += static_cast<double>(v) * v;
    }
    if (norm > 0) {
      const float scale = static_cast<float>(1.0 / std::sqrt(norm));
      for (size_t j = 0; j < dim; ++j) row[j] *= scale;
    }
  }
  return m;
}

PyChatModel::PyChatModel(py::object fn, std::string name, bool pass_options)
    : fn_(std::move(fn)), name_(std::move(name)), pass_options_(pass_options) {}

PyChatModel::~PyChatModel() { DropCallable(&fn_); }

Result<ChatResponse> PyChatModel::Complete(const ChatRequest& request) {
  using namespace pybind11::literals;
  const std::string who = "chat model \"" + Model() + "\"";
  ++requests_;
  py::gil_scoped_acquire gil;
  Result<ChatResponse> out = Status::Internal(who + ": no answer");
  try {
    py::list messages;
    for (const ChatMessage& m : request.messages) {
      messages.append(py::dict("role"_a = Utf8Str(m.role), "content"_a = Utf8Str(m.content)));
    }
    py::object answer =
        pass_options_ ? fn_(messages, "temperature"_a = request.temperature,
                            "max_tokens"_a = request.max_tokens, "json_mode"_a = request.json_mode)
                      : fn_(messages);
    out = ToResponse(answer, request);
  } catch (py::error_already_set& e) {
    out = CallFailed(who, std::move(e));
  } catch (const std::exception& e) {
    out = Status::InvalidArgument(who + ": " + e.what());
  }
  if (!out.ok()) ++failures_;
  return out;
}

Result<ChatResponse> PyChatModel::ToResponse(py::handle answer, const ChatRequest& request) {
  const std::string who = "chat model \"" + Model() + "\"";
  ChatResponse r;
  r.finish_reason = "stop";
  if (py::isinstance<py::str>(answer)) {
    r.content = answer.cast<std::string>();
  } else if (py::isinstance<py::dict>(answer)) {
    py::dict d = py::reinterpret_borrow<py::dict>(answer);
    if (!d.contains("content") || !py::isinstance<py::str>(d["content"])) {
      return Status::InvalidArgument(who + " returned a dict without a str \"content\"");
    }
    r.content = d["content"].cast<std::string>();
    if (d.contains("finish_reason")) r.finish_reason = py::str(d["finish_reason"]);
    if (d.contains("prompt_tokens")) r.prompt_tokens = d["prompt_tokens"].cast<int64_t>();
    if (d.contains("completion_tokens")) {
      r.completion_tokens = d["completion_tokens"].cast<int64_t>();
    }
  } else {
    return Status::InvalidArgument(who + " returned " + TypeName(answer) +
                                   ": expected str or a dict with \"content\"");
  }
  if (r.prompt_tokens == 0) {
    for (const ChatMessage& m : request.messages) r.prompt_tokens += EstimatedTokens(m.content);
  }
  if (r.completion_tokens == 0) r.completion_tokens = EstimatedTokens(r.content);
  prompt_tokens_ += r.prompt_tokens;
  completion_tokens_ += r.completion_tokens;
  return r;
}

ChatUsage PyChatModel::usage() const {
  ChatUsage u;
  u.requests = requests_.load();
  u.failures = failures_.load();
  u.prompt_tokens = prompt_tokens_.load();
  u.completion_tokens = completion_tokens_.load();
  return u;
}

}  // namespace flowrag::py_binding
