"""Bad input: a Python exception naming the argument or document, no crash,
nothing lost in the store."""

import os
import signal
import threading

import pytest

import flowrag
from conftest import DEMO, hashing_embedder


def test_wrong_argument_types_name_the_argument(demo):
    with pytest.raises(TypeError, match="Engine.query: question must be str, not int"):
        demo.query(42)
    with pytest.raises(TypeError, match="top_k must be int, not str"):
        demo.query("q", top_k="5")
    with pytest.raises(flowrag.InvalidArgument, match="top_k must be >= 1"):
        demo.query("q", top_k=0)
    with pytest.raises(TypeError, match=r"params\['bm25.k1'\]: expected str, int, float or bool"):
        demo.query("q", method="bm25", params={"bm25.k1": [1]})
    with pytest.raises(TypeError, match="params must be a dict"):
        demo.query("q", params=["bm25.k1"])
    with pytest.raises(TypeError, match="explain must be bool"):
        demo.query("q", explain="yes")
    with pytest.raises(TypeError, match=r"sources\[1\] must be a path"):
        demo.index([str(DEMO), 3])
    with pytest.raises(TypeError, match="sources must be a path"):
        demo.index(3)
    with pytest.raises(TypeError, match="Engine.ask: max_steps must be int"):
        demo.ask("q", max_steps=1.5)
    with pytest.raises(TypeError, match=r"document_ids\[0\] must be str"):
        demo.delete([1])
    with pytest.raises(TypeError, match="db must be a path"):
        flowrag.Engine(3)


def test_unknown_methods_and_options(demo):
    with pytest.raises(flowrag.InvalidArgument, match='unknown method "nope"'):
        demo.query("q", method="nope")
    with pytest.raises(flowrag.InvalidArgument, match=r"unknown option\(s\) for method bm25: bm25.k9"):
        demo.query("q", method="bm25", params={"bm25.k9": 1})
    with pytest.raises(flowrag.InvalidArgument, match="bm25.k1"):
        demo.query("q", method="bm25", params={"bm25.k1": "many"})
    with pytest.raises(flowrag.InvalidArgument, match="pipeline"):
        demo.ask("q", pipeline="telepathy")
    with pytest.raises(flowrag.InvalidArgument, match="unknown method"):
        flowrag.method_options("nope")
    with pytest.raises(flowrag.InvalidArgument, match="chunk"):
        demo.index([DEMO], chunking="sentences")
    with pytest.raises(flowrag.InvalidArgument, match="extractor"):
        demo.index([DEMO], extractor="magic")
    assert isinstance(flowrag.InvalidArgument("x"), ValueError)
    assert demo.stats().documents == 36


def test_an_unknown_passage_index_is_refused_at_open(store):
    with pytest.raises(flowrag.InvalidArgument, match='passage_ann: expected "auto", "hnsw" or "int8"'):
        flowrag.Engine(store, passage_ann="faiss")
    with pytest.raises(TypeError, match="passage_ann must be str"):
        flowrag.Engine(store, passage_ann=8)
    with flowrag.Engine(store, passage_ann="int8", hnsw_threshold=1) as eng:
        eng.index([DEMO])
        assert eng.stats().passage_index == "flat-int8"
        assert eng.query("Who designed the Brannock lens?", method="dense").passages


def test_bad_documents_name_the_document_and_store_nothing(store):
    with flowrag.Engine(store) as eng:
        good = {"id": "a", "text": "fine"}
        with pytest.raises(flowrag.InvalidArgument, match=r'documents\[1\] has no "text"'):
            eng.index([good, {"id": "b"}])
        with pytest.raises(TypeError, match=r'documents\[1\]\["title"\] must be str, not int'):
            eng.index([good, {"id": "b", "title": 3, "text": "x"}])
        with pytest.raises(TypeError, match=r"documents\[1\] must be a dict"):
            eng.index([good, "b"])
        with pytest.raises(flowrag.InvalidArgument, match=r"documents\[1\]\.id"):
            eng.index([good, {"id": "a", "text": "again"}])
        with pytest.raises(flowrag.InvalidArgument, match=r"documents\[0\]\.text"):
            eng.index([{"id": "e", "text": "   "}])
        assert eng.stats().documents == 0
        with pytest.raises(flowrag.NotFound, match="no-such-dir"):
            eng.index(["no-such-dir"])


def test_closed_engine_and_context_manager(store):
    with flowrag.Engine(store) as eng:
        eng.index([{"id": "a", "text": "Mira Vell was born in Osk."}])
    assert eng.closed
    for call in (lambda: eng.query("q"), lambda: eng.ask("q"), lambda: eng.stats(),
                 lambda: eng.index([DEMO]), lambda: eng.delete("a"), lambda: eng.embed("x")):
        with pytest.raises(flowrag.FailedPrecondition, match="is closed"):
            call()
    eng.close()  # idempotent
    assert "closed" in repr(eng)
    with flowrag.Engine(store, read_only=True) as ro:
        assert ro.stats().documents == 1
        with pytest.raises(flowrag.FailedPrecondition, match="read-only"):
            ro.index([{"id": "b", "text": "x"}])


def test_close_while_other_threads_query(demo):
    stop = threading.Event()
    seen = []

    def reader():
        while not stop.is_set():
            try:
                demo.query("Brannock lens", method="ppr")
            except flowrag.FailedPrecondition as e:
                seen.append(str(e))
                return

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    demo.close()
    for t in threads:
        t.join(timeout=30)
    stop.set()
    assert len(seen) == 4


def test_ctrl_c_during_a_long_index_keeps_what_was_committed(store):
    # The Ctrl-C comes from the embedder's second batch, so it falls within
    # the run whatever the machine's speed or load (a timer fell before the
    # first commit on a loaded machine).
    docs = [{"id": f"d{i}", "title": f"Doc {i}", "text": f"Document {i} about harbour {i % 17}."}
            for i in range(8000)]
    base = hashing_embedder(32)
    calls = []

    def embed(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C in the terminal
        return base(texts)

    embedder = flowrag.python_embedder(embed, name="hash32")
    # Python's own handler, whatever this process inherited: a shell starts
    # a background job with SIGINT ignored, and Python then keeps it ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with flowrag.Engine(store, embedder=embedder) as eng:
            with pytest.raises(KeyboardInterrupt):
                eng.index(docs, batch_size=100, embed_batch_size=500, extractor="none")
            assert len(calls) == 2  # stopped at the interrupted batch
            stats = eng.stats()
            # Every document was stored, and the first batch's vectors kept.
            assert stats.documents == 8000 and stats.embeddings == 500
            report = eng.index(docs, batch_size=100, extractor="none")
            assert report.documents_unchanged == stats.documents
            assert report.passages_embedded == 8000 - stats.embeddings
            assert eng.stats().documents == 8000 and eng.stats().passages_missing_embeddings == 0
    finally:
        signal.signal(signal.SIGINT, previous)
