/*
 * options.c - a factory's declared options, from its bytecode (options.h).
 *
 * One abstract interpreter serves three readings.  Over a static
 * initializer it follows ConfigOptions.key(...) builder chains to the
 * putstatic that stores them, and enum constructors to the constants'
 * strings.  Over requiredOptions() and its kin it follows the building of
 * a collection of options.  Over the factory's other methods it looks
 * for the prefixes handed to FactoryUtil's helper.validateExcept.  The
 * interpreter runs straight through the code: it keeps a symbolic stack
 * and locals, and gives up on what it cannot follow (a branch in an
 * options method makes that set unknown; in a static initializer it just
 * forgets the stack, so a field set behind a branch stays unresolved and
 * the sets that use it are unknown).  Values the interpreter does not
 * model are "unknown" values with the right stack effect, taken from the
 * invoked method's descriptor.
 *
 * Every string made here lives in one arena (struct ctx.strs) until the
 * reading ends; the result is copied out of it.
 */
#define _GNU_SOURCE /* asprintf, vasprintf */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"

#define CONFIG_OPTION "Lorg/apache/flink/configuration/ConfigOption;"
#define CFG "org/apache/flink/configuration/"
#define FACTORY_UTIL "org/apache/flink/table/factories/FactoryUtil"
#define LOOKUP_OPTIONS                                                         \
	"org/apache/flink/table/connector/source/lookup/LookupOptions"

/* Caps: the stack and locals modelled, nesting of method reads, arrays. */
#define MAX_STACK 256
#define MAX_LOCALS 256
#define MAX_DEPTH 12
#define MAX_ARRAY 4096
#define ACC_ENUM 0x4000

/* Flink's own option constants that connector code names. */
struct known {
	const char *owner, *field, *key, *type, *defval, *values;
};

static const struct known known_options[] = {
	{FACTORY_UTIL, "CONNECTOR", "connector", "string", NULL, NULL},
	{FACTORY_UTIL, "FORMAT", "format", "string", NULL, NULL},
	{FACTORY_UTIL, "PROPERTY_VERSION", "property-version", "int", "1",
	 NULL},
	{FACTORY_UTIL, "SINK_PARALLELISM", "sink.parallelism", "int", NULL,
	 NULL},
	{FACTORY_UTIL, "SOURCE_PARALLELISM", "scan.parallelism", "int", NULL,
	 NULL},
	{FACTORY_UTIL, "WATERMARK_EMIT_STRATEGY",
	 "scan.watermark.emit.strategy", "enum", "on-periodic",
	 "on-event,on-periodic"},
	{FACTORY_UTIL, "WATERMARK_ALIGNMENT_GROUP",
	 "scan.watermark.alignment.group", "string", NULL, NULL},
	{FACTORY_UTIL, "WATERMARK_ALIGNMENT_MAX_DRIFT",
	 "scan.watermark.alignment.max-drift", "duration", NULL, NULL},
	{FACTORY_UTIL, "WATERMARK_ALIGNMENT_UPDATE_INTERVAL",
	 "scan.watermark.alignment.update-interval", "duration", "1 s", NULL},
	{FACTORY_UTIL, "SOURCE_IDLE_TIMEOUT", "scan.watermark.idle-timeout",
	 "duration", NULL, NULL},
	{LOOKUP_OPTIONS, "CACHE_TYPE", "lookup.cache", "enum", "NONE",
	 "NONE,PARTIAL,FULL"},
	{LOOKUP_OPTIONS, "MAX_RETRIES", "lookup.max-retries", "int", "3", NULL},
	{LOOKUP_OPTIONS, "PARTIAL_CACHE_EXPIRE_AFTER_ACCESS",
	 "lookup.partial-cache.expire-after-access", "duration", NULL, NULL},
	{LOOKUP_OPTIONS, "PARTIAL_CACHE_EXPIRE_AFTER_WRITE",
	 "lookup.partial-cache.expire-after-write", "duration", NULL, NULL},
	{LOOKUP_OPTIONS, "PARTIAL_CACHE_CACHE_MISSING_KEY",
	 "lookup.partial-cache.cache-missing-key", "boolean", "true", NULL},
	{LOOKUP_OPTIONS, "PARTIAL_CACHE_MAX_ROWS",
	 "lookup.partial-cache.max-rows", "long", NULL, NULL},
	{LOOKUP_OPTIONS, "FULL_CACHE_RELOAD_STRATEGY",
	 "lookup.full-cache.reload-strategy", "enum", "PERIODIC",
	 "PERIODIC,TIMED"},
	{LOOKUP_OPTIONS, "FULL_CACHE_PERIODIC_RELOAD_INTERVAL",
	 "lookup.full-cache.periodic-reload.interval", "duration", NULL, NULL},
	{LOOKUP_OPTIONS, "FULL_CACHE_PERIODIC_RELOAD_SCHEDULE_MODE",
	 "lookup.full-cache.periodic-reload.schedule-mode", "enum",
	 "FIXED_DELAY", "FIXED_DELAY,FIXED_RATE"},
	{LOOKUP_OPTIONS, "FULL_CACHE_TIMED_RELOAD_ISO_TIME",
	 "lookup.full-cache.timed-reload.iso-time", "string", NULL, NULL},
	{LOOKUP_OPTIONS, "FULL_CACHE_TIMED_RELOAD_INTERVAL_IN_DAYS",
	 "lookup.full-cache.timed-reload.interval-in-days", "int", "1", NULL},
};

/* Flink's enums that connectors' options use, as toString() shows them. */
static const struct {
	const char *cls, *values;
} known_enums[] = {
	{"org/apache/flink/connector/base/DeliveryGuarantee",
	 "exactly-once,at-least-once,none"},
};

/* What a stack slot or local holds. */
enum vkind {
	V_UNK,
	V_NULL,
	V_STR,	 /* s: a String constant */
	V_CLASS, /* s: a Class constant, internal name */
	V_NUM,	 /* s: a number (or true/false), as text */
	V_OPT,	 /* i: an option (or its builder) in ctx.pool */
	V_SET,	 /* i: a collection of options in ctx.sets */
	V_ARR,	 /* i: an array in ctx.arrs */
	V_ENUMC, /* s: an enum constant's field name */
	V_NEW	 /* i: an object being made, in ctx.objs */
};

struct val {
	enum vkind k;
	int i;
	const char *s;
};

/* An option as the interpreter builds it; strings in the arena. */
struct opt {
	const char *key, *type, *enum_cls, *values, *defval;
	const char *deprecated, *fallback;
	int list;
	struct val defv; /* the default value, rendered at the end */
};

