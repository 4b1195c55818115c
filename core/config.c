/*
 * config.c - the embedded default and the ini reader (inih).
 *
 * Loading works on a copy: the file is parsed into a fresh struct that
 * starts as a deep copy of the current one, and only a complete, valid
 * parse replaces it.  That is what lets SIGHUP keep the old rules when the
 * new file is bad.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "name.h"

/*
 * What a stock Flink 1.20 distribution's lib/ provides: its connectors
 * (flink-dist, flink-connector-files) and formats (flink-csv, flink-json
 * with its CDC formats, raw in flink-table); avro, parquet and orc are not
 * in lib/ and come as artifacts.
 */
#define DEFAULT_CONNECTORS "blackhole,datagen,filesystem,print"
#define DEFAULT_FORMATS                                                      \
	"csv,json,raw,canal-json,debezium-json,maxwell-json,ogg-json"
/*
 * The classes a Flink 1.20 cluster's class path provides to factories:
 * every package root of the Java SE and JDK modules (Java 8's CORBA too),
 * Flink's own, and what lib/'s JARs bundle unshaded, by their NOTICE files
 * (cmfs.ini.example lists them): flink-dist's Apache Commons (cli,
 * collections, io, codec, compress, lang3, math3, text), chill-java,
 * frocksdbjni, javassist, lz4-java, objenesis, snappy-java,
 * async-profiler, snakeyaml-engine, kryo and minlog, slf4j-api;
 * flink-table-runtime's janino; flink-scala's Scala library; the log4j
 * JARs.
 */
#define DEFAULT_ALLOWLIST                                                    \
	"java.*,javax.*,jdk.*,sun.*,com.sun.*,org.ietf.jgss.*,org.w3c.dom.*," \
	"org.xml.sax.*,org.jcp.xml.dsig.internal.*,netscape.javascript.*,"   \
	"org.omg.*,"                                                         \
	"org.apache.flink.*,"                                                \
	"org.apache.commons.cli.*,org.apache.commons.collections.*,"         \
	"org.apache.commons.io.*,org.apache.commons.codec.*,"                \
	"org.apache.commons.compress.*,org.apache.commons.lang3.*,"          \
	"org.apache.commons.math3.*,org.apache.commons.text.*,"              \
	"com.twitter.chill.*,org.rocksdb.*,javassist.*,net.jpountz.*,"       \
	"org.objenesis.*,org.xerial.snappy.*,one.profiler.*,"                \
	"org.snakeyaml.engine.*,com.esotericsoftware.kryo.*,"                \
	"com.esotericsoftware.minlog.*,org.slf4j.*,"                         \
	"org.codehaus.janino.*,org.codehaus.commons.compiler.*,scala.*,"     \
	"org.apache.log4j.*,org.apache.logging.log4j.*,"                     \
	"org.apache.logging.slf4j.*"

static const char *const right_names[CONFIG_NRIGHTS] = {
	"read", "upload", "write_tables", "admin",
};

const char *config_right_name(enum config_right r)
{
	return (unsigned)r < CONFIG_NRIGHTS ? right_names[r] : "?";
}

