// SPDX-License-Identifier: MIT

package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The format's first line (docs/LINEARIZABILITY.md).
const historyHeader = "# xkv-history 1"

// An operation as the history gives it. Times are nanoseconds on the history's clock.
type record struct {
	line     int // in the file, for messages
	client   int
	op       string // "put", "get" or "del"
	key      string // lowercase hex
	arg      string // put: the value's token; "-" otherwise
	invoke   int64
	ret      int64  // meaningful only when answered
	answered bool   // a reply came: ret is known
	result   string // "ok", "none", "?" or a token
}

// A parse error names its line.
type formatError struct {
	line int
	why  string
}

func (e *formatError) Error() string {
	return fmt.Sprintf("line %d: %s", e.line, e.why)
}

func isHex(s string, n int) bool {
	if len(s) == 0 || (n > 0 && len(s) != n) || (n == 0 && len(s)%2 != 0) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isToken(s string) bool { return isHex(s, 16) }

func parseTime(s string) (int64, bool) {
	v, err := strconv.ParseUint(s, 10, 63)
	return int64(v), err == nil
}

// parseRecord reads one operation line.
func parseRecord(n int, text string) (record, error) {
	bad := func(format string, a ...interface{}) (record, error) {
		return record{}, &formatError{n, fmt.Sprintf(format, a...)}
	}
	f := strings.Split(text, " ")
	if len(f) != 7 {
		return bad("%d fields, want 7: CLIENT OP KEY ARG INVOKE_NS RETURN_NS RESULT",
			len(f))
	}
	r := record{line: n, op: f[1], key: f[2], arg: f[3], result: f[6]}
	client, err := strconv.ParseUint(f[0], 10, 31)
	if err != nil {
		return bad("client %q is not an unsigned integer", f[0])
	}
	r.client = int(client)
	if !isHex(r.key, 0) {
		return bad("key %q is not lowercase hex bytes", r.key)
	}
	var ok bool
	if r.invoke, ok = parseTime(f[4]); !ok {
		return bad("invoke_ns %q is not an unsigned integer", f[4])
	}
	if f[5] != "-" {
		if r.ret, ok = parseTime(f[5]); !ok {
			return bad("return_ns %q is not an unsigned integer or -", f[5])
		}
		if r.ret < r.invoke {
			return bad("return_ns %d is before invoke_ns %d", r.ret, r.invoke)
		}
		r.answered = true
	} else if r.result != "?" {
		return bad("return_ns is - (no reply) but the result is %q, not ?", r.result)
	}
	switch r.op {
	case "put":
		if !isToken(r.arg) {
			return bad("put's arg %q is not a token (16 lowercase hex digits)", r.arg)
		}
		if r.result != "ok" && r.result != "?" {
			return bad("put's result %q is not ok or ?", r.result)
		}
	case "get":
		if r.arg != "-" {
			return bad("get's arg %q is not -", r.arg)
		}
		if r.result != "none" && !isToken(r.result) {
			return bad("get's result %q is not none or a token", r.result)
		}
	case "del":
		if r.arg != "-" {
			return bad("del's arg %q is not -", r.arg)
		}
		if r.result != "ok" && r.result != "none" && r.result != "done" && r.result != "?" {
			return bad("del's result %q is not ok, none, done or ?", r.result)
		}
	default:
		return bad("op %q is not put, get or del", r.op)
	}
	return r, nil
}

// readHistory reads a whole history; the error of a malformed one names its line.
func readHistory(in io.Reader) ([]record, error) {
	var recs []record
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if n == 1 && text != historyHeader {
			why := fmt.Sprintf("%q is not %q", text, historyHeader)
			return nil, &formatError{1, why}
		}
		if strings.HasPrefix(text, "#") {
			continue
		}
		r, err := parseRecord(n, text)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", n+1, err)
	}
	if n == 0 {
		return nil, &formatError{1, fmt.Sprintf("empty, want %q", historyHeader)}
	}
	return recs, nil
}