struct oset {
	int *v; /* ctx.pool indexes */
	size_t n, a;
	int unknown;
};

struct arr {
	struct val *v;
	size_t n;
};

struct obj {
	const char *cls;
	const char *str; /* the constructor's first String after two */
};

/* A static field resolved: an option, or an enum constant's string. */
struct field {
	const char *cls, *name;
	int opt;	 /* pool index, -1 = none */
	const char *str; /* enum constants: the constructor's string */
};

struct ctx {
	reach_lookup_fn lookup;
	void *lctx;
	int rc; /* the first error (ENOMEM, lookup's): stops everything */
	char **strs;
	size_t nstrs, astrs;
	struct opt *pool;
	size_t npool, apool;
	struct oset *sets;
	size_t nsets, asets;
	struct arr *arrs;
	size_t narrs, aarrs;
	struct obj *objs;
	size_t nobjs, aobjs;
	struct field *fields;
	size_t nfields, afields;
	const char **inited; /* classes whose <clinit> was read */
	size_t ninited, ainited;
	const char **prefixes; /* validateExcept's strings */
	size_t nprefixes, aprefixes;
	int prefixes_unknown;
	/* What the factory's methods call of FactoryUtil's checks: helper
	 * validate()/validateExcept() (all), validateFactoryOptions()
	 * (required options and types only). */
	int validates, validates_options;
	int depth;
};

/* Room for one more in *v (n used, *a allocated, `size` each). */
static int grow(struct ctx *c, void **v, size_t n, size_t *a, size_t size)
{
	void *p;
	size_t na;

	if (n < *a)
		return 0;
	na = *a ? *a * 2 : 16;
	p = realloc(*v, na * size);
	if (!p) {
		c->rc = -ENOMEM;
		return -1;
	}
	*v = p;
	*a = na;
	return 0;
}

#define GROW(c, arr, n, a) grow((c), (void **)&(arr), (n), &(a), sizeof(*(arr)))

/* A string kept in the arena (s may be NULL: returns NULL). */
static const char *keep(struct ctx *c, char *s)
{
	if (!s) {
		c->rc = c->rc ? c->rc : -ENOMEM;
		return NULL;
	}
	if (GROW(c, c->strs, c->nstrs, c->astrs)) {
		free(s);
		return NULL;
	}
	c->strs[c->nstrs++] = s;
	return s;
}

