// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	tokA = "00000000000000a1"
	tokB = "00000000000000b2"
	tokC = "00000000000000c3"
)

// runHistory writes lines after the format's first line and runs the CLI on them.
func runHistory(t *testing.T, lines string, args ...string) (int, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h")
	text := historyHeader + "\n" + strings.TrimLeft(lines, "\n")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(append(args, path), &out, &errOut)
	return code, out.String() + errOut.String()
}

func expectExit(t *testing.T, lines string, want int) string {
	t.Helper()
	code, out := runHistory(t, lines)
	if code != want {
		t.Fatalf("exit %d, want %d; output:\n%s", code, want, out)
	}
	return out
}

func TestConcurrentHistoryIsLinearizable(t *testing.T) {
	// Two writers overlap, so readers during the overlap may see either value in
	// either order, as long as they agree on one order; key 6b32 is independent.
	expectExit(t, `
0 put 6b31 `+tokA+` 100 400 ok
1 put 6b31 `+tokB+` 200 500 ok
2 get 6b31 - 250 300 `+tokB+`
3 get 6b31 - 310 450 `+tokA+`
2 get 6b31 - 600 700 `+tokA+`
# a comment line
3 get 6b32 - 100 200 none
3 put 6b32 `+tokC+` 210 220 ok
0 get 6b32 - 215 230 `+tokC+`
`, exitLinearizable)
}

func TestReadsMustAgreeOnOneOrder(t *testing.T) {
	// After seeing B then A, no later read may see B again.
	out := expectExit(t, `
0 put 6b31 `+tokA+` 100 400 ok
1 put 6b31 `+tokB+` 200 500 ok
2 get 6b31 - 250 300 `+tokB+`
3 get 6b31 - 310 450 `+tokA+`
2 get 6b31 - 600 700 `+tokB+`
`, exitIllegal)
	if !strings.Contains(out, "key 6b31") || !strings.Contains(out, "(line 6)") {
		t.Fatalf("the key and the last get are not named:\n%s", out)
	}
}

// C-4's E1: a read that starts after a write was answered returns the initial value.
func TestStaleReadAfterAnsweredWrite(t *testing.T) {
	out := expectExit(t, `
0 put 6b31 `+tokA+` 1000 2000 ok
1 get 6b31 - 3000 4000 none
`, exitIllegal)
	for _, want := range []string{`key 6b31 ("k1")`, "client 0 put " + tokA + " -> ok",
		"client 1 get - -> none  [2.000 us, 3.000 us]  (line 3)",
		"leaving the value " + tokA} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestUnknownPutMayOrMayNotTakeEffect(t *testing.T) {
	unknownPut := "0 put 6b31 " + tokA + " 100 - ?\n"
	// never seen
	expectExit(t, unknownPut+"1 get 6b31 - 5000 6000 none\n", exitLinearizable)
	// seen long after its invocation, even after other reads did not see it
	expectExit(t, unknownPut+"1 get 6b31 - 5000 6000 none\n1 get 6b31 - 7000 8000 "+tokA+"\n",
		exitLinearizable)
	// but once seen, it stays until overwritten
	expectExit(t, unknownPut+"1 get 6b31 - 5000 6000 "+tokA+"\n1 get 6b31 - 7000 8000 none\n",
		exitIllegal)
	// it cannot take effect before it was invoked
	expectExit(t, "1 get 6b31 - 10 20 "+tokA+"\n"+unknownPut, exitIllegal)
	// an unknown put with a known return time took effect by then, if at all
	expectExit(t, "0 put 6b31 "+tokA+" 100 200 ?\n1 get 6b31 - 300 400 "+tokA+
		"\n1 put 6b31 "+tokB+" 500 600 ok\n2 get 6b31 - 700 800 "+tokB+"\n",
		exitLinearizable)
}

func TestDelete(t *testing.T) {
	put := "0 put 6b31 " + tokA + " 100 200 ok\n"
	cases := []struct {
		name, lines string
		want        int
	}{
		{"ok when the value is there",
			put + "1 del 6b31 - 300 400 ok\n1 get 6b31 - 500 600 none\n",
			exitLinearizable},
		{"ok when nothing is there", "1 del 6b31 - 300 400 ok\n", exitIllegal},
		{"none when nothing is there", "1 del 6b31 - 300 400 none\n", exitLinearizable},
		{"none when the value is there", put + "1 del 6b31 - 300 400 none\n", exitIllegal},
		{"the value gone afterwards",
			put + "1 del 6b31 - 300 400 ok\n1 get 6b31 - 500 600 " + tokA + "\n",
			exitIllegal},
		{"a second del finds nothing",
			put + "1 del 6b31 - 300 400 ok\n2 del 6b31 - 500 600 ok\n", exitIllegal},
		{"unknown: either", put + "1 del 6b31 - 300 - ?\n2 get 6b31 - 500 600 " + tokA +
			"\n2 get 6b31 - 700 800 none\n", exitLinearizable},
		{"unknown on nothing", "1 del 6b31 - 300 - ?\n2 get 6b31 - 500 600 none\n",
			exitLinearizable},
		{"concurrent with a put: either order", put + "1 del 6b31 - 300 600 ok\n" +
			"2 put 6b31 " + tokB + " 350 500 ok\n3 get 6b31 - 700 800 none\n",
			exitLinearizable},
		// done: applied, whether the key was there not said (a replicated key's)
		{"done when the value is there", put + "1 del 6b31 - 300 400 done\n",
			exitLinearizable},
		{"done when nothing is there", "1 del 6b31 - 300 400 done\n", exitLinearizable},
		{"done: the value gone afterwards",
			put + "1 del 6b31 - 300 400 done\n1 get 6b31 - 500 600 " + tokA + "\n",
			exitIllegal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectExit(t, c.lines, c.want) })
	}
}

