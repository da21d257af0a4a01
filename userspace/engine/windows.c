// SPDX-License-Identifier: MIT
#include "engine/ahead.h"
#include "engine/apply.h"
#include "engine/windows.h"
#include "engine/worker.h"

/*
 * A window closes: its one store write, then a reply to every PUT it held, then their
 * EWT holds. No PUT is answered before the write that carries its value (or a later
 * one) is applied (invariant 3), so a read that sees the old value while the window
 * is open overlaps every PUT in it, and linearizability allows it.
 */
static void window_close(struct xkv_worker *w, struct xkv_compact_window *win)
{
	const struct xkv_msg final = xkv_compact_final(win);
	uint64_t started = w->exec.start_ns;
	enum xkv_status status;

	/* its PUTs waited in the window until now: their service is its write and replies */
	if (w->exec.lat) {
		uint64_t now = xkv_fast_clock_now(&w->exec.clock);

		for (uint32_t i = 0; i < win->nputs; i++)
			w->exec.stats.compact_wait_ns += now - win->puts[i].held_ns;
		w->exec.start_ns = now;
	}
	status = xkv_apply_msg(w, &final, win->hash);
	for (uint32_t i = 0; i < win->nputs; i++) {
		const struct xkv_msg req = xkv_compact_request(win, i);

		/* on the socket it came on: a client's rx queue expects it there */
		xkv_reply_status(&w->exec, &win->puts[i].from, &req, status);
	}
	w->exec.start_ns = started; /* the request being handled, if any, goes on */
	w->exec.stats.compact_writes += win->nputs;
	if (win->nputs > w->exec.stats.compact_window_max)
		w->exec.stats.compact_window_max = win->nputs;
	xkv_holds_let_go(&w->holds, xkv_partition(win->hash), win->nputs);
	xkv_compact_free(w->compact, win);
}

void xkv_windows_close_all(struct xkv_worker *w)
{
	struct xkv_compact_window *win;

	while (w->compact && (win = xkv_compact_any(w->compact)))
		window_close(w, win);
}

void xkv_windows_close_key(struct xkv_worker *w, uint64_t hash, const struct xkv_msg *m)
{
	struct xkv_compact_window *win = w->compact ? xkv_compact_find(w->compact, hash, m) : NULL;

	if (win)
		window_close(w, win);
}

void xkv_windows_close_due(struct xkv_worker *w, uint64_t now_ns)
{
	struct xkv_compact_window *win;

	while (w->compact && w->compact->nopen && (win = xkv_compact_due(w->compact, now_ns)))
		window_close(w, win);
}

bool xkv_windows_take(struct xkv_worker *w, const struct xkv_origin *from,
		      const struct xkv_msg *m, uint64_t hash, bool writer)
{
	struct xkv_compact_window *win;

	if (!w->compact || w->exec.echo || !writer || !xkv_compact_fits(m))
		return false;
	win = xkv_compact_find(w->compact, hash, m);
	if (!win) {
		if (!xkv_ahead_put(w, hash, m))
			return false;
		win = xkv_compact_open(w->compact, hash, m, xkv_now_ns(), w->service_ns);
		if (!win)
			return false;
		w->exec.stats.compact_windows++;
	}
	xkv_exec_count_write(&w->exec, m); /* executed, in effect, when its window closes */
	if (xkv_compact_hold(win, m, from, w->exec.start_ns))
		window_close(w, win);
	return true;
}
