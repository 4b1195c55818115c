/*
 * shortlist.c - a list of names for a message, shortened to fit.
 */
#include "shortlist.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int shortlist_add(struct shortlist *l, const char *fmt, ...)
{
	struct buf item = BUF_INIT(l->text.cap);
	va_list ap;
	int rc;

	l->n++;
	/* Once one item did not fit, later ones are counted only, so the
	 * list shows the first items in their order. */
	if (l->shown + 1 < l->n)
		return 0;
	va_start(ap, fmt);
	rc = buf_vprintf(&item, fmt, ap);
	va_end(ap);
	if (!rc && (!l->shown ||
		    l->text.len + 2 + item.len <= l->budget)) {
		rc = buf_printf(&l->text, "%s%s", l->shown ? ", " : "",
				buf_str(&item));
		if (!rc)
			l->shown++;
	}
	buf_release(&item);
	return rc == -EFBIG ? 0 : rc;
}

const char *shortlist_str(struct shortlist *l, const char *none)
{
	if (!l->n)
		return none;
	if (!l->ended && l->shown < l->n)
		buf_printf(&l->text, " and %zu more", l->n - l->shown);
	l->ended = 1;
	return buf_str(&l->text);
}

void shortlist_release(struct shortlist *l)
{
	buf_release(&l->text);
}
