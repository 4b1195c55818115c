/*
 * buf.c - capped growable buffer.  Every append goes through grow(), which
 * is the one place that enforces the cap and doubles the allocation.
 */
#include "buf.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b, b->cap);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* Make room for `extra` more bytes plus the NUL. */
static int grow(struct buf *b, size_t extra)
{
	size_t need, n;
	char *p;

	if (extra > b->cap || b->len > b->cap - extra)
		return -EFBIG;
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	n = b->alloc ? b->alloc : 64;
	while (n < need)
		n = n > (size_t)-1 / 2 ? need : n * 2;
	p = realloc(b->data, n);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->alloc = n;
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t len)
{
	int rc = grow(b, len);

	if (rc)
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, rc;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return -EINVAL;
	rc = grow(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

/* What a dump into a buf met: the first failed append's errno. */
struct json_sink {
	struct buf *b;
	int rc;
};

static int json_sink(const char *text, size_t len, void *arg)
{
	struct json_sink *s = arg;

	s->rc = buf_add(s->b, text, len);
	return s->rc ? -1 : 0;
}

int buf_add_json(struct buf *b, const struct json_t *json, size_t flags)
{
	struct json_sink s = {b, 0};
	size_t len = b->len;

	if (!json_dump_callback(json, json_sink, &s, flags))
		return 0;
	if (b->data) {
		b->len = len;
		b->data[len] = '\0';
	}
	return s.rc ? s.rc : -EINVAL;
}

char *buf_take(struct buf *b, size_t *len)
{
	char *p = b->data;

	if (len)
		*len = b->len;
	if (!p)
		p = calloc(1, 1);
	buf_init(b, b->cap);
	return p;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

int vec_push(struct vec *l, const void *item)
{
	if (l->n == l->a) {
		size_t a = l->a ? 2 * l->a : 16;
		void *v = realloc(l->v, a * l->size);

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->a = a;
	}
	memcpy((char *)l->v + l->n++ * l->size, item, l->size);
	return 0;
}

void vec_release(struct vec *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->a = 0;
}