func TestMalformedHistoryNamesTheLine(t *testing.T) {
	good := "0 put 6b31 " + tokA + " 100 200 ok\n"
	cases := []struct{ name, line, why string }{
		{"too few fields", "0 put 6b31 " + tokA + " 100 200", "6 fields"},
		{"unknown op", "0 cas 6b31 - 100 200 ok", `op "cas"`},
		{"key not hex", "0 get k1 - 100 200 none", `key "k1"`},
		{"short token", "0 put 6b31 a1 100 200 ok", `arg "a1"`},
		{"get's result", "0 get 6b31 - 100 200 ok", `result "ok"`},
		{"done for a put", "0 put 6b31 " + tokA + " 100 200 done", `result "done"`},
		{"return before invoke", "0 get 6b31 - 300 200 none", "before invoke_ns"},
		{"no reply but a result", "0 put 6b31 " + tokA + " 100 - ok", "return_ns is -"},
		{"negative client", "-1 get 6b31 - 100 200 none", "client"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runHistory(t, good+c.line+"\n")
			if code != exitError || !strings.Contains(out, "line 3: ") ||
				!strings.Contains(out, c.why) {
				t.Fatalf("exit %d, want 2 naming line 3 and %q:\n%s", code, c.why,
					out)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "h")
	os.WriteFile(path, []byte("0 get 6b31 - 100 200 none\n"), 0o644)
	var out bytes.Buffer
	if code := run([]string{path}, &out, &out); code != exitError ||
		!strings.Contains(out.String(), "line 1: ") {
		t.Fatalf("no header: exit %d, want 2 naming line 1:\n%s", code, out.String())
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{}, {"--bogus", "h"}, {"a", "b"}, {"--timeout", "0", "h"},
		{"/nonexistent/history"}} {
		if code := run(args, &out, &out); code != exitError {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"--help"}, &out, &out); code != 0 {
		t.Errorf("--help: exit %d, want 0", code)
	}
}

func TestHTML(t *testing.T) {
	html := filepath.Join(t.TempDir(), "v.html")
	code, out := runHistory(t, "0 put 6b31 "+tokA+" 100 200 ok\n", "--html", html)
	if code != exitLinearizable {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte("<html")) {
		t.Fatalf("no visualization in %s: %v", html, err)
	}
}

// Unknown-outcome puts that later reads see in the reverse order of their invocations:
// linearizable, but porcupine's search tries an exponential number of orders first.
func TestTimeoutSaysUnknown(t *testing.T) {
	const n = 26
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d put 6b31 %016x %d - ?\n", i, i+1, i)
	}
	for i := 0; i < n; i++ {
		at := 1000 + 100*i
		fmt.Fprintf(&b, "%d get 6b31 - %d %d %016x\n", n, at, at+10, n-i)
	}
	code, out := runHistory(t, b.String(), "--timeout", "0.3")
	if code != exitError || !strings.Contains(out, "unknown: 1 of 1 keys") {
		t.Fatalf("exit %d, want 2 and unknown:\n%s", code, out)
	}
}
