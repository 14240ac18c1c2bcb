#!/usr/bin/env python3
"""Which sections of a snapshot segment a running process holds in memory.

A served store's resident set is mostly the segment's file pages that its queries touched
(RssFile). This reads the process's page table (/proc/PID/pagemap, bit 63: present; root
not needed for that bit) over every mapping of the segment file and counts the present
pages per section of the segment's table (src/segment/segment_format.h: header, then
80-byte section entries). A page shared by two sections (the alignment is 64 bytes below
64 KiB) counts for the first.

Usage: bench/segment_residency.py PID SEGMENT [--top N]
As a module: resident_sections(pid, segment) -> [(name, resident_bytes, length)].
"""
import argparse
import bisect
import os
import struct

PAGE = os.sysconf("SC_PAGE_SIZE")


def sections(segment):
    """[(offset, length, name)] in file order, from the segment's section table."""
    with open(segment, "rb") as f:
        header = f.read(128)
        table_offset, = struct.unpack_from("<Q", header, 88)
        count, entry_bytes = struct.unpack_from("<II", header, 96)
        f.seek(table_offset)
        table = f.read(count * entry_bytes)
    out = []
    for i in range(count):
        entry = table[i * entry_bytes:(i + 1) * entry_bytes]
        name = entry[:32].rstrip(b"\0").decode("ascii", "replace")
        offset, length = struct.unpack_from("<QQ", entry, 48)
        out.append((offset, length, name))
    return out


def mappings(pid, segment):
    """[(start, end, file_offset)] of the process's mappings of `segment`."""
    target = os.stat(segment)
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) < 6:
                continue
            try:
                st = os.stat(parts[5].strip())
            except OSError:
                continue
            if (st.st_dev, st.st_ino) != (target.st_dev, target.st_ino):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            out.append((start, end, int(parts[2], 16)))
    return out


def resident_file_pages(pid, segment):
    """File page numbers of `segment` present in the process's page table."""
    present = set()
    with open(f"/proc/{pid}/pagemap", "rb") as pm:
        for start, end, file_offset in mappings(pid, segment):
            chunk = 1 << 16  # pages per read
            for first in range(start // PAGE, end // PAGE, chunk):
                n = min(chunk, end // PAGE - first)
                pm.seek(first * 8)
                words = struct.unpack(f"<{n}Q", pm.read(n * 8))
                base = file_offset // PAGE + (first - start // PAGE)
                present.update(base + i for i, w in enumerate(words) if w >> 63)
    return present


def resident_sections(pid, segment):
    table = sections(segment)
    starts = [off for off, _, _ in table]
    resident = {name: 0 for _, _, name in table}
    other = 0
    for page in resident_file_pages(pid, segment):
        i = bisect.bisect_right(starts, page * PAGE + PAGE - 1) - 1
        # The first section that overlaps the page.
        while i > 0 and table[i - 1][0] + table[i - 1][1] > page * PAGE:
            i -= 1
        if i >= 0 and table[i][0] < (page + 1) * PAGE and table[i][0] + table[i][1] > page * PAGE:
            resident[table[i][2]] += PAGE
        else:
            other += PAGE
    rows = [(name, resident[name], length) for _, length, name in table]
    rows.append(("(header, table, block checksums)", other, 0))
    return rows


def print_table(rows, top):
    rows = sorted(rows, key=lambda r: -r[1])
    total = sum(r[1] for r in rows)
    print("| section | resident MiB | of MiB |")
    print("|---|---|---|")
    for name, res, length in rows[:top]:
        print(f"| {name} | {res / 2**20:.1f} | {length / 2**20:.1f} |")
    print(f"| all | {total / 2**20:.1f} | |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("segment")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    print_table(resident_sections(args.pid, args.segment), args.top)


if __name__ == "__main__":
    main()
