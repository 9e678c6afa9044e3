package profile

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// EnvVar is one environment variable a profile sets in the server's
// container (env:).
type EnvVar struct {
	Name, Value string
	// Line is its line in the profile file, 0 when built in code.
	Line int
}

// reservedEnv are the variables vllmperf sets itself, and why a profile
// cannot.
var reservedEnv = map[string]string{
	"HF_TOKEN":                "vllmperf passes the Hugging Face token from VLLMPERF_HF_TOKEN or HF_TOKEN in its own environment, so that it never sits in a file",
	"VLLM_TORCH_PROFILER_DIR": "vllmperf sets the trace folder for --torch-profile",
}

// envName is a POSIX environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseEnv reads env:, an ordered mapping of variable name to value; the
// variables fam sets in every container are refused.
func parseEnv(fam *serverfamily.Family, source string, n *yaml.Node) ([]EnvVar, error) {
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, &Error{File: source, Line: n.Line, Msg: "env: must be a mapping of variable name to value (e.g. `OMP_NUM_THREADS: 8`)"}
	}
	var out []EnvVar
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		switch {
		case !envName.MatchString(name):
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("env: %q is not a variable name: letters, digits and _, not starting with a digit", name)}
		case seen[name] > 0:
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("env: %s set twice (first on line %d): keep one", name, seen[name])}
		case reservedEnv[name] != "":
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("env: %s cannot be set in a profile: %s", name, reservedEnv[name])}
		case fam.Env[name] != "":
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("env: %s cannot be set in a profile: vllmperf sets %s=%s in every %s container", name, name, fam.Env[name], fam.Name)}
		case v.Kind != yaml.ScalarNode:
			return nil, &Error{File: source, Line: v.Line, Msg: fmt.Sprintf("env: %s must be a single value (a string or a number), not a list or mapping", name)}
		case v.Tag == "!!null":
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf(`env: %s has no value: give one, or "" for an empty variable`, name)}
		}
		seen[name] = k.Line
		out = append(out, EnvVar{Name: name, Value: v.Value, Line: k.Line})
	}
	return out, nil
}
