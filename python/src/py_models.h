// Python callables as the engine's models (include/flowrag/models.h).
//
//   PyEmbedder:  fn(texts: list[str]) -> array-like of shape (len(texts), dim)
//   PyChatModel: fn(messages: list[dict]) -> str, or a dict with "content"
//                (and optionally "prompt_tokens", "completion_tokens",
//                "finish_reason"); with pass_options also the keyword
//                arguments temperature, max_tokens and json_mode.
//
// The engine calls them from its own threads with the GIL released; each
// call takes the GIL (py::gil_scoped_acquire) for as long as the callable
// runs, so calls into one interpreter are serialised. A callable that
// raises fails that call: Unavailable naming the model and the exception
// (kept for the binding call's CallScope, call_scope.h); KeyboardInterrupt
// gives Cancelled. An embedder's answer that is not a finite 2-D array of
// one row per text, or whose width differs from `dimension` (or from its
// first answer), is InvalidArgument naming the model, the shape and, for a
// bad value, the row and the start of its text. Rows are L2-normalised
// here, as the Embedder contract requires.
//
// Lifetime: each holds a reference to its callable; the destructor takes
// the GIL to drop it (and leaks it once the interpreter is finalising).
#ifndef FLOWRAG_PYTHON_PY_MODELS_H_
#define FLOWRAG_PYTHON_PY_MODELS_H_

#include <pybind11/pybind11.h>

#include <atomic>
#include <span>
#include <string>

#include "flowrag/models.h"

namespace flowrag::py_binding {

namespace py = pybind11;

class PyEmbedder final : public Embedder {
 public:
  // `dimension` 0: learned from the first answer.
  PyEmbedder(py::object fn, std::string name, size_t dimension);
  ~PyEmbedder() override;

  std::string ModelId() const override { return "python:" + name_; }
  size_t Dimension() const override { return dimension_.load(); }
  Result<FloatMatrix> Embed(std::span<const std::string> texts) override;

  const std::string& name() const { return name_; }

 private:
  // REQUIRES: the GIL. The callable's answer as a normalised matrix.
  Result<FloatMatrix> ToMatrix(py::handle answer, std::span<const std::string> texts);

  py::object fn_;
  const std::string name_;
  std::atomic<size_t> dimension_;
};

class PyChatModel final : public ChatModel {
 public:
  PyChatModel(py::object fn, std::string name, bool pass_options);
  ~PyChatModel() override;

  std::string Model() const override { return "python:" + name_; }
  Result<ChatResponse> Complete(const ChatRequest& request) override;
  ChatUsage usage() const override;

  const std::string& name() const { return name_; }

 private:
  // REQUIRES: the GIL.
  Result<ChatResponse> ToResponse(py::handle answer, const ChatRequest& request);

  py::object fn_;
  const std::string name_;
  const bool pass_options_;
  std::atomic<int64_t> requests_{0}, failures_{0}, prompt_tokens_{0}, completion_tokens_{0};
};

// REQUIRES: the GIL. A Python str of UTF-8 bytes (invalid bytes become U+FFFD).
py::str Utf8Str(const std::string& text);

}  // namespace flowrag::py_binding

#endif  // FLOWRAG_PYTHON_PY_MODELS_H_
