package profile

import (
	"fmt"
	"io"
	"path"
)

// optInDir is the folder, in a family's built-in set, of its opt-in
// profiles: the traffic kinds (LoRA adapters, an embedding model, a vision
// model, a reasoning model) whose requests the suite's chat scenarios do
// not make. Builtin finds them and vllmperf profiles lists them; Names,
// the suite's default set, leaves them out, so adding one changes neither
// the suite's time nor its baselines. vllmperf run --profile NAME starts
// one.
const optInDir = "opt-in"

// optIn is the set of s's opt-in profiles.
func (s Set) optIn() Set {
	s.dir, s.prefix = path.Join(s.dir, optInDir), path.Join(s.prefix, optInDir)
	return s
}

// OptInNames lists the selected family's opt-in built-in profiles,
// sorted.
func OptInNames() []string { return Builtins().optIn().Names() }

// writeOptIn lists set's opt-in profiles after the suite's, each with the
// server command it runs.
func writeOptIn(w io.Writer, set Set) error {
	opt := set.optIn()
	names := opt.Names()
	if len(names) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "Opt-in (the suite runs them only when named; start one with vllmperf run --profile NAME):\n\n"); err != nil {
		return err
	}
	for _, name := range names {
		p, err := opt.Get(name)
		if err != nil {
			return err
		}
		if err := writeEntry(w, set.Family(), p); err != nil {
			return err
		}
	}
	return nil
}
