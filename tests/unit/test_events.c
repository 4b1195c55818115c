/*
 * test_events.c - unit tests of the audit trail's logfmt lines
 * (core/events.h): the fixed head (time, uid, env, action), quoting and
 * escaping of values, result=ok versus result=refused with the errno name
 * and the reason, the line cap, and events_errno_name().
 */
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "events.h"

#define T0 "time=1970-01-01T00:00:00.000Z uid=0"

/* The line of an event with one key `k` = `v`, finished ok, into `out`. */
static void one_value(char *out, size_t n, const char *v)
{
	struct event e;
	const char *line;

	event_init(&e, 0, 0, NULL, "x");
	event_add(&e, "k", v);
	line = event_finish(&e, 0, NULL);
	snprintf(out, n, "%s", line ? line : "(null)");
	event_release(&e);
}

static void test_head(void)
{
	struct event e;
	const char *line;

	event_init(&e, 0, 0, "prod", "upload");
	line = event_finish(&e, 0, NULL);
	T_STREQ(line, T0 " env=prod action=upload result=ok\n");
	event_release(&e);

	/* 2009-02-13T23:31:30 UTC and 123 ms; the ns below a ms dropped. */
	event_init(&e, INT64_C(1234567890123456789), 1000, "dev", "mkdir");
	line = event_finish(&e, 0, NULL);
	T_STREQ(line, "time=2009-02-13T23:31:30.123Z uid=1000 env=dev "
		      "action=mkdir result=ok\n");
	event_release(&e);

	/* No environment: no env key. */
	event_init(&e, INT64_C(999999999), 4294967295u, NULL, "mount");
	line = event_finish(&e, 0, NULL);
	T_STREQ(line, "time=1970-01-01T00:00:00.999Z uid=4294967295 "
		      "action=mount result=ok\n");
	event_release(&e);
}

static void test_fields(void)
{
	struct event e;
	const char *line;

	event_init(&e, 0, 0, "prod", "upload");
	event_add(&e, "artifact", "x.jar");
	event_addf(&e, "version", "%d", 3);
	event_addf(&e, "size", "%llu", 123456789012ULL);
	event_add(&e, "sha256", "e3b0c442");
	line = event_finish(&e, 0, "ignored when ok");
	T_STREQ(line, T0 " env=prod action=upload artifact=x.jar version=3 "
		      "size=123456789012 sha256=e3b0c442 result=ok\n");
	/* Exactly one newline, at the end. */
	T_CHECK(line && strchr(line, '\n') == line + strlen(line) - 1);
	event_release(&e);
}

static void test_quoting(void)
{
	char l[512];

	one_value(l, sizeof(l), "plain-value_1.2");
	T_STREQ(l, T0 " action=x k=plain-value_1.2 result=ok\n");
	one_value(l, sizeof(l), "");
	T_STREQ(l, T0 " action=x k=\"\" result=ok\n");
	one_value(l, sizeof(l), "a b");
	T_STREQ(l, T0 " action=x k=\"a b\" result=ok\n");
	one_value(l, sizeof(l), "x=y");
	T_STREQ(l, T0 " action=x k=\"x=y\" result=ok\n");
	one_value(l, sizeof(l), "say \"hi\"");
	T_STREQ(l, T0 " action=x k=\"say \\\"hi\\\"\" result=ok\n");
	one_value(l, sizeof(l), "a\\b");
	T_STREQ(l, T0 " action=x k=\"a\\\\b\" result=ok\n");
	one_value(l, sizeof(l), "\"");
	T_STREQ(l, T0 " action=x k=\"\\\"\" result=ok\n");
	one_value(l, sizeof(l), "line1\nline2");
	T_STREQ(l, T0 " action=x k=\"line1\\nline2\" result=ok\n");
	one_value(l, sizeof(l), "a\tb");
	T_STREQ(l, T0 " action=x k=\"a\\tb\" result=ok\n");
	one_value(l, sizeof(l), "a\rb");
	T_STREQ(l, T0 " action=x k=\"a\\x0db\" result=ok\n");
	one_value(l, sizeof(l), "\x01\x1b\x7f");
	T_STREQ(l, T0 " action=x k=\"\\x01\\x1b\\x7f\" result=ok\n");
	/* Bytes >= 0x80 (UTF-8) are kept as they are, unquoted. */
	one_value(l, sizeof(l), "caf\xc3\xa9");
	T_STREQ(l, T0 " action=x k=caf\xc3\xa9 result=ok\n");
	/* A hostile value cannot forge a second key or line. */
	one_value(l, sizeof(l), "x result=ok\ntime=0");
	T_STREQ(l, T0 " action=x k=\"x result=ok\\ntime=0\" result=ok\n");
	/* The head's values are quoted the same way. */
	{
		struct event e;
		const char *line;

		event_init(&e, 0, 7, "a b", "do it");
		line = event_finish(&e, 0, NULL);
		T_STREQ(line, "time=1970-01-01T00:00:00.000Z uid=7 "
			      "env=\"a b\" action=\"do it\" result=ok\n");
		event_release(&e);
	}
}

