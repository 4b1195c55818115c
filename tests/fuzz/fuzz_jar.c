/*
 * fuzz_jar.c - libFuzzer target for the JAR inspector.
 *
 * Two modes, by the input's first bytes:
 *  - anything else: the bytes are the archive, inspected from memory
 *    (the same zip_source path as a file), then reported as text and
 *    JSON (which jansson must read back as one object); and the same bytes are parsed as a service file;
 *  - CA FE BA BE: the bytes are class files laid end to end (split where
 *    each magic starts).  Each one that parses is stored under its own
 *    class name in a JAR made here, whose service file lists the first
 *    two, so mutations reach the hierarchy, identifier and reach walks
 *    instead of dying in the zip headers.
 *
 * Caps are lowered so that no input takes long.  Seeds:
 * tests/fuzz/corpus/jar/ (the fixture JARs, and classes-*.bin: the
 * classes of some fixtures end to end).
 */
#include "classfile.h"
#include "jar.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t magic[4] = {0xca, 0xfe, 0xba, 0xbe};

/* CRC-32 (zip's), bit by bit: inputs are small. */
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

static void put16(struct buf *b, unsigned v)
{
	buf_addc(b, (char)(v & 0xff));
	buf_addc(b, (char)(v >> 8 & 0xff));
}

static void put32(struct buf *b, uint32_t v)
{
	put16(b, v & 0xffff);
	put16(b, v >> 16);
}

/* One stored entry of the zip being built. */
struct entry {
	char *name;
	const uint8_t *data;
	size_t len;
	uint32_t offset;
};

/* A stored zip of the entries, into z. */
static void write_zip(struct buf *z, const struct entry *e, size_t n)
{
	struct buf cd = BUF_INIT(1 << 24);
	size_t i, start;

	for (i = 0; i < n; i++) {
		uint32_t crc = crc32_of(e[i].data, e[i].len);
		size_t nl = strlen(e[i].name);

		put32(&cd, 0x02014b50);
		put16(&cd, 20);
		put16(&cd, 20);
		put16(&cd, 0x800);
		put16(&cd, 0);
		put32(&cd, 0x00210000);
		put32(&cd, crc);
		put32(&cd, (uint32_t)e[i].len);
		put32(&cd, (uint32_t)e[i].len);
		put16(&cd, (unsigned)nl);
		put32(&cd, 0);
		put32(&cd, 0);
		put32(&cd, 0);
		put32(&cd, (uint32_t)z->len);
		buf_add(&cd, e[i].name, nl);
		put32(z, 0x04034b50);
		put16(z, 20);
		put16(z, 0x800);
		put16(z, 0);
		put32(z, 0x00210000);
		put32(z, crc);
		put32(z, (uint32_t)e[i].len);
		put32(z, (uint32_t)e[i].len);
		put16(z, (unsigned)nl);
		put16(z, 0);
		buf_add(z, e[i].name, nl);
		buf_add(z, e[i].data, e[i].len);
	}
	start = z->len;
	buf_add(z, cd.data, cd.len);
	put32(z, 0x06054b50);
	put32(z, 0);
	put16(z, (unsigned)n);
	put16(z, (unsigned)n);
	put32(z, (uint32_t)cd.len);
	put32(z, (uint32_t)start);
	put16(z, 0);
	buf_release(&cd);
}

/* Inspect and format the report both ways. */
static void inspect(const uint8_t *data, size_t size)
{
	struct buf out = BUF_INIT(1 << 22);
	struct cmfs_err err = CMFS_ERR_INIT;
	struct jar_report *r = NULL;
	struct jar_limits lim;

	jar_limits_default(&lim);
	lim.max_entry_size = 1 << 20;
	lim.max_inflated = 8 << 20;
	lim.max_entries = 10000;
	lim.max_classes = 2000;
	if (jar_inspect_mem(&r, data, size, &lim, &err) == 0) {
		size_t text;
		json_t *j;

		jar_report_format(&out, r, "java.*, org.apache.flink.*", 0);
		text = out.len;
		/* The JSON report is one valid JSON object, whatever the
		 * names in the JAR. */
		if (!jar_report_format(&out, r, NULL, 1)) {
			j = json_loadb(out.data + text, out.len - text, 0,
				       NULL);
			if (!json_is_object(j))
				abort();
			json_decref(j);
		}
		jar_report_free(r);
	}
	buf_release(&out);
}

/* The class-files mode: a JAR of the classes in `data`. */
static void class_jar(const uint8_t *data, size_t size)
{
	struct entry e[65];
	struct buf svc = BUF_INIT(1 << 16), z = BUF_INIT(1 << 24);
	size_t n = 1, i, start = 0, end, named = 0;

	while (start < size && n < 65) {
		struct classfile *cf = NULL;
		char *name = NULL, *p;

		for (end = start + 4; end + 4 <= size; end++)
			if (!memcmp(data + end, magic, 4))
				break;
		if (end + 4 > size)
			end = size;
		if (!classfile_parse(&cf, data + start, end - start, NULL) &&
		    !classfile_class_name(&name, cf, cf->this_class, NULL) &&
		    name[0] != '[') {
			e[n].data = data + start;
			e[n].len = end - start;
			e[n].name = malloc(strlen(name) + 7);
			strcpy(e[n].name, name);
			strcat(e[n].name, ".class");
			if (named++ < 2) {
				for (p = name; *p; p++)
					if (*p == '/')
						*p = '.';
				buf_adds(&svc, name);
				buf_addc(&svc, '\n');
			}
			n++;
		}
		free(name);
		classfile_free(cf);
		start = end;
	}
	e[0].name = strdup(JAR_SERVICE_FILE);
	e[0].data = (const uint8_t *)buf_str(&svc);
	e[0].len = svc.len;
	write_zip(&z, e, n);
	inspect((const uint8_t *)z.data, z.len);
	for (i = 0; i < n; i++)
		free(e[i].name);
	buf_release(&svc);
	buf_release(&z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	char **names = NULL;
	size_t n;

	if (size >= 4 && !memcmp(data, magic, 4)) {
		class_jar(data, size);
		return 0;
	}
	inspect(data, size);
	if (jar_service_parse(&names, &n, (const char *)data, size, &err) == 0)
		jar_names_free(names);
	return 0;
}
