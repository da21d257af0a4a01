// SPDX-License-Identifier: MIT
/*
 * The XDP program under BPF_PROG_RUN: each crafted packet must get its verdict
 * and grow exactly its one counter (a drop reason, "passed", or one worker's
 * steered count), and steering must agree with include/xkv/hash.h.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include "xkv/hash.h"
#include "xkv/memcached.h"
#include "xkv/roles.h"
#include "bpfctl/large_keys.h"
#include "net/xsk.h"
#include "fixture.h"
#include "packet.h"
#include "skip.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define WORKERS	      4
#define STEERED	      (-1) /* expected counter: one worker's steered count */

#define IPV4_MF	       0x2000
#define IPV6_FRAG_MORE 0x0001
#define BODY	       100 /* value bytes of a one-datagram PUT */

#define MC_ASCII  PKT_MC_ASCII
#define MC_BINARY PKT_MC_BINARY

static const struct xkv_config erew = {
	.port = PKT_PORT, .memcached_port = PKT_MC_PORT, .workers = WORKERS};
static const struct xkv_config crew = {.port = PKT_PORT,
				       .memcached_port = PKT_MC_PORT,
				       .workers = WORKERS,
				       .policy = XKV_POLICY_CREW};

/* every test loads the XDP program and runs it with BPF_PROG_RUN */
const char *suite_skip_reason(void)
{
	return skip_reason_bpf(BPF_PROG_TYPE_XDP);
}

struct row {
	char name[32];
	struct pkt_spec pkt;
	__u32 verdict;
	int counter; /* stats slot, or STEERED */
};

