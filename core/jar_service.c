/*
 * jar_service.c - the factory service file: found in the archive, read,
 * and parsed as java.util.ServiceLoader parses it (UTF-8, one Java binary
 * name a line, `#` comments; jar.h, jar_service_parse).
 */
#include "jar_int.h"
#include "utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* UTF-8 and Java identifiers.                                         */

/*
 * Could `c` (not ASCII) be part of a Java identifier, or start one?
 * Character.isJavaIdentifierStart/Part decide by Unicode category; we
 * know Latin-1 exactly and the blanks and punctuation that show up in
 * hand-edited files, and take other letters on trust.  C1 controls and
 * other "ignorable" characters that Java tolerates inside a name are
 * refused, as ASCII controls are: no compiler writes them.
 */
static int java_ident_wide(long c, int start)
{
	if (c < 0xa0)
		return 0;
	if (c <= 0xff) {
		if ((c >= 0xa2 && c <= 0xa5) || c == 0xaa || c == 0xb5 ||
		    c == 0xba)
			return 1;
		return c >= 0xc0 && c != 0xd7 && c != 0xf7;
	}
	if (c == 0x1680 || c == 0x3000 || c == 0x3001 || c == 0x3002 ||
	    c == 0xfeff || (c >= 0xfffc && c <= 0xffff))
		return 0;
	if (c >= 0x2000 && c <= 0x206f) /* general punctuation */
		return c == 0x203f || c == 0x2040 || c == 0x2054;
	(void)start;
	return 1;
}

/* Character.isJavaIdentifierStart(): ASCII exactly, the rest above. */
static int java_ident_start(long c)
{
	if (c < 0x80)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		       c == '_' || c == '$';
	return java_ident_wide(c, 1);
}

/* Character.isJavaIdentifierPart(), less the ignorable controls. */
static int java_ident_part(long c)
{
	return java_ident_start(c) || (c >= '0' && c <= '9') ||
	       (c >= 0x80 && java_ident_wide(c, 0));
}

/* ------------------------------------------------------------------ */
/* The service file.                                                   */

/* The names gathered by jar_service_parse(). */
struct names_acc {
	char **v; /* in file order */
	size_t n, alloc;
	struct hash seen; /* the names in v, to drop duplicates */
};

/* One line of a service file: add its name to `acc`, if it has one. */
static int service_line(const char *p, size_t n, unsigned line,
			struct names_acc *acc, struct cmfs_err *err)
{
	const unsigned char *u;
	const char *hash_at;
	size_t i = 0;
	char *name;
	long c;
	int rc;

	hash_at = memchr(p, '#', n);
	if (hash_at)
		n = (size_t)(hash_at - p);
	/* String.trim(): everything up to U+0020 goes, at both ends. */
	while (n && (unsigned char)p[0] <= ' ')
		p++, n--;
	while (n && (unsigned char)p[n - 1] <= ' ')
		n--;
	if (!n)
		return 0;
	if (memchr(p, ' ', n) || memchr(p, '\t', n))
		return cmfs_err_set(err, -EINVAL,
				    "line %u: space inside a class name", line);
	u = (const unsigned char *)p;
	while (i < n) {
		size_t at = i;

		c = utf8_next(u, n, &i);
		if (c < 0)
			return cmfs_err_set(err, -EINVAL,
					    "line %u: malformed UTF-8", line);
		if (c == 0xfeff)
			return cmfs_err_set(
				err, -EINVAL,
				"line %u: byte order mark (U+FEFF): "
				"save the file as UTF-8 without BOM",
				line);
		if (at == 0 ? !java_ident_start(c)
			    : !java_ident_part(c) && c != '.')
			return cmfs_err_set(err, -EINVAL,
					    "line %u: illegal provider-class "
					    "name %.*s: U+%04lX at byte %zu",
					    line, (int)(n > 128 ? 128 : n), p,
					    c, at + 1);
	}
	if (acc->n + 1 >= acc->alloc) {
		size_t a = acc->alloc ? acc->alloc * 2 : 8;
		char **v = realloc(acc->v, a * sizeof(*v));

		if (!v)
			return -ENOMEM;
		acc->v = v;
		acc->alloc = a;
	}
	name = malloc(n + 1);
	if (!name)
		return -ENOMEM;
	memcpy(name, p, n);
	name[n] = '\0';
	rc = hash_put(&acc->seen, name, n, 0);
	if (rc) { /* a duplicate (ServiceLoader keeps the first) or -ENOMEM */
		free(name);
		return rc < 0 ? rc : 0;
	}
	acc->v[acc->n++] = name;
	return 0;
}

int jar_service_parse(char ***out, size_t *n, const char *data, size_t len,
		      struct cmfs_err *err)
{
	struct names_acc acc = {NULL, 0, 0, {NULL, 0, 0}};
	size_t pos = 0, i;
	unsigned line = 0;
	int rc = 0;

	/*
	 * BufferedReader.readLine(): \n, \r and \r\n end a line, and the
	 * last line needs no terminator.  Splitting on bytes is safe: no
	 * byte of a multi-byte UTF-8 sequence is below 0x80.  One pass, and
	 * a hash set for the duplicates, so megabytes stay fast.
	 */
	while (pos < len && !rc) {
		size_t start = pos;

		line++;
		while (pos < len && data[pos] != '\n' && data[pos] != '\r')
			pos++;
		rc = service_line(data + start, pos - start, line, &acc, err);
		if (pos < len && data[pos] == '\r' && pos + 1 < len &&
		    data[pos + 1] == '\n')
			pos++;
		if (pos < len)
			pos++;
	}
	hash_release(&acc.seen);
	if (!rc && !acc.v) {
		acc.v = malloc(sizeof(*acc.v));
		rc = acc.v ? 0 : -ENOMEM;
	}
	if (rc) {
		for (i = 0; i < acc.n; i++)
			free(acc.v[i]);
		free(acc.v);
		return rc;
	}
	acc.v[acc.n] = NULL;
	*out = acc.v;
	*n = acc.n;
	return 0;
}

void jar_names_free(char **names)
{
	char **p;

	if (!names)
		return;
	for (p = names; *p; p++)
		free(*p);
	free(names);
}

/* The service file's class names: 0 and *names, STOP or -errno. */
int jar_read_service(struct insp *in, char ***names, size_t *n)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	uint8_t *data = NULL;
	uintptr_t idx;
	size_t len;
	int rc;

	if (!hash_get(&in->entries, JAR_SERVICE_FILE,
			 strlen(JAR_SERVICE_FILE), &idx))
		return jar_fail(in, -ENOEXEC,
				"the JAR has no factory service file: when "
				"shading, merge service files");
	rc = jar_read_entry(in, (zip_uint64_t)idx, JAR_SERVICE_FILE,
			    in->lim.max_service_size, &data, &len);
	if (rc)
		return rc;
	rc = jar_service_parse(names, n, (const char *)data, len, &e);
	free(data);
	if (rc == -EINVAL)
		return jar_fail(in, -ENOEXEC,
				"the JAR's factory service file: %s", e.msg);
	if (rc)
		return rc;
	if (*n == 0) {
		jar_names_free(*names);
		*names = NULL;
		return jar_fail(in, -ENOEXEC,
				"the JAR's factory service file is empty: when "
				"shading, merge service files");
	}
	return 0;
}
