#!/usr/bin/env python3
"""walframes.py - WAL frames a catalog commit writes, by B-tree.

  strace -f -qq -xx -s 8 -e trace=pwrite64 -y -p DAEMON_PID -o TRACE &
  ... the workload (cp -R, setfattr --restore) ...
  walframes.py TRACE STORE/catalog.db [SKIP]

Each frame SQLite appends to the catalog's -wal file is a 24-byte header
(page number, and the database's size on the frame that ends a commit)
and a page: the headers in the trace give each commit's pages, and
SQLite's dbstat table maps page numbers to B-trees (as they are when the
script runs: a page split off during the trace counts for the tree that
holds it at the end).  SKIP: commits at the start of the trace to leave
out (those of an earlier phase).  Prints commits, frames a commit, and
frames a commit by B-tree.
"""
import collections
import re
import sqlite3
import sys

CALL = re.compile(r'pwrite64\(\d+<([^>]*)>, "([^"]*)"(?:\.\.\.)?, (\d+), \d+\)')


def unhex(s):
    return bytes(int(x, 16) for x in re.findall(r'\\x([0-9a-f]{2})', s))


def commits(trace):
    done, cur = [], []
    with open(trace, errors="replace") as f:
        for line in f:
            m = CALL.search(line)
            if not m or int(m.group(3)) != 24:
                continue
            if not unhex(m.group(1)).decode(errors="replace").endswith("-wal"):
                continue
            head = unhex(m.group(2))
            cur.append(int.from_bytes(head[0:4], "big"))
            if int.from_bytes(head[4:8], "big"):
                done.append(cur)
                cur = []
    return done


def main():
    trace, db = sys.argv[1], sys.argv[2]
    skip = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    names = dict(sqlite3.connect(db).execute("SELECT pageno, name FROM dbstat"))
    names[1] = "page 1 (header)"
    sel = commits(trace)[skip:]
    if not sel:
        sys.exit("walframes: no commit in " + trace)
    by = collections.Counter()
    for c in sel:
        for p in c:
            by[names.get(p, "page %d (freed)" % p)] += 1
    n = sum(len(c) for c in sel)
    print("commits %d, frames %d, %.2f a commit" % (len(sel), n, n / len(sel)))
    for k, v in by.most_common():
        print("  %-32s %.2f" % (k, v / len(sel)))


if __name__ == "__main__":
    main()