static const struct row rows[] = {
	/* every op, every way of carrying it */
	{"get", {0}, XDP_REDIRECT, STEERED},
	{"put", {.op = XKV_OP_PUT, .value_len = BODY, .frag_len = BODY}, XDP_REDIRECT, STEERED},
	{"put_middle_piece",
	 {.op = XKV_OP_PUT, .value_len = 5000, .frag_offset = 1400, .frag_len = 1200},
	 XDP_REDIRECT,
	 STEERED},
	{"put_empty_value", {.op = XKV_OP_PUT}, XDP_REDIRECT, STEERED},
	{"delete", {.op = XKV_OP_DELETE}, XDP_REDIRECT, STEERED},
	{"key_1_byte", {.key = "k"}, XDP_REDIRECT, STEERED},
	{"key_250_bytes", {.key_fill = 250}, XDP_REDIRECT, STEERED},
	{"ipv4_options", {.ip_opts = 8}, XDP_REDIRECT, STEERED},
	{"ipv4_options_40", {.ip_opts = 40, .op = XKV_OP_DELETE}, XDP_REDIRECT, STEERED},
	{"vlan", {.vlan = true}, XDP_REDIRECT, STEERED},
	{"vlan_ipv6", {.vlan = true, .ipv6 = true}, XDP_REDIRECT, STEERED},
	{"ipv6", {.ipv6 = true}, XDP_REDIRECT, STEERED},
	{"ipv6_put",
	 {.ipv6 = true, .op = XKV_OP_PUT, .value_len = BODY, .frag_len = BODY},
	 XDP_REDIRECT,
	 STEERED},
	{"ipv6_hopopts_dstopts",
	 {.ipv6 = true, .n_ext = 2, .ext = {IPPROTO_HOPOPTS, IPPROTO_DSTOPTS}},
	 XDP_REDIRECT,
	 STEERED},
	{"ipv6_4_ext_headers",
	 {.ipv6 = true,
	  .n_ext = 4,
	  .ext = {IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS}},
	 XDP_REDIRECT,
	 STEERED},
	{"link_padding", {.trailer = 20}, XDP_REDIRECT, STEERED},

	/* not xkv: passed untouched */
	{"other_port", {.dport = PKT_PORT + 1}, XDP_PASS, XKV_STAT_PASSED},
	{"ipv6_other_port", {.ipv6 = true, .dport = 53}, XDP_PASS, XKV_STAT_PASSED},
	{"tcp", {.l4 = IPPROTO_TCP}, XDP_PASS, XKV_STAT_PASSED},
	{"icmp", {.l4 = IPPROTO_ICMP}, XDP_PASS, XKV_STAT_PASSED},
	{"ipv6_esp", {.ipv6 = true, .l4 = IPPROTO_ESP}, XDP_PASS, XKV_STAT_PASSED},
	{"arp", {.ethertype = ETH_P_ARP}, XDP_PASS, XKV_STAT_PASSED},
	{"two_vlan_tags", {.qinq = true}, XDP_PASS, XKV_STAT_PASSED},
	{"ipv4_later_fragment", {.frag = 185}, XDP_PASS, XKV_STAT_PASSED},
	{"ipv4_last_fragment", {.frag = 185 | IPV4_MF}, XDP_PASS, XKV_STAT_PASSED},
	{"ipv6_later_fragment",
	 {.ipv6 = true, .n_ext = 1, .ext = {IPPROTO_FRAGMENT}, .frag = 1480},
	 XDP_PASS,
	 XKV_STAT_PASSED},
	{"ipv6_5_ext_headers",
	 {.ipv6 = true,
	  .n_ext = 5,
	  .ext = {IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING, IPPROTO_ROUTING,
		  IPPROTO_DSTOPTS}},
	 XDP_PASS,
	 XKV_STAT_PASSED},

	/* malformed below xkv */
	{"ipv4_first_fragment", {.frag = IPV4_MF}, XDP_DROP, XKV_R_IP_FRAGMENT},
	{"ipv6_first_fragment",
	 {.ipv6 = true, .n_ext = 1, .ext = {IPPROTO_FRAGMENT}, .frag = IPV6_FRAG_MORE},
	 XDP_DROP,
	 XKV_R_IP_FRAGMENT},
	{"ipv6_atomic_fragment",
	 {.ipv6 = true, .n_ext = 1, .ext = {IPPROTO_FRAGMENT}},
	 XDP_DROP,
	 XKV_R_IP_FRAGMENT},
	/* not addressed to this interface's unicast MAC and IP, or from a group address */
	{"dest_ip_not_ours", {.dst = "192.0.2.55"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"dest_ip_allowed_net_not_ours", {.dst = "10.0.0.3"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"dest_ip_subnet_broadcast", {.dst = "10.255.255.255"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"dest_ip_broadcast", {.dst = "255.255.255.255"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"dest_ip_multicast", {.dst = "224.0.0.1"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"ipv6_dest_not_ours", {.ipv6 = true, .dst = "fd00::3"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"ipv6_dest_multicast", {.ipv6 = true, .dst = "ff02::1"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"vlan_dest_not_ours", {.vlan = true, .dst = "10.0.0.3"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"dest_mac_broadcast", {.eth_dst = "ff:ff:ff:ff:ff:ff"}, XDP_DROP, XKV_R_BAD_DEST_MAC},
	{"dest_mac_multicast", {.eth_dst = "01:00:5e:00:00:01"}, XDP_DROP, XKV_R_BAD_DEST_MAC},
	{"ipv6_dest_mac_multicast",
	 {.ipv6 = true, .eth_dst = "33:33:00:00:00:01"},
	 XDP_DROP,
	 XKV_R_BAD_DEST_MAC},
	{"dest_mac_other_host", {.eth_dst = "02:00:00:00:00:03"}, XDP_DROP, XKV_R_BAD_DEST_MAC},
	{"source_mac_multicast", {.eth_src = "01:00:5e:00:00:01"}, XDP_DROP,
	 XKV_R_MULTICAST_SOURCE},
	{"source_mac_broadcast", {.eth_src = "ff:ff:ff:ff:ff:ff"}, XDP_DROP,
	 XKV_R_MULTICAST_SOURCE},
	{"source_ip_broadcast", {.src = "255.255.255.255"}, XDP_DROP, XKV_R_MULTICAST_SOURCE},
	{"source_ip_subnet_broadcast", {.src = "10.255.255.255"}, XDP_DROP,
	 XKV_R_MULTICAST_SOURCE},
	{"source_ip_multicast", {.src = "224.0.0.1"}, XDP_DROP, XKV_R_MULTICAST_SOURCE},
	{"ipv6_source_multicast", {.ipv6 = true, .src = "ff02::1"}, XDP_DROP,
	 XKV_R_MULTICAST_SOURCE},
	{"multicast_source_to_broadcast",
	 {.src = "224.0.0.1", .dst = "255.255.255.255", .eth_dst = "ff:ff:ff:ff:ff:ff"},
	 XDP_DROP,
	 XKV_R_MULTICAST_SOURCE},
	{"disallowed_ipv4", {.src = "192.0.2.1"}, XDP_DROP, XKV_R_NOT_ALLOWED},
	{"disallowed_ipv6", {.ipv6 = true, .src = "2001:db8::1"}, XDP_DROP, XKV_R_NOT_ALLOWED},
	{"disallowed_and_malformed", {.src = "192.0.2.1", .magic = 1}, XDP_DROP, XKV_R_NOT_ALLOWED},
	{"ip_len_beyond_packet", {.ip_len_delta = 1}, XDP_DROP, XKV_R_BAD_IP_LEN},
	{"ip_len_below_headers", {.ip_len_delta = -48}, XDP_DROP, XKV_R_BAD_IP_LEN},
	{"ipv6_len_beyond_packet", {.ipv6 = true, .ip_len_delta = 1}, XDP_DROP, XKV_R_BAD_IP_LEN},
	{"ip_len_short_of_udp", {.ip_len_delta = -1}, XDP_DROP, XKV_R_BAD_UDP_LEN},
	{"udp_len_long", {.udp_len_delta = 1}, XDP_DROP, XKV_R_BAD_UDP_LEN},
	{"udp_len_short", {.udp_len_delta = -1}, XDP_DROP, XKV_R_BAD_UDP_LEN},
	{"udp_len_below_header", {.udp_len_delta = -40}, XDP_DROP, XKV_R_BAD_UDP_LEN},
	{"ipv6_udp_len_long", {.ipv6 = true, .udp_len_delta = 1}, XDP_DROP, XKV_R_BAD_UDP_LEN},

	/* malformed xkv */
	{"udp_empty", {.no_payload = true}, XDP_DROP, XKV_R_TRUNCATED},
	{"header_31_bytes", {.payload = 31}, XDP_DROP, XKV_R_TRUNCATED},
	{"bad_magic", {.magic = 0x4b58}, XDP_DROP, XKV_R_BAD_MAGIC},
	{"version_1", {.version = 1}, XDP_DROP, XKV_R_BAD_VERSION},
	{"version_255", {.version = 255}, XDP_DROP, XKV_R_BAD_VERSION},
	{"flags", {.flags = 1}, XDP_DROP, XKV_R_BAD_FLAGS},
	{"op_4", {.op = 4}, XDP_DROP, XKV_R_BAD_OP},
	{"op_127", {.op = 127}, XDP_DROP, XKV_R_BAD_OP},
	{"request_with_status", {.status = XKV_S_NOT_FOUND}, XDP_DROP, XKV_R_BAD_STATUS},
	{"key_0_bytes", {.no_key = true}, XDP_DROP, XKV_R_BAD_KEY_LEN},
	{"key_251_bytes", {.key_fill = 251}, XDP_DROP, XKV_R_BAD_KEY_LEN},
	{"key_len_says_more", {.key_len_delta = 1}, XDP_DROP, XKV_R_BAD_LENGTH},
	{"key_len_says_less", {.key_len_delta = -1}, XDP_DROP, XKV_R_BAD_LENGTH},
	{"value_too_large",
	 {.op = XKV_OP_PUT, .value_len = XKV_VALUE_MAX + 1, .frag_len = BODY},
	 XDP_DROP,
	 XKV_R_TOO_LARGE},
	{"frag_len_says_more",
	 {.op = XKV_OP_PUT, .value_len = BODY, .frag_len = BODY, .frag_len_delta = 1},
	 XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"frag_len_near_2_32",
	 {.op = XKV_OP_PUT, .value_len = BODY, .frag_len = BODY, .frag_len_delta = -BODY - 1},
	 XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"piece_beyond_value",
	 {.op = XKV_OP_PUT, .value_len = BODY, .frag_offset = 50, .frag_len = 60},
	 XDP_DROP,
	 XKV_R_BAD_FRAGMENT},
	{"empty_piece", {.op = XKV_OP_PUT, .value_len = BODY}, XDP_DROP, XKV_R_BAD_FRAGMENT},
	{"get_with_value", {.value_len = 10, .frag_len = 10}, XDP_DROP, XKV_R_BAD_FRAGMENT},
	{"reply_get", {.op = XKV_OP_GET | XKV_OP_REPLY, .no_key = true}, XDP_DROP,
	 XKV_R_REPLY_TO_SERVER},
	{"reply_put", {.op = XKV_OP_PUT | XKV_OP_REPLY, .no_key = true}, XDP_DROP,
	 XKV_R_REPLY_TO_SERVER},
	{"reply_with_key", {.op = XKV_OP_GET | XKV_OP_REPLY}, XDP_DROP, XKV_R_BAD_KEY_LEN},

	/* memcached (docs/PROTOCOL.md, "memcached over UDP"): steered as xkv with its key */
	{"mc_get", {.mc = MC_ASCII}, XDP_REDIRECT, STEERED},
	{"mc_gets", {.mc = MC_ASCII, .mc_cmd = "gets"}, XDP_REDIRECT, STEERED},
	{"mc_get_lf_only", {.mc = MC_ASCII, .mc_tail = "\n", .mc_bare = true}, XDP_REDIRECT,
	 STEERED},
	{"mc_set", {.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = BODY}, XDP_REDIRECT, STEERED},
	{"mc_set_noreply",
	 {.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = BODY, .mc_tail = " 7 0 100 noreply"},
	 XDP_REDIRECT,
	 STEERED},
	{"mc_set_empty_value", {.mc = MC_ASCII, .op = XKV_OP_PUT}, XDP_REDIRECT, STEERED},
	{"mc_delete", {.mc = MC_ASCII, .mc_cmd = "delete"}, XDP_REDIRECT, STEERED},
	{"mc_delete_noreply", {.mc = MC_ASCII, .mc_cmd = "delete", .mc_tail = " noreply"},
	 XDP_REDIRECT, STEERED},
	{"mc_key_1_byte", {.mc = MC_ASCII, .key = "k"}, XDP_REDIRECT, STEERED},
	{"mc_key_250_bytes", {.mc = MC_ASCII, .key_fill = 250}, XDP_REDIRECT, STEERED},
	{"mc_set_key_250_bytes", {.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = 9, .key_fill = 250},
	 XDP_REDIRECT, STEERED},
	{"mc_bin_get", {.mc = MC_BINARY}, XDP_REDIRECT, STEERED},
	{"mc_bin_getq", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_GETQ}, XDP_REDIRECT, STEERED},
	{"mc_bin_getk", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_GETK}, XDP_REDIRECT, STEERED},
	{"mc_bin_getkq", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_GETKQ}, XDP_REDIRECT, STEERED},
	{"mc_bin_set", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_SET, .frag_len = BODY},
	 XDP_REDIRECT, STEERED},
	{"mc_bin_setq", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_SETQ, .frag_len = BODY},
	 XDP_REDIRECT, STEERED},
	{"mc_bin_set_empty_value", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_SET}, XDP_REDIRECT,
	 STEERED},
	{"mc_bin_delete", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_DELETE}, XDP_REDIRECT, STEERED},
	{"mc_bin_deleteq", {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_DELETEQ}, XDP_REDIRECT,
	 STEERED},
	{"mc_bin_key_250_bytes", {.mc = MC_BINARY, .key_fill = 250}, XDP_REDIRECT, STEERED},
	{"mc_vlan", {.mc = MC_ASCII, .vlan = true}, XDP_REDIRECT, STEERED},
	{"mc_ipv6", {.mc = MC_ASCII, .ipv6 = true}, XDP_REDIRECT, STEERED},
	{"mc_ipv4_options", {.mc = MC_ASCII, .ip_opts = 40}, XDP_REDIRECT, STEERED},
	{"mc_link_padding", {.mc = MC_ASCII, .trailer = 20}, XDP_REDIRECT, STEERED},
	{"mc_bin_vlan_ipv6", {.mc = MC_BINARY, .vlan = true, .ipv6 = true}, XDP_REDIRECT, STEERED},
	{"mc_bin_ipv6_ext_headers",
	 {.mc = MC_BINARY,
	  .ipv6 = true,
	  .n_ext = 2,
	  .ext = {IPPROTO_HOPOPTS, IPPROTO_DSTOPTS},
	  .mc_opcode = XKV_MC_BIN_SET,
	  .frag_len = BODY},
	 XDP_REDIRECT,
	 STEERED},
	{"mc_bin_ipv4_options", {.mc = MC_BINARY, .ip_opts = 12}, XDP_REDIRECT, STEERED},

	/* memcached: the checks below it are xkv's */
	{"mc_ipv4_first_fragment", {.mc = MC_ASCII, .frag = IPV4_MF}, XDP_DROP, XKV_R_IP_FRAGMENT},
	{"mc_ipv6_first_fragment",
	 {.mc = MC_BINARY,
	  .ipv6 = true,
	  .n_ext = 1,
	  .ext = {IPPROTO_FRAGMENT},
	  .frag = IPV6_FRAG_MORE},
	 XDP_DROP,
	 XKV_R_IP_FRAGMENT},
	{"mc_ipv4_later_fragment", {.mc = MC_ASCII, .frag = 185}, XDP_PASS, XKV_STAT_PASSED},
	{"mc_other_port", {.mc = MC_ASCII, .dport = PKT_MC_PORT + 1}, XDP_PASS, XKV_STAT_PASSED},
	{"mc_disallowed", {.mc = MC_ASCII, .src = "192.0.2.1"}, XDP_DROP, XKV_R_NOT_ALLOWED},
	{"mc_dest_not_ours", {.mc = MC_BINARY, .dst = "10.0.0.3"}, XDP_DROP, XKV_R_NOT_FOR_US},
	{"mc_dest_mac_broadcast", {.mc = MC_ASCII, .eth_dst = "ff:ff:ff:ff:ff:ff"}, XDP_DROP,
	 XKV_R_BAD_DEST_MAC},
	{"mc_udp_len_long", {.mc = MC_ASCII, .udp_len_delta = 1}, XDP_DROP, XKV_R_BAD_UDP_LEN},
	{"mc_ip_len_beyond_packet", {.mc = MC_BINARY, .ip_len_delta = 1}, XDP_DROP,
	 XKV_R_BAD_IP_LEN},

	/* malformed memcached: the frame */
	{"mc_udp_empty", {.mc = MC_ASCII, .no_payload = true}, XDP_DROP, XKV_R_TRUNCATED},
	{"mc_frame_7_bytes", {.mc = MC_ASCII, .payload = 7}, XDP_DROP, XKV_R_TRUNCATED},
	{"mc_frame_alone", {.mc = MC_BINARY, .payload = 8}, XDP_DROP, XKV_R_TRUNCATED},
	{"mc_sequence_1", {.mc = MC_ASCII, .mc_seq = 1}, XDP_DROP, XKV_R_BAD_FRAGMENT},
	{"mc_total_2", {.mc = MC_BINARY, .mc_total = 2}, XDP_DROP, XKV_R_BAD_FRAGMENT},
	{"mc_reserved", {.mc = MC_ASCII, .mc_reserved = 1}, XDP_DROP, XKV_R_BAD_FLAGS},
	/* ASCII */
	{"mc_unknown_command", {.mc = MC_ASCII, .mc_cmd = "incr"}, XDP_DROP, XKV_R_BAD_OP},
	{"mc_add", {.mc = MC_ASCII, .mc_cmd = "add", .mc_tail = " 0 0 0"}, XDP_DROP, XKV_R_BAD_OP},
	{"mc_command_uppercase", {.mc = MC_ASCII, .mc_cmd = "GET"}, XDP_DROP, XKV_R_BAD_OP},
	{"mc_command_getx", {.mc = MC_ASCII, .mc_cmd = "getx"}, XDP_DROP, XKV_R_BAD_OP},
	{"mc_command_deletes", {.mc = MC_ASCII, .mc_cmd = "deletes"}, XDP_DROP, XKV_R_BAD_OP},
	{"mc_command_3_bytes", {.mc = MC_ASCII, .payload = 8 + 3}, XDP_DROP, XKV_R_TRUNCATED},
	{"mc_key_0_bytes", {.mc = MC_ASCII, .no_key = true}, XDP_DROP, XKV_R_BAD_KEY_LEN},
	/* memcached would skip the second space: XDP does not (the key is empty) */
	{"mc_two_spaces", {.mc = MC_ASCII, .mc_cmd = "get "}, XDP_DROP, XKV_R_BAD_KEY_LEN},
	{"mc_key_251_bytes", {.mc = MC_ASCII, .key_fill = 251}, XDP_DROP, XKV_R_BAD_KEY_LEN},
	{"mc_key_251_unterminated", {.mc = MC_ASCII, .key_fill = 251, .mc_bare = true}, XDP_DROP,
	 XKV_R_BAD_KEY_LEN},
	{"mc_key_unterminated", {.mc = MC_ASCII, .mc_bare = true}, XDP_DROP, XKV_R_TRUNCATED},
	{"mc_key_ends_in_padding",
	 {.mc = MC_ASCII, .mc_bare = true, .trailer = 20, .trailer_fill = ' '},
	 XDP_DROP,
	 XKV_R_TRUNCATED},
	{"mc_set_line_ends_in_padding",
	 {.mc = MC_ASCII, .op = XKV_OP_PUT, .mc_bare = true, .trailer = 20, .trailer_fill = '\n'},
	 XDP_DROP,
	 XKV_R_TRUNCATED},
	{"mc_set_line_unterminated",
	 {.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = BODY, .mc_bare = true},
	 XDP_DROP,
	 XKV_R_TRUNCATED},
	{"mc_set_no_value_end",
	 {.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = BODY, .payload = 8 + 17 + 1},
	 XDP_DROP,
	 XKV_R_BAD_LENGTH},
	/* binary */
	{"mc_bin_header_23_bytes", {.mc = MC_BINARY, .payload = 8 + 23}, XDP_DROP, XKV_R_TRUNCATED},
	{"mc_bin_unknown_opcode", {.mc = MC_BINARY, .mc_opcode = 0x05}, XDP_DROP, XKV_R_BAD_OP},
	{"mc_bin_add", {.mc = MC_BINARY, .mc_opcode = 0x02, .mc_extras_delta = 8}, XDP_DROP,
	 XKV_R_BAD_OP},
	{"mc_bin_key_0_bytes", {.mc = MC_BINARY, .no_key = true}, XDP_DROP, XKV_R_BAD_KEY_LEN},
	{"mc_bin_key_251_bytes", {.mc = MC_BINARY, .key_fill = 251}, XDP_DROP, XKV_R_BAD_KEY_LEN},
	{"mc_bin_key_len_says_more", {.mc = MC_BINARY, .key_len_delta = 1}, XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"mc_bin_body_says_more", {.mc = MC_BINARY, .mc_body_delta = 1}, XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"mc_bin_body_says_less",
	 {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_SET, .frag_len = BODY, .mc_body_delta = -1},
	 XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"mc_bin_get_with_extras", {.mc = MC_BINARY, .mc_extras_delta = 4}, XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"mc_bin_set_without_extras",
	 {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_SET, .frag_len = BODY, .mc_extras_delta = -8},
	 XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"mc_bin_get_with_value", {.mc = MC_BINARY, .frag_len = 10}, XDP_DROP, XKV_R_BAD_LENGTH},
	{"mc_bin_delete_with_value",
	 {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_DELETE, .frag_len = 10},
	 XDP_DROP,
	 XKV_R_BAD_LENGTH},
	{"mc_bin_reply_magic", {.mc = MC_BINARY, .mc_reply = true}, XDP_DROP,
	 XKV_R_REPLY_TO_SERVER},
	/* each protocol on the other's port */
	{"mc_get_to_xkv_port", {.mc = MC_ASCII, .dport = PKT_PORT}, XDP_DROP, XKV_R_TRUNCATED},
	{"mc_set_to_xkv_port",
	 {.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = BODY, .dport = PKT_PORT},
	 XDP_DROP,
	 XKV_R_BAD_MAGIC},
	{"mc_bin_set_to_xkv_port",
	 {.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_SET, .frag_len = BODY, .dport = PKT_PORT},
	 XDP_DROP,
	 XKV_R_BAD_MAGIC},
	{"xkv_get_to_mc_port", {.dport = PKT_MC_PORT}, XDP_DROP, XKV_R_BAD_FRAGMENT},
};

static __u32 owner_of(const struct pkt_spec *spec, __u32 workers)
{
	__u8 key[XKV_KEY_MAX + 1];
	size_t len = pkt_key(spec, key);

	return xkv_partition_owner(xkv_partition(xkv_hash(key, len)), workers);
}

/*
 * Runs one packet and checks its verdict and that exactly the expected counter grew
 * by one. Returns the worker it was steered to, or -1.
 */
static int expect_packet(struct fixture *f, const char *name, const struct pkt_spec *spec,
			 __u32 verdict, int counter)
{
	struct bpfctl_stats before, after;
	__u8 pkt[PKT_SIZE_MAX];
	struct pkt_layout layout;
	int worker = -1;
	__u32 got;

	pkt_build(spec, pkt, &layout);
	cr_assert_eq(fixture_stats(f, &before), 0);
	cr_assert_eq(xdp_run(bpf_program__fd(f->skel->progs.xkv_xdp), pkt, layout.len, 1, &got,
			     NULL),
		     0, "%s: BPF_PROG_RUN", name);
	cr_assert_eq(fixture_stats(f, &after), 0);
	cr_expect_eq(got, verdict, "%s: verdict %u, expected %u", name, got, verdict);
	for (int slot = 0; slot < XKV_R_END; slot++) {
		__u64 grown = after.slots[slot] - before.slots[slot];

		cr_expect_eq(grown, slot == counter, "%s: counter %s grew by %llu", name,
			     xkv_reason_name(slot), (unsigned long long)grown);
	}
	for (int w = 0; w < XKV_WORKERS_MAX; w++) {
		__u64 grown = after.steered[w] - before.steered[w];

		if (grown == 1 && worker < 0)
			worker = w;
		else
			cr_expect_eq(grown, 0, "%s: worker %d steered count grew by %llu", name, w,
				     (unsigned long long)grown);
	}
	cr_expect_eq(worker >= 0, counter == STEERED, "%s: steered to worker %d", name, worker);
	return worker;
}

ParameterizedTestParameters(xdp, packets)
{
	return cr_make_param_array(struct row, rows, ARRAY_SIZE(rows));
}

/* Each row under EREW: a steered packet reaches its key's static owner and adds to its depth. */
ParameterizedTest(const struct row *row, xdp, packets)
{
	struct fixture f;
	int worker;

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0, "load the XDP program");
	worker = expect_packet(&f, row->name, &row->pkt, row->verdict, row->counter);
	if (worker >= 0) {
		cr_expect_eq(worker, owner_of(&row->pkt, WORKERS), "%s: not the owner", row->name);
		cr_expect_eq(fixture_depth(&f, worker), 1, "%s: queue depth", row->name);
	}
	fixture_close(&f);
}

