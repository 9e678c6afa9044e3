// Package scenarios holds the project's scenario files as YAML and embeds
// them so that the CLI and the tests find them by name: the server profiles
// (see internal/target/profile: Builtin, Names) and the workloads (see
// internal/run/scenario: Builtin, Names).
package scenarios

import (
	"embed"
	"io/fs"
	"strings"
)

// Profiles holds profiles/FAMILY/*.yaml, each server family's built-in
// profiles the suite runs (FAMILY is the family's key: vllm, sglang), and
// profiles/FAMILY/opt-in/*.yaml, those it runs only when named.
//
//go:embed profiles/*/*.yaml profiles/*/opt-in/*.yaml
var Profiles embed.FS

// Workloads holds workloads/*.yaml: the built-in scenarios' workloads and
// load shapes.
//
//go:embed workloads/*.yaml
var Workloads embed.FS

// Names lists the .yaml files in dir of fsys by name without the
// extension, sorted; nil when dir cannot be read.
func Names(fsys fs.FS, dir string) []string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			out = append(out, n)
		}
	}
	return out
}
