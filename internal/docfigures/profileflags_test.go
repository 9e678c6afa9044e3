package docfigures

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// TestFiguresProfileFlags computes scenarios/README.md's table of the
// built-in profiles from their files: each one's description and the
// flags it renders, so the page never holds a hand copy of a flag.
func TestFiguresProfileFlags(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("\n| profile | purpose | flags |\n| --- | --- | --- |\n")
	for _, name := range profile.Names() {
		p, err := profile.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "| [`%s`](profiles/%s.yaml) | %s | `%s` |\n", p.Name, name,
			strings.ReplaceAll(p.Description, "|", `\|`), strings.ReplaceAll(strings.Join(p.Args(), " "), "|", `\|`))
	}
	Sync(t, "scenarios/README.md", "profile-flags", b.String())
}
