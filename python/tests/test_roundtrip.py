"""index / query / ask / delete on the demo corpus, every method, results."""

import json
import os
import time

import numpy as np
import pytest

import flowrag
from conftest import DEMO, QUESTIONS


def test_index_reports_and_reindex_is_a_no_op(store):
    with flowrag.Engine(store) as eng:
        first = eng.index([DEMO], extractor="heuristic")
        assert isinstance(first, flowrag.IndexReport)
        assert first.documents_added == 36 and first.passages_embedded > 0
        assert first.extractor == "heuristic" and first.entities_created > 0
        again = eng.index(str(DEMO), extractor="heuristic")
        assert again.documents_unchanged == 36 and again.documents_added == 0
        stats = eng.stats()
        assert stats.documents == 36 and stats.passages_missing_embeddings == 0
        assert stats.graph.nodes["Entity"] > 0


def test_query_result_is_typed_with_subgraph_and_diagnostics(demo):
    hits = demo.query("Who designed the Brannock lens?", method="qafd", top_k=3,
                      params={"qafd.alpha": 50}, explain=True)
    assert isinstance(hits, flowrag.RetrievalResult)
    assert hits.method == "qafd" and 1 <= len(hits.passages) <= 3
    top = hits.passages[0]
    assert isinstance(top, flowrag.ScoredPassage)
    assert top.document_id == "brannock_lens.md" and top.text and top.score > 0
    assert any(n.seed for n in hits.nodes) and hits.edges and hits.paths
    assert isinstance(hits.edges[0], flowrag.GraphEdge) and hits.edges[0].kind
    assert hits.diagnostics.time_ms > 0 and hits.diagnostics.nodes_touched > 0
    assert isinstance(hits.scores, np.ndarray) and hits.scores.shape == (len(hits.passages),)
    d = hits.to_dict()
    json.dumps(d)
    assert d["passages"][0]["document_id"] == "brannock_lens.md"
    assert set(d["edges"][0]) == {"source", "target", "kind", "relation", "weight", "flow"}
    assert "RetrievalResult(method='qafd'" in repr(hits)


@pytest.mark.parametrize("method", [m for m in flowrag.methods()])
def test_every_method_answers(demo, method):
    hits = demo.query(QUESTIONS[0]["question"], method=method, top_k=5)
    assert hits.passages, method
    assert hits.method == (method if method != "auto" else "qafd")
    ids = [p.document_id for p in hits.passages]
    assert len(ids) == len(set((p.document_id, p.ordinal) for p in hits.passages))


def test_method_options_list_defaults_the_engine_accepts(demo):
    assert flowrag.methods()[0] == "auto"
    for method in flowrag.methods()[1:]:
        options = flowrag.method_options(method)
        assert options and all(isinstance(o, flowrag.MethodOption) for o in options), method
        assert all(o.type in ("number", "integer", "bool", "string") for o in options)
        params = {o.name: o.default for o in options}
        plain = demo.query("Who designed the Brannock lens?", method=method)
        same = demo.query("Who designed the Brannock lens?", method=method, params=params)
        assert [p.passage_id for p in plain.passages] == [p.passage_id for p in same.passages]
    k1 = flowrag.method_options("bm25")[0]
    assert (k1.name, k1.type, k1.default) == ("bm25.k1", "number", "1.2")


@pytest.mark.parametrize("pipeline", ["single", "cot", "decompose"])
def test_ask_answers_with_citations_and_steps(demo, pipeline):
    q = QUESTIONS[0]
    ans = demo.ask(q["question"], pipeline=pipeline, method="ppr")
    assert isinstance(ans, flowrag.Answer)
    assert ans.pipeline == pipeline and ans.answerer == "extractive"
    assert ans.citations and isinstance(ans.citations[0], flowrag.Citation)
    assert ans.steps and ans.retrieval.passages
    assert isinstance(ans.usage, flowrag.TokenUsage) and ans.usage.llm_calls == 0
    if pipeline != "decompose":
        assert ans.text == q["answers"][0]
    json.dumps(ans.to_dict())


