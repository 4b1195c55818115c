/*
 * fuzz_classfile.c - libFuzzer target: any bytes, parsed as a class file;
 * when they parse, every accessor the inspector uses is run over every
 * constant and member.  Seeds: tests/fuzz/corpus/classfile/.
 */
#include "classfile.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct classfile *cf = NULL;
	char **refs = NULL, *s = NULL;
	size_t n;
	unsigned i, idx;

	if (classfile_parse(&cf, data, size, NULL))
		return 0;
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
