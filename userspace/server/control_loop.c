// SPDX-License-Identifier: MIT
/*
 * Minos in xkv-server: the roles map the XDP program steers by, the rings the
 * workers hand requests over, the large keys the workers record, and the control
 * loop that, every epoch, turns the workers' size-class counts into new roles
 * (engine/minos_plan.h has the arithmetic; docs/DESIGN.md says why).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfctl/large_keys.h"
#include "engine/minos_plan.h"
#include "server/server.h"
#include "util/counters.h"

#define STOP_CHECK_NS 10000000L /* how often the control thread looks at s->stopping */

struct server_minos {
	struct xkv_roles_sync sync;
	struct xkv_handoffs handoffs;
	bool sync_ready, handoffs_ready;
	struct xkv_roles *slots; /* the xkv_roles map, mmapped: XKV_ROLES_SLOTS */
	size_t slots_len;
	int large_keys_fd;
	struct bpfctl_large_keys large_keys;
	pthread_t thread;
	bool thread_started;
	struct xkv_minos_hist hist;
	uint64_t seen[XKV_SIZE_CLASSES]; /* the workers' size-class counts at the last epoch */
	struct xkv_roles current;
};

static int large_key_record(void *ctx, uint64_t hash, uint32_t value_len)
{
	struct server_minos *m = ctx;

	return bpfctl_large_key_record(&m->large_keys, hash, value_len);
}

static void large_key_forget(void *ctx, uint64_t hash)
{
	struct server_minos *m = ctx;

	bpfctl_large_key_forget(&m->large_keys, hash);
}

/* Writes r into the slot XDP is not reading (the lower gen), its gen last. */
static void slots_write(struct server_minos *m, const struct xkv_roles *r)
{
	struct xkv_roles *slot = &m->slots[m->slots[0].gen <= m->slots[1].gen ? 0 : 1];
	struct xkv_roles body = *r;

	body.gen = slot->gen;
	memcpy(slot, &body, sizeof(body));
	__atomic_store_n(&slot->gen, r->gen, __ATOMIC_RELEASE);
}

/* The roles for this epoch's smoothed counts; gen left to the caller. */
static void plan(struct server *s, struct xkv_roles *out)
{
	xkv_minos_plan(&s->minos->hist, s->o.minos_percentile, s->o.workers, out);
	out->percentile_centi = (uint16_t)(s->o.minos_percentile * 100 + 0.5);
}

static bool same_roles(const struct xkv_roles *a, const struct xkv_roles *b)
{
	struct xkv_roles x = *a, y = *b;

	x.gen = y.gen = 0;
	return memcmp(&x, &y, sizeof(x)) == 0;
}

/* One epoch: the counts since the last, smoothed in; new roles if they differ. */
static void epoch(struct server *s)
{
	struct server_minos *m = s->minos;
	uint64_t total[XKV_SIZE_CLASSES] = {0}, sample[XKV_SIZE_CLASSES];
	struct xkv_worker_counters c;
	struct xkv_roles next;

	for (uint32_t w = 0; w < s->o.workers; w++)
		if (xkv_counters_read(&c, &s->counters.workers[w], sizeof(c)) == 0)
			for (int i = 0; i < XKV_SIZE_CLASSES; i++)
				total[i] += c.req.size_classes[i];
	for (int i = 0; i < XKV_SIZE_CLASSES; i++) {
		sample[i] = total[i] >= m->seen[i] ? total[i] - m->seen[i] : 0;
		m->seen[i] = total[i];
	}
	xkv_minos_ewma(&m->hist, sample, XKV_MINOS_ALPHA);
	plan(s, &next);
	if (same_roles(&next, &m->current))
		return;
	next.gen = m->current.gen + 1;
	slots_write(m, &next); /* steering first: a worker hands over what it gets by the old */
	xkv_roles_publish(&m->sync, &next);
	m->current = next;
	printf("xkv-server: minos roles %u: sizes up to class %u small, %u small and %u large "
	       "workers%s\n",
	       next.gen, next.threshold, next.nsmall, next.nlarge,
	       next.standby ? " (the large one a standby)" : "");
	fflush(stdout);
}

