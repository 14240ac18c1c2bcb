# Type stubs of the extension module flowrag._flowrag (python/src/). Use the
# flowrag package, which wraps it; the result classes are re-exported there.
from typing import Any, Callable, ClassVar, Optional

import numpy as np
import numpy.typing as npt

# ---- models

class Embedder:
    @property
    def model_id(self) -> str: ...
    @property
    def dimension(self) -> int: ...
    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]: ...

class PythonEmbedder(Embedder):
    def __init__(self, fn: Callable[[list[str]], Any], name: str, dimension: int = 0) -> None: ...
    @property
    def name(self) -> str: ...

class ChatModel:
    @property
    def model(self) -> str: ...
    def complete(self, messages: list[tuple[str, str]]) -> str: ...

class PythonChatModel(ChatModel):
    def __init__(self, fn: Callable[..., Any], name: str, pass_options: bool = False) -> None: ...
    @property
    def name(self) -> str: ...

# ---- options

class OpenAiChatOptions:
    base_url: str
    model: str
    api_key: str
    timeout_ms: int
    connect_timeout_ms: int
    max_retries: int
    max_concurrency: int
    def __init__(self) -> None: ...

class OpenAiEmbedderOptions:
    base_url: str
    model: str
    api_key: str
    batch_size: int
    timeout_ms: int
    connect_timeout_ms: int
    max_retries: int
    max_concurrency: int
    dimensions: int
    def __init__(self) -> None: ...

class EngineOptions:
    embedder: str
    custom_embedder: Optional[Embedder]
    openai_embedder: Optional[OpenAiEmbedderOptions]
    chat_model: Optional[ChatModel]
    openai_chat: Optional[OpenAiChatOptions]
    hash_dimension: int
    language: str
    hnsw_threshold: int
    passage_ann: str
    read_only: bool
    writer_wait_ms: int
    follow_store: bool
    follow_poll_ms: int
    def __init__(self) -> None: ...

class IndexOptions:
    chunking: str
    window_words: int
    overlap_words: int
    max_chars: int
    overlap_chars: int
    batch_size: int
    embed_batch_size: int
    idf_refit_growth: float
    refit: bool
    progress: bool
    skip_bad_records: bool
    extractor: str
    llm_prompt_style: str
    extract_batch_size: int
    workers: int
    dry_run: bool
    def __init__(self) -> None: ...

class QueryOptions:
    method: str
    top_k: int
    params: dict[str, str]
    explain: bool
    def __init__(self) -> None: ...

class SchemaAgentOptions:
    analysis: str
    extension: str
    vector_method: str
    graph_method: str
    ood_gate: bool
    def __init__(self) -> None: ...

class AnswerOptions:
    query: QueryOptions
    pipeline: str
    schema: SchemaAgentOptions
    max_steps: int
    context_passages: int
    answerer: str
    style: str
    deadline_ms: float
    def __init__(self) -> None: ...

class EvalOptions:
    ks: list[int]
    query: QueryOptions
    limit: int
    progress: bool
    answers: bool
    answer: AnswerOptions
    def __init__(self) -> None: ...

# ---- results (read-only; `_fields` lists the fields, to_dict() converts)

class _Result:
    _fields: ClassVar[tuple[str, ...]]
    def to_dict(self) -> dict[str, Any]: ...

class ScoredPassage(_Result):
    passage_id: int
    document_id: str
    title: str
    ordinal: int
    begin: int
    end: int
    page_first: int  # 1-based first page (PDF documents); 0 without pages
    page_last: int
    text: str
    score: float

class RetrievalDiagnostics(_Result):
    time_ms: float
    candidates_scored: int
    iterations: int
    residual: float
    nodes_touched: int
    edges_touched: int
    extra: dict[str, float]

class GraphNode(_Result):
    id: int
    kind: str
    label: str
    score: float
    seed: bool

class GraphEdge(_Result):
    source: int
    target: int
    kind: str
    relation: str
    weight: float
    flow: float

class RetrievalResult(_Result):
    method: str
    passages: list[ScoredPassage]
    diagnostics: RetrievalDiagnostics
    keywords: list[str]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    paths: list[list[str]]
    context: list[str]
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...

class MethodOption(_Result):
    name: str
    type: str
    default: str

class Citation(_Result):
    marker: int
    passage_id: int
    document_id: str
    title: str
    quote: str
    begin: int
    end: int
    page_first: int  # pages of the quote; 0 without pages
    page_last: int

