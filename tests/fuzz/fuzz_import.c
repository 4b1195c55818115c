/*
 * fuzz_import.c - libFuzzer target: any bytes, read as artifact.json by
 * import's reader (export_artifact_parse: the weighing, jansson, the
 * schema).  What it accepts, export writes back (export_artifact_json)
 * and the reader must take again as the same artifact; what it refuses
 * carries a message.  Seeds: tests/fuzz/corpus/import/.
 */
#include "export.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The two the same, field by field, labels in order. */
static int same(const struct export_artifact *a,
		const struct export_artifact *b)
{
	size_t i;

	if (strcmp(a->name, b->name) || a->version != b->version ||
	    a->next != b->next || a->uid != b->uid ||
	    a->nlabels != b->nlabels)
		return 0;
	if (a->version && (a->size != b->size || strcmp(a->sha256, b->sha256)))
		return 0;
	for (i = 0; i < a->nlabels; i++)
		if (strcmp(a->keys[i], b->keys[i]) ||
		    strcmp(a->values[i], b->values[i]))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cmfs_err err = CMFS_ERR_INIT;
	struct export_artifact a, b;
	struct buf out = BUF_INIT(1 << 24);
	int rc;

	rc = export_artifact_parse(&a, (const char *)data, size, &err);
	if (rc) {
		if ((rc != -EINVAL && rc != -EFBIG && rc != -ENOMEM) ||
		    !cmfs_err_msg(&err)[0])
			abort();
		return 0;
	}
	/* Written back whole: a time and the status as import fills them. */
	if (a.mtime < 0)
		a.mtime = 0;
	if (!a.version) {
		a.version = 1;
		memset(a.sha256, 'a', 64);
	}
	if (a.next && a.next <= a.version)
		a.next = a.version + 1;
	if (export_artifact_json(&out, &a))
		abort();
	if (export_artifact_parse(&b, out.data, out.len, &err)) {
		fprintf(stderr, "written back, refused: %s\n%s\n",
			cmfs_err_msg(&err), out.data);
		abort();
	}
	if (!same(&a, &b) || b.mtime != a.mtime)
		abort();
	export_artifact_release(&a);
	export_artifact_release(&b);
	buf_release(&out);
	return 0;
}
