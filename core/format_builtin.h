/*
 * format_builtin.h - the options of the formats built into a Flink 1.20
 * cluster, which have no JAR in the store to read them from.
 *
 * A format factory's options are read from its bytecode (options.h) when
 * its JAR is an artifact.  The formats `[sql] builtin_formats` lists by
 * default (csv, json, raw, canal-json, debezium-json, maxwell-json,
 * ogg-json) ship in Flink's lib/, so cmfs keeps what their factories'
 * requiredOptions() and optionalOptions() return in 1.20, with each
 * option's type, values, default and forwardOptions() membership, as a
 * constant table (format_builtin.c names the sources).  options_check
 * takes a format's options from here when resolution found no JAR for it.
 *
 * Pure: constant data, no state; reentrant.
 */
#ifndef CMFS_FORMAT_BUILTIN_H
#define CMFS_FORMAT_BUILTIN_H

#include "options.h"

/*
 * The options Flink 1.20's built-in format `id` (its factory identifier,
 * compared exactly) declares, sorted by key as options_find needs; or
 * NULL when cmfs has no table for `id`.  The set is static and read-only:
 * never options_set_release() it, never write through it.
 */
const struct options_set *format_builtin_options(const char *id);

#endif
