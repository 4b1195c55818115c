/*
 * reach.c - the classes the planner's calls load, found by following
 * method bodies from the roots (reach.h says which, and by what rules).
 *
 * State: every class name met has one record (struct rclass), the JAR's
 * with its class file, the others external.  Four queues drive the walk
 * to its fixed point: classes loaded whose supertypes are yet to be
 * loaded, classes linked whose code is yet to be verified, lambdas whose
 * implementation became callable, and methods reached whose code is yet
 * to be read.  Virtual dispatch is rapid type
 * analysis: every method signature invoked virtually (struct sig) keeps
 * the owners it was invoked on, the instantiated JAR classes that have a
 * method of that signature, and the lambdas that implement it; a new
 * owner is matched against the classes and lambdas, a new class or lambda
 * against the owners, so the order in which they are met does not matter.
 *
 * Names of members and descriptors are compared as the class files hold
 * them (modified UTF-8); class names are converted to UTF-8 once, as the
 * lookup callback and the result take them.  Where a lambda's value goes
 * is followed a short way along the code after it is made (follow).
 * Nothing recurses on the input deeper than a constant: bootstrap
 * arguments' nesting and the locals a lambda is followed through are
 * capped.
 */
#include "reach.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* Nested Dynamic constants among bootstrap arguments, at most. */
#define BSM_DEPTH 8

/* A lambda's value is followed (follow) this many instructions at most,
 * from each of at most this many loads of the local it is stored in. */
#define FOLLOW_STEPS 256
#define FOLLOW_LOADS 16

/* The external supertypes that make an instantiated class a source,
 * sink or format whose methods the planner calls. */
static const char *const api_types[] = {
	"org/apache/flink/table/connector/source/DynamicTableSource",
	"org/apache/flink/table/connector/source/ScanTableSource",
	"org/apache/flink/table/connector/source/LookupTableSource",
	"org/apache/flink/table/connector/sink/DynamicTableSink",
	"org/apache/flink/table/connector/format/DecodingFormat",
	"org/apache/flink/table/connector/format/EncodingFormat",
	"org/apache/flink/table/connector/format/ProjectableDecodingFormat",
	"org/apache/flink/table/connector/format/Format",
	NULL};

/* ... and every ability interface in these packages. */
static const char *const api_prefixes[] = {
	"org/apache/flink/table/connector/source/abilities/Supports",
	"org/apache/flink/table/connector/sink/abilities/Supports", NULL};

/* The factory methods the planner calls (besides <clinit>, <init>). */
static const char *const factory_roots[] = {"factoryIdentifier",
					    "requiredOptions",
					    "optionalOptions",
					    "forwardOptions",
					    "createDynamicTableSource",
					    "createDynamicTableSink",
					    "createDecodingFormat",
					    "createEncodingFormat",
					    NULL};

/* The source, sink and format methods it calls: these names, and any
 * that start with one of api_root_prefixes. */
static const char *const api_roots[] = {"getChangelogMode",
					"copy",
					"asSummaryString",
					"getScanRuntimeProvider",
					"getLookupRuntimeProvider",
					"getSinkRuntimeProvider",
					"createRuntimeDecoder",
					"createRuntimeEncoder",
					"equals",
					"hashCode",
					"toString",
					NULL};
static const char *const api_root_prefixes[] = {"apply", "supports", "list",
						"requires", NULL};

void reach_limits_default(struct reach_limits *lim)
{
	lim->max_classes = 200000;
	lim->max_methods = 500000;
}

/* ------------------------------------------------------------------ */
/* Records.                                                            */

struct rclass {
	char *name; /* internal name, UTF-8 */
	size_t nlen;
	const struct classfile *cf; /* the JAR's; NULL = external */
	struct rclass *super;	    /* once looked, the JAR's classes' */
	struct rclass **ifaces;
	size_t nifaces;
	struct rclass **sup; /* itself and every supertype (closure) */
	size_t nsup;
	uint8_t *mdone; /* per method: reached */
	unsigned looked : 1, loaded : 1, inited : 1, inst : 1, have_sup : 1,
		open : 1, linked : 1;
	unsigned mark; /* == st.gen: met by the current closure walk */
};

/*
 * A field, as Fieldrefs name it: the class named and the field's name
 * (raw, borrowed from a class file).  `type` is its class type, or NULL;
 * `passed` once a reached method read it and handed the value to
 * external code.
 */
struct fref {
	struct rclass *owner, *type;
	const char *name;
	size_t nlen;
	int passed;
};

/* A lambda: an object of `iface` whose method `sig` calls `impl`. */
struct lambda {
	struct rclass *iface;
	const struct classfile *cf; /* the class of its call site */
	uint16_t impl;		    /* a MethodHandle of cf */
	int queued;
	struct fref *field; /* the field it was stored in as made, or NULL */
	int unsure;	    /* where its value goes could not be followed */
};

/* A signature ("name/descriptor", raw) invoked virtually. */
struct sig {
	char *key;
	size_t klen;
	struct rclass **owners; /* what it was invoked on */
	size_t nowners, aowners;
	struct rclass **impls; /* instantiated JAR classes that have it */
	size_t nimpls, aimpls;
	struct lambda **lams; /* lambdas that implement it */
	size_t nlams, alams;
};

struct work {
	struct rclass *c;
	unsigned m;
};

struct st {
	reach_lookup_fn lookup;
	void *ctx;
	struct reach_limits lim;
	struct cmfs_err *err;
	/* Records by name (struct rclass) and by key (struct sig); the
	 * keys are the records'. */
	struct hash classes, sigs;
	struct work *q; /* methods to read */
	size_t qhead, nq, aq;
	struct rclass **lq; /* classes whose supertypes are to be loaded */
	size_t lqhead, nlq, alq;
	struct lambda **fq; /* lambdas whose implementation is callable */
	size_t fqhead, nfq, afq;
	struct rclass **vq; /* classes linked, their code to be verified */
	size_t vqhead, nvq, avq;
	struct rclass **ext; /* external classes loaded */
	size_t next, aext;
	struct lambda **lams; /* every lambda, to free */
	size_t nlams, alams;
	size_t nclasses, nmethods;
	unsigned gen;
	struct rclass *object;	      /* java/lang/Object */
	const char *const *providers; /* META-INF/services/ classes */
	size_t nproviders;
	int services; /* ServiceLoader was asked: they are instantiated */
	struct rclass **handed; /* the method being read hands values of
				 * these types to external code */
	size_t nhanded, ahanded;
	struct fref **fetched; /* ... and reads these fields */
	size_t nfetched, afetched;
	struct fref **frefs; /* every field met so, once each */
	size_t nfrefs, afrefs;
};

/* Append `x` to array *v (*n used, *a room), growing it: 0 or -ENOMEM. */
static int push(void *vp, size_t *n, size_t *a, size_t size, const void *x)
{
	void **v = vp;

	if (*n == *a) {
		size_t na = *a ? *a * 2 : 16;
		void *p = realloc(*v, na * size);

		if (!p)
			return -ENOMEM;
		*v = p;
		*a = na;
	}
	memcpy((char *)*v + *n * size, x, size);
	(*n)++;
	return 0;
}

/* The record of class `name` (n bytes, UTF-8), made if new. */
static int cls_get(struct st *s, const char *name, size_t n,
		   struct rclass **out)
{
	struct hash_slot *sl = hash_place(&s->classes, name, n);
	struct rclass *c;

	if (!sl)
		return -ENOMEM;
	if (sl->key) {
		*out = (struct rclass *)sl->val;
		return 0;
	}
	if (s->classes.n >= s->lim.max_classes)
		return cmfs_err_set(s->err, -EFBIG,
				    "the factories' code names more than %zu "
				    "classes (the limit)",
				    s->lim.max_classes);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = malloc(n + 1))) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->name, name, n);
	c->name[n] = '\0';
	c->nlen = n;
	sl->key = c->name;
	sl->val = (uintptr_t)c;
	s->classes.n++;
	*out = c;
	return 0;
}

/* The raw bytes of Utf8 constant idx (checked by the parser). */
static const char *raw(const struct classfile *cf, unsigned idx, size_t *n)
{
	*n = cf->cp[idx].len;
	return (const char *)cf->cp[idx].bytes;
}