static const char *keepf(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *keepf(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return keep(c, s);
}

static int new_opt(struct ctx *c, const char *key)
{
	struct opt *o;

	if (GROW(c, c->pool, c->npool, c->apool))
		return -1;
	o = &c->pool[c->npool];
	memset(o, 0, sizeof(*o));
	o->key = key;
	o->type = "?";
	return (int)c->npool++;
}

static int new_set(struct ctx *c)
{
	if (GROW(c, c->sets, c->nsets, c->asets))
		return -1;
	memset(&c->sets[c->nsets], 0, sizeof(c->sets[0]));
	return (int)c->nsets++;
}

static void set_add(struct ctx *c, int s, int opt)
{
	struct oset *o = &c->sets[s];

	if (opt < 0) {
		o->unknown = 1;
		return;
	}
	if (GROW(c, o->v, o->n, o->a))
		return;
	o->v[o->n++] = opt;
}

/* Everything in set `from` goes into set `to`. */
static void set_merge(struct ctx *c, int to, int from)
{
	size_t i, n = c->sets[from].n;

	if (c->sets[from].unknown)
		c->sets[to].unknown = 1;
	for (i = 0; i < n; i++)
		set_add(c, to, c->sets[from].v[i]);
}

/* Whatever value v holds goes into set s: options, arrays, sets. */
static void set_put(struct ctx *c, int s, struct val v)
{
	size_t i;

	if (v.k == V_OPT)
		set_add(c, s, v.i);
	else if (v.k == V_SET)
		set_merge(c, s, v.i);
	else if (v.k == V_ARR)
		for (i = 0; i < c->arrs[v.i].n; i++)
			set_put(c, s, c->arrs[v.i].v[i]);
	else
		c->sets[s].unknown = 1;
}

/* A value handed to code we do not model: a set in it is spoilt. */
static void escape(struct ctx *c, struct val v)
{
	size_t i;

	if (v.k == V_SET)
		c->sets[v.i].unknown = 1;
	else if (v.k == V_ARR)
		for (i = 0; i < c->arrs[v.i].n; i++)
			if (c->arrs[v.i].v[i].k == V_SET)
				c->sets[c->arrs[v.i].v[i].i].unknown = 1;
}

/* ---- constants and descriptors -------------------------------------- */

static const char *utf8(struct ctx *c, const struct classfile *cf, unsigned idx)
{
	char *s = NULL;

	if (classfile_utf8(&s, cf, idx, NULL))
		return NULL;
	return keep(c, s);
}

/* A Fieldref's or Methodref's class, name and descriptor. */
static int member_ref(struct ctx *c, const struct classfile *cf, unsigned idx,
		      const char **cls, const char **name, const char **desc)
{
	const struct classfile_const *r = &cf->cp[idx];
	const struct classfile_const *nt = &cf->cp[r->b];
	char *s = NULL;

	if (classfile_class_name(&s, cf, r->a, NULL))
		return -1;
	*cls = keep(c, s);
	*name = utf8(c, cf, nt->a);
	*desc = utf8(c, cf, nt->b);
	return *cls && *name && *desc ? 0 : -1;
}

/* The arguments a method descriptor takes (each one stack slot here),
 * and whether it returns a value; -1 when malformed. */
static int desc_args(const char *d, int *ret)
{
	int n = 0;

	if (*d++ != '(')
		return -1;
	while (*d && *d != ')') {
		while (*d == '[')
			d++;
		if (*d == 'L') {
			d = strchr(d, ';');
			if (!d)
				return -1;
		} else if (!strchr("BCDFIJSZ", *d)) {
			return -1;
		}
		d++;
		n++;
	}
	if (*d != ')')
		return -1;
	*ret = d[1] != 'V';
	return n;
}

/* The text of a number constant. */
static const char *num_const(struct ctx *c, const struct classfile_const *k)
{
	const uint8_t *b = k->bytes;
	uint64_t u = 0;
	unsigned i;

	for (i = 0; i < k->len && i < 8; i++)
		u = u << 8 | b[i];
	switch (k->tag) {
	case CLASSFILE_INTEGER:
		return keepf(c, "%d", (int32_t)(uint32_t)u);
	case CLASSFILE_LONG:
		return keepf(c, "%lld", (long long)(int64_t)u);
	case CLASSFILE_FLOAT: {
		uint32_t w = (uint32_t)u;
		float f;

		memcpy(&f, &w, sizeof(f));
		return keepf(c, "%g", (double)f);
	}
	case CLASSFILE_DOUBLE: {
		double d;

		memcpy(&d, &u, sizeof(d));
		return keepf(c, "%g", d);
	}
	}
	return NULL;
}

/* A ;- or ,-joined text of an array of strings or constants. */
static const char *join(struct ctx *c, struct val v, const char *sep)
{
	struct arr *a;
	size_t i, len = 0;
	char *s;

	if (v.k == V_STR)
		return v.s;
	if (v.k != V_ARR)
		return NULL;
	a = &c->arrs[v.i];
	for (i = 0; i < a->n; i++) {
		if (a->v[i].k != V_STR && a->v[i].k != V_NUM &&
		    a->v[i].k != V_ENUMC)
			return NULL;
		len += strlen(a->v[i].s) + 1;
	}
	s = calloc(1, len + 1);
	if (!s) {
		c->rc = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < a->n; i++) {
		if (i)
			strcat(s, sep);
		strcat(s, a->v[i].s);
	}
	return keep(c, s);
}

/* ---- the interpreter ------------------------------------------------- */

enum mode { M_CLINIT, M_SET, M_SCAN };

struct frame {
	struct ctx *c;
	const struct classfile *cf;
	const char *self; /* the class's internal name */
	const char *mname, *mdesc;
	enum mode mode;
	struct val st[MAX_STACK];
	int sp;
	struct val loc[MAX_LOCALS];
	int unknown; /* M_SET: gave up */
	struct val ret;
};

static struct val vmk(enum vkind k, int i, const char *s)
{
	struct val v = {k, i, s};

	return v;
}

static void push(struct frame *f, struct val v)
{
	if (f->sp < MAX_STACK)
		f->st[f->sp++] = v;
	else
		f->unknown = 1;
}

static struct val pop(struct frame *f)
{
	if (f->sp > 0)
		return f->st[--f->sp];
	return vmk(V_UNK, 0, NULL);
}

static int resolve_field(struct ctx *c, const char *cls, const char *name,
			 struct field **out);
static int read_set(struct ctx *c, const char *cls, const char *name,
		    const char *desc, int *set);

/* Is `cls` one of the collections an options method builds? */
static int is_coll(const char *cls)
{
	static const char *const v[] = {
		"java/util/HashSet",
		"java/util/LinkedHashSet",
		"java/util/TreeSet",
		"java/util/ArrayList",
		"java/util/LinkedList",
		"java/util/Set",
		"java/util/List",
		"java/util/Collection",
		"java/util/AbstractSet",
		"java/util/stream/Stream",
		"java/util/Collections",
		"java/util/Arrays",
		"java/util/stream/Collectors",
		"com/google/common/collect/ImmutableSet",
		"com/google/common/collect/Sets",
		"org/apache/flink/shaded/guava30/com/google/common/collect/"
		"ImmutableSet",
		"org/apache/flink/shaded/guava31/com/google/common/collect/"
		"ImmutableSet",
		"org/apache/flink/shaded/guava32/com/google/common/collect/"
		"ImmutableSet",
		"org/apache/flink/shaded/guava30/com/google/common/collect/"
		"Sets",
		"org/apache/flink/shaded/guava31/com/google/common/collect/"
		"Sets",
		"org/apache/flink/shaded/guava32/com/google/common/collect/"
		"Sets",
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(cls, v[i]))
			return 1;
	return 0;
}

/* A default value as text, for the option's type. */
static const char *render_default(struct ctx *c, struct val v)
{
	if (v.k == V_STR || v.k == V_NUM || v.k == V_ENUMC)
		return v.s;
	if (v.k == V_ARR)
		return join(c, v, ";");
	return NULL;
}

/*
 * The builder chain and boxing calls: ConfigOptions.key, the typed
 * builders, ConfigOption's with* methods, Integer.valueOf, Duration.of*,
 * MemorySize.parse.  1 when handled (args popped, result pushed), else 0.
 */
static int builder_call(struct frame *f, const char *cls, const char *name,
			const char *desc, struct val *args, int nargs,
			struct val recv)
{
	struct ctx *c = f->c;
	struct opt *o =
		recv.k == V_OPT && recv.i >= 0 ? &c->pool[recv.i] : NULL;
	static const char *const types[] = {"string",	"int",	  "long",
					    "boolean",	"double", "float",
					    "duration", "memory", "map"};
	size_t t;

	if (!strcmp(cls, CFG "ConfigOptions") && !strcmp(name, "key")) {
		int i = new_opt(c, nargs == 1 && args[0].k == V_STR ? args[0].s
								    : NULL);

		push(f, i < 0 ? vmk(V_UNK, 0, NULL) : vmk(V_OPT, i, NULL));
		return 1;
	}
	if (!strncmp(cls, CFG "ConfigOption", strlen(CFG "ConfigOption"))) {
		if (o) {
			for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
				if (!strncmp(name, types[t],
					     strlen(types[t])) &&
				    !strcmp(name + strlen(types[t]), "Type"))
					o->type = types[t];
			if (!strcmp(name, "enumType")) {
				o->type = "enum";
				if (nargs == 1 && args[0].k == V_CLASS)
					o->enum_cls = args[0].s;
			} else if (!strcmp(name, "asList")) {
				o->list = 1;
			} else if (!strcmp(name, "defaultValue") &&
				   nargs == 1) {
				o->defv = args[0];
				if (!strcmp(cls,
					    CFG "ConfigOptions$OptionBuilder"))
					o->type = args[0].k == V_STR ? "string"
								     : "?";
			} else if (!strcmp(name, "defaultValues") &&
				   nargs == 1) {
				o->defv = args[0];
			} else if (!strcmp(name, "noDefaultValue") &&
				   !strcmp(cls,
					   CFG "ConfigOptions$OptionBuilder")) {
				o->type = "string";
			} else if (!strcmp(name, "withDeprecatedKeys") &&
				   nargs == 1) {
				o->deprecated = join(c, args[0], ",");
			} else if (!strcmp(name, "withFallbackKeys") &&
				   nargs == 1) {
				o->fallback = join(c, args[0], ",");
			}
		}
		/* Every builder method returns the option or its builder. */
		if (strchr(desc, ')')[1] != 'V')
			push(f, o ? recv : vmk(V_UNK, 0, NULL));
		return 1;
	}
	if (nargs == 1 && args[0].k == V_NUM &&
	    (!strcmp(name, "valueOf") && (!strcmp(cls, "java/lang/Integer") ||
					  !strcmp(cls, "java/lang/Long") ||
					  !strcmp(cls, "java/lang/Short") ||
					  !strcmp(cls, "java/lang/Byte") ||
					  !strcmp(cls, "java/lang/Double") ||
					  !strcmp(cls, "java/lang/Float")))) {
		push(f, args[0]);
		return 1;
	}
	if (nargs == 1 && args[0].k == V_NUM && !strcmp(name, "valueOf") &&
	    !strcmp(cls, "java/lang/Boolean")) {
		push(f,
		     vmk(V_NUM, 0, strcmp(args[0].s, "0") ? "true" : "false"));
		return 1;
	}
	if (nargs == 1 && args[0].k == V_NUM &&
	    !strcmp(cls, "java/time/Duration")) {
		static const struct {
			const char *m, *u;
		} units[] = {{"ofNanos", "ns"},	 {"ofMillis", "ms"},
			     {"ofSeconds", "s"}, {"ofMinutes", "min"},
			     {"ofHours", "h"},	 {"ofDays", "d"}};

		for (t = 0; t < sizeof(units) / sizeof(units[0]); t++)
			if (!strcmp(name, units[t].m)) {
				push(f, vmk(V_NUM, 0,
					    keepf(c, "%s %s", args[0].s,
						  units[t].u)));
				return 1;
			}
	}
	if (nargs == 1 && !strcmp(cls, CFG "MemorySize")) {
		if (!strcmp(name, "parse") && args[0].k == V_STR) {
			push(f, args[0]);
			return 1;
		}
		if (args[0].k == V_NUM) {
			static const struct {
				const char *m, *u;
			} units[] = {{"ofMebiBytes", "mb"},
				     {"ofKibiBytes", "kb"},
				     {"ofBytes", "bytes"}};

			for (t = 0; t < sizeof(units) / sizeof(units[0]); t++)
				if (!strcmp(name, units[t].m)) {
					push(f, vmk(V_NUM, 0,
						    keepf(c, "%s %s", args[0].s,
							  units[t].u)));
					return 1;
				}
		}
	}
	return 0;
}

/*
 * Collection calls on options: add, addAll, Set.of, Arrays.asList,
 * Stream.of(...).collect(...), Collections.*, Guava's ImmutableSet.of and
 * Sets.newHashSet.  1 when handled.
 */
static int coll_call(struct frame *f, int op, const char *cls, const char *name,
		     struct val *args, int nargs, struct val recv, int ret)
{
	struct ctx *c = f->c;
	int s, i;

	if (!is_coll(cls))
		return 0;
	if (op == CLASSFILE_OP_INVOKESPECIAL && !strcmp(name, "<init>")) {
		if (recv.k != V_SET)
			return 0;
		for (i = 0; i < nargs; i++)
			if (args[i].k == V_SET)
				set_merge(c, recv.i, args[i].i);
			else if (args[i].k != V_NUM)
				c->sets[recv.i].unknown = 1;
		return 1;
	}
	if (op == CLASSFILE_OP_INVOKESTATIC) {
		/* Collectors.toSet() and kin: a tool, not a set. */
		if (!strcmp(cls, "java/util/stream/Collectors")) {
			push(f, vmk(V_UNK, 0, NULL));
			return 1;
		}
		if (!strcmp(name, "addAll") && nargs == 2 &&
		    args[0].k == V_SET) {
			set_put(c, args[0].i, args[1]);
			push(f, vmk(V_UNK, 0, NULL));
			return 1;
		}
		if (!ret)
			return 0;
		s = new_set(c);
		if (s < 0)
			return 1;
		for (i = 0; i < nargs; i++)
			set_put(c, s, args[i]);
		push(f, vmk(V_SET, s, NULL));
		return 1;
	}
	if (recv.k != V_SET)
		return 0;
	if (!strcmp(name, "add") && nargs == 1) {
		set_add(c, recv.i, args[0].k == V_OPT ? args[0].i : -1);
		push(f, vmk(V_UNK, 0, NULL));
		return 1;
	}
	if (!strcmp(name, "addAll") && nargs == 1) {
		set_put(c, recv.i, args[0]);
		push(f, vmk(V_UNK, 0, NULL));
		return 1;
	}
	/* stream(), collect(toSet()), distinct(): the same options. */
	if (ret && (!strcmp(name, "stream") || !strcmp(name, "collect") ||
		    !strcmp(name, "distinct"))) {
		push(f, recv);
		return 1;
	}
	return 0;
}

/* putstatic in a static initializer: remember options and enum strings. */
static void put_static(struct frame *f, unsigned idx, struct val v)
{
	struct ctx *c = f->c;
	const char *cls, *name, *desc;
	struct field *fd;

	if (member_ref(c, f->cf, idx, &cls, &name, &desc) ||
	    strcmp(cls, f->self))
		return;
	if (v.k != V_OPT && v.k != V_NEW)
		return;
	if (GROW(c, c->fields, c->nfields, c->afields))
		return;
	fd = &c->fields[c->nfields++];
	fd->cls = cls;
	fd->name = name;
	fd->opt = v.k == V_OPT ? v.i : -1;
	fd->str = v.k == V_NEW ? c->objs[v.i].str : NULL;
}

/* getstatic: an option, an enum constant, Boolean.TRUE, or unknown. */
static struct val get_static(struct frame *f, unsigned idx)
{
	struct ctx *c = f->c;
	const char *cls, *name, *desc;
	struct field *fd;

	if (member_ref(c, f->cf, idx, &cls, &name, &desc))
		return vmk(V_UNK, 0, NULL);
	if (!strcmp(desc, CONFIG_OPTION)) {
		if (resolve_field(c, cls, name, &fd) || !fd || fd->opt < 0)
			return vmk(V_OPT, -1, NULL);
		return vmk(V_OPT, fd->opt, NULL);
	}
	if (!strcmp(cls, "java/lang/Boolean") &&
	    (!strcmp(name, "TRUE") || !strcmp(name, "FALSE")))
		return vmk(V_NUM, 0, !strcmp(name, "TRUE") ? "true" : "false");
	if (desc[0] == 'L' && !strncmp(desc + 1, cls, strlen(cls)) &&
	    !strcmp(desc + 1 + strlen(cls), ";"))
		return vmk(V_ENUMC, 0, name);
	return vmk(V_UNK, 0, NULL);
}

/* A method invocation: modelled calls, a nested options method, or an
 * unknown result with the descriptor's stack effect. */
static void invoke(struct frame *f, int op, unsigned idx)
{
	struct ctx *c = f->c;
	const char *cls, *name, *desc;
	struct val args[256], recv = vmk(V_UNK, 0, NULL);
	int nargs, ret, i, s;

	if (op == CLASSFILE_OP_INVOKEDYNAMIC) {
		const struct classfile_const *k = &f->cf->cp[idx];
		const char *d = utf8(c, f->cf, f->cf->cp[k->b].b);

		nargs = d ? desc_args(d, &ret) : -1;
		if (nargs < 0 || nargs > 255) {
			f->sp = 0;
			f->unknown = 1;
			return;
		}
		for (i = nargs - 1; i >= 0; i--)
			escape(c, pop(f));
		if (ret)
			push(f, vmk(V_UNK, 0, NULL));
		return;
	}
	if (member_ref(c, f->cf, idx, &cls, &name, &desc) ||
	    (nargs = desc_args(desc, &ret)) < 0 || nargs > 255) {
		f->sp = 0;
		f->unknown = 1;
		return;
	}
	for (i = nargs - 1; i >= 0; i--)
		args[i] = pop(f);
	if (op != CLASSFILE_OP_INVOKESTATIC)
		recv = pop(f);
	if (builder_call(f, cls, name, desc, args, nargs, recv))
		return;
	if (f->mode != M_CLINIT &&
	    coll_call(f, op, cls, name, args, nargs, recv, ret))
		return;
	/* An enum constant's constructor: keep its first extra String. */
	if (op == CLASSFILE_OP_INVOKESPECIAL && !strcmp(name, "<init>") &&
	    recv.k == V_NEW) {
		for (i = 2; i < nargs; i++)
			if (args[i].k == V_STR) {
				c->objs[recv.i].str = args[i].s;
				break;
			}
		return;
	}
	if (f->mode == M_SCAN &&
	    !strcmp(cls, FACTORY_UTIL "$TableFactoryHelper") &&
	    (!strcmp(name, "validate") || !strcmp(name, "validateExcept")))
		c->validates = 1;
	if (f->mode == M_SCAN && !strcmp(cls, FACTORY_UTIL) &&
	    !strcmp(name, "validateFactoryOptions"))
		c->validates_options = 1;
	if (f->mode == M_SCAN && !strcmp(name, "validateExcept") &&
	    !strcmp(cls, FACTORY_UTIL "$TableFactoryHelper")) {
		struct arr *a = nargs == 1 && args[0].k == V_ARR
					? &c->arrs[args[0].i]
					: NULL;

		for (i = 0; a && i < (int)a->n; i++) {
			if (a->v[i].k != V_STR) {
				a = NULL;
				break;
			}
		}
		if (!a)
			c->prefixes_unknown = 1;
		for (i = 0; a && i < (int)a->n; i++) {
			size_t j;

			for (j = 0; j < c->nprefixes; j++)
				if (!strcmp(c->prefixes[j], a->v[i].s))
					break;
			if (j == c->nprefixes &&
			    !GROW(c, c->prefixes, c->nprefixes, c->aprefixes))
				c->prefixes[c->nprefixes++] = a->v[i].s;
		}
	}
	/* super.optionalOptions(), or a helper of the JAR that returns a
	 * set of options from nothing but `this`. */
	if (f->mode == M_SET && nargs == 0 && ret &&
	    (!strcmp(strchr(desc, ')') + 1, "Ljava/util/Set;") ||
	     !strcmp(strchr(desc, ')') + 1, "Ljava/util/Collection;") ||
	     !strcmp(strchr(desc, ')') + 1, "Ljava/util/List;"))) {
		if (read_set(c, cls, name, desc, &s) || s < 0)
			push(f, vmk(V_UNK, 0, NULL));
		else
			push(f, vmk(V_SET, s, NULL));
		return;
	}
	escape(c, recv);
	for (i = 0; i < nargs; i++)
		escape(c, args[i]);
	if (ret)
		push(f, vmk(V_UNK, 0, NULL));
}

/* Run method m of cf in frame f (mode, self set by the caller). */
static void run(struct frame *f, const struct classfile_member *m)
{
	struct ctx *c = f->c;
	const struct classfile *cf = f->cf;
	struct classfile_insn in;
	uint32_t pc = 0;
	struct val a, b, v;
	int r;

	while (!c->rc && !(f->mode == M_SET && f->unknown) &&
	       (r = classfile_insn_next(cf, m, &pc, &in, NULL)) == 1) {
		const uint8_t *code = m->code + in.pc;
		int op = in.op;

		if (op == 0x00 || op == 0x84 || op == CLASSFILE_OP_CHECKCAST)
			continue;
		if (op == 0x01) {
			push(f, vmk(V_NULL, 0, NULL));
		} else if (op >= 0x02 && op <= 0x08) {
			push(f, vmk(V_NUM, 0, keepf(c, "%d", op - 0x03)));
		} else if (op >= 0x09 && op <= 0x0f) {
			static const char *const k[] = {"0", "1", "0", "1",
							"2", "0", "1"};

			push(f, vmk(V_NUM, 0, k[op - 0x09]));
		} else if (op == 0x10 || op == 0x11) {
			int n = op == 0x10 ? (int8_t)code[1]
					   : (int16_t)(code[1] << 8 | code[2]);

			push(f, vmk(V_NUM, 0, keepf(c, "%d", n)));
		} else if (op >= CLASSFILE_OP_LDC &&
			   op <= CLASSFILE_OP_LDC2_W) {
			const struct classfile_const *k = &cf->cp[in.index];
			char *s = NULL;

			if (k->tag == CLASSFILE_STRING)
				v = vmk(V_STR, 0, utf8(c, cf, k->a));
			else if (k->tag == CLASSFILE_CLASS &&
				 !classfile_class_name(&s, cf, in.index, NULL))
				v = vmk(V_CLASS, 0, keep(c, s));
			else if (k->tag >= CLASSFILE_INTEGER &&
				 k->tag <= CLASSFILE_DOUBLE)
				v = vmk(V_NUM, 0, num_const(c, k));
			else
				v = vmk(V_UNK, 0, NULL);
			if (!v.s)
				v.k = V_UNK;
			push(f, v);
		} else if (op >= 0x15 && op <= 0x2d) {
			push(f, in.local < MAX_LOCALS ? f->loc[in.local]
						      : vmk(V_UNK, 0, NULL));
		} else if (op >= 0x2e && op <= 0x35) {
			pop(f);
			pop(f);
			push(f, vmk(V_UNK, 0, NULL));
		} else if (op >= 0x36 && op <= 0x4e) {
			v = pop(f);
			if (in.local < MAX_LOCALS)
				f->loc[in.local] = v;
		} else if (op >= 0x4f && op <= 0x56) {
			v = pop(f);
			b = pop(f);
			a = pop(f);
			if (a.k == V_ARR && b.k == V_NUM &&
			    strtoul(b.s, NULL, 10) < c->arrs[a.i].n)
				c->arrs[a.i].v[strtoul(b.s, NULL, 10)] = v;
			else
				escape(c, v);
		} else if (op == 0x57) {
			pop(f);
		} else if (op == 0x59) {
			v = pop(f);
			push(f, v);
			push(f, v);
		} else if (op == 0x58 || (op >= 0x5a && op <= 0x5f)) {
			/* pop2, dup_x*, dup2*, swap: their effect depends on
			 * the values' categories, which are not modelled. */
			f->sp = 0;
			f->unknown = 1;
		} else if ((op >= 0x60 && op <= 0x73) ||
			   (op >= 0x78 && op <= 0x83) ||
			   (op >= 0x94 && op <= 0x98)) {
			pop(f);
			pop(f);
			push(f, vmk(V_UNK, 0, NULL));
		} else if (op >= 0x74 && op <= 0x77) {
			pop(f);
			push(f, vmk(V_UNK, 0, NULL));
		} else if (op >= 0x85 && op <= 0x93) {
			/* A conversion keeps a constant's text (i2l of 5). */
			v = pop(f);
			push(f, v.k == V_NUM ? v : vmk(V_UNK, 0, NULL));
		} else if ((op >= 0x99 && op <= 0xab) ||
			   (op >= 0xc6 && op <= 0xc9) || op == 0xbf) {
			/* Control flow: not followed. */
			f->sp = 0;
			f->unknown = 1;
			if (f->mode == M_SET)
				break;
		} else if (op >= 0xac && op <= 0xb1) {
			if (op == 0xb0 && f->mode == M_SET)
				f->ret = pop(f);
			break;
		} else if (op == CLASSFILE_OP_GETSTATIC) {
			push(f, get_static(f, in.index));
		} else if (op == CLASSFILE_OP_PUTSTATIC) {
			v = pop(f);
			if (f->mode == M_CLINIT)
				put_static(f, in.index, v);
			else
				escape(c, v);
		} else if (op == CLASSFILE_OP_GETFIELD) {
			pop(f);
			push(f, vmk(V_UNK, 0, NULL));
		} else if (op == CLASSFILE_OP_PUTFIELD) {
			escape(c, pop(f));
			pop(f);
		} else if (op >= CLASSFILE_OP_INVOKEVIRTUAL &&
			   op <= CLASSFILE_OP_INVOKEDYNAMIC) {
			invoke(f, op, in.index);
		} else if (op == CLASSFILE_OP_NEW) {
			char *s = NULL;
			const char *cls = NULL;

			if (!classfile_class_name(&s, cf, in.index, NULL))
				cls = keep(c, s);
			if (cls && is_coll(cls)) {
				int i = new_set(c);

				push(f, i < 0 ? vmk(V_UNK, 0, NULL)
					      : vmk(V_SET, i, NULL));
			} else if (cls &&
				   !GROW(c, c->objs, c->nobjs, c->aobjs)) {
				c->objs[c->nobjs].cls = cls;
				c->objs[c->nobjs].str = NULL;
				push(f, vmk(V_NEW, (int)c->nobjs++, NULL));
			} else {
				push(f, vmk(V_UNK, 0, NULL));
			}
		} else if (op == CLASSFILE_OP_ANEWARRAY) {
			unsigned long n;

			v = pop(f);
			n = v.k == V_NUM ? strtoul(v.s, NULL, 10) : MAX_ARRAY;
			if (n < MAX_ARRAY &&
			    !GROW(c, c->arrs, c->narrs, c->aarrs)) {
				struct arr *ar = &c->arrs[c->narrs];

				ar->n = n;
				ar->v = calloc(n ? n : 1, sizeof(*ar->v));
				if (!ar->v) {
					c->rc = -ENOMEM;
					break;
				}
				push(f, vmk(V_ARR, (int)c->narrs++, NULL));
			} else {
				push(f, vmk(V_UNK, 0, NULL));
			}
		} else if (op == 0xbc || op == 0xbe || op == 0xc1) {
			pop(f);
			push(f, vmk(V_UNK, 0, NULL));
		} else if (op == 0xc2 || op == 0xc3) {
			pop(f);
		} else if (op == CLASSFILE_OP_MULTIANEWARRAY) {
			int d = code[3];

			while (d-- > 0)
				pop(f);
			push(f, vmk(V_UNK, 0, NULL));
		} else {
			f->sp = 0;
			f->unknown = 1;
		}
	}
	if (r < 0)
		f->unknown = 1;
}

/* A frame for cf (allocated: it is large). */
static struct frame *frame_new(struct ctx *c, const struct classfile *cf,
			       const char *self, enum mode mode)
{
	struct frame *f = calloc(1, sizeof(*f));

	if (!f) {
		c->rc = -ENOMEM;
		return NULL;
	}
	f->c = c;
	f->cf = cf;
	f->self = self;
	f->mode = mode;
	return f;
}

/* The JAR's class `cls`, or NULL (external, or an error in c->rc). */
static const struct classfile *class_of(struct ctx *c, const char *cls)
{
	const struct classfile *cf = NULL;
	int rc = c->lookup(c->lctx, cls, &cf);

	if (rc) {
		c->rc = c->rc ? c->rc : rc;
		return NULL;
	}
	return cf;
}

/* Read cls's static initializer once, for its fields. */
static void init_class(struct ctx *c, const char *cls)
{
	const struct classfile *cf;
	const struct classfile_member *m;
	struct frame *f;
	size_t i;

	for (i = 0; i < c->ninited; i++)
		if (!strcmp(c->inited[i], cls))
			return;
	if (GROW(c, c->inited, c->ninited, c->ainited))
		return;
	c->inited[c->ninited++] = cls;
	cf = class_of(c, cls);
	if (!cf || !(m = classfile_method(cf, "<clinit>", "()V")) ||
	    c->depth >= MAX_DEPTH)
		return;
	f = frame_new(c, cf, cls, M_CLINIT);
	if (!f)
		return;
	c->depth++;
	run(f, m);
	c->depth--;
	free(f);
}

/* The superclass and interfaces of cf, as internal names (arena). */
static size_t supers(struct ctx *c, const struct classfile *cf,
		     const char **out, size_t cap)
{
	size_t n = 0, i;
	char *s = NULL;

	if (cf->super_class &&
	    !classfile_class_name(&s, cf, cf->super_class, NULL))
		out[n++] = keep(c, s);
	for (i = 0; i < cf->ninterfaces && n < cap; i++)
		if (!classfile_class_name(&s, cf, cf->interfaces[i], NULL))
			out[n++] = keep(c, s);
	return n;
}

/*
 * The field cls.name of type ConfigOption or an enum: 0 and *out (NULL
 * when unresolved), looking through cls's static initializer, its
 * supertypes (a constant inherited from an interface), and the table of
 * Flink's own options.
 */
static int resolve_field(struct ctx *c, const char *cls, const char *name,
			 struct field **out)
{
	const struct classfile *cf;
	const char *sup[64];
	size_t i, n;

	*out = NULL;
	for (i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].cls, cls) &&
		    !strcmp(c->fields[i].name, name)) {
			*out = &c->fields[i];
			return 0;
		}
	for (i = 0; i < sizeof(known_options) / sizeof(known_options[0]); i++) {
		const struct known *k = &known_options[i];
		struct opt *o;
		int oi;

		if (strcmp(k->owner, cls) || strcmp(k->field, name))
			continue;
		oi = new_opt(c, k->key);
		if (oi < 0 || GROW(c, c->fields, c->nfields, c->afields))
			return c->rc;
		o = &c->pool[oi];
		o->type = k->type;
		o->values = k->values;
		o->defv = k->defval ? vmk(V_STR, 0, k->defval)
				    : vmk(V_UNK, 0, NULL);
		c->fields[c->nfields] = (struct field){cls, name, oi, NULL};
		*out = &c->fields[c->nfields++];
		return 0;
	}
	if (c->depth >= MAX_DEPTH)
		return 0;
	for (i = 0; i < c->ninited; i++)
		if (!strcmp(c->inited[i], cls))
			break;
	if (i == c->ninited) {
		init_class(c, cls);
		if (c->rc)
			return c->rc;
		return resolve_field(c, cls, name, out);
	}
	/* Read already and not there: a supertype's constant? */
	cf = class_of(c, cls);
	if (!cf || classfile_field(cf, name, CONFIG_OPTION))
		return c->rc;
	n = supers(c, cf, sup, 64);
	c->depth++;
	for (i = 0; i < n && !*out && !c->rc; i++)
		if (sup[i])
			resolve_field(c, sup[i], name, out);
	c->depth--;
	return c->rc;
}

