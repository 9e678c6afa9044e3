package cliflags

import (
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

func TestEnvHelp(t *testing.T) {
	t.Parallel()
	got := EnvHelp("Intro.", []envvar.Setting{
		{Name: "VLLMPERF_A", Doc: "the a", Default: "1"},
		{Name: "VLLMPERF_B", Doc: "the b (default: its own rule)", Default: "x"},
		{Name: "VLLMPERF_C", Doc: "the c"},
		{Name: "VLLMPERF_D", Old: "D", Doc: "the d", Default: "2"},
	}, "More.\n")
	want := "Intro.\n\nEnvironment:\n  VLLMPERF_A: the a (default 1)\n  VLLMPERF_B: the b (default: its own rule)\n  VLLMPERF_C: the c\n" +
		"  VLLMPERF_D: the d (default 2) (formerly D, still read with a warning)\n\nMore.\n"
	if got != want {
		t.Errorf("EnvHelp =\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(EnvHelp(PlanLong, nil, PerfGateMore), "docs/settings.md") {
		t.Error("the perf gate's help does not point to docs/settings.md")
	}
}
