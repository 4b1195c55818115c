/*
 * test_events.c - unit tests of the audit trail's logfmt lines
 * (core/events.h): the fixed head (time, uid, env, action), quoting and
 * escaping of values, result=ok versus result=refused with the errno name
 * and the reason, the line cap, and events_errno_name().
 */
#include "t.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "name.h"

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

	/* No environment: env=-, which no environment is named. */
	event_init(&e, INT64_C(999999999), 4294967295u, NULL, "mount");
	line = event_finish(&e, 0, NULL);
	T_STREQ(line, "time=1970-01-01T00:00:00.999Z uid=4294967295 "
		      "env=- action=mount result=ok\n");
	T_ERRNO(name_env_check(EVENTS_NO_ENV, NULL), EINVAL);
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
	T_STREQ(l, T0 " env=- action=x k=plain-value_1.2 result=ok\n");
	one_value(l, sizeof(l), "");
	T_STREQ(l, T0 " env=- action=x k=\"\" result=ok\n");
	one_value(l, sizeof(l), "a b");
	T_STREQ(l, T0 " env=- action=x k=\"a b\" result=ok\n");
	one_value(l, sizeof(l), "x=y");
	T_STREQ(l, T0 " env=- action=x k=\"x=y\" result=ok\n");
	one_value(l, sizeof(l), "say \"hi\"");
	T_STREQ(l, T0 " env=- action=x k=\"say \\\"hi\\\"\" result=ok\n");
	one_value(l, sizeof(l), "a\\b");
	T_STREQ(l, T0 " env=- action=x k=\"a\\\\b\" result=ok\n");
	one_value(l, sizeof(l), "\"");
	T_STREQ(l, T0 " env=- action=x k=\"\\\"\" result=ok\n");
	one_value(l, sizeof(l), "line1\nline2");
	T_STREQ(l, T0 " env=- action=x k=\"line1\\nline2\" result=ok\n");
	one_value(l, sizeof(l), "a\tb");
	T_STREQ(l, T0 " env=- action=x k=\"a\\tb\" result=ok\n");
	one_value(l, sizeof(l), "a\rb");
	T_STREQ(l, T0 " env=- action=x k=\"a\\x0db\" result=ok\n");
	one_value(l, sizeof(l), "\x01\x1b\x7f");
	T_STREQ(l, T0 " env=- action=x k=\"\\x01\\x1b\\x7f\" result=ok\n");
	/* Bytes >= 0x80 (UTF-8) are kept as they are, unquoted. */
	one_value(l, sizeof(l), "caf\xc3\xa9");
	T_STREQ(l, T0 " env=- action=x k=caf\xc3\xa9 result=ok\n");
	/* A hostile value cannot forge a second key or line. */
	one_value(l, sizeof(l), "x result=ok\ntime=0");
	T_STREQ(l, T0 " env=- action=x k=\"x result=ok\\ntime=0\" result=ok\n");
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
	T_STREQ(line, T0 " env=- action=label result=refused errno=ENOPKG "
		      "reason=none\n");
	event_release(&e);
	event_init(&e, 0, 0, NULL, "label");
	line = event_finish(&e, -EPERM, "class \"a.B\" refused");
	T_STREQ(line, T0 " env=- action=label result=refused errno=EPERM "
		      "reason=\"class \\\"a.B\\\" refused\"\n");
	event_release(&e);

	/* An errno without a name. */
	event_init(&e, 0, 0, NULL, "x");
	line = event_finish(&e, -4000, "odd");
	T_STREQ(line, T0 " env=- action=x result=refused errno=E4000 reason=odd\n");
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