/*
 * The set that method name+desc returns, looked up from class cls up
 * its superclasses in the JAR: 0 and *set (ctx.sets index; -1 when the
 * method lives outside the JAR or is abstract there: unknown).
 */
static int read_set(struct ctx *c, const char *cls, const char *name,
		    const char *desc, int *set)
{
	const struct classfile *cf;
	const struct classfile_member *m = NULL;
	struct frame *f;
	char *s = NULL;
	int hops;

	*set = -1;
	for (hops = 0; hops < 64 && cls; hops++) {
		cf = class_of(c, cls);
		if (!cf)
			return c->rc;
		m = classfile_method(cf, name, desc);
		if (m)
			break;
		if (!cf->super_class ||
		    classfile_class_name(&s, cf, cf->super_class, NULL))
			return 0;
		cls = keep(c, s);
	}
	if (!m || !m->code || c->depth >= MAX_DEPTH)
		return c->rc;
	f = frame_new(c, cf, cls, M_SET);
	if (!f)
		return c->rc;
	c->depth++;
	run(f, m);
	c->depth--;
	if (!f->unknown && f->ret.k == V_SET)
		*set = f->ret.i;
	else if (f->ret.k == V_SET)
		c->sets[f->ret.i].unknown = 1, *set = f->ret.i;
	free(f);
	return c->rc;
}

