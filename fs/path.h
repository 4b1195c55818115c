/*
 * path.h - the inode table of the mount: which object each inode number
 * stands for.
 *
 * A node is one name in the tree (DESIGN.md, "The tree"), classified by
 * its place: the kind says what it is, env/obj/ver which object.  The
 * inode number handed to the kernel is the node's address, as in libfuse's
 * passthrough_ll; the kernel's lookup count keeps the node alive until
 * `forget`.  Nodes are also found by (parent, name), so the same name
 * keeps the same inode while the kernel knows it.
 *
 * Thread safety: all functions take the table's lock; a node's fields are
 * stable while the caller holds a lookup reference, except name/kind/obj,
 * which change only in path_rename() (called under the kernel's rename
 * locks for that name).  A request that reads them unlocked while a
 * rename goes on (a GETATTR through the inode takes no rename lock) sees
 * the old strings or the new: the old stay allocated for a minute.  So
 * the four are atomic, and a new string is written before its pointer.
 */
#ifndef CMFS_FS_PATH_H
#define CMFS_FS_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

enum node_kind {
	N_ROOT,		/* / */
	N_ENVS,		/* /envs */
	N_ENV,		/* /envs/<env> */
	N_ARTS,		/* .../artifacts */
	N_ART,		/* .../artifacts/<name> */
	N_ASCRATCH,	/* .../artifacts/.<scratch> */
	N_VERS,		/* .../versions */
	N_VDIR,		/* .../versions/<name> */
	N_VER,		/* .../versions/<name>/<n><ext> */
	N_TABLES,	/* .../tables */
	N_TABLE,	/* .../tables/<t>.sql */
	N_TSCRATCH,	/* .../tables/<scratch> */
	N_RESOLVED,	/* .../tables/resolved */
	N_RJARS,	/* .../tables/resolved/<t>.jars */
	N_RSQL,		/* .../tables/resolved/<t>.sql */
	N_EVENTS,	/* .../events */
	N_INVALID
};

struct fh;

/*
 * N_RJARS: what the kernel may keep of a resolved file, so that an open
 * can leave its pages in the page cache (kcache.c, "Resolved files in the
 * page cache").  Table lock.
 */
struct node_cache {
	char *data;		/* the bytes its pages may hold, or NULL */
	size_t len;
	unsigned npaged;	/* open handles reading through the pages */
	unsigned ndirect;	/* open handles reading around them */
	uint8_t other;		/* pages not of `data` may be there */
	uint8_t sizes;		/* sizes told this epoch: none, one, many */
	uint64_t size;		/* the one */
	uint64_t epoch;		/* of c->told it is on (kcache.c) */
};

