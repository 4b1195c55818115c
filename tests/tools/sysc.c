/*
 * sysc - run one system call and print its errno name, for integration
 * tests that must assert exact errnos ("sysc setxattr F user.k v" prints
 * EINVAL).  Prints OK on success; always exits 0 unless misused (2).
 *
 *   sysc open PATH [r|w|wt|wc|wce|a]   open (and close) with those flags
 *   sysc write PATH DATA               open O_WRONLY|O_CREAT|O_TRUNC, write,
 *                                      close: the first error of the three
 *   sysc append PATH DATA              the same with O_APPEND, no truncate
 *   sysc read PATH                     read all (prints OK or the errno)
 *   sysc mmap PATH OUT                 map PATH shared, read-only, and copy
 *                                      the mapping's bytes to file OUT
 *   sysc mmapw PATH IN                 create PATH, size it as file IN, map
 *                                      it shared and writable, copy IN's
 *                                      bytes into the mapping, unmap, close
 *   sysc mkdir|rmdir|unlink PATH
 *   sysc rename FROM TO
 *   sysc link|symlink FROM TO
 *   sysc truncate PATH SIZE
 *   sysc getxattr|removexattr PATH NAME
 *   sysc setxattr PATH NAME VALUE [create|replace]
 *   sysc listxattr PATH
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static const struct {
	int e;
	const char *name;
} names[] = {
	{ EPERM, "EPERM" },	  { ENOENT, "ENOENT" },	      { EIO, "EIO" },
	{ E2BIG, "E2BIG" },	  { ENOEXEC, "ENOEXEC" },     { EBADF, "EBADF" },
	{ ENOMEM, "ENOMEM" },	  { EACCES, "EACCES" },	      { EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" },	  { EXDEV, "EXDEV" },	      { ENOTDIR, "ENOTDIR" },
	{ EISDIR, "EISDIR" },	  { EINVAL, "EINVAL" },	      { EFBIG, "EFBIG" },
	{ ENOSPC, "ENOSPC" },	  { EROFS, "EROFS" },	      { EMLINK, "EMLINK" },
	{ ERANGE, "ERANGE" },	  { ENAMETOOLONG, "ENAMETOOLONG" },
	{ ENOTEMPTY, "ENOTEMPTY" }, { ENODATA, "ENODATA" },  { ENOPKG, "ENOPKG" },
	{ ENOTUNIQ, "ENOTUNIQ" }, { EOPNOTSUPP, "EOPNOTSUPP" },
	{ EDQUOT, "EDQUOT" },	  { ENOTCONN, "ENOTCONN" },
};

static int report(int rc)
{
	size_t i;

	if (rc == 0) {
		puts("OK");
		return 0;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == rc) {
			puts(names[i].name);
			return 0;
		}
	printf("E%d\n", rc);
	return 0;
}

static int open_flags(const char *m)
{
	if (!strcmp(m, "r"))
		return O_RDONLY;
	if (!strcmp(m, "w"))
		return O_WRONLY;
	if (!strcmp(m, "wt"))
		return O_WRONLY | O_TRUNC;
	if (!strcmp(m, "wc"))
		return O_WRONLY | O_CREAT | O_TRUNC;
	if (!strcmp(m, "wce"))
		return O_WRONLY | O_CREAT | O_EXCL;
	if (!strcmp(m, "a"))
		return O_WRONLY | O_APPEND;
	return -1;
}

/* open + write + close; the first error wins. */
/* Copy what a shared, read-only mapping of `path` shows to `out`. */
static int do_mmap(const char *path, const char *out)
{
	struct stat st;
	void *p = MAP_FAILED;
	int fd = open(path, O_RDONLY), ofd = -1, rc = 0;

	if (fd < 0 || fstat(fd, &st))
		rc = errno;
	else if (st.st_size &&
		 (p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0)) ==
			 MAP_FAILED)
		rc = errno;
	else if ((ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		rc = errno;
	else if (st.st_size && write(ofd, p, st.st_size) != st.st_size)
		rc = errno ? errno : EIO;
	if (p != MAP_FAILED)
		munmap(p, st.st_size);
	if (ofd >= 0 && close(ofd) && !rc)
		rc = errno;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Write file `in`'s bytes to `path` through a shared, writable mapping. */
static int do_mmapw(const char *path, const char *in)
{
	struct stat st;
	void *p = MAP_FAILED;
	int ifd = open(in, O_RDONLY), fd = -1, rc = 0;

	if (ifd < 0 || fstat(ifd, &st))
		rc = errno;
	else if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0)
		rc = errno;
	else if (!st.st_size)
		rc = 0;
	else if (ftruncate(fd, st.st_size))
		rc = errno;
	else if ((p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, 0)) == MAP_FAILED)
		rc = errno;
	else if (read(ifd, p, st.st_size) != st.st_size)
		rc = errno ? errno : EIO;
	if (p != MAP_FAILED)
		munmap(p, st.st_size);
	if (fd >= 0 && close(fd) && !rc)
		rc = errno;
	if (ifd >= 0)
		close(ifd);
	return rc;
}

