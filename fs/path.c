/*
 * path.c - the inode table: nodes, their (parent, name) index, lookup
 * counts and renames.
 */
#include "path.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdio.h>

#include "hash.h"
#include "name.h"
#include "repo.h"

/*
 * A node's names as they were before a rename: another request may be
 * reading them still (a GETATTR or a FLUSH through the inode takes none
 * of the kernel's locks that a rename takes), so they are freed only
 * RETIRE_S later, oldest first.  No request holds a node's names that
 * long: the longest, an upload's commit, is bounded by the inspector's
 * limits.
 */
#define RETIRE_S 60

struct retired {
	struct retired *next;
	time_t at; /* CLOCK_MONOTONIC seconds */
	char *names;
};

struct paths {
	pthread_mutex_t lock;	/* guards everything here and in nodes */
	struct hash nodes;	/* node->key -> node */
	struct retired *retired, **retired_tail; /* oldest first */
	struct node root;
};

void path_lock(struct paths *t)
{
	pthread_mutex_lock(&t->lock);
}

void path_unlock(struct paths *t)
{
	pthread_mutex_unlock(&t->lock);
}

enum node_kind path_classify(enum node_kind parent, const char *name)
{
	char t[130];
	size_t n = strlen(name);

	switch (parent) {
	case N_ROOT:
		return !strcmp(name, "envs") ? N_ENVS : N_INVALID;
	case N_ENVS:
		return name_env_check(name, NULL) ? N_INVALID : N_ENV;
	case N_ENV:
		if (!strcmp(name, "artifacts"))
			return N_ARTS;
		if (!strcmp(name, "versions"))
			return N_VERS;
		if (!strcmp(name, "tables"))
			return N_TABLES;
		if (!strcmp(name, "events"))
			return N_EVENTS;
		return N_INVALID;
	case N_ARTS:
		if (name_artifact_scratch(name))
			return N_ASCRATCH;
		return name_artifact_check(name, NULL) ? N_INVALID : N_ART;
	case N_VERS:
		return name_artifact_check(name, NULL) ? N_INVALID : N_VDIR;
	case N_VDIR:
		return name[0] >= '1' && name[0] <= '9' ? N_VER : N_INVALID;
	case N_TABLES:
		if (!strcmp(name, "resolved"))
			return N_RESOLVED;
		if (name_table_file(t, name))
			return N_TABLE;
		return name_table_scratch(name) ? N_TSCRATCH : N_INVALID;
	case N_RESOLVED:
		if (n > 5 && !strcmp(name + n - 5, ".jars") && n - 5 < 129) {
			memcpy(t, name, n - 5);
			memcpy(t + n - 5, ".sql", 5);
			return name_table_file(t, t) ? N_RJARS : N_INVALID;
		}
		return name_table_file(t, name) ? N_RSQL : N_INVALID;
	default:
		return N_INVALID;
	}
}

int64_t path_version(const struct node *vdir, const char *name)
{
	const char *ext = name_ext(vdir->obj);
	int64_t n = 0;
	const char *p;

	if (vdir->kind != N_VDIR || *name < '1' || *name > '9')
		return 0;
	for (p = name; *p >= '0' && *p <= '9'; p++) {
		if (n > (INT64_MAX - (*p - '0')) / 10)
			return 0;
		n = n * 10 + (*p - '0');
	}
	return strcmp(p, ext) ? 0 : n;
}

int path_is_dir(enum node_kind k)
{
	return k == N_ROOT || k == N_ENVS || k == N_ENV || k == N_ARTS ||
	       k == N_VERS || k == N_VDIR || k == N_TABLES || k == N_RESOLVED;
}

static void node_free(struct node *n)
{
	if (n->cache)
		free(n->cache->data);
	free(n->cache);
	free(n->pin);
	free(n->read);
	free(n->key);
	free(n);
}

/* What the comment at the end of struct node says. */
_Static_assert(sizeof(struct node) <= 120,
	       "a node fits malloc's 128-byte block");

/* A key of the table: the parent's address, then the name (no NUL). */
#define PARENT_LEN sizeof(struct node *)

/*
 * Name `n` (whose parent and kind are set) `name`: its key, name, object,
 * environment and version, in one new block (the name follows the key,
 * its NUL outside the key).  Returns the name; NULL: out of memory, and
 * `n` is unchanged.
 */
