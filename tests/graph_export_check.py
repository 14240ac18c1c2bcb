#!/usr/bin/env python3
"""Reads a flowrag graph export back with real parsers (tests/graph_export_test.cc).

  graph_export_check.py etree    EXPORT.graphml EXPECTED.json
  graph_export_check.py networkx EXPORT.graphml EXPECTED.json
  graph_export_check.py jsonl    EXPORT.jsonl   EXPECTED.json

EXPECTED.json: {"nodes": {kind: count}, "edges": {kind: count},
"names": [substrings some entity name must contain], "passages": bool}.
Exit 0: all checks passed; 1: a check failed (the reason on stderr);
77: networkx is not installed (the caller skips).
"""
import collections
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://graphml.graphdrawing.org/xmlns}"
TYPES = {"boolean", "int", "long", "float", "double", "string"}


def fail(msg):
    sys.stderr.write("graph_export_check: " + msg + "\n")
    sys.exit(1)


def check_counts(what, got, expected):
    for kind, n in expected.items():
        if got.get(kind, 0) != n:
            fail("%s of kind %s: %d, expected %d (all: %s)" % (what, kind, got.get(kind, 0), n, dict(got)))
    extra = set(got) - set(expected)
    if extra:
        fail("%s of unexpected kinds %s" % (what, sorted(extra)))


def check_facts(edges, node_kinds, with_passages):
    """edges: list of dicts with kind, sources (list), source_documents (list), relation, fact."""
    facts = [e for e in edges if e.get("kind") == "RELATED_TO"]
    for e in facts:
        for field in ("relation", "fact", "sources", "source_documents", "source_count"):
            if field not in e:
                fail("RELATED_TO edge %s has no %s" % (e.get("id"), field))
        if len(e["sources"]) != e["source_count"] or not e["sources"]:
            fail("RELATED_TO edge %s: sources %r, source_count %r" % (e["id"], e["sources"], e["source_count"]))
        if with_passages:
            for p in e["sources"]:
                if node_kinds.get(p) != "Passage":
                    fail("RELATED_TO edge %s names source %r, not a passage node" % (e["id"], p))
    return len(facts)


def check_names(names, expected):
    for want in expected:
        if not any(want in n for n in names):
            fail("no entity name contains %r" % want)


def etree(path, exp):
    root = ET.parse(path).getroot()  # expat: rejects malformed XML and invalid characters
    if root.tag != NS + "graphml":
        fail("root element %s" % root.tag)
    keys = {}
    for k in root.findall(NS + "key"):
        kid, dom, name, typ = k.get("id"), k.get("for"), k.get("attr.name"), k.get("attr.type")
        if not kid or not name or dom not in ("node", "edge", "graph") or typ not in TYPES:
            fail("key %r: for=%r attr.name=%r attr.type=%r" % (kid, dom, name, typ))
        if kid in keys:
            fail("key id %s declared twice" % kid)
        keys[kid] = (dom, name, typ)
    graphs = root.findall(NS + "graph")
    if len(graphs) != 1 or graphs[0].get("edgedefault") != "directed":
        fail("expected one <graph edgedefault=\"directed\">")
    g = graphs[0]

    def attrs(elem, domain):
        out = {}
        for d in elem.findall(NS + "data"):
            k = d.get("key")
            if k not in keys or keys[k][0] != domain:
                fail("<data key=%r> in a %s: not a declared %s key" % (k, domain, domain))
            _, name, typ = keys[k]
            text = d.text or ""
            if typ in ("int", "long"):
                text = int(text)
            elif typ in ("float", "double"):
                text = float(text)
            elif typ == "boolean":
                if text not in ("true", "false"):
                    fail("boolean %r" % text)
            out[name] = text
        return out

    node_kinds, names = {}, []
    for n in g.findall(NS + "node"):
        nid = n.get("id")
        if not nid or nid in node_kinds:
            fail("node id %r missing or repeated" % nid)
        a = attrs(n, "node")
        node_kinds[nid] = a.get("kind")
        if a.get("kind") == "Entity":
            names.append(a.get("name", ""))
    edges, ids = [], set()
    for e in g.findall(NS + "edge"):
        eid, s, t = e.get("id"), e.get("source"), e.get("target")
        if not eid or eid in ids:
            fail("edge id %r missing or repeated" % eid)
        ids.add(eid)
        if s not in node_kinds or t not in node_kinds:
            if not (exp.get("passages") is False and (s or "").startswith("p")):
                fail("edge %s: endpoint %r or %r is no node" % (eid, s, t))
        a = attrs(e, "edge")
        a["id"] = eid
        if "sources" in a:
            a["sources"] = a["sources"].split(" ") if a["sources"] else []
        if "source_documents" in a:
            a["source_documents"] = a["source_documents"].split("\n") if a["source_documents"] else []
        edges.append(a)
    check_counts("nodes", collections.Counter(node_kinds.values()), exp["nodes"])
    check_counts("edges", collections.Counter(e.get("kind") for e in edges), exp["edges"])
    facts = check_facts(edges, node_kinds, exp.get("passages", True))
    check_names(names, exp.get("names", []))
    print(json.dumps({"nodes": len(node_kinds), "edges": len(edges), "facts": facts}))


