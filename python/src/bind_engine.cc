// Engine as a Python class: every call takes a reference to the engine,
// releases the GIL while the engine works (so other Python threads run, and
// the engine's threads can call Python models) and raises its Status as a
// flowrag.Error (call_scope.h). close() drops the engine; calls already
// running keep it alive until they return, and the last one deletes it
// with the GIL released.
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <tuple>

#include "binding.h"
#include "call_scope.h"
#include "flowrag/engine.h"
#include "flowrag/eval.h"

namespace flowrag::py_binding {

namespace py = pybind11;

namespace {

// Deletes an engine without the GIL: its threads may be waiting for it.
void DeleteEngine(Engine* engine) {
  if (PyGILState_Check()) {
    py::gil_scoped_release release;
    delete engine;
  } else {
    delete engine;
  }
}

// Runs `f` with the GIL released and raises what it left (CallScope).
template <class F>
auto Unlocked(F&& f) {
  CallScope scope;
  auto result = [&] {
    py::gil_scoped_release release;
    return f();
  }();
  if constexpr (std::is_same_v<decltype(result), Status>) {
    scope.Finish(result);
  } else {
    scope.Finish(result.status());
  }
  return result;
}

// IndexOptions::interrupt for a call from Python: Ctrl-C (a pending signal
// whose handler raises) stops the run between batches.
Status PollSignals() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return Status::Ok();
  py::error_already_set error;
  const std::string what = DescribeError(error);
  CallScope::Record(std::move(error));
  return Status::Cancelled("index interrupted (" + what + ")");
}

class EngineHandle {
 public:
  static std::shared_ptr<EngineHandle> Open(const std::string& location,
                                            const EngineOptions& options) {
    Result<std::unique_ptr<Engine>> engine =
        Unlocked([&] { return Engine::Open(location, options); });
    auto handle = std::make_shared<EngineHandle>();
    handle->engine_ = std::shared_ptr<Engine>(std::move(engine).value().release(), &DeleteEngine);
    handle->location_ = DisplayLocation(location);
    return handle;
  }

  // The engine; FailedPrecondition naming `op` once closed.
  std::shared_ptr<Engine> Get(const char* op) const {
    std::shared_ptr<Engine> e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      e = engine_;
    }
    if (e == nullptr) {
      RaiseStatus(Status::FailedPrecondition(std::string("Engine.") + op + ": the engine (" +
                                             location_ + ") is closed"));
    }
    return e;
  }

  void Close() {
    std::shared_ptr<Engine> e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      e.swap(engine_);
    }
    py::gil_scoped_release release;
    e.reset();
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return engine_ == nullptr;
  }
  const std::string& location() const { return location_; }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<Engine> engine_;
  std::string location_;
};

using DocumentTuple = std::tuple<std::string, std::string, std::string>;

IndexReport Index(EngineHandle& h, const std::vector<std::string>& sources, IndexOptions o) {
  auto e = h.Get("index");
  o.interrupt = &PollSignals;
  return Unlocked([&] { return e->Index(sources, o); }).value();
}

IndexReport IndexDocuments(EngineHandle& h, const std::vector<DocumentTuple>& docs,
                           IndexOptions o) {
  auto e = h.Get("index");
  std::vector<DocumentInput> in;
  in.reserve(docs.size());
  for (const auto& [id, title, text] : docs) in.push_back({id, title, text});
  o.interrupt = &PollSignals;
  return Unlocked([&] { return e->IndexDocuments(in, o); }).value();
}

RetrievalResult Query(EngineHandle& h, const std::string& question, const QueryOptions& o) {
  auto e = h.Get("query");
  return Unlocked([&] { return e->Query(question, o); }).value();
}

Answer Ask(EngineHandle& h, const std::string& question, const AnswerOptions& o) {
  auto e = h.Get("ask");
  return Unlocked([&] { return e->Ask(question, o); }).value();
}

void Delete(EngineHandle& h, const std::string& id) {
  auto e = h.Get("delete");
  (void)Unlocked([&] { return e->DeleteDocument(id); });
}

StoreStats Stats(EngineHandle& h) {
  auto e = h.Get("stats");
  return Unlocked([&] { return e->Stats(); }).value();
}

void Compact(EngineHandle& h) {
  auto e = h.Get("compact");
  (void)Unlocked([&] { return e->Compact(); });
}

bool Refresh(EngineHandle& h) {
  auto e = h.Get("refresh");
  return Unlocked([&] { return e->Refresh(); }).value();
}

py::object Embed(EngineHandle& h, const std::vector<std::string>& texts) {
  auto e = h.Get("embed");
  Result<FloatMatrix> m = Unlocked([&] { return e->Embed(texts); });
  return MatrixToArray(*m);
}

EvalReport Evaluate(EngineHandle& h, const std::string& bench_dir, const EvalOptions& o) {
  auto e = h.Get("evaluate");
  return Unlocked([&]() -> Result<EvalReport> {
           FLOWRAG_ASSIGN_OR_RETURN(Benchmark bench, LoadBenchmark(bench_dir));
           // Loaded before the timed questions (see flowrag::Evaluate).
           FLOWRAG_RETURN_IF_ERROR(e->Refresh().status());
           return flowrag::Evaluate(*e, bench, o);
         })
      .value();
}

std::vector<MethodOption> MethodOptions(const std::string& method) {
  Result<std::vector<MethodOption>> r = Engine::MethodOptions(method);
  if (!r.ok()) RaiseStatus(r.status());
  return *r;
}

}  // namespace

void BindEngine(py::module_& m) {
  py::class_<EngineHandle, std::shared_ptr<EngineHandle>>(m, "Engine",
                                                          "One store and its query snapshot.")
      .def_static("open", &EngineHandle::Open, py::arg("location"), py::arg("options"))
      .def("index", &Index, py::arg("sources"), py::arg("options"))
      .def("index_documents", &IndexDocuments, py::arg("documents"), py::arg("options"))
      .def("query", &Query, py::arg("question"), py::arg("options"))
      .def("ask", &Ask, py::arg("question"), py::arg("options"))
      .def("delete", &Delete, py::arg("document_id"))
      .def("stats", &Stats)
      .def("refresh", &Refresh)
      .def("compact", &Compact)
      .def("embed", &Embed, py::arg("texts"))
      .def("evaluate", &Evaluate, py::arg("bench_dir"), py::arg("options"))
      .def("close", &EngineHandle::Close)
      .def_property_readonly("closed", &EngineHandle::closed)
      .def_property_readonly("location", &EngineHandle::location);
  m.def("methods", &Engine::Methods, "The retrieval methods: 'auto', then the rest.");
  m.def("method_options", &MethodOptions, py::arg("method"),
        "The per-query options a method reads, with their defaults.");
}

}  // namespace flowrag::py_binding