/* Scan cls's methods (and its JAR superclasses') for validateExcept. */
static void scan_prefixes(struct ctx *c, const char *cls)
{
	const struct classfile *cf;
	struct frame *f = frame_new(c, NULL, cls, M_SCAN);
	char *s = NULL;
	int hops;
	unsigned i;

	for (hops = 0; f && hops < 64 && cls && !c->rc; hops++) {
		cf = class_of(c, cls);
		if (!cf)
			break;
		for (i = 0; i < cf->nmethods && !c->rc; i++) {
			if (!cf->methods[i].code)
				continue;
			/* One frame for every method, cleared for each: a
			 * frame is large, and a class has many methods. */
			memset(f, 0, sizeof(*f));
			f->c = c;
			f->cf = cf;
			f->self = cls;
			f->mode = M_SCAN;
			run(f, &cf->methods[i]);
		}
		if (!cf->super_class ||
		    classfile_class_name(&s, cf, cf->super_class, NULL))
			break;
		cls = keep(c, s);
	}
	free(f);
}

/* ---- enum values ----------------------------------------------------- */

/* 1 if method m is `aload_0; getfield; areturn`. */
static int returns_field(const struct classfile_member *m)
{
	return m && m->code && m->code_len == 5 && m->code[0] == 0x2a &&
	       m->code[1] == CLASSFILE_OP_GETFIELD && m->code[4] == 0xb0;
}

