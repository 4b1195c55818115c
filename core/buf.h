/*
 * buf.h - a growable byte buffer with a size cap (after curl's dynbuf).
 *
 * The contents are always NUL-terminated, so text can be used as a C string
 * while it is built.  Growing past `cap` fails with -EFBIG and leaves the
 * buffer as it was; running out of memory fails with -ENOMEM.  A buffer is
 * embedded in its owner: BUF_INIT(cap) or buf_init(), then buf_release().
 */
#ifndef CMFS_BUF_H
#define CMFS_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;	/* NULL until the first append */
	size_t len;	/* bytes used, not counting the NUL */
	size_t alloc;	/* bytes allocated */
	size_t cap;	/* largest len allowed */
};

#define BUF_INIT(c) { NULL, 0, 0, (c) }

/* An empty buffer that may grow to `cap` bytes; it allocates nothing. */
void buf_init(struct buf *b, size_t cap);

/* Free the contents; the buffer is empty and usable again. */
void buf_release(struct buf *b);

/* Empty the buffer but keep its memory. */
void buf_reset(struct buf *b);

/* Append bytes, a C string, one byte, or printf-style text. 0 or -errno. */
int buf_add(struct buf *b, const void *data, size_t len);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * Append jansson's text of `json` (a json_t, dumped with json_dump_flags
 * `flags`).  0, or -EFBIG/-ENOMEM as the appends give; -EINVAL when
 * jansson refuses the value; on failure the buffer is left as it was.
 */
struct json_t;
int buf_add_json(struct buf *b, const struct json_t *json, size_t flags);

/*
 * Hand the contents to the caller, who frees them with free(); the buffer
 * is left empty.  Never NULL: an empty buffer gives a fresh "" (or NULL
 * when even that cannot be allocated).  `*len` gets the length if non-NULL.
 */
char *buf_take(struct buf *b, size_t *len);

/* The contents as a C string; "" when empty.  Valid until the next change. */
const char *buf_str(const struct buf *b);

/*
 * A growable array of items of `size` bytes each: VEC_INIT(sizeof(T)),
 * vec_push() copies an item in, vec_release() frees them all.
 */
struct vec {
	void *v;	/* the items, n of them */
	size_t n;
	size_t a;	/* items allocated */
	size_t size;	/* bytes of one item */
};

#define VEC_INIT(sz) { NULL, 0, 0, (sz) }

/* Append a copy of `item`.  0 or -ENOMEM. */
int vec_push(struct vec *l, const void *item);
void vec_release(struct vec *l);

#endif
