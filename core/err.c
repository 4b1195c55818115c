/*
 * err.c - the first-error-wins message slot that core/ reports through.
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cmfs_err_set(struct cmfs_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	char *p;
	size_t end;
	int n;

	if (!err || err->code)
		return code;
	err->code = code;
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(err->msg)) {
		/* Cut: back to the start of a UTF-8 character, then "...". */
		end = sizeof(err->msg) - 4;
		while (end && ((unsigned char)err->msg[end] & 0xc0) == 0x80)
			end--;
		memcpy(err->msg + end, "...", 4);
	}
	for (p = err->msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return code;
}

void cmfs_err_clear(struct cmfs_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

const char *cmfs_err_msg(const struct cmfs_err *err)
{
	if (!err)
		return "";
	if (err->msg[0])
		return err->msg;
	if (err->code)
		return strerror(-err->code);
	return "";
}