/* Cut a valid frame after each byte: inside the headers it is not (yet) xkv, after them the
 * IP length lies. Then cut the UDP payload itself, with honest lengths. */
Test(xdp, truncation_at_every_byte)
{
	static const struct pkt_spec bases[] = {
		{0},
		{.vlan = true, .ip_opts = 12, .op = XKV_OP_PUT, .value_len = 8, .frag_len = 8},
		{.ipv6 = true, .n_ext = 2, .ext = {IPPROTO_HOPOPTS, IPPROTO_DSTOPTS}},
	};
	struct pkt_layout layout;
	__u8 pkt[PKT_SIZE_MAX];
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	for (size_t b = 0; b < ARRAY_SIZE(bases); b++) {
		struct pkt_spec spec = bases[b];
		char name[64];

		pkt_build(&spec, pkt, &layout);
		/* BPF_PROG_RUN refuses frames shorter than an Ethernet header */
		for (size_t cut = ETH_HLEN; cut < layout.len; cut++) {
			bool in_headers = cut < layout.l4_end;

			spec.cut = cut;
			snprintf(name, sizeof(name), "base %zu cut at %zu", b, cut);
			expect_packet(&f, name, &spec, in_headers ? XDP_PASS : XDP_DROP,
				      in_headers ? XKV_STAT_PASSED : XKV_R_BAD_IP_LEN);
		}
		spec.cut = 0;
		for (spec.payload = 1; spec.payload < layout.len - layout.l4_end; spec.payload++) {
			bool in_header = spec.payload < sizeof(struct xkv_hdr);

			snprintf(name, sizeof(name), "base %zu payload of %u", b, spec.payload);
			expect_packet(&f, name, &spec, XDP_DROP,
				      in_header ? XKV_R_TRUNCATED : XKV_R_BAD_LENGTH);
		}
	}
	fixture_close(&f);
}

/* The program and userspace put many keys of every length in the same partition. */
Test(xdp, partition_agrees_with_userspace)
{
	const struct xkv_config cfg = {.port = PKT_PORT, .workers = 7};
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &cfg, cfg.workers), 0);
	srand(7411);
	for (int i = 0; i < 2000; i++) {
		struct pkt_spec spec = {.op = XKV_OP_PUT, .key_len = 1 + i % XKV_KEY_MAX};

		for (int k = 0; k < spec.key_len; k++)
			spec.key[k] = rand();
		cr_assert_eq(expect_packet(&f, "random key", &spec, XDP_REDIRECT, STEERED),
			     owner_of(&spec, cfg.workers), "key %d of %u bytes", i, spec.key_len);
	}
	fixture_close(&f);
}

/* Under both policies every write of a key goes to one worker, its static owner. */
Test(xdp, writes_stay_with_the_owner)
{
	const struct xkv_config *policies[] = {&erew, &crew};
	struct fixture f;

	for (size_t p = 0; p < ARRAY_SIZE(policies); p++) {
		cr_assert_eq(fixture_open(&f, policies[p], WORKERS), 0);
		for (int k = 0; k < 50; k++) {
			for (int n = 0; n < 6; n++) {
				struct pkt_spec spec = {
					.op = n % 2 ? XKV_OP_DELETE : XKV_OP_PUT,
					.value_len = n % 2 ? 0 : BODY,
					.frag_len = n % 2 ? 0 : BODY,
				};

				snprintf(spec.key, sizeof(spec.key), "user:%d", k);
				cr_assert_eq(expect_packet(&f, spec.key, &spec, XDP_REDIRECT,
							   STEERED),
					     owner_of(&spec, WORKERS), "%s write %d, policy %s",
					     spec.key, n, xkv_policy_name(policies[p]->policy));
			}
		}
		fixture_close(&f);
	}
}

/* Sends n GETs of one key and counts where they went. */
static void count_reads(struct fixture *f, int n, __u32 per_worker[WORKERS])
{
	const struct pkt_spec spec = {.key = "hot"};

	memset(per_worker, 0, WORKERS * sizeof(per_worker[0]));
	for (int i = 0; i < n; i++) {
		int w = expect_packet(f, "hot GET", &spec, XDP_REDIRECT, STEERED);

		cr_assert(w >= 0 && w < WORKERS);
		per_worker[w]++;
	}
}

/* EREW keeps reads of a key on its owner; CREW spreads them by queue depth. */
Test(xdp, reads_spread_under_crew)
{
	const __u32 owner = owner_of(&(struct pkt_spec){.key = "hot"}, WORKERS);
	__u32 per_worker[WORKERS], used = 0;
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	count_reads(&f, 200, per_worker);
	cr_expect_eq(per_worker[owner], 200, "EREW reads went elsewhere than the owner");
	fixture_close(&f);

	cr_assert_eq(fixture_open(&f, &crew, WORKERS), 0);
	count_reads(&f, 400, per_worker);
	for (int w = 0; w < WORKERS; w++)
		used += per_worker[w] > 0;
	cr_expect_geq(used, 3, "CREW reads reached only %u workers", used);
	/* depth grows with every read steered: the owner can't keep more than about half */
	cr_expect_lt(per_worker[owner], 300, "owner took %u of 400 reads", per_worker[owner]);
	fixture_close(&f);
}

