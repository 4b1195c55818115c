/*
 * jar_ident.c - what a factory's factoryIdentifier() returns, when the
 * bytecode makes it a constant: the method selected as the JVM selects
 * it (the class, its superclasses, then the default methods of its
 * interfaces), and its value judged from the method's code: a string
 * constant, or a static final String field with a constant value.
 */
#include "jar_int.h"

#include "classfile.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ID_METHOD "factoryIdentifier"
#define ID_DESC "()Ljava/lang/String;"
#define STRING_DESC "Ljava/lang/String;"

/* ------------------------------------------------------------------ */
/* factoryIdentifier().                                                */

/* 1 if m can be selected for an interface call: a concrete instance one. */
static int concrete(const struct classfile_member *m)
{
	return m &&
	       !(m->access & (CLASSFILE_ACC_STATIC | CLASSFILE_ACC_PRIVATE |
			      CLASSFILE_ACC_ABSTRACT));
}

/* What resolve_field() found. */
enum { FIELD_NONE, FIELD_FOUND, FIELD_OPAQUE };

/*
 * Find field `name` of type String as getstatic resolves it (JVMS
 * 5.4.3.2): in c, then its superinterfaces, then its superclass.  *res is
 * FIELD_FOUND (with *owner and *f), FIELD_NONE, or FIELD_OPAQUE when an
 * external type in the way might declare it.  0, STOP or -errno.
 */
static int resolve_field(struct insp *in, struct jclass *c, const char *name,
			 int *res, struct jclass **owner,
			 const struct classfile_member **f)
{
	struct jclass *sc;
	size_t i;
	int rc;

	*res = FIELD_NONE;
	if (c->mark == in->gen) /* searched already, in vain */
		return 0;
	c->mark = in->gen;
	*f = classfile_field(c->cf, name, STRING_DESC);
	if (*f) {
		*owner = c;
		*res = FIELD_FOUND;
		return 0;
	}
	for (i = 0; c->ifaces[i]; i++) {
		rc = jar_load_class(in, c->ifaces[i], &sc);
		if (!rc && sc)
			rc = resolve_field(in, sc, name, res, owner, f);
		else if (!rc)
			*res = FIELD_OPAQUE;
		if (rc || *res != FIELD_NONE)
			return rc;
	}
	if (!c->super || !strcmp(c->super, "java/lang/Object"))
		return 0;
	rc = jar_load_class(in, c->super, &sc);
	if (!rc && sc)
		rc = resolve_field(in, sc, name, res, owner, f);
	else if (!rc)
		*res = FIELD_OPAQUE;
	return rc;
}

/*
 * The constant behind `getstatic #idx; areturn` in class c: the field must
 * be a static final String of a JAR class with a ConstantValue.
 * 0 (with *out, or unknown), STOP or -errno.
 */
static int field_value(struct insp *in, struct jclass *c, unsigned idx,
		       char **out)
{
	const struct classfile *cf = c->cf;
	const struct classfile_const *fr = &cf->cp[idx];
	const struct classfile_const *nat = &cf->cp[fr->b];
	const struct classfile_member *f = NULL;
	char *cname = NULL, *fname = NULL;
	struct jclass *fc, *owner = NULL;
	int rc, res;

	if (!classfile_utf8_eq(cf, nat->b, STRING_DESC))
		return 0;
	rc = classfile_class_name(&cname, cf, fr->a, NULL);
	if (!rc)
		rc = classfile_utf8(&fname, cf, nat->a, NULL);
	if (rc)
		goto out;
	/* The field's class may be any JAR class: prove its hierarchy
	 * finite before resolve_field() recurses over it. */
	rc = jar_load_class(in, cname, &fc);
	if (!rc && fc)
		rc = jar_walk_kind(in, fc, 0);
	if (rc || !fc)
		goto out;
	in->gen++;
	rc = resolve_field(in, fc, fname, &res, &owner, &f);
	if (!rc && res == FIELD_FOUND) {
		if ((f->access & CLASSFILE_ACC_STATIC) &&
		    (f->access & CLASSFILE_ACC_FINAL) && f->constant &&
		    owner->cf->cp[f->constant].tag == CLASSFILE_STRING)
			rc = classfile_string(out, owner->cf, f->constant,
					      NULL);
	}
out:
	free(cname);
	free(fname);
	/* A name that cannot be read only makes the identifier unknown. */
	return rc == -EINVAL ? 0 : rc;
}

/* Judge method m of class c: does it return a constant string? */
static int method_value(struct insp *in, struct jclass *c,
			const struct classfile_member *m, char **out)
{
	unsigned idx = 0;
	int rc = 0;

	switch (classfile_const_return(c->cf, m, &idx)) {
	case CLASSFILE_RET_STRING:
		rc = classfile_string(out, c->cf, idx, NULL);
		break;
	case CLASSFILE_RET_FIELD:
		rc = field_value(in, c, idx, out);
		break;
	case CLASSFILE_RET_OTHER:
		break;
	}
	return rc == -EINVAL ? 0 : rc;
}