def networkx_check(path, exp):
    try:
        import networkx as nx
    except ImportError:
        print("networkx is not installed (Debian python3-networkx)")
        sys.exit(77)
    G = nx.read_graphml(path)
    want_nodes = sum(exp["nodes"].values())
    want_edges = sum(exp["edges"].values())
    if G.number_of_nodes() != want_nodes or G.number_of_edges() != want_edges:
        fail("networkx read %d nodes, %d edges; expected %d, %d" %
             (G.number_of_nodes(), G.number_of_edges(), want_nodes, want_edges))
    if not G.is_directed():
        fail("networkx read an undirected graph")
    check_counts("nodes", collections.Counter(k for _, k in G.nodes(data="kind")), exp["nodes"])
    kinds = collections.Counter()
    for _, _, d in G.edges(data=True):
        kinds[d.get("kind")] += 1
        if d.get("kind") == "RELATED_TO":
            if not isinstance(d.get("fact"), int) or not d.get("sources") or "relation" not in d:
                fail("RELATED_TO edge without fact/sources/relation: %r" % d)
        if "weight" in d and not isinstance(d["weight"], float):
            fail("weight %r is not a float" % d["weight"])
    check_counts("edges", kinds, exp["edges"])
    check_names([d.get("name", "") for _, d in G.nodes(data=True) if d.get("kind") == "Entity"],
                exp.get("names", []))
    print(json.dumps({"nodes": G.number_of_nodes(), "edges": G.number_of_edges(),
                      "multigraph": G.is_multigraph(), "networkx": nx.__version__}))


def jsonl(path, exp):
    node_kinds, names, edges, ids = {}, [], [], set()
    header = None
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")  # strict: the export is valid UTF-8
                obj = json.loads(line)
            except (UnicodeDecodeError, ValueError) as e:
                fail("line %d: %s" % (number, e))
            if not isinstance(obj, dict) or "type" not in obj:
                fail("line %d: not an object with a type" % number)
            if number == 1:
                if obj["type"] != "graph":
                    fail("line 1: expected the graph header, got %r" % obj["type"])
                header = obj
                continue
            if obj["type"] == "node":
                if obj["id"] in node_kinds:
                    fail("line %d: node id %s repeated" % (number, obj["id"]))
                node_kinds[obj["id"]] = obj["kind"]
                if obj["kind"] == "Entity":
                    names.append(obj["name"])
            elif obj["type"] == "edge":
                if obj["id"] in ids:
                    fail("line %d: edge id %s repeated" % (number, obj["id"]))
                ids.add(obj["id"])
                edges.append(obj)
            else:
                fail("line %d: type %r" % (number, obj["type"]))
    if header is None:
        fail("empty file")
    if header["nodes"] != len(node_kinds) or header["edges"] != len(edges):
        fail("header says %d nodes, %d edges; read %d, %d" %
             (header["nodes"], header["edges"], len(node_kinds), len(edges)))
    check_counts("nodes", collections.Counter(node_kinds.values()), exp["nodes"])
    check_counts("edges", collections.Counter(e["kind"] for e in edges), exp["edges"])
    facts = check_facts(edges, node_kinds, exp.get("passages", True))
    check_names(names, exp.get("names", []))
    print(json.dumps({"nodes": len(node_kinds), "edges": len(edges), "facts": facts}))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("etree", "networkx", "jsonl"):
        sys.stderr.write(__doc__)
        sys.exit(2)
    with open(sys.argv[3]) as f:
        exp = json.load(f)
    {"etree": etree, "networkx": networkx_check, "jsonl": jsonl}[sys.argv[1]](sys.argv[2], exp)


if __name__ == "__main__":
    main()
