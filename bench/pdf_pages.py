#!/usr/bin/env python3
"""Writes a PDF of N pages of prose for the PDF ingestion benchmark.

Usage: bench/pdf_pages.py OUT.pdf [--pages 300] [--lines 40] [--title T] [--seed 1]
                           [--producer plain|cairo]

--producer plain (default) writes the PDF by hand (no library): one Helvetica text object per page
(a standard font, so no font is embedded), an uncompressed content stream,
the document information dictionary with /Title, and a cross-reference table
with the exact byte offsets. Page k's text is generated from a fixed
vocabulary with a seeded generator, names a few capitalised "entities" (so
the heuristic extractor has something to link) and starts with "Page k.".
Deterministic: the same arguments give the same bytes.

--producer cairo draws the same lines with cairo's PDF surface through ctypes
(the runtime library libcairo.so.2, Debian libcairo2; no Python binding
needed): DejaVu Sans embedded as a font subset, compressed content streams,
one glyph run per line, the title in the metadata: closer to what real
producers write, and slower to read.
"""
import argparse
import random

WORDS = ("river valley harbour council survey report bridge station market rainfall "
         "archive museum railway engineer festival lantern canal quarry mill school "
         "measured founded built opened closed extended recorded described surveyed "
         "north south east west old new long narrow early late upper lower").split()
NAMES = ("Ostrel Brannock Wrenfield Hollin Calder Aske Marrow Tessel Quillon Dunmere "
         "Harlow Penrith Saltmarsh Ivel Corran Blackwater").split()


def pdf_string(s):
    return "(" + s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def page_lines(rng, k, lines):
    out = [f"Page {k}."]
    for _ in range(lines - 1):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 12))]
        words[rng.randrange(len(words))] = rng.choice(NAMES)
        words[0] = words[0].capitalize()
        out.append(" ".join(words) + ".")
    return out


def content_stream(lines):
    ops = ["BT", "/F1 10 Tf", "12 TL", "56 780 Td"]
    for i, line in enumerate(lines):
        ops.append(("" if i == 0 else "T* ") + pdf_string(line) + " Tj")
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def write_pdf(path, pages, title=None):
    """pages: a list of lists of lines (an empty list: a page without text)."""
    n = len(pages)
    objects = {}
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n))
    objects[2] = f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode()
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    for i, lines in enumerate(pages):
        page, content = 4 + 2 * i, 5 + 2 * i
        objects[page] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                         f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>").encode()
        stream = content_stream(lines) if lines else b""
        objects[content] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    info = None
    if title is not None:
        info = 4 + 2 * n
        objects[info] = b"<< /Title " + pdf_string(title).encode("latin-1") + b" /Producer (flowrag bench) >>"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += b"%010d 00000 n \n" % offsets[num]
    trailer = b"<< /Size %d /Root 1 0 R" % size + (b" /Info %d 0 R" % info if info else b"") + b" >>"
    out += b"trailer\n" + trailer + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    with open(path, "wb") as f:
        f.write(out)


def write_pdf_cairo(path, pages, title=None):
    import ctypes
    cairo = ctypes.CDLL("libcairo.so.2")
    cairo.cairo_pdf_surface_create.restype = ctypes.c_void_p
    cairo.cairo_pdf_surface_create.argtypes = [ctypes.c_char_p, ctypes.c_double, ctypes.c_double]
    cairo.cairo_create.restype = ctypes.c_void_p
    cairo.cairo_create.argtypes = [ctypes.c_void_p]
    for name, args in (("cairo_select_font_face", [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                                   ctypes.c_int]),
                       ("cairo_set_font_size", [ctypes.c_void_p, ctypes.c_double]),
                       ("cairo_move_to", [ctypes.c_void_p, ctypes.c_double, ctypes.c_double]),
                       ("cairo_show_text", [ctypes.c_void_p, ctypes.c_char_p]),
                       ("cairo_show_page", [ctypes.c_void_p]),
                       ("cairo_destroy", [ctypes.c_void_p]),
                       ("cairo_surface_finish", [ctypes.c_void_p]),
                       ("cairo_surface_destroy", [ctypes.c_void_p]),
                       ("cairo_pdf_surface_set_metadata", [ctypes.c_void_p, ctypes.c_int,
                                                           ctypes.c_char_p])):
        getattr(cairo, name).argtypes = args
    surface = cairo.cairo_pdf_surface_create(path.encode(), 595.0, 842.0)
    if title is not None:
        cairo.cairo_pdf_surface_set_metadata(surface, 0, title.encode())  # CAIRO_PDF_METADATA_TITLE
    cr = cairo.cairo_create(surface)
    cairo.cairo_select_font_face(cr, b"DejaVu Sans", 0, 0)
    cairo.cairo_set_font_size(cr, 10.0)
    for lines in pages:
        for i, line in enumerate(lines):
            cairo.cairo_move_to(cr, 56.0, 62.0 + 12.0 * i)
            cairo.cairo_show_text(cr, line.encode())
        cairo.cairo_show_page(cr)
    cairo.cairo_destroy(cr)
    cairo.cairo_surface_finish(surface)
    cairo.cairo_surface_destroy(surface)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--lines", type=int, default=40, help="lines of text per page")
    ap.add_argument("--title", default="Survey of the Ostrel Valley")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--producer", choices=("plain", "cairo"), default="plain")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pages = [page_lines(rng, k, args.lines) for k in range(1, args.pages + 1)]
    (write_pdf_cairo if args.producer == "cairo" else write_pdf)(args.out, pages, args.title)


if __name__ == "__main__":
    main()
