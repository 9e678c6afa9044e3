package setting

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

var errorf = Scope("pkg")

func TestNamed(t *testing.T) {
	names := map[string]string{"pkg.Alpha": "--alpha", "pkg.Results": "--results", "other.Beta": "--beta"}
	for _, tc := range []struct {
		name      string
		err       error
		plain     string // Error()
		renamed   string // Rename(err, names).Error()
		wantInner error  // errors.Is target through the renamed error, or nil
	}{
		// One field, a value in the args: the value is never renamed.
		{"field", errorf("{Alpha} %g: want a level between 0 and 1", 2.0), "Alpha 2: want a level between 0 and 1", "--alpha 2: want a level between 0 and 1", nil},
		// A label reads without names, the flag with them.
		{"label", errorf("drop it, or pass {Results:a results folder}"), "drop it, or pass a results folder", "drop it, or pass --results", nil},
		// Braces that are no field stay: label matchers, JSON.
		{"no field", errorf(`want {job="vllm"} or {Alpha}`), `want {job="vllm"} or Alpha`, `want {job="vllm"} or --alpha`, nil},
		// A value that looks like a field stays as given.
		{"value like a field", errorf("{Alpha} %q: bad", "{Alpha}"), `Alpha "{Alpha}": bad`, `--alpha "{Alpha}": bad`, nil},
		// A field of another scope is not renamed by this one's names.
		{"other scope", Scope("other")("{Alpha} and {Beta}"), "Alpha and Beta", "Alpha and --beta", nil},
		// %w keeps the wrapped error reachable, before and after renaming.
		{"wraps", errorf("{Results}: %w", fs.ErrNotExist), "Results: file does not exist", "--results: file does not exist", fs.ErrNotExist},
		// Wrapped by a caller: the setting's part is renamed in place.
		{"wrapped", fmt.Errorf("start: %w", errorf("{Alpha} %g: bad", 1.5)), "start: Alpha 1.5: bad", "start: --alpha 1.5: bad", nil},
		// A setting error inside another: both are renamed.
		{"nested", errorf("{Results} %w", Scope("other")("{Beta} needs {Alpha}")), "Results Beta needs Alpha", "--results --beta needs Alpha", nil},
		// Not a setting error: returned as it is.
		{"plain", errors.New("disk full"), "disk full", "disk full", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.plain {
				t.Errorf("Error() = %q, want %q", got, tc.plain)
			}
			r := Rename(tc.err, names)
			if got := r.Error(); got != tc.renamed {
				t.Errorf("renamed = %q, want %q", got, tc.renamed)
			}
			if tc.wantInner != nil && !errors.Is(r, tc.wantInner) {
				t.Errorf("errors.Is(renamed, %v) = false", tc.wantInner)
			}
			var se *Error
			if tc.name != "plain" && !errors.As(r, &se) {
				t.Errorf("errors.As(renamed, *Error) = false")
			}
		})
	}
}

func TestFields(t *testing.T) {
	got := fmt.Sprint(errorf("{Alpha} and {Results:the folder}: %d", 1).(*Error).Fields())
	if want := "[pkg.Alpha pkg.Results]"; got != want {
		t.Errorf("Fields = %s, want %s", got, want)
	}
}
