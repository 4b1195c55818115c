/*
 * blob.h - a blob's bytes, wherever the store keeps them.
 *
 * A blob of at most BLOB_INLINE_LIMIT bytes may be inline: a row of the
 * catalog (catalog_inline_*) rather than a file of the store, which is
 * where every bigger blob, and every blob stored before inline blobs
 * existed, is kept (store_blob_*).  Readers ask here and get the bytes
 * either way.
 */
#ifndef CMFS_BLOB_H
#define CMFS_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "config.h"
#include "store.h"

/* The most [store] inline_max may be. */
#define BLOB_INLINE_LIMIT CONFIG_INLINE_LIMIT

/*
 * Blob `sha` of `size` bytes open for reading in *out: its file, or, for
 * an inline blob, a sealed memory file (memfd) holding its bytes, which
 * the kernel can read from as from the file.  0 or -errno (-ENOENT: in
 * neither place).
 */
int blob_open(struct store *s, struct catalog *c, const char *sha,
	      uint64_t size, int *out, struct cmfs_err *err);

/* Inline blob `sha` as a sealed memory file in *out; -ENOENT: no row. */
int blob_open_inline(struct catalog *c, const char *sha, int *out,
		     struct cmfs_err *err);

/*
 * 0 when blob `sha`, wherever it is, holds the bytes of that hash;
 * -EBADMSG when it holds others, -ENOENT when it is nowhere, or another
 * -errno when it cannot be read.
 */
int blob_intact(struct store *s, struct catalog *c, const char *sha);

/*
 * The `size` bytes of blob `sha` into buf (which holds `size`).  0 or
 * -errno (-EIO when the blob is not `size` bytes long).
 */
int blob_read(struct store *s, struct catalog *c, const char *sha,
	      uint64_t size, void *buf, struct cmfs_err *err);

/* A sealed memory file holding `len` bytes of `data`, in *out. */
int blob_memfd(const void *data, size_t len, int *out, struct cmfs_err *err);

#endif
