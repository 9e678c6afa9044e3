package envvar

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// warned holds where an old name's warning goes and which were said, so
// that a process warns once a variable however often it is read.
var warned = struct {
	sync.Mutex
	to   io.Writer
	said map[string]bool
}{to: os.Stderr, said: map[string]bool{}}

// lookup is the value of Name, or of Old when Name is unset or blank,
// trimmed; name is the variable it came from. Reading Old, or finding
// both set (Name wins), warns once on stderr naming Name.
func (s Setting) lookup() (name, value string, ok bool) {
	v := strings.TrimSpace(os.Getenv(s.Name))
	if s.Old == "" {
		return s.Name, v, v != ""
	}
	old := strings.TrimSpace(os.Getenv(s.Old))
	switch {
	case old == "":
		return s.Name, v, v != ""
	case v != "":
		warn(s.Old, fmt.Sprintf("warning: %s and %s are both set: %s=%q wins, the old name is ignored; unset %s", s.Name, s.Old, s.Name, v, s.Old))
		return s.Name, v, true
	default:
		warn(s.Old, fmt.Sprintf("warning: %s is the old name of %s: read for now, but set %s instead", s.Old, s.Name, s.Name))
		return s.Old, old, true
	}
}

// warn writes msg once for the old variable name.
func warn(old, msg string) {
	warned.Lock()
	defer warned.Unlock()
	if warned.said[old] {
		return
	}
	warned.said[old] = true
	fmt.Fprintln(warned.to, msg)
}

// Formerly says the old name for a help line or a docs table ("" when
// the setting has none).
func (s Setting) Formerly() string {
	if s.Old == "" {
		return ""
	}
	return "formerly " + s.Old + ", still read with a warning"
}
