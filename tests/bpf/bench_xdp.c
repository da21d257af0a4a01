// SPDX-License-Identifier: MIT
/*
 * Nanoseconds per packet of the xkv XDP program under BPF_PROG_RUN with repeat:
 * GETs and PUTs with 16- and 250-byte keys under every policy, beside two rows to
 * read them against, measured in the same run: a UDP datagram to another port
 * (what parsing alone costs) and a trivial XDP_PASS program (the cost of running
 * any program at all). The default policy's GET and PUT run once more without the
 * arrival stamp (the server's --latency off): the difference is what the stamp costs.
 * The coherence directory's program (bpf/dir.bpf.c) runs beside it: a datagram it
 * passes to the kernel, a request for a key it does not hold (forwarded as it is), a
 * replicated read and write, and a steered reply (its replica-set update under the
 * entry's lock).
 * Rounds interleave the rows, so a noisy neighbour slows them
 * all alike; the ratio to the parse-only row is the figure to compare across
 * machines, not the absolute time.
 *
 *   bench-xdp [--rounds N] [--repeat N]   (make test's smoke run: --rounds 1 --repeat 1000)
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpfctl/large_keys.h"
#include "xkv/ewt.h"
#include "xkv/hash.h"
#include "xkv/roles.h"
#include "util/opts.h"
#include "xdp_pass.skel.h"
#include "dir_fixture.h"
#include "fixture.h"
#include "packet.h"

#define REPEAT	   1000000 /* packets per row and round, unless --repeat */
#define ROUNDS	   7	   /* median of these, unless --rounds */
#define ROUNDS_MAX 99
#define REPEAT_MAX 100000000 /* BPF_PROG_RUN's repeat is an int */
#define WORKERS	   4

enum program { PROG_XKV, PROG_PASS, PROG_DIR };

struct bench_row {
	char name[48];
	enum program prog;
	enum xkv_policy policy;
	struct pkt_spec pkt;
	__u32 verdict;
	bool no_stamp; /* the config's no_arrival_stamp */
	enum xkv_dir_select select; /* the directory's strategy */
	__u32 ns[ROUNDS_MAX];
};

#define PARSE_ONLY 1 /* the row the others are read against */
#define KEY16	   "user:00000000042"
#define LARGE_KEY  "big:000000000042" /* recorded in xkv_large_keys: minos steers its GET */
#define HOT_KEY	   "hot:000000000042" /* replicated by the directory, on servers 0 and 1 */
#define DIR_ROWS   (5 + XKV_DIR_SELECT_MAX - 1)

static size_t dir_forward; /* the directory's first row: then a request it forwards as it is */

/* The directory's rows: what it forwards, then what it reads, steers and learns. */
static size_t dir_rows_build(struct bench_row *rows)
{
	const struct xkv_dir_ext reply_ext = {
		.key_hash = htobe64(xkv_hash(HOT_KEY, sizeof(HOT_KEY) - 1)),
		.ver = htobe64(1), .target = 0, .dflags = XKV_DIR_STEERED};
	const struct pkt_spec to_server = {.dir = true, .src = DIR_CLIENT, .dst = "10.0.1.1"};
	size_t n = 0, read;

	rows[n] = (struct bench_row){.name = "dir: UDP to another port (to the kernel)",
				     .prog = PROG_DIR, .pkt = to_server, .verdict = XDP_PASS};
	rows[n++].pkt.dport = 53;
	rows[n] = (struct bench_row){.name = "dir: GET, not replicated (forwarded)", .prog = PROG_DIR,
				     .pkt = to_server, .verdict = XDP_PASS};
	snprintf(rows[n++].pkt.key, sizeof(rows[0].pkt.key), "%s", KEY16);
	read = n;
	rows[n] = (struct bench_row){.name = "dir: GET, replicated (read)", .prog = PROG_DIR,
				     .pkt = to_server, .verdict = XDP_PASS};
	snprintf(rows[n++].pkt.key, sizeof(rows[0].pkt.key), "%s", HOT_KEY);
	/* the same read, chosen by each other strategy (the first is round-robin's) */
	for (__u32 s = XKV_DIR_SELECT_ROUND_ROBIN + 1; s < XKV_DIR_SELECT_MAX; s++, n++) {
		rows[n] = rows[read];
		rows[n].select = s;
		snprintf(rows[n].name, sizeof(rows[n].name), "dir: GET, replicated (read, %s)",
			 xkv_dir_select_name(s));
	}
	rows[n] = rows[read];
	snprintf(rows[n].name, sizeof(rows[n].name), "dir: PUT, replicated (write)");
	rows[n].pkt.op = XKV_OP_PUT;
	rows[n].pkt.value_len = rows[n].pkt.frag_len = 64;
	n++;
	rows[n] = (struct bench_row){.name = "dir: reply to a replicated read",
				     .prog = PROG_DIR,
				     .pkt = {.op = XKV_OP_GET | XKV_OP_REPLY, .dir = true,
					     .no_key = true, .src = "10.0.1.2", .dst = DIR_CLIENT,
					     .dport = 40000, .sport = PKT_PORT, .dir_ext = reply_ext},
				     .verdict = XDP_PASS};
	return n + 1; /* the reply row */
}