/* Bytes that are not printable UTF-8 are escaped, each as \xNN. */
static void test_utf8(void)
{
	char l[512];

	/* A stray continuation byte, a lone lead byte, an overlong '/'. */
	one_value(l, sizeof(l), "a\x80" "b");
	T_STREQ(l, T0 " env=- action=x k=\"a\\x80b\" result=ok\n");
	one_value(l, sizeof(l), "\xc3");
	T_STREQ(l, T0 " env=- action=x k=\"\\xc3\" result=ok\n");
	one_value(l, sizeof(l), "\xc0\xaf");
	T_STREQ(l, T0 " env=- action=x k=\"\\xc0\\xaf\" result=ok\n");
	/* Latin-1 bytes of a name written by an old tool. */
	one_value(l, sizeof(l), "caf\xe9.jar");
	T_STREQ(l, T0 " env=- action=x k=\"caf\\xe9.jar\" result=ok\n");
	/* A surrogate (U+D800) and a code point past U+10FFFF. */
	one_value(l, sizeof(l), "\xed\xa0\x80");
	T_STREQ(l, T0 " env=- action=x k=\"\\xed\\xa0\\x80\" result=ok\n");
	one_value(l, sizeof(l), "\xf4\x90\x80\x80");
	T_STREQ(l, T0 " env=- action=x k=\"\\xf4\\x90\\x80\\x80\" result=ok\n");
	/* A C1 control (U+0085, NEL), a line separator (U+2028) and a
	 * right-to-left override (U+202E): valid, but they change how the
	 * line reads. */
	one_value(l, sizeof(l), "a\xc2\x85");
	T_STREQ(l, T0 " env=- action=x k=\"a\\xc2\\x85\" result=ok\n");
	one_value(l, sizeof(l), "a\xe2\x80\xa8");
	T_STREQ(l, T0 " env=- action=x k=\"a\\xe2\\x80\\xa8\" result=ok\n");
	one_value(l, sizeof(l), "gpj.\xe2\x80\xae" "exe");
	T_STREQ(l, T0 " env=- action=x k=\"gpj.\\xe2\\x80\\xaeexe\" result=ok\n");
	/* Valid characters stay as they are, even beside escaped ones. */
	one_value(l, sizeof(l), "\xe2\x82\xac \xff");
	T_STREQ(l, T0 " env=- action=x k=\"\xe2\x82\xac \\xff\" result=ok\n");
	one_value(l, sizeof(l), "\xf0\x9f\x98\x80");
	T_STREQ(l, T0 " env=- action=x k=\xf0\x9f\x98\x80 result=ok\n");
	/* A sequence cut by the end of the value. */
	one_value(l, sizeof(l), "x\xe2\x82");
	T_STREQ(l, T0 " env=- action=x k=\"x\\xe2\\x82\" result=ok\n");
}

/* A second finish replaces the result: one line, one result. */
static void test_refinish(void)
{
	struct event e;
	const char *line;
	size_t n;
	const char *k;

	event_init(&e, 0, 5, "prod", "upload");
	event_add(&e, "artifact", "x.jar");
	line = event_finish(&e, 0, NULL);
	T_STREQ(line, "time=1970-01-01T00:00:00.000Z uid=5 env=prod "
		      "action=upload artifact=x.jar result=ok\n");
	line = event_finish(&e, -ENOSPC, "disk full");
	T_STREQ(line, "time=1970-01-01T00:00:00.000Z uid=5 env=prod "
		      "action=upload artifact=x.jar result=refused "
		      "errno=ENOSPC reason=\"disk full\"\n");
	k = event_key(&e, &n);
	T_INTEQ(n, strlen("uid=5 env=prod action=upload artifact=x.jar"));
	T_CHECK(!memcmp(k, "uid=5 env=prod action=upload artifact=x.jar", n));
	event_release(&e);
}

/* ---- the gate ---- */

#define S INT64_C(1000000000)

/* What the gate emitted, one line after another. */
static char emitted[1 << 16];
static int nemitted;

static void emit(void *arg, const char *env, const char *line, int rc)
{
	size_t n = strlen(emitted);

	(void)arg;
	(void)rc;
	snprintf(emitted + n, sizeof(emitted) - n, "[%s] %s",
		 env ? env : "-", line);
	nemitted++;
}

static void reset_emitted(void)
{
	emitted[0] = '\0';
	nemitted = 0;
}

/* Pass a refusal of `uid` on `obj` through `g` at `t`; 1: write it. */
static int refuse(struct events_gate *g, int64_t t, uint32_t uid,
		  const char *env, const char *obj, int rc, int *armed)
{
	struct event e;
	int w;

	event_init(&e, t, uid, env, "read");
	event_add(&e, "object", obj);
	event_finish(&e, rc, "not allowed");
	w = events_gate_pass(g, t, uid, env, &e, rc, "not allowed", emit,
			     NULL, armed);
	event_release(&e);
	return w;
}

static const struct events_gate_conf conf = {
	10 * S, 1.0, 30.0, 1000.0, 1000.0, 16
};