static void who_release(struct config_who *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

static void scope_release(struct config_scope *s)
{
	int r;

	free(s->env);
	for (r = 0; r < CONFIG_NRIGHTS; r++)
		who_release(&s->who[r]);
}

void config_release(struct config *c)
{
	size_t i;

	free(c->file);
	free(c->store_path);
	free(c->catalog_url);
	free(c->sql.builtin_connectors);
	free(c->sql.builtin_formats);
	free(c->sql.class_allowlist);
	free(c->sql.jar_path_prefix);
	for (i = 0; i < c->nscopes; i++)
		scope_release(&c->scopes[i]);
	free(c->scopes);
	memset(c, 0, sizeof(*c));
}

/* strdup that keeps NULL as NULL. */
static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

int config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->store_path = strdup("./cmfs-data");
	c->limits.artifact_size = 4ULL << 30;
	c->limits.store_size = 0;
	c->limits.artifacts_per_env = 1000000;
	c->limits.tables_per_env = 100000;
	c->limits.ddl_size = 1 << 20;
	c->limits.labels = 64;
	c->limits.xattr_size = 4096;
	c->limits.scratch_size = 4ULL << 30;
	c->sql.builtin_connectors = strdup(DEFAULT_CONNECTORS);
	c->sql.builtin_formats = strdup(DEFAULT_FORMATS);
	c->sql.class_allowlist = strdup(DEFAULT_ALLOWLIST);
	c->sql.check_options = 1;
	c->inline_max = 64 << 10;
	c->mount.entry_timeout = 30;
	c->mount.attr_timeout = 30;
	c->mount.negative_timeout = 1;
	c->mount.passthrough = 1;
	c->mount.io_uring = 1;
	c->events.max_rows = CONFIG_EVENTS_ROWS;
	c->events.max_age = CONFIG_EVENTS_AGE;
	c->events.repeat_window = CONFIG_EVENTS_WINDOW;
	c->events.uid_rate = CONFIG_EVENTS_UID_RATE;
	c->events.uid_burst = CONFIG_EVENTS_UID_BURST;
	c->events.all_rate = CONFIG_EVENTS_ALL_RATE;
	c->events.all_burst = CONFIG_EVENTS_ALL_BURST;
	c->log_level = LOG_INFO;
	if (!c->store_path || !c->sql.builtin_connectors ||
	    !c->sql.builtin_formats || !c->sql.class_allowlist) {
		config_release(c);
		return -ENOMEM;
	}
	return 0;
}

/* Deep copy, so that a failed load leaves the original untouched. */
static int copy_config(struct config *dst, const struct config *src)
{
	size_t i, j;
	int r;

	memset(dst, 0, sizeof(*dst));
	dst->file = dup0(src->file);
	dst->store_path = dup0(src->store_path);
	dst->catalog_url = dup0(src->catalog_url);
	dst->sync = src->sync;
	dst->inline_max = src->inline_max;
	dst->cache_max = src->cache_max;
	dst->limits = src->limits;
	dst->mount = src->mount;
	dst->events = src->events;
	dst->log_level = src->log_level;
	dst->sql.builtin_connectors = dup0(src->sql.builtin_connectors);
	dst->sql.builtin_formats = dup0(src->sql.builtin_formats);
	dst->sql.class_allowlist = dup0(src->sql.class_allowlist);
	dst->sql.jar_path_prefix = dup0(src->sql.jar_path_prefix);
	dst->sql.check_options = src->sql.check_options;
	if (src->catalog_url && !dst->catalog_url)
		goto oom;
	if (src->nscopes) {
		dst->scopes = calloc(src->nscopes, sizeof(*dst->scopes));
		if (!dst->scopes)
			goto oom;
		dst->nscopes = src->nscopes;
	}
	for (i = 0; i < src->nscopes; i++) {
		const struct config_scope *s = &src->scopes[i];
		struct config_scope *d = &dst->scopes[i];

		d->env = dup0(s->env);
		for (r = 0; r < CONFIG_NRIGHTS; r++) {
			d->who[r].set = s->who[r].set;
			if (!s->who[r].n)
				continue;
			d->who[r].v = calloc(s->who[r].n, sizeof(char *));
			if (!d->who[r].v)
				goto oom;
			for (j = 0; j < s->who[r].n; j++) {
				d->who[r].v[j] = strdup(s->who[r].v[j]);
				if (!d->who[r].v[j])
					goto oom;
				d->who[r].n++;
			}
		}
	}
	return 0;
oom:
	config_release(dst);
	return -ENOMEM;
}

/*
 * The password of a URI's user information (scheme://user:password@host)
 * and the value of each password= parameter become "***".
 */
void config_url_safe(char *dst, size_t n, const char *url)
{
	const char *p = strstr(url, "://"), *at, *colon = NULL, *s;
	size_t o = 0;

	if (!n)
		return;
	p = p ? p + 3 : url;
	at = strchr(p, '@');
	if (at && !memchr(p, '/', (size_t)(at - p)))
		colon = memchr(p, ':', (size_t)(at - p));
	for (s = url; *s;) {
		const char *hide = NULL;

		if (colon && s == colon + 1)
			hide = at;
		else if ((s > url && (s[-1] == '?' || s[-1] == '&')) &&
			 !strncmp(s, "password=", 9)) {
			for (; *s != '='; s++)
				if (o + 1 < n)
					dst[o++] = *s;
			s++;
			if (o + 1 < n)
				dst[o++] = '=';
			hide = s + strcspn(s, "&");
		}
		if (hide) {
			for (p = "***"; *p; p++)
				if (o + 1 < n)
					dst[o++] = *p;
			s = hide;
			continue;
		}
		if (o + 1 < n)
			dst[o++] = *s;
		s++;
	}
	dst[o] = '\0';
}

