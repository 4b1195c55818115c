/*
 * fuzz_classfile.c - libFuzzer target: any bytes, parsed as a class file;
 * when they parse, every accessor the inspector uses is run over every
 * constant and member.  The same bytes are parsed again into one struct
 * kept from input to input (classfile_reparse, as the inspector's readers
 * do): the verdict and the names must be the same.  Seeds:
 * tests/fuzz/corpus/classfile/.
 */
#include "classfile.h"

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
	classfile_method(cf, "factoryIdentifier", "()Ljava/lang/String;");
	classfile_field(cf, "IDENTIFIER", "Ljava/lang/String;");
	classfile_free(cf);
	return 0;
}
