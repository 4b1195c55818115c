/*
 * loop.h - the request loop: one thread reads a request and processes it,
 * then reads the next; others read only when a request runs long or
 * requests wait.
 *
 * libfuse's multithreaded loop keeps several threads blocked in read() of
 * /dev/fuse, and the kernel hands requests to them in turn, so each
 * request of a sequential client (cp -R, setfattr --restore, a job's
 * opens) wakes a thread that has slept the longest, often on the other
 * CPU, with cold caches.  On the machines of bench/RESULTS.md one thread
 * made 1,000 small uploads 20 % faster and their labels 33 %.  But one
 * thread alone would let a slow request (a cold read, the inspection of a
 * big JAR, an fsync waiting for the disk) hold up every other client.
 * Here the thread that holds the reading (the reader) keeps it while its
 * requests are quick.  A watchdog gives the reading to an idle thread, or
 * to a new one while fewer than `max_threads` run, when a request has run
 * `takeover_us`, or when requests wait while the reader processes one
 * (clients in parallel, looked at every takeover_us / 2); a thread that
 * has lost the reading goes on reading while requests wait, and then
 * waits to be needed.  Handing the reading on as soon as a request waited
 * at the start of another was slower (10,000 uploads by one cp: 9.3 s
 * against 6.7 s): a FLUSH's reply lets cp send its RELEASE and its next
 * LOOKUP at once, and every hand-over is a wake-up.
 *
 * The loop knows nothing of FUSE: the caller passes the session's calls.
 */
#ifndef CMFS_LOOP_H
#define CMFS_LOOP_H

struct loop_ops {
	/* A thread's receive buffer (NULL: no memory), and its end. */
	void *(*buf_new)(void *arg);
	void (*buf_free)(void *arg, void *buf);
	/*
	 * Read one request into buf: > 0; 0 at the end of the session; or
	 * -errno (-EINTR and -EAGAIN: read again; others end the loop).
	 * It may block; the loop cancels (pthread_cancel) a thread blocked
	 * in it when the session ends by a signal, so it must be a
	 * cancellation point that holds nothing when cancelled.
	 */
	int (*receive)(void *arg, void *buf);
	/* Nonzero when a request is waiting to be read. */
	int (*pending)(void *arg);
	/* Process the request in buf; it may take as long as it needs. */
	void (*process)(void *arg, void *buf);
	/* Nonzero once the session is to end (a signal handler said so). */
	int (*exited)(void *arg);
};

/*
 * Serve requests until the session ends: `receive` returns 0, `exited`
 * says so (looked at after each request, and every second), or `receive`
 * fails.  The calling thread waits, and takes the signals that end a
 * session (the loop's threads block all signals); the loop's threads
 * start with it and are all gone when it returns.  0, or the -errno of
 * the failed `receive`, or -EAGAIN when no thread could start.
 */
int loop_run(const struct loop_ops *ops, void *arg, unsigned max_threads,
	     unsigned takeover_us);

#endif
