package cliflags

// The long help of commands whose wiring lives in cmd/vllmperf (its line
// cap keeps the text here).
const (
	ProfilesLong = `Profiles lists the built-in server profiles of the server family
(scenarios/profiles/FAMILY/*.yaml; VLLMPERF_FAMILY or --family, default vllm): each
one's name, what it is for, and the server command it runs: its model and
flags. --profile NAME picks one for vllmperf run and capacity, and
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

	RunLong = `Run sends streamed requests at a fixed concurrency (closed loop) or at a request
rate (open loop, Poisson or gamma arrivals) and reports TTFT, TPOT, ITL, E2EL,
throughput and goodput exactly as "vllm bench serve" computes them.

The server is --target (any OpenAI-compatible URL), or one this command starts
with --profile: the embedded simulator (--backend sim, the default) or a vLLM
container (--backend container, image from --image or VLLMPERF_IMAGE).

The output files (--json, --samples) are checked before any request is sent
and written, each on its own, before the summary goes to stdout. The run fails
(exit 1) when more requests fail than --max-error-rate allows, when it stops
early on --max-consecutive-failures identical failures, when an open loop
stops on the overload rule (OVERLOADED: offered, achieved, queue growth;
--no-overload-stop runs it to the end; docs/load-shapes.md), or when the server
goes down; it is INCONCLUSIVE (exit 3) when no request succeeded; SIGINT or SIGTERM
stop it with partial results (exit 130 or 143).`

	RunExample = `  vllmperf run --concurrency 8 --requests 200
  vllmperf run --target http://127.0.0.1:8000 --model Qwen/Qwen3-0.6B --rate 4 --burstiness 0.5 --duration 2m --json result.json
  vllmperf run --backend container --profile high-throughput --concurrency 32 --requests 500`
)
