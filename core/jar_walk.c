/*
 * jar_walk.c - the JAR's classes, as the walks over them meet them: one
 * record per class name (read from the JAR, external, or where the JAR
 * holds it), each class read and parsed on first use, the depth-first
 * walk of a factory's supertypes for its kind, the method-level reach
 * from the factories (reach.c, over the classes read here) that finds
 * what compiling a statement loads, and the breadth-first walk from the
 * factories through every class they name, into the classes the JAR
 * holds, whose other external names are what only the job's run time
 * needs.
 */
#include "jar_int.h"

#include "classfile.h"
#include "options.h"
#include "reach.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* External supertypes that make a factory a connector. */
static const char *const connector_types[] = {
	"org/apache/flink/table/factories/DynamicTableSourceFactory",
	"org/apache/flink/table/factories/DynamicTableSinkFactory",
	"org/apache/flink/table/factories/ManagedTableFactory",
	"org/apache/flink/connector/base/table/AsyncDynamicTableSinkFactory",
	"org/apache/flink/connector/file/table/FileSystemTableFactory",
	NULL};

/* External supertypes that make a factory a format. */
static const char *const format_types[] = {
	"org/apache/flink/table/factories/DeserializationFormatFactory",
	"org/apache/flink/table/factories/SerializationFormatFactory",
	"org/apache/flink/table/factories/DecodingFormatFactory",
	"org/apache/flink/table/factories/EncodingFormatFactory",
	"org/apache/flink/table/factories/FormatFactory",
	"org/apache/flink/connector/file/table/factories/"
	"BulkReaderFormatFactory",
	"org/apache/flink/connector/file/table/factories/"
	"BulkWriterFormatFactory",
	NULL};

/* Copy `src` into dst[cap] with `from` replaced by `to`, truncating. */
void jar_name_copy(char *dst, size_t cap, const char *src, char from, char to)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = src[i] == from ? to : src[i];
	dst[i] = '\0';
}

/* A malloc'd copy of `src` with `from` replaced by `to`, or NULL. */
char *jar_name_dup(const char *src, char from, char to)
{
	size_t n = strlen(src) + 1;
	char *d = malloc(n);

	if (d)
		jar_name_copy(d, n, src, from, to);
	return d;
}

void *jar_grow_array(void *v, size_t n, size_t *alloc, size_t size)
{
	size_t a;
	void *p;

	if (n < *alloc)
		return v;
	a = *alloc ? *alloc * 2 : 16;
	p = realloc(v, a * size);
	if (p)
		*alloc = a;
	return p;
}

/* The record of name `k` (n bytes), or NULL: none met yet. */
struct name *jar_name_get(const struct insp *in, const char *k, size_t n)
{
	uintptr_t v;

	return hash_get(&in->names, k, n, &v) ? (struct name *)v : NULL;
}

/*
 * `size` bytes (a multiple of 16) that live as long as the walk, carved
 * from the pool's blocks; NULL: out of memory.
 */
static void *pool_get(struct insp *in, size_t size)
{
	struct name_pool *b = in->pool;
	void *p;

	if (!b || b->cap - b->used < size) {
		size_t cap = size > 65536 ? size : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = in->pool;
		b->used = 0;
		b->cap = cap;
		in->pool = b;
	}
	p = b->mem + b->used;
	b->used += size;
	return p;
}

/* The record of name `k` (n bytes), made if new; NULL: out of memory. */
struct name *jar_name_add(struct insp *in, const char *k, size_t n)
{
	struct hash_slot *s = hash_place(&in->names, k, n);
	struct name *r;

	if (!s)
		return NULL;
	if (s->key)
		return (struct name *)s->val;
	r = pool_get(in, (sizeof(*r) + n + 1 + 15) & ~(size_t)15);
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->entry = NO_ENTRY;
	memcpy(r->key, k, n);
	r->key[n] = '\0';
	s->key = r->key;
	s->val = (uintptr_t)r;
	in->names.n++;
	return r;
}

/* Let go of every record. */
void jar_names_release(struct insp *in)
{
	struct name_pool *b, *next;

	hash_release(&in->names);
	for (b = in->pool; b; b = next) {
		next = b->next;
		free(b);
	}
	in->pool = NULL;
}

/* ------------------------------------------------------------------ */
/* The JAR's classes.                                                  */

/* Free all a class holds (the class itself is the pool's); NULL is ok. */
void jar_jclass_clear(struct jclass *jc)
{
	if (!jc)
		return;
	classfile_free(jc->cf);
	free(jc->bytes);
	classfile_names_free(jc->refs);
	free(jc->refs_err);
	free(jc->super);
	jar_names_free(jc->ifaces);
	memset(jc, 0, sizeof(*jc));
}