int config_parse_size(uint64_t *out, const char *s)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)	/* accept KiB-style "Ki", "MiB" */
		end++;
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int config_list_has(const char *list, const char *id)
{
	size_t n = strlen(id);
	const char *p = list;

	while (p && *p) {
		const char *e;
		size_t len;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		e = p;
		while (*e && *e != ',')
			e++;
		len = (size_t)(e - p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == n && len && !memcmp(p, id, n))
			return 1;
		p = e;
	}
	return 0;
}

const struct config_scope *config_scope_env(const struct config *c,
					    const char *env)
{
	size_t i;

	for (i = 0; i < c->nscopes; i++)
		if (c->scopes[i].env && !strcmp(c->scopes[i].env, env))
			return &c->scopes[i];
	return NULL;
}

const struct config_scope *config_scope_global(const struct config *c)
{
	size_t i;

	for (i = 0; i < c->nscopes; i++)
		if (!c->scopes[i].env)
			return &c->scopes[i];
	return NULL;
}

/*
 * The state of one ini parse: the config being built, the first error and
 * its line, and the reader's place in the file (inih reads through
 * read_line(), so the line a handler runs on is known exactly).
 */
struct load {
	struct config *c;
	char reason[200];
	int line;		/* of the first error, 0 while none */
	int at;			/* lines handed to inih so far */
	const char *p;		/* the rest of the file */
	char last[64];		/* the key of the previous handler call */
};