static void *control_thread(void *arg)
{
	struct server *s = arg;
	const uint64_t period = (uint64_t)s->o.minos_epoch_ms * 1000000;
	uint64_t next = xkv_now_ns() + period;

	while (!atomic_load(&s->stopping)) {
		struct timespec nap = {.tv_nsec = STOP_CHECK_NS};

		nanosleep(&nap, NULL);
		if (xkv_now_ns() < next)
			continue;
		epoch(s);
		next += period;
	}
	return NULL;
}

int server_minos_open(struct server *s)
{
	struct server_minos *m = calloc(1, sizeof(*m));
	struct xkv_roles first;
	int fd, err;

	if (!m)
		return -ENOMEM;
	s->minos = m;
	m->large_keys_fd = -1;
	fd = s->o.backend->map_open(s, "xkv_roles");
	if (fd < 0) {
		fprintf(stderr, "xkv-server: the roles map: %s\n", strerror(-fd));
		return fd;
	}
	m->slots = xkv_counters_map(fd, sizeof(*m->slots), XKV_ROLES_SLOTS, true, &m->slots_len);
	err = m->slots ? 0 : -errno;
	close(fd);
	if (err) {
		fprintf(stderr, "xkv-server: mapping the roles map: %s\n", strerror(-err));
		return err;
	}
	m->large_keys_fd = s->o.backend->map_open(s, "xkv_large_keys");
	if (m->large_keys_fd < 0) {
		fprintf(stderr, "xkv-server: the large keys map: %s\n", strerror(-m->large_keys_fd));
		return m->large_keys_fd;
	}
	fd = s->o.backend->map_open(s, "xkv_large_filter");
	err = fd < 0 ? fd : bpfctl_large_keys_open(&m->large_keys, m->large_keys_fd, fd);
	if (fd >= 0)
		close(fd);
	if (err) {
		fprintf(stderr, "xkv-server: the large keys' filter map: %s\n", strerror(-err));
		return err;
	}
	/* keys a previous server recorded name values this store does not hold */
	bpfctl_large_keys_clear(&m->large_keys);

	/* no counts yet: everyone small, one of them the standby large worker */
	plan(s, &first);
	first.gen = 1;
	memset(m->slots, 0, sizeof(*m->slots) * XKV_ROLES_SLOTS);
	slots_write(m, &first);
	m->current = first;
	err = xkv_roles_sync_init(&m->sync, s->o.workers, &first);
	if (err)
		return err;
	m->sync_ready = true;
	err = xkv_handoffs_init(&m->handoffs, s->o.workers);
	if (err)
		return err;
	m->handoffs_ready = true;
	return 0;
}

void server_minos_worker(struct server *s, struct server_worker *w)
{
	struct server_minos *m = s->minos;
	const struct xkv_large_keys keys = {
		.record = large_key_record, .forget = large_key_forget, .ctx = m};

	xkv_worker_minos(&w->proto, &m->sync, &m->handoffs, &keys);
}

int server_minos_start(struct server *s)
{
	int err = -pthread_create(&s->minos->thread, NULL, control_thread, s);

	s->minos->thread_started = !err;
	return err;
}

void server_minos_close(struct server *s)
{
	struct server_minos *m = s->minos;

	if (!m)
		return;
	/* s->stopping is set: the control thread ends within STOP_CHECK_NS */
	if (m->thread_started)
		pthread_join(m->thread, NULL);
	if (m->handoffs_ready)
		xkv_handoffs_fini(&m->handoffs);
	if (m->sync_ready)
		xkv_roles_sync_fini(&m->sync);
	if (m->slots)
		munmap(m->slots, m->slots_len);
	bpfctl_large_keys_close(&m->large_keys);
	if (m->large_keys_fd >= 0)
		close(m->large_keys_fd);
	free(m);
	s->minos = NULL;
}
