/*
 * jar_int.h - what the files of the JAR inspector share and nobody else
 * sees (jar.h is the module's contract; jar.c says which file holds what).
 *
 * One inspection is one struct insp, used by one thread.  Functions that
 * find the JAR unusable record why in the report (jar_fail) and return
 * STOP; -errno is for a broken archive, memory and I/O.  The only state
 * shared between inspections is the hash seed (hash.c).
 */
#ifndef CMFS_JAR_INT_H
#define CMFS_JAR_INT_H

#include <stddef.h>
#include <stdint.h>
#include <zip.h>

#include "err.h"
#include "hash.h"
#include "jar.h"

struct classfile;
struct libdeflate_decompressor;
struct insp;

/* Returned by helpers once the report holds its error: stop, return 0. */
#define STOP 1

/* Supertype walks recurse: a depth limit above this counts as this. */
#define DEPTH_CEILING 1024

/* Kind bits: what a class's supertypes make it. */
enum { BIT_CONNECTOR = 1, BIT_FORMAT = 2 };

/* ---- jar_archive.c: the archive's bytes and entries ----------------- */

/* Where the archive's bytes come from: an fd (pread) or memory. */
struct input {
	int fd; /* -1: read from mem */
	const uint8_t *mem;
	uint64_t size;
	uint64_t pos;	   /* the zip source's position */
	zip_error_t error; /* the zip source's last error */
	uint8_t *win;	   /* fd: the read-ahead window, or NULL */
	uint64_t win_off;  /* file offset of win[0] */
	size_t win_len;	   /* bytes valid in win */
	uint8_t *own;	   /* what jar_input_release() frees */
};

/*
 * An input over regular file `fd` (read with pread from offset 0; not
 * closed), or over the whole file read at once when it is small.  0, or
 * -EIO / -EINVAL (not a regular file) with err set.  Release with
 * jar_input_release().
 */
int jar_input_fd(struct input *src, int fd, struct cmfs_err *err);

/* An input over `len` bytes at `data` (borrowed). */
void jar_input_mem(struct input *src, const void *data, size_t len);

/* Frees what the input owns (not its fd); it may be released again. */
void jar_input_release(struct input *src);

/*
 * Open in->src with libzip, which judges it (ZIP_CHECKCONS), refuse a
 * prefixed archive, duplicate names and too many entries, and map every
 * entry name (jar_name_add for base classes, in->entries for the rest).
 * 0, STOP (a cap), -EINVAL (not a valid zip archive: in->err says why),
 * -ENOMEM or -EIO.
 */
int jar_open_archive(struct insp *in);

/*
 * Inflate entry `idx` (named `name`, for messages), at most `cap` bytes,
 * into *out (malloc'd, *len bytes), counted against lim.max_inflated.
 * 0, STOP or -errno.
 */
int jar_read_entry(struct insp *in, zip_uint64_t idx, const char *name,
		   uint64_t cap, uint8_t **out, size_t *len);

/* Let go of the archive, its entry map and the inflater. */
void jar_archive_close(struct insp *in);

/* ---- the state of one inspection ----------------------------------- */

enum { WALK_NEW, WALK_ACTIVE, WALK_DONE };

/* A class of the JAR that the inspection has read. */
struct jclass {
	const char *name; /* internal name, "a/b/C", UTF-8 (its record's) */
	uint8_t *bytes;	  /* the class file; cf borrows it (both NULL once
			   * its names are taken) */
	struct classfile *cf;
	char *super;   /* superclass's internal name, NULL = none */
	char **ifaces; /* superinterfaces, NULL-terminated */
	unsigned walk; /* WALK_*: the kind walk's colour */
	unsigned bits; /* BIT_*, of all its supertypes */
	unsigned mark; /* == insp.gen: seen by the current walk */
	int reached;   /* queued by the reachability walk */
	char **refs;   /* queued: the classes it names (jar_reach) */
	size_t nrefs;
	char *refs_err; /* or why they could not be taken */
};

/*
 * A class name the walk has met, and all it knows of it: the JAR's class
 * read under it, or that it is external, or where the JAR holds it.  One
 * table of these rather than one per question: a wide JAR's walk looks
 * up each name several times.
 */
#define NO_ENTRY UINT64_MAX

struct name {
	struct jclass *jc;  /* read (jar_load_class) */
	zip_uint64_t entry; /* "<key>.class" (map_entries), or NO_ENTRY */
	uint8_t external;   /* not the JAR's: in insp.ext[] */
	char key[];	    /* '\0'-terminated */
};

