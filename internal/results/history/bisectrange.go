package history

import "fmt"

// BisectRange names the builds to bisect for a change: the last run
// before it and the first from it, by image and reported vLLM version,
// with the command that finds the build between them that caused it
// (docs/bisect.md). Without a run before the change in Around, or when
// both runs measured the same build (same image and vLLM version), it
// says so: the change is then not a build's, and bisecting builds will
// not find it.
func (c Change) BisectRange() string {
	var before *AroundRun
	for i := range c.Around {
		if a := &c.Around[i]; !a.After && (before == nil || a.Index > before.Index) {
			before = a
		}
	}
	if before == nil {
		return ""
	}
	after := c.Run
	if before.Image == after.Image && before.VLLMVersion == after.VLLMVersion {
		return fmt.Sprintf("runs %d and %d measured the same build (%s): the change is not a build's; look at the events and the machine", before.Index+1, after.Index+1, buildWords(before.RunRef))
	}
	s := fmt.Sprintf("bisect from %s (run %d, last before) to %s (run %d, first after)", buildWords(before.RunRef), before.Index+1, buildWords(after), after.Index+1)
	if before.Image == after.Image {
		s += ": the same tag, another build under it; list the builds by digest"
	}
	return s + ": vllmperf bisect --candidates FILE (docs/bisect.md)"
}

// buildWords is "vllm/vllm-openai:nightly (vLLM 0.11.1)".
func buildWords(r RunRef) string {
	img := r.Image
	if img == "" {
		img = "no image recorded"
	}
	if r.VLLMVersion != "" {
		return fmt.Sprintf("%s (vLLM %s)", img, r.VLLMVersion)
	}
	return img
}
