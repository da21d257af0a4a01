// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xkv/maps.h>

#include "util/latency.h"

#define LAST_BUCKET (XKV_LAT_BUCKETS - 1)

uint32_t xkv_lat_bucket(uint64_t ns)
{
	uint32_t octave, shift;

	if (ns < XKV_LAT_SUB)
		return (uint32_t)ns;
	/* ns has its top bit at 6 + octave - 1: octave 1 is [64, 128) */
	octave = 63 - (uint32_t)__builtin_clzll(ns) - (XKV_LAT_SUB_BITS - 1);
	if (octave >= XKV_LAT_OCTAVES)
		return LAST_BUCKET;
	shift = octave - 1;
	return octave * XKV_LAT_SUB + (uint32_t)(ns >> shift) - XKV_LAT_SUB;
}

uint64_t xkv_lat_bucket_low(uint32_t b)
{
	uint32_t octave = b / XKV_LAT_SUB, sub = b % XKV_LAT_SUB;

	if (!octave)
		return sub;
	return (uint64_t)(XKV_LAT_SUB + sub) << (octave - 1);
}

uint64_t xkv_lat_bucket_width(uint32_t b)
{
	uint32_t octave = b / XKV_LAT_SUB;

	return octave ? 1ULL << (octave - 1) : 1;
}

uint64_t xkv_lat_bucket_value(uint32_t b)
{
	return xkv_lat_bucket_low(b) + xkv_lat_bucket_width(b) / 2;
}

/* The chunk counting an octave of a histogram, taken from the pool on first use; NULL: none left. */
static struct xkv_latency_chunk *chunk_of(struct xkv_latency *l, __u16 *slot)
{
	uint64_t taken;
	__u16 c = *slot;

	if (c)
		return &l->chunks[c];
	/* chunk 0's first count is the pool's: every worker takes from it */
	if (__atomic_load_n(&l->chunks[0].count[0], __ATOMIC_RELAXED) + 1 >= XKV_LAT_CHUNKS)
		return NULL;
	taken = __atomic_fetch_add(&l->chunks[0].count[0], 1, __ATOMIC_RELAXED);
	if (taken + 1 >= XKV_LAT_CHUNKS)
		return NULL;
	c = (__u16)(taken + 1);
	/* the chunk is zero since the server cleared the pool: published to readers after */
	__atomic_store_n(slot, c, __ATOMIC_RELEASE);
	return &l->chunks[c];
}

void xkv_latency_record(struct xkv_latency *l, enum xkv_lat_op op, uint32_t cls,
			enum xkv_lat_interval interval, uint64_t ns)
{
	uint32_t b = xkv_lat_bucket(ns);
	struct xkv_latency_chunk *chunk;
	__u64 *count;

	if (cls >= XKV_SIZE_CLASSES)
		cls = XKV_SIZE_CLASSES - 1;
	chunk = chunk_of(l, &l->dir->chunk[op][cls][interval][b / XKV_LAT_SUB]);
	if (!chunk) {
		l->lost++;
		return;
	}
	/* one writer: a plain increment, in words a reader may load at any time */
	count = &chunk->count[b % XKV_LAT_SUB];
	__atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

void xkv_latency_request(struct xkv_latency *l, enum xkv_lat_op op, uint32_t cls,
			 uint64_t arrival, uint64_t start, uint64_t now)
{
	if (start < arrival)
		start = arrival;
	if (now < start)
		now = start;
	xkv_latency_record(l, op, cls, XKV_LAT_QUEUED, start - arrival);
	xkv_latency_record(l, op, cls, XKV_LAT_SERVED, now - start);
	xkv_latency_record(l, op, cls, XKV_LAT_TOTAL, now - arrival);
}

void xkv_lat_hist_add_dir(struct xkv_lat_hist *h, const struct xkv_latency_dir *dir,
			  const struct xkv_latency_chunk *chunks, enum xkv_lat_op op, uint32_t cls,
			  enum xkv_lat_interval interval)
{
	for (uint32_t o = 0; o < XKV_LAT_OCTAVES; o++) {
		__u16 c = __atomic_load_n(&dir->chunk[op][cls][interval][o], __ATOMIC_ACQUIRE);

		if (!c || c >= XKV_LAT_CHUNKS)
			continue;
		for (uint32_t s = 0; s < XKV_LAT_SUB; s++)
			h->count[o * XKV_LAT_SUB + s] +=
				__atomic_load_n(&chunks[c].count[s], __ATOMIC_RELAXED);
	}
}

void xkv_lat_hist_merge(struct xkv_lat_hist *h, const struct xkv_lat_hist *other)
{
	for (uint32_t b = 0; b < XKV_LAT_BUCKETS; b++)
		h->count[b] += other->count[b];
}

void xkv_lat_hist_sub(struct xkv_lat_hist *h, const struct xkv_lat_hist *earlier)
{
	for (uint32_t b = 0; b < XKV_LAT_BUCKETS; b++)
		h->count[b] = h->count[b] > earlier->count[b] ? h->count[b] - earlier->count[b] : 0;
}

uint64_t xkv_lat_hist_count(const struct xkv_lat_hist *h)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < XKV_LAT_BUCKETS; b++)
		n += h->count[b];
	return n;
}