/* struct names, carved from blocks that live as long as the walk. */
struct name_pool {
	struct name_pool *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

struct insp {
	zip_t *za;
	struct input *src;
	struct jar_limits lim;
	struct cmfs_err *err;
	struct jar_report *rep;
	struct hash entries;	/* raw entry name -> index */
	struct hash names;	/* internal name -> struct name * */
	struct name_pool *pool; /* where the struct names live */
	struct jclass **cls;	/* every class read, in reading order */
	size_t ncls, acls;
	struct jclass **queue; /* the reachability walk's queue */
	size_t nqueue, aqueue;
	char **ext; /* external classes, internal names */
	size_t next, aext;
	char **compile; /* those compiling loads (jar_reach_compile):
			 * sorted internal names, one block */
	size_t ncompile;
	uint64_t inflated;		    /* bytes inflated so far */
	struct libdeflate_decompressor *dd; /* NULL until needed */
	uint8_t *zbuf; /* a deflated entry's bytes (deflated) */
	size_t zcap;
	unsigned gen;	    /* walk generation, for jclass.mark */
	unsigned max_depth; /* lim.max_depth, at most DEPTH_CEILING */
};

/* ---- jar.c --------------------------------------------------------- */

/*
 * Record why the JAR is unusable (the first reason wins), with control
 * characters masked so it stays one line.  Returns STOP, or -ENOMEM.
 */
int jar_fail(struct insp *in, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- jar_service.c ------------------------------------------------- */

/* The service file's class names: 0 and *names (jar_names_free), STOP
 * or -errno. */
int jar_read_service(struct insp *in, char ***names, size_t *n);

/* ---- jar_walk.c: names, classes, walks ----------------------------- */

/* Copy `src` into dst[cap] with `from` replaced by `to`, truncating. */
void jar_name_copy(char *dst, size_t cap, const char *src, char from, char to);

/* A malloc'd copy of `src` with `from` replaced by `to`, or NULL. */
char *jar_name_dup(const char *src, char from, char to);

/*
 * Room for one more element in array `v` of n elements of `size` bytes
 * (*alloc allocated): the array, moved perhaps, or NULL when out of
 * memory (then `v` is still valid).
 */
void *jar_grow_array(void *v, size_t n, size_t *alloc, size_t size);

/* The record of name `k` (n bytes), or NULL: none met yet. */
struct name *jar_name_get(const struct insp *in, const char *k, size_t n);

/* The record of name `k` (n bytes), made if new; NULL: out of memory. */
struct name *jar_name_add(struct insp *in, const char *k, size_t n);

/* Let go of every record (the classes read are freed apart). */
void jar_names_release(struct insp *in);

/* Free all a class holds (the class itself is the pool's); NULL is ok. */
void jar_jclass_clear(struct jclass *jc);

/*
 * The JAR's class `iname` (internal name), read and parsed on first use:
 * 0 and *out (the inspection owns it), or 0 and *out = NULL when the JAR
 * does not hold it; STOP when it is damaged or a cap is hit; -errno.
 */
int jar_load_class(struct insp *in, const char *iname, struct jclass **out);

/*
 * Walk jc's supertypes depth-first for its kind bits (jc->bits); a cyclic
 * hierarchy or one deeper than max_depth is reported.  Once this returns
 * 0 for a class, its supertype graph is acyclic and shallow.  0, STOP or
 * -errno.
 */
int jar_walk_kind(struct insp *in, struct jclass *jc, unsigned depth);

/* Queue class jc for the reach, once.  0 or -ENOMEM. */
int jar_enqueue(struct insp *in, struct jclass *jc);

/* Breadth-first from the queued classes: each class named by a reached
 * class is the JAR's (read and queued) or external (recorded).  0, STOP
 * or -errno. */
int jar_reach(struct insp *in);

/*
 * The method-level reach from the report's factories (reach.h), over the
 * classes the JAR holds: the external classes compiling a statement
 * loads go to in->compile.  Runs before jar_reach, while the classes it
 * reads still hold their class files.  0, STOP (bad bytecode, a cap: the
 * report says so) or -errno.
 */
int jar_reach_compile(struct insp *in);

/*
 * Each factory's declared options (options.h), read over the JAR's
 * classes while they still hold their class files (before jar_reach).
 * 0 or -errno.
 */
int jar_read_options(struct insp *in);

/* Hand the external classes to the report, dotted and sorted: those of
 * in->compile as the compile-time set, the rest as the run-time set.
 * 0 or -ENOMEM. */
int jar_report_external(struct insp *in);

/* ---- jar_ident.c --------------------------------------------------- */

/*
 * What factory class fc's factoryIdentifier() returns: 0 and *out, a
 * malloc'd constant, or NULL when it is not a constant the bytecode
 * shows; STOP or -errno.  fc's hierarchy was walked (jar_walk_kind).
 */
int jar_factory_identifier(struct insp *in, struct jclass *fc, char **out);

#endif