static int fail(struct load *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record the first reason of a failed parse; returns 0 for inih. */
static int fail(struct load *l, const char *fmt, ...)
{
	va_list ap;

	if (!l->reason[0]) {
		va_start(ap, fmt);
		vsnprintf(l->reason, sizeof(l->reason), fmt, ap);
		va_end(ap);
		l->line = l->at;
	}
	return 0;
}

static struct config_scope *scope_get(struct load *l, const char *env)
{
	struct config *c = l->c;
	struct config_scope *s;
	size_t i;

	for (i = 0; i < c->nscopes; i++) {
		s = &c->scopes[i];
		if ((!env && !s->env) || (env && s->env && !strcmp(env, s->env)))
			return s;
	}
	s = realloc(c->scopes, (c->nscopes + 1) * sizeof(*s));
	if (!s)
		return NULL;
	c->scopes = s;
	s = &c->scopes[c->nscopes];
	memset(s, 0, sizeof(*s));
	if (env && !(s->env = strdup(env)))
		return NULL;
	c->nscopes++;
	return s;
}

/* Check one entry of a rule list: *, uid, user name, @group. */
static int who_valid(const char *w)
{
	char *end;

	if (!strcmp(w, "*"))
		return 1;
	if (w[0] == '@')
		return w[1] && getgrnam(w + 1) != NULL;
	if (w[0] >= '0' && w[0] <= '9') {
		strtoul(w, &end, 10);
		return *end == '\0';
	}
	return getpwnam(w) != NULL;
}

/* Parse a comma- or space-separated rule list into `w` (replacing it). */
static int parse_who(struct load *l, struct config_who *w, const char *value,
		     int append)
{
	char *copy = strdup(value), *tok, *save = NULL;
	struct config_who nw = { 1, 0, NULL };
	size_t i;

	/* A continuation line adds to the list the key began. */
	for (i = 0; append && copy && i < w->n; i++) {
		char **v = realloc(nw.v, (nw.n + 1) * sizeof(char *));

		if (!v || !(v[nw.n] = strdup(w->v[i]))) {
			nw.v = v ? v : nw.v;
			goto bad;
		}
		nw.v = v;
		nw.n++;
	}

	if (!copy)
		return fail(l, "out of memory");
	for (tok = strtok_r(copy, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		char **v;

		if (!who_valid(tok)) {
			fail(l, "'%s' is not *, a uid, a user name or an "
				"existing @group", tok);
			goto bad;
		}
		v = realloc(nw.v, (nw.n + 1) * sizeof(char *));
		if (!v)
			goto bad;
		nw.v = v;
		if (!(nw.v[nw.n] = strdup(tok)))
			goto bad;
		nw.n++;
	}
	free(copy);
	who_release(w);
	*w = nw;
	return 1;
bad:
	free(copy);
	who_release(&nw);
	return fail(l, "out of memory");
}

static int set_str(struct load *l, char **dst, const char *value)
{
	char *s = strdup(value);

	if (!s)
		return fail(l, "out of memory");
	free(*dst);
	*dst = s;
	return 1;
}

/*
 * A list value continued on indented lines: inih calls again with the same
 * key, and the parts join with a comma.
 */
static int add_list(struct load *l, char **dst, const char *name,
		    const char *value)
{
	char *s;

	if (strcmp(l->last, name) || !*dst)
		return set_str(l, dst, value);
	if (!*value)
		return 1;
	s = malloc(strlen(*dst) + strlen(value) + 2);
	if (!s)
		return fail(l, "out of memory");
	sprintf(s, "%s,%s", *dst, value);
	free(*dst);
	*dst = s;
	return 1;
}

static int set_size(struct load *l, uint64_t *dst, const char *name,
		    const char *value)
{
	if (config_parse_size(dst, value))
		return fail(l, "%s: '%s' is not a size (digits with an "
			       "optional K, M, G or T)", name, value);
	return 1;
}

static int set_seconds(struct load *l, double *dst, const char *name,
		       const char *value)
{
	char *end;
	double v = strtod(value, &end);

	if (end == value || *end || !(v >= 0 && v <= 86400))
		return fail(l, "%s: '%s' is not a number of seconds "
			       "between 0 and 86400", name, value);
	*dst = v;
	return 1;
}

/* auto (1) or off (0). */
static int set_auto_off(struct load *l, int *dst, const char *name,
			const char *value)
{
	if (strcmp(value, "auto") && strcmp(value, "off"))
		return fail(l, "%s: '%s' is neither auto nor off", name, value);
	*dst = !strcmp(value, "auto");
	return 1;
}

/* An environment name as DESIGN.md fixes it (name.c has the rule). */
static int env_name_ok(const char *s)
{
	return name_env_check(s, NULL) == 0;
}

static int handle_limits(struct load *l, const char *name, const char *value)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "max_artifact_size", offsetof(struct config_limits, artifact_size) },
		{ "max_store_size", offsetof(struct config_limits, store_size) },
		{ "max_artifacts_per_env", offsetof(struct config_limits, artifacts_per_env) },
		{ "max_tables_per_env", offsetof(struct config_limits, tables_per_env) },
		{ "max_ddl_size", offsetof(struct config_limits, ddl_size) },
		{ "max_labels", offsetof(struct config_limits, labels) },
		{ "max_xattr_size", offsetof(struct config_limits, xattr_size) },
		{ "max_scratch_size", offsetof(struct config_limits, scratch_size) },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(name, keys[i].key))
			return set_size(l, (uint64_t *)((char *)&l->c->limits +
							keys[i].off),
					name, value);
	return fail(l, "unknown key '%s' in [limits]", name);
}