/*
 * The JAR's entry for record r's class: 1 and *idx, or 0 (the JAR has
 * none).  map_entries gave every base class's record its entry ("a/B"
 * is "a/B.class" at the root; nothing under META-INF/ is a base class:
 * a multi-release JAR keeps its versions there).
 */
static int name_entry(const struct name *r, zip_uint64_t *idx)
{
	if (r->entry == NO_ENTRY)
		return 0;
	*idx = r->entry;
	return 1;
}

/*
 * What the walk takes of a parsed class: the class it declares, which
 * must be `iname` (the JVM's NoClassDefFoundError "wrong name"), and the
 * names of its supertypes, none an array type (a format error the JVM
 * refuses too).  0 and *super (NULL: none) and *ifaces (NULL-terminated);
 * 1 and *why, the reason the class is unusable; -ENOMEM.  It touches
 * nothing of the inspection.
 */
static int class_check(const struct classfile *cf, const char *iname,
		       char **super, char ***ifaces, char **why)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	char msg[2 * CMFS_ERR_MSG] = "", *this_name = NULL, *sup = NULL;
	char **ifs;
	unsigned i;
	int rc;

	*super = NULL;
	*ifaces = NULL;
	*why = NULL;
	rc = classfile_class_name(&this_name, cf, cf->this_class, &e);
	if (rc == -EINVAL)
		snprintf(msg, sizeof(msg), "class file %s.class: %s", iname,
			 e.msg);
	else if (!rc && strcmp(this_name, iname))
		snprintf(msg, sizeof(msg),
			 "class file %s.class declares class %s", iname,
			 this_name);
	free(this_name);
	if (rc && rc != -EINVAL)
		return rc;
	if (msg[0])
		goto refuse;
	ifs = calloc((size_t)cf->ninterfaces + 1, sizeof(char *));
	if (!ifs)
		return -ENOMEM;
	if (cf->super_class)
		rc = classfile_class_name(&sup, cf, cf->super_class, &e);
	for (i = 0; i < cf->ninterfaces && !rc; i++)
		rc = classfile_class_name(&ifs[i], cf, cf->interfaces[i], &e);
	if (rc == -EINVAL)
		snprintf(msg, sizeof(msg), "class file %s.class: %s", iname,
			 e.msg);
	for (i = 0; !rc && i < cf->ninterfaces && !msg[0]; i++)
		if (ifs[i][0] == '[')
			snprintf(msg, sizeof(msg),
				 "class file %s.class: an array type as a "
				 "superinterface",
				 iname);
	if (!rc && !msg[0] && sup && sup[0] == '[')
		snprintf(msg, sizeof(msg),
			 "class file %s.class: an array type as superclass",
			 iname);
	if (rc || msg[0]) {
		free(sup);
		jar_names_free(ifs);
		if (!msg[0])
			return rc;
		goto refuse;
	}
	*super = sup;
	*ifaces = ifs;
	return 0;
refuse:
	*why = strdup(msg);
	return *why ? 1 : -ENOMEM;
}

/*
 * The JAR's class `iname`, read and parsed on first use: 0 and *out (the
 * inspection owns it), or 0 and *out = NULL when the JAR does not hold
 * it; STOP when it is damaged or a cap is hit; -errno.
 */
static int load_name(struct insp *in, struct name *r, struct jclass **out)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	const char *iname = r->key;
	struct jclass *jc = NULL;
	char entry[CMFS_ERR_MSG];
	char *why = NULL;
	zip_uint64_t idx;
	size_t len;
	void *p;
	int rc;

	*out = r->jc;
	if (r->jc || !name_entry(r, &idx))
		return 0;
	if (in->ncls >= in->lim.max_classes)
		return jar_fail(
			in, -EFBIG,
			"the factories reach more than %zu classes of the "
			"JAR (the limit)",
			in->lim.max_classes);
	/* Caps first, then bytes, then the class, then its name: a class
	 * file must declare the class its entry name says (the JVM's
	 * NoClassDefFoundError "wrong name"). */
	jc = pool_get(in, (sizeof(*jc) + 15) & ~(size_t)15);
	if (!jc)
		return -ENOMEM;
	memset(jc, 0, sizeof(*jc));
	jc->name = iname;
	snprintf(entry, sizeof(entry), "%s.class", iname);
	rc = jar_read_entry(in, idx, entry, in->lim.max_entry_size, &jc->bytes,
			    &len);
	if (rc)
		goto out;
	rc = classfile_parse(&jc->cf, jc->bytes, len, &e);
	if (rc == -EINVAL)
		rc = jar_fail(in, -ENOEXEC, "class file %s: %s", entry, e.msg);
	if (!rc)
		rc = class_check(jc->cf, iname, &jc->super, &jc->ifaces, &why);
	if (rc == 1)
		rc = jar_fail(in, -ENOEXEC, "%s", why);
	if (rc)
		goto out;
	p = jar_grow_array(in->cls, in->ncls, &in->acls, sizeof(*in->cls));
	if (!p) {
		rc = -ENOMEM;
		goto out;
	}
	in->cls = p;
	in->cls[in->ncls++] = jc;
	r->jc = jc;
	*out = jc;
	jc = NULL;
