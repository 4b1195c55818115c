/*
 * fuzz_classfile.c - libFuzzer target: any bytes, parsed as a class file;
 * when they parse, every accessor the inspector uses is run over every
 * constant and member, and every method body is decoded (each step must
 * move forward and stay inside the code), with its handlers, bootstrap
 * methods and descriptors, and the class is walked by reach.c as a JAR
 * of one factory (small caps: every input must end quickly).  The same
 * bytes are parsed again into one struct kept from input to input
 * (classfile_reparse, as the inspector's readers do): the verdict and the
 * names must be the same.  Seeds: tests/fuzz/corpus/classfile/.
 */
#include "classfile.h"
#include "reach.h"

#include <stdlib.h>
#include <string.h>

/* Parsed into again and again, across inputs. */
static struct classfile kept;

/* classfile_refs of both the same (or both failing). */
static void same_refs(const struct classfile *a, const struct classfile *b)
{
	char **x = NULL, **y = NULL;
	size_t nx = 0, ny = 0, i;
	int rx = classfile_refs(&x, &nx, a, NULL);
	int ry = classfile_refs(&y, &ny, b, NULL);

	if (rx != ry || nx != ny)
		abort();
	for (i = 0; !rx && i < nx; i++)
		if (strcmp(x[i], y[i]))
			abort();
	classfile_names_free(x);
	classfile_names_free(y);
}

/* Decode every method as reach does; abort on a step that goes astray. */
static void decode_all(const struct classfile *cf)
{
	const char *v[8];
	size_t n[8], count;
	unsigned i, k;

	for (i = 0; i < cf->nmethods; i++) {
		const struct classfile_member *m = &cf->methods[i];
		struct classfile_insn in;
		uint32_t pc = 0, steps = 0;
		uint16_t t, h, na;
		char *d = NULL;

		while (classfile_insn_next(cf, m, &pc, &in, NULL) == 1) {
			if (pc <= in.pc || pc > m->code_len ||
			    ++steps > m->code_len)
				abort();
			if (in.op == CLASSFILE_OP_INVOKEDYNAMIC &&
			    classfile_bootstrap(cf, cf->cp[in.index].a, &h,
						&na, NULL) == 0)
				for (k = 0; k < na; k++)
					if (!classfile_bootstrap_arg(
						    cf, cf->cp[in.index].a, k))
						abort();
		}
		for (k = 0; k < m->nexc; k++)
			(void)classfile_handler(cf, m, k, &t, NULL);
		if (classfile_utf8(&d, cf, m->desc, NULL) == 0) {
			(void)classfile_desc_classes(d, v, n, 8, &count);
			free(d);
		}
	}
}

/* reach_lookup_fn of a JAR holding only `ctx`. */
static int only(void *ctx, const char *iname, const struct classfile **out)
{
	const struct classfile *cf = ctx;
	char *name = NULL;

	*out = NULL;
	if (classfile_class_name(&name, cf, cf->this_class, NULL) == 0 &&
	    !strcmp(name, iname))
		*out = cf;
	free(name);
	return 0;
}

/* Walk the class as the factory of a JAR of one class. */
static void reach_one(const struct classfile *cf)
{
	struct reach_limits lim = {2000, 5000};
	struct reach_result r;
	char *name = NULL;
	const char *f;
	size_t i;

	if (classfile_class_name(&name, cf, cf->this_class, NULL))
		return;
	f = name;
	if (reach_run(&r, &f, 1, NULL, 0, only, (void *)cf, &lim, NULL) == 0) {
		for (i = 0; i < r.ncompile; i++)
			if (!r.compile[i] || (i && strcmp(r.compile[i - 1],
							   r.compile[i]) >= 0))
				abort();
		reach_result_release(&r);
	}
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct classfile *cf = NULL;
	char **refs = NULL, *s = NULL;
	size_t n;
	unsigned i, idx;

	int again = classfile_reparse(&kept, data, size, NULL);

	if (classfile_parse(&cf, data, size, NULL)) {
		if (!again)
			abort();
		return 0;
	}
	if (again)
		abort();
	same_refs(cf, &kept);
	if (classfile_refs(&refs, &n, cf, NULL) == 0)
		classfile_names_free(refs);
	for (i = 0; i < cf->ncp; i++) {
		if (classfile_utf8(&s, cf, i, NULL) == 0)
			free(s);
		if (classfile_class_name(&s, cf, i, NULL) == 0)
			free(s);
		if (classfile_string(&s, cf, i, NULL) == 0)
			free(s);
	}
	for (i = 0; i < cf->nmethods; i++)
		if (classfile_const_return(cf, &cf->methods[i], &idx) ==
			    CLASSFILE_RET_STRING &&
		    classfile_string(&s, cf, idx, NULL) == 0)
			free(s);
	for (i = 0; i < cf->nfields; i++)
		if (cf->fields[i].constant &&
		    classfile_string(&s, cf, cf->fields[i].constant, NULL) == 0)
			free(s);
	decode_all(cf);
	reach_one(cf);
	classfile_method(cf, "factoryIdentifier", "()Ljava/lang/String;");
	classfile_field(cf, "IDENTIFIER", "Ljava/lang/String;");
	classfile_free(cf);
	return 0;
}