static void test_refused(void)
{
	struct event e;
	const char *line;

	event_init(&e, 0, 0, "prod", "upload");
	event_add(&e, "artifact", "x.jar");
	line = event_finish(&e, -EINVAL, "x.jar is not a valid JAR");
	T_STREQ(line, T0 " env=prod action=upload artifact=x.jar "
		      "result=refused errno=EINVAL "
		      "reason=\"x.jar is not a valid JAR\"\n");
	event_release(&e);

	/* No reason: strerror. */
	event_init(&e, 0, 0, "prod", "rmdir");
	line = event_finish(&e, -ENOTEMPTY, NULL);
	T_CONTAINS(line, " result=refused errno=ENOTEMPTY reason=\"");
	T_CONTAINS(line, strerror(ENOTEMPTY));
	event_release(&e);
	event_init(&e, 0, 0, "prod", "rmdir");
	line = event_finish(&e, -EDQUOT, "");
	T_CONTAINS(line, "errno=EDQUOT reason=\"");
	T_CONTAINS(line, strerror(EDQUOT));
	event_release(&e);

	/* A one-word reason needs no quotes; quotes inside are escaped. */
	event_init(&e, 0, 0, NULL, "label");
	line = event_finish(&e, -ENOPKG, "none");
	T_STREQ(line, T0 " action=label result=refused errno=ENOPKG "
		      "reason=none\n");
	event_release(&e);
	event_init(&e, 0, 0, NULL, "label");
	line = event_finish(&e, -EPERM, "class \"a.B\" refused");
	T_STREQ(line, T0 " action=label result=refused errno=EPERM "
		      "reason=\"class \\\"a.B\\\" refused\"\n");
	event_release(&e);

	/* An errno without a name. */
	event_init(&e, 0, 0, NULL, "x");
	line = event_finish(&e, -4000, "odd");
	T_STREQ(line, T0 " action=x result=refused errno=E4000 reason=odd\n");
	event_release(&e);
}

static void test_cap(void)
{
	static char big[20000];
	struct event e;

	memset(big, 'v', sizeof(big) - 1);
	event_init(&e, 0, 0, "prod", "upload");
	event_add(&e, "k", big);
	T_CHECK(e.failed);
	T_CHECK(event_finish(&e, 0, NULL) == NULL);
	event_release(&e);

	/* Quoted, escaped growth hits the cap too. */
	memset(big, '\n', 9000);
	big[9000] = '\0';
	event_init(&e, 0, 0, "prod", "upload");
	event_add(&e, "k", big);
	T_CHECK(event_finish(&e, 0, NULL) == NULL);
	event_release(&e);

	/* event_addf cuts a long value at its own buffer, and succeeds. */
	memset(big, 'w', 1000);
	big[1000] = '\0';
	event_init(&e, 0, 0, NULL, "x");
	event_addf(&e, "k", "%s", big);
	T_CHECK(!e.failed);
	{
		const char *line = event_finish(&e, 0, NULL);
		const char *v = line ? strstr(line, " k=") : NULL;

		T_CHECK(v != NULL);
		T_INTEQ(v ? strcspn(v + 3, " ") : 0, 511);
	}
	event_release(&e);
}

static void test_errno_name(void)
{
	T_STREQ(events_errno_name(EINVAL), "EINVAL");
	T_STREQ(events_errno_name(EROFS), "EROFS");
	T_STREQ(events_errno_name(EOPNOTSUPP), "EOPNOTSUPP");
	T_STREQ(events_errno_name(ENOPKG), "ENOPKG");
	T_STREQ(events_errno_name(ENOTUNIQ), "ENOTUNIQ");
	T_STREQ(events_errno_name(ENOEXEC), "ENOEXEC");
	T_STREQ(events_errno_name(EPERM), "EPERM");
	T_STREQ(events_errno_name(EACCES), "EACCES");
	T_STREQ(events_errno_name(EFBIG), "EFBIG");
	T_STREQ(events_errno_name(EDQUOT), "EDQUOT");
	T_STREQ(events_errno_name(ENOENT), "ENOENT");
	T_STREQ(events_errno_name(EEXIST), "EEXIST");
	T_STREQ(events_errno_name(ENOTEMPTY), "ENOTEMPTY");
	T_STREQ(events_errno_name(ENODATA), "ENODATA");
	T_STREQ(events_errno_name(ENOSPC), "ENOSPC");
	T_STREQ(events_errno_name(EIO), "EIO");
	T_STREQ(events_errno_name(ENOMEM), "ENOMEM");
	T_STREQ(events_errno_name(EPROTO), "EPROTO");
	T_STREQ(events_errno_name(ENAMETOOLONG), "ENAMETOOLONG");
	T_STREQ(events_errno_name(9999), "E9999");
	T_STREQ(events_errno_name(0), "E0");
	T_STREQ(events_errno_name(-5), "E-5");
}

int main(void)
{
	T_RUN(test_head);
	T_RUN(test_fields);
	T_RUN(test_quoting);
	T_RUN(test_refused);
	T_RUN(test_cap);
	T_RUN(test_errno_name);
	return T_DONE();
}
