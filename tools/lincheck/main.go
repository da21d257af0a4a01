// SPDX-License-Identifier: MIT

// xkv-lincheck checks that a history of operations on a key-value store is
// linearizable, with porcupine and a model of the store partitioned by key.
// The format, the model and the exit codes: docs/LINEARIZABILITY.md.
package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

const (
	exitLinearizable = 0
	exitIllegal      = 1
	exitError        = 2 // bad usage, unreadable or malformed history, or timed out
)

// Operations shown of a failing key, at most, on each side of the point where it fails.
const shownOps = 12

const usage = `usage: xkv-lincheck [--timeout SECONDS] [--html FILE] HISTORY
Checks that HISTORY (docs/LINEARIZABILITY.md) is linearizable.
  --timeout SECONDS  give up after this long and say "unknown" (default 60)
  --html FILE        write porcupine's visualization of the history to FILE
Exit 0 linearizable, 1 not (the keys and operations are named), 2 bad usage,
a malformed history or a timeout.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("xkv-lincheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	timeout := fs.Float64("timeout", 60, "")
	html := fs.String("html", "", "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, usage)
			return exitLinearizable
		}
		fmt.Fprintf(stderr, "xkv-lincheck: %v\n%s", err, usage)
		return exitError
	}
	if fs.NArg() != 1 || *timeout <= 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "xkv-lincheck: %v\n", err)
		return exitError
	}
	recs, err := readHistory(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "xkv-lincheck: %s: %v\n", path, err)
		return exitError
	}
	return check(recs, time.Duration(*timeout*float64(time.Second)), *html, stdout, stderr)
}

type keyResult struct {
	ops    []porcupine.Operation
	result porcupine.CheckResult
}

// check runs porcupine on each key at once, explains the keys that fail, and writes
// the visualization if asked.
func check(recs []record, timeout time.Duration, html string, stdout, stderr io.Writer) int {
	deadline := time.Now().Add(timeout)
	parts := partitionByKey(operations(recs))
	results := make([]keyResult, len(parts))
	done := make(chan struct{})
	for i, part := range parts {
		go func(i int, part []porcupine.Operation) {
			result := porcupine.CheckOperationsTimeout(kvModel, part, timeout)
			results[i] = keyResult{part, result}
			done <- struct{}{}
		}(i, part)
	}
	for range parts {
		<-done
	}

	byLine := map[int]record{}
	for _, r := range recs {
		byLine[r.line] = r
	}
	illegal, unknown := 0, 0
	for _, kr := range results {
		switch kr.result {
		case porcupine.Illegal:
			illegal++
			explain(kr.ops, byLine, time.Until(deadline), stdout)
		case porcupine.Unknown:
			unknown++
		}
	}
	if html != "" {
		left := positive(time.Until(deadline))
		_, info := porcupine.CheckOperationsVerbose(kvModel, operations(recs), left)
		if err := porcupine.VisualizePath(kvModel, info, html); err != nil {
			fmt.Fprintf(stderr, "xkv-lincheck: %v\n", err)
			return exitError
		}
	}
	switch {
	case illegal > 0:
		fmt.Fprintf(stdout, "not linearizable: %d of %d keys (%d operations)\n", illegal,
			len(parts), len(recs))
		return exitIllegal
	case unknown > 0:
		fmt.Fprintf(stdout, "unknown: %d of %d keys not decided within %v "+
			"(%d operations)\n", unknown, len(parts), timeout, len(recs))
		return exitError
	}
	fmt.Fprintf(stdout, "linearizable: %d operations on %d keys\n", len(recs), len(parts))
	return exitLinearizable
}

// A timeout of 0 means none to porcupine: what is left must stay above it.
func positive(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return time.Millisecond
	}
	return d
}

// explain names a failing key and the operations where every linearization stops: the
// longest linearizable prefix porcupine found ends in some state, and none of the
// operations that could come next (invoked before the earliest return among those
// left) can follow it.
func explain(ops []porcupine.Operation, byLine map[int]record, left time.Duration,
	out io.Writer) {
	key := ops[0].Input.(kvInput).key
	_, info := porcupine.CheckOperationsVerbose(kvModel, ops, positive(left))
	var longest []porcupine.Operation
	for _, parts := range info.PartialLinearizationsOperations() {
		for _, l := range parts {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	done := map[int]bool{}
	state := kvModel.Init()
	for _, op := range longest {
		done[op.Metadata.(int)] = true
		_, state = kvStep(state, op.Input, op.Output)
	}
	var rest []porcupine.Operation
	for _, op := range ops {
		if !done[op.Metadata.(int)] {
			rest = append(rest, op)
		}
	}
	var firstReturn int64
	for i, op := range rest {
		if i == 0 || op.Return < firstReturn {
			firstReturn = op.Return
		}
	}
	var next []porcupine.Operation
	for _, op := range rest {
		if op.Call <= firstReturn {
			next = append(next, op)
		}
	}
	sort.Slice(next, func(i, j int) bool { return next[i].Call < next[j].Call })

	fmt.Fprintf(out, "key %s (%s): not linearizable, %d operations\n", key, printable(key),
		len(ops))
	if len(longest) == 0 {
		fmt.Fprintf(out, "  no operation can come first, from the value none:\n")
	} else {
		fmt.Fprintf(out, "  longest linearizable prefix: %d operations; "+
			"its last ones, in order:\n", len(longest))
		from := 0
		if len(longest) > shownOps {
			from = len(longest) - shownOps
		}
		for _, op := range longest[from:] {
			fmt.Fprintf(out, "    %s\n", describe(op, byLine))
		}
		fmt.Fprintf(out, "  leaving the value %s; none of these can come next:\n",
			describeState(state))
	}
	for i, op := range next {
		if i == shownOps {
			fmt.Fprintf(out, "    ... and %d more\n", len(next)-shownOps)
			break
		}
		fmt.Fprintf(out, "    %s\n", describe(op, byLine))
	}
}

// One operation as the history has it, times in microseconds from the history's start.
func describe(op porcupine.Operation, byLine map[int]record) string {
	r := byLine[op.Metadata.(int)]
	ret := "-"
	if r.answered {
		ret = fmt.Sprintf("%.3f", float64(op.Return)/1e3)
	}
	return fmt.Sprintf("client %d %s %s -> %s  [%.3f us, %s us]  (line %d)", r.client, r.op,
		r.arg, r.result, float64(op.Call)/1e3, ret, r.line)
}

// The key as text when it is printable ASCII.
func printable(hexKey string) string {
	b, _ := hex.DecodeString(hexKey) // the parser checked it
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return "binary"
		}
	}
	return fmt.Sprintf("%q", b)
}
