/*
 * lat.c - latency of reading whole files, as cat does it (open, read to
 * the end, close), without the cost of starting a process per file, which
 * would drown the file system's share.
 *
 *   lat < paths         one path a line
 *
 * Prints one line: "n=<files> p50=<us> p99=<us> mean=<us> max=<us>
 * errors=<n> bytes=<total>".  A file that cannot be opened or read counts
 * as an error and not as a sample.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	static char buf[1 << 16];
	char *line = NULL;
	size_t cap = 0, n = 0, max = 0, errors = 0, i;
	double *t = NULL, sum = 0;
	unsigned long long bytes = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) > 0) {
		double t0;
		ssize_t r;
		int fd;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		t0 = now_us();
		fd = open(line, O_RDONLY);
		if (fd < 0) {
			errors++;
			continue;
		}
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			bytes += (unsigned long long)r;
		close(fd);
		if (r < 0) {
			errors++;
			continue;
		}
		if (n == max) {
			double *nt;

			max = max ? 2 * max : 1024;
			nt = realloc(t, max * sizeof(*t));
			if (!nt)
				return 2;
			t = nt;
		}
		t[n] = now_us() - t0;
		sum += t[n++];
	}
	free(line);
	if (!n) {
		printf("n=0 p50=0 p99=0 mean=0 max=0 errors=%zu bytes=0\n",
		       errors);
		return 1;
	}
	qsort(t, n, sizeof(*t), cmp);
	i = (n * 99 + 99) / 100;
	printf("n=%zu p50=%.1f p99=%.1f mean=%.1f max=%.1f errors=%zu "
	       "bytes=%llu\n",
	       n, t[(n - 1) / 2], t[(i ? i : 1) - 1], sum / (double)n,
	       t[n - 1], errors, bytes);
	return 0;
}