out:
	free(why);
	jar_jclass_clear(jc);
	return rc;
}

/* load_name() by the class's internal name. */
int jar_load_class(struct insp *in, const char *iname, struct jclass **out)
{
	struct name *r = jar_name_add(in, iname, strlen(iname));

	*out = NULL;
	return r ? load_name(in, r, out) : -ENOMEM;
}

/* The kind bits that an external supertype's name gives. */
static unsigned known_bits(const char *iname)
{
	unsigned bits = 0;
	size_t i;

	for (i = 0; connector_types[i]; i++)
		if (!strcmp(iname, connector_types[i]))
			bits |= BIT_CONNECTOR;
	for (i = 0; format_types[i]; i++)
		if (!strcmp(iname, format_types[i]))
			bits |= BIT_FORMAT;
	return bits;
}

/* Add to jc's bits those its supertype `name` brings. */
static int super_bits(struct insp *in, struct jclass *jc, const char *name,
		      unsigned depth)
{
	struct jclass *sc;
	int rc;

	jc->bits |= known_bits(name);
	rc = jar_load_class(in, name, &sc);
	if (!rc && sc)
		rc = jar_walk_kind(in, sc, depth + 1);
	if (!rc && sc)
		jc->bits |= sc->bits;
	return rc;
}

/*
 * Walk jc's supertypes depth-first, through the JAR's classes, gathering
 * kind bits.  A class met again while its own walk is on the stack is a
 * cyclic hierarchy (the JVM's ClassCircularityError); a path longer than
 * max_depth is a cap.  Once this returns 0 for a class, its supertype
 * graph is known to be acyclic and shallow, so the other walks below can
 * recurse over it without checks of their own.
 */
int jar_walk_kind(struct insp *in, struct jclass *jc, unsigned depth)
{
	char dots[CMFS_ERR_MSG];
	size_t i;
	int rc = 0;

	if (jc->walk == WALK_DONE)
		return 0;
	jar_name_copy(dots, sizeof(dots), jc->name, '/', '.');
	if (jc->walk == WALK_ACTIVE)
		return jar_fail(in, -ENOEXEC,
				"class %s: cyclic class hierarchy", dots);
	if (depth > in->max_depth)
		return jar_fail(in, -EFBIG,
				"class %s: class hierarchy deeper than %u (the "
				"limit)",
				dots, in->max_depth);
	jc->walk = WALK_ACTIVE;
	if (jc->super)
		rc = super_bits(in, jc, jc->super, depth);
	for (i = 0; !rc && jc->ifaces[i]; i++)
		rc = super_bits(in, jc, jc->ifaces[i], depth);
	if (!rc)
		jc->walk = WALK_DONE;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reach and report.                                                   */

/* Queue class jc for the reachability walk, once. */
int jar_enqueue(struct insp *in, struct jclass *jc)
{
	void *p;

	if (jc->reached)
		return 0;
	p = jar_grow_array(in->queue, in->nqueue, &in->aqueue,
			   sizeof(*in->queue));
	if (!p)
		return -ENOMEM;
	in->queue = p;
	in->queue[in->nqueue++] = jc;
	jc->reached = 1;
	return 0;
}

/* Record class r as external, once. */
static int add_external(struct insp *in, struct name *r)
{
	char *d;
	void *p;

	if (r->external)
		return 0;
	p = jar_grow_array(in->ext, in->next, &in->aext, sizeof(*in->ext));
	if (!p)
		return -ENOMEM;
	in->ext = p;
	d = strdup(r->key);
	if (!d)
		return -ENOMEM;
	in->ext[in->next++] = d;
	r->external = 1;
	return 0;
}
/*
 * Take the classes that queued class jc names, or why they cannot be
 * taken, and let its bytes go: nothing reads a class once the identifier
 * walks are done, and a wide JAR queues thousands of classes at a time,
 * better as lists of names than as class files.  0 or -ENOMEM.
 */
static int take_refs(struct jclass *jc)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	int rc = classfile_refs(&jc->refs, &jc->nrefs, jc->cf, &e);

	if (rc == -EINVAL && !(jc->refs_err = strdup(e.msg)))
		rc = -ENOMEM;
	else if (rc == -EINVAL)
		rc = 0;
	classfile_free(jc->cf);
	jc->cf = NULL;
	free(jc->bytes);
	jc->bytes = NULL;
	return rc;
}