uint64_t xkv_lat_hist_percentile(const struct xkv_lat_hist *h, double q)
{
	uint64_t n = xkv_lat_hist_count(h), rank, seen = 0;

	if (!n)
		return 0;
	rank = (uint64_t)(q * (double)n);
	if ((double)rank < q * (double)n || rank < 1)
		rank++; /* the ceiling: the rank-th smallest */
	for (uint32_t b = 0; b < XKV_LAT_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank)
			return xkv_lat_bucket_value(b);
	}
	return xkv_lat_bucket_value(LAST_BUCKET);
}

/* Class i holds value sizes [2^(i-1), 2^i): named by its upper bound, exclusive. */
static const char *const size_class_names[XKV_SIZE_CLASSES] = {
	"0", "lt2", "lt4", "lt8", "lt16", "lt32", "lt64", "lt128", "lt256", "lt512", "lt1k",
	"lt2k", "lt4k", "lt8k", "lt16k", "lt32k", "lt64k", "lt128k", "lt256k", "lt512k",
	"lt1m", "le1m"};

const char *xkv_size_class_name(uint32_t cls)
{
	return cls < XKV_SIZE_CLASSES ? size_class_names[cls] : "?";
}

#define XKV_LAT_NAME(name, str) str,
static const char *const op_names[XKV_LAT_OPS] = {XKV_LAT_OPS_LIST(XKV_LAT_NAME)};
static const char *const interval_names[XKV_LAT_INTERVALS] = {XKV_LAT_INTERVALS_LIST(XKV_LAT_NAME)};

const char *xkv_lat_op_name(enum xkv_lat_op op)
{
	return op < XKV_LAT_OPS ? op_names[op] : "?";
}

const char *xkv_lat_interval_name(enum xkv_lat_interval interval)
{
	return interval < XKV_LAT_INTERVALS ? interval_names[interval] : "?";
}

/* Whether worker w's directory names a chunk for (op, cls, interval) */
static bool hist_used(const struct xkv_latency_dir *dir, uint32_t op, uint32_t cls, uint32_t i)
{
	for (uint32_t o = 0; o < XKV_LAT_OCTAVES; o++)
		if (__atomic_load_n(&dir->chunk[op][cls][i][o], __ATOMIC_ACQUIRE))
			return true;
	return false;
}

/* Worker w's histogram key in v, less earlier's; false when it counted nothing since. */
static bool hist_of(const struct xkv_lat_view *v, const struct xkv_lat_view *earlier, uint32_t w,
		    const struct xkv_lat_key *k, struct xkv_lat_hist *h)
{
	struct xkv_lat_hist before;

	if (!hist_used(&v->dirs[w], k->op, k->cls, k->interval))
		return false;
	memset(h, 0, sizeof(*h));
	xkv_lat_hist_add_dir(h, &v->dirs[w], v->chunks, k->op, k->cls, k->interval);
	if (earlier && w < earlier->workers) {
		memset(&before, 0, sizeof(before));
		xkv_lat_hist_add_dir(&before, &earlier->dirs[w], earlier->chunks, k->op, k->cls,
				     k->interval);
		xkv_lat_hist_sub(h, &before);
	}
	return xkv_lat_hist_count(h) > 0;
}

void xkv_lat_each(const struct xkv_lat_view *v, const struct xkv_lat_view *earlier, xkv_lat_fn fn,
		  void *ctx)
{
	struct xkv_lat_hist *h = malloc(sizeof(*h)), *all = malloc(sizeof(*all));
	struct xkv_lat_key k;

	if (!h || !all)
		goto out_free;
	for (k.op = 0; k.op < XKV_LAT_OPS; k.op++)
		for (k.cls = 0; k.cls < XKV_SIZE_CLASSES; k.cls++)
			for (k.interval = 0; k.interval < XKV_LAT_INTERVALS; k.interval++) {
				bool any = false;

				memset(all, 0, sizeof(*all));
				for (uint32_t w = 0; w < v->workers; w++) {
					k.worker = (int32_t)w;
					if (!hist_of(v, earlier, w, &k, h))
						continue;
					any = true;
					fn(ctx, &k, h);
					xkv_lat_hist_merge(all, h);
				}
				k.worker = -1;
				if (any)
					fn(ctx, &k, all);
			}
out_free:
	free(all);
	free(h);
}

