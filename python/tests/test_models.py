"""Python callables as the embedder and the chat model, failing ones included."""

import numpy as np
import pytest

import flowrag
from conftest import DEMO, QUESTIONS, ScriptedChat, hashing_embedder


def test_python_embedder_indexes_and_serves_dense_queries(store):
    calls = []
    base = hashing_embedder(64)

    def embed(texts):
        calls.append(len(texts))
        return base(texts)

    with flowrag.Engine(store, embedder=flowrag.python_embedder(embed, name="hash64")) as eng:
        report = eng.index([DEMO], extractor="heuristic")
        assert report.passages_embedded > 0 and sum(calls) >= report.passages_embedded
        assert eng.stats().dense_model == "python:hash64"
        hits = eng.query("Brannock lens designer", method="dense")
        assert hits.passages
        v = eng.embed(["Brannock lens"])
        assert v.shape == (1, 64)
        assert np.allclose(v[0], base(["Brannock lens"])[0] / np.linalg.norm(base(["Brannock lens"])[0]))
        for method in ("hybrid", "qafd", "ppr"):
            assert eng.query(QUESTIONS[0]["question"], method=method).passages
    # Reopened without the callable: stored vectors serve BM25; embedding says which model.
    with flowrag.Engine(store) as eng:
        assert eng.query("Brannock lens", method="bm25").passages
        with pytest.raises(flowrag.FailedPrecondition, match="python:hash64"):
            eng.query("Brannock lens", method="dense")


def test_bare_callable_lists_and_float64_are_accepted(store):
    def embed(texts):
        return [[float(len(t)), 1.0, 0.5] for t in texts]  # a list of lists

    with flowrag.Engine(store, embedder=embed) as eng:
        eng.index([{"id": "x", "text": "Some text here."}], extractor="none")
        assert eng.stats().dense_model.startswith("python:")
        assert eng.embed("abc").shape == (1, 3)


def test_python_chat_model_answers_and_counts_usage(store):
    chat = ScriptedChat("Wrenfield")
    with flowrag.Engine(store, chat=flowrag.python_chat_model(chat, name="scripted")) as eng:
        eng.index([DEMO], extractor="heuristic")  # "auto" would ask the model to extract
        ans = eng.ask(QUESTIONS[0]["question"], method="bm25", pipeline="single")
        assert ans.answerer == "llm:python:scripted"
        assert ans.text == "Wrenfield" and chat.calls >= 1
        assert ans.usage.llm_calls >= 1 and ans.usage.prompt_tokens > 0
        cot = eng.ask(QUESTIONS[0]["question"], pipeline="cot")
        assert cot.answerer == "llm:python:scripted" and cot.text == "Wrenfield", cot.warnings


def test_chat_model_options_are_passed_when_accepted(store):
    seen = {}

    def chat(messages, *, temperature, max_tokens, json_mode):
        seen.update(temperature=temperature, max_tokens=max_tokens, json_mode=json_mode)
        return {"content": '{"final_answer": "Osk", "citations": [1]}', "prompt_tokens": 7,
                "completion_tokens": 3}

    with flowrag.Engine(store, chat=chat) as eng:
        eng.index([{"id": "a", "text": "Mira Vell was born in Osk."}], extractor="heuristic")
        ans = eng.ask("Where was Mira Vell born?", method="bm25")
        assert ans.text == "Osk" and ans.usage.prompt_tokens >= 7
        assert seen["max_tokens"] > 0 and isinstance(seen["json_mode"], bool)


def test_raising_chat_model_degrades_to_the_extractive_answer(store):
    def chat(messages):
        raise RuntimeError("model server down")

    with flowrag.Engine(store, chat=chat) as eng:
        eng.index([DEMO], extractor="heuristic")
        ans = eng.ask(QUESTIONS[0]["question"], method="ppr")
        assert ans.answerer == "extractive" and ans.text == QUESTIONS[0]["answers"][0]
        assert any("model server down" in w for w in ans.warnings), ans.warnings
        # Explicitly asked for: the query-time steps fall back, and the answer says so.
        ans = eng.ask(QUESTIONS[0]["question"], method="qafd", answerer="llm")
        assert any("RuntimeError" in w for w in ans.warnings)


