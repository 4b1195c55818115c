/*
 * idhold - hold a file open across a command, and say whether what the
 * open descriptor shows changed (tests/integ/t_identity.sh).
 *
 *   idhold ver FILE CMD      open FILE; take its size (fstat), its
 *                            user.cmfs.sha256 (fgetxattr) and its bytes;
 *                            run CMD (sh -c); take them again through the
 *                            same descriptor.  Prints OK, or FLIP and what
 *                            changed (size, sha256, bytes).
 *   idhold half FILE WANT CMD
 *                            open FILE; read half of file WANT's size;
 *                            run CMD; read on to the end.  Prints OK when
 *                            what was read is WANT's bytes, whole, and
 *                            fstat gave WANT's size after CMD; else SHORT
 *                            <n> (n bytes read), DIFF or FSTAT <size>.
 *
 * Exits 0 unless misused or a call fails before CMD runs (2).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* What a descriptor shows. */
struct view {
	long long size;
	char sha[80];
	char *bytes;
	size_t len;
};

/* Read all of `fd` from offset `off` into a new buffer (*len bytes). */
static char *slurp_fd(int fd, off_t off, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap), *nb;
	ssize_t r;

	while (b) {
		if (n == cap) {
			nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				return NULL;
			}
			b = nb;
		}
		r = pread(fd, b + n, cap - n, off + (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return b;
}

static void look(int fd, struct view *v)
{
	struct stat st;
	ssize_t n;

	v->size = fstat(fd, &st) ? -1 : (long long)st.st_size;
	n = fgetxattr(fd, "user.cmfs.sha256", v->sha, sizeof(v->sha) - 1);
	if (n < 0)
		snprintf(v->sha, sizeof(v->sha), "(%s)", strerror(errno));
	else
		v->sha[n] = '\0';
	v->bytes = slurp_fd(fd, 0, &v->len);
}

static int ver(const char *file, const char *cmd)
{
	struct view a, b;
	int fd = open(file, O_RDONLY), flips = 0;

	if (fd < 0) {
		perror(file);
		return 2;
	}
	look(fd, &a);
	if (system(cmd) == -1)
		perror("system");
	look(fd, &b);
	if (a.size != b.size) {
		printf("FLIP size %lld -> %lld\n", a.size, b.size);
		flips++;
	}
	if (strcmp(a.sha, b.sha)) {
		printf("FLIP sha256 %s -> %s\n", a.sha, b.sha);
		flips++;
	}
	if (a.len != b.len || !a.bytes || !b.bytes ||
	    memcmp(a.bytes, b.bytes, a.len)) {
		printf("FLIP bytes %zu -> %zu\n", a.len, b.len);
		flips++;
	}
	if (a.len != (size_t)a.size) {
		printf("FLIP read %zu bytes of %lld\n", a.len, a.size);
		flips++;
	}
	if (!flips)
		puts("OK");
	free(a.bytes);
	free(b.bytes);
	close(fd);
	return 0;
}

static int half(const char *file, const char *want, const char *cmd)
{
	size_t wlen = 0, got = 0, rest = 0;
	int wfd = open(want, O_RDONLY), fd = open(file, O_RDONLY);
	char *w = wfd >= 0 ? slurp_fd(wfd, 0, &wlen) : NULL, *b, *r = NULL;
	struct stat st;
	long long size;
	ssize_t n;

	if (fd < 0 || !w) {
		perror(fd < 0 ? file : want);
		return 2;
	}
	b = malloc(wlen + 1);
	while (b && got < wlen / 2) {
		n = read(fd, b + got, wlen / 2 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (system(cmd) == -1)
		perror("system");
	size = fstat(fd, &st) ? -1 : (long long)st.st_size;
	/* The rest through the same descriptor, as cat reads on. */
	if (b) {
		r = slurp_fd(fd, (off_t)got, &rest);
		if (r && got + rest <= wlen)
			memcpy(b + got, r, rest);
	}
	if (!b || !r || got + rest != wlen)
		printf("SHORT %zu\n", got + rest);
	else if (memcmp(b, w, wlen))
		puts("DIFF");
	else if (size != (long long)wlen)
		printf("FSTAT %lld\n", size);
	else
		puts("OK");
	free(r);
	free(b);
	free(w);
	close(fd);
	close(wfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "ver"))
		return ver(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "half"))
		return half(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: idhold ver FILE CMD | half FILE WANT CMD\n");
	return 2;
}
