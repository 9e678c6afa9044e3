package input

import (
	"bytes"
	"regexp"
)

// nameThenFail is the line go test writes when a later repetition of a
// benchmark (-count N) fails: the benchmark's name, already printed for
// its result, then "--- FAIL: NAME" and the failure's log. go test then
// repeats the whole block under "--- FAIL: NAME-P".
var nameThenFail = regexp.MustCompile(`(?m)^Benchmark\S*[ \t]+--- FAIL: .*$`)

// dropNameThenFail blanks those lines: benchfmt would read the name as a
// result line without an iteration count (the file is not malformed),
// and the failure's checks are read from the block that repeats them,
// once.
func dropNameThenFail(data []byte) []byte {
	if !bytes.Contains(data, []byte("--- FAIL: ")) {
		return data
	}
	return nameThenFail.ReplaceAll(data, nil)
}