static char *describe(struct node *n, const char *name)
{
	const struct node *p = n->parent;
	size_t len = strlen(name), olen = 0, elen;
	const char *obj = "", *env = p->env;
	char *b;
	int whole;

	switch (n->kind) {
	case N_ENV:
		env = name;
		break;
	case N_ART:
	case N_ASCRATCH:
	case N_VDIR:
	case N_TSCRATCH:
		obj = name;
		olen = len;
		break;
	case N_VER:
		obj = p->obj;
		olen = strlen(obj);
		break;
	case N_TABLE:
	case N_RSQL:
		obj = name;
		olen = len - 4;
		break;
	case N_RJARS:
		obj = name;
		olen = len - 5;
		break;
	default:
		break;
	}
	/* An object named by the whole name (an artifact, a scratch file)
	 * is the name's bytes: no copy. */
	whole = obj == name && olen == len;
	elen = strlen(env);
	b = malloc(PARENT_LEN + len + 1 + (whole ? 0 : olen + 1) + elen + 1);
	if (!b)
		return NULL;
	memcpy(b, &n->parent, PARENT_LEN);
	n->key = b;
	b += PARENT_LEN;
	memcpy(b, name, len + 1);
	n->name = b;
	b += len + 1;
	if (whole) {
		n->obj = n->name;
	} else {
		memcpy(b, obj, olen);
		b[olen] = '\0';
		n->obj = b;
		b += olen + 1;
	}
	memcpy(b, env, elen + 1);
	n->env = b;
	n->ver = n->kind == N_VER ? strtoll(name, NULL, 10) : 0;
	return n->name;
}

/* The length of n's key. */
static size_t key_len(const struct node *n)
{
	return PARENT_LEN + strlen(n->name);
}

/*
 * The key of (parent, name), in `buf` when it fits, else malloc'd (the
 * caller frees it when it is not `buf`); NULL: out of memory.
 */
static char *key_of(char *buf, size_t size, const struct node *parent,
		    const char *name, size_t *len)
{
	size_t n = strlen(name);
	char *k = PARENT_LEN + n <= size ? buf : malloc(PARENT_LEN + n);

	if (!k)
		return NULL;
	memcpy(k, &parent, PARENT_LEN);
	memcpy(k + PARENT_LEN, name, n);
	*len = PARENT_LEN + n;
	return k;
}

/* Index n under its key; the caller made room (hash_reserve), so that
 * this cannot fail. */
static void index_add(struct paths *t, struct node *n)
{
	hash_put(&t->nodes, n->key, key_len(n), (uintptr_t)n);
}

/* Take n out of the index, if it is there: a node replaced by a rename
 * (path_detach) is out already, and another may hold its key. */
static void index_drop(struct paths *t, struct node *n)
{
	uintptr_t v;

	if (hash_get(&t->nodes, n->key, key_len(n), &v) &&
	    v == (uintptr_t)n)
		hash_del(&t->nodes, n->key, key_len(n));
}

int path_new(struct paths **out)
{
	struct paths *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (hash_reserve(&t->nodes, 512)) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->retired_tail = &t->retired;
	t->root.kind = N_ROOT;
	t->root.name = (char *)"";
	t->root.obj = t->root.env = "";
	t->root.nlookup = 1;
	*out = t;
	return 0;
}

void path_free(struct paths *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nodes.cap; i++)
		if (t->nodes.v[i].key)
			node_free((struct node *)t->nodes.v[i].val);
	while (t->retired) {
		struct retired *r = t->retired;

		t->retired = r->next;
		free(r->names);
		free(r);
	}
	hash_release(&t->nodes);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/*
 * Keep a renamed node's old names for RETIRE_S (lock held), and free
 * those kept longer.  Out of memory they are never freed: a few bytes
 * lost, where freeing them now could pull them from under a reader.
 */
static void retire(struct paths *t, char *names)
{
	struct timespec now;
	struct retired *r;

	clock_gettime(CLOCK_MONOTONIC, &now);
	while ((r = t->retired) && now.tv_sec - r->at >= RETIRE_S) {
		t->retired = r->next;
		free(r->names);
		free(r);
	}
	if (!t->retired)
		t->retired_tail = &t->retired;
	if (!(r = malloc(sizeof(*r))))
		return;
	r->next = NULL;
	r->at = now.tv_sec;
	r->names = names;
	*t->retired_tail = r;
	t->retired_tail = &r->next;
}

struct node *path_root(struct paths *t)
{
	return &t->root;
}