static void test_coalesce(void)
{
	struct events_gate *g = events_gate_new(&conf);
	int armed = 0, i, written = 0;

	reset_emitted();
	T_CHECK(g != NULL);
	/* The first is written, 4,211 repeats in the window are not. */
	T_INTEQ(refuse(g, 100 * S, 1000, "prod", "events", -EACCES, &armed),
		1);
	T_INTEQ(armed, 0);
	for (i = 1; i <= 4211; i++)
		written += refuse(g, 100 * S + i * (S / 500), 1000, "prod",
				  "events", -EACCES, &armed);
	T_INTEQ(written, 0);
	T_INTEQ(armed, 1);
	T_INTEQ(nemitted, 0);
	T_INTEQ(events_gate_due(g), 110 * S);
	/* Nothing before the window closes; then one line with the count. */
	events_gate_tick(g, 109 * S, 0, emit, NULL);
	T_INTEQ(nemitted, 0);
	events_gate_tick(g, 110 * S, 0, emit, NULL);
	T_INTEQ(nemitted, 1);
	T_STREQ(emitted, "[prod] time=1970-01-01T00:01:50.000Z uid=1000 "
			 "env=prod action=read object=events repeated=4211 "
			 "in=9s result=refused errno=EACCES "
			 "reason=\"not allowed\"\n");
	T_INTEQ(events_gate_due(g), 0);
	/* The next one starts a new run: written. */
	T_INTEQ(refuse(g, 111 * S, 1000, "prod", "events", -EACCES, &armed),
		1);

	/* Interleaved refusals keep their runs apart (a kernel looks a
	 * name up again between two opens of a loop). */
	reset_emitted();
	T_INTEQ(refuse(g, 112 * S, 1000, "prod", "events", -EACCES, &armed),
		0);
	T_INTEQ(refuse(g, 113 * S, 1000, "prod", "other", -EACCES, &armed),
		1);
	T_INTEQ(refuse(g, 113 * S, 1000, "prod", "events", -EACCES, &armed),
		0);
	T_INTEQ(refuse(g, 113 * S, 1000, "prod", "other", -EACCES, &armed),
		0);
	T_INTEQ(nemitted, 0);
	/* A fifth kind while four runs are open: the oldest one ends. */
	T_INTEQ(refuse(g, 113 * S, 1000, "prod", "o3", -EACCES, &armed), 1);
	T_INTEQ(refuse(g, 113 * S, 1000, "prod", "o4", -EACCES, &armed), 1);
	T_INTEQ(nemitted, 0);
	T_INTEQ(refuse(g, 113 * S, 1000, "prod", "o5", -EACCES, &armed), 1);
	T_INTEQ(nemitted, 1);
	T_CONTAINS(emitted, "object=events repeated=2 in=2s result=refused");
	/* Another reason is another refusal: it says something new. */
	{
		struct event e;

		event_init(&e, 113 * S, 1000, "prod", "read");
		event_add(&e, "object", "other");
		event_finish(&e, -EACCES, "other words");
		T_INTEQ(events_gate_pass(g, 113 * S, 1000, "prod", &e,
					 -EACCES, "other words", emit, NULL,
					 &armed), 1);
		event_release(&e);
	}
	/* Another errno, uid or environment is another refusal. */
	T_INTEQ(refuse(g, 113 * S, 1000, "prod", "other", -EPERM, &armed), 1);
	T_INTEQ(refuse(g, 113 * S, 1001, "prod", "other", -EPERM, &armed), 1);
	T_INTEQ(refuse(g, 113 * S, 1001, "dev", "other", -EPERM, &armed), 1);
	T_INTEQ(refuse(g, 113 * S, 1001, NULL, "other", -EPERM, &armed), 1);
	T_INTEQ(refuse(g, 114 * S, 1001, NULL, "other", -EPERM, &armed), 0);
	/* At unmount, every count is written. */
	reset_emitted();
	events_gate_tick(g, 115 * S, 1, emit, NULL);
	T_INTEQ(nemitted, 2);
	T_CONTAINS(emitted, "[prod] time=1970-01-01T00:01:55.000Z uid=1000 "
			    "env=prod action=read object=other repeated=1");
	T_CONTAINS(emitted, "[-] time=1970-01-01T00:01:55.000Z uid=1001 "
			    "env=- action=read object=other repeated=1");
	events_gate_free(g);
	events_gate_free(NULL);
}