/*
 * Breadth-first from the queued factories: each class named by a reached
 * class is either the JAR's (read and queued) or external (recorded).
 */
int jar_reach(struct insp *in)
{
	struct jclass *jc, *rc_cls;
	size_t head, i;
	int rc = 0;

	/*
	 * The queue grows while it is walked: a JAR class named for the
	 * first time is read (load_name), appended, and kept as the names
	 * it names (take_refs); a bad name among them is reported when the
	 * walk gets to it, as though they were taken then.
	 */
	for (head = 0; head < in->nqueue && !rc; head++) {
		jc = in->queue[head];
		rc = jc->cf ? take_refs(jc) : 0;
		if (rc)
			return rc;
		if (jc->refs_err)
			return jar_fail(in, -ENOEXEC, "class file %s.class: %s",
					jc->name, jc->refs_err);
		for (i = 0; i < jc->nrefs && !rc; i++) {
			struct name *r = jar_name_add(in, jc->refs[i],
						      strlen(jc->refs[i]));

			if (!r)
				return -ENOMEM;
			if (r->external)
				continue;
			rc = load_name(in, r, &rc_cls);
			if (!rc && rc_cls)
				rc = jar_enqueue(in, rc_cls);
			if (!rc && rc_cls && rc_cls->cf)
				rc = take_refs(rc_cls);
			else if (!rc && !rc_cls)
				rc = add_external(in, r);
		}
		classfile_names_free(jc->refs);
		jc->refs = NULL;
		jc->nrefs = 0;
	}
	return rc;
}

/*
 * reach_lookup_fn over the inspection: the JAR's class, read and parsed
 * by jar_load_class (so counted and capped as every class read is), or
 * NULL for a name the JAR does not hold.  Its class file stays until
 * jar_reach takes its names, after the compile-time reach is over.
 */
static int compile_lookup(void *ctx, const char *iname,
			  const struct classfile **out)
{
	struct insp *in = ctx;
	struct jclass *jc;
	int rc = jar_load_class(in, iname, &jc);

	*out = NULL;
	if (rc)
		return rc;
	if (jc && !jc->cf) /* its names taken already: never before */
		return -EIO;
	*out = jc ? jc->cf : NULL;
	return 0;
}

int jar_read_options(struct insp *in)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	size_t i;
	int rc = 0;

	for (i = 0; i < in->rep->nfactories && !rc; i++) {
		struct jar_factory *f = &in->rep->factories[i];
		char *iname = jar_name_dup(f->cls, '.', '/');

		if (!iname)
			return -ENOMEM;
		rc = options_read(&f->options, iname, compile_lookup, in, &e);
		free(iname);
		/* A format's options are checked by the connector's helper
		 * that discovers it: its own calls do not matter. */
		if (f->kind != JAR_KIND_CONNECTOR)
			f->options.unknown &= ~(unsigned)(OPTIONS_UNVALIDATED |
							  OPTIONS_UNKNOWN_PREFIXES);
		/* A class that cannot be read was reported by the reach. */
		if (rc == STOP)
			rc = 0;
	}
	return rc;
}

/* Service files read for their providers, at most (the rest are not). */
#define MAX_SERVICE_FILES 256

/*
 * The classes the JAR's other META-INF/services/ files list (the
 * factories' own is read apart), as internal names: *out (NULL-terminated,
 * jar_names_free) and *n.  A file that does not parse is passed over:
 * ServiceLoader fails on it only when asked for that service.  0, STOP
 * (a damaged or oversized entry) or -errno.
 */