struct node *path_node(struct paths *t, uint64_t ino)
{
	return ino == 1 ? &t->root : (struct node *)(uintptr_t)ino;
}

uint64_t path_ino(const struct node *n)
{
	return n->kind == N_ROOT ? 1 : (uint64_t)(uintptr_t)n;
}

static struct node *find(struct paths *t, struct node *parent,
			 const char *name)
{
	char buf[PARENT_LEN + 256], *k;
	uintptr_t v = 0;
	size_t len;
	int found;

	if (!(k = key_of(buf, sizeof(buf), parent, name, &len)))
		return NULL;
	found = hash_get(&t->nodes, k, len, &v);
	if (k != buf)
		free(k);
	return found ? (struct node *)v : NULL;
}

struct node *path_find_locked(struct paths *t, struct node *parent,
			      const char *name)
{
	return find(t, parent, name);
}

struct node *path_find(struct paths *t, struct node *parent,
			const char *name)
{
	struct node *n;

	path_lock(t);
	n = find(t, parent, name);
	path_unlock(t);
	return n;
}

struct node *path_lookup(struct paths *t, struct node *parent,
			  const char *name)
{
	enum node_kind k = path_classify(parent->kind, name);
	struct node *n;

	/* A version's name is exact: its number and its artifact's ext. */
	if (k == N_INVALID || (k == N_VER && !path_version(parent, name)))
		return NULL;
	path_lock(t);
	n = find(t, parent, name);
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (n) {
			n->parent = parent;
			n->kind = k;
		}
		if (!n || hash_reserve(&t->nodes, t->nodes.n + 1) ||
		    !describe(n, name)) {
			free(n);
			path_unlock(t);
			return NULL;
		}
		parent->children++;
		index_add(t, n);
	}
	n->nlookup++;
	path_unlock(t);
	return n;
}

/* Free `n` and, up the tree, parents that nothing holds any more. */
static void release(struct paths *t, struct node *n)
{
	while (n != &t->root && n->nlookup == 0 && n->children == 0 &&
	       !n->writer) {
		struct node *p = n->parent;

		index_drop(t, n);
		repo_upload_free(n->placeholder);
		node_free(n);
		p->children--;
		n = p;
	}
}

void path_forget(struct paths *t, struct node *node, uint64_t n)
{
	path_lock(t);
	node->nlookup = node->nlookup > n ? node->nlookup - n : 0;
	release(t, node);
	/* Names the kernel forgot give their slots back (when it cannot,
	 * the index stays as large as it was: nothing is lost). */
	hash_shrink(&t->nodes);
	path_unlock(t);
}

void path_release(struct paths *t, struct node *node)
{
	release(t, node);
}

void path_detach(struct paths *t, struct node *node)
{
	/* Freed by release() at its forget: its parent still counts it. */
	index_drop(t, node);
	node->replaced = 1;
}

int path_rename(struct paths *t, struct node *node, struct node *parent,
		const char *name)
{
	enum node_kind k = path_classify(parent->kind, name);
	struct node *old, to;
	char *was = node->key;

	if (k == N_INVALID)
		return -EINVAL;
	memset(&to, 0, sizeof(to));
	to.parent = parent;
	to.kind = k;
	if (!describe(&to, name))
		return -ENOMEM;
	path_lock(t);
	/* Room first: the node leaves the index only if it can come back. */
	if (hash_reserve(&t->nodes, t->nodes.n + 1)) {
		path_unlock(t);
		free(to.key);
		return -ENOMEM;
	}
	old = find(t, parent, name);
	if (old && old != node)
		path_detach(t, old);
	index_drop(t, node);
	/* (Requests read the parent unlocked: written only if other.) */
	if (node->parent != parent) {
		node->parent->children--;
		parent->children++;
		node->parent = parent;
	}
	node->key = to.key;
	node->name = to.name;
	node->obj = to.obj;
	node->env = to.env;
	node->ver = to.ver;
	node->kind = k;
	retire(t, was);
	index_add(t, node);
	path_unlock(t);
	return 0;
}

void path_walk(struct paths *t, void (*fn)(void *arg, struct node *n),
	       void *arg)
{
	size_t i;

	path_lock(t);
	for (i = 0; i < t->nodes.cap; i++)
		if (t->nodes.v[i].key)
			fn(arg, (struct node *)t->nodes.v[i].val);
	path_unlock(t);
}
