"""Many Python threads on one engine, and the asyncio methods."""

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import flowrag
from conftest import DEMO, QUESTIONS, hashing_embedder


def _expected(eng, method):
    return {q["id"]: [p.passage_id for p in eng.query(q["question"], method=method).passages]
            for q in QUESTIONS}


def test_eight_threads_query_one_engine(demo):
    methods = ["bm25", "dense", "hybrid", "qafd", "ppr", "semflow", "sa", "onehop"]
    expected = {m: _expected(demo, m) for m in methods}
    errors = []
    start = threading.Barrier(8)

    def worker(t):
        start.wait()
        for round_ in range(5):
            for q in QUESTIONS:
                m = methods[(t + round_) % len(methods)]
                got = [p.passage_id for p in demo.query(q["question"], method=m).passages]
                if got != expected[m][q["id"]]:
                    errors.append((t, m, q["id"]))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))
    assert not errors


def test_threads_query_while_a_python_embedder_indexes(store):
    embed = hashing_embedder(32)
    with flowrag.Engine(store, embedder=flowrag.python_embedder(embed, name="h32")) as eng:
        eng.index([DEMO], extractor="heuristic")
        docs = [{"id": f"n{i}", "title": f"Note {i}", "text": f"Note {i} on the Brannock lens."}
                for i in range(200)]
        stop = threading.Event()
        counts = [0] * 8

        def reader(t):
            while not stop.is_set():
                assert eng.query("Brannock lens", method="dense" if t % 2 else "qafd").passages
                counts[t] += 1

        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(reader, t) for t in range(8)]
            report = eng.index(docs, extractor="heuristic", batch_size=20, embed_batch_size=20)
            stop.set()
            for f in futures:
                f.result()
        assert report.documents_added == 200 and min(counts) > 0
        assert eng.stats().documents == 236


def test_async_methods(store):
    async def main():
        with flowrag.Engine(store) as eng:
            report = await eng.aindex([DEMO], extractor="heuristic")
            assert report.documents_added == 36
            results = await asyncio.gather(
                *[eng.aquery(q["question"], method="ppr") for q in QUESTIONS])
            assert all(r.passages for r in results)
            ans = await eng.aask(QUESTIONS[0]["question"], method="ppr")
            assert ans.text == QUESTIONS[0]["answers"][0]
            assert (await eng.astats()).documents == 36
            assert await eng.adelete("brannock_lens.md") == 1

    asyncio.run(main())
