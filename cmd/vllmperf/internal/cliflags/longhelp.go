package cliflags

// The long help of commands whose wiring lives in cmd/vllmperf (its line
// cap keeps the text here).
const (
	ProfilesLong = `Profiles lists the built-in server profiles (scenarios/profiles/*.yaml): each
one's name, what it is for, and the vllm serve command it runs: its model and
vLLM flags. --profile NAME picks one for vllmperf run and capacity, and
VLLMPERF_PROFILES picks the suite's; a YAML file of your own works wherever a
name does (docs/suite.md, scenarios/README.md).`

	MergeLong = `Merge joins results folders written by several processes, each of which ran
some of the profiles (a runner per profile in perf-gate.yml's matrix, or a
process per GPU set on one runner), into one new folder that gate, report and
history read as if one process had run every profile: summary.json's runs,
knees and capacity searches one folder after another, samples.jsonl,
timeseries.jsonl and bench.txt likewise, report.html and report.md rendered
again. Folders whose setup differs (backend, image, GPU, model, size, vLLM
version), or that hold the same profile, are refused, naming the key and both
values. See docs/gpu-runners.md.`
)
