/*
 * jar_cost.h - what inspecting an archive will hold in memory, told from
 * its end record before it is opened, for the inspections' shared budget
 * (budget.h).
 *
 * libzip keeps an entry structure, its name and its extra fields for each
 * entry of the central directory it opens: the memory an inspection holds
 * grows with the central directory's size (about 7 bytes for each of its
 * bytes, measured in bench/findings.md), not with the archive's.  The
 * estimate reads the end-of-central-directory record (and the ZIP64 one
 * where the classic record says to), never trusts it for anything else,
 * and falls back to JAR_COST_MIN for what is not a zip archive: such an
 * upload is refused quickly and holds little.
 */
#ifndef CMFS_JAR_COST_H
#define CMFS_JAR_COST_H

#include <stddef.h>
#include <stdint.h>

#define JAR_COST_MIN (1u << 20)

/* The estimate for the archive in file `fd`, or at `data` (`len` bytes). */
uint64_t jar_cost_fd(int fd);
uint64_t jar_cost_mem(const void *data, size_t len);

#endif
