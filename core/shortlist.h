/*
 * shortlist.h - a list of names for a message, shortened to fit.
 *
 * A refusal that names what is wrong (classes outside the allowlist, the
 * artifacts that claim one identifier, the factories a JAR offers) may
 * have thousands of items, and a message is one line of bounded length
 * (err.h).  Items are joined with ", " while the text stays within the
 * list's budget; the rest are only counted, and shortlist_str() says
 * "and N more", so the words after the list are never cut away.
 */
#ifndef CMFS_SHORTLIST_H
#define CMFS_SHORTLIST_H

#include <stddef.h>

#include "buf.h"

struct shortlist {
	struct buf text;	/* the items shown, ", "-separated */
	size_t n;		/* items added */
	size_t shown;		/* of them in `text` */
	size_t budget;		/* bytes `text` may take */
	int ended;		/* "and N more" is appended */
};

#define SHORTLIST_INIT(budget) { BUF_INIT(4096), 0, 0, (budget), 0 }

/* Count an item, and show it while the budget allows.  0 or -ENOMEM. */
int shortlist_add(struct shortlist *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The text: "a, b, c", "a, b and 4 more" (at least one item is shown,
 * whatever its length), or `none` when nothing was added.  No item is
 * added after it.  Valid until shortlist_release().
 */
const char *shortlist_str(struct shortlist *l, const char *none);

/* Frees the text that shortlist_str() returned. */
void shortlist_release(struct shortlist *l);

#endif