/* 1 if raw bytes (p, n) are the ASCII string s. */
static int raw_is(const char *p, size_t n, const char *s)
{
	return strlen(s) == n && !memcmp(p, s, n);
}

/* ------------------------------------------------------------------ */
/* Classes: looked up, loaded, initialized, instantiated.              */

/* The class named by Class constant idx of cf, as a record, or *out =
 * NULL for an array of primitives. */
static int cp_class(struct st *s, const struct classfile *cf, unsigned idx,
		    struct rclass **out)
{
	char *name = NULL;
	const char *p;
	size_t n;
	int rc;

	*out = NULL;
	rc = classfile_class_name(&name, cf, idx, s->err);
	if (rc)
		return rc;
	/* An array class is loaded with its element class. */
	p = name;
	while (*p == '[')
		p++;
	n = strlen(p);
	if (p != name) {
		if (*p != 'L') {
			free(name);
			return 0;
		}
		p++;
		n -= 2;
	}
	rc = cls_get(s, p, n, out);
	free(name);
	return rc;
}

/* Find class c in the JAR, once; its supertypes become records. */
static int look(struct st *s, struct rclass *c)
{
	const struct classfile *cf = NULL;
	unsigned i;
	int rc;

	if (c->looked)
		return 0;
	c->looked = 1;
	rc = s->lookup(s->ctx, c->name, &cf);
	if (rc)
		return rc;
	if (!cf)
		return 0;
	if (s->nclasses >= s->lim.max_classes)
		return cmfs_err_set(s->err, -EFBIG,
				    "the factories' code loads more than %zu "
				    "classes of the JAR (the limit)",
				    s->lim.max_classes);
	s->nclasses++;
	c->cf = cf;
	c->mdone = calloc(cf->nmethods ? cf->nmethods : 1, 1);
	c->ifaces = calloc(cf->ninterfaces ? cf->ninterfaces : 1,
			   sizeof(*c->ifaces));
	if (!c->mdone || !c->ifaces)
		return -ENOMEM;
	if (cf->super_class) {
		rc = cp_class(s, cf, cf->super_class, &c->super);
		if (rc)
			return rc;
	}
	for (i = 0; i < cf->ninterfaces; i++) {
		rc = cp_class(s, cf, cf->interfaces[i], &c->ifaces[i]);
		if (rc)
			return rc;
		if (c->ifaces[i])
			c->nifaces++;
	}
	return 0;
}

/* Load class c: an external one is recorded, a JAR one's supertypes are
 * queued to be loaded. */
static int load(struct st *s, struct rclass *c)
{
	int rc;

	if (!c || c->loaded)
		return 0;
	rc = look(s, c);
	if (rc)
		return rc;
	c->loaded = 1;
	if (!c->cf)
		return push(&s->ext, &s->next, &s->aext, sizeof(c), &c);
	return push(&s->lq, &s->nlq, &s->alq, sizeof(c), &c);
}

/* Load the class of Class constant idx. */
static int load_cp(struct st *s, const struct classfile *cf, unsigned idx)
{
	struct rclass *c;
	int rc = cp_class(s, cf, idx, &c);

	return rc ? rc : load(s, c);
}

/* Load the classes of the descriptor in Utf8 constant idx. */
static int load_desc(struct st *s, const struct classfile *cf, unsigned idx)
{
	/* A method has at most 255 parameters, plus its return type. */
	const char *v[257];
	size_t n[257], count = 0, i;
	char *d = NULL;
	int rc;

	rc = classfile_utf8(&d, cf, idx, s->err);
	if (rc)
		return rc;
	rc = classfile_desc_classes(d, v, n, 257, &count);
	if (rc || count > 257) {
		rc = cmfs_err_set(s->err, -EINVAL,
				  "offset %u: bad descriptor %s",
				  cf->cp[idx].off, d);
		count = 0;
	}
	for (i = 0; i < count && !rc; i++) {
		struct rclass *c;

		rc = cls_get(s, v[i], n[i], &c);
		if (!rc)
			rc = load(s, c);
	}
	free(d);
	return rc;
}

/* The index of cf's method (name, desc) given raw, or -1. */
static int find_method(const struct classfile *cf, const char *name,
		       size_t nlen, const char *desc, size_t dlen)
{
	size_t a, b;
	unsigned i;

	for (i = 0; i < cf->nmethods; i++) {
		const char *x = raw(cf, cf->methods[i].name, &a);
		const char *y = raw(cf, cf->methods[i].desc, &b);

		if (a == nlen && b == dlen && !memcmp(x, name, a) &&
		    !memcmp(y, desc, b))
			return (int)i;
	}
	return -1;
}

/* Reach method mi of JAR class c: its code is queued to be read. */
static int reach_m(struct st *s, struct rclass *c, unsigned mi)
{
	struct work w = {c, mi};

	if (c->mdone[mi])
		return 0;
	c->mdone[mi] = 1;
	if (++s->nmethods > s->lim.max_methods)
		return cmfs_err_set(s->err, -EFBIG,
				    "the factories' code reaches more than "
				    "%zu methods (the limit)",
				    s->lim.max_methods);
	if (!c->cf->methods[mi].code)
		return 0;
	return push(&s->q, &s->nq, &s->aq, sizeof(w), &w);
}

/*
 * c and all its supertypes (c->sup, c first, breadth-first), looked up;
 * c->open when one of them is external and not java/lang/Object (whose
 * own supertypes nobody here knows).
 */
static int closure(struct st *s, struct rclass *c)
{
	size_t i, a = 0;
	int rc;

	if (c->have_sup)
		return 0;
	s->gen++;
	c->nsup = 0;
	rc = push(&c->sup, &c->nsup, &a, sizeof(c), &c);
	c->mark = s->gen;
	for (i = 0; !rc && i < c->nsup; i++) {
		struct rclass *x = c->sup[i];
		size_t k;

		rc = look(s, x);
		if (rc)
			break;
		if (!x->cf) {
			if (x != s->object)
				c->open = 1;
			continue;
		}
		if (x->super && x->super->mark != s->gen) {
			x->super->mark = s->gen;
			rc = push(&c->sup, &c->nsup, &a, sizeof(c), &x->super);
		}
		for (k = 0; !rc && k < x->nifaces; k++) {
			if (x->ifaces[k]->mark == s->gen)
				continue;
			x->ifaces[k]->mark = s->gen;
			rc = push(&c->sup, &c->nsup, &a, sizeof(c),
				  &x->ifaces[k]);
		}
	}
	if (!rc)
		c->have_sup = 1;
	return rc;
}

/* 1 if an instance of t (whose closure is known) may be an `o`. */
static int may_be(const struct st *s, const struct rclass *t,
		  const struct rclass *o)
{
	size_t i;

	for (i = 0; i < t->nsup; i++)
		if (t->sup[i] == o)
			return 1;
	if (o->cf) /* the JAR's: no external class extends it */
		return 0;
	return o == s->object || t->open;
}

/*
 * Method resolution (JVMS 5.4.3.3-4), as far as the JAR's classes go:
 * in c and its superclasses, then in its superinterfaces.  0 and *mc,
 * *mi, or *mc = NULL when the JAR declares no such method.
 */
static int resolve(struct st *s, struct rclass *c, const char *name,
		   size_t nlen, const char *desc, size_t dlen,
		   struct rclass **mc, int *mi)
{
	struct rclass *x;
	size_t i, steps = 0;
	int rc;

	*mc = NULL;
	for (x = c; x && steps++ <= s->nclasses; x = x->super) {
		rc = look(s, x);
		if (rc)
			return rc;
		if (!x->cf)
			break;
		*mi = find_method(x->cf, name, nlen, desc, dlen);
		if (*mi >= 0) {
			*mc = x;
			return 0;
		}
	}
	rc = closure(s, c);
	for (i = 1; !rc && i < c->nsup; i++) {
		x = c->sup[i];
		if (!x->cf || !(x->cf->access & CLASSFILE_ACC_INTERFACE))
			continue;
		*mi = find_method(x->cf, name, nlen, desc, dlen);
		if (*mi >= 0) {
			*mc = x;
			return 0;
		}
	}
	return rc;
}