static void test_rate_limit(void)
{
	struct events_gate *g = events_gate_new(&conf);
	int armed = 0, i, written = 0;
	char obj[32];

	reset_emitted();
	/* 100 different refusals in a second: the burst of 30 written. */
	for (i = 0; i < 100; i++) {
		snprintf(obj, sizeof(obj), "o%d", i);
		written += refuse(g, 200 * S + i * (S / 100), 7, "prod", obj,
				  -EACCES, &armed);
	}
	T_INTEQ(written, 30);
	T_INTEQ(armed, 1);
	T_INTEQ(nemitted, 0); /* runs of one: nothing to add */
	T_INTEQ(events_gate_due(g), 200 * S + 30 * (S / 100) + 10 * S);
	/* A window later: one line counts the 70, with a token of the
	 * refill (1 a second). */
	events_gate_tick(g, 211 * S, 0, emit, NULL);
	T_INTEQ(nemitted, 1);
	T_CONTAINS(emitted, "uid=7 env=prod action=rate-limit "
			    "object=refusals suppressed=70 in=1s "
			    "result=refused errno=EACCES");
	T_CONTAINS(emitted, "70 refusals of uid 7 were counted");
	/* Another uid has a bucket of its own. */
	T_INTEQ(refuse(g, 211 * S, 8, "prod", "o1", -EACCES, &armed), 1);

	/* Sustained: one line a second at most, plus the counts. */
	reset_emitted();
	written = 0;
	for (i = 0; i < 6000; i++) {
		int64_t t = 300 * S + (int64_t)i * (S / 100);

		snprintf(obj, sizeof(obj), "p%d", i % 2);
		written += refuse(g, t, 9, "prod", obj, -EACCES, &armed);
		if (i % 100 == 0)
			events_gate_tick(g, t, 0, emit, NULL);
	}
	events_gate_tick(g, 400 * S, 1, emit, NULL);
	/* 60 s: the burst of 30 and 60 refilled, the rest counted. */
	T_CHECK(written + nemitted <= 30 + 60 + 60 / 10 + 2);
	{
		/* Every refusal is accounted for: written, or counted. */
		unsigned long long sum = (unsigned long long)written;
		const char *p = emitted;

		while ((p = strstr(p, "suppressed=")) != NULL)
			sum += strtoull(p += 11, NULL, 10);
		p = emitted;
		while ((p = strstr(p, "repeated=")) != NULL)
			sum += strtoull(p += 9, NULL, 10);
		T_INTEQ(sum, 6000);
	}
	events_gate_free(g);
}

/* Pairs past max_whos: the oldest goes, its counts to "others". */
static void test_many_uids(void)
{
	struct events_gate_conf c = conf;
	struct events_gate *g;
	int armed = 0, i, written = 0;

	c.all_rate = 10;
	c.all_burst = 20;
	g = events_gate_new(&c);
	reset_emitted();
	for (i = 0; i < 1000; i++)
		written += refuse(g, 500 * S + i * (S / 1000),
				  (uint32_t)(100000 + i), "prod", "events",
				  -EACCES, &armed);
	/* All uids together: the burst of 20 and what a second refills. */
	T_CHECK(written >= 20 && written <= 31);
	T_CHECK(events_gate_whos(g) <= 16);
	events_gate_tick(g, 520 * S, 0, emit, NULL);
	T_CONTAINS(emitted, "action=rate-limit object=refusals suppressed=");
	T_CONTAINS(emitted, " uids=");
	{
		unsigned long long sum = (unsigned long long)written;
		const char *p = emitted;

		events_gate_tick(g, 530 * S, 1, emit, NULL);
		while ((p = strstr(p, "suppressed=")) != NULL)
			sum += strtoull(p += 11, NULL, 10);
		T_INTEQ(sum, 1000);
	}
	/* Pairs with nothing pending are forgotten. */
	events_gate_tick(g, 600 * S, 0, emit, NULL);
	T_INTEQ(events_gate_whos(g), 0);
	events_gate_free(g);
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
	T_RUN(test_utf8);
	T_RUN(test_refinish);
	T_RUN(test_coalesce);
	T_RUN(test_rate_limit);
	T_RUN(test_many_uids);
	return T_DONE();
}
