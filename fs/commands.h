/*
 * commands.h - the command line beside the mount: `cmfs inspect`, `fsck`,
 * `export` and `import`, and the usage text they share with it.
 *
 *   cmfs inspect [--json] [-c cmfs.ini] FILE.jar
 *   cmfs fsck [--repair] <store> | cmfs fsck [--repair] -c cmfs.ini
 *   cmfs export <store> <dir>    | cmfs export -c cmfs.ini <dir>
 *   cmfs import <dir> <store>    | cmfs import <dir> -c cmfs.ini
 *
 * Options are read with getopt_long(): long forms (--config=FILE,
 * --repair, --json), in any place among the operands.
 */
#ifndef CMFS_COMMANDS_H
#define CMFS_COMMANDS_H

extern const char cmfs_usage[];

/*
 * Run the command argv[0] (with its arguments) and return its exit status;
 * -1 when argv[0] names no command (the caller mounts).
 */
int cmfs_command(int argc, char **argv);

#endif
