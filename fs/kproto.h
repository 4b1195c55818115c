/*
 * kproto.h - the kernel's FUSE protocol (include/uapi/linux/fuse.h), as far
 * as backing.c and uring.c use what libfuse 3.14 does not know.  Debian
 * 12's headers stop at 7.38: spelled out.
 */
#ifndef CMFS_FS_KPROTO_H
#define CMFS_FS_KPROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

enum {
	K_FUSE_INIT = 26,
	K_FUSE_INIT_EXT = 1 << 30,
	K_FUSE_MAX_PAGES = 1 << 22,
	K_FUSE_PASSTHROUGH_HI = 1 << (37 - 32),	  /* in flags2 */
	K_FUSE_DIO_MMAP_HI = 1 << (36 - 32),	  /* DIRECT_IO_ALLOW_MMAP */
	K_FUSE_OVER_IO_URING_HI = 1 << (41 - 32), /* 7.42 */
	K_FOPEN_PASSTHROUGH = 1 << 7,
	K_MAX_STACK_DEPTH = 2, /* FILESYSTEM_MAX_STACK_DEPTH */
	K_FUSE_MIN_READ_BUFFER = 8192,
};

struct k_in_header {
	uint32_t len, opcode;
	uint64_t unique, nodeid;
	uint32_t uid, gid, pid;
	uint16_t total_extlen, padding;
};

struct k_init_in {
	uint32_t major, minor, max_readahead, flags, flags2;
};

struct k_out_header {
	uint32_t len;
	int32_t error;
	uint64_t unique;
};

struct k_init_out {
	uint32_t major, minor, max_readahead, flags;
	uint16_t max_background, congestion_threshold;
	uint32_t max_write, time_gran;
	uint16_t max_pages, map_alignment;
	uint32_t flags2, max_stack_depth;
	uint32_t unused[6];
};

struct k_open_out {
	uint64_t fh;
	uint32_t open_flags;
	int32_t backing_id;
};

struct k_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};

#define K_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct k_backing_map)
#define K_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

/*
 * FUSE over io_uring (7.42): each ring entry is a header buffer and a
 * payload buffer.  The kernel writes a request's fuse_in_header into
 * in_out, its first argument (the opcode's fixed struct, possibly empty)
 * into op_in and the rest into the payload; a reply is a fuse_out_header
 * in in_out and every argument, one after the other, in the payload.
 */
enum {
	K_URING_CMD_REGISTER = 1,
	K_URING_CMD_COMMIT_AND_FETCH = 2,
};

struct k_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* the request's unique, for the commit */
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

struct k_uring_header {
	char in_out[128];
	char op_in[128];
	struct k_uring_ent_in_out ent;
};

/* In the 80-byte command area of a 128-byte SQE. */
struct k_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

_Static_assert(sizeof(struct k_in_header) == 40, "fuse_in_header");
_Static_assert(sizeof(struct k_out_header) == 16, "fuse_out_header");
_Static_assert(offsetof(struct k_init_out, flags2) == 32, "fuse_init_out");
_Static_assert(sizeof(struct k_init_out) == 64, "fuse_init_out");
_Static_assert(sizeof(struct k_open_out) == 16, "fuse_open_out");
_Static_assert(sizeof(struct k_uring_header) == 288, "fuse_uring_req_header");
_Static_assert(sizeof(struct k_uring_cmd_req) == 24, "fuse_uring_cmd_req");

#endif