int config_parse_duration(uint64_t *out, const char *s)
{
	static const struct {
		char suffix;
		uint64_t secs;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	uint64_t v = 0, mul = 1;
	const char *p = s;
	size_t i;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (*p == units[i].suffix)
				mul = units[i].secs;
		if (mul == 1 && *p != 's')
			return -EINVAL;
		if (p[1])
			return -EINVAL;
	}
	if (v > UINT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

/* A count: decimal digits only.  0 or -EINVAL. */
static int parse_count(uint64_t *out, const char *s)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return s[0] < '0' || s[0] > '9' || *end || errno ? -EINVAL : 0;
}

/* The field of [events] `name` that is a count of lines a second (or at
 * once), or NULL. */
static uint64_t *events_lines(struct config_events *e, const char *name)
{
	if (!strcmp(name, "uid_rate"))
		return &e->uid_rate;
	if (!strcmp(name, "uid_burst"))
		return &e->uid_burst;
	if (!strcmp(name, "all_rate"))
		return &e->all_rate;
	if (!strcmp(name, "all_burst"))
		return &e->all_burst;
	return NULL;
}

/*
 * [events] max_rows: 0 (keep all) or 10 up to CONFIG_EVENTS_ROWS_MAX;
 * max_age: 0 (keep all) or a duration from 1s up to 100 years.  A count
 * under 10 would leave the trail nothing to read but its retention lines.
 * repeat_window: a duration from 1s to 1d; uid_rate, uid_burst, all_rate,
 * all_burst: lines, 1 to CONFIG_EVENTS_LINES_MAX (0 would write no
 * refusal at all, only their counts: a gate that hides who was refused).
 */
static int handle_events(struct load *l, const char *name, const char *value)
{
	uint64_t v, *lines = events_lines(&l->c->events, name);

	if (lines) {
		if (parse_count(&v, value) || v < 1 ||
		    v > CONFIG_EVENTS_LINES_MAX)
			return fail(l, "%s: '%s' is not a count of lines from "
				       "1 to %d", name, value,
				    CONFIG_EVENTS_LINES_MAX);
		*lines = v;
		return 1;
	}
	if (!strcmp(name, "repeat_window")) {
		if (config_parse_duration(&v, value) || v < 1 ||
		    v > CONFIG_EVENTS_WINDOW_MAX)
			return fail(l, "repeat_window: '%s' is not a duration "
				       "from 1s to 1d (digits with an optional "
				       "s, m, h or d)", value);
		l->c->events.repeat_window = v;
		return 1;
	}

	if (!strcmp(name, "max_rows")) {
		if (parse_count(&v, value) || (v && v < 10) ||
		    v > CONFIG_EVENTS_ROWS_MAX)
			return fail(l, "max_rows: '%s' is not 0 (no limit) or "
				       "a count of lines from 10 to %llu",
				    value,
				    (unsigned long long)CONFIG_EVENTS_ROWS_MAX);
		l->c->events.max_rows = v;
		return 1;
	}
	if (!strcmp(name, "max_age")) {
		if (config_parse_duration(&v, value) ||
		    v > CONFIG_EVENTS_AGE_MAX)
			return fail(l, "max_age: '%s' is not 0 (no limit) or "
				       "a duration up to 36500d (digits with "
				       "an optional s, m, h or d)", value);
		l->c->events.max_age = v;
		return 1;
	}
	return fail(l, "unknown key '%s' in [events]", name);
}

static int handle_log(struct load *l, const char *name, const char *value)
{
	static const char *const levels[] = { "error", "warning", "notice",
					      "info", "debug" };
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO,
				    LOG_DEBUG };
	size_t i;

	if (strcmp(name, "level"))
		return fail(l, "unknown key '%s' in [log]", name);
	for (i = 0; i < 5; i++)
		if (!strcmp(value, levels[i])) {
			l->c->log_level = prio[i];
			return 1;
		}
	return fail(l, "level: '%s' is not error, warning, notice, info or "
		       "debug", value);
}

static int handle_rules(struct load *l, const char *env, const char *name,
			const char *value)
{
	struct config_scope *s;
	int r;

	for (r = 0; r < CONFIG_NRIGHTS; r++)
		if (!strcmp(name, right_names[r]))
			break;
	if (r == CONFIG_NRIGHTS)
		return fail(l, "unknown key '%s' (rules take read, upload, "
			       "write_tables, admin)", name);
	s = scope_get(l, env);
	if (!s)
		return fail(l, "out of memory");
	return parse_who(l, &s->who[r], value, !strcmp(l->last, name));
}

static int handle(struct load *l, const char *section, const char *name,
		  const char *value);

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct load *l = user;
	int ok;

	if (l->reason[0])
		return 0;
	if (!name) /* a section line alone (inih >= 51 reports those) */
		return 1;
	ok = handle(l, section, name, value);
	snprintf(l->last, sizeof(l->last), "%s", name);
	return ok;
}

