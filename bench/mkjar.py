#!/usr/bin/env python3
"""mkjar.py - the inputs of bench/run.sh: real zip archives with real
class files, written without a JDK.

  mkjar.py big OUT MIB
      a factory JAR of about MIB MiB: service file, one connector factory
      (factoryIdentifier() returns "bench-big"), one stored random entry.
  mkjar.py small DIR N [PREFIX] [FIRST]
      N factory JARs of about 2 KiB, DIR/PREFIXnnnnnnn.jar, each a connector
      whose factoryIdentifier() returns "PREFIX-<i>" (so its labels are
      accepted), plus DIR.labels: the labels of all of them in the format
      of `getfattr -d` (names relative to DIR), for `setfattr --restore`.
  mkjar.py tables DIR N NCONN [PREFIX] [SEED]
      N files DIR/tnnnnnnn.sql, each a CREATE TABLE whose connector is
      PREFIX-<k>, k random in [1, NCONN].
  mkjar.py variant IN OUT TAG
      IN with TAG as its zip comment: the same entries, other bytes, so
      an upload of it is a new blob that cmfs inspects anew (it keeps a
      blob's inspection: the same bytes again would reuse it).
  mkjar.py shaded OUT NCLASSES MIB [CLASSDIR]
      a shaded factory JAR of about MIB MiB with NCLASSES classes, all
      reachable from its factory (a tree, three children per class, with
      references to java.* and org.apache.flink.* classes), padded with
      stored resources.  With CLASSDIR (javac output), its class files are
      packed instead of generated ones.
  mkjar.py javasrc DIR NCLASSES
      the Java sources of the same tree, for javac.

Class files are Java 11 (major 55), straight-line code only (no
StackMapTable needed), and pass `javap -v`.
"""
import base64
import os
import random
import struct
import sys
import zipfile

SERVICE = "META-INF/services/org.apache.flink.table.factories.Factory"
SOURCE_IFACE = "org/apache/flink/table/factories/DynamicTableSourceFactory"
LABEL_TYPE = "user.cmf.confluent.io/sql-artifact-type"
LABEL_IDENT = "user.cmf.confluent.io/sql-artifact-identifier"
# Fixed time stamps: the same inputs give the same bytes.
DATE = (2024, 1, 1, 0, 0, 0)


class Pool:
    """A constant pool: entries deduplicated, indices from 1."""

    def __init__(self):
        self.entries = []
        self.index = {}

    def _add(self, key, data):
        if key not in self.index:
            self.entries.append(data)
            self.index[key] = len(self.entries)
        return self.index[key]

    def utf8(self, s):
        b = s.encode("utf-8")
        return self._add(("u", s), struct.pack(">BH", 1, len(b)) + b)

    def cls(self, name):
        return self._add(("c", name), struct.pack(">BH", 7, self.utf8(name)))

    def string(self, s):
        return self._add(("s", s), struct.pack(">BH", 8, self.utf8(s)))

    def nat(self, name, desc):
        return self._add(("n", name, desc),
                         struct.pack(">BHH", 12, self.utf8(name),
                                     self.utf8(desc)))

    def mref(self, owner, name, desc):
        return self._add(("m", owner, name, desc),
                         struct.pack(">BHH", 10, self.cls(owner),
                                     self.nat(name, desc)))

    def bytes(self):
        return struct.pack(">H", len(self.entries) + 1) + b"".join(
            self.entries)


def method(pool, access, name, desc, code, max_stack, max_locals):
    body = struct.pack(">HHI", max_stack, max_locals, len(code)) + code + \
        struct.pack(">HH", 0, 0)
    return struct.pack(">HHHH", access, pool.utf8(name), pool.utf8(desc), 1) \
        + struct.pack(">HI", pool.utf8("Code"), len(body)) + body


def ldc(index):
    if index < 256:
        return bytes([0x12, index])
    return bytes([0x13]) + struct.pack(">H", index)


