// SPDX-License-Identifier: MIT
/*
 * minos (Didona & Zwaenepoel, NSDI'19): the roles' owner writes a partition. The
 * roles move while steering uses the ones it read, so a write may reach another
 * worker: it goes to the owner, a large PUT as the item built here.
 */
#include "engine/handoff_send.h"
#include "engine/policy.h"
#include "engine/worker.h"

static uint32_t minos_writer(const struct xkv_worker *w, uint64_t hash)
{
	return xkv_roles_owner(&w->roles, xkv_partition(hash));
}

static int minos_foreign(struct xkv_worker *w, const struct xkv_origin *from,
			 const struct xkv_msg *m, uint64_t hash, uint32_t writer)
{
	/* a memcached SET (one datagram, and meta the item does not carry) goes whole */
	if (m->op == XKV_OP_PUT && m->mc.dialect == XKV_DIALECT_XKV &&
	    xkv_roles_is_large(&w->roles, xkv_size_class(m->value_len)))
		xkv_handoff_send_item(w, from, m, hash, writer);
	else
		xkv_handoff_send(w, XKV_HANDOFF_WRITE, writer, from, m, hash, NULL);
	return -1; /* the writer replies; or a hand-off failed here, and a resend should retry */
}

const struct xkv_policy_ops xkv_policy_minos = {
	.id = XKV_POLICY_MINOS,
	.writer = minos_writer,
	.foreign = minos_foreign,
};
