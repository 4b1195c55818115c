/*
 * catalog_pg_watch.c - the PostgreSQL catalog's watch (catalog_watch):
 * changes other hosts commit, from the notifications schema 5's triggers
 * send, told to the mount so that it invalidates what its kernel caches.
 */
#include "catalog_pg_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thread.h"

/*
 * The watch (catalog_watch): a connection of its own that listens on
 * channel cmfs (cmfs_notify() in schema 5), and a thread that waits on it
 * and on a pipe that stops it.  A notification from another server
 * process than that of g's connection is a change made elsewhere.  A
 * lost connection is made again every WATCH_RETRY_MS; notifications sent
 * meanwhile are lost, so everything is then reported changed.
 */
#define WATCH_RETRY_MS 250

struct watch {
	struct pg *g;
	catalog_watch_fn fn;
	void *arg;
	pthread_t thread;
	int stop[2];		/* a pipe: written to stop the thread */
	PGconn *conn;		/* listening, or NULL while lost */
};

static PGconn *watch_connect(struct pg *g)
{
	PGconn *conn = pg_dial(g->uri);
	PGresult *res;
	int ok;

	if (!conn || PQstatus(conn) != CONNECTION_OK) {
		PQfinish(conn);
		return NULL;
	}
	res = PQexec(conn, "LISTEN cmfs");
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
	if (!ok) {
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/* "<kind><env>/<name>" to the watcher, unless this handle sent it. */
static void watch_tell(struct watch *w, const PGnotify *n)
{
	char env[256];
	const char *slash = strchr(n->extra, '/');

	if (n->be_pid == __atomic_load_n(&w->g->pid, __ATOMIC_RELAXED) ||
	    !n->extra[0] || !slash || slash - n->extra - 1 >= (int)sizeof(env))
		return;
	memcpy(env, n->extra + 1, (size_t)(slash - n->extra - 1));
	env[slash - n->extra - 1] = '\0';
	w->fn(w->arg, env, slash + 1, n->extra[0]);
}

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	struct pollfd p[2];
	PGnotify *n;

	for (;;) {
		p[0].fd = w->conn ? PQsocket(w->conn) : -1;
		p[0].events = POLLIN;
		p[0].revents = 0;
		p[1].fd = w->stop[0];
		p[1].events = POLLIN;
		p[1].revents = 0;
		if (poll(p, 2, w->conn ? -1 : WATCH_RETRY_MS) < 0 &&
		    errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!w->conn) {
			if ((w->conn = watch_connect(w->g)))
				w->fn(w->arg, NULL, NULL, 0);
			continue;
		}
		if (!p[0].revents)
			continue;
		if (!PQconsumeInput(w->conn) ||
		    PQstatus(w->conn) != CONNECTION_OK) {
			PQfinish(w->conn);
			w->conn = NULL;
			continue;
		}
		while ((n = PQnotifies(w->conn))) {
			watch_tell(w, n);
			PQfreemem(n);
		}
	}
	return NULL;
}

int pg_watch(void *impl, catalog_watch_fn fn, void *arg, struct cmfs_err *err)
{
	struct pg *g = impl;
	struct watch *w = calloc(1, sizeof(*w));
	int rc;

	if (g->watch)
		return cmfs_err_set(err, -EBUSY, "catalog %s: watched already",
				    g->where);
	if (!w || pipe(w->stop)) {
		free(w);
		return cmfs_err_set(err, -ENOMEM, "catalog watch: %s",
				    strerror(errno));
	}
	w->g = g;
	w->fn = fn;
	w->arg = arg;
	if (!(w->conn = watch_connect(g))) {
		rc = cmfs_err_set(err, -EIO,
				  "catalog %s: cannot listen for changes",
				  g->where);
		goto fail;
	}
	if ((rc = thread_start(&w->thread, watch_thread, w))) {
		cmfs_err_set(err, rc, "catalog watch: %s", strerror(-rc));
		goto fail;
	}
	g->watch = w;
	return 0;
fail:
	PQfinish(w->conn);
	close(w->stop[0]);
	close(w->stop[1]);
	free(w);
	return rc;
}

void pg_unwatch(void *impl)
{
	struct pg *g = impl;
	struct watch *w = g->watch;

	if (!w)
		return;
	if (write(w->stop[1], "x", 1) < 0)
		(void)0; /* a pipe of one byte never fills */
	pthread_join(w->thread, NULL);
	PQfinish(w->conn);
	close(w->stop[0]);
	close(w->stop[1]);
	free(w);
	g->watch = NULL;
}