/* E's constants as toString() shows them, comma-separated, or NULL. */
static const char *enum_values(struct ctx *c, const char *cls)
{
	const struct classfile *cf;
	const struct classfile_member *ts;
	struct field *fd;
	size_t i, len = 0;
	unsigned k;
	char *out;
	int by_ctor;

	for (i = 0; i < sizeof(known_enums) / sizeof(known_enums[0]); i++)
		if (!strcmp(known_enums[i].cls, cls))
			return known_enums[i].values;
	cf = class_of(c, cls);
	if (!cf || !(cf->access & ACC_ENUM))
		return NULL;
	ts = classfile_method(cf, "toString", "()Ljava/lang/String;");
	if (ts && !returns_field(ts))
		return NULL;
	by_ctor = ts != NULL;
	init_class(c, cls);
	for (k = 0; k < cf->nfields; k++)
		len += cf->cp[cf->fields[k].name].len + 64;
	out = calloc(1, len + 1);
	if (!out) {
		c->rc = -ENOMEM;
		return NULL;
	}
	for (k = 0; k < cf->nfields; k++) {
		const char *name, *v;

		if (!(cf->fields[k].access & ACC_ENUM))
			continue;
		name = utf8(c, cf, cf->fields[k].name);
		if (!name)
			break;
		v = name;
		if (by_ctor) {
			fd = NULL;
			for (i = 0; i < c->nfields; i++)
				if (!strcmp(c->fields[i].cls, cls) &&
				    !strcmp(c->fields[i].name, name))
					fd = &c->fields[i];
			if (!fd || !fd->str ||
			    strlen(out) + strlen(fd->str) + 2 > len) {
				free(out);
				return NULL;
			}
			v = fd->str;
		}
		if (strlen(out) + strlen(v) + 2 > len) {
			free(out);
			return NULL;
		}
		if (*out)
			strcat(out, ",");
		strcat(out, v);
	}
	return keep(c, out);
}