/* The rows: the two baselines, then each request under each policy. */
static size_t rows_build(struct bench_row *rows)
{
	static const struct {
		const char *name;
		struct pkt_spec pkt;
	} requests[] = {
		{"GET, 16 B key", {.key = KEY16}},
		{"GET, 250 B key", {.key_fill = XKV_KEY_MAX}},
		{"PUT, 16 B key, 64 B value",
		 {.key = KEY16, .op = XKV_OP_PUT, .value_len = 64, .frag_len = 64}},
		{"PUT, 250 B key, 64 B value",
		 {.key_fill = XKV_KEY_MAX, .op = XKV_OP_PUT, .value_len = 64, .frag_len = 64}},
	};
	size_t n = 0;

	rows[n++] = (struct bench_row){.name = "XDP_PASS, bare program", .prog = PROG_PASS,
				       .pkt = {.key = KEY16}, .verdict = XDP_PASS};
	rows[n++] = (struct bench_row){.name = "UDP to another port (parse)", .prog = PROG_XKV,
				       .pkt = {.dport = 53}, .verdict = XDP_PASS};
	for (enum xkv_policy p = 0; p < XKV_POLICY_END; p++)
		for (size_t r = 0; r < sizeof(requests) / sizeof(requests[0]); r++) {
			rows[n] = (struct bench_row){.prog = PROG_XKV, .policy = p,
						     .pkt = requests[r].pkt,
						     .verdict = XDP_REDIRECT};
			snprintf(rows[n].name, sizeof(rows[n].name), "%s: %s", xkv_policy_name(p),
				 requests[r].name);
			n++;
			/* the default's 16-byte GET and PUT again, next to it, unstamped */
			if (p != XKV_POLICY_XKV || requests[r].pkt.key_fill)
				continue;
			rows[n] = rows[n - 1];
			rows[n].no_stamp = true;
			snprintf(rows[n].name, sizeof(rows[n].name), "xkv: %.3s, 16 B key, no stamp",
				 requests[r].name);
			n++;
		}
	rows[n++] = (struct bench_row){.name = "minos: GET, recorded large key",
				       .prog = PROG_XKV,
				       .policy = XKV_POLICY_MINOS,
				       .pkt = {.key = LARGE_KEY},
				       .verdict = XDP_REDIRECT};
	dir_forward = n;
	return n + dir_rows_build(rows + n);
}

/*
 * Minos's roles for the rows: workers 0 and 1 small, 2 and 3 large, values over a
 * datagram large; LARGE_KEY's value recorded as 500 KB.
 */
