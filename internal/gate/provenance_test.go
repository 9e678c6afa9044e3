package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// TestProvenance: a different digest under the same image tag, or another
// driver or CUDA, refuses the comparison naming it; results without the
// lines (older files) still compare; another host CPU or server
// environment is a warning; the upgrade gate's keys (no image) leave the
// digest alone.
func TestProvenance(t *testing.T) {
	const tag = "image: vllm/vllm-openai:latest\n"
	side := func(lines string) string {
		return "goos: linux\nbackend: container\ngpu: NVIDIA H100 x1\nmodel: Qwen/Qwen3-0.6B\n" + tag + lines +
			runs("profile=basic/scenario=poisson/rate=4", 6, steady("tok/s", 100))
	}
	const digestA = "image-digest: vllm/vllm-openai@sha256:aaaa\ndriver: 550.54.15\ncuda: 12.4\nhost-cpu: AMD EPYC 7B13 x16\nserver-env: OMP_NUM_THREADS=8\n"
	withoutKeys := input.DefaultConfigKeys[:0:0]
	for _, k := range input.DefaultConfigKeys {
		if k != "image" {
			withoutKeys = append(withoutKeys, k)
		}
	}
	for _, tc := range []struct {
		name      string
		base, new string
		keys      []string
		want      string // part of the mismatch error; "" for none
		warn      string // part of a warning
	}{
		// the same build: nothing to say
		{name: "same", base: digestA, new: digestA},
		// another build under the same tag
		{name: "digest", base: digestA, new: strings.Replace(digestA, "aaaa", "bbbb", 1),
			want: `image-digest is "vllm/vllm-openai@sha256:aaaa" in base.txt but "vllm/vllm-openai@sha256:bbbb" in new.txt: the same image "vllm/vllm-openai:latest" resolved to another build`},
		// another driver
		{name: "driver", base: digestA, new: strings.Replace(digestA, "550.54.15", "570.86.10", 1), want: `driver is "550.54.15" in base.txt but "570.86.10" in new.txt`},
		// another CUDA
		{name: "cuda", base: digestA, new: strings.Replace(digestA, "cuda: 12.4", "cuda: 12.8", 1), want: `cuda is "12.4" in base.txt but "12.8" in new.txt`},
		// a baseline from before the provenance lines
		{name: "old baseline", base: "", new: digestA},
		// another host CPU: recorded, a warning
		{name: "host cpu", base: digestA, new: strings.Replace(digestA, "AMD EPYC 7B13", "Intel Xeon 8480+", 1), warn: `host-cpu differs: "AMD EPYC 7B13 x16" in the baseline, "Intel Xeon 8480+ x16" in the new results`},
		// another OMP_NUM_THREADS: a warning
		{name: "env", base: digestA, new: strings.Replace(digestA, "OMP_NUM_THREADS=8", "(none)", 1), warn: `server-env differs: "OMP_NUM_THREADS=8"`},
		// the upgrade gate compares two images: their digests differ by design
		{name: "upgrade keys", base: digestA, new: strings.Replace(digestA, "aaaa", "bbbb", 1), keys: withoutKeys},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Compare(parse(t, "base.txt", side(tc.base)), parse(t, "new.txt", side(tc.new)), nil, Options{ConfigKeys: tc.keys})
			var me *input.MismatchError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v, want a comparison", err)
			case tc.want != "" && (!errors.As(err, &me) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want a MismatchError with %q", err, tc.want)
			case tc.warn != "" && !strings.Contains(strings.Join(rep.Warnings, "\n"), tc.warn):
				t.Errorf("warnings %q, want one with %q", rep.Warnings, tc.warn)
			}
		})
	}
}
