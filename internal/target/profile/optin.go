package profile

import (
	"fmt"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/scenarios"
)

// optInDir holds the opt-in built-in profiles: the traffic kinds (LoRA
// adapters, an embedding model, a vision model, a reasoning model) whose
// requests the suite's chat scenarios do not make. Builtin finds them and
// vllmperf profiles lists them; Names, the suite's default set, leaves
// them out, so adding one changes neither the suite's time nor its
// baselines. vllmperf run --profile NAME starts one.
const optInDir = profileDir + "/opt-in"

// optIn is the set of the opt-in profiles.
func optIn() Set {
	return Set{fsys: scenarios.Profiles, dir: optInDir, prefix: "scenarios/" + optInDir}
}

// OptInNames lists the opt-in built-in profiles, sorted.
func OptInNames() []string { return optIn().Names() }

// writeOptIn lists the opt-in profiles after the suite's, each with the
// vllmperf run flags its requests need (its run: line).
func writeOptIn(w io.Writer) error {
	names := OptInNames()
	if len(names) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "Opt-in (the suite runs them only when named; start one with vllmperf run --profile NAME):\n\n"); err != nil {
		return err
	}
	for _, name := range names {
		p, err := optIn().Get(name)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%-16s %s\n%-16s vllm serve %s %s\n\n", p.Name, p.Description, "", p.Model, strings.Join(p.Args(), " ")); err != nil {
			return err
		}
	}
	return nil
}