def classfile(name, interfaces=(), ident=None, calls=(), text=None):
    """A public class `name` (slashes): a constructor, factoryIdentifier()
    returning `ident` when given, and a static run() that calls run() of
    each class in `calls`, news a java.util.ArrayList and loads `text`."""
    p = Pool()
    ident_i = p.string(ident) if ident is not None else 0
    text_i = p.string(text) if text is not None else 0
    this_i = p.cls(name)
    super_i = p.cls("java/lang/Object")
    ifaces = [p.cls(i) for i in interfaces]
    init = p.mref("java/lang/Object", "<init>", "()V")
    methods = [method(p, 0x0001, "<init>", "()V",
                      bytes([0x2a, 0xb7]) + struct.pack(">H", init) +
                      bytes([0xb1]), 1, 1)]
    if ident is not None:
        methods.append(method(p, 0x0001, "factoryIdentifier",
                              "()Ljava/lang/String;",
                              ldc(ident_i) + bytes([0xb0]), 1, 1))
    code = b""
    for c in calls:
        code += bytes([0xb8]) + struct.pack(">H", p.mref(c, "run", "()V"))
    if calls or text is not None:
        al = p.cls("java/util/ArrayList")
        al_init = p.mref("java/util/ArrayList", "<init>", "()V")
        code += bytes([0xbb]) + struct.pack(">H", al) + bytes([0x59, 0xb7]) \
            + struct.pack(">H", al_init) + bytes([0x57])
        if text is not None:
            code += ldc(text_i) + bytes([0x57])
        code += bytes([0xb1])
        methods.append(method(p, 0x0009, "run", "()V", code, 2, 0))
    out = struct.pack(">IHH", 0xCAFEBABE, 0, 55) + p.bytes()
    out += struct.pack(">HHH", 0x0021, this_i, super_i)
    out += struct.pack(">H", len(ifaces)) + b"".join(
        struct.pack(">H", i) for i in ifaces)
    out += struct.pack(">H", 0)  # fields
    out += struct.pack(">H", len(methods)) + b"".join(methods)
    out += struct.pack(">H", 0)  # attributes
    return out


def entry(zf, name, data, stored=False):
    zi = zipfile.ZipInfo(name, DATE)
    zi.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    zf.writestr(zi, data)


def factory_jar(zf, cls, ident):
    entry(zf, SERVICE, cls.replace("/", ".") + "\n")
    entry(zf, cls + ".class", classfile(cls, [SOURCE_IFACE], ident))


def cmd_big(out, mib):
    rnd = random.Random(256)
    with zipfile.ZipFile(out, "w", allowZip64=True) as zf:
        factory_jar(zf, "com/example/bench/BigFactory", "bench-big")
        zi = zipfile.ZipInfo("blob/random.bin", DATE)
        zi.compress_type = zipfile.ZIP_STORED
        left = mib << 20
        with zf.open(zi, "w", force_zip64=True) as w:
            while left:
                n = min(left, 1 << 20)
                w.write(rnd.randbytes(n))
                left -= n


def cmd_small(d, n, prefix="bench", first=1):
    os.makedirs(d, exist_ok=True)
    # MKJAR_SEED: other bytes under the same names (new versions).
    rnd = random.Random(int(os.environ.get("MKJAR_SEED", "2")))
    with open(d.rstrip("/") + ".labels", "w") as lab:
        for i in range(first, first + n):
            name = "%s%07d.jar" % (prefix, i)
            with zipfile.ZipFile(os.path.join(d, name), "w") as zf:
                factory_jar(zf, "com/example/%s/c%d/Factory" % (prefix, i),
                            "%s-%d" % (prefix, i))
                entry(zf, "data/pad.bin", rnd.randbytes(1300), stored=True)
            lab.write('# file: %s\n%s="connector"\n%s="%s-%d"\n\n' %
                      (name, LABEL_TYPE, LABEL_IDENT, prefix, i))


def cmd_tables(d, n, nconn, prefix="bench", seed=3):
    os.makedirs(d, exist_ok=True)
    rnd = random.Random(seed)
    for i in range(1, n + 1):
        t = "t%07d" % i
        k = rnd.randint(1, nconn)
        with open(os.path.join(d, t + ".sql"), "w") as f:
            f.write("-- bench table %d\n"
                    "CREATE TABLE %s (\n"
                    "  id BIGINT,\n"
                    "  name STRING,\n"
                    "  ts TIMESTAMP(3),\n"
                    "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,\n"
                    "  PRIMARY KEY (id) NOT ENFORCED\n"
                    ") WITH (\n"
                    "  'connector' = '%s-%d',\n"
                    "  'format' = 'json',\n"
                    "  'topic' = 'topic-%d'\n"
                    ");\n" % (i, t, prefix, k, i))