def test_index_documents_then_delete(store):
    docs = [{"id": "a", "title": "Alder Quay", "text": "Alder Quay was built by Mira Vell."},
            {"id": "b", "title": "Mira Vell", "text": "Mira Vell was born in Osk."}]
    with flowrag.Engine(store) as eng:
        report = eng.index(docs)
        assert report.documents_added == 2
        assert eng.query("Alder Quay", method="bm25").passages[0].document_id == "a"
        assert eng.delete(["a"]) == 1
        assert [p.document_id for p in eng.query("Alder Quay Mira", method="bm25").passages] == ["b"]
        assert eng.stats().documents == 1
        with pytest.raises(flowrag.NotFound, match='"a"'):
            eng.delete("a")
        assert eng.delete(["a", "b"], missing_ok=True) == 1
        assert eng.stats().documents == 0


def test_stats_show_the_snapshot_segment_and_compact_keeps_it(store):
    docs = [{"id": "a", "title": "Alder Quay", "text": "Alder Quay was built by Mira Vell."},
            {"id": "b", "title": "Mira Vell", "text": "Mira Vell was born in Osk."}]
    with flowrag.Engine(store) as eng:
        eng.index(docs)
    with flowrag.Engine(store) as eng:
        eng.compact()
        seg = eng.stats().segments
        assert isinstance(seg, flowrag.SegmentStats)
        assert seg.directory == store + ".segments" and seg.manifest >= 1
        assert [(f.kind, f.rows, f.deleted_rows) for f in seg.files] == [("snapshot", 2, 0)]
        assert seg.files[0].bytes == os.path.getsize(
            os.path.join(seg.directory, "%08d.snapshot.seg" % seg.files[0].id))
        assert seg.snapshot_source == "segment" and seg.unreferenced_files == 0
        assert eng.query("Alder Quay", method="bm25").passages[0].document_id == "a"


def test_embed_returns_the_engines_vectors(demo):
    v = demo.embed(["Brannock lens", "River Ostrel"])
    assert v.dtype == np.float32 and v.shape[0] == 2 and v.shape[1] > 0
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_evaluate_a_benchmark_folder(tmp_path):
    bench = tmp_path / "mini"
    bench.mkdir()
    docs = [{"id": f"m{i}", "title": f"Town {i}", "text": f"Town {i} has a harbour of {i} piers."}
            for i in range(12)]
    (bench / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    qs = [{"id": f"q{i}", "question": f"How many piers has Town {i}?", "answers": [str(i)],
           "gold_ids": [f"m{i}"]} for i in range(4)]
    (bench / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    reports = flowrag.evaluate(bench, methods=["bm25", "ppr"], db=str(tmp_path / "e.db"),
                               ks=[1, 5])
    assert set(reports) == {"bm25", "ppr"}
    r = reports["bm25"]
    assert isinstance(r, flowrag.EvalReport) and r.questions == 4
    assert r.recall[5] == pytest.approx(100.0) and len(r.records) == 4
    json.dumps(r.to_dict(), default=str)


@pytest.mark.skipif(not os.environ.get("FLOWRAG_TEST_POSTGRES"),
                    reason="FLOWRAG_TEST_POSTGRES is not set (scripts/test.sh sets it)")
def test_postgresql_workspace_round_trip():
    base = os.environ["FLOWRAG_TEST_POSTGRES"]
    url = f"{base}{'&' if '?' in base else '?'}workspace=py{os.getpid()}_{int(time.time())}"
    with flowrag.Engine(url) as eng:
        assert eng.location.startswith("postgresql://")
        assert eng.index([DEMO], extractor="heuristic").documents_added == 36
        hits = eng.query("Who designed the Brannock lens?", method="qafd")
        assert hits.passages[0].document_id == "brannock_lens.md"
        assert eng.delete("brannock_lens.md") == 1 and eng.stats().documents == 35
