package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// flagText is a string literal that starts as a command-line flag does.
var flagText = regexp.MustCompile(`^--[a-z][a-z0-9-]*`)

// maxLibraryFlagTexts bounds the flag texts left in library packages
// outside the simulator, allowed ones included (issue #52's done-when).
const maxLibraryFlagTexts = 20

// flagTextAllowed is a flag text a library package may hold: the
// packages under dir (a folder below the repository root), the literal
// ("" for any), and why.
type flagTextAllowed struct {
	dir, literal, why string
	counted           bool // counted against maxLibraryFlagTexts
}

// allowedFlagTexts are the library packages' flag texts, each with why.
// Other programs' flags are named in package cliarg instead.
var allowedFlagTexts = []flagTextAllowed{
	{"internal/vllmsim", "", "the simulator takes vLLM's flags by design (vllm-sim is a vLLM-compatible server)", false},
	{"internal/vocab/verdict", "--format", "the gate reports' hints tell the reader to run vllmperf gate --format full (package gate/render): output for people, not an error the command renames; verdict.FormatFlag, the one constant they and cliflags.FlagNames share", true},
}

// TestNoFlagTextInLibraries: no library package under internal/ spells
// one of vllmperf's flags. It parses every non-test .go file there and
// fails naming file:line for a string literal that starts with a --flag,
// unless allowedFlagTexts allows it; the allowed ones outside the
// simulator are at most maxLibraryFlagTexts, and an entry that allows
// nothing is stale. The command takes the libraries' settings by their
// Config fields and names the flags itself (cliflags.FlagNames).
func TestNoFlagTextInLibraries(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	used := make([]int, len(allowedFlagTexts))
	counted := 0
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, f := range flagTexts(t, path) {
			i := slices.IndexFunc(allowedFlagTexts, func(a flagTextAllowed) bool {
				return (a.literal == "" || a.literal == f.text) && strings.HasPrefix(rel, a.dir+"/")
			})
			switch {
			case i < 0:
				t.Errorf("%s:%d: %q is a flag's text in a library package: name the setting by its Config field (package setting) and map it to the flag in cliflags.FlagNames, name another program's flag in package cliarg, or move the code to cmd/vllmperf", rel, f.line, f.text)
			case allowedFlagTexts[i].counted:
				used[i]++
				counted++
			default:
				used[i]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range allowedFlagTexts {
		if used[i] == 0 {
			t.Errorf("allowedFlagTexts: %s %q allows nothing now: remove the entry", a.dir, a.literal)
		}
	}
	if counted > maxLibraryFlagTexts {
		t.Errorf("%d flag texts left in library packages outside the simulator, want at most %d", counted, maxLibraryFlagTexts)
	}
	t.Logf("%d flag texts allowed in library packages outside the simulator (at most %d)", counted, maxLibraryFlagTexts)
}

// foundFlagText is a string literal starting with a flag, and its line.
type foundFlagText struct {
	text string
	line int
}

// flagTexts are the flag texts of the Go file at path.
func flagTexts(t *testing.T, path string) []foundFlagText {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []foundFlagText
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && flagText.MatchString(s) {
			out = append(out, foundFlagText{flagText.FindString(s), fset.Position(lit.Pos()).Line})
		}
		return true
	})
	return out
}

// TestOtherProgramsFlagsAreNotOurs: package cliarg names other programs'
// flags; none is one of vllmperf's own unless cliarg.Shared says so, and
// each shared one is vllmperf's.
func TestOtherProgramsFlagsAreNotOurs(t *testing.T) {
	t.Parallel()
	ours := commandFlags()
	for _, f := range cliarg.All {
		if ours[string(f)] && !slices.Contains(cliarg.Shared, f) {
			t.Errorf("cliarg.%s is %s, one of vllmperf's flags: a library names vllmperf's settings by field (package setting), not as another program's flag", fmt.Sprint(f), f.Arg())
		}
	}
	for _, f := range cliarg.Shared {
		if !ours[string(f)] || !slices.Contains(cliarg.All, f) {
			t.Errorf("cliarg.Shared holds %s, which is not both in cliarg.All and a flag of vllmperf: drop it", f.Arg())
		}
	}
}
