// SPDX-License-Identifier: MIT
/* The pcapng blocks of record's captures (pcapng.h): draft-ietf-opsawg-pcapng. */
#include <byteswap.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "pcapng.h"

#define BT_SHB 0x0a0d0d0a /* Section Header Block */
#define BT_IDB 1	  /* Interface Description Block */
#define BT_ISB 5	  /* Interface Statistics Block */
#define BT_EPB 6	  /* Enhanced Packet Block */

#define BYTE_ORDER_MAGIC 0x1a2b3c4d
#define PCAP_MAGIC_US	 0xa1b2c3d4 /* classic pcap, microseconds */
#define PCAP_MAGIC_NS	 0xa1b23c4d /* classic pcap, nanoseconds */

#define OPT_END		0
#define OPT_IF_TSRESOL	9 /* IDB: timestamp units; 9 is 10^-9 s */
#define OPT_ISB_IFRECV	4
#define OPT_ISB_IFDROP	5

#define BLOCK_MAX  (1u << 24) /* larger is corrupt: frames here are at most 64 KiB */
#define ISB_MAX	   4096	      /* an ISB holds a few counters: larger is corrupt */
#define IFACES_MAX 256	      /* interfaces a section may describe */

/* An option header: code, length; its value follows, padded to 4 bytes. */
struct opt {
	uint16_t code, len;
};

static int put(struct trace_pcapng *out, const void *data, size_t len)
{
	return fwrite(data, 1, len, out->file) == len ? 0 : -EIO;
}

/* A block: type, total length, body (already a multiple of 4 bytes), total length. */
static int put_block(struct trace_pcapng *out, uint32_t type, const void *body, uint32_t len)
{
	uint32_t head[2] = {type, len + 12};

	if (put(out, head, sizeof(head)) || put(out, body, len) ||
	    put(out, &head[1], sizeof(head[1])))
		return -EIO;
	return 0;
}

int trace_pcapng_create(struct trace_pcapng *out, const char *path, int linktype, uint32_t snaplen)
{
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int64_t section_len; /* -1: not given */
		struct opt end;
	} __attribute__((packed)) shb = {BYTE_ORDER_MAGIC, 1, 0, -1, {OPT_END, 0}};
	struct {
		uint16_t linktype, reserved;
		uint32_t snaplen;
		struct opt tsresol;
		uint8_t units, pad[3];
		struct opt end;
	} __attribute__((packed)) idb = {(uint16_t)linktype, 0, snaplen, {OPT_IF_TSRESOL, 1}, 9, {0}, {OPT_END, 0}};

	_Static_assert(sizeof(shb) == 20 && sizeof(idb) == 20, "pcapng block bodies are packed");
	out->file = fopen(path, "wb");
	if (!out->file)
		return -errno;
	if (put_block(out, BT_SHB, &shb, sizeof(shb)) || put_block(out, BT_IDB, &idb, sizeof(idb))) {
		fclose(out->file);
		out->file = NULL;
		return -EIO;
	}
	return 0;
}

int trace_pcapng_write(struct trace_pcapng *out, uint64_t ns, const uint8_t *frame, uint32_t caplen,
		       uint32_t len)
{
	static const uint8_t zeros[3];
	uint32_t pad = -caplen & 3;
	uint32_t head[7] = {BT_EPB, 32 + caplen + pad, 0, (uint32_t)(ns >> 32), (uint32_t)ns,
			    caplen, len};

	if (put(out, head, sizeof(head)) || put(out, frame, caplen) || put(out, zeros, pad) ||
	    put(out, &head[1], sizeof(head[1])))
		return -EIO;
	return 0;
}

int trace_pcapng_flush(struct trace_pcapng *out)
{
	return fflush(out->file) ? -errno : 0;
}

int trace_pcapng_close(struct trace_pcapng *out, uint64_t ns, uint64_t received, uint64_t dropped)
{
	struct {
		uint32_t iface, ts_high, ts_low;
		struct opt recv_opt;
		uint64_t recv;
		struct opt drop_opt;
		uint64_t drop;
		struct opt end;
	} __attribute__((packed)) isb = {
		0, (uint32_t)(ns >> 32), (uint32_t)ns, {OPT_ISB_IFRECV, 8}, received,
		{OPT_ISB_IFDROP, 8}, dropped, {OPT_END, 0},
	};
	int ret;

	_Static_assert(sizeof(isb) == 40, "the ISB body is packed");
	ret = put_block(out, BT_ISB, &isb, sizeof(isb));
	if (fclose(out->file) && !ret)
		ret = -errno;
	out->file = NULL;
	return ret;
}