static int handle(struct load *l, const char *section, const char *name,
		  const char *value)
{
	struct config *c = l->c;

	if (!strcmp(section, "store")) {
		if (!strcmp(name, "path")) {
			if (!*value)
				return fail(l, "path: empty");
			return set_str(l, &c->store_path, value);
		}
		if (!strcmp(name, "sync")) {
			if (!strcmp(value, "batch"))
				c->sync = CONFIG_SYNC_BATCH;
			else if (!strcmp(value, "close"))
				c->sync = CONFIG_SYNC_CLOSE;
			else
				return fail(l, "sync: '%s' is neither batch "
					       "nor close", value);
			return 1;
		}
		if (!strcmp(name, "inline_max")) {
			uint64_t v;

			if (config_parse_size(&v, value) ||
			    v > CONFIG_INLINE_LIMIT)
				return fail(l,
					    "inline_max: '%s' is not a size "
					    "up to 1M",
					    value);
			c->inline_max = v;
			return 1;
		}
		if (!strcmp(name, "cache_max")) {
			if (config_parse_size(&c->cache_max, value))
				return fail(l, "cache_max: '%s' is not a size",
					    value);
			return 1;
		}
		return fail(l, "unknown key '%s' in [store]", name);
	}
	if (!strcmp(section, "catalog")) {
		if (!strcmp(name, "url")) {
			if (strncmp(value, "postgresql://", 13) &&
			    strncmp(value, "postgres://", 11))
				return fail(l, "url: not a postgresql:// "
					       "connection URI");
			return set_str(l, &c->catalog_url, value);
		}
		return fail(l, "unknown key '%s' in [catalog]", name);
	}
	if (!strcmp(section, "limits"))
		return handle_limits(l, name, value);
	if (!strcmp(section, "sql")) {
		if (!strcmp(name, "builtin_connectors"))
			return add_list(l, &c->sql.builtin_connectors, name,
					value);
		if (!strcmp(name, "builtin_formats"))
			return add_list(l, &c->sql.builtin_formats, name,
					value);
		if (!strcmp(name, "class_allowlist"))
			return add_list(l, &c->sql.class_allowlist, name,
					value);
		if (!strcmp(name, "check_options")) {
			if (strcmp(value, "on") && strcmp(value, "off"))
				return fail(l, "check_options: '%s' is neither "
					       "on nor off", value);
			c->sql.check_options = !strcmp(value, "on");
			return 1;
		}
		if (!strcmp(name, "jar_path_prefix")) {
			if (value[0] != '/')
				return fail(l, "jar_path_prefix: '%s' is not an "
					       "absolute path", value);
			return set_str(l, &c->sql.jar_path_prefix, value);
		}
		return fail(l, "unknown key '%s' in [sql]", name);
	}
	if (!strcmp(section, "mount")) {
		if (!strcmp(name, "entry_timeout"))
			return set_seconds(l, &c->mount.entry_timeout, name,
					   value);
		if (!strcmp(name, "attr_timeout"))
			return set_seconds(l, &c->mount.attr_timeout, name,
					   value);
		if (!strcmp(name, "negative_timeout"))
			return set_seconds(l, &c->mount.negative_timeout, name,
					   value);
		if (!strcmp(name, "passthrough"))
			return set_auto_off(l, &c->mount.passthrough, name,
					    value);
		if (!strcmp(name, "io_uring"))
			return set_auto_off(l, &c->mount.io_uring, name, value);
		return fail(l, "unknown key '%s' in [mount]", name);
	}
	if (!strcmp(section, "log"))
		return handle_log(l, name, value);
	if (!strcmp(section, "events"))
		return handle_events(l, name, value);
	if (!strcmp(section, "access"))
		return handle_rules(l, NULL, name, value);
	if (!strncmp(section, "env.", 4)) {
		if (!env_name_ok(section + 4))
			return fail(l, "[%s]: '%s' is not an environment name",
				    section, section + 4);
		return handle_rules(l, section + 4, name, value);
	}
	return fail(l, "unknown section [%s]", section);
}

