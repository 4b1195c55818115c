/*
 * turn.h - whose turn it is to read a queue of requests that several
 * threads serve (the FUSE device, read by libfuse's worker threads).
 *
 * The kernel hands each request on /dev/fuse to the thread that has
 * waited longest in read(2), so the requests of one sequential client
 * (cp -R, setfattr --restore) go to each of libfuse's threads in turn,
 * each a wake-up of a thread that may sleep on the other CPU.  Here one
 * thread holds the turn: it reads a request, processes it, and reads the
 * next, while the others wait in turn_read() without reading.  The turn
 * passes on only when its holder has processed one request for a tick
 * (TURN_TICK_NS) or more, or requests wait while it processes one (a
 * watcher thread looks each tick while requests come, and sleeps when
 * none has come for a while); a thread coming back from a request that
 * finds the turn held by one that processes while requests wait takes
 * it.  So a slow request (a big upload's inspection, an fsync) never
 * holds up other clients for more than about two ticks, and clients in
 * parallel are served in parallel.
 *
 * Threads: turn_read() may be called from any number of threads; a
 * thread cancelled while it waits there (libfuse cancels its workers at
 * the end of the session) leaves the turn consistent.  turn_start() and
 * turn_stop() are called once each, by the thread that owns the turn.
 */
#ifndef CMFS_TURN_H
#define CMFS_TURN_H

#include <stddef.h>
#include <sys/types.h>

/* The watcher's tick: the longest a request holds the turn is ~2 ticks. */
#define TURN_TICK_NS 1000000u

struct turn;

/*
 * A turn over the requests read from `fd`, with its watcher running.
 * 0 and *out (turn_stop() ends it), or -ENOMEM / -EAGAIN.
 */
int turn_start(struct turn **out, int fd);

/*
 * In place of read(fd, buf, len) by a serving thread (`fd`: the queue of
 * turn_start(), or a clone of it that reads the same requests): wait for
 * this thread's turn, then read.  Returns what read(2) returns, errno set
 * likewise.  The caller processes what it read before its next call; the
 * turn stays with it meanwhile, unless it passes on as above.
 */
ssize_t turn_read(struct turn *t, int fd, void *buf, size_t len);

/*
 * Stop the watcher and free `t` (NULL: nothing).  No thread may be in
 * turn_read() any more (the session's threads are joined).
 */
void turn_stop(struct turn *t);

#endif