/* Candidate default methods: the interfaces that declare one. */
struct cands {
	struct jclass **v;
	size_t n, alloc;
	int opaque; /* an external interface might declare one too */
};

/*
 * Gather the superinterfaces of c (transitively; each once per walk) that
 * declare a concrete factoryIdentifier().  External interfaces of Java or
 * of Flink's factory package are known not to; any other makes the
 * answer opaque.
 */
static int collect_defaults(struct insp *in, struct jclass *c, struct cands *cs)
{
	struct jclass *ic;
	size_t i;
	void *p;
	int rc;

	for (i = 0; c->ifaces[i]; i++) {
		const char *name = c->ifaces[i];

		rc = jar_load_class(in, name, &ic);
		if (rc)
			return rc;
		if (!ic) {
			if (strncmp(name, "java/", 5) &&
			    strncmp(name, "org/apache/flink/table/factories/",
				    33))
				cs->opaque = 1;
			continue;
		}
		if (ic->mark == in->gen)
			continue;
		ic->mark = in->gen;
		if (concrete(classfile_method(ic->cf, ID_METHOD, ID_DESC))) {
			p = jar_grow_array(cs->v, cs->n, &cs->alloc,
					   sizeof(*cs->v));
			if (!p)
				return -ENOMEM;
			cs->v = p;
			cs->v[cs->n++] = ic;
		}
		rc = collect_defaults(in, ic, cs);
		if (rc)
			return rc;
	}
	return 0;
}

/* 1 if interface `sup` is a superinterface of `sub` (a fresh walk). */
static int extends_iface(struct insp *in, struct jclass *sub,
			 struct jclass *sup)
{
	struct jclass *ic;
	struct name *r;
	size_t i;

	for (i = 0; sub->ifaces[i]; i++) {
		const char *name = sub->ifaces[i];

		/* All were loaded by collect_defaults(), if in the JAR. */
		r = jar_name_get(in, name, strlen(name));
		if (!r || !r->jc)
			continue;
		ic = r->jc;
		if (ic == sup)
			return 1;
		if (ic->mark == in->gen)
			continue;
		ic->mark = in->gen;
		if (extends_iface(in, ic, sup))
			return 1;
	}
	return 0;
}

/*
 * No class in the chain implements factoryIdentifier(): the JVM takes
 * the one maximally-specific default method of the superinterfaces
 * (JVMS 5.4.3.3), if there is exactly one.
 */
static int default_value(struct insp *in, struct jclass *fc, char **out)
{
	struct cands cs = {NULL, 0, 0, 0};
	struct jclass *c = fc, *pick = NULL;
	size_t i, j, kept = 0;
	int rc = 0;

	/* The superinterfaces of the class and of all its superclasses,
	 * which jar_factory_identifier() found all in the JAR. */
	in->gen++;
	while (c && !rc) {
		rc = collect_defaults(in, c, &cs);
		if (!rc && c->super)
			rc = jar_load_class(in, c->super, &c);
		else
			c = NULL;
	}
	/* Maximally specific: no other candidate extends it. */
	for (i = 0; i < cs.n && !rc; i++) {
		int specific = 1;

		for (j = 0; j < cs.n && specific; j++) {
			in->gen++;
			if (j != i && extends_iface(in, cs.v[j], cs.v[i]))
				specific = 0;
		}
		if (specific) {
			kept++;
			pick = cs.v[i];
		}
	}
	if (!rc && kept == 1 && !cs.opaque)
		rc = method_value(
			in, pick,
			classfile_method(pick->cf, ID_METHOD, ID_DESC), out);
	free(cs.v);
	return rc;
}

/*
 * The identifier of factory class fc, when its factoryIdentifier() is a
 * constant: selected as invokeinterface would (the class, then its
 * superclasses, skipping abstract methods; then default methods).
 * 0 with *out set or NULL (unknown), STOP or -errno.
 */
int jar_factory_identifier(struct insp *in, struct jclass *fc, char **out)
{
	const struct classfile_member *m;
	struct jclass *c = fc;
	int rc;

	*out = NULL;
	/* Bounded: jar_walk_kind() has proved the superclass chain finite. */
	for (;;) {
		m = classfile_method(c->cf, ID_METHOD, ID_DESC);
		if (concrete(m))
			return method_value(in, c, m, out);
		if (!c->super || !strcmp(c->super, "java/lang/Object"))
			break;
		rc = jar_load_class(in, c->super, &c);
		if (rc)
			return rc;
		if (!c) /* an external superclass may implement it */
			return 0;
	}
	return default_value(in, fc, out);
}