/* Reach what `resolve` finds, if it is the JAR's and has a body. */
static int reach_resolved(struct st *s, struct rclass *c, const char *name,
			  size_t nlen, const char *desc, size_t dlen)
{
	struct rclass *mc;
	int mi, rc;

	rc = resolve(s, c, name, nlen, desc, dlen, &mc, &mi);
	if (!rc && mc)
		rc = reach_m(s, mc, (unsigned)mi);
	return rc;
}

/*
 * Virtual dispatch of (name, desc) on an instance of JAR class t: the
 * first declaration up its superclasses (nothing if that is abstract),
 * else every default method of its interfaces that matches.
 */
static int dispatch(struct st *s, struct rclass *t, const char *name,
		    size_t nlen, const char *desc, size_t dlen)
{
	struct rclass *x;
	size_t i, steps = 0;
	int mi, rc = 0;

	for (x = t; x && steps++ <= s->nclasses; x = x->super) {
		rc = look(s, x);
		if (rc || !x->cf)
			break;
		mi = find_method(x->cf, name, nlen, desc, dlen);
		if (mi < 0 || x->cf->methods[mi].access & CLASSFILE_ACC_STATIC)
			continue;
		if (x->cf->methods[mi].access & CLASSFILE_ACC_ABSTRACT)
			return 0;
		return reach_m(s, x, (unsigned)mi);
	}
	if (!rc)
		rc = closure(s, t);
	for (i = 1; !rc && i < t->nsup; i++) {
		x = t->sup[i];
		if (!x->cf || !(x->cf->access & CLASSFILE_ACC_INTERFACE))
			continue;
		mi = find_method(x->cf, name, nlen, desc, dlen);
		if (mi >= 0 &&
		    !(x->cf->methods[mi].access &
		      (CLASSFILE_ACC_ABSTRACT | CLASSFILE_ACC_STATIC)))
			rc = reach_m(s, x, (unsigned)mi);
	}
	return rc;
}

/* Link JAR class c (before it is initialized): its code is queued to
 * be verified (verify). */
static int link(struct st *s, struct rclass *c)
{
	if (!c || !c->cf || c->linked)
		return 0;
	c->linked = 1;
	return push(&s->vq, &s->nvq, &s->avq, sizeof(c), &c);
}

/* Initialize class c: load it, reach its <clinit> and its
 * superclasses' (and those of its interfaces that have default methods,
 * as JVMS 5.5 says). */
static int init(struct st *s, struct rclass *c)
{
	struct rclass *x;
	size_t i, steps = 0;
	int mi, rc;

	rc = load(s, c);
	for (x = c; !rc && x && !x->inited && steps++ <= s->nclasses;
	     x = x->super) {
		rc = look(s, x);
		if (rc || !x->cf)
			break;
		x->inited = 1;
		rc = link(s, x);
		mi = find_method(x->cf, "<clinit>", 8, "()V", 3);
		if (!rc && mi >= 0)
			rc = reach_m(s, x, (unsigned)mi);
		for (i = 0; !rc && i < x->nifaces; i++) {
			struct rclass *y = x->ifaces[i];
			unsigned k;

			rc = look(s, y);
			if (rc || !y->cf || y->inited)
				continue;
			for (k = 0; k < y->cf->nmethods; k++)
				if (!(y->cf->methods[k].access &
				      (CLASSFILE_ACC_ABSTRACT |
				       CLASSFILE_ACC_STATIC)))
					break;
			if (k == y->cf->nmethods)
				continue;
			y->inited = 1;
			rc = link(s, y);
			mi = find_method(y->cf, "<clinit>", 8, "()V", 3);
			if (!rc && mi >= 0)
				rc = reach_m(s, y, (unsigned)mi);
		}
	}
	return rc;
}

/* The signature record of (name, desc), made if new. */
static int sig_get(struct st *s, const char *name, size_t nlen,
		   const char *desc, size_t dlen, struct sig **out)
{
	char buf[512], *k = nlen + dlen + 1 <= sizeof(buf)
				    ? buf
				    : malloc(nlen + dlen + 1);
	size_t n = nlen + dlen + 1;
	struct hash_slot *sl;
	struct sig *g;
	int rc = 0;

	if (!k)
		return -ENOMEM;
	memcpy(k, name, nlen);
	k[nlen] = '/'; /* never in a method's name (JVMS 4.2.2) */
	memcpy(k + nlen + 1, desc, dlen);
	if (!(sl = hash_place(&s->sigs, k, n))) {
		rc = -ENOMEM;
		goto out;
	}
	g = (struct sig *)sl->val;
	if (!sl->key) {
		g = calloc(1, sizeof(*g));
		if (!g || !(g->key = malloc(n))) {
			free(g);
			rc = -ENOMEM;
			goto out;
		}
		memcpy(g->key, k, n);
		g->klen = n;
		sl->key = g->key;
		sl->val = (uintptr_t)g;
		s->sigs.n++;
	}
	*out = g;
out:
	if (k != buf)
		free(k);
	return rc;
}

/* 1 if lambda l may be an `o`. */
static int lambda_is(const struct st *s, const struct lambda *l,
		     const struct rclass *o)
{
	return o == s->object || may_be(s, l->iface, o);
}

/* Have lambda l's implementation called (from the main loop). */
static int lambda_fire(struct st *s, struct lambda *l)
{
	if (l->queued)
		return 0;
	l->queued = 1;
	return push(&s->fq, &s->nfq, &s->afq, sizeof(l), &l);
}

/* (name, desc) invoked virtually on `o`: dispatched over what is, and
 * will be, instantiated. */
static int vcall(struct st *s, struct rclass *o, const char *name, size_t nlen,
		 const char *desc, size_t dlen)
{
	struct sig *g;
	size_t i;
	int rc;

	rc = sig_get(s, name, nlen, desc, dlen, &g);
	if (rc)
		return rc;
	for (i = 0; i < g->nowners; i++)
		if (g->owners[i] == o)
			return 0;
	rc = push(&g->owners, &g->nowners, &g->aowners, sizeof(o), &o);
	for (i = 0; !rc && i < g->nimpls; i++)
		if (may_be(s, g->impls[i], o))
			rc = dispatch(s, g->impls[i], name, nlen, desc, dlen);
	for (i = 0; !rc && i < g->nlams; i++)
		if (lambda_is(s, g->lams[i], o))
			rc = lambda_fire(s, g->lams[i]);
	return rc;
}

/* Which root names match method name (raw): 1 if one does. */
static int root_name(const char *p, size_t n, const char *const *names,
		     const char *const *prefixes)
{
	size_t i;

	for (i = 0; names && names[i]; i++)
		if (raw_is(p, n, names[i]))
			return 1;
	for (i = 0; prefixes && prefixes[i]; i++) {
		size_t k = strlen(prefixes[i]);

		if (n >= k && !memcmp(p, prefixes[i], k))
			return 1;
	}
	return 0;
}

/* The planner calls, on an instance of t, every method whose name is a
 * root: dispatched as calls on t. */
static int roots(struct st *s, struct rclass *t, const char *const *names,
		 const char *const *prefixes)
{
	size_t i, a, b;
	unsigned k;
	int rc;

	rc = closure(s, t);
	for (i = 0; !rc && i < t->nsup; i++) {
		const struct classfile *cf = t->sup[i]->cf;

		for (k = 0; cf && !rc && k < cf->nmethods; k++) {
			const char *x = raw(cf, cf->methods[k].name, &a);
			const char *y = raw(cf, cf->methods[k].desc, &b);

			if (cf->methods[k].access & CLASSFILE_ACC_STATIC ||
			    !root_name(x, a, names, prefixes))
				continue;
			rc = dispatch(s, t, x, a, y, b);
		}
	}
	return rc;
}

/* 1 if t (closure known) is a source, sink or format of Flink's. */
static int is_api(const struct rclass *t)
{
	size_t i, k;

	for (i = 0; i < t->nsup; i++) {
		const char *n = t->sup[i]->name;

		if (t->sup[i]->cf)
			continue;
		for (k = 0; api_types[k]; k++)
			if (!strcmp(n, api_types[k]))
				return 1;
		for (k = 0; api_prefixes[k]; k++)
			if (!strncmp(n, api_prefixes[k],
				     strlen(api_prefixes[k])))
				return 1;
	}
	return 0;
}