def tree_name(i):
    return "shaded/p%03d/C%05d" % (i % 200, i)


def children(i, n):
    return [c for c in (3 * i + 1, 3 * i + 2, 3 * i + 3) if c < n]


def cmd_shaded(out, n, mib, classdir=None):
    rnd = random.Random(20000)
    fac = "com/example/shaded/ShadedFactory"
    with zipfile.ZipFile(out, "w", allowZip64=True) as zf:
        entry(zf, SERVICE, fac.replace("/", ".") + "\n")
        if classdir:
            for root, _, files in sorted(os.walk(classdir)):
                for f in sorted(files):
                    path = os.path.join(root, f)
                    rel = os.path.relpath(path, classdir)
                    with open(path, "rb") as fh:
                        entry(zf, rel, fh.read())
        else:
            zf.writestr(zipfile.ZipInfo(fac + ".class", DATE),
                        classfile(fac, [SOURCE_IFACE], "shaded",
                                  [tree_name(0)]),
                        zipfile.ZIP_DEFLATED)
            for i in range(n):
                text = base64.b64encode(rnd.randbytes(900)).decode()
                entry(zf, tree_name(i) + ".class",
                      classfile(tree_name(i), (), None,
                                [tree_name(c) for c in children(i, n)],
                                text))
        zf.fp.flush()
        have = zf.fp.tell()
        want = mib << 20
        k = 0
        while have < want:
            size = min(4 << 20, want - have)
            entry(zf, "shaded/native/lib%03d.so" % k, rnd.randbytes(size),
                  stored=True)
            have += size + 100
            k += 1


def cmd_javasrc(d, n):
    """Sources of the same tree for javac, with stub Flink interfaces."""
    def write(rel, text):
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    rnd = random.Random(20000)
    write("stubs/org/apache/flink/table/factories/"
          "DynamicTableSourceFactory.java",
          "package org.apache.flink.table.factories;\n"
          "public interface DynamicTableSourceFactory {\n"
          "  String factoryIdentifier();\n}\n")
    write("src/com/example/shaded/ShadedFactory.java",
          "package com.example.shaded;\n"
          "public class ShadedFactory implements "
          "org.apache.flink.table.factories.DynamicTableSourceFactory {\n"
          "  public String factoryIdentifier() { return \"shaded\"; }\n"
          "  public void init() { %s.run(); }\n}\n"
          % tree_name(0).replace("/", "."))
    for i in range(n):
        pkg, cls = tree_name(i).rsplit("/", 1)
        calls = "".join("    %s.run();\n" % tree_name(c).replace("/", ".")
                        for c in children(i, n))
        text = base64.b64encode(rnd.randbytes(900)).decode()
        write("src/%s/%s.java" % (pkg, cls),
              "package %s;\npublic final class %s {\n"
              "  private static String s() { return \"%s\"; }\n"
              "  public static void run() {\n%s"
              "    new java.util.ArrayList<Object>().add(s());\n  }\n}\n"
              % (pkg.replace("/", "."), cls, text, calls))


def cmd_variant(src, out, tag):
    with open(src, "rb") as f:
        b = f.read()
    end = b.rfind(b"PK\x05\x06")
    # The end record is the last 22 bytes when there is no comment yet.
    if end < 0 or len(b) - end != 22:
        sys.exit("variant: %s: no end record without a comment" % src)
    t = tag.encode()
    with open(out, "wb") as f:
        f.write(b[:end + 20] + struct.pack("<H", len(t)) + t)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, a = argv[1], argv[2:]
    if cmd == "big":
        cmd_big(a[0], int(a[1]))
    elif cmd == "small":
        cmd_small(a[0], int(a[1]), *(a[2:3]), *(int(x) for x in a[3:4]))
    elif cmd == "tables":
        cmd_tables(a[0], int(a[1]), int(a[2]), *(a[3:4]),
                   *(int(x) for x in a[4:5]))
    elif cmd == "shaded":
        cmd_shaded(a[0], int(a[1]), int(a[2]), a[3] if len(a) > 3 else None)
    elif cmd == "variant":
        cmd_variant(a[0], a[1], a[2])
    elif cmd == "javasrc":
        cmd_javasrc(a[0], int(a[1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