@pytest.mark.parametrize("answer, message", [
    (lambda texts: np.zeros((len(texts) + 1, 8)), r"shape \(\d+, 8\) for \d+ texts"),
    (lambda texts: np.zeros(len(texts)), r"shape \(\d+,\) for \d+ texts"),
    (lambda texts: "not an array", r"returned str"),
    (lambda texts: np.full((len(texts), 4), np.nan), r"not finite in row 0 \(text "),
    (lambda texts: None, r"shape \(\) for"),
])
def test_embedder_answers_of_the_wrong_shape_raise_and_lose_nothing(store, answer, message):
    with flowrag.Engine(store, embedder=flowrag.python_embedder(answer, name="bad")) as eng:
        with pytest.raises(flowrag.InvalidArgument, match=message) as info:
            eng.index([DEMO], extractor="none")
        assert 'embedder "python:bad"' in str(info.value)
        assert eng.stats().documents == 36  # stored, waiting for their vectors
    with flowrag.Engine(store, embedder=flowrag.python_embedder(hashing_embedder(), name="good")) as eng:
        report = eng.index([DEMO], extractor="none")
        assert report.documents_unchanged == 36 and report.passages_embedded > 0
        assert eng.stats().passages_missing_embeddings == 0


def test_embedder_changing_its_width_raises(store):
    widths = iter([8, 9])

    def embed(texts):
        return np.ones((len(texts), next(widths, 9)), dtype=np.float32)

    with flowrag.Engine(store, embedder=flowrag.python_embedder(embed, name="w")) as eng:
        eng.index([{"id": "a", "text": "one"}], extractor="none")
        with pytest.raises(flowrag.InvalidArgument, match="returned 9 columns: expected 8"):
            eng.index([{"id": "b", "text": "two"}], extractor="none")


def test_raising_embedder_is_the_cause_of_the_error(store):
    def embed(texts):
        raise ValueError("GPU on fire")

    with flowrag.Engine(store, embedder=embed) as eng:
        with pytest.raises(flowrag.Unavailable, match="ValueError: GPU on fire") as info:
            eng.index([DEMO], extractor="none")
        assert isinstance(info.value.__cause__, ValueError)
        assert info.value.code == "Unavailable"
        with pytest.raises(flowrag.Unavailable, match="GPU on fire"):
            eng.embed(["lens"])
        assert eng.query("lens", method="bm25").passages  # the engine still serves


def test_keyboard_interrupt_in_a_callable_stops_the_run(store):
    calls = []

    def embed(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return hashing_embedder()(texts)

    docs = [{"id": f"d{i}", "text": f"Document {i} about the harbour."} for i in range(300)]
    with flowrag.Engine(store, embedder=flowrag.python_embedder(embed, name="k")) as eng:
        with pytest.raises(KeyboardInterrupt):
            eng.index(docs, extractor="none", embed_batch_size=100)
        stats = eng.stats()
        assert stats.documents == 300 and stats.embeddings == 100
        report = eng.index(docs, extractor="none", embed_batch_size=100)
        assert report.passages_embedded == 200
        assert eng.stats().passages_missing_embeddings == 0


def test_model_arguments_are_checked():
    with pytest.raises(TypeError, match="embedder: expected a callable"):
        flowrag.python_embedder(42)
    with pytest.raises(TypeError, match="embedder: expected None"):
        flowrag.Engine(":memory:", embedder=42)
    with pytest.raises(flowrag.InvalidArgument, match='embedder "bert"'):
        flowrag.Engine(":memory:", embedder="bert")
    with pytest.raises(TypeError, match="chat: expected None"):
        flowrag.Engine(":memory:", chat="gpt")
    with pytest.raises(flowrag.InvalidArgument, match="embedder dimension"):
        flowrag.python_embedder(lambda t: t, dimension=-1)