static int minos_roles(struct fixture *f)
{
	struct xkv_roles r = {.gen = 1, .threshold = 11, .nsmall = 2, .nlarge = 2};
	__u64 hash = xkv_hash(LARGE_KEY, sizeof(LARGE_KEY) - 1);
	struct bpfctl_large_keys large;
	__u32 slot = 0;
	int err;

	r.small[0] = 0, r.small[1] = 1, r.large[0] = 2, r.large[1] = 3;
	for (int c = r.threshold + 1; c < XKV_SIZE_CLASSES; c++)
		r.classes[c] = (struct xkv_class_workers){.first = 0, .count = 2};
	if (bpf_map_update_elem(bpf_map__fd(f->skel->maps.xkv_roles), &slot, &r, BPF_ANY))
		return -errno;
	err = bpfctl_large_keys_open(&large, bpf_map__fd(f->skel->maps.xkv_large_keys),
				     bpf_map__fd(f->skel->maps.xkv_large_filter));
	if (err)
		return err;
	err = bpfctl_large_key_record(&large, hash, 500000);
	bpfctl_large_keys_close(&large);
	return err;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static __u32 median(__u32 *ns, __u32 rounds)
{
	qsort(ns, rounds, sizeof(ns[0]), cmp_u32);
	return ns[rounds / 2];
}

/*
 * Nothing releases EWT slots here, so a row of writes the EWT claims (dcrew's, xkv's
 * in one datagram: xkv_ewt_claimed) runs in calls of at most as many packets as a slot
 * takes, each from an empty table: the first takes the slot, the others join. About
 * repeat packets in all, like the other rows, and at least one call.
 */
static __u32 ewt_repeat(__u32 repeat)
{
	return repeat < XKV_EWT_WRITES_MAX ? repeat : XKV_EWT_WRITES_MAX;
}

static __u32 ewt_calls(__u32 repeat)
{
	return repeat / ewt_repeat(repeat);
}

/* One round of one row, repeat packets: its time goes to row->ns[round]. */
static int run_row(struct fixture *f, int pass_fd, struct dir_bpf *dir, struct bench_row *row,
		   int round, __u32 repeat)
{
	struct xkv_config cfg = {.port = PKT_PORT, .workers = WORKERS, .policy = row->policy,
				 .no_arrival_stamp = row->no_stamp};
	int prog_fd = row->prog == PROG_PASS ? pass_fd
		      : row->prog == PROG_DIR ? bpf_program__fd(dir->progs.xkv_dir)
					      : bpf_program__fd(f->skel->progs.xkv_xdp);
	bool ewt = row->prog == PROG_XKV &&
		   xkv_ewt_claimed(row->policy, row->pkt.op, row->pkt.frag_len, row->pkt.value_len);
	__u32 calls = ewt ? ewt_calls(repeat) : 1;
	struct pkt_layout layout;
	__u8 pkt[PKT_SIZE_MAX];
	__u32 got, ns;
	__u64 sum = 0;
	int err;

	err = row->prog == PROG_DIR ? dir_fixture_config(dir, row->select, (1u << DIR_SERVERS) - 1)
				    : fixture_config(f, &cfg);
	if (err)
		return err;
	pkt_build(&row->pkt, pkt, &layout);
	for (__u32 call = 0; call < calls; call++) {
		err = ewt ? fixture_ewt_reset(f) : 0;
		if (!err)
			err = xdp_run(prog_fd, pkt, layout.len, ewt ? ewt_repeat(repeat) : repeat,
				      &got, &ns);
		if (err)
			return err;
		sum += ns;
	}
	row->ns[round] = sum / calls;
	if (got != row->verdict) {
		fprintf(stderr, "bench-xdp: %s: verdict %u, expected %u\n", row->name, got,
			row->verdict);
		return -EINVAL;
	}
	return 0;
}

/* What stamped costs over unstamped, the same packet run back to back in each round. */
static int stamp_cost(const struct bench_row *stamped, const struct bench_row *unstamped,
		      __u32 rounds)
{
	int diff[ROUNDS_MAX];

	for (__u32 r = 0; r < rounds; r++)
		diff[r] = (int)stamped->ns[r] - (int)unstamped->ns[r];
	qsort(diff, rounds, sizeof(diff[0]), cmp_int);
	return diff[rounds / 2];
}

enum { OPT_ROUNDS, OPT_REPEAT, OPT_HELP };

static const struct xkv_opt options[] = {
	[OPT_ROUNDS] = {"rounds", 'r', "N", "rounds, the median taken (" XKV_OPTS_STR(ROUNDS) ")"},
	[OPT_REPEAT] = {"repeat", 'n', "N",
			"packets per row and round (" XKV_OPTS_STR(REPEAT) ")"},
	[OPT_HELP] = {"help", 'h', NULL, "show this help"},
};

int main(int argc, char **argv)
{
	const struct xkv_config cfg = {.port = PKT_PORT, .workers = WORKERS};
	struct bench_row rows[2 + XKV_POLICY_END * 4 + 1 + 2 + DIR_ROWS];
	const struct xkv_dir_entry hot = {.rset = 1u << 0 | 1u << 1, .ver_curr = 1, .ver_next = 1};
	struct xdp_pass_bpf *baseline;
	struct dir_bpf *dir;
	size_t nrows = rows_build(rows);
	__u32 parse_ns, rounds = ROUNDS, repeat = REPEAT;
	struct xkv_opts p;
	struct fixture f;
	int opt, err, ret = 1;

	err = xkv_opts_init(&p, options, XKV_OPTS_COUNT(options), 0);
	while (!err && (opt = xkv_opts_next(&p, argc, argv)) != XKV_OPTS_END) {
		switch (opt) {
		case OPT_ROUNDS:
			err = xkv_opts_u32(&p, 1, ROUNDS_MAX, &rounds);
			break;
		case OPT_REPEAT:
			err = xkv_opts_u32(&p, 1, REPEAT_MAX, &repeat);
			break;
		case OPT_HELP:
			printf("usage: bench-xdp [options]\n"
			       "Nanoseconds per packet of the XDP program under BPF_PROG_RUN.\n");
			xkv_opts_usage(stdout, options, XKV_OPTS_COUNT(options));
			return 0;
		default:
			err = opt;
		}
	}
	if (err || optind < argc) {
		fprintf(stderr, "bench-xdp: %s (--help for usage)\n",
			err ? p.why : "no operand is taken");
		return 2;
	}

	err = fixture_open(&f, &cfg, WORKERS);
	if (!err)
		err = minos_roles(&f);
	if (err) {
		fprintf(stderr, "bench-xdp: load the xkv program: %s\n", strerror(-err));
		goto out_close_fixture;
	}
	baseline = xdp_pass_bpf__open_and_load();
	if (!baseline) {
		fprintf(stderr, "bench-xdp: load the XDP_PASS program: %s\n", strerror(errno));
		goto out_close_fixture;
	}
	dir = dir_fixture_open();
	err = dir ? dir_fixture_replicate(dir, HOT_KEY, &hot) : -errno;
	if (err) {
		fprintf(stderr, "bench-xdp: load the directory's program: %s\n", strerror(-err));
		goto out_destroy_dir;
	}
	for (__u32 round = 0; round < rounds; round++) {
		fprintf(stderr, "\rbench-xdp: round %u of %u", round + 1, rounds);
		for (size_t i = 0; i < nrows; i++) {
			err = run_row(&f, bpf_program__fd(baseline->progs.xdp_pass), dir, &rows[i],
				      round, repeat);
			if (err) {
				fprintf(stderr, "\nbench-xdp: %s: %s\n", rows[i].name,
					strerror(-err));
				goto out_destroy_dir;
			}
		}
	}
	fprintf(stderr, "\n");
	parse_ns = median(rows[PARSE_ONLY].ns, rounds);
	printf("BPF_PROG_RUN, %d workers, median of %u interleaved rounds x %u packets "
	       "(writes the EWT claims: %u x %u)\n",
	       WORKERS, rounds, repeat, ewt_calls(repeat), ewt_repeat(repeat));
	printf("%-42s %8s %9s\n", "packet", "ns", "x parse");
	for (size_t i = 0; i < nrows; i++) {
		__u32 ns = median(rows[i].ns, rounds);

		printf("%-42s %8u %8.1fx\n", rows[i].name, ns, (double)ns / (parse_ns ? parse_ns : 1));
	}
	for (size_t i = 1; i < nrows; i++)
		if (rows[i].no_stamp)
			printf("arrival stamp, xkv %s with a 16 B key: %+d ns (median of the rounds' "
			       "differences)\n", rows[i].pkt.op == XKV_OP_PUT ? "PUT" : "GET",
			       stamp_cost(&rows[i - 1], &rows[i], rounds));
	printf("directory: a replicated read costs %.2fx a request it forwards as it is\n",
	       (double)median(rows[dir_forward + 2].ns, rounds) /
		       (median(rows[dir_forward + 1].ns, rounds) ?: 1));
	ret = 0;
out_destroy_dir:
	dir_bpf__destroy(dir);
	xdp_pass_bpf__destroy(baseline);
out_close_fixture:
	fixture_close(&f);
	return ret;
}