static size_t dirs_bytes(uint32_t workers)
{
	return (size_t)workers * sizeof(struct xkv_latency_dir);
}

static int view_alloc(struct xkv_lat_view *copy, uint32_t workers)
{
	void *dirs = calloc(workers ? workers : 1, sizeof(struct xkv_latency_dir));
	void *chunks = calloc(XKV_LAT_CHUNKS, sizeof(struct xkv_latency_chunk));

	*copy = (struct xkv_lat_view){.dirs = dirs, .chunks = chunks, .workers = workers};
	if (dirs && chunks)
		return 0;
	xkv_lat_view_free(copy);
	return -ENOMEM;
}

int xkv_lat_view_copy(const struct xkv_lat_view *v, struct xkv_lat_view *copy)
{
	int err = view_alloc(copy, v->workers);

	if (err)
		return err;
	memcpy((void *)copy->dirs, v->dirs, dirs_bytes(v->workers));
	/* a directory entry is written after its chunk was taken: read the chunks after */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy((void *)copy->chunks, v->chunks, XKV_LAT_CHUNKS * sizeof(*v->chunks));
	return 0;
}

void xkv_lat_view_free(struct xkv_lat_view *copy)
{
	free((void *)copy->dirs);
	free((void *)copy->chunks);
	*copy = (struct xkv_lat_view){0};
}

/* The file: magic, workers, the chunks in use, then the dirs and those chunks. */
struct saved_header {
	char magic[8];
	uint32_t workers, chunks;
	uint32_t dir_size, chunk_size;
};

static const char saved_magic[8] = "xkvlat1";

static uint32_t chunks_in_use(const struct xkv_lat_view *v)
{
	uint64_t n = v->chunks[0].count[0] + 1;

	return n < XKV_LAT_CHUNKS ? (uint32_t)n : XKV_LAT_CHUNKS;
}

int xkv_lat_view_save(const struct xkv_lat_view *v, const char *path)
{
	struct saved_header hdr = {.workers = v->workers, .chunks = chunks_in_use(v),
				   .dir_size = sizeof(*v->dirs), .chunk_size = sizeof(*v->chunks)};
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f)
		return -errno;
	memcpy(hdr.magic, saved_magic, sizeof(hdr.magic));
	if (fwrite(&hdr, sizeof(hdr), 1, f) != 1 ||
	    fwrite(v->dirs, sizeof(*v->dirs), v->workers, f) != v->workers ||
	    fwrite(v->chunks, sizeof(*v->chunks), hdr.chunks, f) != hdr.chunks)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int xkv_lat_view_load(const char *path, struct xkv_lat_view *copy)
{
	struct saved_header hdr;
	FILE *f = fopen(path, "rb");
	int err;

	if (!f)
		return -errno;
	if (fread(&hdr, sizeof(hdr), 1, f) != 1 || memcmp(hdr.magic, saved_magic, sizeof(hdr.magic)) ||
	    hdr.workers > XKV_WORKERS_MAX || hdr.chunks > XKV_LAT_CHUNKS ||
	    hdr.dir_size != sizeof(struct xkv_latency_dir) ||
	    hdr.chunk_size != sizeof(struct xkv_latency_chunk)) {
		fclose(f);
		return -EINVAL; /* not a snapshot, or of another build */
	}
	err = view_alloc(copy, hdr.workers);
	if (!err && (fread((void *)copy->dirs, sizeof(*copy->dirs), hdr.workers, f) != hdr.workers ||
		     fread((void *)copy->chunks, sizeof(*copy->chunks), hdr.chunks, f) != hdr.chunks)) {
		xkv_lat_view_free(copy);
		err = -EINVAL;
	}
	fclose(f);
	return err;
}

static void print_one(void *ctx, const struct xkv_lat_key *k, const struct xkv_lat_hist *h)
{
	FILE *out = ctx;

	if (k->worker >= 0)
		fprintf(out, "worker %d ", k->worker);
	fprintf(out,
		"latency %s %s %s: count %llu p50_ns %llu p99_ns %llu p999_ns %llu max_ns %llu\n",
		xkv_lat_op_name(k->op), xkv_size_class_name(k->cls),
		xkv_lat_interval_name(k->interval), (unsigned long long)xkv_lat_hist_count(h),
		(unsigned long long)xkv_lat_hist_percentile(h, 0.5),
		(unsigned long long)xkv_lat_hist_percentile(h, 0.99),
		(unsigned long long)xkv_lat_hist_percentile(h, 0.999),
		(unsigned long long)xkv_lat_hist_percentile(h, 1.0));
}

void xkv_lat_print(FILE *out, const struct xkv_lat_view *v, const struct xkv_lat_view *earlier)
{
	xkv_lat_each(v, earlier, print_one, out);
}
