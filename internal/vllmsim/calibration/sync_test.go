package calibration

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// simulatorSource is the simulator's source tree, read (never imported) to
// keep presets.go in step with it.
const simulatorSource = ".."

// simulatorLiterals parses every non-test Go file of the simulator outside
// this package and returns the string keys of map literals whose value type
// is named GPUPreset or ModelPreset, and the string values of `name:` fields
// in composite literals (the flag table).
func simulatorLiterals(t *testing.T) (gpus, models, flagNames []string) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(simulatorSource, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "calibration" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				mt, ok := n.Type.(*ast.MapType)
				if !ok {
					return true
				}
				vt, ok := mt.Value.(*ast.Ident)
				if !ok || (vt.Name != "GPUPreset" && vt.Name != "ModelPreset") {
					return true
				}
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					if lit, ok := kv.Key.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						if vt.Name == "GPUPreset" {
							gpus = append(gpus, s)
						} else {
							models = append(models, s)
						}
					}
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "name" {
					if lit, ok := n.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						flagNames = append(flagNames, s)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatalf("read the simulator's source: %v", err)
	}
	slices.Sort(gpus)
	slices.Sort(models)
	return gpus, models, flagNames
}

// TestPresetNamesInSync checks presets.go against the simulator's source:
// the same GPU and model presets, and every modelled flag a flag vllm-sim
// accepts.
func TestPresetNamesInSync(t *testing.T) {
	gpus, models, flagNames := simulatorLiterals(t)
	if len(gpus) == 0 || len(models) == 0 {
		t.Fatalf("found no map[string]GPUPreset / map[string]ModelPreset literal under %s: the presets moved or were renamed; update this test and presets.go", simulatorSource)
	}
	if !slices.Equal(gpus, GPUPresets) {
		t.Errorf("GPUPresets = %v, the simulator has %v: update presets.go", GPUPresets, gpus)
	}
	if !slices.Equal(models, ModelPresets) {
		t.Errorf("ModelPresets = %v, the simulator has %v: update presets.go", ModelPresets, models)
	}
	for _, f := range modelledFlags {
		base := strings.TrimPrefix(f, "no-")
		if !slices.Contains(flagNames, base) {
			t.Errorf("modelled flag --%s is not a vllm-sim flag (no `name: %q` in the simulator's flag table): update presets.go", f, base)
		}
	}
}