struct node {
	uint64_t nlookup;	/* the kernel's references */
	unsigned children;	/* nodes whose parent this is */
	_Atomic enum node_kind kind;	/* (atomic: see above) */
	struct node *parent;
	/*
	 * One allocation, key then "name\0obj\0env\0": a mount holds a
	 * node for each name the kernel knows, 100,000 artifacts and more,
	 * so a node keeps no fixed-size buffers.  The key of the inode
	 * table's index is the parent's address followed by the name.
	 */
	char *key;			/* table lock */
	char *_Atomic name;		/* (atomic: see above) */
	const char *_Atomic obj;	/* artifact, table or scratch name,
					 * or "" (atomic) */
	const char *_Atomic env;	/* every node below an environment,
					 * or "" (atomic) */
	int64_t ver;		/* N_VER: the version number */
	struct fh *writer;	/* newest open upload (table lock) */
	/*
	 * A file made by mknod (GNU tar --xattrs makes the file, sets its
	 * labels, then opens it): an upload with no bytes yet, that the
	 * first open for writing takes over.  Table lock.
	 */
	struct repo_upload *placeholder;
	/* N_VER (backing.c): the blob's backing id while the kernel reads
	 * it itself, and the open readers.  Table lock. */
	int32_t backing;
	uint32_t nreaders;
	struct node_cache *cache;	/* N_RJARS, once told; table lock */
	/*
	 * N_VER: the version this inode stands for, from its first look-up
	 * on: its attributes, user.cmfs.* and reads are that version's for
	 * as long as the kernel holds the inode (ops.c, "Identity").  NULL
	 * until then.  Table lock.
	 */
	struct catalog_version *pin;
	/*
	 * N_ART: the version its open readers read (the latest when they
	 * opened it), NULL before the first; and how many are open.  Table
	 * lock.
	 */
	struct catalog_version *read;
	uint32_t nopen;			/* open handles that read a blob */
	/*
	 * N_ART: its name names other bytes now, or none, and this node no
	 * more: taken out of the (parent, name) hash (path_detach()), so
	 * that the next look-up makes a new node, it stands for `read` for
	 * as long as the kernel holds it (ops.c, "Identity").  Table lock.
	 */
	uint8_t replaced;
	/*
	 * N_ART: new to the kernel when a create made it (nothing it holds
	 * for this name is older), and opened by nothing else since, so the
	 * kernel's cache of it is what that upload wrote: its commit leaves
	 * nothing to invalidate (file.c, commit).  Table lock.
	 */
	uint8_t solo;
	/* (The one-byte fields last: a node is 120 bytes, one 128-byte
	 * block of malloc's, and a mount holds one for each name the
	 * kernel knows.) */
};

/* What a name in directory kind `parent` is: N_INVALID when it cannot be
 * there.  `name` is not checked against the catalog. */
enum node_kind path_classify(enum node_kind parent, const char *name);

/*
 * The version number that `name` in versions/<a>/ (node `vdir`) names:
 * exactly "<n><ext>", n a decimal without leading zeros, ext the part of
 * <a> from its last '.' (DESIGN.md, "The tree"); 0 for any other name
 * ("1zzz", "1.bin.old" and "1.jar" of x.bin name nothing).
 */
int64_t path_version(const struct node *vdir, const char *name);

/* 1 for kinds that are directories. */
int path_is_dir(enum node_kind k);

/* The table; one per mount. */
struct paths;
int path_new(struct paths **out);
void path_free(struct paths *t);

/* The root node (inode 1), which lives as long as the table. */
struct node *path_root(struct paths *t);
/* The node of an inode number. */
struct node *path_node(struct paths *t, uint64_t ino);
uint64_t path_ino(const struct node *n);

/*
 * The node for `name` in `parent`, made if new, with its lookup count
 * raised by one.  NULL when out of memory or `name` cannot be there.
 */
struct node *path_lookup(struct paths *t, struct node *parent,
			  const char *name);
/* The node for `name` in `parent` if one exists; no reference taken. */
struct node *path_find(struct paths *t, struct node *parent,
			const char *name);
/* The same, with the table's lock held: `node` stays valid until it is
 * let go. */
struct node *path_find_locked(struct paths *t, struct node *parent,
			      const char *name);
/* Drop `n` references of the kernel's (forget). */
void path_forget(struct paths *t, struct node *node, uint64_t n);
/* Free `node` if nothing holds it any more (table lock held). */
void path_release(struct paths *t, struct node *node);
/*
 * Move `node` to `name` in `parent` (a rename in the tree), recomputing
 * its kind; a node already there is detached (path_detach()).
 */
int path_rename(struct paths *t, struct node *node, struct node *parent,
		const char *name);
/*
 * Take `node` from its name (table lock held): no look-up finds it again,
 * and the next of its name makes a new node; it is marked `replaced`, and
 * freed at the kernel's last forget.  Done already: nothing.
 */
void path_detach(struct paths *t, struct node *node);

/* Call fn(arg, node) for every node the kernel may know but the root,
 * with the table's lock held (fn must not take it). */
void path_walk(struct paths *t, void (*fn)(void *arg, struct node *n),
	       void *arg);

/* Lock and unlock the table (for reading or setting node->writer). */
void path_lock(struct paths *t);
void path_unlock(struct paths *t);

#endif