/* The enum constant `name` of cls as toString shows it: the string its
 * constructor stored, or for Flink's enums the name in lower case with
 * dashes (AT_LEAST_ONCE: at-least-once), else the name. */
static const char *enum_text(struct ctx *c, const char *cls, const char *name)
{
	size_t i;
	char *s, *p;

	for (i = 0; i < sizeof(known_enums) / sizeof(known_enums[0]); i++)
		if (!strcmp(known_enums[i].cls, cls)) {
			s = strdup(name);
			for (p = s; p && *p; p++)
				*p = *p == '_' ? '-'
				     : (*p >= 'A' && *p <= 'Z')
					     ? (char)(*p + 32)
					     : *p;
			return keep(c, s);
		}

	for (i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].cls, cls) &&
		    !strcmp(c->fields[i].name, name) && c->fields[i].str)
			return c->fields[i].str;
	return name;
}

/* ---- the result ------------------------------------------------------ */

static int emit(struct ctx *c, struct options_set *out, int si, int required,
		int forward)
{
	size_t i, j;

	for (i = 0; si >= 0 && i < c->sets[si].n; i++) {
		struct opt *o = &c->pool[c->sets[si].v[i]];
		struct options_option r;
		int rc;

		if (!o->key)
			continue;
		for (j = 0; j < out->n; j++)
			if (!strcmp(out->v[j].key, o->key))
				break;
		if (j < out->n) {
			if (forward)
				out->v[j].forward = 1;
			continue;
		}
		if (forward) /* forwardOptions() names declared ones only */
			continue;
		memset(&r, 0, sizeof(r));
		r.key = (char *)o->key;
		r.type = (char *)o->type;
		r.list = o->list;
		if (o->enum_cls && !o->values)
			o->values = enum_values(c, o->enum_cls);
		r.values = (char *)o->values;
		if (o->defv.k == V_ENUMC && o->enum_cls)
			r.defval = (char *)enum_text(c, o->enum_cls, o->defv.s);
		else
			r.defval = (char *)render_default(c, o->defv);
		r.deprecated = (char *)o->deprecated;
		r.fallback = (char *)o->fallback;
		r.required = required;
		if (c->rc)
			return c->rc;
		rc = options_set_add(out, &r);
		if (rc)
			return rc;
	}
	return 0;
}

