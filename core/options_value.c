/*
 * options_value.c - an option's value against its declared type, by
 * Flink's rules (options_value_ok(), options_list_has(); options.h has
 * the contract).
 *
 * What Flink's ConfigurationUtils would take when a job starts: booleans
 * in any case, numbers in range, durations and memory sizes with their
 * units, an enum's values in any case, a char or a Java escape of one,
 * lists element by element.  Kept apart from options.c, which reads the
 * declarations from bytecode: this checks a table's values against them.
 */
#define _GNU_SOURCE /* strtok_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"
#include "utf8.h"

#define HEX "0123456789abcdefABCDEF"

/* An optional sign and one digit or more at p: the end, or NULL. */
static const char *signed_digits(const char *p)
{
	if (*p == '-' || *p == '+')
		p++;
	if (!(*p >= '0' && *p <= '9'))
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

/* A decimal number with an optional fraction and exponent; *end after. */
static int number(const char *s, const char **end, int integer)
{
	const char *p = signed_digits(s);

	if (!p)
		return 0;
	if (!integer && *p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (!integer && (*p == 'e' || *p == 'E')) {
		p = signed_digits(p + 1);
		if (!p)
			return 0;
	}
	*end = p;
	return 1;
}

int options_list_has(const char *list, const char *s, size_t n, int nocase)
{
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n &&
		    !(nocase ? strncasecmp(p, s, n) : strncmp(p, s, n)))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* Is `unit` (trimmed of blanks; none is fine) one of `units`? */
static int unit_in(const char *unit, const char *units)
{
	size_t n = strlen(unit);

	while (n && unit[n - 1] == ' ')
		n--;
	return !n || options_list_has(units, unit, n, 1);
}

/* A whole number, blanks, then one of `units` or none. */
static int amount(const char *v, const char *units)
{
	const char *end;

	if (!number(v, &end, 1) || *v == '-' || *v == '+')
		return 0;
	while (*end == ' ')
		end++;
	return unit_in(end, units);
}

/* One (non-list) value against type t. */
/*
 * One character as Java's String.length() counts it (a code point below
 * U+10000), or an escape that commons-lang's StringEscapeUtils.unescapeJava
 * makes one of: a backslash and one character (\t, \\, \;), \u and four
 * hex digits, or an octal \0 to \377.  CSV's delimiter, quote and escape
 * characters are such; Flink unescapes only field-delimiter, so taking the
 * escapes for all errs towards accepting.  Spaces count: ' ' is a
 * delimiter.
 */
static int one_char(const char *v)
{
	size_t n = strlen(v), i = 0, d;
	long c;

	if (!n)
		return 0;
	if (v[0] == '\\' && n > 1) {
		for (d = 1; v[d] == 'u'; d++)
			;
		if (d > 1 && n > 2) {
			if (v[d] == '+')
				d++;
			return n == d + 4 && strspn(v + d, HEX) == 4;
		}
		d = strspn(v + 1, "01234567");
		if (d > 1)
			return n == 1 + d && (d < 3 || v[1] <= '3');
		if (n == 2)
			return 1;
		i = 1; /* a backslash and one code point */
	}
	c = utf8_next((const unsigned char *)v, n, &i);
	return c > 0 && c < 0x10000 && i == n;
}

static int scalar_ok(const struct options_option *o, const char *v)
{
	const char *t = o->type, *end;
	char *e;

	if (!strcmp(t, "char"))
		return one_char(v);
	while (*v == ' ')
		v++;
	if (!strcmp(t, "boolean"))
		return !strcasecmp(v, "true") || !strcasecmp(v, "false");
	if (!strcmp(t, "int") || !strcmp(t, "long")) {
		long long x;

		errno = 0;
		x = strtoll(v, &e, 10);
		while (*e == ' ')
			e++;
		if (!*v || *e || errno)
			return 0;
		return strcmp(t, "int") || (x >= INT32_MIN && x <= INT32_MAX);
	}
	if (!strcmp(t, "double") || !strcmp(t, "float")) {
		if (!number(v, &end, 0))
			return 0;
		while (*end == ' ')
			end++;
		return !*end;
	}
	/* Flink's TimeUtils.parseDuration and MemorySize.parse: digits,
	 * then a unit or none. */
	if (!strcmp(t, "duration"))
		return amount(v, "d,day,days,h,hour,hours,min,m,minute,"
				 "minutes,s,sec,secs,second,seconds,ms,"
				 "milli,millis,millisecond,milliseconds,"
				 "us,micro,micros,microsecond,"
				 "microseconds,ns,nano,nanos,nanosecond,"
				 "nanoseconds");
	if (!strcmp(t, "memory"))
		return amount(v, "b,bytes,k,kb,kibibytes,m,mb,mebibytes,g,"
				 "gb,gibibytes,t,tb,tebibytes");
	if (!strcmp(t, "enum") && o->values)
		return options_list_has(o->values, v, strlen(v), 1);
	return 1;
}

int options_value_ok(const struct options_option *o, const char *value)
{
	char *copy, *p, *save = NULL;
	int ok = 1;

	if (!o->list)
		return scalar_ok(o, value);
	copy = strdup(value);
	if (!copy)
		return 1; /* refuse nothing for want of memory */
	for (p = strtok_r(copy, ";", &save); p && ok;
	     p = strtok_r(NULL, ";", &save))
		ok = scalar_ok(o, p);
	free(copy);
	return ok;
}
