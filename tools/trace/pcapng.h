/* SPDX-License-Identifier: MIT */
/*
 * The few pcapng blocks xkv-trace record writes and check reads back (docs/TRACE.md,
 * "record"). libpcap 1.10 reads pcapng frames but can neither write pcapng nor show
 * its Interface Statistics Block, which is where a capture says how many frames the
 * kernel dropped. So record writes: a Section Header Block, one Interface
 * Description Block (nanosecond timestamps), an Enhanced Packet Block per frame,
 * and at the end an Interface Statistics Block with isb_ifrecv and isb_ifdrop.
 * tshark, capinfos and tcpreplay read such a file; check reads its frames with
 * libpcap and its drop count with trace_capture_drops().
 */
#ifndef XKV_TRACE_PCAPNG_H
#define XKV_TRACE_PCAPNG_H

#include <stdint.h>
#include <stdio.h>

struct trace_pcapng {
	FILE *file;
};

/*
 * Creates path and writes the section and interface headers: link type linktype
 * (a DLT_ value), snapshot length snaplen. Returns 0 or -errno.
 */
int trace_pcapng_create(struct trace_pcapng *out, const char *path, int linktype,
			uint32_t snaplen);

/* Appends a frame of len bytes, caplen of them captured, at ns after the epoch. */
int trace_pcapng_write(struct trace_pcapng *out, uint64_t ns, const uint8_t *frame,
		       uint32_t caplen, uint32_t len);

/* Writes out what is buffered, so a reader of the growing file sees every frame. */
int trace_pcapng_flush(struct trace_pcapng *out);

/*
 * Ends the capture at ns: an Interface Statistics Block with received (frames the
 * capture saw) and dropped (frames the kernel had no room for), then closes.
 * Returns 0 or -errno (the file is incomplete).
 */
int trace_pcapng_close(struct trace_pcapng *out, uint64_t ns, uint64_t received,
		       uint64_t dropped);

/*
 * The frames the capture at path lost: the isb_ifdrop of its last Interface
 * Statistics Block, summed over its interfaces. Returns 0 with *dropped set,
 * -ENODATA when the file says nothing of drops (a classic pcap file, or a pcapng
 * file without isb_ifdrop: a recording that did not end cleanly), -EIO when it
 * cannot be read, -EINVAL when it is neither pcap nor well-formed pcapng.
 */
int trace_capture_drops(const char *path, uint64_t *dropped);

#endif /* XKV_TRACE_PCAPNG_H */