static int do_write(const char *path, const char *data, int flags)
{
	int fd = open(path, flags, 0644), rc = 0;
	size_t len = strlen(data);

	if (fd < 0)
		return errno;
	if (write(fd, data, len) != (ssize_t)len)
		rc = errno ? errno : EIO;
	if (close(fd) && !rc)
		rc = errno;
	return rc;
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	char buf[65536];
	int fd, rc = 0, f;

	if (argc < 3)
		goto usage;
	if (!strcmp(op, "open")) {
		f = open_flags(argc > 3 ? argv[3] : "r");
		if (f < 0)
			goto usage;
		fd = open(argv[2], f, 0644);
		if (fd < 0)
			return report(errno);
		return report(close(fd) ? errno : 0);
	}
	if (!strcmp(op, "write") && argc == 4)
		return report(do_write(argv[2], argv[3],
				       O_WRONLY | O_CREAT | O_TRUNC));
	if (!strcmp(op, "append") && argc == 4)
		return report(do_write(argv[2], argv[3], O_WRONLY | O_APPEND));
	if (!strcmp(op, "read")) {
		ssize_t n;

		fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return report(errno);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		rc = n < 0 ? errno : 0;
		close(fd);
		return report(rc);
	}
	if (!strcmp(op, "mmap") && argc == 4)
		return report(do_mmap(argv[2], argv[3]));
	if (!strcmp(op, "mmapw") && argc == 4)
		return report(do_mmapw(argv[2], argv[3]));
	if (!strcmp(op, "mkdir"))
		return report(mkdir(argv[2], 0755) ? errno : 0);
	if (!strcmp(op, "rmdir"))
		return report(rmdir(argv[2]) ? errno : 0);
	if (!strcmp(op, "unlink"))
		return report(unlink(argv[2]) ? errno : 0);
	if (!strcmp(op, "rename") && argc == 4)
		return report(rename(argv[2], argv[3]) ? errno : 0);
	if (!strcmp(op, "link") && argc == 4)
		return report(link(argv[2], argv[3]) ? errno : 0);
	if (!strcmp(op, "symlink") && argc == 4)
		return report(symlink(argv[2], argv[3]) ? errno : 0);
	if (!strcmp(op, "truncate") && argc == 4)
		return report(truncate(argv[2], atoll(argv[3])) ? errno : 0);
	if (!strcmp(op, "getxattr") && argc == 4)
		return report(getxattr(argv[2], argv[3], buf, sizeof(buf)) < 0
				      ? errno
				      : 0);
	if (!strcmp(op, "removexattr") && argc == 4)
		return report(removexattr(argv[2], argv[3]) ? errno : 0);
	if (!strcmp(op, "listxattr"))
		return report(listxattr(argv[2], buf, sizeof(buf)) < 0 ? errno
								       : 0);
	if (!strcmp(op, "setxattr") && argc >= 5) {
		f = 0;
		if (argc > 5 && !strcmp(argv[5], "create"))
			f = XATTR_CREATE;
		else if (argc > 5 && !strcmp(argv[5], "replace"))
			f = XATTR_REPLACE;
		return report(setxattr(argv[2], argv[3], argv[4],
				       strlen(argv[4]), f)
				      ? errno
				      : 0);
	}
usage:
	fprintf(stderr, "usage: sysc OP ARGS (see the source)\n");
	return 2;
}
