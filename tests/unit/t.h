/*
 * t.h - the unit-test harness: checks that print file:line on failure and
 * a closing "<file>: N passed, N failed" line.  Each test binary defines
 * its tests as functions and calls T_RUN(fn) for each from main(), then
 * returns T_DONE().
 */
#ifndef CMFS_T_H
#define CMFS_T_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The binary's counts, defined in fixture.c (every unit binary links it),
 * so that a missing fixture counts as a failure there (fixture_read()). */
extern int t_pass, t_fail;

#define T_CHECK(c) do { if (c) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); } } while (0)
#define T_STREQ(a, b) do { const char *t_a = (a), *t_b = (b); \
	if (t_a && t_b && !strcmp(t_a, t_b)) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
		t_a ? t_a : "(null)", t_b ? t_b : "(null)"); } } while (0)
#define T_INTEQ(a, b) do { long long t_a = (a), t_b = (b); \
	if (t_a == t_b) t_pass++; else { t_fail++; fprintf(stderr, \
	"%s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__, #a, t_a, t_b); } } while (0)
#define T_ERRNO(rc, e) T_INTEQ((rc), -(e))
#define T_CONTAINS(s, sub) do { const char *t_s = (s); \
	if (t_s && strstr(t_s, (sub))) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, \
		t_s ? t_s : "(null)", (sub)); } } while (0)
#define T_RUN(fn) do { int t_f = t_fail; fn(); \
	if (t_fail != t_f) fprintf(stderr, "  in %s\n", #fn); } while (0)
#define T_DONE() (printf("%s: %d passed, %d failed\n", __FILE__, t_pass, \
	t_fail), t_fail ? 1 : 0)

/* nftw callback of t_rmtree(). */
__attribute__((unused)) static int t_rm_one(const char *path,
					    const struct stat *st, int flag,
					    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove directory `dir` and everything below it: a test's temp dir. */
__attribute__((unused)) static void t_rmtree(const char *dir)
{
	nftw(dir, t_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The whole file at `path` (malloc'd, NUL-terminated), or NULL. */
__attribute__((unused)) static char *t_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL, *nb;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 8192) {
			nb = realloc(b, cap ? cap * 2 : 65536);
			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
			cap = cap ? cap * 2 : 65536;
		}
		r = fread(b + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0);
	fclose(f);
	b[n] = '\0';
	if (len)
		*len = n;
	return b;
}

#endif
