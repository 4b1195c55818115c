/*
 * walvfs.h - a VFS shim that writes each commit's WAL frames in one write
 * (see walvfs.c).
 */
#ifndef CMFS_WALVFS_H
#define CMFS_WALVFS_H

#include <sqlite3.h>

/*
 * The shim's name, to pass to sqlite3_open_v2() (registered on the first
 * call, not as the default), or NULL when it could not be registered:
 * then open with the default VFS.
 */
const char *walvfs_name(void);

#endif
