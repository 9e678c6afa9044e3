package docfigures

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkedPages are the pages whose relative links must resolve: the landing
// page, the contributor guide, every docs page and the READMEs they link to.
var linkedPages = []string{"README.md", "CONTRIBUTING.md", "docs/*.md", "scenarios/README.md", "deploy/README.md", "fixtures/README.md"}

// TestDocLinks: every relative link and image of linkedPages names a file
// or folder that exists, and its #anchor, when it has one, a heading of
// that page; every docs page is linked from the docs index.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	root := ModuleRoot(t)
	var pages []string
	for _, pattern := range linkedPages {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(m) == 0 {
			t.Fatalf("%s: no page matches (%v): fix linkedPages", pattern, err)
		}
		pages = append(pages, m...)
	}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, target := range markdownLinks(string(data)) {
			if err := checkLink(page, target); err != nil {
				t.Errorf("%s: broken link %q: %v", rel, target, err)
			}
		}
	}
	index, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, target := range markdownLinks(string(index)) {
		linked[strings.SplitN(target, "#", 2)[0]] = true
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, page := range docs {
		if name := filepath.Base(page); name != "README.md" && !linked[name] {
			t.Errorf("docs/%s is not linked from the docs index docs/README.md: add it there", name)
		}
	}
}

// TestLinkChecker: the checker finds what TestDocLinks relies on it to
// find, and passes what it must pass.
func TestLinkChecker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	page := filepath.Join(dir, "page.md")
	doc := "# A page\n\n## The seed article\n\n### Exit status: `0` ok\n\n" +
		"[a](other.md) [b](missing.md) [c](#the-seed-article) [d](#nowhere) ![e](img/x.png)\n" +
		"[f](https://example.com/x) [g](other.md#part-two) [h](other.md#no-part) [i](sub/) [j](#exit-status-0-ok)\n" +
		"```\n[k](inside-a-code-block.md)\n```\n"
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("page.md", doc)
	write("other.md", "# Other\n\n## Part two\n")
	write("img/x.png", "png")
	write("sub/README.md", "# Sub\n")
	got := map[string]bool{}
	for _, target := range markdownLinks(doc) {
		got[target] = checkLink(page, target) == nil
	}
	want := map[string]bool{
		"other.md": true, "missing.md": false, "#the-seed-article": true, "#nowhere": false, "img/x.png": true,
		"other.md#part-two": true, "other.md#no-part": false, "sub/": true, "#exit-status-0-ok": true,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("links and whether they resolve:\n got %v\nwant %v", got, want)
	}
}

// link matches a markdown link or image's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// markdownLinks returns the relative link targets of a markdown page,
// outside fenced code blocks; web and mail addresses are left out.
func markdownLinks(doc string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, target)
		}
	}
	return out
}

// checkLink reports why target, a link on page, does not resolve: a path
// relative to the page's folder that must exist, and an #anchor that must
// be a heading of the markdown page it names.
func checkLink(page, target string) error {
	file, anchor, _ := strings.Cut(target, "#")
	path := page
	if file != "" {
		path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%s does not exist", file)
		}
	}
	if anchor == "" {
		return nil
	}
	if !strings.HasSuffix(path, ".md") {
		return fmt.Errorf("an anchor on %s, which is not a markdown page", file)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") && slug(heading) == anchor {
			return nil
		}
	}
	return fmt.Errorf("no heading of %s has the anchor #%s", filepath.Base(path), anchor)
}

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
