/*
 * jar.c - the JAR inspector: what a factory JAR offers, read, never run.
 *
 * One inspection is one `struct insp`.  libzip opens the archive with its
 * consistency checks (ZIP_CHECKCONS, read-only) and its verdict on
 * whether the file is a valid zip is the one that stands; we add what it
 * does not check: that the file is a zip from its first byte on, that no
 * two entries share a name (every raw name goes into a hash table), and
 * a cap on the entries an end record declares, weighed before libzip
 * allocates a table that big.  libzip reads the archive through a
 * zip_source of our own that reads with pread() (so a shared fd keeps
 * its offset, and memory and files take the same path), and it reads
 * every entry: a deflated one's bytes are inflated by libdeflate when
 * they come out whole with their CRC-32, else by libzip, so each verdict
 * on a damaged entry is libzip's own.  Then:
 *
 *   1. the service file is inflated and parsed as ServiceLoader would;
 *   2. each listed factory class is read; its supertypes are walked
 *      depth-first through the JAR's classes (three colours, so a cyclic
 *      hierarchy is reported, not followed forever) to find its kind, and
 *      factoryIdentifier() is resolved as the JVM selects it, then judged
 *      constant or not;
 *   3. the factories' code is followed at method level from the
 *      planner's calls (reach.c): the external classes it loads are what
 *      compiling a statement needs;
 *   4. the classes the factories name are followed breadth-first through
 *      the JAR; the other names the JAR does not hold are what only the
 *      job's run time needs.
 *
 * Only the service file and the classes reached are inflated.  Each
 * inflate is counted as it happens (struct jar_limits): no size declared
 * in a header is believed, and a stream that outgrows its declared size is
 * stopped there.  Problems that make a valid zip a useless factory JAR go
 * into the report (jar_fail, which returns STOP); only a broken archive,
 * memory and I/O are errors of the call.  libzip's codes become errnos
 * in jar_archive.c and nowhere else (zip_errno).
 *
 * The module's files, one concern each: jar.c (this: an inspection from
 * start to end, the factories, the report and its formats), jar_archive.c
 * (the zip archive and its entries), jar_service.c (the service file),
 * jar_walk.c (the classes, the kind walk and the reach), jar_ident.c
 * (factoryIdentifier()); jar_int.h is what they share.  Its hash tables
 * are hash.c's.
 */
#include "jar_int.h"
#include "utf8.h"

