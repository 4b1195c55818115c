/*
 * export_int.h - what export.c (writing an export) and import.c (reading
 * one) share: the names and caps of the directory format in export.h.
 */
#ifndef CMFS_EXPORT_INT_H
#define CMFS_EXPORT_INT_H

#include "err.h"

/* The annotations of metadata that CMF has no field for. */
#define ANN_UID "cmfs/uid"
#define ANN_NEXT "cmfs/next-version"

#define EVENTS_MAX ((size_t)1 << 30) /* bytes of one events file */

/*
 * The name of the bytes file in a version directory: the artifact's name,
 * except for an artifact named artifact.json, whose bytes would take the
 * place of the metadata.
 */
const char *export_bytes_name(const char *name);

/* snprintf into a PATH_MAX buffer; -ENAMETOOLONG when it does not fit. */
int export_path(char *out, struct cmfs_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