static int providers(struct insp *in, char ***out, size_t *n)
{
	static const char pre[] = "META-INF/services/";
	const size_t plen = sizeof(pre) - 1;
	char **v = NULL, **names, name[CMFS_ERR_MSG];
	size_t i, j, k, a = 0, files = 0;
	uint8_t *data;
	size_t len;
	int rc = 0;

	*n = 0;
	for (i = 0; !rc && i < in->entries.cap && files < MAX_SERVICE_FILES;
	     i++) {
		const struct hash_slot *sl = &in->entries.v[i];
		struct cmfs_err e = CMFS_ERR_INIT;

		if (!sl->key || sl->len <= plen || sl->len >= sizeof(name) ||
		    memcmp(sl->key, pre, plen) ||
		    memchr(sl->key + plen, '/', sl->len - plen) ||
		    (sl->len == strlen(JAR_SERVICE_FILE) &&
		     !memcmp(sl->key, JAR_SERVICE_FILE, sl->len)))
			continue;
		files++;
		memcpy(name, sl->key, sl->len);
		name[sl->len] = '\0';
		rc = jar_read_entry(in, (zip_uint64_t)sl->val, name,
				    in->lim.max_service_size, &data, &len);
		if (rc)
			break;
		rc = jar_service_parse(&names, &k, (const char *)data, len, &e);
		free(data);
		if (rc == -EINVAL) {
			rc = 0;
			continue;
		}
		for (j = 0; !rc && j < k; j++) {
			void *p = jar_grow_array(v, *n + 1, &a, sizeof(*v));
			char *d = p ? jar_name_dup(names[j], '.', '/') : NULL;

			if (p)
				v = p;
			if (!d) {
				rc = -ENOMEM;
				break;
			}
			v[(*n)++] = d;
			v[*n] = NULL;
		}
		jar_names_free(names);
	}
	if (rc) {
		jar_names_free(v);
		*n = 0;
		return rc;
	}
	*out = v;
	return 0;
}

int jar_reach_compile(struct insp *in)
{
	struct cmfs_err e = CMFS_ERR_INIT;
	struct reach_result r;
	size_t i, n = in->rep->nfactories, np = 0;
	char **fac = calloc(n + 1, sizeof(*fac)), **prov = NULL;
	int rc = fac ? 0 : -ENOMEM;

	/* The report's factories, as internal names. */
	for (i = 0; !rc && i < n; i++)
		if (!(fac[i] = jar_name_dup(in->rep->factories[i].cls, '.',
					    '/')))
			rc = -ENOMEM;
	if (!rc)
		rc = providers(in, &prov, &np);
	if (!rc)
		rc = reach_run(&r, (const char *const *)fac, n,
			       (const char *const *)prov, np, compile_lookup,
			       in, NULL, &e);
	/* Bytecode that does not decode, a cap: the JAR is unusable. */
	if (rc == -EINVAL || rc == -ENOEXEC)
		rc = jar_fail(in, -ENOEXEC, "%s", e.msg);
	else if (rc == -EFBIG)
		rc = jar_fail(in, -EFBIG, "%s", e.msg);
	if (!rc) {
		in->compile = r.compile;
		in->ncompile = r.ncompile;
	}
	/* The providers are loaded when the job runs, if not before: the
	 * walk for the run-time set starts from them too. */
	for (i = 0; !rc && i < np; i++) {
		struct jclass *jc;

		rc = jar_load_class(in, prov[i], &jc);
		if (!rc && jc)
			rc = jar_enqueue(in, jc);
	}
	jar_names_free(fac);
	jar_names_free(prov);
	return rc;
}

/* qsort() order: by bytes, so by code point for UTF-8 names. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Internal names to binary ones, in place, and sorted. */
static void dots_sorted(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char *p;

		for (p = v[i]; *p; p++)
			if (*p == '/')
				*p = '.';
	}
	qsort(v, n, sizeof(*v), cmp_str);
}

/*
 * The compile-time set is in->compile; the run-time set is what the
 * walk through every named class found besides (in->ext, which holds
 * the compile-time set too: every class the code loads, its constant
 * pool or descriptors name).
 */
int jar_report_external(struct insp *in)
{
	struct jar_report *rep = in->rep;
	size_t i, j = 0;

	rep->external = calloc(in->ncompile + 1, sizeof(char *));
	if (!rep->external)
		return -ENOMEM;
	for (i = 0; i < in->ncompile; i++) {
		rep->external[i] = strdup(in->compile[i]);
		if (!rep->external[i])
			return -ENOMEM;
		rep->nexternal++;
	}
	for (i = 0; i < in->next; i++) {
		if (bsearch(&in->ext[i], in->compile, in->ncompile,
			    sizeof(char *), cmp_str)) {
			free(in->ext[i]);
			continue;
		}
		in->ext[j++] = in->ext[i];
	}
	in->next = j;
	dots_sorted(rep->external, rep->nexternal);
	dots_sorted(in->ext, in->next);
	rep->runtime = in->ext;
	rep->nruntime = in->next;
	in->ext = NULL;
	in->next = in->aext = 0;
	return 0;
}