#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Generous for real JARs (the largest shaded connectors hold some 50,000
 * entries, a class file is rarely over 1 MiB, a service file a few
 * lines), small enough that a hostile upload costs some tens of MiB of
 * memory (a class's bytes are freed once read) and a second of CPU.
 */
void jar_limits_default(struct jar_limits *lim)
{
	lim->max_entries = 200000;
	lim->max_entry_size = 16u << 20;
	lim->max_inflated = 256u << 20;
	lim->max_classes = 50000;
	lim->max_depth = 64;
	lim->max_service_size = 1u << 20;
}

/* The first reason wins (jar_int.h). */
int jar_fail(struct insp *in, int code, const char *fmt, ...)
{
	char msg[2 * CMFS_ERR_MSG];
	va_list ap;
	char *p;

	if (in->rep->error)
		return STOP;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	in->rep->error = strdup(msg);
	if (!in->rep->error)
		return -ENOMEM;
	in->rep->code = code;
	return STOP;
}

/* Each listed factory: its class, kind and identifier, in file order. */
static int inspect_factories(struct insp *in)
{
	struct jar_report *rep = in->rep;
	char **names = NULL, *iname = NULL;
	struct jar_factory *f;
	struct jclass *jc;
	size_t n = 0, i;
	int rc;

	rc = jar_read_service(in, &names, &n);
	if (rc)
		return rc;
	rep->factories = calloc(n, sizeof(*rep->factories));
	if (!rep->factories) {
		rc = -ENOMEM;
		goto out;
	}
	/*
	 * A binary name becomes an internal name by its dots alone: `$` of a
	 * nested class stays, as in the entry name.  Each factory is read,
	 * walked for its kind (which also proves its hierarchy finite), and
	 * only then asked for its identifier.
	 */
	for (i = 0; i < n && !rc; i++) {
		free(iname);
		iname = jar_name_dup(names[i], '.', '/');
		if (!iname) {
			rc = -ENOMEM;
			break;
		}
		rc = jar_load_class(in, iname, &jc);
		if (!rc && !jc)
			rc = jar_fail(
				in, -ENOEXEC,
				"factory class %s is listed in the service "
				"file but not in the JAR",
				names[i]);
		if (!rc)
			rc = jar_walk_kind(in, jc, 0);
		if (rc)
			break;
		f = &rep->factories[rep->nfactories];
		f->kind = jc->bits & BIT_CONNECTOR ? JAR_KIND_CONNECTOR
			  : jc->bits & BIT_FORMAT  ? JAR_KIND_FORMAT
						   : JAR_KIND_OTHER;
		rc = jar_factory_identifier(in, jc, &f->identifier);
		if (rc)
			break;
		f->cls = strdup(names[i]);
		if (!f->cls) {
			free(f->identifier);
			f->identifier = NULL;
			rc = -ENOMEM;
			break;
		}
		rep->nfactories++;
		rc = jar_enqueue(in, jc);
	}
out:
	free(iname);
	jar_names_free(names);
	return rc;
}

/* Let go of all an inspection holds besides its report. */
static void insp_free(struct insp *in)
{
	size_t i;

	jar_archive_close(in);
	for (i = 0; i < in->ncls; i++)
		jar_jclass_clear(in->cls[i]);
	free(in->cls);
	free(in->queue);
	for (i = 0; i < in->next; i++)
		free(in->ext[i]);
	free(in->ext);
	free(in->compile); /* one block (reach_run) */
	jar_names_release(in); /* the classes' names were the records' */
}

/* The inspection proper, over any input: 0 and *out, or -errno. */
static int inspect(struct jar_report **out, struct input *src,
		   const struct jar_limits *lim, struct cmfs_err *err)
{
	struct insp in;
	int rc;

	memset(&in, 0, sizeof(in));
	in.src = src;
	in.err = err;
	if (lim)
		in.lim = *lim;
	else
		jar_limits_default(&in.lim);
	in.max_depth = in.lim.max_depth < DEPTH_CEILING ? in.lim.max_depth
							: DEPTH_CEILING;
	in.rep = calloc(1, sizeof(*in.rep));
	if (!in.rep)
		return cmfs_err_set(err, -ENOMEM, "out of memory");
	/* Each step runs only if the one before found nothing wrong: STOP
	 * (the report has its error) and errors skip the rest alike. */
	rc = jar_open_archive(&in);
	if (!rc)
		rc = inspect_factories(&in);
	if (!rc)
		rc = jar_reach_compile(&in);
	if (!rc)
		rc = jar_read_options(&in);
	if (!rc)
		rc = jar_reach(&in);
	if (!rc)
		rc = jar_report_external(&in);
	insp_free(&in);
	if (rc < 0) {
		jar_report_free(in.rep);
		return cmfs_err_set(err, rc, "%s", strerror(-rc));
	}
	*out = in.rep;
	return 0;
}

int jar_inspect_fd(struct jar_report **out, int fd,
		   const struct jar_limits *lim, struct cmfs_err *err)
{
	struct input src;
	int rc = jar_input_fd(&src, fd, err);

	if (rc)
		return rc;
	rc = inspect(out, &src, lim, err);
	jar_input_release(&src);
	return rc;
}

int jar_inspect_mem(struct jar_report **out, const void *data, size_t len,
		    const struct jar_limits *lim, struct cmfs_err *err)
{
	struct input src;
	int rc;

	jar_input_mem(&src, data, len);
	rc = inspect(out, &src, lim, err);
	jar_input_release(&src);
	return rc;
}

int jar_inspect(struct jar_report **out, const char *path,
		const struct jar_limits *lim, struct cmfs_err *err)
{
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* A missing or forbidden file says so; the rest is I/O. */
		rc = errno == ENOENT || errno == EACCES ? -errno : -EIO;
		return cmfs_err_set(err, rc, "%s: %s", path, strerror(errno));
	}
	rc = jar_inspect_fd(out, fd, lim, err);
	close(fd);
	return rc;
}

/* Also frees reports that other modules build (catalog.c reads them back). */
void jar_report_free(struct jar_report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nfactories; i++) {
		free(r->factories[i].cls);
		free(r->factories[i].identifier);
		options_set_release(&r->factories[i].options);
	}
	free(r->factories);
	for (i = 0; i < r->nexternal; i++)
		free(r->external[i]);
	free(r->external);
	for (i = 0; i < r->nruntime; i++)
		free(r->runtime[i]);
	free(r->runtime);
	free(r->error);
	free(r);
}