/* inih's reader: the next line of the file, counting lines. */
static char *read_line(char *str, int num, void *stream)
{
	struct load *l = stream;
	const char *e;
	size_t n;

	if (!*l->p)
		return NULL;
	e = strchr(l->p, '\n');
	n = e ? (size_t)(e - l->p) + 1 : strlen(l->p);
	if (n > (size_t)num - 1)
		n = (size_t)num - 1; /* the pre-scan rules this out */
	memcpy(str, l->p, n);
	str[n] = '\0';
	l->p += n;
	l->at++;
	return str;
}

/* The sections this file may have. */
static int section_known(const char *s, size_t n)
{
	static const char *const known[] = { "store", "catalog", "limits",
					     "sql", "mount", "log", "events",
					     "access" };
	char env[64];
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i]) == n && !memcmp(s, known[i], n))
			return 1;
	if (n > 4 && n - 4 < sizeof(env) && !memcmp(s, "env.", 4)) {
		memcpy(env, s + 4, n - 4);
		env[n - 4] = '\0';
		return env_name_ok(env);
	}
	return 0;
}

/*
 * What inih cannot tell: a line longer than its buffer (it would split
 * it), and a section with no keys (it never reports those).
 */
static int prescan(struct load *l, const char *text)
{
	const char *p = text, *e, *q;
	int line = 0;
	size_t n;

	for (; *p; p = e ? e + 1 : p + strlen(p)) {
		e = strchr(p, '\n');
		n = e ? (size_t)(e - p) : strlen(p);
		line++;
		if (n >= INI_MAX_LINE - 1) {
			l->at = line;
			return fail(l, "line longer than %d bytes: continue a "
				       "list on indented lines",
				    INI_MAX_LINE - 2);
		}
		for (q = p; q < p + n && (*q == ' ' || *q == '\t'); q++)
			;
		if (q < p + n && *q == '[') {
			const char *close = memchr(q, ']', (size_t)(p + n - q));

			int len = close ? (int)(close - q - 1) : 0;

			if (close && !section_known(q + 1, (size_t)len)) {
				l->at = line;
				if (len >= 4 && !memcmp(q + 1, "env.", 4))
					return fail(l,
						    "[%.*s]: '%.*s' is not an "
						    "environment name",
						    len, q + 1, len - 4, q + 5);
				return fail(l, "unknown section [%.*s]", len,
					    q + 1);
			}
		}
	}
	return 1;
}

/* Read a whole file into a NUL-terminated buffer (the caller frees). */
static int slurp(const char *file, char **out)
{
	FILE *f = fopen(file, "r");
	char *b = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return -errno;
	do {
		if (cap - n < 4096) {
			char *nb = realloc(b, cap + 65536);

			if (!nb) {
				free(b);
				fclose(f);
				return -ENOMEM;
			}
			b = nb;
			cap += 65536;
		}
		r = fread(b + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0 && n < (1 << 24));
	fclose(f);
	b[n] = '\0';
	*out = b;
	return 0;
}

int config_load(struct config *c, const char *file, struct cmfs_err *err)
{
	struct config n;
	struct load l;
	char *text = NULL;
	int line, rc;

	rc = slurp(file, &text);
	if (rc)
		return cmfs_err_set(err, rc, "%s: %s", file, strerror(-rc));
	rc = copy_config(&n, c);
	if (rc) {
		free(text);
		return cmfs_err_set(err, rc, "%s: out of memory", file);
	}
	memset(&l, 0, sizeof(l));
	l.c = &n;
	l.p = text;
	line = prescan(&l, text) ? ini_parse_stream(read_line, &l, handler, &l)
				 : l.line;
	free(text);
	if (line || l.reason[0]) {
		config_release(&n);
		if (line < 0)
			return cmfs_err_set(err, -ENOMEM, "%s: out of memory",
					    file);
		/* The earlier of inih's syntax error and ours. */
		if (l.reason[0] && (!line || l.line <= line))
			return cmfs_err_set(err, -EINVAL, "%s:%d: %s", file,
					    l.line, l.reason);
		return cmfs_err_set(err, -EINVAL,
				    "%s:%d: not a key = value line", file, line);
	}
	free(n.file);
	n.file = strdup(file);
	config_release(c);
	*c = n;
	return 0;
}