static void ctx_release(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->nstrs; i++)
		free(c->strs[i]);
	free(c->strs);
	free(c->pool);
	for (i = 0; i < c->nsets; i++)
		free(c->sets[i].v);
	free(c->sets);
	for (i = 0; i < c->narrs; i++)
		free(c->arrs[i].v);
	free(c->arrs);
	free(c->objs);
	free(c->fields);
	free(c->inited);
	free(c->prefixes);
}

int options_read(struct options_set *out, const char *factory,
		 reach_lookup_fn lookup, void *lctx, struct cmfs_err *err)
{
	static const char *const desc = "()Ljava/util/Set;";
	struct ctx c;
	int req, opt, fwd, rc;
	size_t i, len = 0;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.lookup = lookup;
	c.lctx = lctx;
	read_set(&c, factory, "requiredOptions", desc, &req);
	read_set(&c, factory, "optionalOptions", desc, &opt);
	read_set(&c, factory, "forwardOptions", desc, &fwd);
	scan_prefixes(&c, factory);
	rc = c.rc;
	if (!rc && (req < 0 || c.sets[req].unknown))
		out->unknown |= OPTIONS_UNKNOWN_REQUIRED;
	if (!rc && (opt < 0 || c.sets[opt].unknown))
		out->unknown |= OPTIONS_UNKNOWN_OPTIONAL;
	if (!rc && c.prefixes_unknown)
		out->unknown |= OPTIONS_UNKNOWN_PREFIXES;
	/* Without the helper's validate(), Flink consumes every key;
	 * without any check, it refuses nothing. */
	if (!rc && !c.validates)
		out->unknown |= c.validates_options ? OPTIONS_UNKNOWN_PREFIXES
						    : OPTIONS_UNVALIDATED;
	/* An option whose key the bytecode does not show: unknown. */
	for (i = 0; !rc && req >= 0 && i < c.sets[req].n; i++)
		if (!c.pool[c.sets[req].v[i]].key)
			out->unknown |= OPTIONS_UNKNOWN_REQUIRED;
	for (i = 0; !rc && opt >= 0 && i < c.sets[opt].n; i++)
		if (!c.pool[c.sets[opt].v[i]].key)
			out->unknown |= OPTIONS_UNKNOWN_OPTIONAL;
	if (!rc)
		rc = emit(&c, out, req, 1, 0);
	if (!rc)
		rc = emit(&c, out, opt, 0, 0);
	if (!rc)
		rc = emit(&c, out, fwd, 0, 1);
	for (i = 0; !rc && i < c.nprefixes; i++)
		len += strlen(c.prefixes[i]) + 1;
	if (!rc && len) {
		out->prefixes = calloc(1, len);
		if (!out->prefixes)
			rc = -ENOMEM;
		for (i = 0; !rc && i < c.nprefixes; i++) {
			if (i)
				strcat(out->prefixes, ",");
			strcat(out->prefixes, c.prefixes[i]);
		}
	}
	ctx_release(&c);
	if (rc) {
		options_set_release(out);
		return cmfs_err_set(err, rc, "%s: options: %s", factory,
				    strerror(-rc));
	}
	options_set_sort(out);
	return 0;
}