/* CREW's second choice follows the shared depths that workers maintain. */
Test(xdp, crew_reads_avoid_a_busy_owner)
{
	const __u32 owner = owner_of(&(struct pkt_spec){.key = "hot"}, WORKERS);
	struct xkv_qdepth busy = {.depth = 1000};
	__u32 per_worker[WORKERS];
	struct fixture f;
	int fd;

	cr_assert_eq(fixture_open(&f, &crew, WORKERS), 0);
	fd = bpf_map__fd(f.skel->maps.xkv_qdepth);
	cr_assert_eq(bpf_map_update_elem(fd, &owner, &busy, BPF_ANY), 0);
	count_reads(&f, 50, per_worker);
	cr_expect_eq(per_worker[owner], 0, "a read went to the busy owner");

	for (__u32 w = 0; w < WORKERS; w++)
		cr_assert_eq(bpf_map_update_elem(fd, &w, &busy, BPF_ANY), 0);
	busy.depth = 0;
	cr_assert_eq(bpf_map_update_elem(fd, &owner, &busy, BPF_ANY), 0);
	count_reads(&f, 50, per_worker);
	cr_expect_eq(per_worker[owner], 50, "reads left the idle owner");
	fixture_close(&f);
}

/*
 * The second choice is drawn evenly from the other workers: with the owner busy, each
 * takes about a third of the reads (each read steered adds to its depth, but none
 * nears the owner's). A draw stuck on one value, or on a few, fails this.
 */
Test(xdp, crew_second_choice_is_any_other_worker_alike)
{
	const __u32 owner = owner_of(&(struct pkt_spec){.key = "hot"}, WORKERS);
	struct xkv_qdepth busy = {.depth = 1000};
	__u32 per_worker[WORKERS];
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &crew, WORKERS), 0);
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(f.skel->maps.xkv_qdepth), &owner, &busy,
					 BPF_ANY), 0);
	count_reads(&f, 600, per_worker);
	for (__u32 w = 0; w < WORKERS; w++)
		if (w != owner)
			cr_expect(per_worker[w] >= 150 && per_worker[w] <= 250,
				  "worker %u took %u of 600 reads, not about 200", w, per_worker[w]);
	fixture_close(&f);
}

/*
 * The interface's unicast IPs 10.0.0.2 .. 10.0.0.(1 + n), its MAC and fd00::2: up to
 * XKV_LOCAL_IPS are compared in place, more are looked up in xkv_local. Either way the
 * last of them is served and the next address is not ours.
 */
static void local_ips(__u32 n)
{
	static const __u8 mac[ETH_ALEN] = {2, 0, 0, 0, 0, 2}; /* PKT_MAC_DST */
	struct bpfctl_local local = {0};
	struct xkv_local_fast fast;
	struct pkt_spec last = {0}, next = {0};
	struct fixture f;
	__u32 zero = 0;
	char ip[16];

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	cr_assert_eq(bpfctl_local_add(&local, XKV_LOCAL_MAC, mac, ETH_ALEN, XKV_LOCAL_UNICAST), 0);
	for (__u32 i = 0; i < n; i++) {
		snprintf(ip, sizeof(ip), "10.0.0.%u", 2 + i);
		cr_assert_eq(bpfctl_parse_local(ip, &local), 0);
	}
	cr_assert_eq(bpfctl_parse_local("fd00::2", &local), 0);
	cr_assert_eq(bpfctl_local_write(bpf_map__fd(f.skel->maps.xkv_local),
					bpf_map__fd(f.skel->maps.xkv_local_l2),
					bpf_map__fd(f.skel->maps.xkv_addr_gen), &local),
		     0);
	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(f.skel->maps.xkv_local_l2), &zero, &fast), 0);
	cr_expect_eq(fast.nip, n + 1 <= XKV_LOCAL_IPS ? n + 1 : XKV_LOCAL_IPS + 1,
		     "%u unicast IPs in place, or the mark that they did not fit", fast.nip);
	snprintf(last.dst, sizeof(last.dst), "10.0.0.%u", 1 + n);
	snprintf(next.dst, sizeof(next.dst), "10.0.0.%u", 2 + n);
	expect_packet(&f, last.dst, &last, XDP_REDIRECT, STEERED);
	expect_packet(&f, next.dst, &next, XDP_DROP, XKV_R_NOT_FOR_US);
	expect_packet(&f, "fd00::2", &(struct pkt_spec){.ipv6 = true}, XDP_REDIRECT, STEERED);
	fixture_close(&f);
}

Test(xdp, local_ips_that_fit_are_compared_in_place)
{
	local_ips(XKV_LOCAL_IPS - 1); /* and fd00::2: all in place */
}

Test(xdp, local_ips_beyond_the_in_place_ones_are_looked_up)
{
	local_ips(XKV_LOCAL_IPS + 2);
}

/* A CPU's caches are its own: a test of one runs its packets on one CPU. */
static void pin_to_this_cpu(void)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
}

/* The allowlist (fixture.c's) made of the networks given, in CIDR. */
static void allow_only(struct fixture *f, const char *const *nets, size_t n)
{
	struct xkv_allow_key keys[4];

	cr_assert_leq(n, 4);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(bpfctl_parse_cidr(nets[i], &keys[i]), 0);
	cr_assert_eq(bpfctl_allow_write(bpf_map__fd(f->skel->maps.xkv_allow),
					bpf_map__fd(f->skel->maps.xkv_addr_gen), keys, n),
		     0);
}

/*
 * A source allowed once is remembered by the CPU that allowed it, until the allowlist
 * changes: then the trie is asked again. On one CPU, so that it is the same memory.
 */
Test(xdp, a_remembered_source_is_refused_once_the_allowlist_drops_it)
{
	static const char *const others[] = {"192.168.0.0/16"}, *const ours[] = {"10.0.0.0/8"};
	const struct pkt_spec get = {0}; /* from 10.0.0.1 */
	struct fixture f;

	pin_to_this_cpu();
	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	expect_packet(&f, "allowed", &get, XDP_REDIRECT, STEERED);
	expect_packet(&f, "allowed, remembered", &get, XDP_REDIRECT, STEERED);
	allow_only(&f, others, 1);
	expect_packet(&f, "dropped from the allowlist", &get, XDP_DROP, XKV_R_NOT_ALLOWED);
	allow_only(&f, ours, 1);
	expect_packet(&f, "allowed again", &get, XDP_REDIRECT, STEERED);
	fixture_close(&f);
}

/* The local addresses made of one MAC and the IPs given, written as bpfctl attach does. */
static void local_only(struct fixture *f, const char *mac, const char *const *ips, size_t n)
{
	struct bpfctl_local local = {0};
	__u8 addr[ETH_ALEN];

	cr_assert_eq(sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &addr[0], &addr[1], &addr[2],
			    &addr[3], &addr[4], &addr[5]), ETH_ALEN);
	cr_assert_eq(bpfctl_local_add(&local, XKV_LOCAL_MAC, addr, ETH_ALEN, XKV_LOCAL_UNICAST), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(bpfctl_parse_local(ips[i], &local), 0);
	cr_assert_eq(bpfctl_local_write(bpf_map__fd(f->skel->maps.xkv_local),
					bpf_map__fd(f->skel->maps.xkv_local_l2),
					bpf_map__fd(f->skel->maps.xkv_addr_gen), &local),
		     0);
}

/*
 * Addresses found answerable are remembered until the local addresses change too: a
 * request to an IP or a MAC the interface no longer has is refused at once.
 */
Test(xdp, remembered_addresses_are_refused_once_the_interface_drops_them)
{
	static const char *const old_ips[] = {"10.0.0.2"}, *const new_ips[] = {"10.0.0.3"};
	const struct pkt_spec get = {0}; /* to 10.0.0.2 at PKT_MAC_DST */
	struct fixture f;

	pin_to_this_cpu();
	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	expect_packet(&f, "ours", &get, XDP_REDIRECT, STEERED);
	expect_packet(&f, "ours, remembered", &get, XDP_REDIRECT, STEERED);
	local_only(&f, PKT_MAC_DST, new_ips, 1);
	expect_packet(&f, "an IP no longer ours", &get, XDP_DROP, XKV_R_NOT_FOR_US);
	local_only(&f, PKT_MAC_DST, old_ips, 1);
	expect_packet(&f, "ours again", &get, XDP_REDIRECT, STEERED);
	local_only(&f, "02:00:00:00:00:07", old_ips, 1);
	expect_packet(&f, "a MAC no longer ours", &get, XDP_DROP, XKV_R_BAD_DEST_MAC);
	fixture_close(&f);
}

/*
 * What is remembered is a source with a destination: a source answered once is still
 * refused when it writes to an address that is not the interface's.
 */
Test(xdp, a_remembered_source_is_refused_at_another_destination)
{
	const struct pkt_spec get = {0}, other_ip = {.dst = "10.0.0.3"},
			      other_mac = {.eth_dst = "02:00:00:00:00:03"};
	struct fixture f;

	pin_to_this_cpu();
	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	expect_packet(&f, "ours", &get, XDP_REDIRECT, STEERED);
	expect_packet(&f, "another IP", &other_ip, XDP_DROP, XKV_R_NOT_FOR_US);
	expect_packet(&f, "another MAC", &other_mac, XDP_DROP, XKV_R_BAD_DEST_MAC);
	fixture_close(&f);
}

/* Port, workers and policy are read per packet: a new config applies to the next one. */
Test(xdp, config_changes_apply_at_once)
{
	struct xkv_config cfg = erew;
	const struct pkt_spec to_old = {0}, to_new = {.dport = PKT_PORT + 1};
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &cfg, 64), 0);
	expect_packet(&f, "old port", &to_old, XDP_REDIRECT, STEERED);
	cfg.port = PKT_PORT + 1;
	cr_assert_eq(fixture_config(&f, &cfg), 0);
	expect_packet(&f, "old port after change", &to_old, XDP_PASS, XKV_STAT_PASSED);
	expect_packet(&f, "new port", &to_new, XDP_REDIRECT, STEERED);

	cfg.workers = 13;
	cr_assert_eq(fixture_config(&f, &cfg), 0);
	cr_expect_eq(expect_packet(&f, "13 workers", &to_new, XDP_REDIRECT, STEERED),
		     owner_of(&to_new, 13));
	fixture_close(&f);
}

/* A config that userspace should never write still fails closed, and counted. */
Test(xdp, unusable_config)
{
	const struct xkv_config bad[] = {
		{.port = PKT_PORT, .workers = 0},
		{.port = PKT_PORT, .workers = XKV_WORKERS_MAX + 1},
		{.port = PKT_PORT, .workers = 1, .policy = XKV_POLICY_END},
	};
	const struct xkv_config unconfigured = {0};
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_eq(fixture_config(&f, &bad[i]), 0);
		expect_packet(&f, "bad config", &(struct pkt_spec){0}, XDP_DROP,
			      XKV_R_BAD_CONFIG);
	}
	cr_assert_eq(fixture_config(&f, &unconfigured), 0);
	expect_packet(&f, "port 0", &(struct pkt_spec){0}, XDP_PASS, XKV_STAT_PASSED);
	fixture_close(&f);
}