/*
 * `new c`: initialize it and, when it is a concrete JAR class, make its
 * methods targets of every virtual call of their signature, and its
 * source, sink or format methods roots.
 */
static int instantiate(struct st *s, struct rclass *c)
{
	size_t i, a, b, j;
	unsigned k;
	int rc;

	rc = init(s, c);
	if (rc || !c->cf || c->inst ||
	    c->cf->access & (CLASSFILE_ACC_INTERFACE | CLASSFILE_ACC_ABSTRACT))
		return rc;
	c->inst = 1;
	rc = closure(s, c);
	for (i = 0; !rc && i < c->nsup; i++) {
		const struct classfile *cf = c->sup[i]->cf;

		for (k = 0; cf && !rc && k < cf->nmethods; k++) {
			const char *x = raw(cf, cf->methods[k].name, &a);
			const char *y = raw(cf, cf->methods[k].desc, &b);
			struct sig *g;

			if (cf->methods[k].access & CLASSFILE_ACC_STATIC ||
			    x[0] == '<')
				continue;
			rc = sig_get(s, x, a, y, b, &g);
			if (rc || (g->nimpls && g->impls[g->nimpls - 1] == c))
				continue;
			rc = push(&g->impls, &g->nimpls, &g->aimpls, sizeof(c),
				  &c);
			for (j = 0; !rc && j < g->nowners; j++)
				if (may_be(s, c, g->owners[j]))
					rc = dispatch(s, c, x, a, y, b);
		}
	}
	if (!rc && is_api(c))
		rc = roots(s, c, api_roots, api_root_prefixes);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Instructions.                                                       */

/* A Fieldref's or Methodref's parts: owner record, name and descriptor
 * (raw), the descriptor's Utf8 index. */
struct ref {
	struct rclass *owner; /* NULL: an array of primitives */
	const char *name, *desc;
	size_t nlen, dlen;
	unsigned desc_idx;
};

static int member(struct st *s, const struct classfile *cf, unsigned idx,
		  struct ref *r)
{
	const struct classfile_const *nat = &cf->cp[cf->cp[idx].b];

	r->name = raw(cf, nat->a, &r->nlen);
	r->desc = raw(cf, nat->b, &r->dlen);
	r->desc_idx = nat->b;
	return cp_class(s, cf, cf->cp[idx].a, &r->owner);
}

/* A field access: load its owner and type; static: initialize the class
 * that declares it. */
static int field(struct st *s, const struct classfile *cf, unsigned idx,
		 int is_static)
{
	struct ref r;
	size_t i, a, b;
	int rc;

	rc = member(s, cf, idx, &r);
	if (!rc)
		rc = load_desc(s, cf, r.desc_idx);
	if (!rc)
		rc = load(s, r.owner);
	if (rc || !is_static || !r.owner || !r.owner->cf)
		return rc;
	/* Field resolution: the owner, then its supertypes. */
	rc = closure(s, r.owner);
	for (i = 0; !rc && i < r.owner->nsup; i++) {
		const struct classfile *dc = r.owner->sup[i]->cf;
		unsigned k;

		for (k = 0; dc && k < dc->nfields; k++) {
			const char *x = raw(dc, dc->fields[k].name, &a);
			const char *y = raw(dc, dc->fields[k].desc, &b);

			if (a == r.nlen && b == r.dlen &&
			    !memcmp(x, r.name, a) && !memcmp(y, r.desc, b))
				return init(s, r.owner->sup[i]);
		}
	}
	return rc ? rc : init(s, r.owner);
}

/*
 * Call fn(s, c) for the class of each reference parameter of descriptor
 * `idx` (an array's element class stands for it), until one fails.
 */
static int each_param(struct st *s, const struct classfile *cf, unsigned idx,
		      int (*fn)(struct st *s, struct rclass *c))
{
	const char *p;
	size_t n, i, k, j;
	int rc = 0;

	p = raw(cf, idx, &n);
	for (i = 1; !rc && i < n && p[i] != ')'; i = k) {
		struct rclass *c;

		for (k = i; k < n && p[k] == '['; k++)
			;
		if (k < n && p[k] == 'L') {
			for (j = k; j < n && p[j] != ';'; j++)
				;
			rc = cls_get(s, p + k + 1, j - k - 1, &c);
			if (!rc)
				rc = fn(s, c);
			k = j + 1;
		} else {
			k++;
		}
	}
	return rc;
}

static int note_handed(struct st *s, struct rclass *c)
{
	return push(&s->handed, &s->nhanded, &s->ahanded, sizeof(c), &c);
}

/*
 * An external method is called with the parameters of descriptor `idx`:
 * note their types (the reference ones), for the lambdas the method being
 * read makes (scan).  An array is handed as an array: its element type
 * stands for it.
 */
static int hand(struct st *s, const struct classfile *cf, unsigned idx)
{
	return each_param(s, cf, idx, note_handed);
}

/* ServiceLoader.load*: it instantiates the providers (reach_run). */
static int services(struct st *s)
{
	struct rclass *c;
	size_t i;
	int rc = 0;

	if (s->services)
		return 0;
	s->services = 1;
	for (i = 0; !rc && i < s->nproviders; i++) {
		rc = cls_get(s, s->providers[i], strlen(s->providers[i]), &c);
		if (!rc)
			rc = look(s, c);
		if (rc || !c->cf)
			continue;
		rc = instantiate(s, c);
		if (!rc)
			rc = reach_resolved(s, c, "<init>", 6, "()V", 3);
	}
	return rc;
}

/* An invoke* instruction (not invokedynamic). */
static int invoke(struct st *s, const struct classfile *cf, unsigned idx,
		  uint8_t op)
{
	struct rclass *mc;
	struct ref r;
	int rc, mi;

	rc = member(s, cf, idx, &r);
	if (!rc)
		rc = load_desc(s, cf, r.desc_idx);
	if (!rc && r.owner)
		rc = look(s, r.owner);
	if (!rc && r.owner && !r.owner->cf)
		rc = hand(s, cf, r.desc_idx);
	if (rc || !r.owner)
		return rc;
	if (!r.owner->cf && r.nlen >= 4 && !memcmp(r.name, "load", 4) &&
	    !strcmp(r.owner->name, "java/util/ServiceLoader"))
		rc = services(s);
	if (rc)
		return rc;
	switch (op) {
	case CLASSFILE_OP_INVOKESTATIC:
		rc = init(s, r.owner);
		if (!rc && r.owner->cf)
			rc = reach_resolved(s, r.owner, r.name, r.nlen, r.desc,
					    r.dlen);
		return rc;
	case CLASSFILE_OP_INVOKESPECIAL:
		rc = load(s, r.owner);
		if (!rc && r.owner->cf)
			rc = reach_resolved(s, r.owner, r.name, r.nlen, r.desc,
					    r.dlen);
		return rc;
	default:
		rc = load(s, r.owner);
		if (rc)
			return rc;
		/* A private method (a nestmate's call) is not dispatched. */
		if (r.owner->cf) {
			rc = resolve(s, r.owner, r.name, r.nlen, r.desc, r.dlen,
				     &mc, &mi);
			if (!rc && mc &&
			    mc->cf->methods[mi].access & CLASSFILE_ACC_PRIVATE)
				return reach_m(s, mc, (unsigned)mi);
		}
		return rc ? rc
			  : vcall(s, r.owner, r.name, r.nlen, r.desc, r.dlen);
	}
}

/* Resolve MethodHandle h of cf: load its member's owner and type. */
static int mh_load(struct st *s, const struct classfile *cf, unsigned h,
		   struct ref *r)
{
	int rc = member(s, cf, cf->cp[h].a, r);

	if (!rc)
		rc = load_desc(s, cf, r->desc_idx);
	if (!rc)
		rc = load(s, r->owner);
	return rc;
}

/* Invoke MethodHandle h of cf: what its kind (JVMS 5.4.3.5) does. */
static int mh_invoke(struct st *s, const struct classfile *cf, unsigned h)
{
	struct ref r;
	int rc = mh_load(s, cf, h, &r);

	if (rc || !r.owner)
		return rc;
	switch (cf->cp[h].kind) {
	case 2: /* getStatic */
	case 4: /* putStatic */
		return field(s, cf, cf->cp[h].a, 1);
	case 5: /* invokeVirtual */
	case 9: /* invokeInterface */
		return vcall(s, r.owner, r.name, r.nlen, r.desc, r.dlen);
	case 6: /* invokeStatic */
		rc = init(s, r.owner);
		break;
	case 8: /* newInvokeSpecial */
		rc = instantiate(s, r.owner);
		break;
	case 7: /* invokeSpecial */
		break;
	default: /* getField, putField */
		return 0;
	}
	if (!rc && r.owner->cf)
		rc = reach_resolved(s, r.owner, r.name, r.nlen, r.desc, r.dlen);
	return rc;
}

static int bootstrap(struct st *s, const struct classfile *cf, unsigned bsm,
		     unsigned nat, int indy, unsigned depth);

/* One bootstrap argument, taken conservatively: classes loaded, a
 * method handle invoked, a Dynamic constant bootstrapped. */
static int bsm_arg(struct st *s, const struct classfile *cf, unsigned a,
		   unsigned depth)
{
	switch (cf->cp[a].tag) {
	case CLASSFILE_CLASS:
		return load_cp(s, cf, a);
	case CLASSFILE_METHOD_TYPE:
		return load_desc(s, cf, cf->cp[a].a);
	case CLASSFILE_METHOD_HANDLE:
		return mh_invoke(s, cf, a);
	case CLASSFILE_DYNAMIC:
		return bootstrap(s, cf, cf->cp[a].a, cf->cp[a].b, 0, depth + 1);
	}
	return 0;
}

/*
 * A call site's or Dynamic constant's bootstrap method `bsm`, with its
 * NameAndType `nat`: the bootstrap method's class and type are loaded,
 * and its arguments taken (bsm_arg), except for LambdaMetafactory's call
 * sites, which make a lambda: its interface (the call site's return
 * type) loaded, its implementation called only when the interface's
 * method (the call site's name, the first argument's type) is.
 */
static int bootstrap(struct st *s, const struct classfile *cf, unsigned bsm,
		     unsigned nat, int indy, unsigned depth)
{
	uint16_t h, nargs, a0, a1;
	struct lambda *l = NULL;
	struct ref bm;
	struct sig *g;
	const char *p, *name, *sam;
	size_t n, nlen, slen, i;
	int rc;

	if (depth > BSM_DEPTH)
		return cmfs_err_set(s->err, -EINVAL,
				    "bootstrap arguments nested deeper than "
				    "%d",
				    BSM_DEPTH);
	rc = classfile_bootstrap(cf, bsm, &h, &nargs, s->err);
	if (!rc)
		rc = load_desc(s, cf, cf->cp[nat].b);
	if (!rc)
		rc = mh_load(s, cf, h, &bm);
	if (rc)
		return rc;
	a0 = nargs >= 3 ? classfile_bootstrap_arg(cf, bsm, 0) : 0;
	a1 = nargs >= 3 ? classfile_bootstrap_arg(cf, bsm, 1) : 0;
	if (!indy || !bm.owner ||
	    strcmp(bm.owner->name, "java/lang/invoke/LambdaMetafactory") ||
	    cf->cp[a0].tag != CLASSFILE_METHOD_TYPE ||
	    cf->cp[a1].tag != CLASSFILE_METHOD_HANDLE) {
		for (i = 0; i < nargs && !rc; i++)
			rc = bsm_arg(s, cf, classfile_bootstrap_arg(cf, bsm, i),
				     depth);
		return rc;
	}
	/* A lambda: resolving the implementation handle loads its class
	 * and type; the other arguments are types (and flags, markers). */
	{
		struct ref impl;

		rc = mh_load(s, cf, a1, &impl);
	}
	for (i = 0; i < nargs && !rc; i++) {
		uint16_t a = classfile_bootstrap_arg(cf, bsm, i);

		if (i != 1 && cf->cp[a].tag != CLASSFILE_METHOD_HANDLE)
			rc = bsm_arg(s, cf, a, depth);
	}
	if (rc)
		return rc;
	/* The call site's type: (captured values) -> the interface. */
	p = raw(cf, cf->cp[nat].b, &n);
	for (i = 0; i < n && p[i] != ')'; i++)
		;
	if (i + 4 > n || p[i + 1] != 'L' || p[n - 1] != ';')
		return cmfs_err_set(s->err, -EINVAL,
				    "offset %u: a lambda's call site returns "
				    "no interface",
				    cf->cp[nat].off);
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	rc = push(&s->lams, &s->nlams, &s->alams, sizeof(l), &l);
	if (rc) {
		free(l);
		return rc;
	}
	l->cf = cf;
	l->impl = a1;
	/* Interface names are ASCII in practice; a raw name that is not
	 * the record's UTF-8 is only a record of its own. */
	rc = cls_get(s, p + i + 2, n - i - 3, &l->iface);
	if (!rc)
		rc = load(s, l->iface);
	if (!rc)
		rc = closure(s, l->iface);
	if (rc)
		return rc;
	name = raw(cf, cf->cp[nat].a, &nlen);
	sam = raw(cf, cf->cp[a0].a, &slen);
	rc = sig_get(s, name, nlen, sam, slen, &g);
	if (!rc)
		rc = push(&g->lams, &g->nlams, &g->alams, sizeof(l), &l);
	for (i = 0; !rc && i < g->nowners; i++)
		if (lambda_is(s, l, g->owners[i]))
			rc = lambda_fire(s, l);
	return rc;
}

/* Load the class a field type at d names (arrays: their element), its
 * length stored in *len. */
static int load_type(struct st *s, const char *d, size_t *len,
		     struct rclass **got)
{
	struct rclass *c;
	size_t i = 0, j;
	int rc;

	if (got)
		*got = NULL;
	while (d[i] == '[')
		i++;
	if (d[i] != 'L') {
		*len = i + 1;
		return 0;
	}
	for (j = i + 1; d[j] && d[j] != ';'; j++)
		;
	*len = j + 1;
	if (!d[j])
		return -EINVAL;
	rc = cls_get(s, d + i + 1, j - i - 1, &c);
	if (!rc)
		rc = load(s, c);
	if (!rc && got)
		*got = c;
	return rc;
}

/*
 * The classes of method m's own descriptor that its verification loads:
 * the return type (what areturn gives is checked against it), and the
 * type of each parameter the code reads (aload), which it may hand on to
 * a place of another type.  A parameter never read is never checked.
 */
static int own_types(struct st *s, const struct classfile *cf,
		     const struct classfile_member *m)
{
	uint8_t used[64] = {0}; /* locals 0..511 read by aload */
	struct classfile_insn in;
	uint32_t pc = 0, slot;
	size_t i, len;
	char *d = NULL;
	int rc;

	while ((rc = classfile_insn_next(cf, m, &pc, &in, s->err)) == 1)
		if ((in.op == 0x19 || (in.op >= 0x2a && in.op <= 0x2d)) &&
		    in.local < 512)
			used[in.local >> 3] |= (uint8_t)(1u << (in.local & 7));
	if (rc)
		return rc;
	rc = classfile_utf8(&d, cf, m->desc, s->err);
	if (rc)
		return rc;
	slot = m->access & CLASSFILE_ACC_STATIC ? 0 : 1;
	for (i = 1; !rc && d[i] && d[i] != ')'; i += len) {
		int wide = d[i] == 'J' || d[i] == 'D';

		size_t k = i;

		while (d[k] == '[')
			k++;
		len = (d[k] == 'L' ? strcspn(d + k, ";") + 1 : 1) + k - i;
		if (!d[i + len - 1])
			rc = -EINVAL;
		else if ((d[i] == 'L' || d[i] == '[') && slot < 512 &&
			 used[slot >> 3] & (1u << (slot & 7)))
			rc = load_type(s, d + i, &len, NULL);
		slot += wide ? 2 : 1;
	}
	if (!rc && d[i] == ')' && (d[i + 1] == 'L' || d[i + 1] == '['))
		rc = load_type(s, d + i + 1, &len, NULL);
	if (rc == -EINVAL)
		rc = cmfs_err_set(s->err, -EINVAL, "bad descriptor %s", d);
	free(d);
	return rc;
}

/* Load the reference types among the parameters of descriptor `idx`
 * (an array's element class stands for it). */
static int load_params(struct st *s, const struct classfile *cf, unsigned idx)
{
	return each_param(s, cf, idx, load);
}

/*
 * Verify the code of linked class c, as the JVM does before its static
 * initializer runs, every method whether it runs or not: the verifier
 * loads a class to check that a value may go where the code puts it, when
 * the value's type is another (a subclass, an implementation).  Without
 * the values' types, every such place counts: the parameter types of
 * each method invoked, the type of each field stored, the method's own
 * return type.  Its superclass and interfaces are linked too.
 */
static int verify(struct st *s, struct rclass *c)
{
	const struct classfile *cf = c->cf;
	struct classfile_insn in;
	size_t i, n;
	unsigned k;
	int rc;

	rc = c->super ? look(s, c->super) : 0;
	if (!rc)
		rc = link(s, c->super);
	for (i = 0; !rc && i < c->nifaces; i++) {
		rc = look(s, c->ifaces[i]);
		if (!rc)
			rc = link(s, c->ifaces[i]);
	}
	for (k = 0; !rc && k < cf->nmethods; k++) {
		const struct classfile_member *m = &cf->methods[k];
		const char *d = raw(cf, m->desc, &n);
		uint32_t pc = 0;

		if (!m->code)
			continue;
		for (i = 0; i < n && d[i] != ')'; i++)
			;
		if (i + 1 < n && (d[i + 1] == 'L' || d[i + 1] == '[')) {
			char *std = NULL;
			size_t len;

			rc = classfile_utf8(&std, cf, m->desc, s->err);
			if (!rc)
				rc = load_type(s, std + i + 1, &len, NULL);
			free(std);
		}
		while (!rc && (rc = classfile_insn_next(cf, m, &pc, &in,
							s->err)) == 1) {
			rc = 0;
			switch (in.op) {
			case CLASSFILE_OP_INVOKEVIRTUAL:
			case CLASSFILE_OP_INVOKESPECIAL:
			case CLASSFILE_OP_INVOKESTATIC:
			case CLASSFILE_OP_INVOKEINTERFACE:
				rc = load_params(s, cf,
						 cf->cp[cf->cp[in.index].b].b);
				break;
			case CLASSFILE_OP_INVOKEDYNAMIC:
				rc = load_params(s, cf,
						 cf->cp[cf->cp[in.index].b].b);
				break;
			case CLASSFILE_OP_PUTFIELD:
			case CLASSFILE_OP_PUTSTATIC:
				rc = load_desc(s, cf,
					       cf->cp[cf->cp[in.index].b].b);
				break;
			}
		}
		if (rc == -EINVAL && s->err) {
			char msg[sizeof(s->err->msg)];
			size_t a;
			const char *nm = raw(cf, m->name, &a);

			snprintf(msg, sizeof(msg), "%s", s->err->msg);
			cmfs_err_clear(s->err);
			cmfs_err_set(s->err, -EINVAL,
				     "class %s, method %.*s: %s", c->name,
				     (int)a, nm, msg);
		}
	}
	return rc;
}

/*
 * 1 if lambda l can be handed on as an `h` that external code would call
 * it as: one of its interface's own supertypes (a lambda is no instance
 * of a class, so an external type that its interface's closure does not
 * name is taken for another type, unlike may_be()).  Not Object: what
 * takes an Object (a collection, Optional.of, a format argument) keeps or
 * prints a value, and the method surely hands some Object on anyway.
 */
static int handed_as(const struct st *s, const struct lambda *l,
		     const struct rclass *h)
{
	size_t i;

	if (h == s->object)
		return 0;
	for (i = 0; i < l->iface->nsup; i++)
		if (l->iface->sup[i] == h)
			return 1;
	return 0;
}

/* The record of field `idx` (a Fieldref of cf), made if new. */
static int fref_get(struct st *s, const struct classfile *cf, unsigned idx,
		    struct fref **out)
{
	struct fref *f;
	struct ref r;
	size_t i;
	int rc;

	rc = member(s, cf, idx, &r);
	if (rc || !r.owner)
		return rc ? rc : -EINVAL;
	for (i = 0; i < s->nfrefs; i++) {
		f = s->frefs[i];
		if (f->owner == r.owner && f->nlen == r.nlen &&
		    !memcmp(f->name, r.name, r.nlen)) {
			*out = f;
			return 0;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->owner = r.owner;
	f->name = r.name;
	f->nlen = r.nlen;
	if (r.dlen > 2 && r.desc[0] == 'L' && r.desc[r.dlen - 1] == ';')
		rc = cls_get(s, r.desc + 1, r.dlen - 2, &f->type);
	if (!rc)
		rc = push(&s->frefs, &s->nfrefs, &s->afrefs, sizeof(f), &f);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	return 0;
}

/* Operand stack slots an instruction pops and pushes (long, double:
 * two), for those whose counts are fixed; E: it ends the straight line
 * (a branch, a return, a throw, a switch, wide's own opcode); C: counted
 * apart, from its constant (follow). */
#define E 0xff
#define C 0xfe
/* clang-format off */
static const uint8_t stack_pop[256] = {
	/* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x10 */ 0, 0, 0xfe, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x20 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2,
	/* 0x30 */ 2, 2, 2, 2, 2, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2,
	/* 0x40 */ 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 3,
	/* 0x50 */ 4, 3, 4, 3, 3, 3, 3, 1, 2, 1, 2, 3, 2, 3, 4, 2,
	/* 0x60 */ 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 4,
	/* 0x70 */ 2, 4, 2, 4, 1, 2, 1, 2, 2, 3, 2, 3, 2, 3, 2, 4,
	/* 0x80 */ 2, 4, 2, 4, 0, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2,
	/* 0x90 */ 2, 1, 1, 1, 4, 2, 2, 4, 4, E, E, E, E, E, E, E,
	/* 0xa0 */ E, E, E, E, E, E, E, E, E, E, E, E, E, E, E, E,
	/* 0xb0 */ E, E, C, C, C, C, C, C, C, C, C, 0, 1, 1, 1, E,
	/* 0xc0 */ 1, 1, 1, 1, E, C, E, E, E, E,
	/* 0xca..: not in class files */
};
static const uint8_t stack_push[256] = {
	/* 0x00 */ 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1, 2, 2,
	/* 0x10 */ 1, 1, C, C, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 2,
	/* 0x20 */ 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 2,
	/* 0x30 */ 1, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4, 4, 5, 6, 2,
	/* 0x60 */ 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2,
	/* 0x70 */ 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2,
	/* 0x80 */ 1, 2, 1, 2, 0, 2, 1, 2, 1, 1, 2, 1, 2, 2, 1, 2,
	/* 0x90 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0,
	/* 0xa0 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0xb0 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0,
	/* 0xc0 */ 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */
#undef E
#undef C

static int taken(struct st *s, const struct classfile *cf, unsigned idx,
		 uint8_t op, const char *d, size_t n, unsigned at,
		 struct lambda *l);
static int follow_local(struct st *s, const struct classfile *cf,
			const struct classfile_member *m, uint32_t pc,
			unsigned var, struct lambda *l, unsigned depth);

/* The length of the field type at d[i] of the n raw bytes (an array's
 * '['s and element), or 0 when it runs off their end. */
static size_t type_len(const char *d, size_t n, size_t i)
{
	size_t k = i;

	while (k < n && d[k] == '[')
		k++;
	if (k >= n)
		return 0;
	if (d[k] != 'L')
		return k + 1 - i;
	while (k < n && d[k] != ';')
		k++;
	return k < n ? k + 1 - i : 0;
}

/* Slots of the field type at d (J, D: two). */
static unsigned slots(char c)
{
	return c == 'J' || c == 'D' ? 2 : 1;
}

/*
 * Where the value on top of the stack at `pc` of method m goes, followed
 * along the straight line of code after it: `l` the lambda it is, `depth`
 * how many locals were followed to get here.  A call of an external
 * method that takes it as its interface (or a supertype of it) calls
 * it: fired.  A field store records the field (track, scan).  A local is
 * followed to each later load of it.  Anything else that takes it (a JAR
 * method, a return, an array) leaves it to the JAR's own calls; what
 * cannot be followed (a branch first, a dup of it) marks it unsure, for
 * scan's coarser rule.
 */
static int follow(struct st *s, const struct classfile *cf,
		  const struct classfile_member *m, uint32_t pc,
		  struct lambda *l, unsigned depth)
{
	struct classfile_insn in;
	uint32_t above = 0; /* stack slots above the lambda */
	size_t k, steps = 0;
	int rc;

	while ((rc = classfile_insn_next(cf, m, &pc, &in, NULL)) == 1) {
		unsigned pop = stack_pop[in.op], push_ = stack_push[in.op];

		/* Hostile code may keep it on the stack a long way: not
		 * followed that far (follow_local may try again and again). */
		if (++steps > FOLLOW_STEPS) {
			l->unsure = 1;
			return 0;
		}
		const char *d;
		size_t n, i;

		if (pop == 0xff) {
			/* areturn and athrow of it: gone from here */
			if (!above && (in.op == 0xb0 || in.op == 0xbf))
				return 0;
			l->unsure = 1;
			return 0;
		}
		if (pop == 0xfe) {
			const struct classfile_const *c = &cf->cp[in.index];
			unsigned args = 0, self = 0;

			switch (in.op) {
			case CLASSFILE_OP_LDC:
			case CLASSFILE_OP_LDC_W:
				pop = 0;
				n = 0;
				d = c->tag == CLASSFILE_DYNAMIC
					    ? raw(cf, cf->cp[c->b].b, &n)
					    : "L";
				push_ = slots(n ? d[0] : 'L');
				break;
			case CLASSFILE_OP_MULTIANEWARRAY:
				pop = m->code[in.pc + 3];
				push_ = 1;
				break;
			case CLASSFILE_OP_GETSTATIC:
			case CLASSFILE_OP_PUTSTATIC:
			case CLASSFILE_OP_GETFIELD:
			case CLASSFILE_OP_PUTFIELD:
				d = raw(cf, cf->cp[c->b].b, &n);
				self = in.op == CLASSFILE_OP_GETFIELD ||
				       in.op == CLASSFILE_OP_PUTFIELD;
				if (in.op == CLASSFILE_OP_GETSTATIC ||
				    in.op == CLASSFILE_OP_GETFIELD) {
					pop = self;
					push_ = slots(n ? d[0] : 'L');
					break;
				}
				pop = self + slots(n ? d[0] : 'L');
				push_ = 0;
				if (above == 0) {
					/* stored: into this field */
					struct fref *f;

					rc = fref_get(s, cf, in.index, &f);
					if (rc)
						return rc == -EINVAL ? 0 : rc;
					l->field = f;
					return f->passed ? lambda_fire(s, l)
							 : 0;
				}
				break;
			default: /* the invokes */
				d = raw(cf, cf->cp[c->b].b, &n);
				self = in.op != CLASSFILE_OP_INVOKESTATIC &&
				       in.op != CLASSFILE_OP_INVOKEDYNAMIC;
				for (i = 1; i < n && d[i] != ')'; i += k) {
					k = type_len(d, n, i);
					if (!k) {
						l->unsure = 1;
						return 0;
					}
					args += k == 1 ? slots(d[i]) : 1;
				}
				pop = args + self;
				push_ = i + 1 < n && d[i + 1] != 'V'
						? slots(d[i + 1])
						: 0;
				if (above < args)
					return taken(s, cf, in.index, in.op, d,
						     n, above + 1, l);
				break;
			}
		}
		if (pop > above) {
			/* Taken by something that does not call it: a pop,
			 * a store (followed), a cast (it stays). */
			if (in.op == CLASSFILE_OP_CHECKCAST)
				continue;
			if (in.op == 0x3a || (in.op >= 0x4b && in.op <= 0x4e))
				return depth < 2 ? follow_local(s, cf, m, pc,
								in.local, l,
								depth)
						 : (l->unsure = 1, 0);
			if (in.op == 0x57 || in.op == 0xc1 || in.op == 0x53 ||
			    in.op == 0xc2 || in.op == 0xc3)
				return 0;
			l->unsure = 1; /* dup and the like */
			return 0;
		}
		above = above - pop + push_;
	}
	return rc < 0 ? (l->unsure = 1, 0) : 0;
}

/*
 * The lambda is the `at`-th argument slot (1 = the last) of an invoke of
 * the member at `idx` with descriptor d (n bytes): fired when the callee
 * is external and the parameter's type is one it can be called as.
 */
static int taken(struct st *s, const struct classfile *cf, unsigned idx,
		 uint8_t op, const char *d, size_t n, unsigned at,
		 struct lambda *l)
{
	struct rclass *owner, *t;
	size_t i, k, start[256], len[256], np = 0;
	unsigned sz[256], acc = 0;
	int rc;

	if (op == CLASSFILE_OP_INVOKEDYNAMIC)
		return 0;
	for (i = 1; i < n && d[i] != ')' && np < 256; i += k) {
		k = type_len(d, n, i);
		if (!k)
			return 0;
		start[np] = i;
		len[np] = k;
		sz[np++] = k == 1 ? slots(d[i]) : 1;
	}
	/* From the last parameter back to the one that holds it. */
	for (i = np; i > 0; i--) {
		acc += sz[i - 1];
		if (acc >= at)
			break;
	}
	if (!i)
		return 0;
	rc = cp_class(s, cf, cf->cp[idx].a, &owner);
	if (!rc && owner)
		rc = look(s, owner);
	if (rc || !owner || owner->cf || d[start[i - 1]] != 'L')
		return rc;
	rc = cls_get(s, d + start[i - 1] + 1, len[i - 1] - 2, &t);
	if (!rc && handed_as(s, l, t))
		rc = lambda_fire(s, l);
	return rc;
}

/* The lambda was stored in local `var`: follow it from each later load
 * of that local. */
static int follow_local(struct st *s, const struct classfile *cf,
			const struct classfile_member *m, uint32_t pc,
			unsigned var, struct lambda *l, unsigned depth)
{
	struct classfile_insn in;
	unsigned loads = 0;
	int rc;

	while ((rc = classfile_insn_next(cf, m, &pc, &in, NULL)) == 1)
		if ((in.op == 0x19 || (in.op >= 0x2a && in.op <= 0x2d)) &&
		    in.local == var && !l->queued) {
			if (++loads > FOLLOW_LOADS) {
				l->unsure = 1;
				return 0;
			}
			rc = follow(s, cf, m, pc, l, depth + 1);
			if (rc)
				return rc;
		}
	return rc < 0 ? (l->unsure = 1, 0) : 0;
}

/* A field instruction: a get is noted (scan hands on what it reads). */
static int track(struct st *s, const struct classfile *cf, unsigned idx,
		 uint8_t op)
{
	struct fref *f;
	int rc;

	if (op != CLASSFILE_OP_GETFIELD && op != CLASSFILE_OP_GETSTATIC)
		return 0;
	rc = fref_get(s, cf, idx, &f);
	if (rc)
		return rc == -EINVAL ? 0 : rc;
	return push(&s->fetched, &s->nfetched, &s->afetched, sizeof(f), &f);
}

/* Read method mi of c: what each instruction and handler loads, calls,
 * initializes or instantiates. */
static int scan(struct st *s, struct rclass *c, unsigned mi)
{
	const struct classfile *cf = c->cf;
	const struct classfile_member *m = &cf->methods[mi];
	struct classfile_insn in;
	struct rclass *x;
	uint32_t pc = 0;
	uint16_t t;
	unsigned k;
	int rc = 0;

	size_t made = s->nlams, i, j;

	struct fref *f;

	s->nhanded = s->nfetched = 0;
	rc = own_types(s, cf, m);
	for (k = 0; k < m->nexc && !rc; k++) {
		rc = classfile_handler(cf, m, k, &t, s->err);
		if (!rc && t)
			rc = load_cp(s, cf, t);
	}
	while (!rc &&
	       (rc = classfile_insn_next(cf, m, &pc, &in, s->err)) == 1) {
		rc = 0;
		switch (in.op) {
		case CLASSFILE_OP_LDC:
		case CLASSFILE_OP_LDC_W:
		case CLASSFILE_OP_LDC2_W:
			if (cf->cp[in.index].tag == CLASSFILE_DYNAMIC)
				rc = bootstrap(s, cf, cf->cp[in.index].a,
					       cf->cp[in.index].b, 0, 0);
			else
				rc = bsm_arg(s, cf, in.index, 0);
			break;
		case CLASSFILE_OP_GETSTATIC:
		case CLASSFILE_OP_PUTSTATIC:
			rc = field(s, cf, in.index, 1);
			if (!rc)
				rc = track(s, cf, in.index, in.op);
			break;
		case CLASSFILE_OP_GETFIELD:
		case CLASSFILE_OP_PUTFIELD:
			rc = field(s, cf, in.index, 0);
			if (!rc)
				rc = track(s, cf, in.index, in.op);
			break;
		case CLASSFILE_OP_INVOKEVIRTUAL:
		case CLASSFILE_OP_INVOKESPECIAL:
		case CLASSFILE_OP_INVOKESTATIC:
		case CLASSFILE_OP_INVOKEINTERFACE:
			rc = invoke(s, cf, in.index, in.op);
			break;
		case CLASSFILE_OP_INVOKEDYNAMIC:
			i = s->nlams;
			rc = bootstrap(s, cf, cf->cp[in.index].a,
				       cf->cp[in.index].b, 1, 0);
			if (!rc && s->nlams > i)
				rc = follow(s, cf, m, pc, s->lams[s->nlams - 1],
					    0);
			break;
		case CLASSFILE_OP_NEW:
			rc = cp_class(s, cf, in.index, &x);
			if (!rc)
				rc = instantiate(s, x);
			break;
		case CLASSFILE_OP_CHECKCAST:
		case CLASSFILE_OP_INSTANCEOF:
		case CLASSFILE_OP_ANEWARRAY:
		case CLASSFILE_OP_MULTIANEWARRAY:
			rc = load_cp(s, cf, in.index);
			break;
		}
	}
	/*
	 * A lambda this method makes and hands to external code (a stream's
	 * map, computeIfAbsent, forEach ...) may be called there, now: its
	 * implementation is reached.  One it keeps, returns or gives to the
	 * JAR's own code is called only as the JAR's code calls it.
	 */
	for (i = made; !rc && i < s->nlams; i++)
		for (j = 0; s->lams[i]->unsure && j < s->nhanded; j++)
			if (handed_as(s, s->lams[i], s->handed[j])) {
				rc = lambda_fire(s, s->lams[i]);
				break;
			}
	/*
	 * A field this method reads and whose type it hands to external
	 * code may hold a lambda made elsewhere (a static final Function
	 * given to a stream): the lambdas stored in it as they were made,
	 * and those to be, are called.
	 */
	for (j = 0; !rc && j < s->nhanded; j++)
		for (i = 0; !rc && i < s->nfetched; i++) {
			f = s->fetched[i];
			if (f->passed || !f->type || f->type != s->handed[j])
				continue;
			f->passed = 1;
			for (k = 0; !rc && k < s->nlams; k++)
				if (s->lams[k]->field == f)
					rc = lambda_fire(s, s->lams[k]);
		}
	return rc;
}

/* ------------------------------------------------------------------ */
/* The walk.                                                           */

/* Until nothing is left to do: supertypes, lambdas, then code. */
static int run(struct st *s)
{
	int rc = 0;

	while (!rc) {
		if (s->lqhead < s->nlq) {
			struct rclass *c = s->lq[s->lqhead++];
			size_t i;

			rc = load(s, c->super);
			for (i = 0; !rc && i < c->nifaces; i++)
				rc = load(s, c->ifaces[i]);
		} else if (s->vqhead < s->nvq) {
			rc = verify(s, s->vq[s->vqhead++]);
		} else if (s->fqhead < s->nfq) {
			struct lambda *l = s->fq[s->fqhead++];

			rc = mh_invoke(s, l->cf, l->impl);
		} else if (s->qhead < s->nq) {
			struct work w = s->q[s->qhead++];

			rc = scan(s, w.c, w.m);
			if (rc == -EINVAL) {
				/* Which method: the message's prefix. */
				char msg[sizeof(s->err->msg)];
				size_t a;
				const char *n =
					raw(w.c->cf, w.c->cf->methods[w.m].name,
					    &a);

				if (s->err) {
					snprintf(msg, sizeof(msg), "%s",
						 s->err->msg);
					cmfs_err_clear(s->err);
					cmfs_err_set(
						s->err, -EINVAL,
						"class %s, method %.*s: %s",
						w.c->name, (int)a, n, msg);
				}
			}
		} else {
			break;
		}
	}
	return rc;
}

/* From one factory: load, initialize and instantiate it (ServiceLoader),
 * construct it, then its planner methods. */
static int factory(struct st *s, const char *iname)
{
	struct rclass *f;
	int rc;

	rc = cls_get(s, iname, strlen(iname), &f);
	if (!rc)
		rc = look(s, f);
	if (rc)
		return rc;
	if (!f->cf)
		return cmfs_err_set(s->err, -ENOEXEC,
				    "factory class %s is not in the JAR",
				    iname);
	rc = instantiate(s, f);
	if (!rc)
		rc = reach_resolved(s, f, "<init>", 6, "()V", 3);
	if (!rc)
		rc = roots(s, f, factory_roots, NULL);
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(struct rclass *const *)a)->name,
		      (*(struct rclass *const *)b)->name);
}

static void st_release(struct st *s)
{
	size_t i;

	for (i = 0; i < s->classes.cap; i++) {
		struct rclass *c = (struct rclass *)s->classes.v[i].val;

		if (!s->classes.v[i].key)
			continue;
		free(c->name);
		free(c->ifaces);
		free(c->sup);
		free(c->mdone);
		free(c);
	}
	for (i = 0; i < s->sigs.cap; i++) {
		struct sig *g = (struct sig *)s->sigs.v[i].val;

		if (!s->sigs.v[i].key)
			continue;
		free(g->key);
		free(g->owners);
		free(g->impls);
		free(g->lams);
		free(g);
	}
	for (i = 0; i < s->nlams; i++)
		free(s->lams[i]);
	free(s->lams);
	hash_release(&s->classes);
	hash_release(&s->sigs);
	free(s->q);
	free(s->lq);
	free(s->fq);
	free(s->vq);
	free(s->ext);
	free(s->handed);
	free(s->fetched);
	for (i = 0; i < s->nfrefs; i++)
		free(s->frefs[i]);
	free(s->frefs);
}

int reach_run(struct reach_result *out, const char *const *factories, size_t n,
	      const char *const *providers, size_t np, reach_lookup_fn lookup,
	      void *ctx, const struct reach_limits *lim, struct cmfs_err *err)
{
	struct st s;
	size_t i, bytes = 0;
	char **v, *d;
	int rc;

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	s.lookup = lookup;
	s.ctx = ctx;
	s.providers = providers;
	s.nproviders = np;
	s.err = err;
	if (lim)
		s.lim = *lim;
	else
		reach_limits_default(&s.lim);
	rc = cls_get(&s, "java/lang/Object", 16, &s.object);
	for (i = 0; i < n && !rc; i++)
		rc = factory(&s, factories[i]);
	if (!rc)
		rc = run(&s);
	if (rc)
		goto out;
	if (s.next) /* qsort(NULL, 0) is undefined */
		qsort(s.ext, s.next, sizeof(*s.ext), cmp_name);
	for (i = 0; i < s.next; i++)
		bytes += s.ext[i]->nlen + 1;
	v = malloc((s.next + 1) * sizeof(*v) + bytes);
	if (!v) {
		rc = -ENOMEM;
		goto out;
	}
	d = (char *)(v + s.next + 1);
	for (i = 0; i < s.next; i++) {
		v[i] = memcpy(d, s.ext[i]->name, s.ext[i]->nlen + 1);
		d += s.ext[i]->nlen + 1;
	}
	v[s.next] = NULL;
	out->compile = v;
	out->ncompile = s.next;
	out->nclasses = s.nclasses;
	out->nmethods = s.nmethods;
out:
	st_release(&s);
	return rc;
}

void reach_result_release(struct reach_result *r)
{
	free(r->compile); /* the names are in the same block */
	memset(r, 0, sizeof(*r));
}
