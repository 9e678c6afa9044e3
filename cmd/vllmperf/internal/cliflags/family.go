package cliflags

import (
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// Family defines --family on f (the root's persistent flags): the server
// family every command measures, over VLLMPERF_FAMILY. Its value is
// checked as it is parsed (an unknown name is a usage error listing the
// families) and becomes the process's VLLMPERF_FAMILY, the one setting
// every stage reads (server.FromEnv, profile.Builtins).
func Family(f *pflag.FlagSet) {
	f.Var(&familyValue{}, "family", "server family: "+strings.Join(serverfamily.Keys(), " or ")+
		" (its profiles, flags, image and /metrics names; default "+envvar.Family.Name+", else "+serverfamily.Default.Key+")")
}

// familyValue is --family's value.
type familyValue struct{ key string }

// Set checks name and makes its family the process's VLLMPERF_FAMILY.
func (v *familyValue) Set(name string) error {
	fam, err := serverfamily.ByName(name)
	if err != nil {
		return err
	}
	v.key = fam.Key
	return os.Setenv(envvar.Family.Name, fam.Key)
}

// String is the family's key, "" when not given.
func (v *familyValue) String() string { return v.key }

// Type names the value in help.
func (v *familyValue) Type() string { return "name" }