class TokenUsage(_Result):
    llm_calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float

class AnswerStep(_Result):
    query: str
    answer: str
    summary: str
    follow_up: str
    passage_ids: list[int]

class Answer(_Result):
    question: str
    text: str
    reasoning: str
    answered: bool
    confidence: float
    answerer: str
    pipeline: str
    citations: list[Citation]
    steps: list[AnswerStep]
    retrieval: RetrievalResult
    usage: TokenUsage
    warnings: list[str]
    time_ms: float

class IndexReport(_Result):
    documents_seen: int
    documents_added: int
    documents_replaced: int
    documents_unchanged: int
    passages_added: int
    passages_embedded: int
    batches_committed: int
    embedder_refitted: bool
    extractor: str
    passages_extracted: int
    passages_relinked: int
    extraction_failures: int
    entities_created: int
    entities_deleted: int
    facts_created: int
    triples_rejected: int
    graph_texts_embedded: int
    synonym_edges: int
    estimated_llm_calls: int
    estimated_prompt_tokens: int
    estimated_completion_tokens: int
    messages: list[str]
    ingest_seconds: float
    embed_seconds: float
    extract_seconds: float
    graph_seconds: float
    total_seconds: float

class GraphStats(_Result):
    nodes: dict[str, int]
    edges: dict[str, int]
    isolated_ratio: float
    average_degree: float
    degree_min: int
    degree_median: int
    degree_p90: int
    degree_p99: int
    degree_max: int
    extracted_passages: int
    failed_passages: int
    llm_calls: int
    llm_prompt_tokens: int
    llm_completion_tokens: int
    memory_bytes: int

class SchemaStats(_Result):
    present: bool
    version: int
    source_records: int
    schema_utility: float
    link_validity: float
    qa_ready: bool

class SegmentFileStats(_Result):
    id: int
    kind: str
    rows: int
    deleted_rows: int  # rows deleted by tombstones
    bytes: int
    level: int  # size tier of the merge policy

class SegmentStats(_Result):
    directory: str  # "" when the store keeps no segments (PostgreSQL, ":memory:")
    manifest: int  # 0: none written yet
    generation: int
    files: list[SegmentFileStats]
    live_bytes: int
    unreferenced_files: int  # garbage a reader still maps
    unreferenced_bytes: int
    merges_pending: int
    snapshot_source: str  # "segment" (mapped in place) or "built (...why)"

class StoreStats(_Result):
    path: str
    format_version: int
    documents: int
    passages: int
    embeddings: int
    embedding_models: int
    file_bytes: int
    index_runs: int
    dense_model: str
    passage_index: str
    passages_missing_embeddings: int
    snapshot_parts_error: str  # last failure to write the snapshot parts, "" if none
    graph: GraphStats
    schema: SchemaStats
    segments: SegmentStats

class QuestionRecord(_Result):
    id: str
    retrieved_ids: list[str]
    latency_ms: float
    recall: dict[int, float]
    diagnostics: RetrievalDiagnostics
    question: str
    answer: str
    gold_answers: list[str]
    em: float
    f1: float
    warnings: list[str]

class EvalReport(_Result):
    bench: str
    method: str
    questions: int
    recall: dict[int, float]
    latency_p50_ms: float
    latency_p99_ms: float
    latency_mean_ms: float
    nodes_touched_p50: float
    edges_touched_p50: float
    iterations_p50: float
    answers: bool
    pipeline: str
    em: float
    f1: float
    usage: TokenUsage
    records: list[QuestionRecord]

# ---- the engine

class Engine:
    @staticmethod
    def open(location: str, options: EngineOptions) -> Engine: ...
    def index(self, sources: list[str], options: IndexOptions) -> IndexReport: ...
    def index_documents(self, documents: list[tuple[str, str, str]],
                        options: IndexOptions) -> IndexReport: ...
    def query(self, question: str, options: QueryOptions) -> RetrievalResult: ...
    def ask(self, question: str, options: AnswerOptions) -> Answer: ...
    def delete(self, document_id: str) -> None: ...
    def stats(self) -> StoreStats: ...
    def refresh(self) -> bool: ...
    def compact(self) -> None: ...
    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]: ...
    def evaluate(self, bench_dir: str, options: EvalOptions) -> EvalReport: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def location(self) -> str: ...

def methods() -> list[str]: ...
def method_options(method: str) -> list[MethodOption]: ...
