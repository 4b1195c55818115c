/*
 * err.h - one-line error reports carried alongside a negative errno.
 *
 * Every fallible function in core/ returns 0 or a negative errno and takes,
 * as its last parameter, a `struct cmfs_err *` (which may be NULL).  The
 * first error set wins, so a low-level reason is not overwritten by the
 * generic words of a caller.  The message names the object and a reason a
 * person can act on; fs/ copies it into `events` and the daemon's log.
 */
#ifndef CMFS_ERR_H
#define CMFS_ERR_H

#include <stddef.h>

/*
 * Room for every message core/ writes whole: names are at most 255 bytes
 * and lists are shortened by their writers (shortlist.h), so no refusal
 * loses the advice at its end.  A message that would still not fit ends
 * in "..." where it is cut, never in the middle of a character.
 */
#define CMFS_ERR_MSG 2048

struct cmfs_err {
	int code;		/* negative errno, 0 while unset */
	char msg[CMFS_ERR_MSG];	/* NUL-terminated, one line */
};

#define CMFS_ERR_INIT { 0, { 0 } }

/*
 * Record `code` (a negative errno) and a printf-style message in `err`,
 * unless an error is already recorded there.  Returns `code`, so a caller
 * can write `return cmfs_err_set(err, -EINVAL, "...")`.  Newlines in the
 * message are replaced with spaces: an error is always a single line.
 * A message longer than the slot is cut as above.
 */
int cmfs_err_set(struct cmfs_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Forget a recorded error, so `err` can be used again. */
void cmfs_err_clear(struct cmfs_err *err);

/*
 * The text for `err`: its message when one was recorded, else
 * strerror(-code), else "".  Never NULL.
 */
const char *cmfs_err_msg(const struct cmfs_err *err);

#endif