static uint32_t u32_at(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? bswap_32(v) : v;
}

static uint16_t u16_at(const uint8_t *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? bswap_16(v) : v;
}

/* An ISB's isb_ifdrop into drops[its interface] (body: the block without type and lengths). */
static int read_isb(const uint8_t *body, uint32_t len, bool swap, uint64_t *drops, bool *known)
{
	uint32_t iface, off = 12;

	if (len < off)
		return -EINVAL;
	iface = u32_at(body, swap);
	if (iface >= IFACES_MAX)
		return -EINVAL;
	while (off + 4 <= len) {
		uint16_t code = u16_at(body + off, swap), olen = u16_at(body + off + 2, swap);

		off += 4;
		if (code == OPT_END || off + olen > len)
			break;
		if (code == OPT_ISB_IFDROP && olen == 8) {
			uint64_t v;

			memcpy(&v, body + off, sizeof(v));
			drops[iface] = swap ? bswap_64(v) : v;
			known[iface] = true;
		}
		off += (olen + 3u) & ~3u;
	}
	return 0;
}

/* Adds the section's last count of each interface to *total, and forgets them. */
static void end_section(uint64_t *drops, bool *known, bool *any, uint64_t *total)
{
	for (int i = 0; i < IFACES_MAX; i++) {
		if (known[i]) {
			*total += drops[i];
			*any = true;
		}
	}
	memset(drops, 0, IFACES_MAX * sizeof(*drops));
	memset(known, 0, IFACES_MAX * sizeof(*known));
}

int trace_capture_drops(const char *path, uint64_t *dropped)
{
	uint8_t body[ISB_MAX];
	uint64_t drops[IFACES_MAX] = {0}, total = 0;
	bool known[IFACES_MAX] = {0}, any = false, swap = false;
	uint32_t head[2];
	FILE *f;
	int ret = -EINVAL;

	f = fopen(path, "rb");
	if (!f)
		return -EIO;
	if (fread(head, sizeof(head), 1, f) != 1)
		goto out_close;
	if (head[0] != BT_SHB) {
		uint32_t magic = head[0];

		if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS ||
		    bswap_32(magic) == PCAP_MAGIC_US || bswap_32(magic) == PCAP_MAGIC_NS)
			ret = -ENODATA;
		goto out_close;
	}
	rewind(f);
	while (fread(head, sizeof(head), 1, f) == 1) {
		uint32_t type = head[0], len;

		if (type == BT_SHB) { /* its byte order holds until the next one */
			if (fread(body, 4, 1, f) != 1)
				goto out_close;
			if (u32_at(body, false) != BYTE_ORDER_MAGIC &&
			    u32_at(body, true) != BYTE_ORDER_MAGIC)
				goto out_close;
			swap = u32_at(body, false) != BYTE_ORDER_MAGIC;
			end_section(drops, known, &any, &total);
			len = u32_at((const uint8_t *)&head[1], swap);
			if (len < 16 || len > BLOCK_MAX || len % 4 || fseek(f, len - 12, SEEK_CUR))
				goto out_close;
			continue;
		}
		type = u32_at((const uint8_t *)&head[0], swap);
		len = u32_at((const uint8_t *)&head[1], swap);
		if (len < 12 || len > BLOCK_MAX || len % 4)
			goto out_close;
		if (type != BT_ISB) { /* frames and the rest: skipped, trailing length too */
			if (fseek(f, len - 8, SEEK_CUR))
				goto out_close;
			continue;
		}
		if (len > ISB_MAX || fread(body, len - 8, 1, f) != 1 || read_isb(body, len - 12, swap, drops, known))
			goto out_close;
	}
	ret = ferror(f) ? -EIO : 0;
	end_section(drops, known, &any, &total);
	if (!ret && !any)
		ret = -ENODATA;
	*dropped = total;
out_close:
	fclose(f);
	return ret;
}