/*
 * A config map of another size (pins an older build left, with fewer fields) is refused,
 * not written short: the kernel would copy only the map's bytes of the config.
 */
Test(xdp, config_write_refuses_a_map_of_another_size)
{
	const struct xkv_config cfg = {.port = PKT_PORT, .workers = 1, .memcached_port = 11211};
	int older = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xkv_config", 4, 8, 1, NULL);
	int same = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xkv_config", 4, sizeof(cfg), 1, NULL);

	cr_assert(older >= 0 && same >= 0, "bpf_map_create: %s", strerror(errno));
	cr_expect_eq(bpfctl_config_write(older, &cfg), -EINVAL);
	cr_expect_eq(bpfctl_config_write(same, &cfg), 0);
	close(older);
	close(same);
}

/* A config without frame_max (xkv-loader's) keeps the map's: a running server's limit. */
Test(xdp, config_write_keeps_the_servers_frame_max)
{
	struct xkv_config cfg = {.port = PKT_PORT, .workers = 1, .frame_max = XKV_XSK_RX_MAX};
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xkv_config", 4, sizeof(cfg), 1, NULL);
	struct xkv_config got;
	__u32 zero = 0;

	cr_assert(fd >= 0, "bpf_map_create: %s", strerror(errno));
	cr_assert_eq(bpfctl_config_write(fd, &cfg), 0);
	cfg.frame_max = 0;
	cfg.workers = 4;
	cr_assert_eq(bpfctl_config_write(fd, &cfg), 0);
	cr_assert_eq(bpf_map_lookup_elem(fd, &zero, &got), 0);
	cr_expect_eq(got.workers, 4);
	cr_expect_eq(got.frame_max, XKV_XSK_RX_MAX, "the loader's config dropped the limit");
	cfg.frame_max = 1000;
	cr_assert_eq(bpfctl_config_write(fd, &cfg), 0);
	cr_assert_eq(bpf_map_lookup_elem(fd, &zero, &got), 0);
	cr_expect_eq(got.frame_max, 1000);
	close(fd);
}

/* A worker without a socket in the XSKMAP: the packet is counted, and no depth leaks. */
Test(xdp, empty_socket_slot)
{
	const struct xkv_config cfg = {.port = PKT_PORT, .workers = 8};
	struct pkt_spec spec = {.key = "k0"};
	struct fixture f;
	__u32 owner;

	cr_assert_eq(fixture_open(&f, &cfg, 4), 0);
	for (int i = 1; owner_of(&spec, cfg.workers) < 4; i++)
		snprintf(spec.key, sizeof(spec.key), "k%d", i);
	owner = owner_of(&spec, cfg.workers);
	expect_packet(&f, spec.key, &spec, XDP_DROP, XKV_R_NO_SOCKET);
	cr_expect_eq(fixture_depth(&f, owner), 0);
	fixture_close(&f);
}

/*
 * Minos (include/xkv/roles.h). Four workers: 0 and 1 small, 2 and 3 large; classes
 * above 11 are large, class 19 (a 500 KB value) shared by both large workers.
 */
static const struct xkv_config minos = {.port = PKT_PORT,
					.memcached_port = PKT_MC_PORT,
					.workers = WORKERS,
					.policy = XKV_POLICY_MINOS};

static struct xkv_roles split_roles(void)
{
	struct xkv_roles r = {.gen = 1, .threshold = 11, .nsmall = 2, .nlarge = 2};

	r.small[0] = 0, r.small[1] = 1;
	r.large[0] = 2, r.large[1] = 3;
	for (int c = 12; c < XKV_SIZE_CLASSES; c++)
		r.classes[c] = (struct xkv_class_workers){.first = c < 19 ? 0 : c == 19 ? 0 : 1,
							  .count = c == 19 ? 2 : 1};
	return r;
}

static void set_roles(struct fixture *f, __u32 slot, const struct xkv_roles *r)
{
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(f->skel->maps.xkv_roles), &slot, r, BPF_ANY),
		     0, "write roles slot %u", slot);
}

static __u64 key_hash(const struct pkt_spec *spec)
{
	__u8 key[XKV_KEY_MAX + 1];

	return xkv_hash(key, pkt_key(spec, key));
}

/* Every piece of one large PUT reaches the same large worker; a shared class uses both. */
Test(xdp, minos_large_put_pieces_reach_one_large_worker)
{
	const struct xkv_roles r = split_roles();
	const __u32 value_len = 500000, piece = 1400;
	__u32 used[WORKERS] = {0};
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &minos, WORKERS), 0);
	set_roles(&f, 0, &r);
	for (int k = 0; k < 16; k++) {
		struct pkt_spec spec = {.op = XKV_OP_PUT, .value_len = value_len};
		int first = -1;

		snprintf(spec.key, sizeof(spec.key), "big:%d", k);
		for (__u32 off = 0; off < value_len; off += 50 * piece) {
			int w;

			spec.frag_offset = off;
			spec.frag_len = value_len - off < piece ? value_len - off : piece;
			w = expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED);
			if (first < 0)
				first = w;
			cr_expect_eq(w, first, "%s: piece at %u went to %d, not %d", spec.key, off,
				     w, first);
		}
		cr_expect_eq(first, (int)xkv_roles_large_worker(&r, 19, key_hash(&spec)),
			     "%s: not userspace's large worker", spec.key);
		cr_assert(first == 2 || first == 3, "%s: large PUT on worker %d", spec.key, first);
		used[first]++;
	}
	cr_expect(used[2] && used[3], "class 19 is shared, yet used %u and %u", used[2], used[3]);
	fixture_close(&f);
}

/* Small writes go to the partition's owner among the small workers; DELETE is small. */
Test(xdp, minos_small_writes_go_to_the_owner)
{
	const struct xkv_roles r = split_roles();
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &minos, WORKERS), 0);
	set_roles(&f, 0, &r);
	for (int k = 0; k < 40; k++) {
		struct pkt_spec spec = {.op = k % 2 ? XKV_OP_DELETE : XKV_OP_PUT,
					.value_len = k % 2 ? 0 : BODY,
					.frag_len = k % 2 ? 0 : BODY};
		int w;

		snprintf(spec.key, sizeof(spec.key), "user:%d", k);
		w = expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED);
		cr_expect_eq(w, (int)xkv_roles_owner(&r, xkv_partition(key_hash(&spec))),
			     "%s: %s on worker %d", spec.key, xkv_op_name(spec.op), w);
	}
	fixture_close(&f);
}

/* The standby large worker takes small reads only while nothing is queued on it. */
Test(xdp, minos_standby_takes_small_reads_only_when_idle)
{
	struct xkv_roles r = {.gen = 1, .threshold = 11, .nsmall = 1, .nlarge = 1, .standby = 1};
	const struct xkv_config two = {.port = PKT_PORT, .workers = 2, .policy = XKV_POLICY_MINOS};
	const __u32 owner = 0, standby = 1;
	__u32 on_standby = 0;
	struct fixture f;
	int depth_fd;

	r.small[0] = owner, r.large[0] = standby;
	for (int c = 12; c < XKV_SIZE_CLASSES; c++)
		r.classes[c] = (struct xkv_class_workers){.first = 0, .count = 1};
	cr_assert_eq(fixture_open(&f, &two, 2), 0);
	set_roles(&f, 1, &r);
	depth_fd = bpf_map__fd(f.skel->maps.xkv_qdepth);
	for (int i = 0; i < 100; i++) {
		/* the owner has work queued, the standby none (each read adds to one: reset) */
		cr_assert_eq(bpf_map_update_elem(depth_fd, &owner, &(struct xkv_qdepth){.depth = 2},
						 BPF_ANY),
			     0);
		cr_assert_eq(bpf_map_update_elem(depth_fd, &standby, &(struct xkv_qdepth){0},
						 BPF_ANY),
			     0);
		on_standby += expect_packet(&f, "idle", &(struct pkt_spec){.key = "hot"},
					    XDP_REDIRECT, STEERED) == (int)standby;
	}
	cr_expect(on_standby > 20 && on_standby < 80, "%u of 100 reads on the idle standby",
		  on_standby);
	/* queued work, however little beside the owner's, keeps small reads off it */
	cr_assert_eq(bpf_map_update_elem(depth_fd, &owner, &(struct xkv_qdepth){.depth = 1000},
					 BPF_ANY),
		     0);
	cr_assert_eq(bpf_map_update_elem(depth_fd, &standby, &(struct xkv_qdepth){.depth = 1},
					 BPF_ANY),
		     0);
	for (int i = 0; i < 50; i++)
		cr_expect_eq(expect_packet(&f, "busy", &(struct pkt_spec){.key = "hot"},
					   XDP_REDIRECT, STEERED),
			     (int)owner, "a small read went to the busy standby");
	fixture_close(&f);
}

/* The slot with the higher gen rules; no roles, or a worker beyond the count, is refused. */
Test(xdp, minos_roles_slots_and_bad_roles)
{
	struct xkv_roles old = split_roles(), newer = split_roles();
	const struct pkt_spec put = {.op = XKV_OP_PUT, .value_len = BODY, .frag_len = BODY};
	__u32 owner_now;
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &minos, WORKERS), 0);
	expect_packet(&f, "no roles yet", &put, XDP_DROP, XKV_R_BAD_CONFIG);

	/* the newer slot makes every partition worker 1's */
	newer.gen = 2, newer.nsmall = 1, newer.small[0] = 1;
	set_roles(&f, 0, &old);
	set_roles(&f, 1, &newer);
	cr_expect_eq(expect_packet(&f, "newer slot", &put, XDP_REDIRECT, STEERED), 1);
	old.gen = 3;
	set_roles(&f, 0, &old);
	owner_now = xkv_roles_owner(&old, xkv_partition(key_hash(&put)));
	cr_expect_eq(expect_packet(&f, "older slot rewritten", &put, XDP_REDIRECT, STEERED),
		     (int)owner_now);

	old.gen = 4, old.nsmall = 1, old.small[0] = WORKERS; /* no such worker */
	set_roles(&f, 0, &old);
	expect_packet(&f, "worker beyond the count", &put, XDP_DROP, XKV_R_BAD_CONFIG);
	old.nsmall = 0;
	set_roles(&f, 0, &old);
	expect_packet(&f, "no small worker", &put, XDP_DROP, XKV_R_BAD_CONFIG);
	fixture_close(&f);
}

/*
 * dcrew (include/xkv/ewt.h): reads as crew; a write joins the owner of its
 * partition's EWT slot, or takes the free slot for the less loaded of two workers.
 * Each test loads the program afresh, so its EWT starts empty.
 */
static const struct xkv_config dcrew = {.port = PKT_PORT,
					.memcached_port = PKT_MC_PORT,
					.workers = WORKERS,
					.policy = XKV_POLICY_DCREW};
