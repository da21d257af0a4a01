// SPDX-License-Identifier: MIT

package main

import (
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"
)

// The model's input: what was asked. The output is the record's result string.
type kvInput struct {
	op  string
	key string
	arg string // put: the token written
}

// The state of one key: the token of its value, or "" when it has none.
const noValue = ""

func kvStep(state, input, output interface{}) (bool, interface{}) {
	st := state.(string)
	in := input.(kvInput)
	out := output.(string)
	switch in.op {
	case "put": // applied, or maybe applied: then it took effect at some point
		return true, in.arg
	case "get":
		if out == "none" {
			return st == noValue, st
		}
		return out == st, st
	case "del":
		switch out {
		case "ok":
			return st != noValue, noValue
		case "none":
			return st == noValue, noValue
		}
		return true, noValue // "done" or "?": whatever was there, none is now
	}
	return false, st
}

// partitionByKey gives each key its own partition, in the order of the keys.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var keys []string
	for _, op := range history {
		k := op.Input.(kvInput).key
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], op)
	}
	sort.Strings(keys)
	parts := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, byKey[k])
	}
	return parts
}

func describeState(state interface{}) string {
	if state.(string) == noValue {
		return "none"
	}
	return state.(string)
}

func describeOp(input, output interface{}) string {
	in := input.(kvInput)
	if in.op == "put" {
		return fmt.Sprintf("put(%s, %s) -> %s", in.key, in.arg, output)
	}
	return fmt.Sprintf("%s(%s) -> %s", in.op, in.key, output)
}

// kvModel is a key-value store partitioned by key: state = the token of the value or none.
var kvModel = porcupine.Model{
	Partition:         partitionByKey,
	Init:              func() interface{} { return noValue },
	Step:              kvStep,
	Equal:             func(a, b interface{}) bool { return a.(string) == b.(string) },
	DescribeOperation: describeOp,
	DescribeState:     describeState,
}

// operations turns records into porcupine's operations, times relative to the first
// invocation. An operation without reply returns after every other event: it may take
// effect at any time after its invocation.
func operations(recs []record) []porcupine.Operation {
	var start, end int64
	for i, r := range recs {
		if i == 0 || r.invoke < start {
			start = r.invoke
		}
		if r.answered && r.ret > end {
			end = r.ret
		}
		if r.invoke > end {
			end = r.invoke
		}
	}
	ops := make([]porcupine.Operation, len(recs))
	for i, r := range recs {
		ret := end + 1
		if r.answered {
			ret = r.ret
		}
		ops[i] = porcupine.Operation{
			ClientId: r.client,
			Input:    kvInput{op: r.op, key: r.key, arg: r.arg},
			Call:     r.invoke - start,
			Output:   r.result,
			Return:   ret - start,
			Metadata: r.line,
		}
	}
	return ops
}