/* n strings of src copied into a new array at *dst: 0 or -ENOMEM (what
 * was copied stays in *dst for the caller to free; *n_out counts it). */
static int copy_strings(char ***dst, size_t *n_out, char *const *src,
			size_t n)
{
	size_t i;

	*dst = NULL;
	*n_out = 0;
	if (!n)
		return 0;
	if (!(*dst = calloc(n, sizeof(**dst))))
		return -ENOMEM;
	for (i = 0; i < n; i++, (*n_out)++)
		if (!((*dst)[i] = strdup(src[i])))
			return -ENOMEM;
	return 0;
}

int jar_report_copy(struct jar_report **out, const struct jar_report *r)
{
	struct jar_report *c = calloc(1, sizeof(*c));
	size_t i;
	int rc = 0;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->code = r->code;
	c->nentries = r->nentries;
	if (r->error && !(c->error = strdup(r->error)))
		rc = -ENOMEM;
	if (!rc && r->nfactories &&
	    !(c->factories = calloc(r->nfactories, sizeof(*c->factories))))
		rc = -ENOMEM;
	for (i = 0; !rc && i < r->nfactories; i++, c->nfactories++) {
		const struct jar_factory *f = &r->factories[i];
		struct jar_factory *g = &c->factories[i];

		g->kind = f->kind;
		if (!(g->cls = strdup(f->cls)) ||
		    (f->identifier && !(g->identifier = strdup(f->identifier))))
			rc = -ENOMEM;
		else
			rc = options_set_copy(&g->options, &f->options);
	}
	if (!rc)
		rc = copy_strings(&c->external, &c->nexternal, r->external,
				  r->nexternal);
	if (!rc)
		rc = copy_strings(&c->runtime, &c->nruntime, r->runtime,
				  r->nruntime);
	if (rc) {
		jar_report_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

/*
 * The heap bytes of one malloc'd block of n bytes (0: none): glibc's
 * allocator adds a word of header and rounds up to 16 bytes, 32 at least.
 * A report holds thousands of short class names, and their blocks are
 * about half of what it takes.
 */
static size_t block(size_t n)
{
	return n ? (n + 8 <= 32 ? 32 : (n + 8 + 15) & ~(size_t)15) : 0;
}

/* A string's block; NULL: none. */
static size_t str_block(const char *s)
{
	return s ? block(strlen(s) + 1) : 0;
}

size_t jar_report_size(const struct jar_report *r)
{
	size_t n = block(sizeof(*r)) + str_block(r->error), i, j;

	n += block(r->nfactories * sizeof(*r->factories));
	for (i = 0; i < r->nfactories; i++) {
		const struct jar_factory *f = &r->factories[i];

		n += str_block(f->cls) + str_block(f->identifier) +
		     str_block(f->options.prefixes) +
		     block(f->options.n * sizeof(*f->options.v));
		for (j = 0; j < f->options.n; j++) {
			const struct options_option *o = &f->options.v[j];

			n += str_block(o->key) + str_block(o->type) +
			     str_block(o->values) + str_block(o->defval) +
			     str_block(o->deprecated) + str_block(o->fallback);
		}
	}
	n += block(r->nexternal * sizeof(*r->external));
	for (i = 0; i < r->nexternal; i++)
		n += str_block(r->external[i]);
	n += block(r->nruntime * sizeof(*r->runtime));
	for (i = 0; i < r->nruntime; i++)
		n += str_block(r->runtime[i]);
	return n;
}

/* The names are those of CMF's sql-artifact-type label (and "other"). */
const char *jar_kind_name(enum jar_kind k)
{
	switch (k) {
	case JAR_KIND_CONNECTOR:
		return "connector";
	case JAR_KIND_FORMAT:
		return "format";
	default:
		return "other";
	}
}

int jar_kind_parse(enum jar_kind *out, const char *s)
{
	static const enum jar_kind all[] = {JAR_KIND_CONNECTOR, JAR_KIND_FORMAT,
					    JAR_KIND_OTHER};
	size_t i;

	for (i = 0; s && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(s, jar_kind_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* Allowlist and the `cmfs inspect` report.                            */

/*
 * Walk the list once, pattern by pattern, without copying it: each is
 * trimmed of blanks, then matched as a prefix (a trailing `*`) or whole.
 */
int jar_class_allowed(const char *cls, const char *allowlist)
{
	const char *p = allowlist, *end, *s;
	size_t n;

	if (!cls || !p)
		return 0;
	while (*p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		s = p;
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		n = (size_t)(end - s);
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (n && s[n - 1] == '*') {
			if (!strncmp(cls, s, n - 1))
				return 1;
		} else if (n && strlen(cls) == n && !memcmp(cls, s, n)) {
			return 1;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

size_t jar_report_refused(const struct jar_report *r, const char *allowlist)
{
	size_t i, n = 0;

	for (i = 0; i < r->nexternal; i++)
		n += !jar_class_allowed(r->external[i], allowlist);
	return n;
}

/*
 * `s` as a JSON string (null for NULL), bytes that are not UTF-8 replaced
 * by U+FFFD: jansson takes only UTF-8, and a report names what it found,
 * broken names included.  NULL when out of memory.
 */
static json_t *json_text(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	struct buf b = BUF_INIT(SIZE_MAX);
	size_t i = 0, n, at;
	json_t *j;
	int rc = 0;

	if (!s)
		return json_null();
	n = strlen(s);
	while (i < n && utf8_next(u, n, &i) >= 0)
		;
	if (i == n)
		return json_string(s);
	rc = buf_add(&b, s, i);
	while (!rc && i < n) {
		at = i;
		if (utf8_next(u, n, &i) < 0) {
			rc = buf_adds(&b, "\xef\xbf\xbd");
			i = at + 1;
		} else {
			rc = buf_add(&b, s + at, i - at);
		}
	}
	j = rc ? NULL : json_string(buf_str(&b));
	buf_release(&b);
	return j;
}

/* A factory's options: "options":[...],"options_unknown":[...],
 * "prefixes":"..." into object `f`.  0 or -ENOMEM. */
static int options_json(json_t *f, const struct options_set *s)
{
	static const char *const unk[] = {"required", "optional",
					  "prefixes", "validation"};
	json_t *opts = json_array(), *unknown = json_array();
	size_t i;
	int rc = json_object_set_new(f, "options", opts) |
		 json_object_set_new(f, "options_unknown", unknown);

	for (i = 0; i < s->n && !rc; i++) {
		const struct options_option *o = &s->v[i];

		rc = json_array_append_new(
			opts,
			json_pack("{s:o,s:b,s:b,s:o,s:b,s:o,s:o,s:o,s:o}", "key",
				  json_text(o->key), "required", o->required,
				  "forward", o->forward, "type",
				  json_text(o->type), "list", o->list, "values",
				  json_text(o->values), "default",
				  json_text(o->defval), "deprecated",
				  json_text(o->deprecated), "fallback",
				  json_text(o->fallback)));
	}
	for (i = 0; i < 4 && !rc; i++)
		if (s->unknown & (1u << i))
			rc = json_array_append_new(unknown,
						   json_string(unk[i]));
	if (!rc)
		rc = json_object_set_new(f, "prefixes", json_text(s->prefixes));
	return rc ? -ENOMEM : 0;
}

/* The report as one JSON object.  NULL when out of memory. */
static json_t *report_json(const struct jar_report *r, const char *allowlist,
			   size_t refused)
{
	json_t *top, *facts = json_array(), *ext = json_array(),
		     *rt = json_array(), *f;
	size_t i;
	int rc;

	top = json_pack("{s:b,s:I,s:o,s:o,s:o,s:o}", "valid_zip", 1, "entries",
			(json_int_t)r->nentries, "error", json_text(r->error),
			"factories", facts, "external", ext, "runtime", rt);
	rc = !top;
	for (i = 0; i < r->nfactories && !rc; i++) {
		const struct jar_factory *fa = &r->factories[i];

		f = json_pack("{s:o,s:s,s:o}", "class", json_text(fa->cls),
			      "kind", jar_kind_name(fa->kind), "identifier",
			      json_text(fa->identifier));
		rc = json_array_append_new(facts, f) ||
		     options_json(f, &fa->options);
	}
	for (i = 0; i < r->nexternal && !rc; i++) {
		f = json_pack("{s:o}", "class", json_text(r->external[i]));
		rc = json_array_append_new(ext, f);
		if (!rc && allowlist)
			rc = json_object_set_new(
				f, "allowed",
				json_boolean(jar_class_allowed(r->external[i],
							       allowlist)));
	}
	for (i = 0; i < r->nruntime && !rc; i++)
		rc = json_array_append_new(rt, json_text(r->runtime[i]));
	if (!rc && allowlist)
		rc = json_object_set_new(top, "refused",
					 json_integer((json_int_t)refused)) ||
		     json_object_set_new(top, "verdict",
					 json_string(r->error || refused
							     ? "refused"
							     : "usable"));
	if (rc) {
		json_decref(top);
		return NULL;
	}
	return top;
}

/* Append `j` (consumed) as one line of compact JSON. */
static int json_line(struct buf *out, json_t *j)
{
	size_t len = out->len;
	int rc = j ? buf_add_json(out, j, JSON_COMPACT) : -ENOMEM;

	/* No half a line: buf_add_json leaves nothing when it fails. */
	if (!rc && (rc = buf_addc(out, '\n'))) {
		out->len = len;
		out->data[len] = '\0';
	}
	json_decref(j);
	return rc;
}

/* The report as aligned lines of text. */
static int format_text(struct buf *b, const struct jar_report *r,
		       const char *allowlist, size_t refused)
{
	size_t i, idw = 7, clw = 0;
	int rc;

	for (i = 0; i < r->nfactories; i++)
		if (r->factories[i].identifier &&
		    strlen(r->factories[i].identifier) > idw)
			idw = strlen(r->factories[i].identifier);
	for (i = 0; i < r->nexternal; i++)
		if (strlen(r->external[i]) > clw)
			clw = strlen(r->external[i]);
	rc = buf_printf(b,
			"archive: valid zip, %zu entries\n"
			"factories: %zu\n",
			r->nentries, r->nfactories);
	for (i = 0; i < r->nfactories && !rc; i++) {
		const struct jar_factory *f = &r->factories[i];

		rc = buf_printf(
			b, "  %-9s %-*s %s\n", jar_kind_name(f->kind), (int)idw,
			f->identifier ? f->identifier : "unknown", f->cls);
	}
	for (i = 0; i < r->nfactories && !rc; i++) {
		const struct jar_factory *f = &r->factories[i];

		if (!f->options.n && !f->options.unknown)
			continue;
		rc = buf_printf(b, "options of %s:\n",
				f->identifier ? f->identifier : f->cls);
		if (!rc)
			rc = options_format(b, f->identifier ? f->identifier
							     : "unknown",
					    &f->options);
	}
	if (!rc)
		rc = buf_printf(b, "external classes: %zu\n", r->nexternal);
	for (i = 0; i < r->nexternal && !rc; i++) {
		if (allowlist)
			rc = buf_printf(
				b, "  %-*s %s\n", (int)clw, r->external[i],
				jar_class_allowed(r->external[i], allowlist)
					? "allowed"
					: "refused");
		else
			rc = buf_printf(b, "  %s\n", r->external[i]);
	}
	/* Information: never refused, so no verdict on each. */
	if (!rc && r->nruntime)
		rc = buf_printf(b, "run-time classes (not checked): %zu\n",
				r->nruntime);
	for (i = 0; i < r->nruntime && !rc; i++)
		rc = buf_printf(b, "  %s\n", r->runtime[i]);
	if (!rc && r->error)
		rc = buf_printf(b, "error: %s\n", r->error);
	if (rc || !allowlist)
		return rc;
	if (r->error)
		return buf_adds(b, "verdict: refused: the JAR is not a usable "
				   "factory JAR\n");
	if (refused)
		return buf_printf(b,
				  "verdict: refused: %zu external "
				  "class%s outside the allowlist (marked "
				  "refused above); shade them into the JAR "
				  "or widen [sql] class_allowlist\n",
				  refused, refused == 1 ? "" : "es");
	return buf_adds(b, "verdict: usable\n");
}

int jar_failure_format(struct buf *out, const char *file, const char *msg,
		       int json)
{
	if (!json)
		return buf_printf(out, "%s: not usable: %s\n", file, msg);
	return json_line(out, json_pack("{s:o,s:b,s:o}", "file",
					json_text(file), "valid_zip", 0,
					"error", json_text(msg)));
}

/* The verdict counts the refused classes once, for both formats. */
int jar_report_format(struct buf *out, const struct jar_report *r,
		      const char *allowlist, int json)
{
	size_t refused = allowlist ? jar_report_refused(r, allowlist) : 0;

	if (json)
		return json_line(out, report_json(r, allowlist, refused));
	return format_text(out, r, allowlist, refused);
}