static const struct pkt_spec put = {.op = XKV_OP_PUT, .value_len = BODY, .frag_len = BODY};

static __u32 partition_of(const struct pkt_spec *spec)
{
	return xkv_partition(key_hash(spec));
}

static void set_depth(struct fixture *f, __u32 worker, __u64 depth)
{
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(f->skel->maps.xkv_qdepth), &worker,
					 &(struct xkv_qdepth){.depth = depth}, BPF_ANY),
		     0, "set worker %u's depth", worker);
}

/* Only worker is busy: the less loaded of two is never it. */
static void make_busy(struct fixture *f, __u32 worker)
{
	for (__u32 w = 0; w < WORKERS; w++)
		set_depth(f, w, w == worker ? 1000 : 0);
}

/* The partition's slot word and XDP's counters of the table are what the test expects. */
static void expect_ewt(struct fixture *f, const char *name, __u32 partition, __u64 word,
		       struct xkv_ewt_counters want)
{
	__u64 now = fixture_ewt_word(f, partition);
	struct bpfctl_ewt got;

	cr_expect_eq(now, word, "%s: slot holds owner %u writes %u, expected owner %u writes %u",
		     name, xkv_ewt_owner(now), xkv_ewt_writes(now), xkv_ewt_owner(word),
		     xkv_ewt_writes(word));
	cr_assert_eq(fixture_ewt(f, &got), 0);
	cr_expect(!memcmp(&got.counters, &want, sizeof(want)),
		  "%s: taken %llu joined %llu cas_retry %llu dropped %llu, expected %llu %llu %llu "
		  "%llu",
		  name, (unsigned long long)got.counters.taken,
		  (unsigned long long)got.counters.joined,
		  (unsigned long long)got.counters.cas_retry,
		  (unsigned long long)got.counters.dropped, (unsigned long long)want.taken,
		  (unsigned long long)want.joined, (unsigned long long)want.cas_retry,
		  (unsigned long long)want.dropped);
}

/* A write to a free slot takes it for the less loaded worker, not the busy static owner. */
Test(xdp, dcrew_write_takes_a_free_slot)
{
	struct fixture f;
	int w;

	cr_assert_eq(fixture_open(&f, &dcrew, WORKERS), 0);
	make_busy(&f, owner_of(&put, WORKERS));
	w = expect_packet(&f, "PUT", &put, XDP_REDIRECT, STEERED);
	cr_expect_neq(w, (int)owner_of(&put, WORKERS), "the write went to the busy owner");
	expect_ewt(&f, "PUT", partition_of(&put), xkv_ewt_word(w, 1),
		   (struct xkv_ewt_counters){.taken = 1});
	cr_expect_eq(fixture_depth(&f, w), 1, "the write adds to its worker's depth");
	fixture_close(&f);
}

/* Further writes join the owner however busy it is; each adds one write to the slot. */
Test(xdp, dcrew_second_write_joins_the_owner)
{
	struct fixture f;
	int w;

	cr_assert_eq(fixture_open(&f, &dcrew, WORKERS), 0);
	w = expect_packet(&f, "first PUT", &put, XDP_REDIRECT, STEERED);
	make_busy(&f, w);
	for (int n = 2; n <= 10; n++)
		cr_expect_eq(expect_packet(&f, "next PUT", &put, XDP_REDIRECT, STEERED), w,
			     "write %d left the owner", n);
	expect_ewt(&f, "10 PUTs", partition_of(&put), xkv_ewt_word(w, 10),
		   (struct xkv_ewt_counters){.taken = 1, .joined = 9});
	fixture_close(&f);
}

/* GETs ignore a held slot and leave it alone: balanced as crew, away from a busy owner. */
Test(xdp, dcrew_get_leaves_the_slot_and_is_balanced_as_crew)
{
	const struct pkt_spec hot = {.key = "hot"};
	const __u32 owner = owner_of(&hot, WORKERS), holder = (owner + 1) % WORKERS;
	const __u64 held = xkv_ewt_word(holder, 5);
	__u32 per_worker[WORKERS], used = 0;
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &dcrew, WORKERS), 0);
	cr_assert_eq(fixture_ewt_set(&f, partition_of(&hot), held), 0);
	make_busy(&f, owner);
	count_reads(&f, 50, per_worker);
	cr_expect_eq(per_worker[owner], 0, "a read went to the busy owner");
	for (__u32 w = 0; w < WORKERS; w++)
		set_depth(&f, w, 0);
	count_reads(&f, 400, per_worker);
	for (int w = 0; w < WORKERS; w++)
		used += per_worker[w] > 0;
	cr_expect_geq(used, 3, "dcrew reads reached only %u workers", used);
	expect_ewt(&f, "450 GETs", partition_of(&hot), held, (struct xkv_ewt_counters){0});
	fixture_close(&f);
}

/*
 * A slot at XKV_EWT_WRITES_MAX takes no more writes, nor does one whose owner is
 * healing it (engine/holds.h): after the tries, a counted drop.
 */
static void slot_is_an_ewt_busy_drop(const struct xkv_config *cfg, __u64 full)
{
	const struct xkv_roles r = split_roles();
	struct fixture f;

	cr_assert_eq(fixture_open(&f, cfg, WORKERS), 0);
	if (xkv_policy_roles(cfg->policy))
		set_roles(&f, 0, &r);
	cr_assert_eq(fixture_ewt_set(&f, partition_of(&put), full), 0);
	expect_packet(&f, "PUT to a full slot", &put, XDP_DROP, XKV_R_EWT_BUSY);
	expect_ewt(&f, "PUT to a full slot", partition_of(&put), full,
		   (struct xkv_ewt_counters){.dropped = 1});
	cr_expect_eq(fixture_depth(&f, 1), 0, "a dropped write added to the owner's depth");
	fixture_close(&f);
}

Test(xdp, dcrew_full_slot_is_an_ewt_busy_drop)
{
	slot_is_an_ewt_busy_drop(&dcrew, xkv_ewt_word(1, XKV_EWT_WRITES_MAX));
}

Test(xdp, dcrew_healing_slot_is_an_ewt_busy_drop)
{
	slot_is_an_ewt_busy_drop(&dcrew, xkv_ewt_word(1, 3) | XKV_EWT_HEALING);
}

/* A slot held by a worker beyond the count is refused as bad_config, the slot unchanged. */
Test(xdp, dcrew_owner_beyond_the_workers_is_bad_config)
{
	const __u64 held = xkv_ewt_word(WORKERS, 2);
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &dcrew, WORKERS), 0);
	cr_assert_eq(fixture_ewt_set(&f, partition_of(&put), held), 0);
	expect_packet(&f, "PUT, owner beyond the count", &put, XDP_DROP, XKV_R_BAD_CONFIG);
	expect_ewt(&f, "PUT, owner beyond the count", partition_of(&put), held,
		   (struct xkv_ewt_counters){0});
	fixture_close(&f);
}

/* No socket for the write's worker, free slot or held: no_socket, and the slot unchanged. */
Test(xdp, dcrew_missing_socket_is_no_socket)
{
	const struct xkv_config cfg = {.port = PKT_PORT, .workers = 8, .policy = XKV_POLICY_DCREW};
	struct pkt_spec spec = put;
	struct fixture f;
	__u32 p;

	cr_assert_eq(fixture_open(&f, &cfg, 4), 0);
	/* an owner without a socket, and every worker with one busy: the owner is the choice */
	for (int i = 0; owner_of(&spec, cfg.workers) < 4; i++)
		snprintf(spec.key, sizeof(spec.key), "k%d", i);
	for (__u32 w = 0; w < 4; w++)
		set_depth(&f, w, 1000);
	p = partition_of(&spec);
	expect_packet(&f, "PUT, free slot", &spec, XDP_DROP, XKV_R_NO_SOCKET);
	expect_ewt(&f, "PUT, free slot", p, 0, (struct xkv_ewt_counters){0});

	cr_assert_eq(fixture_ewt_set(&f, p, xkv_ewt_word(6, 3)), 0);
	for (__u32 w = 0; w < 4; w++)
		set_depth(&f, w, 0);
	expect_packet(&f, "PUT, slot held", &spec, XDP_DROP, XKV_R_NO_SOCKET);
	expect_ewt(&f, "PUT, slot held", p, xkv_ewt_word(6, 3), (struct xkv_ewt_counters){0});
	fixture_close(&f);
}

/* A DELETE is a write: it takes a free slot and joins a held one, as a PUT does. */
Test(xdp, dcrew_delete_takes_and_joins_like_a_put)
{
	const struct pkt_spec del = {.op = XKV_OP_DELETE};
	struct fixture f;
	int w;

	cr_assert_eq(fixture_open(&f, &dcrew, WORKERS), 0);
	w = expect_packet(&f, "DELETE", &del, XDP_REDIRECT, STEERED);
	expect_ewt(&f, "DELETE", partition_of(&del), xkv_ewt_word(w, 1),
		   (struct xkv_ewt_counters){.taken = 1});
	make_busy(&f, w);
	cr_expect_eq(expect_packet(&f, "DELETE again", &del, XDP_REDIRECT, STEERED), w);
	cr_expect_eq(expect_packet(&f, "PUT", &put, XDP_REDIRECT, STEERED), w);
	expect_ewt(&f, "DELETE, DELETE, PUT", partition_of(&del), xkv_ewt_word(w, 3),
		   (struct xkv_ewt_counters){.taken = 1, .joined = 2});
	fixture_close(&f);
}

/* Every piece of a value in pieces joins the owner the first piece chose. */
Test(xdp, dcrew_pieces_of_one_put_join_one_owner)
{
	const __u32 value_len = 5000, piece = 1400, pieces = 4;
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &dcrew, WORKERS), 0);
	for (int k = 0; k < 8; k++) {
		struct pkt_spec spec = {.op = XKV_OP_PUT, .value_len = value_len};
		int first = -1;

		/* keys may share a partition: each starts from an empty table */
		cr_assert_eq(fixture_ewt_reset(&f), 0);
		snprintf(spec.key, sizeof(spec.key), "big:%d", k);
		for (__u32 off = 0; off < value_len; off += piece) {
			int w;

			spec.frag_offset = off;
			spec.frag_len = value_len - off < piece ? value_len - off : piece;
			w = expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED);
			/* the first piece took the slot: the others' candidate is elsewhere */
			if (first < 0) {
				first = w;
				make_busy(&f, w);
			}
			cr_expect_eq(w, first, "%s: piece at %u went to %d, not %d", spec.key, off,
				     w, first);
		}
		expect_ewt(&f, spec.key, partition_of(&spec), xkv_ewt_word(first, pieces),
			   (struct xkv_ewt_counters){.taken = k + 1,
						     .joined = (k + 1) * (pieces - 1)});
	}
	fixture_close(&f);
}

