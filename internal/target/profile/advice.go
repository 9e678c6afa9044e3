package profile

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Advice is what a profile does about one of the bottlenecks `vllmperf
// diagnose` finds (diagnose:, in file order): the rule's ID and why the
// profile addresses it, with the profile's flag values filled in.
type Advice struct {
	// Rule is a diagnosis rule's ID, e.g. "high-ttft". Package profile
	// does not know the rules: package diagnose checks the IDs
	// (diagnose.Rules).
	Rule string
	// Why is the advice with each {flag-name} replaced by the profile's
	// value of that flag, e.g. "--max-num-seqs 16 bounds the batch".
	Why string
	// Line is its line in the profile file, 0 when built in code.
	Line int
}

// placeholder is a flag reference in advice text: {max-num-seqs}.
var placeholder = regexp.MustCompile(`\{([^{}]*)\}`)

// ruleID is the shape of a diagnosis rule ID: lower-case words joined by '-'.
var ruleID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// parseAdvice reads diagnose:, an ordered mapping of rule ID to advice.
// A {flag-name} in the advice is replaced by the value of that flag of
// flags, so the text never repeats a value the file already holds.
func parseAdvice(source string, n *yaml.Node, flags []Flag) ([]Advice, error) {
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, &Error{File: source, Line: n.Line, Msg: "diagnose: must be a mapping of rule to advice (e.g. `kv-pressure: fp8 KV cache`; docs/report.md lists the rules)"}
	}
	var out []Advice
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !ruleID.MatchString(k.Value):
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("diagnose: %q is not a rule ID: rules are named like high-ttft or kv-pressure", k.Value)}
		case seen[k.Value] > 0:
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("diagnose: %s set twice (first on line %d): keep one", k.Value, seen[k.Value])}
		case v.Kind != yaml.ScalarNode || v.Tag == "!!null" || strings.TrimSpace(v.Value) == "":
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("diagnose: %s needs one line of text saying why the profile addresses it", k.Value)}
		}
		seen[k.Value] = k.Line
		why, err := fillFlags(source, v, flags)
		if err != nil {
			return nil, err
		}
		out = append(out, Advice{Rule: k.Value, Why: why, Line: k.Line})
	}
	return out, nil
}

// fillFlags replaces each {flag-name} in v's text by the flag's value.
func fillFlags(source string, v *yaml.Node, flags []Flag) (string, error) {
	var bad error
	why := placeholder.ReplaceAllStringFunc(v.Value, func(m string) string {
		name := strings.TrimPrefix(m[1:len(m)-1], "--")
		for _, f := range flags {
			if f.Name == name && !f.Bare {
				return f.Value
			}
		}
		if bad == nil {
			bad = &Error{File: source, Line: v.Line, Msg: fmt.Sprintf("diagnose: %s names no flag of this profile with a value: {NAME} stands for the value of a flag set under flags: (set --%s there, or write the text without braces)", m, name)}
		}
		return m
	})
	return why, bad
}
