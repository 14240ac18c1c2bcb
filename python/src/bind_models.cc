// Embedder and ChatModel (include/flowrag/models.h) as Python classes, and
// PythonEmbedder / PythonChatModel: Python callables as them (py_models.h).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "binding.h"
#include "call_scope.h"
#include "py_models.h"

namespace flowrag::py_binding {

namespace py = pybind11;

namespace {

py::array_t<float> ToArray(const FloatMatrix& m) {
  py::array_t<float> a({m.rows, m.cols});
  std::copy(m.data.begin(), m.data.end(), a.mutable_data());
  return a;
}

py::array_t<float> EmbedTexts(Embedder& e, const std::vector<std::string>& texts) {
  CallScope scope;
  Result<FloatMatrix> r = [&] {
    py::gil_scoped_release release;
    return e.Embed(texts);
  }();
  scope.Finish(r.status());
  return ToArray(*r);
}

std::string Complete(ChatModel& c,
                     const std::vector<std::pair<std::string, std::string>>& messages) {
  ChatRequest request;
  for (const auto& [role, content] : messages) request.messages.push_back({role, content});
  CallScope scope;
  Result<ChatResponse> r = [&] {
    py::gil_scoped_release release;
    return c.Complete(request);
  }();
  scope.Finish(r.status());
  return r->content;
}

}  // namespace

py::object MatrixToArray(const FloatMatrix& m) { return ToArray(m); }

void BindModels(py::module_& m) {
  py::class_<Embedder, std::shared_ptr<Embedder>>(m, "Embedder", "Texts to L2-normalised vectors.")
      .def_property_readonly("model_id", &Embedder::ModelId)
      .def_property_readonly("dimension", &Embedder::Dimension)
      .def("embed", &EmbedTexts, py::arg("texts"),
           "The (len(texts), dimension) float32 array of the texts' vectors.");
  py::class_<PyEmbedder, Embedder, std::shared_ptr<PyEmbedder>>(
      m, "PythonEmbedder", "A Python callable list[str] -> (n, dim) array as an Embedder.")
      .def(py::init<py::object, std::string, size_t>(), py::arg("fn"), py::arg("name"),
           py::arg("dimension") = 0)
      .def_property_readonly("name", &PyEmbedder::name);
  py::class_<ChatModel, std::shared_ptr<ChatModel>>(m, "ChatModel", "Messages to text.")
      .def_property_readonly("model", &ChatModel::Model)
      .def("complete", &Complete, py::arg("messages"), "The answer to [(role, content), ...].");
  py::class_<PyChatModel, ChatModel, std::shared_ptr<PyChatModel>>(
      m, "PythonChatModel", "A Python callable messages -> str as a ChatModel.")
      .def(py::init<py::object, std::string, bool>(), py::arg("fn"), py::arg("name"),
           py::arg("pass_options") = false)
      .def_property_readonly("name", &PyChatModel::name);
}

}  // namespace flowrag::py_binding