/*
 * xkv: minos's roles (split_roles: 0 and 1 small, 2 and 3 large) and dcrew's EWT.
 * A write in one datagram takes a free slot for a small worker or joins a held one;
 * a PUT in pieces and a GET go as minos sends them and leave the EWT alone.
 */
static const struct xkv_config xkv = {.port = PKT_PORT,
				      .memcached_port = PKT_MC_PORT,
				      .workers = WORKERS,
				      .policy = XKV_POLICY_XKV};

/* Every value from 64 bytes (class 7) up is large: minos would send any PUT to 2 or 3. */
static struct xkv_roles low_threshold_roles(void)
{
	struct xkv_roles r = split_roles();

	r.threshold = 6;
	for (int c = 7; c < 12; c++)
		r.classes[c] = (struct xkv_class_workers){.first = 0, .count = 1};
	return r;
}

/* The large workers idle, the small ones busy: a free slot still goes to a small worker. */
Test(xdp, xkv_one_datagram_write_takes_a_free_slot_for_a_small_worker)
{
	const struct xkv_roles r = low_threshold_roles();
	__u32 used[WORKERS] = {0};
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &xkv, WORKERS), 0);
	set_roles(&f, 0, &r);
	for (int k = 0; k < 32; k++) {
		struct pkt_spec spec = {.op = k % 4 ? XKV_OP_PUT : XKV_OP_DELETE,
					.value_len = k % 4 ? BODY : 0,
					.frag_len = k % 4 ? BODY : 0};
		int w;

		snprintf(spec.key, sizeof(spec.key), "user:%d", k);
		cr_assert_eq(fixture_ewt_reset(&f), 0); /* keys may share a partition */
		for (__u32 v = 0; v < WORKERS; v++)
			set_depth(&f, v, v < 2 ? 1000 : 0);
		w = expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED);
		cr_assert(w == 0 || w == 1, "%s: %s took its slot for large worker %d", spec.key,
			  xkv_op_name(spec.op), w);
		expect_ewt(&f, spec.key, partition_of(&spec), xkv_ewt_word(w, 1),
			   (struct xkv_ewt_counters){.taken = k + 1});
		used[w]++;
	}
	/* the less loaded of the owner and another small worker: both small workers take some */
	cr_expect(used[0] && used[1], "small workers took %u and %u slots", used[0], used[1]);
	fixture_close(&f);
}

/* A held slot is joined whoever holds it and however busy: the write goes to its owner. */
Test(xdp, xkv_one_datagram_write_joins_a_held_slot)
{
	const struct xkv_roles r = low_threshold_roles();
	const struct pkt_spec del = {.op = XKV_OP_DELETE};
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &xkv, WORKERS), 0);
	set_roles(&f, 0, &r);
	/* held by a large worker, as after roles changed: still joined, never a second writer */
	cr_assert_eq(fixture_ewt_set(&f, partition_of(&put), xkv_ewt_word(3, 2)), 0);
	make_busy(&f, 3);
	cr_expect_eq(expect_packet(&f, "PUT", &put, XDP_REDIRECT, STEERED), 3);
	cr_expect_eq(expect_packet(&f, "DELETE", &del, XDP_REDIRECT, STEERED), 3);
	expect_ewt(&f, "PUT and DELETE to a held slot", partition_of(&put), xkv_ewt_word(3, 4),
		   (struct xkv_ewt_counters){.joined = 2});
	fixture_close(&f);
}

/* Pieces of a PUT claim nothing, held slot or free: large to its large worker, small to the owner. */
Test(xdp, xkv_pieces_claim_nothing_and_go_by_minos)
{
	const struct xkv_roles r = split_roles();
	const __u32 piece = 1400, sizes[] = {500000, 2000}; /* class 19: large; 11: small */
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &xkv, WORKERS), 0);
	set_roles(&f, 0, &r);
	for (int k = 0; k < 16; k++) {
		struct pkt_spec spec = {.op = XKV_OP_PUT, .value_len = sizes[k % 2]};
		__u32 want, p;
		__u64 word;

		snprintf(spec.key, sizeof(spec.key), "big:%d", k);
		p = partition_of(&spec);
		want = k % 2 ? xkv_roles_owner(&r, p)
			     : xkv_roles_large_worker(&r, 19, key_hash(&spec));
		/* every other key's slot is held by the other small worker: not joined */
		word = k % 4 < 2 ? 0 : xkv_ewt_word(1 - xkv_roles_owner(&r, p), 3);
		cr_assert_eq(fixture_ewt_set(&f, p, word), 0);
		for (__u32 off = 0; off < spec.value_len; off += 40 * piece) {
			spec.frag_offset = off;
			spec.frag_len = spec.value_len - off < piece ? spec.value_len - off : piece;
			cr_expect_eq(expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED),
				     (int)want, "%s: piece at %u not on worker %u", spec.key, off,
				     want);
		}
		expect_ewt(&f, spec.key, p, word, (struct xkv_ewt_counters){0});
	}
	fixture_close(&f);
}

/*
 * A GET for a key a worker recorded as large goes to its large worker; others stay
 * small. Under xkv each key's slot is held by large worker 2: a read neither joins
 * nor follows it, and leaves it as it was.
 */
static void gets_follow_recorded_sizes(const struct xkv_config *cfg)
{
	const struct xkv_roles r = split_roles();
	const __u64 held = xkv_ewt_word(2, 1);
	struct bpfctl_large_keys large;
	struct fixture f;

	cr_assert_eq(fixture_open(&f, cfg, WORKERS), 0);
	set_roles(&f, 0, &r);
	cr_assert_eq(bpfctl_large_keys_open(&large, bpf_map__fd(f.skel->maps.xkv_large_keys),
					    bpf_map__fd(f.skel->maps.xkv_large_filter)),
		     0);
	for (int k = 0; k < 32; k++) {
		struct pkt_spec spec = {.op = XKV_OP_GET};
		__u32 len = k % 2 ? 500000 : 1000; /* class 19, or 10: small */
		__u64 hash;
		int w;

		snprintf(spec.key, sizeof(spec.key), "user:%d", k);
		hash = key_hash(&spec);
		if (xkv_policy_ewt(cfg->policy))
			cr_assert_eq(fixture_ewt_set(&f, partition_of(&spec), held), 0);
		w = expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED);
		cr_expect(w == 0 || w == 1, "%s: unrecorded GET on worker %d", spec.key, w);
		cr_assert_eq(bpfctl_large_key_record(&large, hash, len), 0);
		w = expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED);
		if (len > 2048)
			cr_expect_eq(w, (int)xkv_roles_large_worker(&r, 19, hash),
				     "%s: recorded large GET on worker %d", spec.key, w);
		else
			cr_expect(w == 0 || w == 1, "%s: small GET on worker %d", spec.key, w);
		/* recorded again, then forgotten: small again, its cell back to what it was */
		cr_assert_eq(bpfctl_large_key_record(&large, hash, len), 0);
		bpfctl_large_key_forget(&large, hash);
		w = expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED);
		cr_expect(w == 0 || w == 1, "%s: forgotten GET on worker %d", spec.key, w);
		cr_expect_eq(large.filter[xkv_large_cell(hash)], 0, "%s: its cell still counts",
			     spec.key);
		cr_assert_eq(bpfctl_large_key_record(&large, hash, len), 0);
		if (xkv_policy_ewt(cfg->policy))
			expect_ewt(&f, spec.key, partition_of(&spec), held,
				   (struct xkv_ewt_counters){0});
	}
	bpfctl_large_keys_close(&large);
	fixture_close(&f);
}

Test(xdp, minos_gets_follow_recorded_sizes)
{
	gets_follow_recorded_sizes(&minos);
}

Test(xdp, xkv_gets_go_by_minos_and_leave_the_slot)
{
	gets_follow_recorded_sizes(&xkv);
}

/* Under xkv too, with roles: the one-datagram write is dropped, the word unchanged. */
Test(xdp, xkv_full_slot_is_an_ewt_busy_drop)
{
	slot_is_an_ewt_busy_drop(&xkv, xkv_ewt_word(1, XKV_EWT_WRITES_MAX));
}

/* A PUT in one datagram, xkv's or memcached's (dialect), whose frame is len bytes. */
static struct pkt_spec put_of_frame(__u8 dialect, size_t len)
{
	struct pkt_spec spec = {.op = XKV_OP_PUT, .mc = dialect};
	struct pkt_layout layout;
	__u8 pkt[PKT_SIZE_MAX];

	if (dialect == MC_BINARY)
		spec.mc_opcode = XKV_MC_BIN_SET;
	/* ASCII's line grows with the value's digits: again until the frame is len */
	for (pkt_build(&spec, pkt, &layout); layout.len != len; pkt_build(&spec, pkt, &layout)) {
		spec.frag_len = (__u32)((long)spec.frag_len + (long)len - (long)layout.len);
		spec.value_len = dialect ? 0 : spec.frag_len;
	}
	return spec;
}

/*
 * frame_max, the largest frame the server's sockets take (net/xsk.h): the kernel would
 * refuse a larger one after the redirect, where the EWT slot claimed for it would never
 * be released and its queue depth never taken off. So it is dropped, counted, before
 * steering; one at the limit is steered and claims its slot. 0 (no server said) is no
 * limit.
 */
Test(xdp, frames_over_frame_max_are_dropped_before_any_claim)
{
	const struct xkv_config *policies[] = {&erew, &dcrew, &xkv};
	const __u8 dialects[] = {0, MC_ASCII, MC_BINARY};
	const struct pkt_spec big = {.op = XKV_OP_PUT, .value_len = 1900, .frag_len = 1900};
	const struct xkv_roles r = split_roles();
	struct fixture f;

	for (size_t p = 0; p < ARRAY_SIZE(policies); p++) {
		struct xkv_config cfg = *policies[p];
		int ewt = xkv_policy_ewt(cfg.policy);

		cfg.frame_max = XKV_XSK_RX_MAX;
		cr_assert_eq(fixture_open(&f, &cfg, WORKERS), 0);
		if (xkv_policy_roles(cfg.policy))
			set_roles(&f, 0, &r);
		for (size_t d = 0; d < ARRAY_SIZE(dialects); d++) {
			const struct pkt_spec over = put_of_frame(dialects[d], XKV_XSK_RX_MAX + 1);
			const struct pkt_spec at = put_of_frame(dialects[d], XKV_XSK_RX_MAX);
			char name[64];
			int w;

			for (__u32 v = 0; v < WORKERS; v++)
				set_depth(&f, v, 0);
			snprintf(name, sizeof(name), "%s, dialect %u: over",
				 xkv_policy_name(cfg.policy), dialects[d]);
			expect_packet(&f, name, &over, XDP_DROP, XKV_R_FRAME_TOO_LARGE);
			if (ewt)
				expect_ewt(&f, name, partition_of(&over), 0,
					   (struct xkv_ewt_counters){.taken = d});
			for (__u32 v = 0; v < WORKERS; v++)
				cr_expect_eq(fixture_depth(&f, v), 0, "%s: depth of %u", name, v);

			snprintf(name, sizeof(name), "%s, dialect %u: at",
				 xkv_policy_name(cfg.policy), dialects[d]);
			w = expect_packet(&f, name, &at, XDP_REDIRECT, STEERED);
			if (ewt)
				expect_ewt(&f, name, partition_of(&at), xkv_ewt_word(w, 1),
					   (struct xkv_ewt_counters){.taken = d + 1});
			cr_assert_eq(fixture_ewt_reset(&f), 0);
		}
		cfg.frame_max = 0;
		cr_assert_eq(fixture_config(&f, &cfg), 0);
		expect_packet(&f, "frame_max 0", &big, XDP_REDIRECT, STEERED);
		fixture_close(&f);
	}
}

