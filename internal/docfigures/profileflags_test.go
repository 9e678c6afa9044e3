package docfigures

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// TestFiguresProfileFlags computes scenarios/README.md's table of the
// built-in profiles of every server family from their files: each one's
// description and the flags it renders, so the page never holds a hand
// copy of a flag.
func TestFiguresProfileFlags(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("\n| family | profile | purpose | flags |\n| --- | --- | --- | --- |\n")
	for _, fam := range serverfamily.All() {
		set := profile.BuiltinsFor(fam)
		for _, name := range set.Names() {
			p, err := set.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "| %s | [`%s`](profiles/%s/%s.yaml) | %s | `%s` |\n", fam.Key, p.Name, fam.Key, name,
				strings.ReplaceAll(p.Description, "|", `\|`), strings.ReplaceAll(strings.Join(p.Args(), " "), "|", `\|`))
		}
	}
	Sync(t, "scenarios/README.md", "profile-flags", b.String())
}
