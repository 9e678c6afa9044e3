package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flagText is a string literal that starts as a command-line flag does.
var flagText = regexp.MustCompile(`^--[a-z][a-z0-9-]*`)

// TestNoFlagTextInLibraries lists the literals under internal/ that start
// with a --flag.
func TestNoFlagTextInLibraries(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && flagText.MatchString(s) {
				t.Logf("%s:%d: %s", filepath.ToSlash(rel), fset.Position(lit.Pos()).Line, flagText.FindString(s))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