/*
 * memcached over UDP (include/xkv/memcached.h): the same key goes where xkv's goes.
 * A spec of xkv's as memcached sends it in a dialect: same key, op and value.
 */
static struct pkt_spec as_memcached(const struct pkt_spec *x, __u8 dialect)
{
	struct pkt_spec m = *x;

	m.mc = dialect;
	m.value_len = 0;
	if (x->op == XKV_OP_DELETE)
		snprintf(m.mc_cmd, sizeof(m.mc_cmd), "delete");
	m.mc_opcode = x->op == XKV_OP_PUT ? XKV_MC_BIN_SET
		      : x->op == XKV_OP_DELETE ? XKV_MC_BIN_DELETE
					       : XKV_MC_BIN_GET;
	return m;
}

/*
 * x in xkv, then in ASCII and in binary, each from depths of 0 and an empty EWT: with
 * every depth 0 the less loaded of two is the owner, and a free slot is taken for it.
 * Expects all three on one worker, and returns it.
 */
static int one_worker_in_every_dialect(struct fixture *f, const struct xkv_config *cfg,
				       const struct pkt_spec *x)
{
	const __u8 dialects[] = {0, 0, MC_ASCII, MC_BINARY};
	const char *const names[] = {"xkv", "xkv version 3", "ascii", "binary"};
	int want = -1;

	for (size_t d = 0; d < ARRAY_SIZE(dialects); d++) {
		struct pkt_spec spec = dialects[d] ? as_memcached(x, dialects[d]) : *x;
		char name[96];

		if (d == 1) { /* a directory's extension: a key's hash of its own, not this key's */
			spec.dir = true;
			spec.dir_ext = (struct xkv_dir_ext){.key_hash = 0x5a5a5a5a5a5a5a5aULL,
							    .ver = 77, .dflags = XKV_DIR_STEERED};
		}
		int w;

		snprintf(name, sizeof(name), "%s %s %s %u, %.16s", xkv_policy_name(cfg->policy),
			 names[d], xkv_op_name(x->op), x->value_len, x->key);
		cr_assert_eq(fixture_ewt_reset(f), 0);
		for (__u32 v = 0; v < WORKERS; v++)
			set_depth(f, v, 0);
		w = expect_packet(f, name, &spec, XDP_REDIRECT, STEERED);
		if (want < 0)
			want = w;
		cr_expect_eq(w, want, "%s: worker %d, xkv's went to %d", name, w, want);
	}
	return want;
}

/*
 * Under every policy a request goes to one worker in all three protocols, and in
 * xkv's version 3, whose key lies after the directory's extension. Value sizes
 * 63 and 64 straddle minos's threshold (low_threshold_roles): a memcached value
 * measured a byte off would change worker there.
 */
Test(xdp, mc_goes_where_xkv_goes_under_every_policy)
{
	const struct xkv_config *policies[] = {&erew, &crew, &minos, &dcrew, &xkv};
	const struct xkv_roles r = low_threshold_roles();
	const struct {
		__u8 op;
		__u32 value_len;
	} requests[] = {{XKV_OP_GET, 0}, {XKV_OP_PUT, 63}, {XKV_OP_PUT, 64}, {XKV_OP_DELETE, 0}};
	struct fixture f;

	for (size_t p = 0; p < ARRAY_SIZE(policies); p++) {
		__u32 policy = policies[p]->policy;

		cr_assert_eq(fixture_open(&f, policies[p], WORKERS), 0);
		if (xkv_policy_roles(policy))
			set_roles(&f, 0, &r);
		for (int k = 0; k < 24; k++) {
			for (size_t q = 0; q < ARRAY_SIZE(requests); q++) {
				struct pkt_spec x = {.op = requests[q].op,
						     .value_len = requests[q].value_len,
						     .frag_len = requests[q].value_len};
				int w;

				snprintf(x.key, sizeof(x.key), "user:%d", k);
				w = one_worker_in_every_dialect(&f, policies[p], &x);
				if (policy == XKV_POLICY_EREW)
					cr_expect_eq(w, (int)owner_of(&x, WORKERS),
						     "%s: not its owner", x.key);
				/* a large value's PUT goes to a large worker under minos */
				if (policy == XKV_POLICY_MINOS && x.op == XKV_OP_PUT)
					cr_expect_eq(w >= 2, x.value_len >= 64,
						     "%s: %u B on worker %d", x.key, x.value_len,
						     w);
			}
		}
		fixture_close(&f);
	}
}

/* A get of several keys goes where its first key's owner is, whatever the others' are. */
Test(xdp, mc_multi_get_steered_by_its_first_key)
{
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	for (int k = 0; k < 16; k++) {
		for (__u8 cmd = 0; cmd < 2; cmd++) {
			struct pkt_spec spec = {.mc = MC_ASCII};
			__u32 first;
			int others = 0;

			snprintf(spec.key, sizeof(spec.key), "first:%d", k);
			snprintf(spec.mc_cmd, sizeof(spec.mc_cmd), cmd ? "gets" : "get");
			first = owner_of(&spec, WORKERS);
			/* two more keys, each with another owner */
			for (int i = 0; others < 2; i++) {
				struct pkt_spec other = {0};
				size_t at = strlen(spec.mc_tail);

				snprintf(other.key, sizeof(other.key), "other:%d:%d", k, i);
				if (owner_of(&other, WORKERS) == first)
					continue;
				snprintf(spec.mc_tail + at, sizeof(spec.mc_tail) - at, " %s",
					 other.key);
				others++;
			}
			cr_expect_eq(expect_packet(&f, spec.key, &spec, XDP_REDIRECT, STEERED),
				     (int)first, "get %s%s: not the first key's owner", spec.key,
				     spec.mc_tail);
		}
	}
	fixture_close(&f);
}

/*
 * A set's line is read up to XKV_MC_SCAN_MAX bytes after its key for its end: one
 * that ends there is steered, a longer one is a bad_length drop.
 */
Test(xdp, mc_set_line_longer_than_xdp_reads)
{
	struct pkt_spec spec = {.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = 8};
	struct fixture f;
	size_t len;

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	/* " 0 0 8" padded with spaces so that "\r" is the 256th byte after the key */
	len = snprintf(spec.mc_tail, sizeof(spec.mc_tail), " 0 0 8");
	memset(spec.mc_tail + len, ' ', 255 - len);
	spec.mc_tail[255] = '\0';
	expect_packet(&f, "'\\n' 257th", &spec, XDP_DROP, XKV_R_BAD_LENGTH);
	spec.mc_tail[254] = '\0';
	cr_expect_eq(expect_packet(&f, "'\\n' 256th", &spec, XDP_REDIRECT, STEERED),
		     (int)owner_of(&spec, WORKERS));
	fixture_close(&f);
}

/*
 * Cut valid requests after each byte of their UDP payload, lengths honest: short of
 * the frame, the command word or the binary header it is truncated, and so is a key
 * or a set's line that the datagram ends inside; a binary body that disagrees is
 * bad_length, and so is a set with fewer than 2 bytes after its line. The rest is
 * steered: a set's value shorter than its BYTES is the worker's to refuse.
 */
Test(xdp, mc_truncation_at_every_byte)
{
	static const struct {
		struct pkt_spec spec;
		__u32 key_end;	/* payload bytes up to the end of the key */
		__u32 line_end; /* and up to the set's "\r\n"; 0: not a set */
	} bases[] = {
		{{.mc = MC_ASCII}, 8 + 7, 0},
		{{.mc = MC_ASCII, .op = XKV_OP_PUT, .frag_len = 8}, 8 + 7, 8 + 15},
		{{.mc = MC_ASCII, .mc_cmd = "delete", .vlan = true}, 8 + 10, 0},
		{{.mc = MC_BINARY, .mc_opcode = XKV_MC_BIN_SET, .frag_len = 8, .ipv6 = true}, 0, 0},
	};
	struct pkt_layout layout;
	__u8 pkt[PKT_SIZE_MAX];
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &erew, WORKERS), 0);
	for (size_t b = 0; b < ARRAY_SIZE(bases); b++) {
		struct pkt_spec spec = bases[b].spec;
		__u32 key_end = bases[b].key_end, line_end = bases[b].line_end;
		char name[64];

		pkt_build(&spec, pkt, &layout);
		for (spec.payload = 1; spec.payload < layout.len - layout.l4_end; spec.payload++) {
			__u32 n = spec.payload, verdict = XDP_DROP;
			int counter = XKV_R_TRUNCATED;

			if (spec.mc == MC_BINARY && n >= 8 + 24) {
				counter = XKV_R_BAD_LENGTH;
			} else if (spec.mc == MC_ASCII && n > key_end) {
				/* a value shorter than BYTES: the worker's to refuse */
				if (!line_end || n >= line_end + 2)
					verdict = XDP_REDIRECT, counter = STEERED;
				else if (n >= line_end)
					counter = XKV_R_BAD_LENGTH;
			}
			snprintf(name, sizeof(name), "base %zu payload of %u", b, n);
			expect_packet(&f, name, &spec, verdict, counter);
		}
	}
	fixture_close(&f);
}

/* The memcached port is read per packet: 0 passes memcached's datagrams to the stack. */
Test(xdp, mc_port_changes_apply_at_once)
{
	struct xkv_config cfg = erew;
	const struct pkt_spec get = {.mc = MC_ASCII}, moved = {.mc = MC_ASCII, .dport = 11311};
	struct fixture f;

	cr_assert_eq(fixture_open(&f, &cfg, WORKERS), 0);
	expect_packet(&f, "port on", &get, XDP_REDIRECT, STEERED);
	cfg.memcached_port = 0;
	cr_assert_eq(fixture_config(&f, &cfg), 0);
	expect_packet(&f, "port off", &get, XDP_PASS, XKV_STAT_PASSED);
	expect_packet(&f, "xkv, memcached off", &(struct pkt_spec){0}, XDP_REDIRECT, STEERED);
	cfg.memcached_port = 11311;
	cr_assert_eq(fixture_config(&f, &cfg), 0);
	expect_packet(&f, "old port", &get, XDP_PASS, XKV_STAT_PASSED);
	expect_packet(&f, "new port", &moved, XDP_REDIRECT, STEERED);
	fixture_close(&f);
}
